/* SPDX-License-Identifier: GPL-3.0-or-later */
/* symbolize_internal.h: the pieces the symbolize layer is built from, shared between its files only:
 * the address cache, the result pool, the mapping table, one libbfd object (with elf/ for its program
 * headers and debug file), and the kernel symbol table. Nothing outside symbolize/ includes this. */
#ifndef TASKSPY_SYMBOLIZE_INTERNAL_H
#define TASKSPY_SYMBOLIZE_INTERNAL_H

#include "base/arena.h"
#include "base/intern_table.h"
#include "base/string_pool.h"
#include "base/u64_map.h"
#include "base/vec.h"
#include "elf/elf_file.h"
#include "symbolize/symbolize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- addr_cache.c: address (and kind) -> resolved result, valid for one mapping generation ----------- */
enum addr_kind { ADDR_USER = 0, ADDR_USER_RETURN = 1, ADDR_KERNEL = 2 };
struct addr_cache_entry {
    const struct sym_result *result;
    uint32_t generation;                 /* of the mapping it was resolved in (0 for kernel addresses) */
};
struct addr_cache {
    struct u64_map user;                 /* address | return-address bit -> entries[] */
    struct u64_map kernel;               /* address -> entries[] */
    VEC_OF(struct addr_cache_entry) entries;
};
/* The result cached for addr, if it was resolved in the mapping generation given (a mapping replaced
 * since has another generation: the entry is stale and misses). */
const struct sym_result *addr_cache_get(const struct addr_cache *c, uint64_t addr, enum addr_kind kind,
                                        uint32_t generation);
/* Cache (or replace) addr's result. Returns 0 or -1 on allocation failure. */
int addr_cache_put(struct addr_cache *c, uint64_t addr, enum addr_kind kind, uint32_t generation,
                   const struct sym_result *r);
void addr_cache_free(struct addr_cache *c);

/* ---- result_pool.c: one copy of each distinct sym_result (same frames, object, start) --------------- */
struct result_pool {
    struct arena storage;                /* the results and their frames */
    struct intern_table index;
    uint32_t n_results;                  /* the next result's id */
};
/* Returns the pooled copy of r (frames copied too, id set), or NULL on allocation failure. */
const struct sym_result *result_pool_intern(struct result_pool *p, const struct sym_result *r);
void result_pool_free(struct result_pool *p);

/* ---- dwarf_lines.c: one compilation unit's line table, as libbfd reads it --------------------------- */
struct line_range {
    uint64_t low, high;          /* [low, high) */
};
typedef VEC_OF(struct line_range) line_range_vec;
/* One row kept: in its sequence, the line from address up to the next row's. */
struct line_row {
    uint64_t address;
    uint32_t file;               /* 0: none; UINT32_MAX: "<unknown>"; else the file's index + 1 */
    uint32_t line;
};
/* What decoding a unit's line table needs: the sections' bytes and the unit's. */
struct line_unit_info {
    const uint8_t *line;         /* .debug_line */
    size_t line_size;
    const uint8_t *line_str;     /* .debug_line_str (DWARF 5), or NULL */
    size_t line_str_size;
    uint64_t offset;             /* the unit's DW_AT_stmt_list */
    const char *comp_dir;        /* its DW_AT_comp_dir, or NULL */
    uint8_t addr_size, offset_size;
};
struct line_table;
/* NULL when the table is malformed or memory runs out (libbfd: the unit is unusable). */
struct line_table *line_table_decode(const struct line_unit_info *u);
void line_table_free(struct line_table *t);
/* The file and line of addr (file: the path as libbfd builds it, NULL if the row has none); false when no row
 * holds it (then *file is NULL and *line 0). Strings stay owned by the table. */
bool line_table_lookup(struct line_table *t, uint64_t addr, const char **file, unsigned *line);
/* The path of file number `number` (DW_AT_decl_file, DW_AT_call_file), "<unknown>" for a bad one; NULL when
 * memory runs out. */
const char *line_table_file(struct line_table *t, uint64_t number);
const char *line_table_unknown(struct line_table *t);
/* Whether one of its sequences spans addr (libbfd counts them as the unit's ranges), or any at all. */
bool line_table_covers(const struct line_table *t, uint64_t addr);
bool line_table_covers_any(const struct line_table *t);
/* Its bytes in .debug_line (0 for NULL). */
size_t line_table_bytes(const struct line_table *t);

/* ---- dwarf_lookup.c: an object's DWARF for addresses (libdw), libbfd's answers with the least work ------ */
struct dwarf_lookup;
/* A function (or inlined call) of the DWARF: its unit, the tree of the out-of-line function it is in (or is),
 * its number there. */
struct dwarf_func_ref {
    uint32_t unit, tree, index;
};
/* What bfd_find_nearest_line's DWARF part finds at an address. */
struct dwarf_nearest {
    const char *file;            /* the line table's, NULL */
    unsigned line;               /* 0: none */
    struct dwarf_func_ref func;  /* the function with the smallest range holding it (dwarf_func_valid) */
    bool inlined;                /* that function is an inlined call: its callers follow (dwarf_func_caller) */
};
/* Opens path's DWARF; NULL when it has none this reader takes (none at all, a relocatable object, DWARF in
 * another file (dwz), DWARF 4 type units): libbfd reads those. */
struct dwarf_lookup *dwarf_lookup_open(const char *path);
void dwarf_lookup_close(struct dwarf_lookup *l);
/* The line and function at link-time address addr; false when DWARF knows neither. */
bool dwarf_lookup_nearest(struct dwarf_lookup *l, uint64_t addr, struct dwarf_nearest *out);
bool dwarf_func_valid(struct dwarf_func_ref f);
/* How many of the functions the one chosen at addr is inlined into have a range holding addr as short as its:
 * among those libbfd takes the one it allocated at the highest address, which is the innermost unless its heap
 * put an outer one higher (the tests' parity check allows that much). */
unsigned dwarf_lookup_ties(struct dwarf_lookup *l, uint64_t addr);
/* Its name (the linkage name when it has one, NULL if none) and whether it is a linkage name. */
const char *dwarf_func_name(struct dwarf_lookup *l, struct dwarf_func_ref f, bool *is_linkage);
/* libbfd renames a function whose DWARF name is not a linkage name after the symbol that starts where it does,
 * and stops looking symbols up for it: so does this. */
void dwarf_func_rename(struct dwarf_lookup *l, struct dwarf_func_ref f, const char *name);
void dwarf_func_mark_linkage(struct dwarf_lookup *l, struct dwarf_func_ref f);
/* The start of its first range (libbfd's arange.low), 0 if it has none. */
uint64_t dwarf_func_low(struct dwarf_lookup *l, struct dwarf_func_ref f);
/* An inlined call's caller: *f becomes it; file and line of the call, the caller's name. False at the end. */
bool dwarf_func_caller(struct dwarf_lookup *l, struct dwarf_func_ref *f, const char **file, const char **name,
                       unsigned *line);
/* The declaration line of the function symbol (raw name, link-time address; function: a BSF_FUNCTION one)
 * as bfd_find_line gives it; false when DWARF does not say. */
bool dwarf_lookup_decl_line(struct dwarf_lookup *l, const char *symbol, uint64_t addr, bool function,
                            unsigned *line);

/* ---- bfd_object.c: one mapped object opened with libbfd --------------------------------------------- */
struct bfd_object;
/* One frame as libbfd gives it, before demangling and interning. */
struct raw_frame {
    const char *name;   /* may be mangled; NULL if unknown */
    const char *file;   /* full path as in DWARF; NULL if unknown */
    unsigned line;
};
#define RAW_FRAMES_MAX 64
struct raw_lookup {
    struct raw_frame frames[RAW_FRAMES_MAX];   /* innermost first; the last is the out-of-line function */
    size_t n;
    uint64_t function_vaddr;                   /* link-time start of the containing symbol, or 0 */
    unsigned function_line;                    /* that function's declaration line, 0 if unknown */
    bool have_function;
};
/* Opens root+path (root may be NULL or ""); returns NULL if it cannot be read as an object. Its separate debug
 * file, where it needs one, comes from the one lookup (debug_files: the shared results, or NULL), which may
 * wait for a download. */
struct bfd_object *bfd_object_open(const char *root, const char *path, struct debug_files *debug_files);
/* Who reads the DWARF: dwarf_lookup.c (where it takes the object), or libbfd alone (the reference). */
enum dwarf_reader { DWARF_OWN_READER, DWARF_LIBBFD_READER };
struct bfd_object *bfd_object_open_as(const char *root, const char *path, struct debug_files *debug_files,
                                      enum dwarf_reader reader);
/* Its DWARF as dwarf_lookup.c reads it, NULL when libbfd reads it. */
struct dwarf_lookup *bfd_object_dwarf(const struct bfd_object *o);
void bfd_object_close(struct bfd_object *o);
/* File offset inside the object -> link-time address; false if no PT_LOAD holds it. */
bool bfd_object_offset_to_vaddr(const struct bfd_object *o, uint64_t offset, uint64_t *vaddr);
/* Function, file:line and inline chain at link-time address vaddr. Names stay owned by the object. */
void bfd_object_lookup(struct bfd_object *o, uint64_t vaddr, struct raw_lookup *out);
/* The object's GNU build id (from elf/): its length (0 if none), *id at its bytes. */
size_t bfd_object_build_id(const struct bfd_object *o, const uint8_t **id);
/* Whether it has symbols beyond its exported ones (a symbol table or DWARF, its own or its debug file's), and
 * whether it has exported (dynamic) ones. */
bool bfd_object_has_symbols(const struct bfd_object *o);
bool bfd_object_has_dynamic_symbols(const struct bfd_object *o);
/* What the debug-file lookup found and tried for it (not looked up: it had its own symbols and DWARF). */
const struct debug_file_result *bfd_object_debug_file(const struct bfd_object *o);

/* ---- mapping_table.c: [start,end) -> object path, kept sorted and non-overlapping ------------------ */
struct mapping {
    uint64_t start, end, pgoff;
    const char *path;            /* interned */
    const char *root;            /* interned, "" if none */
    const char *object_name;     /* interned base name, or NULL for anonymous mappings */
    uint64_t file_dev, file_ino; /* the file at root + path when the mapping was added (0, 0: not known) */
    uint32_t generation;         /* set by mapping_table_add: the same for the same contents at the same
                                    place (a mapping reported again), new when a mapping replaces another
                                    (another file, or the same path rewritten: another inode) */
};
struct mapping_table {
    VEC_OF(struct mapping) items;
    uint32_t last_generation;
};
/* Inserts m (its generation is set here), trimming or removing what it overlaps. Returns 0 or -1 on
 * allocation failure. */
int mapping_table_add(struct mapping_table *t, const struct mapping *m);
const struct mapping *mapping_table_find(const struct mapping_table *t, uint64_t addr);
void mapping_table_free(struct mapping_table *t);

/* ---- kallsyms.c: kernel text symbols, sorted ------------------------------------------------------ */
struct kallsyms_entry {
    uint64_t addr;
    const char *name;     /* interned */
    const char *module;   /* interned module name, or NULL for the kernel image */
};
struct kallsyms {
    VEC_OF(struct kallsyms_entry) entries;
    bool loaded;          /* tried to read (successfully or not) */
    bool restricted;      /* every address was zero (kptr_restrict) */
};
/* Reads path (normally /proc/kallsyms). Returns 0, or -1 if unreadable. Names go into pool. */
int kallsyms_load(struct kallsyms *k, const char *path, struct string_pool *pool);
/* The symbol at or below addr, or NULL. */
const struct kallsyms_entry *kallsyms_find(const struct kallsyms *k, uint64_t addr);
void kallsyms_free(struct kallsyms *k);

/* ---- demangle.c --------------------------------------------------------------------------------- */
/* A display name for a symbol: version suffix ("@@GLIBC_2.2.5") removed, demangled when demangle is
 * set, Rust hash removed. Returns a malloc'd string, or NULL on allocation failure. */
char *symbolize_display_name(const char *raw, bool demangle);

/* ---- DWARF's little-endian and LEB128 numbers in a section (dwarf_lines.c, dwarf_lookup.c): every read is
 * bounds-checked; a read past end moves *p to end and gives 0, as libbfd's safe reads do. */
static inline uint64_t dwarf_bytes_fixed(const uint8_t **p, const uint8_t *end, size_t n)
{
    uint64_t v = 0;
    if ((size_t)(end - *p) < n) {
        *p = end;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)(*p)[i] << (8 * i);
    *p += n;
    return v;
}

static inline uint64_t dwarf_bytes_uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (*p < end) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    return v;
}

#endif
