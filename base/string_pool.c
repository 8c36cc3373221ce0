/* SPDX-License-Identifier: GPL-3.0-or-later */
/* string_pool.c: interning of names and file names on the intern table, so each distinct string is stored
 * once (in an arena) and results can be compared and hashed by pointer. */
#include "base/string_pool.h"

#include <stdint.h>
#include <string.h>

struct string_key {
    const char *s;
    size_t len;
};

static bool same_string(const void *item, const void *key)
{
    const char *t = item;
    const struct string_key *k = key;
    return strncmp(t, k->s, k->len) == 0 && t[k->len] == '\0';
}

const char *string_pool_intern_len(struct string_pool *p, const char *s, size_t len)
{
    struct string_key key = { s, len };
    uint64_t hash = intern_hash_bytes(INTERN_HASH_SEED, s, len);
    const char *found = intern_table_find(&p->index, hash, same_string, &key);
    if (found)
        return found;
    char *copy = arena_alloc(&p->storage, len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    if (intern_table_add(&p->index, hash, copy) != 0)
        return NULL;
    return copy;
}

const char *string_pool_intern(struct string_pool *p, const char *s)
{
    return string_pool_intern_len(p, s, strlen(s));
}

void string_pool_free(struct string_pool *p)
{
    intern_table_free(&p->index);
    arena_free(&p->storage);
}
