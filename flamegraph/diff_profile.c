/* SPDX-License-Identifier: GPL-3.0-or-later */
/* diff_profile.c: two profiles side by side (`taskspy diff`). The after profile's tree holds every stack of
 * both (before's added to it with no samples), so each node has after's counts in the tree and before's in
 * arrays beside it: what difffolded.pl's two-count lines say, written sorted, and what flamegraph.pl draws
 * from them: widths from after, each frame coloured by the change of its own samples (svg_diff_color) and
 * its tooltip giving before, after and that change. */
#include "flamegraph/folded_internal.h"
#include "flamegraph/stack_walk.h"
#include "flamegraph/svg_internal.h"

#include "base/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { IN_BEFORE = 1, IN_AFTER = 2 };

struct diff_profile {
    struct profile *after;            /* every stack; after's samples */
    size_t n_nodes;
    uint64_t *before_self;            /* per node: before's samples of the stack ending there (normalized) */
    uint64_t *before_total;           /* per node: before's samples through it */
    uint8_t *in;                      /* per node: IN_BEFORE | IN_AFTER, where a stack ends there */
    uint64_t max_delta;               /* the largest |after - before| of a stack, at least 1 */
    struct diff_summary summary;
};

/* A stack of before, waiting for the node it ends at in after's tree. */
struct before_stack {
    uint32_t node;
    uint64_t count;
};

struct merge {
    const struct profile *before;
    struct profile *after;
    uint32_t *frame_in_after;         /* before's frame id -> after's, PROFILE_NO_FRAME until interned */
    VEC_OF(uint32_t) ids;             /* the stack being added, in after's frame ids */
    VEC_OF(struct before_stack) stacks;
};

/* Add one stack of before to after's tree with no samples, and remember where it ends. */
static int add_before_stack(void *ctx, const uint32_t *frames, size_t depth, uint64_t count)
{
    struct merge *m = ctx;
    m->ids.n = 0;
    if (vec_reserve(&m->ids, depth) != 0)
        return -1;
    for (size_t i = 0; i < depth; i++) {
        uint32_t *id = &m->frame_in_after[frames[i]];
        if (*id == PROFILE_NO_FRAME) {
            const char *name = profile_frame_name(m->before, frames[i]);
            *id = profile_intern(m->after, name, strlen(name));
            if (*id == PROFILE_NO_FRAME)
                return -1;
        }
        m->ids.v[m->ids.n++] = *id;
    }
    if (profile_add_ids(m->after, m->ids.v, m->ids.n, 0) != 0)
        return -1;
    uint32_t leaf = profile_last_leaf(m->after);
    if (leaf == PROFILE_NO_NODE || vec_reserve(&m->stacks, m->stacks.n + 1) != 0)
        return -1;
    m->stacks.v[m->stacks.n++] = (struct before_stack){ leaf, count };
    return 0;
}

/* count x to / from, rounded down: difffolded.pl's int($count * $total2 / $total1), exact where Perl's
 * doubles are (products below 2^53) and beyond. */
static uint64_t scaled(uint64_t count, uint64_t to, uint64_t from)
{
    unsigned __int128 product = (unsigned __int128)count * to;
    unsigned __int128 quotient = product / from;
    return quotient > UINT64_MAX ? UINT64_MAX : (uint64_t)quotient;
}

/* Before's counts on after's nodes, their totals up the tree, the largest change and the summary. */
static void settle(struct diff_profile *d, const struct merge *m, bool normalize, uint64_t before_total,
                   uint64_t after_total)
{
    size_t n = 0;
    const struct profile_node *nodes = profile_nodes(d->after, &n);
    bool scale = normalize && before_total != after_total;
    for (size_t i = 0; i < m->stacks.n; i++) {
        const struct before_stack *s = &m->stacks.v[i];
        d->before_self[s->node] += scale ? scaled(s->count, after_total, before_total) : s->count;
        d->in[s->node] |= IN_BEFORE;
    }
    d->max_delta = 1;
    struct diff_summary *sum = &d->summary;
    for (size_t i = n; i-- > 1;) {
        if (nodes[i].self > 0)
            d->in[i] |= IN_AFTER;
        d->before_total[i] += d->before_self[i];
        d->before_total[nodes[i].parent] += d->before_total[i];
        if (d->in[i] == 0)
            continue;
        uint64_t before = d->before_self[i], after = nodes[i].self;
        uint64_t change = after > before ? after - before : before - after;
        if (change > d->max_delta)
            d->max_delta = change;
        sum->stacks++;
        sum->grew += after > before;
        sum->shrank += after < before;
        sum->only_before += d->in[i] == IN_BEFORE;
        sum->only_after += d->in[i] == IN_AFTER;
    }
    sum->before_total = d->before_total[0];
    sum->after_total = n ? nodes[0].total : 0;
}

struct diff_profile *diff_profile_new(const struct profile *before, struct profile *after, bool normalize)
{
    uint64_t before_total = profile_total(before), after_total = profile_total(after);
    if (before_total == 0 || after_total == 0) {
        profile_free(after);
        errno = EINVAL;
        return NULL;
    }
    struct diff_profile *d = calloc(1, sizeof(*d));
    size_t n_frames = profile_frame_count(before);
    struct merge m = { .before = before, .after = after,
                       .frame_in_after = malloc((n_frames ? n_frames : 1) * sizeof(uint32_t)) };
    if (!d || !m.frame_in_after)
        goto fail;
    d->after = after;
    for (size_t i = 0; i < n_frames; i++)
        m.frame_in_after[i] = PROFILE_NO_FRAME;
    if (stack_walk(before, add_before_stack, &m) != 0)
        goto fail;
    profile_trim(after);
    profile_nodes(after, &d->n_nodes);
    d->before_self = calloc(d->n_nodes, sizeof(*d->before_self));
    d->before_total = calloc(d->n_nodes, sizeof(*d->before_total));
    d->in = calloc(d->n_nodes, sizeof(*d->in));
    if (!d->before_self || !d->before_total || !d->in)
        goto fail;
    settle(d, &m, normalize, before_total, after_total);
    free(m.frame_in_after);
    vec_free(&m.ids);
    vec_free(&m.stacks);
    return d;
fail:
    free(m.frame_in_after);
    vec_free(&m.ids);
    vec_free(&m.stacks);
    if (d)
        d->after = after;
    else
        profile_free(after);
    diff_profile_free(d);
    errno = ENOMEM;
    return NULL;
}

void diff_profile_free(struct diff_profile *d)
{
    if (!d)
        return;
    profile_free(d->after);
    free(d->before_self);
    free(d->before_total);
    free(d->in);
    free(d);
}

void diff_profile_summary(const struct diff_profile *d, struct diff_summary *out)
{
    *out = d->summary;
}

/* ---- difffolded.pl's lines ---- */

static size_t two_counts(const void *ctx, uint32_t node, char *buf)
{
    const struct diff_profile *d = ctx;
    if (d->in[node] == 0)
        return 0;
    uint64_t after = profile_nodes(d->after, &(size_t){ 0 })[node].self;
    return (size_t)snprintf(buf, FOLDED_COUNTS_MAX, "%" PRIu64 " %" PRIu64, d->before_self[node], after);
}

int diff_profile_write_folded(const struct diff_profile *d, FILE *out)
{
    return folded_write_lines(d->after, out, two_counts, d);
}

/* ---- flamegraph.pl's differential graph ---- */

/* after - before of the samples of the stack ending at node (0 where none ends there) */
static int64_t own_change(const struct diff_profile *d, uint32_t node)
{
    uint64_t after = profile_nodes(d->after, &(size_t){ 0 })[node].self, before = d->before_self[node];
    return after >= before ? (int64_t)(after - before) : -(int64_t)(before - after);
}

static uint32_t diff_fill(const void *ctx, uint32_t node)
{
    const struct diff_profile *d = ctx;
    return svg_diff_color(own_change(d, node), d->max_delta);
}

static size_t diff_title_tail(const void *ctx, uint32_t node, char *dst)
{
    const struct diff_profile *d = ctx;
    uint64_t after = profile_nodes(d->after, &(size_t){ 0 })[node].total;
    int len = snprintf(dst, SVG_TITLE_TAIL_MAX, "; before %" PRIu64 ", after %" PRIu64, d->before_total[node], after);
    if (node != 0) {          /* flamegraph.pl gives "all" no change: it has no samples of its own */
        int64_t change = own_change(d, node);
        double share = 100.0 * (double)change / (double)d->summary.after_total;
        len += snprintf(dst + len, SVG_TITLE_TAIL_MAX - (size_t)len, "; %s%.2f%%", change > 0 ? "+" : "", share);
    }
    return (size_t)len;
}

int diff_profile_write_svg(const struct diff_profile *d, FILE *out, const struct svg_options *opts)
{
    const struct svg_frame_style style = { .fill = diff_fill, .title_tail = diff_title_tail, .ctx = d };
    return svg_write_styled(d->after, out, opts, &style);
}
