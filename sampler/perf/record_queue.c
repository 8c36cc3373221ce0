/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record_queue.c: batches of copied records from the reading thread to the processing thread, under a byte
 * budget (see record_queue.h). */
#include "sampler/perf/record_queue.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

int record_queue_init(struct record_queue *q, size_t max_bytes)
{
    memset(q, 0, sizeof(*q));
    q->max_bytes = max_bytes;
    q->spare_max_bytes = RECORD_QUEUE_SPARE_MAX_BYTES;
    if (pthread_mutex_init(&q->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&q->changed, NULL) != 0) {
        pthread_mutex_destroy(&q->lock);
        return -1;
    }
    return 0;
}

void record_queue_keep_spares_under(struct record_queue *q, size_t bytes)
{
    q->spare_max_bytes = bytes;
}

void record_queue_free(struct record_queue *q)
{
    for (size_t i = q->head; i < q->batches.n; i++)
        record_batch_free(&q->batches.v[i]);
    for (size_t i = 0; i < q->n_spares; i++)
        record_batch_free(&q->spares[i]);
    vec_free(&q->batches);
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
}

int record_batch_add_pieces(struct record_batch *b, const struct queued_entry *e, const struct batch_piece *pieces,
                            size_t n)
{
    size_t at = b->bytes.n, total = sizeof(*e) + ALIGN8((size_t)e->size), put = 0;
    if (vec_reserve(&b->bytes, at + total) != 0)
        return -1;
    uint8_t *to = b->bytes.v + at;
    memcpy(to, e, sizeof(*e));
    for (size_t i = 0; i < n && put + pieces[i].size <= e->size; i++) {
        if (pieces[i].size)
            memcpy(to + sizeof(*e) + put, pieces[i].data, pieces[i].size);
        put += pieces[i].size;
    }
    memset(to + sizeof(*e) + put, 0, total - sizeof(*e) - put);
    b->bytes.n = at + total;
    if (e->kind == QUEUED_RECORD && e->size >= sizeof(struct perf_event_header) &&
        ((const struct perf_event_header *)(to + sizeof(*e)))->type == PERF_RECORD_SAMPLE)
        b->samples++;
    return 0;
}

int record_batch_add(struct record_batch *b, const struct queued_entry *e, const void *data)
{
    struct batch_piece whole = { data, e->size };
    return record_batch_add_pieces(b, e, &whole, 1);
}

void record_batch_free(struct record_batch *b)
{
    vec_free(&b->bytes);
    b->samples = 0;
}

/* Keep only what is not a sample (names, mappings, progress): the queue is full. */
static void leave_out_samples(struct record_batch *b)
{
    size_t out = 0;
    for (size_t at = 0; at < b->bytes.n;) {
        const struct queued_entry *e = (const struct queued_entry *)(b->bytes.v + at);
        size_t total = sizeof(*e) + ALIGN8((size_t)e->size);
        const struct perf_event_header *rec = (const struct perf_event_header *)(e + 1);
        bool sample = e->kind == QUEUED_RECORD && e->size >= sizeof(*rec) && rec->type == PERF_RECORD_SAMPLE;
        if (!sample) {
            memmove(b->bytes.v + out, b->bytes.v + at, total);
            out += total;
        }
        at += total;
    }
    b->bytes.n = out;
    b->samples = 0;
}

/* Queue b: the lock is held. */
static int push_locked(struct record_queue *q, struct record_batch *b)
{
    if (q->bytes + b->bytes.n > q->max_bytes) {
        q->dropped_samples += b->samples;
        leave_out_samples(b);
    }
    int rc = 0;
    if (q->head > 0 && q->head == q->batches.n) {
        q->head = q->batches.n = 0;
    } else if (q->head >= 64 && q->head * 2 >= q->batches.n) {   /* the consumer lags: reuse the front */
        memmove(q->batches.v, q->batches.v + q->head, (q->batches.n - q->head) * sizeof(*q->batches.v));
        q->batches.n -= q->head;
        q->head = 0;
    }
    struct record_batch *slot = vec_push(&q->batches);
    if (slot) {
        *slot = *b;
        q->bytes += b->bytes.n;
    } else {
        q->dropped_samples += b->samples;
        record_batch_free(b);
        rc = -1;
    }
    memset(b, 0, sizeof(*b));
    if (q->n_spares > 0)
        *b = q->spares[--q->n_spares];
    pthread_cond_signal(&q->changed);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

int record_queue_push(struct record_queue *q, struct record_batch *b)
{
    pthread_mutex_lock(&q->lock);
    return push_locked(q, b);
}

int record_queue_offer(struct record_queue *q, struct record_batch *b)
{
    if (pthread_mutex_trylock(&q->lock) != 0)
        return 1;
    return push_locked(q, b);
}

bool record_queue_pop(struct record_queue *q, struct record_batch *b)
{
    pthread_mutex_lock(&q->lock);
    while (q->head == q->batches.n && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    bool got = q->head < q->batches.n;
    if (got) {
        *b = q->batches.v[q->head++];
        q->bytes -= b->bytes.n;
    }
    pthread_mutex_unlock(&q->lock);
    return got;
}

void record_queue_recycle(struct record_queue *q, struct record_batch *b)
{
    b->bytes.n = 0;
    b->samples = 0;
    pthread_mutex_lock(&q->lock);
    if (q->n_spares < RECORD_QUEUE_SPARES && b->bytes.v && b->bytes.cap <= q->spare_max_bytes) {
        q->spares[q->n_spares++] = *b;
        memset(b, 0, sizeof(*b));
    }
    pthread_mutex_unlock(&q->lock);
    record_batch_free(b);
}

void record_queue_close(struct record_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_signal(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

uint64_t record_queue_dropped(struct record_queue *q)
{
    pthread_mutex_lock(&q->lock);
    uint64_t n = q->dropped_samples;
    pthread_mutex_unlock(&q->lock);
    return n;
}
