/* SPDX-License-Identifier: GPL-3.0-or-later */
/* vec.h: the one growable-array helper. Every growable array in taskspy is a struct with the same three
 * fields, `v` (the elements), `n` (how many are used) and `cap` (how many fit), declared with VEC_OF or by
 * hand with those names, and grown only through vec_reserve / vec_push. Growth doubles, every size is
 * overflow-checked, and failure is an error return (the array is left as it was), never an abort. */
#ifndef TASKSPY_BASE_VEC_H
#define TASKSPY_BASE_VEC_H

#include <stddef.h>
#include <string.h>

#define VEC_OF(type) struct { type *v; size_t n, cap; }

/* Make room for at least `need` elements of elem_size bytes in *data (capacity in *cap). Returns 0, or -1
 * when the size overflows or memory runs out (then *data and *cap are unchanged). */
int vec_reserve_raw(void **data, size_t *cap, size_t elem_size, size_t need);

/* vec_reserve(&arr, need): room for `need` elements in all. 0 or -1. */
#define vec_reserve(a, need) vec_reserve_raw((void **)&(a)->v, &(a)->cap, sizeof(*(a)->v), (need))
/* vec_push(&arr): a pointer to a new zeroed element at the end (n grows by one), or NULL. */
#define vec_push(a) (vec_reserve((a), (a)->n + 1) ? NULL : memset(&(a)->v[(a)->n++], 0, sizeof(*(a)->v)))
/* vec_shrink(&arr): capacity down to n, for an array that is filled once and kept (the rest of its doubling given
 * back). Keeps the array as it is when memory cannot be moved. */
#define vec_shrink(a) vec_shrink_raw((void **)&(a)->v, (a)->n, &(a)->cap, sizeof(*(a)->v))
void vec_shrink_raw(void **data, size_t n, size_t *cap, size_t elem_size);
/* vec_free(&arr): release the elements; the array is empty and usable again. */
#define vec_free(a) vec_free_raw((void **)&(a)->v, &(a)->n, &(a)->cap)
void vec_free_raw(void **data, size_t *n, size_t *cap);

#endif
