/* SPDX-License-Identifier: GPL-3.0-or-later */
/* handoff.h: the one hand-off between a producing thread and a worker thread over a ring of n slots (the
 * caller's own array: the hand-off only numbers them). The producer fills the slot handoff_slot gives and
 * submits it; the worker calls consume on submitted slots, oldest first, while the producer fills the next.
 * The first error consume returns is kept: consume is not called again (the slots still come back empty), and
 * the producer learns it from handoff_slot, handoff_submit, handoff_drain or handoff_close. Without a worker
 * thread (it could not be started) each submitted slot is consumed at once in the producer's thread. A worker
 * with nothing submitted may do some other small job (idle) before it waits. */
#ifndef TASKSPY_HANDOFF_H
#define TASKSPY_HANDOFF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Consume slot (of the caller's array); returns 0, or an error (an errno value) that ends consuming. */
typedef int (*handoff_consume_fn)(void *ctx, size_t slot);
/* Called by the worker thread when no slot is submitted: one short step of other work (the lock is not held),
 * true if it did one (it is called again unless a slot came meanwhile), false when there is none for now (the
 * worker then waits for a slot). */
typedef bool (*handoff_idle_fn)(void *ctx);

struct handoff {
    handoff_consume_fn consume;
    handoff_idle_fn idle;                /* or NULL */
    void *ctx;
    size_t n_slots;
    size_t next;                         /* the slot to fill next; the submitted ones come just before it */
    size_t submitted;                    /* submitted, not yet consumed */
    int error;                           /* the first error of consume, 0 */
    bool threaded, closing;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more;                 /* a slot was submitted, or closing */
    pthread_cond_t room;                 /* a slot was consumed */
};

/* Start the worker thread for n_slots slots (at least 1). Returns whether it runs: without it (no thread, no
 * lock) the hand-off still works, in the producer's thread. */
bool handoff_open(struct handoff *h, size_t n_slots, handoff_consume_fn consume, void *ctx);
/* handoff_open with the worker's idle job (NULL: none). */
bool handoff_open_idle(struct handoff *h, size_t n_slots, handoff_consume_fn consume, handoff_idle_fn idle,
                       void *ctx);
/* The slot to fill next, once it is free (waiting for the worker when all are submitted). Sets *error to the
 * kept error (0: none; then do not fill). */
size_t handoff_slot(struct handoff *h, int *error);
/* Hand the slot handoff_slot gave over to the worker. Returns the kept error (0: none). */
int handoff_submit(struct handoff *h);
/* How many submitted slots the worker has not finished (0 without a worker): whether it is behind. */
size_t handoff_pending(struct handoff *h);
/* Wait until every submitted slot is consumed. Returns the kept error (0: none). */
int handoff_drain(struct handoff *h);
/* Consume what is submitted, stop the worker and release it (the hand-off then works in the producer's
 * thread). Returns the kept error (EINVAL if the worker could not be joined), 0 when none. */
int handoff_close(struct handoff *h);

#endif
