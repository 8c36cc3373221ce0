/* SPDX-License-Identifier: GPL-3.0-or-later */
/* intern_table.c: linear probing over stored hashes (growth never rehashes the items), grown at half load. */
#include "base/intern_table.h"

#include <stdlib.h>
#include <string.h>

static size_t start_slot(uint64_t hash, size_t mask)
{
    return (size_t)(hash ^ (hash >> 29)) & mask;
}

const void *intern_table_find(const struct intern_table *t, uint64_t hash, intern_equal_fn equal, const void *key)
{
    if (!t->n_slots)
        return NULL;
    size_t mask = t->n_slots - 1;
    for (size_t j = start_slot(hash, mask); t->slots[j].item; j = (j + 1) & mask)
        if (t->slots[j].hash == hash && equal(t->slots[j].item, key))
            return t->slots[j].item;
    return NULL;
}

static void place(struct intern_slot *slots, size_t mask, uint64_t hash, const void *item)
{
    size_t j = start_slot(hash, mask);
    while (slots[j].item)
        j = (j + 1) & mask;
    slots[j] = (struct intern_slot){ .hash = hash, .item = item };
}

static int grow(struct intern_table *t)
{
    size_t n = t->n_slots ? t->n_slots * 2 : 1024;
    if (n < t->n_slots || n > SIZE_MAX / sizeof(struct intern_slot))
        return -1;
    struct intern_slot *slots = calloc(n, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->n_slots; i++)
        if (t->slots[i].item)
            place(slots, n - 1, t->slots[i].hash, t->slots[i].item);
    free(t->slots);
    t->slots = slots;
    t->n_slots = n;
    return 0;
}

int intern_table_add(struct intern_table *t, uint64_t hash, const void *item)
{
    if ((t->n_used + 1) * 2 > t->n_slots && grow(t) != 0)
        return -1;
    place(t->slots, t->n_slots - 1, hash, item);
    t->n_used++;
    return 0;
}

void intern_table_free(struct intern_table *t)
{
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

uint64_t intern_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t intern_hash_u64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}
