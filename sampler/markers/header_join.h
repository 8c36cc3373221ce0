/* SPDX-License-Identifier: GPL-3.0-or-later */
/* header_join.h: a runtime's own task identity joined to the ids of the poll markers (SPEC section 3a). A
 * program whose tasks come from poll markers may run on tokio, whose waker functions (clone_waker,
 * wake_by_ref, wake_by_val) name a task by its header address (%rdi), not by the marker's id. A waker clone
 * on a thread polling marker task X is X registering its waker (the waker a poll's cx.waker() gives is the
 * polled task's own), so the header is learnt for X there; a wake of a header wakes the task it was last
 * learnt for, and a wake of a header not learnt yet is counted and dropped. Memory grows with the distinct
 * headers seen, not with tasks: the allocator gives a finished task's header to a new task, which learns it
 * anew at its first registration (a wake of a finished task's header meanwhile names that finished task,
 * whose waits are over). */
#ifndef TASKSPY_HEADER_JOIN_H
#define TASKSPY_HEADER_JOIN_H

#include <stdbool.h>
#include <stdint.h>

#include "base/u64_map.h"
#include "base/vec.h"

/* What a key was last learnt for: the task, and where the two were seen together (0: anywhere). */
struct header_join_task {
    uint64_t task;
    uint64_t place;
};

struct header_join {
    struct u64_map index;              /* header -> tasks.v[] */
    VEC_OF(struct header_join_task) tasks;   /* the marker task each header was last learnt for */
    uint64_t unknown_wakes;            /* wakes of a header not learnt yet (dropped) */
    uint64_t unknown_registrations;    /* clones of a header not learnt yet outside a marker poll (dropped) */
};

int header_join_init(struct header_join *j);
void header_join_free(struct header_join *j);
/* A waker clone of header on a thread polling marker task polled (in_poll), else on a thread in no known
 * poll. Sets *task to the task that registers: polled (header learnt for it), else the task header was
 * learnt for. Returns 1, 0 when there is none (counted), -1 when out of memory. */
int header_join_registered(struct header_join *j, uint64_t header, bool in_poll, uint64_t polled, uint64_t *task);
/* A wake of header: *task the task it was learnt for. Returns true, or false when not learnt yet (counted). */
bool header_join_wake(struct header_join *j, uint64_t header, uint64_t *task);
/* The same join for any two ids of one task seen together at one time on one thread (tls_join.c: tokio's
 * task id and the poll probes' header, either one the key; a reused key names the task last learnt for it):
 * learn key for task, seen at place (a code address: the poll function the two were seen in; 0: anywhere)
 * (returns 0, -1 when out of memory); find the task key was last learnt for (false when none, counted in
 * neither counter), and also false when it was learnt at another place than place (both non-zero): tokio gives
 * a finished task's header to a new task, whose polls run in its own future type's poll function. */
int header_join_learn(struct header_join *j, uint64_t key, uint64_t task, uint64_t place);
bool header_join_find(const struct header_join *j, uint64_t key, uint64_t place, uint64_t *task);

#endif
