/* SPDX-License-Identifier: GPL-3.0-or-later */
/* header_join.c: runtime task headers learnt for the marker tasks that registered them (header_join.h). */
#include "sampler/markers/header_join.h"

#include <string.h>

int header_join_init(struct header_join *j)
{
    memset(j, 0, sizeof(*j));
    return u64_map_init(&j->index, 64);
}

void header_join_free(struct header_join *j)
{
    u64_map_free(&j->index);
    vec_free(&j->tasks);
}

/* Learn header for task. Returns 0 or -1 (no memory). */
static int learn(struct header_join *j, uint64_t header, uint64_t task)
{
    uint32_t at;
    if (u64_map_get(&j->index, header, &at)) {
        j->tasks.v[at] = task;
        return 0;
    }
    uint64_t *slot = vec_push(&j->tasks);
    if (!slot)
        return -1;
    *slot = task;
    if (u64_map_put(&j->index, header, (uint32_t)(j->tasks.n - 1)) != 0) {
        j->tasks.n--;
        return -1;
    }
    return 0;
}

int header_join_registered(struct header_join *j, uint64_t header, bool in_poll, uint64_t polled, uint64_t *task)
{
    if (in_poll) {
        *task = polled;
        return learn(j, header, polled) == 0 ? 1 : -1;
    }
    uint32_t at;
    if (!u64_map_get(&j->index, header, &at)) {
        j->unknown_registrations++;
        return 0;
    }
    *task = j->tasks.v[at];
    return 1;
}

bool header_join_wake(struct header_join *j, uint64_t header, uint64_t *task)
{
    uint32_t at;
    if (!u64_map_get(&j->index, header, &at)) {
        j->unknown_wakes++;
        return false;
    }
    *task = j->tasks.v[at];
    return true;
}
