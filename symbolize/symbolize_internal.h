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

#endif
