/* stack_walk.c: depth-first walk of the profile tree through its first_child/next_sibling links, keeping
 * the path from the root (node ids and frame ids) so each visited stack costs no parent-chain walk. */
#include "flamegraph/stack_walk.h"

#include "base/vec.h"

#include <errno.h>

int stack_walk(const struct profile *p, stack_visit_fn visit, void *ctx)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(p, &n_nodes);
    VEC_OF(uint32_t) path_nodes = { 0 };
    VEC_OF(uint32_t) path_frames = { 0 };
    int rc = 0;
    size_t depth = 0;
    uint32_t node = n_nodes > 0 ? nodes[0].first_child : PROFILE_NO_NODE;
    while (node != PROFILE_NO_NODE) {
        if (vec_reserve(&path_nodes, depth + 1) != 0 || vec_reserve(&path_frames, depth + 1) != 0) {
            errno = ENOMEM;
            rc = -1;
            break;
        }
        path_nodes.v[depth] = node;
        path_frames.v[depth] = nodes[node].frame;
        depth++;
        if (nodes[node].self > 0 && (rc = visit(ctx, path_frames.v, depth, nodes[node].self)) != 0)
            break;
        if (nodes[node].first_child != PROFILE_NO_NODE) {
            node = nodes[node].first_child;
            continue;
        }
        /* climb until a node on the path has a next sibling */
        node = PROFILE_NO_NODE;
        while (depth > 0 && node == PROFILE_NO_NODE)
            node = nodes[path_nodes.v[--depth]].next_sibling;
    }
    vec_free(&path_nodes);
    vec_free(&path_frames);
    return rc;
}
