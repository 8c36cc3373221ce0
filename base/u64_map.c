/* SPDX-License-Identifier: GPL-3.0-or-later */
/* u64_map.c: linear-probing hash map u64 -> u32, grown at half load (its keys moved to the bigger table a few
 * at each later insert), and its find-or-append into an array. */
#include "base/u64_map.h"

#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t key, size_t mask)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & mask;
}

int u64_map_init(struct u64_map *m, size_t initial_capacity)
{
    size_t cap = 16;
    while (cap < initial_capacity * 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof(*m->keys));
    m->values = calloc(cap, sizeof(*m->values));
    m->mask = cap - 1;
    m->count = 0;
    m->old_keys = NULL;
    m->old_values = NULL;
    m->old_mask = 0;
    m->moved = 0;
    if (!m->keys || !m->values) {
        u64_map_free(m);
        return -1;
    }
    return 0;
}

static void free_old(struct u64_map *m)
{
    free(m->old_keys);
    free(m->old_values);
    m->old_keys = NULL;
    m->old_values = NULL;
    m->old_mask = 0;
    m->moved = 0;
}

void u64_map_free(struct u64_map *m)
{
    free(m->keys);
    free(m->values);
    m->keys = NULL;
    m->values = NULL;
    m->mask = 0;
    m->count = 0;
    free_old(m);
}

void u64_map_clear(struct u64_map *m)
{
    free_old(m);
    if (m->values)
        memset(m->values, 0, (m->mask + 1) * sizeof(*m->values));
    m->count = 0;
}

/* the slot of key in a table, or of the empty slot where it would go */
static size_t find(const uint64_t *keys, const uint32_t *values, size_t mask, uint64_t key)
{
    size_t i = slot_of(key, mask);
    while (values[i] && keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

bool u64_map_get(const struct u64_map *m, uint64_t key, uint32_t *value)
{
    if (!m->values)
        return false;
    size_t i = find(m->keys, m->values, m->mask, key);
    if (m->values[i]) {
        *value = m->values[i] - 1;
        return true;
    }
    if (m->old_values) {             /* growing: a key not moved yet is still in the old table */
        i = find(m->old_keys, m->old_values, m->old_mask, key);
        if (m->old_values[i]) {
            *value = m->old_values[i] - 1;
            return true;
        }
    }
    return false;
}

/* Move up to n slots of the old table into the new one (a key put since the growth began is there already,
 * with its newer value); the old table is freed once every slot is moved. */
static void move_some(struct u64_map *m, size_t n)
{
    for (; m->old_values && n > 0; n--) {
        size_t s = m->moved++;
        if (m->old_values[s]) {
            size_t i = find(m->keys, m->values, m->mask, m->old_keys[s]);
            if (!m->values[i]) {
                m->keys[i] = m->old_keys[s];
                m->values[i] = m->old_values[s];
            }
        }
        if (m->moved > m->old_mask)
            free_old(m);
    }
}

/* Start growing: a table twice the size takes the new keys, the current one becomes the old table. The old
 * table holds at most half its size in keys; 4 slots moved per insert empty it within a quarter of its size
 * in inserts, before the new table is half full. */
static int grow(struct u64_map *m)
{
    move_some(m, SIZE_MAX);          /* (a growth still under way: never, at 4 slots an insert) */
    size_t cap = (m->mask + 1) * 2;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    uint32_t *values = calloc(cap, sizeof(*values));
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    m->old_keys = m->keys;
    m->old_values = m->values;
    m->old_mask = m->mask;
    m->moved = 0;
    m->keys = keys;
    m->values = values;
    m->mask = cap - 1;
    return 0;
}

#define MOVED_PER_INSERT 4

int u64_map_put(struct u64_map *m, uint64_t key, uint32_t value)
{
    if (!m->values && u64_map_init(m, 16) != 0)
        return -1;
    size_t i = find(m->keys, m->values, m->mask, key);
    if (m->values[i]) {
        m->values[i] = value + 1;
        return 0;
    }
    bool was_there = false;
    if (m->old_values) {             /* a key not moved yet: its newer value goes in the new table */
        size_t j = find(m->old_keys, m->old_values, m->old_mask, key);
        was_there = m->old_values[j] != 0;
    }
    /* a new key: grow before it goes in, so that a failure leaves the map as it was */
    if (!was_there && (m->count + 1) * 2 > m->mask + 1) {
        if (grow(m) != 0)
            return -1;
        i = find(m->keys, m->values, m->mask, key);
    }
    m->keys[i] = key;
    m->values[i] = value + 1;
    if (!was_there)
        m->count++;
    move_some(m, MOVED_PER_INSERT);
    return 0;
}

int u64_map_index_raw(struct u64_map *m, uint64_t key, void **data, size_t *n, size_t *cap, size_t elem_size,
                      uint32_t *index)
{
    if (u64_map_get(m, key, index))
        return 0;
    /* room first, then the key: either failure leaves both as they were */
    if (*n >= UINT32_MAX || vec_reserve_raw(data, cap, elem_size, *n + 1) != 0 ||
        u64_map_put(m, key, (uint32_t)*n) != 0)
        return -1;
    memset((char *)*data + *n * elem_size, 0, elem_size);
    *index = (uint32_t)(*n)++;
    return 1;
}
