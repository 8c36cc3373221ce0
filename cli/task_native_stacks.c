/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_native_stacks.c: a running task's worker stack (see task_native_stacks.h): the thread's return addresses
 * from the sampler's thread stack reader, for the task reader to name (tasks/native_frames.c, with the DWARF it
 * holds: no second reading of the program's debug information). */
#include "cli/task_native_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"

struct task_native_stacks {
    struct thread_stack_reader *reader;
};

int task_native_stacks_open(struct task_native_stacks **out, pid_t pid, const char *root, char *err, size_t errlen)
{
    *out = NULL;
    struct task_native_stacks *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (thread_stack_reader_open(&s->reader, pid, root, err, errlen) != 0) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void task_native_stacks_close(struct task_native_stacks *s)
{
    if (!s)
        return;
    thread_stack_reader_close(s->reader);
    free(s);
}

size_t task_native_stack(void *ctx, pid_t tid, uint64_t *ips, size_t max)
{
    struct task_native_stacks *s = ctx;
    enum thread_stack_source source;
    return thread_stack_read(s->reader, tid, ips, max, &source);
}
