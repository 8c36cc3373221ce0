/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_native_stacks.c: a running task's worker stack (see task_native_stacks.h): the thread's return addresses
 * from the sampler's thread stack reader (a live process) or its unwinder over a core's saved registers and
 * stack, for the task reader to name (tasks/native_frames.c, with the DWARF it holds: no second reading of the
 * program's debug information). */
#include "cli/task_native_stacks.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"

struct task_native_stacks {
    struct thread_stack_reader *reader;        /* a live process's threads, or NULL */
    bool core;                                 /* a core's: the unwinder below, made at the first stack */
    bool unwinder_made;
    struct saved_stack_unwinder *unwinder;
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

struct task_native_stacks *task_native_stacks_for_core(void)
{
    struct task_native_stacks *s = calloc(1, sizeof(*s));
    if (s)
        s->core = true;
    return s;
}

void task_native_stacks_close(struct task_native_stacks *s)
{
    if (!s)
        return;
    thread_stack_reader_close(s->reader);
    saved_stack_unwinder_free(s->unwinder);
    free(s);
}

/* the unwinder over a core's file mappings (the same for every thread of the dump) */
static void make_unwinder(struct task_native_stacks *s, const struct task_native_state *state)
{
    s->unwinder_made = true;
    struct sampler_mapping *maps = calloc(state->n_mappings ? state->n_mappings : 1, sizeof(*maps));
    if (!maps)
        return;
    for (size_t i = 0; i < state->n_mappings; i++) {
        const struct task_mapping *m = &state->mappings[i];
        maps[i] = (struct sampler_mapping){ m->start, m->end, m->offset, m->path, "", m->executable };
    }
    s->unwinder = saved_stack_unwinder_new(maps, state->n_mappings);
    free(maps);
}

size_t task_native_stack(void *ctx, pid_t tid, const struct task_native_state *state, uint64_t *ips, size_t max)
{
    struct task_native_stacks *s = ctx;
    if (!state) {
        enum thread_stack_source source;
        return s->reader ? thread_stack_read(s->reader, tid, ips, max, &source) : 0;
    }
    if (!s->unwinder_made)
        make_unwinder(s, state);
    if (!s->unwinder || !state->regs)
        return 0;
    bool truncated;
    return saved_stack_unwind(s->unwinder, state->regs, state->stack, state->stack ? state->stack_len : 0, ips, max,
                              &truncated);
}
