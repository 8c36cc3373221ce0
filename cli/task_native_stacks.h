/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_native_stacks.h: where a running task is now, for `taskspy tasks` (SPEC section 3b): the native stack of
 * the worker thread polling it, read without stopping it (sampler's thread_stack_read), as return addresses
 * innermost first; the task reader names them. The worker_stack callback of tasks/tasks.h's reader options. */
#ifndef TASKSPY_TASK_NATIVE_STACKS_H
#define TASKSPY_TASK_NATIVE_STACKS_H

#include <stddef.h>
#include <sys/types.h>

#include "tasks/tasks.h"

struct task_native_stacks;

/* For process pid (root: the prefix its files are opened through). Returns 0, or -1 with a line in err. */
int task_native_stacks_open(struct task_native_stacks **out, pid_t pid, const char *root, char *err, size_t errlen);
/* task_reader_options.worker_stack: ctx is a struct task_native_stacks * */
size_t task_native_stack(void *ctx, pid_t tid, uint64_t *ips, size_t max);
void task_native_stacks_close(struct task_native_stacks *s);

#endif
