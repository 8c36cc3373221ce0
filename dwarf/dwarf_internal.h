/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_internal.h: what dwarf/'s files share and nothing outside dwarf/ sees: the scope index, which answers
 * "which DIEs contain this one" from one walk of its compilation unit (libdw's dwarf_getscopes_die walks the
 * unit again from its start at every call: on a Rust binary's unit of megabytes, milliseconds each). */
#ifndef TASKSPY_DWARF_INTERNAL_H
#define TASKSPY_DWARF_INTERNAL_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/u64_map.h"
#include "base/vec.h"

/* A DIE with children: its entry and its subtree's end, as offsets from its unit's DIE (12 bytes a scope: a
 * big unit has some hundred thousand). */
struct dwarf_scope {
    uint32_t start, end;       /* end UINT32_MAX: the unit itself */
    uint32_t parent;           /* index in the unit's scopes, UINT32_MAX for the unit itself */
};

struct dwarf_unit_scopes {
    Dwarf_Off base;            /* the unit DIE's offset in .debug_info */
    VEC_OF(struct dwarf_scope) v;   /* in the unit's order (by start), the unit first; sized to fit once walked */
    bool walked;               /* v is the unit's (empty: it could not be indexed); else walked at the next question */
    uint64_t walk;             /* which walk of the index's it was (dwarf_scope_index_mark) */
};

struct dwarf_scope_index {
    struct u64_map by_unit;    /* unit DIE offset -> index in units */
    VEC_OF(struct dwarf_unit_scopes) units;
    uint64_t walks;            /* units walked so far */
};

/* The DIEs that contain die, innermost first, its compilation unit last. Returns how many, or -1 when there
 * are more than max or die's unit cannot be indexed (out of memory, nested too deep): the caller then asks
 * libdw. */
int dwarf_scopes_containing(struct dwarf_scope_index *x, Dwarf_Die *die, Dwarf_Die *out, int max);
/* dwarf_siblingof through the index: a DIE with children is skipped by a jump to where its subtree ends (libdw
 * reads the whole subtree to skip it). 0 with next set, 1 when die is its parent's last child, -1 on error. */
int dwarf_scopes_next_sibling(struct dwarf_scope_index *x, Dwarf_Die *die, Dwarf_Die *next);
void dwarf_scope_index_free(struct dwarf_scope_index *x);
/* A walk over every unit (dwarf_file.c's walk_all: the vtables, whether there are types at all) indexes them
 * all, and a long-lived reader (taskspy top) would keep an index of the whole program for one answer: it takes
 * a mark before and forgets the units indexed since, which are walked again if a later question needs them. */
uint64_t dwarf_scope_index_mark(const struct dwarf_scope_index *x);
void dwarf_scope_index_forget_since(struct dwarf_scope_index *x, uint64_t mark);

#endif
