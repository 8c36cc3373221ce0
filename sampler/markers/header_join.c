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

int header_join_learn(struct header_join *j, uint64_t key, uint64_t task, uint64_t place)
{
    uint32_t at;
    if (u64_map_index(&j->index, key, &j->tasks, &at) < 0)
        return -1;
    j->tasks.v[at] = (struct header_join_task){ .task = task, .place = place };
    return 0;
}

int header_join_registered(struct header_join *j, uint64_t header, bool in_poll, uint64_t polled, uint64_t *task)
{
    if (in_poll) {
        *task = polled;
        return header_join_learn(j, header, polled, 0) == 0 ? 1 : -1;
    }
    if (!header_join_find(j, header, 0, task)) {
        j->unknown_registrations++;
        return 0;
    }
    return 1;
}

bool header_join_wake(struct header_join *j, uint64_t header, uint64_t *task)
{
    if (!header_join_find(j, header, 0, task)) {
        j->unknown_wakes++;
        return false;
    }
    return true;
}

bool header_join_find(const struct header_join *j, uint64_t key, uint64_t place, uint64_t *task)
{
    uint32_t at;
    if (!u64_map_get(&j->index, key, &at))
        return false;
    const struct header_join_task *learnt = &j->tasks.v[at];
    if (place && learnt->place && learnt->place != place)
        return false;
    *task = learnt->task;
    return true;
}
