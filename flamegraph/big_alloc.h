/* SPDX-License-Identifier: GPL-3.0-or-later */
/* big_alloc.h: zeroed arrays of many megabytes (the profile's node array and hash tables, the SVG layout)
 * mapped directly and marked for transparent huge pages. Not part of the layer's public interface. */
#ifndef TASKSPY_BIG_ALLOC_H
#define TASKSPY_BIG_ALLOC_H

#include <stddef.h>

/* bytes of zeroed memory, or NULL. Free with big_free(ptr, the same bytes). */
void *big_alloc(size_t bytes);
/* Grow (or shrink) a big_alloc'd array from old_bytes to new_bytes, keeping its contents; what is added is
 * zeroed. NULL on failure, the old array then still valid. */
void *big_realloc(void *ptr, size_t old_bytes, size_t new_bytes);
void big_free(void *ptr, size_t bytes);

#endif
