/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_record_queue.c: unit tests of sampler/perf/record_queue: batches come out in the order they went in with
 * their entries intact; a batch that does not fit the byte budget keeps its non-sample records and leaves its
 * samples out, counted; close ends the consumer once the queue is empty; a producer and a consumer thread
 * hand over many batches without losing or reordering one, processed batches' memory going back to the
 * producer; an entry put together from pieces is their bytes in order, padded, a sample counted as one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "sampler/perf/record_queue.h"

/* A fake record of type with payload bytes, its first payload u64 = tag. */
static void add_record(struct record_batch *b, uint32_t type, uint64_t tag, size_t payload)
{
    uint8_t buf[256];
    assert_true(sizeof(struct perf_event_header) + payload <= sizeof(buf) && payload >= 8);
    struct perf_event_header h = { .type = type, .size = (uint16_t)(sizeof(h) + payload) };
    memcpy(buf, &h, sizeof(h));
    memset(buf + sizeof(h), 0xab, payload);
    memcpy(buf + sizeof(h), &tag, 8);
    struct queued_entry e = { .kind = QUEUED_RECORD, .size = h.size, .task_id = tag };
    assert_int_equal(record_batch_add(b, &e, buf), 0);
}

/* The tags of a batch's records, in order, as types (S sample, M other) into out. */
static size_t tags(const struct record_batch *b, uint64_t *out, char *types, size_t max)
{
    size_t n = 0;
    for (size_t at = 0; at < b->bytes.n && n < max;) {
        const struct queued_entry *e = (const struct queued_entry *)(b->bytes.v + at);
        const struct perf_event_header *h = (const struct perf_event_header *)(e + 1);
        assert_int_equal(e->size, h->size);
        memcpy(&out[n], h + 1, 8);
        assert_int_equal(out[n], e->task_id);
        types[n++] = h->type == PERF_RECORD_SAMPLE ? 'S' : 'M';
        at += sizeof(*e) + ((e->size + 7u) & ~7u);
    }
    types[n] = 0;
    return n;
}

/* An offer while the other thread holds the lock leaves the batch with its owner, who adds to it and offers it
 * again: nothing is lost and the order holds. */
static void test_offer_does_not_wait(void **state)
{
    (void)state;
    struct record_queue q;
    assert_int_equal(record_queue_init(&q, 1 << 20), 0);
    struct record_batch b = { 0 };
    add_record(&b, PERF_RECORD_SAMPLE, 1, 8);
    pthread_mutex_lock(&q.lock);                   /* the processing thread, preempted holding it */
    assert_int_equal(record_queue_offer(&q, &b), 1);
    pthread_mutex_unlock(&q.lock);
    assert_int_equal(b.samples, 1);                /* still the reader's */
    add_record(&b, PERF_RECORD_MMAP2, 2, 8);
    assert_int_equal(record_queue_offer(&q, &b), 0);
    assert_int_equal(b.bytes.n, 0);                /* taken */
    struct record_batch got = { 0 };
    uint64_t t[4];
    char types[5];
    assert_true(record_queue_pop(&q, &got));
    assert_int_equal(tags(&got, t, types, 4), 2);
    assert_string_equal(types, "SM");
    assert_int_equal(t[0], 1);
    assert_int_equal(t[1], 2);
    record_batch_free(&got);
    record_queue_free(&q);
}

static void test_order_and_budget(void **state)
{
    (void)state;
    struct record_queue q;
    assert_int_equal(record_queue_init(&q, 1000), 0);
    struct record_batch b = { 0 };
    add_record(&b, PERF_RECORD_SAMPLE, 1, 13);     /* odd sizes: padded */
    add_record(&b, PERF_RECORD_MMAP2, 2, 40);
    add_record(&b, PERF_RECORD_SAMPLE, 3, 8);
    assert_int_equal(b.samples, 2);
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_int_equal(b.bytes.n, 0);                /* taken */
    /* this one does not fit: its samples are left out, the rest kept in order */
    for (uint64_t i = 10; i < 20; i++)
        add_record(&b, i % 3 ? PERF_RECORD_SAMPLE : PERF_RECORD_COMM, i, 64);
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_int_equal(record_queue_dropped(&q), 7);
    struct record_batch got = { 0 };
    uint64_t t[32];
    char types[33];
    assert_true(record_queue_pop(&q, &got));
    assert_int_equal(tags(&got, t, types, 32), 3);
    assert_string_equal(types, "SMS");
    assert_int_equal(t[0], 1);
    assert_int_equal(t[2], 3);
    record_batch_free(&got);
    assert_true(record_queue_pop(&q, &got));
    assert_int_equal(tags(&got, t, types, 32), 3);
    assert_string_equal(types, "MMM");
    assert_int_equal(t[0], 12);
    assert_int_equal(t[2], 18);
    record_batch_free(&got);
    /* room again once consumed */
    add_record(&b, PERF_RECORD_SAMPLE, 30, 64);
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_int_equal(record_queue_dropped(&q), 7);
    record_queue_close(&q);
    assert_true(record_queue_pop(&q, &got));      /* what was queued before close still comes */
    record_batch_free(&got);
    assert_false(record_queue_pop(&q, &got));
    record_queue_free(&q);
}

struct producer {
    struct record_queue *q;
    int batches;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    struct record_batch b = { 0 };
    for (int i = 0; i < p->batches; i++) {
        assert_int_equal(b.bytes.n, 0);     /* empty, or a processed batch's memory, emptied */
        for (int k = 0; k < 1 + i % 5; k++)
            add_record(&b, PERF_RECORD_SAMPLE, (uint64_t)i * 10 + (uint64_t)k, 8 + (size_t)(k * 8));
        record_queue_push(p->q, &b);
    }
    record_batch_free(&b);
    record_queue_close(p->q);
    return NULL;
}

static void test_threads_hand_over_in_order(void **state)
{
    (void)state;
    struct record_queue q;
    assert_int_equal(record_queue_init(&q, SIZE_MAX), 0);
    struct producer p = { &q, 5000 };
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, produce, &p), 0);
    struct record_batch got = { 0 };
    int next = 0;
    while (record_queue_pop(&q, &got)) {
        uint64_t t[8];
        char types[9];
        size_t n = tags(&got, t, types, 8);
        assert_int_equal(n, 1 + next % 5);
        for (size_t k = 0; k < n; k++)
            assert_int_equal(t[k], (uint64_t)next * 10 + k);
        record_queue_recycle(&q, &got);
        assert_null(got.bytes.v);
        next++;
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(next, p.batches);
    assert_int_equal(record_queue_dropped(&q), 0);
    record_queue_free(&q);
}

/* A consumer that keeps only small spares: a big processed batch is freed, a small one kept. */
static void test_big_spares_freed(void **state)
{
    (void)state;
    struct record_queue q;
    assert_int_equal(record_queue_init(&q, SIZE_MAX), 0);
    record_queue_keep_spares_under(&q, 4096);
    struct record_batch b = { 0 }, got = { 0 };
    for (int i = 0; i < 64; i++)
        add_record(&b, PERF_RECORD_SAMPLE, (uint64_t)i, 200);   /* some 16 KB */
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_true(record_queue_pop(&q, &got));
    assert_true(got.bytes.cap > 4096);
    record_queue_recycle(&q, &got);
    assert_int_equal(q.n_spares, 0);                 /* freed */
    assert_null(got.bytes.v);
    add_record(&b, PERF_RECORD_SAMPLE, 100, 64);
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_null(b.bytes.v);                          /* no spare to hand back */
    assert_true(record_queue_pop(&q, &got));
    assert_true(got.bytes.cap <= 4096);
    record_queue_recycle(&q, &got);
    assert_int_equal(q.n_spares, 1);                 /* kept */
    record_batch_free(&b);
    record_queue_close(&q);
    record_queue_free(&q);
}

static void test_recycled_memory_comes_back(void **state)
{
    (void)state;
    struct record_queue q;
    assert_int_equal(record_queue_init(&q, SIZE_MAX), 0);
    struct record_batch b = { 0 }, got = { 0 };
    add_record(&b, PERF_RECORD_SAMPLE, 1, 64);
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_null(b.bytes.v);                        /* no spare yet */
    assert_true(record_queue_pop(&q, &got));
    uint8_t *memory = got.bytes.v;
    record_queue_recycle(&q, &got);
    add_record(&b, PERF_RECORD_MMAP2, 2, 8);
    assert_int_equal(record_queue_push(&q, &b), 0);
    assert_ptr_equal(b.bytes.v, memory);           /* the processed batch's memory, to fill again */
    assert_int_equal(b.bytes.n, 0);
    assert_int_equal(b.samples, 0);
    assert_true(b.bytes.cap > 0);
    assert_true(record_queue_pop(&q, &got));
    uint64_t t[4];
    char types[5];
    assert_int_equal(tags(&got, t, types, 4), 1);
    assert_string_equal(types, "M");
    record_batch_free(&got);
    record_batch_free(&b);
    record_queue_close(&q);
    record_queue_free(&q);
}

static void test_entry_from_pieces(void **state)
{
    (void)state;
    struct record_batch b = { 0 };
    struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(h) + 13 };
    uint64_t tag = 42;
    const char tail[] = "abcde";
    struct batch_piece pieces[] = { { &h, sizeof(h) }, { &tag, 8 }, { tail, 5 } };
    struct queued_entry e = { .kind = QUEUED_RECORD, .size = h.size, .task_id = tag };
    assert_int_equal(record_batch_add_pieces(&b, &e, pieces, 3), 0);
    assert_int_equal(b.samples, 1);
    assert_int_equal(b.bytes.n, sizeof(e) + 24);   /* 21 bytes, padded to 24 */
    const uint8_t *rec = b.bytes.v + sizeof(e);
    assert_memory_equal(rec, &h, sizeof(h));
    assert_memory_equal(rec + sizeof(h), &tag, 8);
    assert_memory_equal(rec + sizeof(h) + 8, tail, 5);
    static const uint8_t zeros[3];
    assert_memory_equal(rec + 21, zeros, 3);
    uint64_t t[2];
    char types[3];
    assert_int_equal(tags(&b, t, types, 2), 1);
    assert_string_equal(types, "S");
    record_batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recycled_memory_comes_back),
        cmocka_unit_test(test_big_spares_freed),
        cmocka_unit_test(test_entry_from_pieces),
        cmocka_unit_test(test_order_and_budget),
        cmocka_unit_test(test_offer_does_not_wait),
        cmocka_unit_test(test_threads_hand_over_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
