/* SPDX-License-Identifier: GPL-3.0-or-later */
/* native_stacks.h: the native stack of a thread whose state a core saved (tasks/'s task_native_stack_fn), for
 * `taskspy tasks --core`: its registers and saved stack unwound by the sampler's unwinder over the core's
 * mapped files, each address symbolized (inline frames included), innermost first. */
#ifndef TASKSPY_NATIVE_STACKS_H
#define TASKSPY_NATIVE_STACKS_H

#include <stddef.h>

#include "tasks/tasks.h"

struct native_stacks;

/* NULL when out of memory. The unwinder and symbolizer are made at the first stack, from its mappings. */
struct native_stacks *native_stacks_new(void);
/* A task_native_stack_fn; ctx is a struct native_stacks *. Names live until native_stacks_free. */
size_t native_stacks_frames(void *ctx, const struct task_native_state *state, struct task_frame *frames, size_t max);
void native_stacks_free(struct native_stacks *n);

#endif
