/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record_queue.h: the hand-over between the sampler's two threads. The reading thread copies each round's
 * records out of the ring buffers into a batch (with what it learnt of each: a sample's task) and queues it; the
 * processing thread takes batches in order and does the slow work (unwinding, the sink). The queue holds at
 * most a byte budget: a batch that does not fit keeps its records other than samples (names, mappings) and
 * leaves its samples out, counted. Used by the loop at sampler/'s top level (through sampler_internal.h). */
#ifndef TASKSPY_RECORD_QUEUE_H
#define TASKSPY_RECORD_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "sampler/sampler_types.h"

/* What one queued entry is. */
enum queued_kind {
    QUEUED_RECORD,                   /* a perf record (bytes follow) */
    QUEUED_PROGRESS,                 /* time to tell the sink how the recording goes (no bytes) */
    QUEUED_POLL,                     /* a poll that ended: a struct sampler_poll (thread not filled in yet) */
    QUEUED_WARNING,                  /* a warning for the configured callback: the bytes (NUL-terminated) */
    QUEUED_THREAD_NAME,              /* a thread attached while recording: task_id is its tid, the bytes its
                                        name (NUL-terminated) */
    QUEUED_TASK_EVENT,               /* the wait profile's task event (no bytes): task_state its enum
                                        sampler_task_event_kind, aux its tid, task_id, time_ns */
    QUEUED_WAIT_STACK,               /* a waker-registration stack: the perf record (sampler_wait.c) */
    QUEUED_WAIT_ROUND,               /* every task event and wait stack up to time_ns is in the batches */
};

/* A sample's task_id is the TLS marker's own, the poll probes' id for it not learnt yet (sampler_sample's
 * task_id_provisional). */
#define QUEUED_TASK_PROVISIONAL 1u

/* The header of one entry in a batch; size bytes of the record follow, padded to 8. */
struct queued_entry {
    uint32_t kind;                   /* enum queued_kind */
    uint32_t size;                   /* bytes that follow */
    uint32_t task_state;             /* of a sample: enum sampler_task_state */
    uint32_t aux;                    /* of a task event: its tid; of a sample: QUEUED_TASK_PROVISIONAL or 0 */
    uint64_t task_id, probe_addr;    /* of a sample in a task */
    uint64_t polls, tasks_seen, lost;  /* of a progress entry */
    uint64_t time_ns;                /* of a progress entry: when it was taken */
    uint64_t ret_slot, ret_addr;     /* of a sample or wait stack in a poll whose function has a return probe:
                                        where its return address is on the stack, and that address (which
                                        the probe's trampoline replaced); 0: none */
    uint64_t last_hit_addr;          /* of a sample: its thread's last probe hit's address before it (for a
                                        sample in a probed instruction's out-of-line single step); 0: none */
    uint64_t trap_addr;              /* of a sample taken in a probe's trap: the probe's address (the user ip,
                                        one past it, stands for it: the probed instruction has not run) */
};

struct record_batch {
    VEC_OF(uint8_t) bytes;           /* entries back to back */
    size_t samples;                  /* of them, PERF_RECORD_SAMPLE records */
};

/* One piece of an entry's bytes (an entry may be put together from several). */
struct batch_piece {
    const void *data;
    size_t size;
};

/* Processed batches kept for reuse, at most, each of at most RECORD_QUEUE_SPARE_MAX_BYTES: their memory is
 * already faulted in, so a round's copy neither grows the heap nor touches new pages. */
#define RECORD_QUEUE_SPARES 4
#define RECORD_QUEUE_SPARE_MAX_BYTES (16u << 20)

struct record_queue {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    VEC_OF(struct record_batch) batches;   /* waiting: v[head .. n) */
    size_t head;
    struct record_batch spares[RECORD_QUEUE_SPARES];   /* processed, emptied, memory kept: v[0 .. n_spares) */
    size_t n_spares;
    size_t spare_max_bytes;          /* a processed batch bigger than this is freed, not kept */
    size_t bytes, max_bytes;
    uint64_t dropped_samples;        /* samples left out because the queue was full */
    bool closed;                     /* no batch will come any more */
};

int record_queue_init(struct record_queue *q, size_t max_bytes);
/* Keep only processed batches of at most bytes for reuse (RECORD_QUEUE_SPARE_MAX_BYTES unless told): a consumer
 * that runs as long as it is left keeps none of the big batches a stall of its processing thread made. */
void record_queue_keep_spares_under(struct record_queue *q, size_t bytes);
void record_queue_free(struct record_queue *q);
/* Append an entry to a batch (header, then size bytes from data). Returns 0, or -1 out of memory. */
int record_batch_add(struct record_batch *b, const struct queued_entry *e, const void *data);
/* The same with the entry's bytes put together from n pieces whose sizes add up to e->size. */
int record_batch_add_pieces(struct record_batch *b, const struct queued_entry *e, const struct batch_piece *pieces,
                            size_t n);
void record_batch_free(struct record_batch *b);
/* Hand a batch over (taking its memory; *b is then empty, or a processed batch's emptied memory to fill
 * again). Returns 0, or -1 out of memory (the batch's samples are then counted as dropped). */
int record_queue_push(struct record_queue *q, struct record_batch *b);
/* The same without waiting: when the processing thread holds the lock (it may have been preempted holding
 * it), returns 1 and leaves b as it is, to be offered again with more records later. */
int record_queue_offer(struct record_queue *q, struct record_batch *b);
/* Wait for the next batch into *b (the caller hands it back with record_queue_recycle). Returns false when
 * the queue is closed and empty. */
bool record_queue_pop(struct record_queue *q, struct record_batch *b);
/* A processed batch back: its memory is kept for the reading thread's next round, or freed when enough
 * are kept. *b is empty afterwards. */
void record_queue_recycle(struct record_queue *q, struct record_batch *b);
void record_queue_close(struct record_queue *q);
/* Samples left out so far because the queue was full. */
uint64_t record_queue_dropped(struct record_queue *q);

#endif
