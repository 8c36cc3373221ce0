/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_native_stacks.h: where a running task is, for `taskspy tasks` (SPEC section 3b): the native stack of the
 * worker thread polling it as return addresses, innermost first, for the task reader to name. A live process's
 * read now without stopping the thread (the sampler's thread_stack_read); a core's unwound from the thread's
 * registers and stack at the dump (the sampler's saved_stack_unwind), over the files the core maps. The
 * worker_stack callback of tasks/tasks.h's reader options. */
#ifndef TASKSPY_TASK_NATIVE_STACKS_H
#define TASKSPY_TASK_NATIVE_STACKS_H

#include <stddef.h>
#include <sys/types.h>

#include "tasks/tasks.h"

struct task_native_stacks;

/* For live process pid (root: the prefix its files are opened through). Returns 0, or -1 with a line in err. */
int task_native_stacks_open(struct task_native_stacks **out, pid_t pid, const char *root, char *err, size_t errlen);
/* For a core's threads: the unwinder is made at the first stack, from its mappings. NULL when out of memory. */
struct task_native_stacks *task_native_stacks_for_core(void);
/* A task_worker_stack_fn: ctx is a struct task_native_stacks *. */
size_t task_native_stack(void *ctx, pid_t tid, const struct task_native_state *state, uint64_t *ips, size_t max);
void task_native_stacks_close(struct task_native_stacks *s);

#endif
