/* SPDX-License-Identifier: GPL-3.0-or-later */
/* arena.h: a bump allocator for long-lived data (interned strings, results, frames): everything it hands
 * out lives until arena_free, which releases every chunk at once. */
#ifndef TASKSPY_BASE_ARENA_H
#define TASKSPY_BASE_ARENA_H

#include <stddef.h>

struct arena_chunk;
struct arena {
    struct arena_chunk *head;
};
void *arena_alloc(struct arena *a, size_t size);   /* zeroed, 16-byte aligned; NULL on allocation failure */
void arena_free(struct arena *a);

#endif
