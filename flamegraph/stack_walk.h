/* SPDX-License-Identifier: GPL-3.0-or-later */
/* stack_walk.h: visits every distinct stack of a profile (each tree node with self samples) depth first,
 * handing the visitor the stack's frame ids root first. Stacks under one root frame come one after another,
 * so exports that group by root (task or thread) need no sorting. Internal to flamegraph/. */
#ifndef TASKSPY_STACK_WALK_H
#define TASKSPY_STACK_WALK_H

#include "flamegraph/flamegraph.h"

/* frames[0] is the root frame, frames[depth - 1] the leaf; count is the stack's self samples (> 0).
 * Return 0 to go on; anything else stops the walk and is returned by stack_walk. */
typedef int (*stack_visit_fn)(void *ctx, const uint32_t *frames, size_t depth, uint64_t count);

/* Returns 0 when every stack was visited, the visitor's non-zero value, or -1 with errno ENOMEM. */
int stack_walk(const struct profile *p, stack_visit_fn visit, void *ctx);

#endif
