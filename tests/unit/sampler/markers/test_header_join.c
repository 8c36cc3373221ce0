/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_header_join.c: unit tests of the join of tokio's task headers to poll-marker task ids
 * (sampler/markers/header_join): a waker clone inside a marker task's poll registers for that task and learns
 * its header; wakes go to the task the header was learnt for; unknown headers are counted and dropped; a
 * header the allocator gives to a new task is learnt anew; outside a poll a known header keeps its task. The
 * other direction (tls_join.c: tokio's task id -> the poll probes' header): learn and find, no counters; a pair
 * learnt at a place (a poll function) is not found at another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sampler/markers/header_join.h"

static void test_clone_in_poll_then_wake(void **state)
{
    (void)state;
    struct header_join j;
    assert_int_equal(header_join_init(&j), 0);
    uint64_t task = 0;
    assert_false(header_join_wake(&j, 0x7f00a000, &task));          /* not learnt yet: dropped, counted */
    assert_int_equal(j.unknown_wakes, 1);
    assert_int_equal(header_join_registered(&j, 0x7f00a000, true, 1, &task), 1);
    assert_int_equal(task, 1);
    task = 0;
    assert_true(header_join_wake(&j, 0x7f00a000, &task));
    assert_int_equal(task, 1);
    assert_int_equal(header_join_registered(&j, 0x7f00b000, true, 2, &task), 1);
    assert_int_equal(task, 2);
    assert_true(header_join_wake(&j, 0x7f00a000, &task));            /* the first header still its task's */
    assert_int_equal(task, 1);
    assert_true(header_join_wake(&j, 0x7f00b000, &task));
    assert_int_equal(task, 2);
    assert_int_equal(j.unknown_wakes, 1);
    header_join_free(&j);
}

static void test_clone_outside_a_poll(void **state)
{
    (void)state;
    struct header_join j;
    assert_int_equal(header_join_init(&j), 0);
    uint64_t task = 99;
    assert_int_equal(header_join_registered(&j, 0x1000, false, 0, &task), 0);   /* unknown header: dropped */
    assert_int_equal(j.unknown_registrations, 1);
    assert_int_equal(task, 99);
    assert_int_equal(header_join_registered(&j, 0x1000, true, 7, &task), 1);
    assert_int_equal(header_join_registered(&j, 0x1000, false, 0, &task), 1);   /* known: its task */
    assert_int_equal(task, 7);
    assert_int_equal(j.unknown_registrations, 1);
    header_join_free(&j);
}

/* A finished task's header reused: the new task's first registration learns it, wakes go to the new task. */
static void test_header_reused(void **state)
{
    (void)state;
    struct header_join j;
    assert_int_equal(header_join_init(&j), 0);
    uint64_t task;
    assert_int_equal(header_join_registered(&j, 0x2000, true, 10, &task), 1);
    assert_int_equal(header_join_registered(&j, 0x2000, true, 11, &task), 1);
    assert_int_equal(task, 11);
    assert_true(header_join_wake(&j, 0x2000, &task));
    assert_int_equal(task, 11);
    header_join_free(&j);
}

/* Many headers at once (beyond the table's first size): each keeps its own task. */
static void test_many_headers(void **state)
{
    (void)state;
    struct header_join j;
    assert_int_equal(header_join_init(&j), 0);
    uint64_t task;
    for (uint64_t i = 0; i < 5000; i++)
        assert_int_equal(header_join_registered(&j, 0x7f0000000000 + i * 0x100, true, i + 1, &task), 1);
    for (uint64_t i = 0; i < 5000; i += 7) {
        assert_true(header_join_wake(&j, 0x7f0000000000 + i * 0x100, &task));
        assert_int_equal(task, i + 1);
    }
    assert_false(header_join_wake(&j, 0x7f0000000000 + 5000 * 0x100, &task));
    assert_int_equal(j.tasks.n, 5000);
    header_join_free(&j);
}

/* tokio's ids learnt for the probes' headers: a finished task's header passes to a new id, the old id keeps
 * the header it was learnt for; an id never learnt is not found and counts as neither a wake nor a clone. */
static void test_learn_find(void **state)
{
    (void)state;
    struct header_join j;
    assert_int_equal(header_join_init(&j), 0);
    uint64_t header = 0;
    assert_false(header_join_find(&j, 17, 0, &header));
    assert_int_equal(header_join_learn(&j, 17, 0x5600a000, 0), 0);
    assert_int_equal(header_join_learn(&j, 18, 0x5600a000, 0), 0);        /* task 17 done, its header reused */
    assert_true(header_join_find(&j, 17, 0, &header));
    assert_int_equal(header, 0x5600a000);
    assert_int_equal(header_join_learn(&j, 17, 0x5600a000, 0), 0);        /* learnt again: no second entry */
    assert_true(header_join_find(&j, 18, 0, &header));
    assert_int_equal(header, 0x5600a000);
    assert_false(header_join_find(&j, 19, 0, &header));
    assert_int_equal(j.tasks.n, 2);
    assert_int_equal(j.unknown_wakes + j.unknown_registrations, 0);
    header_join_free(&j);
}

/* A pair learnt at a place (the poll function both ids were seen in) is found there and where the place is not
 * known (0), not at another place: a header passed to a task of another future type. */
static void test_learn_find_at_place(void **state)
{
    (void)state;
    struct header_join j;
    assert_int_equal(header_join_init(&j), 0);
    uint64_t task = 0;
    assert_int_equal(header_join_learn(&j, 0x5600a000, 41, 0x401000), 0);
    assert_true(header_join_find(&j, 0x5600a000, 0x401000, &task));
    assert_int_equal(task, 41);
    task = 0;
    assert_true(header_join_find(&j, 0x5600a000, 0, &task));
    assert_int_equal(task, 41);
    assert_false(header_join_find(&j, 0x5600a000, 0x402000, &task));
    assert_int_equal(header_join_learn(&j, 0x5600a000, 42, 0x402000), 0);   /* the new task sampled */
    assert_true(header_join_find(&j, 0x5600a000, 0x402000, &task));
    assert_int_equal(task, 42);
    assert_int_equal(header_join_learn(&j, 0x5600b000, 43, 0), 0);         /* learnt anywhere: found everywhere */
    assert_true(header_join_find(&j, 0x5600b000, 0x401000, &task));
    assert_int_equal(task, 43);
    header_join_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clone_in_poll_then_wake),
        cmocka_unit_test(test_clone_outside_a_poll),
        cmocka_unit_test(test_header_reused),
        cmocka_unit_test(test_many_headers),
        cmocka_unit_test(test_learn_find),
        cmocka_unit_test(test_learn_find_at_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
