/* SPDX-License-Identifier: GPL-3.0-or-later */
/* u64_map.c: linear-probing hash map u64 -> u32, grown at half load, and its find-or-append into an array. */
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
    if (!m->keys || !m->values) {
        u64_map_free(m);
        return -1;
    }
    return 0;
}

void u64_map_free(struct u64_map *m)
{
    free(m->keys);
    free(m->values);
    m->keys = NULL;
    m->values = NULL;
    m->mask = 0;
    m->count = 0;
}

void u64_map_clear(struct u64_map *m)
{
    if (m->values)
        memset(m->values, 0, (m->mask + 1) * sizeof(*m->values));
    m->count = 0;
}

bool u64_map_get(const struct u64_map *m, uint64_t key, uint32_t *value)
{
    if (!m->values)
        return false;
    for (size_t i = slot_of(key, m->mask);; i = (i + 1) & m->mask) {
        if (m->values[i] == 0)
            return false;
        if (m->keys[i] == key) {
            *value = m->values[i] - 1;
            return true;
        }
    }
}

static int grow(struct u64_map *m)
{
    struct u64_map bigger;
    if (u64_map_init(&bigger, (m->mask + 1)) != 0)
        return -1;
    for (size_t i = 0; i <= m->mask; i++) {
        if (m->values[i]) {
            size_t j = slot_of(m->keys[i], bigger.mask);
            while (bigger.values[j])
                j = (j + 1) & bigger.mask;
            bigger.keys[j] = m->keys[i];
            bigger.values[j] = m->values[i];
            bigger.count++;
        }
    }
    u64_map_free(m);
    *m = bigger;
    return 0;
}

int u64_map_put(struct u64_map *m, uint64_t key, uint32_t value)
{
    if (!m->values && u64_map_init(m, 16) != 0)
        return -1;
    size_t i = slot_of(key, m->mask);
    for (; m->values[i]; i = (i + 1) & m->mask) {
        if (m->keys[i] == key) {
            m->values[i] = value + 1;
            return 0;
        }
    }
    /* a new key: grow before it goes in, so that a failure leaves the map as it was */
    if ((m->count + 1) * 2 > m->mask + 1) {
        if (grow(m) != 0)
            return -1;
        for (i = slot_of(key, m->mask); m->values[i]; i = (i + 1) & m->mask)
            ;
    }
    m->keys[i] = key;
    m->values[i] = value + 1;
    m->count++;
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
