/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_stack_names.h: a task of a snapshot as a stack of frames in a profile, the way `taskspy tasks -o`
 * files it and the snapshot wait profile (SPEC section 3a) files its waits: "task: ROOT", the async frames
 * outermost first as "NAME @ FILE:LINE" (the CPU profile's await-point frames; "NAME" where the await's file
 * or line is not known), the leaf future's type, then a state frame ("[idle]"; the wait profile's
 * "[suspended]"). A task whose root is not known is rooted "[task entry unknown]", as in the CPU profile. */
#ifndef TASKSPY_TASK_STACK_NAMES_H
#define TASKSPY_TASK_STACK_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "flamegraph/flamegraph.h"
#include "tasks/tasks.h"

/* A growable array of frame ids (base/vec.h). */
struct task_stack_ids {
    uint32_t *v;
    size_t n, cap;
};

/* The frame ids of t's stack in p, root first, into *ids (replacing what it held), state_frame last (NULL:
 * none). Returns 0, or -1 when out of memory. */
int task_stack_ids(struct profile *p, const struct task_info *t, const char *state_frame,
                   struct task_stack_ids *ids);

/* Add every task of snap to p, count 1 each, its state frame "[STATE]" ("[idle]", "[running]", ...): a flame
 * graph of where the tasks are. Returns 0, or -1 when out of memory. */
int task_stack_add_snapshot(struct profile *p, const struct task_snapshot *snap);

#endif
