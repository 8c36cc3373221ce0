/* SPDX-License-Identifier: GPL-3.0-or-later */
/* address_profile_internal.h: the address profile's tables, shared by address_profile.c (which fills them)
 * and export_pprof_addresses.c (which writes them). Internal to flamegraph/. */
#ifndef TASKSPY_ADDRESS_PROFILE_INTERNAL_H
#define TASKSPY_ADDRESS_PROFILE_INTERNAL_H

#include "flamegraph/flamegraph.h"

#include "base/arena.h"
#include "base/intern_table.h"
#include "base/u64_map.h"
#include "base/vec.h"

struct address_mapping_entry {
    uint64_t start, limit, offset;
    uint32_t file, build_id;               /* string ids (0: none) */
};
struct address_function {
    uint32_t name, system_name, file;      /* string ids */
    unsigned start_line;
};
struct address_line_entry {
    uint32_t function;                     /* index into functions */
    unsigned line;
};
struct address_location {
    uint64_t address;
    uint32_t mapping;                      /* mapping id (index + 1), 0: none */
    uint32_t first_line, n_lines;          /* into lines, innermost first */
};
struct address_stack {
    uint64_t count;
    uint64_t wait_ns;                      /* wall time waited (wait stacks; CPU stacks have 0) */
    uint64_t task_id;
    uint32_t thread, root;                 /* frame ids in the profile of names */
    uint32_t n;
    bool has_task_id;
    uint32_t locations[];                  /* location ids, leaf first */
};

struct address_stack_list {
    struct address_stack **v;
    size_t n, cap;
};

struct address_profile {
    struct profile *strings;               /* string table: "" is id 0 */
    struct u64_map mapping_of;             /* caller's key -> mapping index */
    struct u64_map function_of;            /* name << 32 | file -> function index */
    VEC_OF(struct address_mapping_entry) mappings;
    VEC_OF(struct address_function) functions;
    VEC_OF(struct address_location) locations;
    VEC_OF(struct address_line_entry) lines;
    struct address_stack_list stacks;      /* in order of first sight */
    struct intern_table stack_index;
    struct address_stack_list parts;       /* address_profile_part's, by id (count: id + 1) */
    struct intern_table part_index;
    struct arena storage;                  /* the stacks */
};

#endif
