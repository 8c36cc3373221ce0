/* SPDX-License-Identifier: GPL-3.0-or-later */
/* unwind_objects.h: the unwinder's cache of mapped object files. Each distinct (path, inode) is opened
 * once (through the target's root prefix), its .eh_frame_hdr located once, and kept until the cache is
 * freed, so the per-sample path only looks objects up. Internal to the sampler layer. */
#ifndef TASKSPY_UNWIND_OBJECTS_H
#define TASKSPY_UNWIND_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/intern_table.h"
#include "elf/elf_file.h"
#include "sampler/target/proc_maps.h"

struct unwind_object {
    char *path;                    /* as the target names it */
    uint64_t inode;                /* from the mapping; 0 = unknown */
    bool usable;                   /* the file was opened and is an ELF64 image */
    struct elf_file elf;
    /* .eh_frame_hdr binary search table, when has_table. */
    bool has_table;
    uint64_t hdr_vaddr;            /* link-time address of .eh_frame_hdr */
    uint64_t table_offset;         /* offset of the sorted table from the start of .eh_frame_hdr */
    uint64_t fde_count;
};

struct unwind_objects {
    char *root;                    /* prefix for opening files, "" for none */
    struct intern_table index;     /* one unwind_object per (path, inode) */
};

/* Returns 0, or -1 (out of memory). */
int unwind_objects_init(struct unwind_objects *objs, const char *root);
void unwind_objects_free(struct unwind_objects *objs);

/* The object behind a file mapping, opened on first use. A file that cannot be opened (or whose inode no
 * longer matches the mapping: it was replaced) is cached as not usable, so it is not retried per sample.
 * Returns NULL for anonymous and special mappings other than [vdso], and when out of memory. */
struct unwind_object *unwind_objects_get(struct unwind_objects *objs, const struct proc_map *map);

/* Load bias (runtime address - link-time address) of the object mapped by map, from the PT_LOAD that the
 * mapping's file offset falls in. Handles segments whose vaddr differs from their file offset (LLD) and
 * PIE (bias = base) vs non-PIE (bias = 0). Returns false when no PT_LOAD matches the mapping. */
bool unwind_object_bias(const struct unwind_object *obj, const struct proc_map *map, uint64_t *bias);

/* Copy n bytes at file offset off; bytes past the end of the file read as zero (as they do in memory for
 * the tail of the last page). Returns false when off itself is outside the file. */
bool unwind_object_read(const struct unwind_object *obj, uint64_t off, void *dst, size_t n);

#endif
