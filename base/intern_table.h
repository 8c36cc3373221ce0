/* SPDX-License-Identifier: GPL-3.0-or-later */
/* intern_table.h: the one interner's index: an open-addressing set of pointers to items stored elsewhere
 * (an arena), found by their hash and an equality callback, so each distinct item is kept once and equal
 * items give the same pointer. string_pool and symbolize's result pool are built on it. */
#ifndef TASKSPY_BASE_INTERN_TABLE_H
#define TASKSPY_BASE_INTERN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intern_slot {
    uint64_t hash;
    const void *item;           /* NULL: empty */
};
struct intern_table {
    struct intern_slot *slots;  /* power-of-two count */
    size_t n_slots;
    size_t n_used;
};

/* Is the stored item equal to the key being looked up? */
typedef bool (*intern_equal_fn)(const void *item, const void *key);

/* The stored item equal to key (whose hash is hash), or NULL. */
const void *intern_table_find(const struct intern_table *t, uint64_t hash, intern_equal_fn equal, const void *key);
/* Add an item not yet present. Returns 0, or -1 on allocation failure (the table is unchanged). */
int intern_table_add(struct intern_table *t, uint64_t hash, const void *item);
void intern_table_free(struct intern_table *t);

/* Hashing helpers for the items' keys. */
uint64_t intern_hash_bytes(uint64_t h, const void *data, size_t len);
/* The bytes up to the first stop byte (all len when there is none), their length in *span, hashed: equal to
 * intern_hash_bytes(h, data, *span), in one pass that both finds the end and hashes (a word at a time). */
uint64_t intern_hash_span(uint64_t h, const void *data, size_t len, unsigned char stop, size_t *span);
uint64_t intern_hash_u64(uint64_t h, uint64_t v);
#define INTERN_HASH_SEED 1469598103934665603ull

#endif
