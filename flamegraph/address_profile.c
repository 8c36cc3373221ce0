/* SPDX-License-Identifier: GPL-3.0-or-later */
/* address_profile.c: a recording's stacks as instruction addresses for the pprof export: mappings,
 * locations (each with its inline chain of lines), functions (one per name and file) and the distinct
 * stacks of location ids with their labels and counts. A stack is found by its content through the one
 * interner's index (base/intern_table) and stored once in an arena, so a repeated stack costs a hash and a
 * compare, and memory grows with distinct stacks. Strings are interned in a profile used as a string table. */
#include "flamegraph/address_profile_internal.h"

#include <stdlib.h>
#include <string.h>

struct address_profile *address_profile_new(void)
{
    struct address_profile *a = calloc(1, sizeof(*a));
    if (!a || !(a->strings = profile_new()) || profile_intern(a->strings, "", 0) != 0 ||
        u64_map_init(&a->mapping_of, 64) != 0 || u64_map_init(&a->function_of, 1024) != 0) {
        address_profile_free(a);
        return NULL;
    }
    return a;
}

void address_profile_free(struct address_profile *a)
{
    if (!a)
        return;
    profile_free(a->strings);
    u64_map_free(&a->mapping_of);
    u64_map_free(&a->function_of);
    vec_free(&a->mappings);
    vec_free(&a->functions);
    vec_free(&a->locations);
    vec_free(&a->lines);
    vec_free(&a->stacks);
    intern_table_free(&a->stack_index);
    vec_free(&a->parts);
    intern_table_free(&a->part_index);
    arena_free(&a->storage);
    free(a);
}

/* The string's id (0 for NULL or ""), UINT32_MAX when out of memory. */
static uint32_t string_id(struct address_profile *a, const char *s)
{
    if (!s || !*s)
        return 0;
    uint32_t id = profile_intern(a->strings, s, strlen(s));
    return id == PROFILE_NO_FRAME ? UINT32_MAX : id;
}

uint32_t address_profile_mapping(struct address_profile *a, uint64_t key, const struct address_mapping *m)
{
    uint32_t index;
    if (u64_map_get(&a->mapping_of, key, &index))
        return index + 1;
    uint32_t file = string_id(a, m->file), build_id = string_id(a, m->build_id);
    if (file == UINT32_MAX || build_id == UINT32_MAX)
        return 0;
    struct address_mapping_entry *e = vec_push(&a->mappings);
    if (!e)
        return 0;
    *e = (struct address_mapping_entry){ .start = m->start, .limit = m->limit, .offset = m->offset,
                                         .file = file, .build_id = build_id };
    if (u64_map_put(&a->mapping_of, key, (uint32_t)(a->mappings.n - 1)) != 0) {
        a->mappings.n--;
        return 0;
    }
    return (uint32_t)a->mappings.n;
}

/* The index of the function named name in file, added when new; UINT32_MAX when out of memory. */
static uint32_t function_index(struct address_profile *a, const struct address_line *l)
{
    uint32_t name = string_id(a, l->function), file = string_id(a, l->file);
    if (name == UINT32_MAX || file == UINT32_MAX)
        return UINT32_MAX;
    uint64_t key = (uint64_t)name << 32 | file;
    uint32_t index;
    if (u64_map_get(&a->function_of, key, &index))
        return index;
    uint32_t system_name = l->system_name ? string_id(a, l->system_name) : name;
    struct address_function *f = system_name == UINT32_MAX ? NULL : vec_push(&a->functions);
    if (!f)
        return UINT32_MAX;
    *f = (struct address_function){ .name = name, .system_name = system_name, .file = file,
                                    .start_line = l->start_line };
    if (u64_map_put(&a->function_of, key, (uint32_t)(a->functions.n - 1)) != 0) {
        a->functions.n--;
        return UINT32_MAX;
    }
    return (uint32_t)(a->functions.n - 1);
}

uint32_t address_profile_location(struct address_profile *a, uint64_t address, uint32_t mapping,
                                  const struct address_line *lines, size_t n)
{
    if (a->locations.n >= UINT32_MAX - 1 || vec_reserve(&a->lines, a->lines.n + n) != 0)
        return 0;
    struct address_location *l = vec_push(&a->locations);
    if (!l)
        return 0;
    *l = (struct address_location){ .address = address, .mapping = mapping, .first_line = (uint32_t)a->lines.n };
    for (size_t i = 0; i < n; i++) {
        uint32_t function = function_index(a, &lines[i]);
        if (function == UINT32_MAX) {
            a->locations.n--;
            return 0;
        }
        a->lines.v[a->lines.n++] = (struct address_line_entry){ .function = function, .line = lines[i].line };
        l->n_lines++;
    }
    return (uint32_t)a->locations.n;
}

static uint64_t hash_stack(const uint32_t *locations, size_t n, const struct address_labels *labels)
{
    uint64_t h = intern_hash_u64(INTERN_HASH_SEED, (uint64_t)labels->thread << 32 | labels->root);
    h = intern_hash_u64(h, labels->has_task_id ? labels->task_id : UINT64_MAX);
    return intern_hash_bytes(h, locations, n * sizeof(*locations));
}

struct stack_key {
    const uint32_t *locations;
    size_t n;
    const struct address_labels *labels;
};

static bool same_stack(const void *item, const void *key)
{
    const struct address_stack *s = item;
    const struct stack_key *k = key;
    return s->n == k->n && s->thread == k->labels->thread && s->root == k->labels->root &&
           s->has_task_id == k->labels->has_task_id && (!s->has_task_id || s->task_id == k->labels->task_id) &&
           memcmp(s->locations, k->locations, k->n * sizeof(*k->locations)) == 0;
}

/* The stack of locations and labels found in index (made in list when new), or NULL when out of memory. */
static struct address_stack *stack_of(struct address_profile *a, struct intern_table *index,
                                      struct address_stack_list *stacks, const uint32_t *locations, size_t n,
                                      const struct address_labels *labels)
{
    uint64_t hash = hash_stack(locations, n, labels);
    struct stack_key key = { locations, n, labels };
    struct address_stack *s = (struct address_stack *)intern_table_find(index, hash, same_stack, &key);
    if (s)
        return s;
    if (stacks->n >= UINT32_MAX - 1 || vec_reserve(stacks, stacks->n + 1) != 0 ||
        !(s = arena_alloc(&a->storage, sizeof(*s) + n * sizeof(*locations))))
        return NULL;
    *s = (struct address_stack){ .task_id = labels->has_task_id ? labels->task_id : 0, .thread = labels->thread,
                                 .root = labels->root, .n = (uint32_t)n, .has_task_id = labels->has_task_id };
    memcpy(s->locations, locations, n * sizeof(*locations));
    if (intern_table_add(index, hash, s) != 0)
        return NULL;
    stacks->v[stacks->n++] = s;
    return s;
}

/* Add count samples and wait_ns of wall time waited to a stack. */
static int add_values(struct address_profile *a, const uint32_t *locations, size_t n,
                      const struct address_labels *labels, uint64_t count, uint64_t wait_ns)
{
    struct address_stack *s = stack_of(a, &a->stack_index, &a->stacks, locations, n, labels);
    if (!s)
        return -1;
    s->count += count;
    s->wait_ns += wait_ns;
    return 0;
}

int address_profile_add_wait(struct address_profile *a, const uint32_t *locations, size_t n,
                             const struct address_labels *labels, uint64_t wait_ns)
{
    return add_values(a, locations, n, labels, 0, wait_ns);
}

uint32_t address_profile_part(struct address_profile *a, const uint32_t *locations, size_t n)
{
    static const struct address_labels none = { .thread = PROFILE_NO_FRAME, .root = PROFILE_NO_FRAME };
    struct address_stack *s = stack_of(a, &a->part_index, &a->parts, locations, n, &none);
    if (!s)
        return UINT32_MAX;
    if (s->count == 0)
        s->count = a->parts.n;           /* a part's count is its id + 1 */
    return (uint32_t)(s->count - 1);
}

const uint32_t *address_profile_part_locations(const struct address_profile *a, uint32_t part, size_t *n)
{
    *n = part < a->parts.n ? a->parts.v[part]->n : 0;
    return part < a->parts.n ? a->parts.v[part]->locations : NULL;
}

int address_profile_add(struct address_profile *a, const uint32_t *locations, size_t n,
                        const struct address_labels *labels, uint64_t count)
{
    return add_values(a, locations, n, labels, count, 0);
}

int address_profile_finish(struct address_profile *a, struct task_stacks *t)
{
    for (size_t i = 0; i < a->stacks.n; i++) {
        struct address_stack *s = a->stacks.v[i];
        if (s->root != PROFILE_NO_FRAME)
            continue;
        if ((s->root = task_stacks_task_root(t, s->task_id)) == PROFILE_NO_FRAME)
            return -1;
        s->has_task_id = false;     /* settled: the labels come from the root, as everywhere else */
    }
    return 0;
}

size_t address_profile_stacks(const struct address_profile *a)
{
    return a->stacks.n;
}
