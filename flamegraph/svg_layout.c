/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_layout.c: places the merged stack tree on the chart: siblings sorted by name left to right (as
 * flamegraph.pl does), each frame's offset in samples and depth, frames too narrow to draw left out (they
 * still count in their parent's width). Which nodes are drawn, and the deepest, are found first; the frames
 * then come in preorder a chunk at a time, so the writer can format one chunk while the next is laid out.
 * Memory and time grow with the tree's nodes, not with samples. */
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
    uint32_t *depth;         /* per drawn node (allocated per node, only the drawn ones' touched) */
    struct child_ref *children;
    size_t n_nodes, n_children;  /* the arrays' sizes (they are big_alloc'd) */
};

static int drawn_children_build(const struct profile_node *nodes, size_t n, double px_per_sample,
                                double min_width, struct drawn_children *dc, size_t *drawn_count,
                                size_t *most_children, uint32_t *max_depth)
{
    dc->n_nodes = n;
    dc->drawn = big_alloc(n * sizeof(*dc->drawn), BIG_ALL_OVER);
    dc->offset = big_alloc((n + 1) * sizeof(*dc->offset), BIG_ALL_OVER);
    dc->depth = big_alloc(n * sizeof(*dc->depth), BIG_IN_ORDER);
    uint64_t *pairs = big_alloc(n * sizeof(*pairs), BIG_IN_ORDER);   /* parent's number << 32 | child, for drawn parents */
    if (!dc->drawn || !dc->offset || !dc->depth || !pairs) {
        big_free(pairs, n * sizeof(*pairs));
        return -1;
    }
    size_t n_drawn = 0, n_pairs = 0;
    *max_depth = 0;
    for (size_t v = 0; v < n; v++) {
        uint32_t d = UINT32_MAX;
        if (v > 0) {
            d = dc->drawn[nodes[v].parent];
            if (d != UINT32_MAX) {
                dc->offset[d + 1]++;
                pairs[n_pairs++] = (uint64_t)d << 32 | v;
            }
        }
        bool wide = v == 0 || (double)nodes[v].total * px_per_sample >= min_width;
        if (wide) {                          /* a wide node's parent is drawn (never narrower) */
            uint32_t depth = v == 0 ? 0 : dc->depth[d] + 1;
            dc->depth[n_drawn] = depth;
            if (depth > *max_depth)
                *max_depth = depth;
        }
        dc->drawn[v] = wide ? (uint32_t)n_drawn++ : UINT32_MAX;
    }
    *drawn_count = n_drawn;
    *most_children = 0;
    for (size_t d = 0; d < n_drawn; d++) {
        if (dc->offset[d + 1] > *most_children)
            *most_children = dc->offset[d + 1];
        dc->offset[d + 1] += dc->offset[d];
    }
    dc->n_children = n_pairs ? n_pairs : 1;
    dc->children = big_alloc(dc->n_children * sizeof(*dc->children), BIG_ALL_OVER);
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

/* A drawn node's drawn children in kids, sorted by name (their names fetched in two passes: the pointers,
 * then the text, so the cache misses overlap). Children too narrow to draw are not sorted: they only move
 * their drawn siblings right, by their totals, which left_of adds up. */
static size_t sorted_drawn_children(const struct profile *p, const struct drawn_children *dc, uint32_t d,
                                    struct kid *kids)
{
    size_t k = 0;
    for (uint32_t i = dc->offset[d]; i < dc->offset[d + 1]; i++) {
        const struct child_ref *c = &dc->children[i];
        if (c->drawn == UINT32_MAX)
            continue;
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

/* left_of[i] = the total of node d's children that sort before its drawn child kids[i] (k of them, sorted):
 * the drawn ones' totals, and each narrow one's put before the first drawn child that sorts after it
 * (found by binary search). The same sums as sorting all the children, without sorting the narrow ones. */
static void totals_left_of(const struct profile *p, const struct drawn_children *dc, uint32_t d,
                           const struct kid *kids, size_t k, uint64_t *left_of)
{
    for (size_t i = 0; i < k; i++)
        left_of[i] = 0;
    uint32_t first = dc->offset[d], end = dc->offset[d + 1];
    for (uint32_t i = first; i < end; i++)
        if (dc->children[i].drawn == UINT32_MAX)
            __builtin_prefetch(profile_frame_name(p, dc->children[i].frame));
    for (uint32_t i = first; i < end; i++) {
        const struct child_ref *c = &dc->children[i];
        if (c->drawn != UINT32_MAX)
            continue;
        struct kid narrow = { .name = profile_frame_name(p, c->frame), .frame = c->frame };
        size_t lo = 0, hi = k;            /* the first drawn kid sorting after it */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (compare_kids(&kids[mid], &narrow) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < k)                       /* after the last drawn one it moves none */
            left_of[lo] += c->total;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < k; i++) {
        sum += left_of[i];
        left_of[i] = sum;
        sum += kids[i].total;
    }
}

/* A layout being walked: what drawn_children_build found, and the preorder walk's stack. */
struct svg_layout {
    const struct profile *p;
    struct drawn_children dc;
    uint32_t max_depth;
    struct svg_frame *stack;         /* a path's drawn siblings at most: sized by the drawn nodes */
    uint32_t *stack_drawn;           /* each stacked frame's drawn number */
    size_t depth_of_stack;
    struct kid *kids;
    uint64_t *left_of;
    size_t most_kids;
};

void svg_layout_free(struct svg_layout *l)
{
    if (!l)
        return;
    free(l->stack);
    free(l->stack_drawn);
    big_free(l->kids, (l->most_kids + 1) * sizeof(*l->kids));
    big_free(l->left_of, (l->most_kids + 1) * sizeof(*l->left_of));
    big_free(l->dc.drawn, l->dc.n_nodes * sizeof(*l->dc.drawn));
    big_free(l->dc.offset, (l->dc.n_nodes + 1) * sizeof(*l->dc.offset));
    big_free(l->dc.depth, l->dc.n_nodes * sizeof(*l->dc.depth));
    big_free(l->dc.children, l->dc.n_children * sizeof(*l->dc.children));
    free(l);
}

struct svg_layout *svg_layout_open(const struct profile *p, double chart_width, double min_width)
{
    struct svg_layout *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->p = p;
    size_t n = 0;
    const struct profile_node *nodes = profile_nodes(p, &n);
    if (n == 0 || nodes[0].total == 0)
        return l;                    /* nothing to draw */
    double px_per_sample = chart_width / (double)nodes[0].total;
    size_t n_drawn = 0;
    if (drawn_children_build(nodes, n, px_per_sample, min_width, &l->dc, &n_drawn, &l->most_kids,
                             &l->max_depth) != 0)
        goto fail;
    /* sized by what is drawn, not by the nodes: a big profile draws a small part of its tree. The stack
     * (a path's drawn siblings at most) touches few of its pages: malloc's. */
    l->stack = malloc(n_drawn * sizeof(*l->stack));
    l->stack_drawn = malloc(n_drawn * sizeof(*l->stack_drawn));
    l->kids = big_alloc((l->most_kids + 1) * sizeof(*l->kids), BIG_IN_ORDER);
    l->left_of = big_alloc((l->most_kids + 1) * sizeof(*l->left_of), BIG_IN_ORDER);
    if (!l->stack || !l->stack_drawn || !l->kids || !l->left_of)
        goto fail;
    l->stack_drawn[0] = 0;
    l->stack[0] = (struct svg_frame){ .node = 0, .depth = 0, .start = 0, .total = nodes[0].total,
                                      .frame = PROFILE_NO_FRAME };
    l->depth_of_stack = 1;
    return l;
fail:
    svg_layout_free(l);
    errno = ENOMEM;
    return NULL;
}

uint32_t svg_layout_max_depth(const struct svg_layout *l)
{
    return l->max_depth;
}

size_t svg_layout_next(struct svg_layout *l, struct svg_frame *frames, size_t room)
{
    size_t n = 0;
    while (n < room && l->depth_of_stack > 0) {
        struct svg_frame f = l->stack[--l->depth_of_stack];
        uint32_t drawn = l->stack_drawn[l->depth_of_stack];
        frames[n++] = f;
        /* children left to right from the parent's left edge; pushed right to left so the leftmost is
         * drawn first */
        size_t k = sorted_drawn_children(l->p, &l->dc, drawn, l->kids);
        if (k == 0)
            continue;
        totals_left_of(l->p, &l->dc, drawn, l->kids, k, l->left_of);
        for (size_t i = k; i > 0; i--) {
            const struct kid *c = &l->kids[i - 1];
            l->stack_drawn[l->depth_of_stack] = c->drawn;
            l->stack[l->depth_of_stack++] = (struct svg_frame){ .node = c->node, .depth = f.depth + 1,
                                                                .start = f.start + l->left_of[i - 1],
                                                                .total = c->total, .name = c->name,
                                                                .frame = c->frame };
        }
    }
    return n;
}
