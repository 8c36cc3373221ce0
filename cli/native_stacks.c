/* SPDX-License-Identifier: GPL-3.0-or-later */
/* native_stacks.c: a core's thread stacks as frames (cli/native_stacks.h): the sampler's unwinder (the same
 * DWARF unwinding as record's samples) over the saved registers and stack, then the symbolizer over the same
 * mappings; a return address is looked up at its call. */
#include "cli/native_stacks.h"

#include <stdbool.h>
#include <stdlib.h>

#include "sampler/sampler.h"
#include "symbolize/symbolize.h"

#define MAX_ADDRESSES 256

struct native_stacks {
    bool opened;                      /* the unwinder and symbolizer were made (or failed to be) */
    struct saved_stack_unwinder *unwinder;
    struct symbolizer *symbolizer;
};

struct native_stacks *native_stacks_new(void)
{
    return calloc(1, sizeof(struct native_stacks));
}

void native_stacks_free(struct native_stacks *n)
{
    if (!n)
        return;
    saved_stack_unwinder_free(n->unwinder);
    symbolizer_free(n->symbolizer);
    free(n);
}

static void open_mappings(struct native_stacks *n, const struct task_native_state *state)
{
    n->opened = true;
    struct sampler_mapping *maps = calloc(state->n_mappings ? state->n_mappings : 1, sizeof(*maps));
    if (!maps)
        return;
    for (size_t i = 0; i < state->n_mappings; i++) {
        const struct task_mapping *m = &state->mappings[i];
        maps[i] = (struct sampler_mapping){ m->start, m->end, m->offset, m->path, "", m->executable };
    }
    n->unwinder = saved_stack_unwinder_new(maps, state->n_mappings);
    free(maps);
    n->symbolizer = symbolizer_new(&(struct symbolizer_options){ .demangle = true });
    for (size_t i = 0; n->symbolizer && i < state->n_mappings; i++) {
        const struct task_mapping *m = &state->mappings[i];
        if (symbolizer_add_mapping(n->symbolizer, m->start, m->end, m->offset, m->path, "") != 0) {
            symbolizer_free(n->symbolizer);
            n->symbolizer = NULL;
        }
    }
}

size_t native_stacks_frames(void *ctx, const struct task_native_state *state, struct task_frame *frames, size_t max)
{
    struct native_stacks *n = ctx;
    if (!n->opened)
        open_mappings(n, state);
    if (!n->unwinder || !n->symbolizer || !state->regs)
        return 0;
    uint64_t ips[MAX_ADDRESSES];
    bool truncated;
    size_t n_ips = saved_stack_unwind(n->unwinder, state->regs, state->stack, state->stack ? state->stack_len : 0,
                                      ips, MAX_ADDRESSES, &truncated);
    size_t out = 0;
    for (size_t i = 0; i < n_ips && out < max; i++) {
        const struct sym_result *r = symbolize_user(n->symbolizer, ips[i], i > 0);
        for (size_t k = 0; k < r->n && out < max; k++)
            frames[out++] = (struct task_frame){ r->frames[k].name, r->frames[k].file, r->frames[k].line };
    }
    return out;
}
