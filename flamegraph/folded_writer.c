/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_writer.c: writes a profile as folded stacks, "root;frame;...;leaf COUNT", one line per distinct
 * stack, whole lines sorted bytewise as `LC_ALL=C sort` would (the order stackcollapse scripts produce); the
 * line writer is shared with the differential file's two counts (folded_internal.h). */
#include "flamegraph/folded_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct folded_line {
    char *text;                 /* the whole line without its newline: "a;b;c COUNT" */
};

static int compare_lines(const void *a, const void *b)
{
    const struct folded_line *x = a, *y = b;
    return strcmp(x->text, y->text);
}

int folded_write_lines(const struct profile *p, FILE *out, folded_counts_fn counts, const void *ctx)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(p, &n_nodes);
    char counts_text[FOLDED_COUNTS_MAX];
    size_t n_lines = 0;
    for (size_t i = 1; i < n_nodes; i++)
        n_lines += counts(ctx, (uint32_t)i, counts_text) > 0;
    struct folded_line *lines = calloc(n_lines ? n_lines : 1, sizeof(*lines));
    uint32_t *path = malloc(n_nodes * sizeof(*path));
    if (!lines || !path) {
        free(lines);
        free(path);
        errno = ENOMEM;
        return -1;
    }
    int rc = 0;
    size_t at = 0;
    for (size_t i = 1; i < n_nodes && rc == 0; i++) {
        size_t counts_len = counts(ctx, (uint32_t)i, counts_text);
        if (counts_len == 0)
            continue;
        size_t depth = 0, len = 0;
        for (uint32_t n = (uint32_t)i; n != 0; n = nodes[n].parent) {
            path[depth++] = n;
            len += strlen(profile_frame_name(p, nodes[n].frame)) + 1;
        }
        char *text = malloc(len + counts_len + 1);
        if (!text) {
            rc = -1;
            break;
        }
        char *w = text;
        while (depth > 0) {
            const char *name = profile_frame_name(p, nodes[path[--depth]].frame);
            size_t l = strlen(name);
            memcpy(w, name, l);
            w += l;
            *w++ = depth ? ';' : ' ';
        }
        memcpy(w, counts_text, counts_len);
        w[counts_len] = '\0';
        lines[at++] = (struct folded_line){ text };
    }
    if (rc == 0) {
        qsort(lines, at, sizeof(*lines), compare_lines);
        for (size_t i = 0; i < at; i++) {
            if (fprintf(out, "%s\n", lines[i].text) < 0) {
                rc = -1;
                break;
            }
        }
    }
    for (size_t i = 0; i < at; i++)
        free(lines[i].text);
    free(lines);
    free(path);
    if (rc != 0 && errno == 0)
        errno = ENOMEM;
    return rc;
}

/* A node's line: its self count, when it has one. */
static size_t self_count(const void *ctx, uint32_t node, char *buf)
{
    uint64_t self = profile_nodes(ctx, &(size_t){ 0 })[node].self;
    return self > 0 ? (size_t)snprintf(buf, FOLDED_COUNTS_MAX, "%" PRIu64, self) : 0;
}

int profile_write_folded(const struct profile *p, FILE *out)
{
    return folded_write_lines(p, out, self_count, p);
}
