/* SPDX-License-Identifier: GPL-3.0-or-later */
/* stack_walk.c: walks the profile tree depth first without chasing links from node to node across memory
 * (a cache miss per node on a big tree). Sequential passes over the node array (a parent always comes
 * before its children) give each node its depth, the size of its subtree and from those its depth-first
 * position, children in index order; the nodes' frames, depths and self counts are then laid out in that
 * order and read front to back, keeping the path from the root as they go. */
#include "flamegraph/stack_walk.h"

#include <errno.h>
#include <stdlib.h>

struct walk_entry {
    uint32_t frame;
    uint32_t depth;            /* 1 for a root frame */
    uint64_t self;
};

struct walk_plan {
    uint32_t *position;        /* per node: first the subtree size, then the depth-first position */
    uint32_t *next_child;      /* per node: the position its next child gets */
    uint32_t *depth;           /* per node */
    struct walk_entry *order;  /* the nodes below the root in depth-first order */
    uint32_t *path;            /* frames from the root to the entry being read */
};

static void plan_free(struct walk_plan *w)
{
    free(w->position);
    free(w->next_child);
    free(w->depth);
    free(w->order);
    free(w->path);
}

/* Lay the nodes out depth first; returns the deepest depth. */
static uint32_t plan_order(struct walk_plan *w, const struct profile_node *nodes, size_t n)
{
    for (size_t v = 0; v < n; v++)
        w->position[v] = 1;
    for (size_t v = n; v-- > 1;)
        w->position[nodes[v].parent] += w->position[v];
    w->position[0] = 0;
    w->next_child[0] = 0;       /* positions count the nodes below the root, from 0 */
    w->depth[0] = 0;
    uint32_t deepest = 0;
    for (size_t v = 1; v < n; v++) {
        uint32_t parent = nodes[v].parent;
        uint32_t subtree = w->position[v];
        uint32_t at = w->next_child[parent];
        w->next_child[parent] = at + subtree;
        w->position[v] = at;
        w->next_child[v] = at + 1;
        w->depth[v] = w->depth[parent] + 1;
        if (w->depth[v] > deepest)
            deepest = w->depth[v];
        w->order[at] = (struct walk_entry){ nodes[v].frame, w->depth[v], nodes[v].self };
    }
    return deepest;
}

int stack_walk(const struct profile *p, stack_visit_fn visit, void *ctx)
{
    size_t n;
    const struct profile_node *nodes = profile_nodes(p, &n);
    if (n <= 1)
        return 0;
    struct walk_plan w = {
        .position = malloc(n * sizeof(uint32_t)),
        .next_child = malloc(n * sizeof(uint32_t)),
        .depth = malloc(n * sizeof(uint32_t)),
        .order = malloc((n - 1) * sizeof(struct walk_entry)),
    };
    if (!w.position || !w.next_child || !w.depth || !w.order) {
        plan_free(&w);
        errno = ENOMEM;
        return -1;
    }
    uint32_t deepest = plan_order(&w, nodes, n);
    /* only the order is read from here on */
    free(w.position);
    free(w.next_child);
    free(w.depth);
    w.position = w.next_child = w.depth = NULL;
    w.path = malloc(deepest * sizeof(uint32_t));
    if (!w.path) {
        plan_free(&w);
        errno = ENOMEM;
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n - 1 && rc == 0; i++) {
        const struct walk_entry *e = &w.order[i];
        w.path[e->depth - 1] = e->frame;
        if (e->self > 0)
            rc = visit(ctx, w.path, e->depth, e->self);
    }
    plan_free(&w);
    return rc;
}
