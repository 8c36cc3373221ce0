/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_handoff.c: unit tests of base/handoff: every submitted slot consumed once, in order, none refilled
 * before it was consumed (a slow worker and a fast producer over 2 slots), drain waiting for all, the first
 * error kept and reported by every later call with consume not called again, the same behaviour in the
 * producer's thread when no worker runs, and handoff_pending counting the slots the worker has not finished;
 * a worker's idle job runs while nothing is submitted, again while it says it did something, never while a
 * slot waits, and a slot submitted while it runs is consumed (no wakeup lost). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <semaphore.h>
#include <time.h>

#include <cmocka.h>

#include "base/handoff.h"

#define ITEMS 200

struct work {
    int slots[2];                  /* the caller's ring: the item number each slot holds */
    int seen[ITEMS];
    int n_seen;
    int fail_at;                   /* consume fails at this item (-1: never) */
    int calls;
    bool slow;
};

static int consume(void *ctx, size_t slot)
{
    struct work *w = ctx;
    w->calls++;
    if (w->slow && w->calls % 16 == 0) {
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);      /* the producer catches up: every slot is then submitted */
    }
    int item = w->slots[slot];
    if (item == w->fail_at)
        return EIO;
    w->seen[w->n_seen++] = item;
    return 0;
}

static void produce_all(struct handoff *h, struct work *w, int *last_error)
{
    for (int i = 0; i < ITEMS; i++) {
        int error;
        size_t slot = handoff_slot(h, &error);
        if (error) {
            *last_error = error;
            return;
        }
        assert_true(slot < 2);
        w->slots[slot] = i;
        if ((error = handoff_submit(h)) != 0) {
            *last_error = error;
            return;
        }
    }
    *last_error = handoff_drain(h);
}

static void run_in_order(bool threaded_wanted)
{
    struct work w = { .fail_at = -1, .slow = true };
    struct handoff h;
    bool threaded = handoff_open(&h, 2, consume, &w);
    assert_int_equal(threaded, true);
    if (!threaded_wanted)                /* a closed hand-off works as one without a worker: inline */
        assert_int_equal(handoff_close(&h), 0);
    int error = -1;
    produce_all(&h, &w, &error);
    assert_int_equal(error, 0);
    assert_int_equal(w.n_seen, ITEMS);   /* drained: every one consumed */
    for (int i = 0; i < ITEMS; i++)
        assert_int_equal(w.seen[i], i);
    assert_int_equal(handoff_close(&h), 0);
}

static void test_in_order_threaded(void **state)
{
    (void)state;
    run_in_order(true);
}

static void test_in_order_inline(void **state)
{
    (void)state;
    run_in_order(false);
}

static void test_first_error_kept(void **state)
{
    (void)state;
    struct work w = { .fail_at = 50 };
    struct handoff h;
    assert_true(handoff_open(&h, 2, consume, &w));
    int error = 0;
    produce_all(&h, &w, &error);
    assert_int_equal(error, EIO);
    assert_int_equal(handoff_drain(&h), EIO);
    assert_int_equal(handoff_close(&h), EIO);
    assert_int_equal(w.n_seen, 50);      /* items 0-49, then the failure: consume is not called again */
    assert_int_equal(w.calls, 51);
}

/* A worker that finishes a slot only when let through. */
static int consume_gated(void *ctx, size_t slot)
{
    (void)slot;
    return sem_wait(ctx) == 0 ? 0 : EINTR;
}

static void test_pending_counts_unfinished(void **state)
{
    (void)state;
    sem_t gate;
    assert_int_equal(sem_init(&gate, 0, 0), 0);
    struct handoff h;
    assert_true(handoff_open(&h, 2, consume_gated, &gate));
    assert_int_equal(handoff_pending(&h), 0);
    int error = -1;
    for (int i = 0; i < 2; i++) {
        handoff_slot(&h, &error);
        assert_int_equal(error, 0);
        assert_int_equal(handoff_submit(&h), 0);
    }
    assert_int_equal(handoff_pending(&h), 2);      /* the first held in consume, the second waiting */
    assert_int_equal(sem_post(&gate), 0);
    for (int tries = 0; tries < 10000 && handoff_pending(&h) != 1; tries++) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    assert_int_equal(handoff_pending(&h), 1);      /* the first finished */
    assert_int_equal(sem_post(&gate), 0);
    assert_int_equal(handoff_drain(&h), 0);
    assert_int_equal(handoff_pending(&h), 0);
    assert_int_equal(handoff_close(&h), 0);
    assert_int_equal(sem_post(&gate), 0);         /* without a worker: consumed at submit, none pending */
    handoff_slot(&h, &error);
    assert_int_equal(handoff_submit(&h), 0);
    assert_int_equal(handoff_pending(&h), 0);
    sem_destroy(&gate);
}

struct idle_job {
    struct work w;
    atomic_int steps;              /* idle calls that did a step */
    atomic_int idle_calls;
    atomic_int in_consume;         /* consume running now (idle must not be then) */
    atomic_bool overlapped;
    int steps_to_do;
};

static int consume_counted(void *ctx, size_t slot)
{
    struct idle_job *j = ctx;
    atomic_store(&j->in_consume, 1);
    int rc = consume(&j->w, slot);
    atomic_store(&j->in_consume, 0);
    return rc;
}

static bool idle_step(void *ctx)
{
    struct idle_job *j = ctx;
    if (atomic_load(&j->in_consume))
        atomic_store(&j->overlapped, true);
    atomic_fetch_add(&j->idle_calls, 1);
    if (atomic_load(&j->steps) >= j->steps_to_do)
        return false;
    struct timespec ts = { 0, 50000 };
    nanosleep(&ts, NULL);          /* a step takes a while: slots are submitted meanwhile */
    atomic_fetch_add(&j->steps, 1);
    return true;
}

static void test_idle_job(void **state)
{
    (void)state;
    struct idle_job j = { .w = { .fail_at = -1 }, .steps_to_do = 50 };
    struct handoff h;
    assert_true(handoff_open_idle(&h, 2, consume_counted, idle_step, &j));
    for (int tries = 0; tries < 100000 && atomic_load(&j.steps) < 10; tries++) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    assert_true(atomic_load(&j.steps) >= 10);     /* called again and again while it has steps and no slot waits */
    int error = 0;
    produce_all(&h, &j.w, &error);                /* submitted while steps run: each consumed, in order */
    assert_int_equal(error, 0);
    assert_int_equal(handoff_drain(&h), 0);
    assert_int_equal(j.w.n_seen, ITEMS);
    for (int i = 0; i < ITEMS; i++)
        assert_int_equal(j.w.seen[i], i);
    for (int tries = 0; tries < 100000 && atomic_load(&j.steps) < j.steps_to_do; tries++) {
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    assert_int_equal(atomic_load(&j.steps), j.steps_to_do);   /* then no more: it said it had none */
    int calls = atomic_load(&j.idle_calls);
    assert_int_equal(handoff_close(&h), 0);
    assert_true(atomic_load(&j.idle_calls) <= calls + 1);      /* a worker with nothing to do waits */
    assert_false(atomic_load(&j.overlapped));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_threaded),
        cmocka_unit_test(test_in_order_inline),
        cmocka_unit_test(test_first_error_kept),
        cmocka_unit_test(test_pending_counts_unfinished),
        cmocka_unit_test(test_idle_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
