/* SPDX-License-Identifier: GPL-3.0-or-later */
/* big_alloc.h: zeroed arrays of many megabytes (the profile's node array and hash tables, the SVG layout)
 * mapped directly, on huge pages where they are touched all over. Not part of the layer's public interface. */
#ifndef TASKSPY_BIG_ALLOC_H
#define TASKSPY_BIG_ALLOC_H

#include <stddef.h>

/* How an array's memory is first touched, which decides its pages. */
enum big_touch {
    BIG_IN_ORDER,   /* filled from the front (the node array, names, output arrays): small pages */
    BIG_ALL_OVER,   /* written at random from the start (hash tables): huge pages */
};

/* bytes of zeroed memory, or NULL. Free with big_free(ptr, the same bytes). */
void *big_alloc(size_t bytes, enum big_touch touch);
/* Grow (or shrink) a big_alloc'd array from old_bytes to new_bytes, keeping its contents; what is added is
 * zeroed. NULL on failure, the old array then still valid. */
void *big_realloc(void *ptr, size_t old_bytes, size_t new_bytes, enum big_touch touch);
void big_free(void *ptr, size_t bytes);
/* Fault in the pages of [offset, offset + len) of a big_alloc'd array of bytes, as a write would (contents
 * unchanged), so that the thread filling the array later finds them there. Safe while another thread writes
 * the array. Returns 1 (done), 0 (nothing to do: the array is malloc's, or the range is empty) or -1 (the
 * kernel cannot: MADV_POPULATE_WRITE is Linux 5.14's). */
int big_populate(void *ptr, size_t bytes, size_t offset, size_t len);

#endif
