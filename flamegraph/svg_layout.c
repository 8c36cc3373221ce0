/* svg_layout.c: places the merged stack tree on the chart: siblings sorted by name left to right (as
 * flamegraph.pl does), each frame's offset in samples and depth, frames too narrow to draw left out (they
 * still count in their parent's width). Memory and time grow with the tree's nodes, not with samples. */
#include "flamegraph/svg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int compare_names(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    return strcmp(profile_frame_name(p, *(const uint32_t *)a), profile_frame_name(p, *(const uint32_t *)b));
}

static int compare_keys(const void *a, const void *b, void *ctx)
{
    const uint32_t *key = ctx;
    uint32_t ka = key[*(const uint32_t *)a], kb = key[*(const uint32_t *)b];
    return ka < kb ? -1 : ka > kb;
}

/* rank[frame id] = position of the frame's name in sorted order; so siblings sort by integer compare. */
static uint32_t *frame_name_ranks(const struct profile *p)
{
    size_t n = profile_frame_count(p);
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
    if (!order || !rank) {
        free(order);
        free(rank);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof(*order), compare_names, (void *)p);
    for (size_t i = 0; i < n; i++)
        rank[order[i]] = (uint32_t)i;
    free(order);
    return rank;
}

/* Children of every node, contiguous and sorted by name: children[offset[v] .. offset[v + 1]). */
struct child_index {
    uint32_t *offset;
    uint32_t *children;
};

static int child_index_build(const struct profile_node *nodes, size_t n, const uint32_t *rank,
                             struct child_index *ci)
{
    ci->offset = calloc(n + 1, sizeof(*ci->offset));
    ci->children = malloc((n ? n : 1) * sizeof(*ci->children));
    uint32_t *key = malloc((n ? n : 1) * sizeof(*key));
    if (!ci->offset || !ci->children || !key) {
        free(key);
        return -1;
    }
    for (size_t v = 1; v < n; v++)
        ci->offset[nodes[v].parent + 1]++;
    for (size_t v = 0; v < n; v++)
        ci->offset[v + 1] += ci->offset[v];
    uint32_t *cursor = key;                         /* reuse key as the fill cursor first */
    memcpy(cursor, ci->offset, n * sizeof(*cursor));
    for (size_t v = 1; v < n; v++)
        ci->children[cursor[nodes[v].parent]++] = (uint32_t)v;
    for (size_t v = 0; v < n; v++)
        key[v] = v == 0 ? 0 : rank[nodes[v].frame];
    for (size_t v = 0; v < n; v++) {
        uint32_t count = ci->offset[v + 1] - ci->offset[v];
        if (count > 1)
            qsort_r(ci->children + ci->offset[v], count, sizeof(uint32_t), compare_keys, key);
    }
    free(key);
    return 0;
}

int svg_layout_build(const struct profile *p, double chart_width, double min_width, struct svg_layout *out)
{
    memset(out, 0, sizeof(*out));
    size_t n = 0;
    const struct profile_node *nodes = profile_nodes(p, &n);
    if (n == 0 || nodes[0].total == 0)
        return 0;
    double px_per_sample = chart_width / (double)nodes[0].total;

    struct child_index ci = { 0 };
    struct svg_frame *stack = malloc(n * sizeof(*stack));
    out->frames = malloc(n * sizeof(*out->frames));
    uint32_t *rank = frame_name_ranks(p);
    int rc = -1;
    if (!stack || !out->frames || !rank || child_index_build(nodes, n, rank, &ci) != 0)
        goto done;

    size_t depth_of_stack = 0;
    stack[depth_of_stack++] = (struct svg_frame){ .node = 0, .depth = 0, .start = 0 };
    while (depth_of_stack > 0) {
        struct svg_frame f = stack[--depth_of_stack];
        out->frames[out->n_frames++] = f;
        if (f.depth > out->max_depth)
            out->max_depth = f.depth;
        /* children left to right from the parent's left edge; pushed right to left so the leftmost is
         * drawn first */
        uint64_t end = f.start + nodes[f.node].total - nodes[f.node].self;
        for (uint32_t i = ci.offset[f.node + 1]; i > ci.offset[f.node]; i--) {
            uint32_t c = ci.children[i - 1];
            end -= nodes[c].total;
            if ((double)nodes[c].total * px_per_sample < min_width)
                continue;
            stack[depth_of_stack++] = (struct svg_frame){ .node = c, .depth = f.depth + 1, .start = end };
        }
    }
    rc = 0;
done:
    if (rc != 0) {
        int saved = errno;
        free(out->frames);
        memset(out, 0, sizeof(*out));
        errno = saved ? saved : ENOMEM;
    }
    free(stack);
    free(rank);
    free(ci.offset);
    free(ci.children);
    return rc;
}

void svg_layout_free(struct svg_layout *l)
{
    free(l->frames);
    memset(l, 0, sizeof(*l));
}
