/* string_pool.c: interning of names and file names, so each distinct string is stored once and results
 * can be compared and hashed by pointer. Open addressing over an FNV-1a hash. */
#include "base/string_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int grow(struct string_pool *p)
{
    size_t n = p->n_slots ? p->n_slots * 2 : 1024;
    const char **slots = calloc(n, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < p->n_slots; i++) {
        const char *s = p->slots[i];
        if (!s)
            continue;
        size_t j = hash_bytes(s, strlen(s)) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = s;
    }
    free(p->slots);
    p->slots = slots;
    p->n_slots = n;
    return 0;
}

const char *string_pool_intern_len(struct string_pool *p, const char *s, size_t len)
{
    if ((p->n_used + 1) * 2 > p->n_slots && grow(p) != 0)
        return NULL;
    size_t mask = p->n_slots - 1;
    size_t j = hash_bytes(s, len) & mask;
    for (; p->slots[j]; j = (j + 1) & mask) {
        const char *t = p->slots[j];
        if (strncmp(t, s, len) == 0 && t[len] == '\0')
            return t;
    }
    char *copy = arena_alloc(&p->storage, len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    p->slots[j] = copy;
    p->n_used++;
    return copy;
}

const char *string_pool_intern(struct string_pool *p, const char *s)
{
    return string_pool_intern_len(p, s, strlen(s));
}

void string_pool_free(struct string_pool *p)
{
    free(p->slots);
    arena_free(&p->storage);
    memset(p, 0, sizeof(*p));
}
