/* SPDX-License-Identifier: GPL-3.0-or-later */
/* thread_names.c: the tid -> name table of thread_names.h. */
#include "sampler/target/thread_names.h"

#include <stdint.h>
#include <stdio.h>

int thread_names_init(struct thread_names *t)
{
    *t = (struct thread_names){ 0 };
    return u64_map_init(&t->index, 64);
}

void thread_names_free(struct thread_names *t)
{
    u64_map_free(&t->index);
    vec_free(t);
}

const struct thread_name *thread_names_set(struct thread_names *t, pid_t tid, const char *name, bool *added)
{
    uint32_t idx;
    *added = false;
    if (!u64_map_get(&t->index, (uint64_t)tid, &idx)) {
        if (t->n >= UINT32_MAX || vec_reserve(t, t->n + 1) != 0)
            return NULL;
        idx = (uint32_t)t->n;
        if (u64_map_put(&t->index, (uint64_t)tid, idx) != 0)
            return NULL;
        t->v[t->n++].tid = tid;
        *added = true;
    }
    snprintf(t->v[idx].name, THREAD_NAME_LEN, "%s", name);
    return &t->v[idx];
}

long thread_names_find(const struct thread_names *t, pid_t tid)
{
    uint32_t idx;
    return u64_map_get(&t->index, (uint64_t)tid, &idx) ? (long)idx : -1;
}

const char *thread_names_get(const struct thread_names *t, pid_t tid)
{
    long idx = thread_names_find(t, tid);
    return idx >= 0 ? t->v[idx].name : NULL;
}
