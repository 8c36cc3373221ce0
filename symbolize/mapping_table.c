/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mapping_table.c: the target's address space as the symbolizer knows it: sorted, non-overlapping
 * [start,end) ranges, each naming an object file and the file offset at start. A new mapping replaces
 * whatever it overlaps (an munmap + mmap, a dlopen over an old range), trimming neighbours, and gets a new
 * generation number, so that results cached for its addresses under the old mapping miss. */
#include "symbolize/symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

/* Same file (path and inode) at the same file offset for the same address: symbols do not change. */
static bool same_content(const struct mapping *a, const struct mapping *b)
{
    return a->path == b->path && a->root == b->root && a->pgoff - a->start == b->pgoff - b->start &&
           a->file_dev == b->file_dev && a->file_ino == b->file_ino;
}

int mapping_table_add(struct mapping_table *t, const struct mapping *new_mapping)
{
    if (new_mapping->end <= new_mapping->start)
        return 0;
    /* At most one existing entry is split in two, plus the new one. */
    if (vec_reserve(&t->items, t->items.n + 2) != 0)
        return -1;
    struct mapping added = *new_mapping;
    const struct mapping *m = &added;
    added.generation = 0;
    size_t out = 0;
    struct mapping right = { 0 };
    bool have_right = false;
    for (size_t i = 0; i < t->items.n; i++) {
        struct mapping cur = t->items.v[i];
        if (cur.end <= m->start || cur.start >= m->end) {
            t->items.v[out++] = cur;
            continue;
        }
        if (same_content(&cur, m) && !added.generation)
            added.generation = cur.generation;   /* the same mapping reported again */
        if (cur.end > m->end) {   /* the part after the new mapping survives */
            right = cur;
            right.pgoff += m->end - cur.start;
            right.start = m->end;
            have_right = true;
        }
        if (cur.start < m->start) {   /* the part before it survives */
            cur.end = m->start;
            t->items.v[out++] = cur;
        }
    }
    t->items.n = out;
    if (!added.generation)   /* new contents here: what was cached for these addresses is stale */
        added.generation = ++t->last_generation;
    /* Insert the new mapping, then the right remainder, keeping the order. */
    size_t pos = 0;
    while (pos < t->items.n && t->items.v[pos].start < m->start)
        pos++;
    size_t add = have_right ? 2 : 1;
    memmove(&t->items.v[pos + add], &t->items.v[pos], (t->items.n - pos) * sizeof(*t->items.v));
    t->items.v[pos] = added;
    if (have_right)
        t->items.v[pos + 1] = right;
    t->items.n += add;
    return 0;
}

const struct mapping *mapping_table_find(const struct mapping_table *t, uint64_t addr)
{
    size_t lo = 0, hi = t->items.n;
    while (lo < hi) {   /* first mapping with start > addr */
        size_t mid = lo + (hi - lo) / 2;
        if (t->items.v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct mapping *m = &t->items.v[lo - 1];
    return addr < m->end ? m : NULL;
}

void mapping_table_free(struct mapping_table *t)
{
    vec_free(&t->items);
    t->last_generation = 0;
}
