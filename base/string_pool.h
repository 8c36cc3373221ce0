/* SPDX-License-Identifier: GPL-3.0-or-later */
/* string_pool.h: one copy of each distinct string; equal strings give the same pointer, so interned names
 * can be compared and hashed by pointer. */
#ifndef TASKSPY_BASE_STRING_POOL_H
#define TASKSPY_BASE_STRING_POOL_H

#include "base/arena.h"
#include "base/intern_table.h"

#include <stddef.h>

struct string_pool {
    struct arena storage;        /* the strings */
    struct intern_table index;
};
const char *string_pool_intern(struct string_pool *p, const char *s);
const char *string_pool_intern_len(struct string_pool *p, const char *s, size_t len);
void string_pool_free(struct string_pool *p);

#endif
