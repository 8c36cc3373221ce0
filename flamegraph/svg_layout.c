/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_layout.c: places the merged stack tree on the chart: siblings sorted by name left to right (as
 * flamegraph.pl does), each frame's offset in samples and depth, frames too narrow to draw left out (they
 * still count in their parent's width). Memory and time grow with the tree's nodes, not with samples. */
#include "flamegraph/svg_internal.h"

#include "flamegraph/big_alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The children of the drawn nodes: children[offset[d] .. offset[d + 1]) for the drawn node numbered d
 * (drawn[node] = d). A node is drawn when wide enough (the root always): its parent, never narrower, is then
 * drawn too. One pass over the nodes in index order finds them all (a parent comes before its children),
 * instead of following sibling links from node to node across memory. */
struct child_ref {           /* what the layout reads of a child, copied in node order (no lookup per child) */
    uint32_t node;
    uint32_t frame;
    uint32_t drawn;          /* its number among the drawn nodes, or UINT32_MAX */
    uint64_t total;
};

struct drawn_children {
    uint32_t *drawn;         /* per node: its number among the drawn nodes, or UINT32_MAX */
    uint32_t *offset;        /* per drawn node + 1 */
    struct child_ref *children;
    size_t n_nodes, n_children;  /* the arrays' sizes (they are big_alloc'd: a few faults, not one per page) */
};

static int drawn_children_build(const struct profile_node *nodes, size_t n, double px_per_sample,
                                double min_width, struct drawn_children *dc)
{
    dc->n_nodes = n;
    dc->drawn = big_alloc(n * sizeof(*dc->drawn));
    dc->offset = big_alloc((n + 1) * sizeof(*dc->offset));
    uint64_t *pairs = big_alloc(n * sizeof(*pairs));   /* parent's number << 32 | child, for drawn parents */
    if (!dc->drawn || !dc->offset || !pairs) {
        big_free(pairs, n * sizeof(*pairs));
        return -1;
    }
    size_t n_drawn = 0, n_pairs = 0;
    for (size_t v = 0; v < n; v++) {
        if (v > 0) {
            uint32_t d = dc->drawn[nodes[v].parent];
            if (d != UINT32_MAX) {
                dc->offset[d + 1]++;
                pairs[n_pairs++] = (uint64_t)d << 32 | v;
            }
        }
        bool wide = v == 0 || (double)nodes[v].total * px_per_sample >= min_width;
        dc->drawn[v] = wide ? (uint32_t)n_drawn++ : UINT32_MAX;
    }
    for (size_t d = 0; d < n_drawn; d++)
        dc->offset[d + 1] += dc->offset[d];
    dc->n_children = n_pairs ? n_pairs : 1;
    dc->children = big_alloc(dc->n_children * sizeof(*dc->children));
    if (!dc->children) {
        big_free(pairs, n * sizeof(*pairs));
        return -1;
    }
    for (size_t i = 0; i < n_pairs; i++) {
        uint32_t d = (uint32_t)(pairs[i] >> 32), v = (uint32_t)pairs[i];
        dc->children[dc->offset[d]++] = (struct child_ref){ v, nodes[v].frame, dc->drawn[v], nodes[v].total };
    }
    for (size_t d = n_drawn; d > 0; d--)            /* the fill moved each start to the next one's */
        dc->offset[d] = dc->offset[d - 1];
    dc->offset[0] = 0;
    big_free(pairs, n * sizeof(*pairs));
    return 0;
}

/* A child to order among its siblings: by name as strcmp orders them, names it finds equal (distinct names
 * with a NUL byte) by frame id. */
struct kid {
    const char *name;
    uint32_t frame;
    uint32_t node;
    uint32_t drawn;
    uint64_t total;
};

static int compare_kids(const void *a, const void *b)
{
    const struct kid *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* A drawn node's children, sorted by name, in kids (room for all of them). Only the nodes drawn get their
 * children sorted: most of a big profile's nodes are too narrow to draw. The names are fetched in two passes
 * (their pointers, then their text), so the cache misses of a node's many children overlap. */
static size_t sorted_children(const struct profile *p, const struct drawn_children *dc, uint32_t d,
                              struct kid *kids)
{
    size_t k = 0;
    for (uint32_t i = dc->offset[d]; i < dc->offset[d + 1]; i++) {
        const struct child_ref *c = &dc->children[i];
        kids[k++] = (struct kid){ profile_frame_name(p, c->frame), c->frame, c->node, c->drawn, c->total };
        __builtin_prefetch(kids[k - 1].name);
    }
    if (k > 8) {
        qsort(kids, k, sizeof(*kids), compare_kids);
    } else {
        for (size_t i = 1; i < k; i++) {
            struct kid x = kids[i];
            size_t j = i;
            for (; j > 0 && compare_kids(&kids[j - 1], &x) > 0; j--)
                kids[j] = kids[j - 1];
            kids[j] = x;
        }
    }
    return k;
}

int svg_layout_build(const struct profile *p, double chart_width, double min_width, struct svg_layout *out)
{
    memset(out, 0, sizeof(*out));
    size_t n = 0;
    const struct profile_node *nodes = profile_nodes(p, &n);
    if (n == 0 || nodes[0].total == 0)
        return 0;
    double px_per_sample = chart_width / (double)nodes[0].total;

    struct drawn_children dc = { 0 };
    struct svg_frame *stack = big_alloc(n * sizeof(*stack));
    uint32_t *stack_drawn = big_alloc(n * sizeof(*stack_drawn));   /* each stacked frame's drawn number */
    struct kid *kids = big_alloc(n * sizeof(*kids));
    out->frames = big_alloc(n * sizeof(*out->frames));
    out->frames_room = n;
    int rc = -1;
    if (!stack || !stack_drawn || !kids || !out->frames ||
        drawn_children_build(nodes, n, px_per_sample, min_width, &dc) != 0)
        goto done;

    size_t depth_of_stack = 0;
    stack_drawn[depth_of_stack] = 0;
    stack[depth_of_stack++] = (struct svg_frame){ .node = 0, .depth = 0, .start = 0, .total = nodes[0].total };
    while (depth_of_stack > 0) {
        struct svg_frame f = stack[--depth_of_stack];
        uint32_t drawn = stack_drawn[depth_of_stack];
        out->frames[out->n_frames++] = f;
        if (f.depth > out->max_depth)
            out->max_depth = f.depth;
        /* children left to right from the parent's left edge; pushed right to left so the leftmost is
         * drawn first, from the right end of the children (the parent's total less its self count) */
        size_t k = sorted_children(p, &dc, drawn, kids);
        uint64_t end = f.start;
        for (size_t i = 0; i < k; i++)
            end += kids[i].total;
        for (size_t i = k; i > 0; i--) {
            const struct kid *c = &kids[i - 1];
            end -= c->total;
            if (c->drawn == UINT32_MAX)
                continue;
            stack_drawn[depth_of_stack] = c->drawn;
            stack[depth_of_stack++] = (struct svg_frame){ .node = c->node, .depth = f.depth + 1, .start = end,
                                                          .total = c->total, .name = c->name };
        }
    }
    rc = 0;
done:
    if (rc != 0) {
        int saved = errno;
        svg_layout_free(out);
        errno = saved ? saved : ENOMEM;
    }
    big_free(stack, n * sizeof(*stack));
    big_free(stack_drawn, n * sizeof(*stack_drawn));
    big_free(kids, n * sizeof(*kids));
    big_free(dc.drawn, dc.n_nodes * sizeof(*dc.drawn));
    big_free(dc.offset, (dc.n_nodes + 1) * sizeof(*dc.offset));
    big_free(dc.children, dc.n_children * sizeof(*dc.children));
    return rc;
}

void svg_layout_free(struct svg_layout *l)
{
    big_free(l->frames, l->frames_room * sizeof(*l->frames));
    memset(l, 0, sizeof(*l));
}
