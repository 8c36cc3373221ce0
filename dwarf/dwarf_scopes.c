/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_scopes.c: the scope index (dwarf_internal.h). A unit is walked once, on the first question about one
 * of its DIEs, recording every DIE that has children with the offset where its subtree ends; a DIE's
 * containing scopes are then a binary search and a climb. */
#include "dwarf/dwarf_internal.h"

#include <stdbool.h>
#include <stdlib.h>

#define MAX_NESTING 128

struct unit_walk {
    struct dwarf_unit_scopes *u;
    bool failed;
};

/* Record the scopes below the one at index parent (die): each child with children, its end the offset of its
   next sibling, or its parent's end when it is the last (0 here, settled after the walk). */
static void walk_children(struct unit_walk *w, Dwarf_Die *die, uint32_t parent, int depth)
{
    Dwarf_Die child;
    if (w->failed || dwarf_child(die, &child) != 0)
        return;
    if (depth > MAX_NESTING) {
        w->failed = true;
        return;
    }
    for (;;) {
        uint32_t at = UINT32_MAX;
        if (dwarf_haschildren(&child) > 0) {
            struct dwarf_scope *s = vec_push(&w->u->v);
            if (!s || w->u->v.n >= UINT32_MAX) {
                w->failed = true;
                return;
            }
            *s = (struct dwarf_scope){ .start = dwarf_dieoffset(&child), .end = 0, .parent = parent };
            at = (uint32_t)(w->u->v.n - 1);
            walk_children(w, &child, at, depth + 1);
            if (w->failed)
                return;
        }
        if (dwarf_siblingof(&child, &child) != 0)
            return;
        if (at != UINT32_MAX)
            w->u->v.v[at].end = dwarf_dieoffset(&child);
    }
}

static bool index_unit(struct dwarf_unit_scopes *u, Dwarf_Die *unit)
{
    struct dwarf_scope *root = vec_push(&u->v);
    if (!root)
        return false;
    *root = (struct dwarf_scope){ .start = dwarf_dieoffset(unit), .end = UINT64_MAX, .parent = UINT32_MAX };
    struct unit_walk w = { u, false };
    walk_children(&w, unit, 0, 0);
    if (w.failed) {
        vec_free(&u->v);
        return false;
    }
    for (size_t i = 1; i < u->v.n; i++)        /* parents come first: their ends are settled by now */
        if (u->v.v[i].end == 0)
            u->v.v[i].end = u->v.v[u->v.v[i].parent].end;
    return true;
}

/* the unit's scopes, indexed on the first question (NULL: cannot be) */
static struct dwarf_unit_scopes *unit_of(struct dwarf_scope_index *x, Dwarf_Die *die, Dwarf_Die *unit)
{
    if (!dwarf_diecu(die, unit, NULL, NULL))
        return NULL;
    if (!x->by_unit.keys && u64_map_init(&x->by_unit, 64) != 0)
        return NULL;
    uint32_t index;
    int rc = u64_map_index(&x->by_unit, dwarf_dieoffset(unit), &x->units, &index);
    if (rc < 0)
        return NULL;
    if (rc == 1)
        index_unit(&x->units.v[index], unit);  /* (a failed unit stays empty: asked of libdw from then on) */
    return x->units.v[index].v.n ? &x->units.v[index] : NULL;
}

int dwarf_scopes_containing(struct dwarf_scope_index *x, Dwarf_Die *die, Dwarf_Die *out, int max)
{
    Dwarf_Die unit;
    struct dwarf_unit_scopes *u = unit_of(x, die, &unit);
    if (!u)
        return -1;
    Dwarf_Off off = dwarf_dieoffset(die);
    /* the last scope that starts before die, then out through its parents to the first whose subtree holds it */
    size_t lo = 0, hi = u->v.n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->v.v[mid].start < off)
            lo = mid;
        else
            hi = mid;
    }
    uint32_t at = (uint32_t)lo;
    while (at != UINT32_MAX && off >= u->v.v[at].end)
        at = u->v.v[at].parent;
    int n = 0;
    for (; at != UINT32_MAX; at = u->v.v[at].parent) {
        if (n == max)
            return -1;
        Dwarf *dw = dwarf_cu_getdwarf(unit.cu);
        if (!dw || !dwarf_offdie(dw, u->v.v[at].start, &out[n]))
            return -1;
        n++;
    }
    return n;
}

void dwarf_scope_index_free(struct dwarf_scope_index *x)
{
    for (size_t i = 0; i < x->units.n; i++)
        vec_free(&x->units.v[i].v);
    vec_free(&x->units);
    u64_map_free(&x->by_unit);
}
