/* SPDX-License-Identifier: GPL-3.0-or-later */
/* arena.c: a bump allocator for long-lived data (interned strings, results, frames).
 * Nothing is freed one by one; arena_free releases every chunk at once. */
#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK_MIN (64 * 1024)
#define ARENA_ALIGN 16

struct arena_chunk {
    struct arena_chunk *next;
    size_t size;   /* usable bytes in data */
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

void *arena_alloc(struct arena *a, size_t size)
{
    size_t rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (rounded < size)
        return NULL;
    struct arena_chunk *c = a->head;
    if (!c || c->size - c->used < rounded) {
        size_t want = rounded > ARENA_CHUNK_MIN ? rounded : ARENA_CHUNK_MIN;
        c = malloc(sizeof(*c) + want);
        if (!c)
            return NULL;
        c->size = want;
        c->used = 0;
        /* A big one-off request gets its own chunk behind the current one, so the current one keeps
         * filling. */
        if (a->head && rounded > ARENA_CHUNK_MIN) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += rounded;
    memset(p, 0, size);
    return p;
}

void arena_free(struct arena *a)
{
    struct arena_chunk *c = a->head;
    while (c) {
        struct arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}
