/* SPDX-License-Identifier: GPL-3.0-or-later */
/* result_pool.c: one stored copy of each distinct sym_result. Many addresses of a function share the
 * same frames (same line, same inline chain); they get the same pointer, so callers can merge by pointer
 * and memory grows with distinct source positions, not with addresses. Names, files and objects are
 * interned before they get here, so they are compared by pointer. Each distinct result is numbered
 * 0, 1, 2... (sym_result.id), for callers that keep per-result data in an array. */
#include "symbolize/symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_result(const struct sym_result *r)
{
    uint64_t h = intern_hash_u64(r->n, (uintptr_t)r->object);
    h = intern_hash_u64(h, r->function_start);
    h = intern_hash_u64(h, (uint64_t)r->kernel << 1 | r->unsymbolized);
    for (size_t i = 0; i < r->n; i++) {
        const struct sym_frame *f = &r->frames[i];
        h = intern_hash_u64(h, (uintptr_t)f->name);
        h = intern_hash_u64(h, (uintptr_t)f->system_name);
        h = intern_hash_u64(h, (uintptr_t)f->file);
        h = intern_hash_u64(h, (uintptr_t)f->path);
        h = intern_hash_u64(h, ((uint64_t)f->start_line << 33) | ((uint64_t)f->line << 1) | f->inlined);
    }
    return h;
}

static bool same_result(const void *item, const void *key)
{
    const struct sym_result *a = item, *b = key;
    if (a->n != b->n || a->object != b->object || a->function_start != b->function_start ||
        a->kernel != b->kernel || a->unsymbolized != b->unsymbolized)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct sym_frame *x = &a->frames[i], *y = &b->frames[i];
        if (x->name != y->name || x->system_name != y->system_name || x->file != y->file || x->path != y->path ||
            x->line != y->line || x->start_line != y->start_line || x->inlined != y->inlined)
            return false;
    }
    return true;
}

const struct sym_result *result_pool_intern(struct result_pool *p, const struct sym_result *r)
{
    uint64_t hash = hash_result(r);
    const struct sym_result *found = intern_table_find(&p->index, hash, same_result, r);
    if (found)
        return found;
    if (p->n_results == UINT32_MAX)
        return NULL;
    struct sym_result *copy = arena_alloc(&p->storage, sizeof(*copy));
    struct sym_frame *frames = arena_alloc(&p->storage, r->n * sizeof(*frames));
    if (!copy || !frames)
        return NULL;
    memcpy(frames, r->frames, r->n * sizeof(*frames));
    *copy = *r;
    copy->frames = frames;
    copy->id = p->n_results;
    if (intern_table_add(&p->index, hash, copy) != 0)
        return NULL;
    p->n_results++;
    return copy;
}

void result_pool_free(struct result_pool *p)
{
    intern_table_free(&p->index);
    arena_free(&p->storage);
    memset(p, 0, sizeof(*p));
}
