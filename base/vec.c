/* SPDX-License-Identifier: GPL-3.0-or-later */
/* vec.c: growth of the arrays declared in vec.h (doubling from 8, overflow-checked, no abort), and shrinking. */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>

int vec_reserve_raw(void **data, size_t *cap, size_t elem_size, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t new_cap = *cap ? *cap : 8;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2)
            return -1;
        new_cap *= 2;
    }
    if (elem_size && new_cap > SIZE_MAX / elem_size)
        return -1;
    void *grown = realloc(*data, new_cap * (elem_size ? elem_size : 1));
    if (!grown)
        return -1;
    *data = grown;
    *cap = new_cap;
    return 0;
}

void vec_shrink_raw(void **data, size_t n, size_t *cap, size_t elem_size)
{
    if (n == 0 || n >= *cap || !elem_size)
        return;
    void *fit = realloc(*data, n * elem_size);   /* (n < cap: the size cannot overflow) */
    if (!fit)
        return;
    *data = fit;
    *cap = n;
}

void vec_free_raw(void **data, size_t *n, size_t *cap)
{
    free(*data);
    *data = NULL;
    *n = 0;
    *cap = 0;
}
