/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_scopes.c: the scope index (dwarf_internal.h). A unit is walked once, on the first question about one
 * of its DIEs, recording every DIE that has children with the offset where its subtree ends; a DIE's
 * containing scopes are then a binary search and a climb, and a subtree is skipped by a jump to its end. */
#include "dwarf/dwarf_internal.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>

#define MAX_NESTING 128

struct unit_walk {
    struct dwarf_unit_scopes *u;
    Dwarf *dw;
    const uint8_t *unit_bytes;         /* the unit DIE's entry, at unit_offset */
    Dwarf_Off unit_offset, unit_end;   /* the unit's DIEs lie in [unit_offset, unit_end) */
    uint8_t address_size, offset_size;
};

/* the byte at off in the unit (off inside it) */
static const uint8_t *byte_at(const struct unit_walk *w, Dwarf_Off off)
{
    return w->unit_bytes + (off - w->unit_offset);
}

/* the length of a LEB128 number at p, 0 when it runs past end */
static size_t leb_len(const uint8_t *p, const uint8_t *end)
{
    for (size_t n = 0; p + n < end; n++)
        if (!(p[n] & 0x80))
            return n + 1;
    return 0;
}

static uint64_t uleb(const uint8_t *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len && i < 10; i++)
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    return v;
}

/* the size of an attribute's value of form at p, SIZE_MAX when unknown or past end */
static size_t form_size(const struct unit_walk *w, unsigned form, const uint8_t *p, const uint8_t *end)
{
    size_t n;
    switch (form) {
    case DW_FORM_flag_present: case DW_FORM_implicit_const:
        return 0;
    case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
        return 1;
    case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
        return 2;
    case DW_FORM_strx3: case DW_FORM_addrx3:
        return 3;
    case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_ref_sup4: case DW_FORM_strx4: case DW_FORM_addrx4:
        return 4;
    case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
        return 8;
    case DW_FORM_data16:
        return 16;
    case DW_FORM_addr:
        return w->address_size;
    case DW_FORM_strp: case DW_FORM_sec_offset: case DW_FORM_line_strp: case DW_FORM_ref_addr:
    case DW_FORM_strp_sup: case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
        return w->offset_size;
    case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
    case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
        return (n = leb_len(p, end)) ? n : SIZE_MAX;
    case DW_FORM_string:
        n = (size_t)(end - p);
        for (size_t i = 0; i < n; i++)
            if (p[i] == '\0')
                return i + 1;
        return SIZE_MAX;
    case DW_FORM_block1:
        return p < end ? 1 + (size_t)p[0] : SIZE_MAX;
    case DW_FORM_block2:
        return end - p >= 2 ? 2 + (size_t)(p[0] | p[1] << 8) : SIZE_MAX;
    case DW_FORM_block4:
        return end - p >= 4 ? 4 + (size_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                                           (uint32_t)p[3] << 24)
                            : SIZE_MAX;
    case DW_FORM_block: case DW_FORM_exprloc:
        n = leb_len(p, end);
        return n ? n + uleb(p, n) : SIZE_MAX;
    default:
        return SIZE_MAX;                /* DW_FORM_indirect and forms unknown here */
    }
}

struct last_attribute {
    const uint8_t *valp;
    unsigned form;
};

static int note_attribute(Dwarf_Attribute *attr, void *arg)
{
    struct last_attribute *last = arg;
    unsigned form = dwarf_whatform(attr);
    if (form != DW_FORM_implicit_const) {     /* (its value is in the abbreviation, not the entry) */
        last->valp = attr->valp;
        last->form = form;
    }
    return DWARF_CB_OK;
}

/* where die's own entry (its code and attributes, not its children) ends; 0 when it cannot be told */
static Dwarf_Off entry_end(const struct unit_walk *w, Dwarf_Die *die)
{
    Dwarf_Off off = dwarf_dieoffset(die);
    const uint8_t *start = byte_at(w, off), *end = byte_at(w, w->unit_end);
    struct last_attribute last = { NULL, 0 };
    if (dwarf_getattrs(die, note_attribute, &last, 0) != 1)
        return 0;
    const uint8_t *at;
    if (last.valp) {
        if ((const uint8_t *)last.valp < start || (const uint8_t *)last.valp > end)
            return 0;
        size_t n = form_size(w, last.form, last.valp, end);
        if (n == SIZE_MAX || n > (size_t)(end - (const uint8_t *)last.valp))
            return 0;
        at = (const uint8_t *)last.valp + n;
    } else {
        size_t n = leb_len(start, end);        /* no attribute: the abbreviation code alone */
        if (n == 0)
            return 0;
        at = start + n;
    }
    return off + (Dwarf_Off)(at - start);
}

/* Record the scopes below the one at index parent (die), in the unit's order; returns where die's subtree ends
   (the offset after the null entry that closes its children), 0 when the walk failed. A DIE's next sibling is
   where the entry before it (a childless one) or its subtree (one with children) ends: each entry is read
   once (libdw's dwarf_siblingof reads a subtree again to skip it, for each scope it lies in). */
static Dwarf_Off walk_children(struct unit_walk *w, Dwarf_Die *die, uint32_t parent, int depth)
{
    Dwarf_Die child;
    int rc = dwarf_child(die, &child);
    if (rc < 0 || depth > MAX_NESTING)
        return 0;
    if (rc > 0) {                             /* has_children, but the first child is the null entry */
        Dwarf_Off own = entry_end(w, die);
        return own && own < w->unit_end && *byte_at(w, own) == 0 ? own + 1 : 0;
    }
    for (;;) {
        Dwarf_Off next;
        if (dwarf_haschildren(&child) > 0) {
            struct dwarf_scope *s = vec_push(&w->u->v);
            if (!s || w->u->v.n >= UINT32_MAX)
                return 0;
            *s = (struct dwarf_scope){ .start = (uint32_t)(dwarf_dieoffset(&child) - w->unit_offset), .end = 0,
                                       .parent = parent };
            uint32_t at = (uint32_t)(w->u->v.n - 1);
            next = walk_children(w, &child, at, depth + 1);
            w->u->v.v[at].end = (uint32_t)(next - w->unit_offset);
        } else {
            next = entry_end(w, &child);
        }
        if (next == 0 || next >= w->unit_end)
            return 0;
        if (*byte_at(w, next) == 0)
            return next + 1;                  /* the null entry: die's children end here */
        if (!dwarf_offdie(w->dw, next, &child) || dwarf_tag(&child) <= 0)
            return 0;
    }
}

static bool index_unit(struct dwarf_unit_scopes *u, Dwarf_Die *unit)
{
    struct unit_walk w = { .u = u, .dw = dwarf_cu_getdwarf(unit->cu), .unit_bytes = unit->addr,
                           .unit_offset = dwarf_dieoffset(unit) };
    Dwarf_Die cu;
    Dwarf_Off header_at = w.unit_offset - dwarf_cuoffset(unit), next_unit;
    size_t header_size;
    if (!w.dw || !dwarf_diecu(unit, &cu, &w.address_size, &w.offset_size) ||
        dwarf_next_unit(w.dw, header_at, &next_unit, &header_size, NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
        next_unit <= w.unit_offset || next_unit - w.unit_offset >= UINT32_MAX)
        return false;                         /* (a unit of 4 GiB: asked of libdw) */
    w.unit_end = next_unit;
    struct dwarf_scope *root = vec_push(&u->v);
    if (!root)
        return false;
    u->base = w.unit_offset;
    *root = (struct dwarf_scope){ .start = 0, .end = UINT32_MAX, .parent = UINT32_MAX };
    if (dwarf_haschildren(unit) > 0 && walk_children(&w, unit, 0, 0) == 0) {
        vec_free(&u->v);
        return false;
    }
    vec_shrink(&u->v);                        /* kept as long as the index: its doubling's slack given back */
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
    if (!x->units.v[index].walked) {          /* (new, or forgotten) */
        x->units.v[index].walked = true;
        x->units.v[index].walk = x->walks++;
        index_unit(&x->units.v[index], unit);  /* (a failed unit stays empty: asked of libdw from then on) */
    }
    return x->units.v[index].v.n ? &x->units.v[index] : NULL;
}

int dwarf_scopes_containing(struct dwarf_scope_index *x, Dwarf_Die *die, Dwarf_Die *out, int max)
{
    Dwarf_Die unit;
    struct dwarf_unit_scopes *u = unit_of(x, die, &unit);
    if (!u)
        return -1;
    Dwarf_Off off = dwarf_dieoffset(die) - u->base;    /* (die is in the unit: at or after its DIE) */
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
    while (at != UINT32_MAX && u->v.v[at].end != UINT32_MAX && off >= u->v.v[at].end)
        at = u->v.v[at].parent;
    int n = 0;
    for (; at != UINT32_MAX; at = u->v.v[at].parent) {
        if (n == max)
            return -1;
        Dwarf *dw = dwarf_cu_getdwarf(unit.cu);
        if (!dw || !dwarf_offdie(dw, u->base + u->v.v[at].start, &out[n]))
            return -1;
        n++;
    }
    return n;
}

int dwarf_scopes_next_sibling(struct dwarf_scope_index *x, Dwarf_Die *die, Dwarf_Die *next)
{
    Dwarf_Die unit;
    struct dwarf_unit_scopes *u = dwarf_haschildren(die) > 0 ? unit_of(x, die, &unit) : NULL;
    if (!u)
        return dwarf_siblingof(die, next);    /* a childless DIE: its own entry is all libdw reads */
    Dwarf_Off off = dwarf_dieoffset(die) - u->base;
    size_t lo = 0, hi = u->v.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->v.v[mid].start < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == u->v.n || u->v.v[lo].start != off || u->v.v[lo].end == UINT32_MAX)
        return dwarf_siblingof(die, next);
    Dwarf_Off end = u->v.v[lo].end;           /* inside the unit: the walk checked every end it recorded */
    if (*((const uint8_t *)die->addr + (end - off)) == 0)
        return 1;                             /* the null entry that closes the parent's children */
    Dwarf *dw = dwarf_cu_getdwarf(die->cu);
    return dw && dwarf_offdie(dw, u->base + end, next) ? 0 : -1;
}

uint64_t dwarf_scope_index_mark(const struct dwarf_scope_index *x)
{
    return x->walks;
}

void dwarf_scope_index_forget_since(struct dwarf_scope_index *x, uint64_t mark)
{
    for (size_t i = 0; i < x->units.n; i++) {
        if (x->units.v[i].walked && x->units.v[i].walk >= mark) {
            vec_free(&x->units.v[i].v);
            x->units.v[i].walked = false;
        }
    }
}

void dwarf_scope_index_free(struct dwarf_scope_index *x)
{
    for (size_t i = 0; i < x->units.n; i++)
        vec_free(&x->units.v[i].v);
    vec_free(&x->units);
    u64_map_free(&x->by_unit);
}
