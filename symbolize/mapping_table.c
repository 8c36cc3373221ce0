/* mapping_table.c: the target's address space as the symbolizer knows it: sorted, non-overlapping
 * [start,end) ranges, each naming an object file and the file offset at start. A new mapping replaces
 * whatever it overlaps (an munmap + mmap, a dlopen over an old range), trimming neighbours. */
#include "symbolize/symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

static int reserve(struct mapping_table *t, size_t need)
{
    if (need <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap : 64;
    while (cap < need)
        cap *= 2;
    struct mapping *items = realloc(t->items, cap * sizeof(*items));
    if (!items)
        return -1;
    t->items = items;
    t->cap = cap;
    return 0;
}

/* Same object at the same file offset for the same address: symbols do not change. */
static bool same_content(const struct mapping *a, const struct mapping *b)
{
    return a->path == b->path && a->root == b->root && a->pgoff - a->start == b->pgoff - b->start;
}

int mapping_table_add(struct mapping_table *t, const struct mapping *m, bool *replaced)
{
    *replaced = false;
    if (m->end <= m->start)
        return 0;
    /* At most one existing entry is split in two, plus the new one. */
    if (reserve(t, t->n + 2) != 0)
        return -1;
    size_t out = 0;
    struct mapping right = { 0 };
    bool have_right = false;
    for (size_t i = 0; i < t->n; i++) {
        struct mapping cur = t->items[i];
        if (cur.end <= m->start || cur.start >= m->end) {
            t->items[out++] = cur;
            continue;
        }
        if (!same_content(&cur, m))
            *replaced = true;
        if (cur.end > m->end) {   /* the part after the new mapping survives */
            right = cur;
            right.pgoff += m->end - cur.start;
            right.start = m->end;
            have_right = true;
        }
        if (cur.start < m->start) {   /* the part before it survives */
            cur.end = m->start;
            t->items[out++] = cur;
        }
    }
    t->n = out;
    /* Insert the new mapping, then the right remainder, keeping the order. */
    size_t pos = 0;
    while (pos < t->n && t->items[pos].start < m->start)
        pos++;
    size_t add = have_right ? 2 : 1;
    memmove(&t->items[pos + add], &t->items[pos], (t->n - pos) * sizeof(*t->items));
    t->items[pos] = *m;
    if (have_right)
        t->items[pos + 1] = right;
    t->n += add;
    return 0;
}

const struct mapping *mapping_table_find(const struct mapping_table *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {   /* first mapping with start > addr */
        size_t mid = lo + (hi - lo) / 2;
        if (t->items[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct mapping *m = &t->items[lo - 1];
    return addr < m->end ? m : NULL;
}

void mapping_table_free(struct mapping_table *t)
{
    free(t->items);
    memset(t, 0, sizeof(*t));
}
