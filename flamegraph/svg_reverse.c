/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_reverse.c: builds the leaf-first profile behind --reverse: every stack of a profile added again with
 * its frames in reverse order, so stacks that end in the same functions merge. */
#include "flamegraph/svg_internal.h"

#include "base/vec.h"
#include "flamegraph/profile_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct profile *svg_reversed_profile(const struct profile *p)
{
    size_t n = 0;
    const struct profile_node *nodes = profile_nodes(p, &n);
    size_t n_frames = profile_frame_count(p);
    struct profile *r = profile_new();
    uint32_t *new_id = malloc((n_frames ? n_frames : 1) * sizeof(*new_id));
    VEC_OF(uint32_t) stack = { 0 };      /* one reversed stack */
    /* as many names, and about as many nodes: made room for once, not grown step by step */
    if (!r || !new_id || vec_reserve(&stack, 64) != 0 || profile_reserve(r, n, n_frames) != 0)
        goto fail;
    for (size_t f = 0; f < n_frames; f++) {
        const char *name = profile_frame_name(p, (uint32_t)f);
        new_id[f] = profile_intern(r, name, strlen(name));
        if (new_id[f] == PROFILE_NO_FRAME)
            goto fail;
    }
    for (size_t v = 1; v < n; v++) {
        if (nodes[v].self == 0)
            continue;
        stack.n = 0;
        /* walking up from the leaf gives the frames leaf first: the reversed stack */
        for (uint32_t at = (uint32_t)v; at != 0 && at != PROFILE_NO_NODE; at = nodes[at].parent) {
            uint32_t *frame = vec_push(&stack);
            if (!frame)
                goto fail;
            *frame = new_id[nodes[at].frame];
        }
        if (profile_add_ids(r, stack.v, stack.n, nodes[v].self) != 0)
            goto fail;
    }
    free(new_id);
    vec_free(&stack);
    return r;
fail:
    free(new_id);
    vec_free(&stack);
    profile_free(r);
    errno = ENOMEM;
    return NULL;
}
