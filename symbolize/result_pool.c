/* result_pool.c: one stored copy of each distinct sym_result. Many addresses of a function share the
 * same frames (same line, same inline chain); they get the same pointer, so callers can merge by pointer
 * and memory grows with distinct source positions, not with addresses. Names, files and objects are
 * interned before they get here, so they are compared by pointer. */
#include "symbolize/symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_result(const struct sym_result *r)
{
    uint64_t h = mix(r->n, (uintptr_t)r->object);
    h = mix(h, r->function_start);
    h = mix(h, r->kernel);
    for (size_t i = 0; i < r->n; i++) {
        const struct sym_frame *f = &r->frames[i];
        h = mix(h, (uintptr_t)f->name);
        h = mix(h, (uintptr_t)f->file);
        h = mix(h, ((uint64_t)f->line << 1) | f->inlined);
    }
    return h * 0xff51afd7ed558ccdull;
}

static bool same_result(const struct sym_result *a, const struct sym_result *b)
{
    if (a->n != b->n || a->object != b->object || a->function_start != b->function_start ||
        a->kernel != b->kernel)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct sym_frame *x = &a->frames[i], *y = &b->frames[i];
        if (x->name != y->name || x->file != y->file || x->line != y->line || x->inlined != y->inlined)
            return false;
    }
    return true;
}

static int grow(struct result_pool *p)
{
    size_t n = p->n_slots ? p->n_slots * 2 : 1024;
    const struct sym_result **slots = calloc(n, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < p->n_slots; i++) {
        const struct sym_result *r = p->slots[i];
        if (!r)
            continue;
        size_t j = hash_result(r) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = r;
    }
    free(p->slots);
    p->slots = slots;
    p->n_slots = n;
    return 0;
}

const struct sym_result *result_pool_intern(struct result_pool *p, const struct sym_result *r)
{
    if ((p->n_used + 1) * 2 > p->n_slots && grow(p) != 0)
        return NULL;
    size_t mask = p->n_slots - 1;
    size_t j = hash_result(r) & mask;
    for (; p->slots[j]; j = (j + 1) & mask)
        if (same_result(p->slots[j], r))
            return p->slots[j];
    struct sym_result *copy = arena_alloc(&p->storage, sizeof(*copy));
    struct sym_frame *frames = arena_alloc(&p->storage, r->n * sizeof(*frames));
    if (!copy || !frames)
        return NULL;
    memcpy(frames, r->frames, r->n * sizeof(*frames));
    *copy = *r;
    copy->frames = frames;
    p->slots[j] = copy;
    p->n_used++;
    return copy;
}

void result_pool_free(struct result_pool *p)
{
    free(p->slots);
    arena_free(&p->storage);
    memset(p, 0, sizeof(*p));
}
