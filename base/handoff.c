/* SPDX-License-Identifier: GPL-3.0-or-later */
/* handoff.c: the producer / worker hand-off of handoff.h: one lock, a condition for each direction. */
#include "base/handoff.h"

#include <errno.h>

static void *worker(void *arg)
{
    struct handoff *h = arg;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (h->submitted == 0 && !h->closing) {
            if (h->idle) {
                pthread_mutex_unlock(&h->lock);
                bool did = h->idle(h->ctx);
                pthread_mutex_lock(&h->lock);
                if (did)
                    continue;
                if (h->submitted > 0 || h->closing)
                    break;
            }
            pthread_cond_wait(&h->more, &h->lock);
        }
        if (h->submitted == 0)
            break;                                      /* closing, all consumed */
        size_t slot = (h->next + h->n_slots - h->submitted) % h->n_slots;
        bool failed = h->error != 0;
        pthread_mutex_unlock(&h->lock);
        int error = failed ? 0 : h->consume(h->ctx, slot);
        pthread_mutex_lock(&h->lock);
        if (error && !h->error)
            h->error = error;
        h->submitted--;
        pthread_cond_signal(&h->room);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

bool handoff_open(struct handoff *h, size_t n_slots, handoff_consume_fn consume, void *ctx)
{
    return handoff_open_idle(h, n_slots, consume, NULL, ctx);
}

bool handoff_open_idle(struct handoff *h, size_t n_slots, handoff_consume_fn consume, handoff_idle_fn idle,
                       void *ctx)
{
    *h = (struct handoff){ .consume = consume, .idle = idle, .ctx = ctx, .n_slots = n_slots ? n_slots : 1 };
    if (pthread_mutex_init(&h->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&h->more, NULL) != 0)
        goto no_more;
    if (pthread_cond_init(&h->room, NULL) != 0)
        goto no_room;
    if (pthread_create(&h->thread, NULL, worker, h) != 0)
        goto no_thread;
    h->threaded = true;
    return true;
no_thread:
    pthread_cond_destroy(&h->room);
no_room:
    pthread_cond_destroy(&h->more);
no_more:
    pthread_mutex_destroy(&h->lock);
    return false;
}

size_t handoff_slot(struct handoff *h, int *error)
{
    if (!h->threaded) {
        *error = h->error;
        return h->next;
    }
    pthread_mutex_lock(&h->lock);
    while (h->submitted == h->n_slots)      /* the next slot is still to be consumed */
        pthread_cond_wait(&h->room, &h->lock);
    *error = h->error;
    size_t slot = h->next;
    pthread_mutex_unlock(&h->lock);
    return slot;
}

int handoff_submit(struct handoff *h)
{
    if (!h->threaded) {
        if (!h->error)
            h->error = h->consume(h->ctx, h->next);
        h->next = (h->next + 1) % h->n_slots;
        return h->error;
    }
    pthread_mutex_lock(&h->lock);
    h->submitted++;
    h->next = (h->next + 1) % h->n_slots;
    pthread_cond_signal(&h->more);
    int error = h->error;
    pthread_mutex_unlock(&h->lock);
    return error;
}

size_t handoff_pending(struct handoff *h)
{
    if (!h->threaded)
        return 0;
    pthread_mutex_lock(&h->lock);
    size_t pending = h->submitted;
    pthread_mutex_unlock(&h->lock);
    return pending;
}

int handoff_drain(struct handoff *h)
{
    if (!h->threaded)
        return h->error;
    pthread_mutex_lock(&h->lock);
    while (h->submitted > 0)
        pthread_cond_wait(&h->room, &h->lock);
    int error = h->error;
    pthread_mutex_unlock(&h->lock);
    return error;
}

int handoff_close(struct handoff *h)
{
    if (!h->threaded)
        return h->error;
    pthread_mutex_lock(&h->lock);
    h->closing = true;
    pthread_cond_signal(&h->more);
    pthread_mutex_unlock(&h->lock);
    int error = pthread_join(h->thread, NULL) != 0 ? EINVAL : h->error;
    pthread_cond_destroy(&h->more);
    pthread_cond_destroy(&h->room);
    pthread_mutex_destroy(&h->lock);
    h->threaded = false;
    return error;
}
