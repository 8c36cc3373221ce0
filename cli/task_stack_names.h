/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_stack_names.h: a task of a snapshot as stacks of frames in a profile, the way `taskspy tasks -o`
 * files it and the snapshot wait profile (SPEC section 3a) files its waits: "task: ROOT", the async frames
 * outermost first as "NAME @ FILE:LINE" (the CPU profile's await-point frames; "NAME" where the await's file
 * or line is not known; an await inside a macro as "NAME @ FILE:LINE (select!)"), the leaf future's type, then
 * a state frame ("[idle]"; the wait profile's "[suspended]"). A task whose root is not known is rooted
 * "[task entry unknown]", as in the CPU profile. A task waiting on several futures at once (a tree) is one
 * stack per pending branch (each path from its root to a leaf of its tree), its count split evenly among them:
 * a task counts once, a frame is never wider than its parent. */
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

/* The frame ids of t's first pending path in p, root first, into *ids (replacing what it held), state_frame
 * last (NULL: none). Returns 0, or -1 when out of memory. */
int task_stack_ids(struct profile *p, const struct task_info *t, const char *state_frame,
                   struct task_stack_ids *ids);

/* The pending branches of t: its tree's leaves (1 for a chain, or a task with nothing read). */
size_t task_stack_paths(const struct task_info *t);

/* Add t to p: count split evenly among its pending branches (count / paths each, the remainder one each to the
 * first), a branch whose share is 0 left out but the first; the first pending path added last, so that
 * profile_last_leaf is its end and *ids its frame ids (as task_stack_ids). Returns 0, or -1 when out of memory. */
int task_stack_add(struct profile *p, const struct task_info *t, const char *state_frame, uint64_t count,
                   struct task_stack_ids *ids);

/* Add every task of snap to p, its state frame "[STATE]" ("[idle]", "[running]", ...): a flame graph of where
 * the tasks are. Each task counts *per_task (1 when no task waits on several futures at once; else the least
 * common multiple of the tasks' branch counts, at most 27720, so that even splits are whole), split among its
 * branches. Returns 0, or -1 when out of memory. */
int task_stack_add_snapshot(struct profile *p, const struct task_snapshot *snap, uint64_t *per_task);

#endif
