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

/* A word (8 bytes) at a time: names are long (Rust paths) and hashed for every frame of every stack. The
 * length goes in last, so a hash can be made while the end of the bytes is still being looked for
 * (intern_hash_span). */
static uint64_t mix_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* The last 0..7 bytes (as a zero-padded word) and the length. */
static uint64_t finish_word(uint64_t h, uint64_t w, size_t len)
{
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ (uint64_t)len ^ (h >> 29)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static uint64_t finish(uint64_t h, const unsigned char *tail, size_t tail_len, size_t len)
{
    uint64_t w = 0;
    memcpy(&w, tail, tail_len);
    return finish_word(h, w, len);
}

uint64_t intern_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mix_word(h, w);
    }
    return finish(h, p + i, len - i, len);
}

uint64_t intern_hash_span(uint64_t h, const void *data, size_t len, unsigned char stop, size_t *span)
{
    const unsigned char *p = data;
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t stops = ones * stop;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        /* a byte equal to stop is a zero byte of w ^ stops; the lowest flagged byte is always a true one */
        uint64_t x = w ^ stops;
        uint64_t zero = (x - ones) & ~x & highs;
        if (zero) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            size_t k = (size_t)__builtin_ctzll(zero) / 8;   /* the first byte in memory is the lowest */
            *span = i + k;
            return finish_word(h, k ? w & ((1ull << (8 * k)) - 1) : 0, i + k);
#else
            size_t k = 0;
            while (p[i + k] != stop)
                k++;
            *span = i + k;
            return finish(h, p + i, k, i + k);
#endif
        }
        h = mix_word(h, w);
    }
    size_t k = 0;
    while (i + k < len && p[i + k] != stop)
        k++;
    *span = i + k;
    return finish(h, p + i, k, i + k);
}

uint64_t intern_hash_u64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}
