/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_task_tracker.c: unit tests of sampler/task_tracker: poll-start/poll-end attribution per thread, poll
 * statistics (polls, total and longest poll time, long polls strictly over 10 ms), spawn/terminate/park counts,
 * mismatched or orphan poll-ends, task_tracker_lost making threads that saw markers (and threads no hit named yet) UNKNOWN until their next
 * poll-start, the round API (queue / round_begin / at / round_end) applying hits queued out of order across threads
 * and buffers per thread in time order (equal times in arrival order), hits after round_end's time surviving into
 * the next round, a randomized comparison with a per-thread reference, task_tracker_sort (busiest first, ties
 * by id) with lookups still correct afterwards, and task_tracker_sample (the per-sample query) against a
 * replay of the hit sequence written here: random hits with probe and return addresses over rounds, a loss
 * among them, samples in the probes' traps, threads without hits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sampler/markers/task_tracker.h"

#define MS 1000000ull

static void expect_state(const struct task_tracker *t, uint32_t tid, enum sampler_task_state st, uint64_t task,
                         uint64_t probe)
{
    enum sampler_task_state s;
    uint64_t id, pa;
    task_tracker_current(t, tid, &s, &id, &pa);
    if (s != st || (st == SAMPLER_IN_TASK && id != task) || pa != probe)
        fail_msg("tid %u: state %d task %llu probe %#llx, want %d %llu %#llx", tid, s, (unsigned long long)id,
                 (unsigned long long)pa, st, (unsigned long long)task, (unsigned long long)probe);
}

static void expect_at(struct task_tracker *t, uint32_t tid, uint64_t time, enum sampler_task_state st,
                      uint64_t task)
{
    struct task_tracker_sample got;
    task_tracker_sample(t, tid, time, 0, &got);
    if (got.state != st || (st == SAMPLER_IN_TASK && got.task_id != task))
        fail_msg("tid %u at %llu: state %d task %llu, want %d %llu", tid, (unsigned long long)time, got.state,
                 (unsigned long long)got.task_id, st, (unsigned long long)task);
}

static const struct sampler_task_stat *stat_of(const struct task_tracker *t, uint64_t id)
{
    const struct sampler_task_stat *found = NULL;
    for (uint32_t i = 0; i < t->tasks.n; i++)
        if (t->tasks.v[i].task_id == id) {
            assert_null(found);   /* one entry per task */
            found = &t->tasks.v[i];
        }
    return found;
}

static void test_poll_attribution(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    assert_int_equal(task_tracker_marker(&t, 1, 100 * MS, MARKER_POLL_START, 7, 0xabc), 0);
    expect_state(&t, 1, SAMPLER_IN_TASK, 7, 0xabc);
    expect_state(&t, 2, SAMPLER_NOT_IN_TASK, 0, 0);   /* other threads unaffected */
    assert_int_equal(task_tracker_marker(&t, 2, 101 * MS, MARKER_POLL_START, 8, 0xdef), 0);
    expect_state(&t, 2, SAMPLER_IN_TASK, 8, 0xdef);
    expect_state(&t, 1, SAMPLER_IN_TASK, 7, 0xabc);
    assert_int_equal(task_tracker_marker(&t, 1, 105 * MS, MARKER_POLL_END, 7, 0xabd), 0);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    expect_state(&t, 2, SAMPLER_IN_TASK, 8, 0xdef);
    /* a new start on a thread mid-poll switches to the new task */
    assert_int_equal(task_tracker_marker(&t, 2, 102 * MS, MARKER_POLL_START, 9, 0xdef), 0);
    expect_state(&t, 2, SAMPLER_IN_TASK, 9, 0xdef);
    task_tracker_free(&t);
}

static void test_poll_statistics(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    /* task 7: 5 ms, then 20 ms (long), then exactly 10 ms (not long) */
    task_tracker_marker(&t, 1, 100 * MS, MARKER_POLL_START, 7, 1);
    task_tracker_marker(&t, 1, 105 * MS, MARKER_POLL_END, 7, 2);
    task_tracker_marker(&t, 1, 200 * MS, MARKER_POLL_START, 7, 1);
    task_tracker_marker(&t, 1, 220 * MS, MARKER_POLL_END, 7, 2);
    task_tracker_marker(&t, 3, 300 * MS, MARKER_POLL_START, 7, 1);
    task_tracker_marker(&t, 3, 310 * MS, MARKER_POLL_END, 7, 2);
    /* task 9 on thread 2, 10 ms + 1 ns: long */
    task_tracker_marker(&t, 2, 1000, MARKER_POLL_START, 9, 1);
    task_tracker_marker(&t, 2, 1000 + 10 * MS + 1, MARKER_POLL_END, 9, 2);
    const struct sampler_task_stat *s7 = stat_of(&t, 7), *s9 = stat_of(&t, 9);
    assert_non_null(s7);
    assert_non_null(s9);
    assert_int_equal(s7->polls, 3);
    assert_int_equal(s7->total_poll_ns, 35 * MS);
    assert_int_equal(s7->longest_poll_ns, 20 * MS);
    assert_int_equal(s9->polls, 1);
    assert_int_equal(s9->total_poll_ns, 10 * MS + 1);
    assert_int_equal(s9->longest_poll_ns, 10 * MS + 1);
    assert_int_equal(t.polls, 4);
    assert_int_equal(t.long_polls, 2);
    assert_int_equal(t.tasks.n, 2);
    task_tracker_free(&t);
}

static void test_mismatched_and_orphan_ends(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    /* an end without a start (recording began mid-poll): closes, counts nothing */
    task_tracker_marker(&t, 1, 50, MARKER_POLL_END, 7, 2);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    assert_int_equal(t.polls, 0);
    /* an end for another task: closes the poll, counts nothing */
    task_tracker_marker(&t, 1, 100, MARKER_POLL_START, 7, 1);
    task_tracker_marker(&t, 1, 200, MARKER_POLL_END, 8, 2);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    assert_int_equal(t.polls, 1);          /* polls are counted when they start */
    assert_int_equal(t.timed_polls, 0);    /* but this one has no duration */
    const struct sampler_task_stat *s7 = stat_of(&t, 7);
    assert_non_null(s7);   /* seen at its start */
    assert_int_equal(s7->polls, 1);
    assert_int_equal(s7->total_poll_ns, 0);
    /* an end on another thread does not close this thread's poll */
    task_tracker_marker(&t, 1, 300, MARKER_POLL_START, 7, 1);
    task_tracker_marker(&t, 2, 350, MARKER_POLL_END, 7, 2);
    expect_state(&t, 1, SAMPLER_IN_TASK, 7, 1);
    assert_int_equal(t.polls, 2);
    assert_int_equal(t.timed_polls, 0);
    /* an end earlier than its start (clock skew between CPUs) counts as 0 ns, not 2^64 - x */
    task_tracker_marker(&t, 1, 290, MARKER_POLL_END, 7, 2);
    assert_int_equal(t.timed_polls, 1);
    assert_int_equal(stat_of(&t, 7)->total_poll_ns, 0);
    assert_int_equal(t.long_polls, 0);
    task_tracker_free(&t);
}

static void test_spawn_terminate_park(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    for (uint64_t id = 1; id <= 5; id++)
        assert_int_equal(task_tracker_marker(&t, 1, id, MARKER_SPAWN, id, 0), 0);
    task_tracker_marker(&t, 1, 10, MARKER_SPAWN, 3, 0);   /* the same id again: counted, one task entry */
    task_tracker_marker(&t, 2, 11, MARKER_TERMINATE, 1, 0);
    task_tracker_marker(&t, 2, 12, MARKER_TERMINATE, 2, 0);
    task_tracker_marker(&t, 2, 13, MARKER_PARK, 0, 0);
    task_tracker_marker(&t, 2, 14, MARKER_UNPARK, 0, 0);
    task_tracker_marker(&t, 2, 15, MARKER_PARK, 0, 0);
    assert_int_equal(t.spawns, 6);
    assert_int_equal(t.terminates, 2);
    assert_int_equal(t.parks, 2);
    assert_int_equal(t.unparks, 1);
    assert_int_equal(t.tasks.n, 5);
    assert_int_equal(t.polls, 0);
    for (uint64_t id = 1; id <= 5; id++)
        assert_non_null(stat_of(&t, id));
    /* none of these change what a thread is polling */
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    expect_state(&t, 2, SAMPLER_NOT_IN_TASK, 0, 0);
    task_tracker_free(&t);
}

static void test_lost(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    task_tracker_marker(&t, 1, 100, MARKER_POLL_START, 7, 0xa);   /* in a poll */
    task_tracker_marker(&t, 2, 100, MARKER_POLL_START, 8, 0xa);
    task_tracker_marker(&t, 2, 200, MARKER_POLL_END, 8, 0xb);     /* between polls */
    task_tracker_marker(&t, 4, 150, MARKER_SPAWN, 9, 0xc);        /* spawn only: not a poll marker */
    task_tracker_lost(&t);
    expect_state(&t, 1, SAMPLER_UNKNOWN_TASK, 0, 0);
    expect_state(&t, 2, SAMPLER_UNKNOWN_TASK, 0, 0);
    /* named by no hit yet: the lost hits may have been its own (a worker whose every hit was lost) */
    expect_state(&t, 3, SAMPLER_UNKNOWN_TASK, 0, 0);
    expect_state(&t, 4, SAMPLER_NOT_IN_TASK, 0, 0);   /* seen, and not polling */
    /* a thread first named after the loss is known from its first poll-start */
    task_tracker_marker(&t, 5, 205, MARKER_SPAWN, 14, 0xc);
    expect_state(&t, 5, SAMPLER_UNKNOWN_TASK, 0, 0);
    task_tracker_marker(&t, 5, 206, MARKER_POLL_START, 15, 0xa);
    expect_state(&t, 5, SAMPLER_IN_TASK, 15, 0xa);
    /* while the loss's end is not known, no start makes the task known, and no end either */
    task_tracker_marker(&t, 1, 210, MARKER_POLL_START, 12, 0xa);
    expect_state(&t, 1, SAMPLER_UNKNOWN_TASK, 0, 0);
    task_tracker_marker(&t, 1, 220, MARKER_POLL_END, 12, 0xb);
    expect_state(&t, 1, SAMPLER_UNKNOWN_TASK, 0, 0);
    task_tracker_loss_seen_by(&t, 250);
    /* a start before the loss's end may have lost its end: still unknown */
    task_tracker_marker(&t, 1, 240, MARKER_POLL_START, 13, 0xa);
    expect_state(&t, 1, SAMPLER_UNKNOWN_TASK, 0, 0);
    /* still unknown until this thread's own next poll-start after the loss */
    task_tracker_marker(&t, 1, 300, MARKER_POLL_START, 10, 0xa);
    expect_state(&t, 1, SAMPLER_IN_TASK, 10, 0xa);
    expect_state(&t, 2, SAMPLER_UNKNOWN_TASK, 0, 0);
    task_tracker_marker(&t, 2, 400, MARKER_POLL_START, 11, 0xa);
    expect_state(&t, 2, SAMPLER_IN_TASK, 11, 0xa);
    /* a second loss later hits them again */
    task_tracker_lost(&t);
    expect_state(&t, 1, SAMPLER_UNKNOWN_TASK, 0, 0);
    task_tracker_free(&t);
}

static void queue(struct task_tracker *t, uint32_t tid, uint64_t time, enum marker_kind kind, uint64_t arg0);

/* SPEC section 3 with rounds: a poll whose start was lost is never filed under the thread (not in a task) nor
 * under the task before it; samples are [unknown task] from the unapplied hits until the first poll-start after
 * the loss, on every thread that polls (the lost record's thread is not known). */
static void test_lost_in_round(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    queue(&t, 1, 10, MARKER_POLL_START, 7);
    queue(&t, 1, 20, MARKER_POLL_END, 7);
    /* start of task 8 at 30: lost */
    queue(&t, 1, 40, MARKER_POLL_END, 8);
    queue(&t, 1, 60, MARKER_POLL_START, 9);
    queue(&t, 1, 70, MARKER_POLL_END, 9);
    queue(&t, 2, 15, MARKER_POLL_START, 5);      /* another thread, polling through the loss */
    queue(&t, 2, 80, MARKER_SPAWN, 6);
    queue(&t, 3, 15, MARKER_SPAWN, 6);           /* a thread that only spawns: not polling, not concerned */
    task_tracker_lost(&t);
    task_tracker_loss_seen_by(&t, 50);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    for (uint64_t time = 5; time < 60; time += 5)
        expect_at(&t, 1, time, SAMPLER_UNKNOWN_TASK, 0);
    expect_at(&t, 1, 65, SAMPLER_IN_TASK, 9);
    expect_at(&t, 1, 75, SAMPLER_NOT_IN_TASK, 0);
    expect_at(&t, 2, 60, SAMPLER_UNKNOWN_TASK, 0);   /* its start predates the loss's end */
    expect_at(&t, 3, 60, SAMPLER_NOT_IN_TASK, 0);
    task_tracker_round_end(&t, 100);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    expect_state(&t, 2, SAMPLER_UNKNOWN_TASK, 0, 0);
    assert_int_equal(t.polls, 3);                    /* polls still counted */
    /* the next round: thread 2's next start makes it known */
    queue(&t, 2, 120, MARKER_POLL_START, 11);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    expect_at(&t, 2, 110, SAMPLER_UNKNOWN_TASK, 0);
    expect_at(&t, 2, 130, SAMPLER_IN_TASK, 11);
    task_tracker_round_end(&t, 200);
    expect_state(&t, 2, SAMPLER_IN_TASK, 11, 0x1000 + MARKER_POLL_START);
    task_tracker_free(&t);
}

/* ---- rounds ----------------------------------------------------------------------------------------------- */

static void queue(struct task_tracker *t, uint32_t tid, uint64_t time, enum marker_kind kind, uint64_t arg0);

/* A sample taken in a poll marker's trap (its instruction pointer at the probe or just past its breakpoint) is on
 * the poll's side of the stamp: the task's, not the thread's. */
static void test_sample_in_marker_trap(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    struct marker_hit hits[] = {
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 10, .arg0 = 7, .probe_addr = 0x500 },
        { .tid = 1, .kind = MARKER_POLL_END, .time_ns = 20, .arg0 = 7, .probe_addr = 0x600 },
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 30, .arg0 = 8, .probe_addr = 0x500 },
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(task_tracker_queue(&t, &hits[i]), 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    struct task_tracker_sample at;
    task_tracker_sample(&t, 1, 22, 0x601, &at);         /* in the end probe's trap, after its stamp */
    assert_int_equal(at.state, SAMPLER_IN_TASK);
    assert_int_equal(at.task_id, 7);
    assert_int_equal(at.probe_addr, 0x500);
    task_tracker_sample(&t, 1, 22, 0x600, &at);
    assert_int_equal(at.state, SAMPLER_IN_TASK);
    task_tracker_sample(&t, 1, 28, 0x501, &at);         /* in the start probe's trap, before its stamp */
    assert_int_equal(at.state, SAMPLER_IN_TASK);
    assert_int_equal(at.task_id, 8);
    task_tracker_sample(&t, 1, 22, 0x1234, &at);        /* elsewhere between polls: the thread's */
    assert_int_equal(at.state, SAMPLER_NOT_IN_TASK);
    assert_int_equal(at.task_id | at.probe_addr, 0);
    task_tracker_sample(&t, 1, 22, 0x502, &at);         /* not the probe's instruction */
    assert_int_equal(at.state, SAMPLER_NOT_IN_TASK);
    task_tracker_free(&t);
}

/* A start lost without a loss being reported (a BPF program the kernel skipped) shows in the next end, which does
 * not close the open poll: samples before that end are [unknown task], never the thread's or the previous task's. */
static void test_silent_loss_seen_in_next_end(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    queue(&t, 1, 10, MARKER_POLL_START, 7);
    queue(&t, 1, 20, MARKER_POLL_END, 7);
    /* start of 8 at 30: lost silently */
    queue(&t, 1, 35, MARKER_SPAWN, 99);          /* not a poll hit: looked past */
    queue(&t, 1, 40, MARKER_POLL_END, 8);
    queue(&t, 1, 50, MARKER_POLL_START, 9);
    /* end of 9 at 60 and start of 10 at 65: lost; end of 10 at 70 */
    queue(&t, 1, 70, MARKER_POLL_END, 10);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    expect_at(&t, 1, 5, SAMPLER_NOT_IN_TASK, 0);  /* next is a start: consistent */
    expect_at(&t, 1, 15, SAMPLER_IN_TASK, 7);
    expect_at(&t, 1, 25, SAMPLER_UNKNOWN_TASK, 0);
    expect_at(&t, 1, 38, SAMPLER_UNKNOWN_TASK, 0);
    expect_at(&t, 1, 45, SAMPLER_NOT_IN_TASK, 0);
    expect_at(&t, 1, 55, SAMPLER_UNKNOWN_TASK, 0); /* in 9, or after it, or in 10: not known */
    expect_at(&t, 1, 75, SAMPLER_NOT_IN_TASK, 0);  /* nothing after: what the hits say */
    task_tracker_round_end(&t, 100);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    assert_int_equal(t.polls, 2);
    task_tracker_free(&t);
}

static void queue(struct task_tracker *t, uint32_t tid, uint64_t time, enum marker_kind kind, uint64_t arg0)
{
    struct marker_hit h = { .tid = tid, .kind = kind, .time_ns = time, .arg0 = arg0, .probe_addr = 0x1000 + kind };
    assert_int_equal(task_tracker_queue(t, &h), 0);
}

static void test_round_out_of_order(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    /* "buffer A" (CPU 0) then "buffer B" (CPU 1): each in time order, the two interleaved in time */
    queue(&t, 1, 300, MARKER_POLL_START, 11);
    queue(&t, 2, 150, MARKER_POLL_START, 20);
    queue(&t, 1, 400, MARKER_POLL_END, 11);
    queue(&t, 1, 100, MARKER_POLL_START, 10);   /* buffer B */
    queue(&t, 2, 250, MARKER_POLL_END, 20);
    queue(&t, 1, 200, MARKER_POLL_END, 10);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    /* nothing is applied until a sample asks */
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);
    expect_at(&t, 1, 50, SAMPLER_NOT_IN_TASK, 0);
    expect_at(&t, 2, 160, SAMPLER_IN_TASK, 20);
    expect_at(&t, 1, 100, SAMPLER_IN_TASK, 10);   /* a marker at the sample's own time counts */
    expect_at(&t, 1, 150, SAMPLER_IN_TASK, 10);
    expect_at(&t, 1, 250, SAMPLER_NOT_IN_TASK, 0);
    expect_at(&t, 2, 249, SAMPLER_IN_TASK, 20);
    expect_at(&t, 2, 260, SAMPLER_NOT_IN_TASK, 0);
    expect_at(&t, 1, 310, SAMPLER_IN_TASK, 11);
    expect_at(&t, 3, 310, SAMPLER_NOT_IN_TASK, 0);   /* a thread without hits */
    task_tracker_round_end(&t, 1000);
    expect_state(&t, 1, SAMPLER_NOT_IN_TASK, 0, 0);   /* round_end applied the rest */
    assert_int_equal(task_tracker_pending(&t), 0);
    /* durations come from the hits' own times, not from when they were applied */
    assert_int_equal(stat_of(&t, 10)->total_poll_ns, 100);
    assert_int_equal(stat_of(&t, 11)->total_poll_ns, 100);
    assert_int_equal(stat_of(&t, 20)->total_poll_ns, 100);
    assert_int_equal(t.polls, 3);
    task_tracker_free(&t);
}

static void test_round_keeps_later_hits(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    queue(&t, 1, 500, MARKER_POLL_END, 5);
    queue(&t, 2, 120, MARKER_POLL_START, 6);
    queue(&t, 1, 100, MARKER_POLL_START, 5);
    queue(&t, 2, 900, MARKER_POLL_END, 6);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    expect_at(&t, 1, 200, SAMPLER_IN_TASK, 5);
    task_tracker_round_end(&t, 300);   /* thread 2's start at 120 applied; both ends wait */
    expect_state(&t, 1, SAMPLER_IN_TASK, 5, 0x1000 + MARKER_POLL_START);
    expect_state(&t, 2, SAMPLER_IN_TASK, 6, 0x1000 + MARKER_POLL_START);
    assert_int_equal(task_tracker_pending(&t), 2);
    assert_int_equal(t.polls, 2);          /* both starts applied, counted when they start */
    assert_int_equal(t.timed_polls, 0);
    /* next round: new hits join the kept ones */
    queue(&t, 1, 600, MARKER_POLL_START, 12);
    queue(&t, 2, 400, MARKER_POLL_START, 13);   /* earlier than the kept end at 900 */
    assert_int_equal(task_tracker_round_begin(&t), 0);
    expect_at(&t, 1, 550, SAMPLER_NOT_IN_TASK, 0);   /* the kept end at 500 */
    expect_at(&t, 1, 700, SAMPLER_IN_TASK, 12);
    expect_at(&t, 2, 400, SAMPLER_UNKNOWN_TASK, 0);  /* in 13, but end 6 follows: hits were lost */
    expect_at(&t, 2, 950, SAMPLER_NOT_IN_TASK, 0);   /* end 6 at 900 closes the thread's poll */
    task_tracker_round_end(&t, 1000);
    assert_int_equal(task_tracker_pending(&t), 0);
    assert_int_equal(stat_of(&t, 5)->polls, 1);
    assert_int_equal(stat_of(&t, 5)->total_poll_ns, 400);
    assert_int_equal(stat_of(&t, 6)->polls, 1);            /* it started once... */
    assert_int_equal(stat_of(&t, 6)->total_poll_ns, 0);    /* ...but its end came after another start */
    assert_int_equal(t.timed_polls, 1);
    /* an empty round is harmless */
    assert_int_equal(task_tracker_round_begin(&t), 0);
    expect_at(&t, 1, 2000, SAMPLER_IN_TASK, 12);
    task_tracker_round_end(&t, 3000);
    task_tracker_free(&t);
}

/* Hits with equal times are applied in the order they were queued (an end and the next start at one instant). */
static void test_round_equal_times_keep_arrival_order(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    /* many hits of other threads around them, so the sort has real merging to do */
    for (uint32_t i = 0; i < 50; i++)
        queue(&t, 100 + i % 5, 1000 - i, MARKER_PARK, 0);
    queue(&t, 1, 50, MARKER_POLL_START, 1);
    queue(&t, 1, 100, MARKER_POLL_END, 1);
    queue(&t, 1, 100, MARKER_POLL_START, 2);
    queue(&t, 2, 100, MARKER_POLL_START, 3);
    queue(&t, 2, 100, MARKER_POLL_END, 3);
    for (uint32_t i = 0; i < 50; i++)
        queue(&t, 100 + i % 5, 10 + i, MARKER_UNPARK, 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    expect_at(&t, 1, 100, SAMPLER_IN_TASK, 2);
    expect_at(&t, 2, 100, SAMPLER_NOT_IN_TASK, 0);
    task_tracker_round_end(&t, 5000);   /* statistics are applied in time order when the round ends */
    assert_int_equal(stat_of(&t, 1)->polls, 1);
    assert_int_equal(stat_of(&t, 3)->polls, 1);
    assert_int_equal(t.parks, 50);
    assert_int_equal(t.unparks, 50);
    task_tracker_free(&t);
}

/* Random hits over several threads and rounds, queued in a scrambled order, against a reference that applies each
 * thread's hits in (time, arrival) order. */
struct ref_hit {
    uint32_t tid;
    uint64_t time;
    enum marker_kind kind;
    uint64_t task;
    size_t seq;
};

static int ref_order(const void *a, const void *b)
{
    const struct ref_hit *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Mostly poll starts and ends, with hits that leave the state alone (spawn) or end only a poll in progress
 * (a poll function's return): attribution replays those from the last start or end. */
static enum marker_kind random_kind(void)
{
    switch (rand() % 8) {
    case 0:
    case 1: return MARKER_POLL_END;
    case 2: return MARKER_SPAWN;
    case 3: return MARKER_POLL_RETURN;
    default: return MARKER_POLL_START;
    }
}

static void ref_apply(const struct ref_hit *h, bool *ref_in, uint64_t *ref_task)
{
    if (h->kind == MARKER_POLL_START) {
        ref_in[h->tid] = true;
        ref_task[h->tid] = h->task;
    } else if (h->kind == MARKER_POLL_END || h->kind == MARKER_POLL_RETURN) {
        ref_in[h->tid] = false;
    }
}

static void test_round_random_against_reference(void **state)
{
    (void)state;
    enum { THREADS = 8, PER_ROUND = 600, ROUNDS = 6 };
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    struct ref_hit *all = calloc(PER_ROUND * ROUNDS, sizeof(*all));
    assert_non_null(all);
    size_t n_all = 0, seq = 0;
    srand(777);
    /* reference per thread state */
    uint64_t ref_task[THREADS + 1] = { 0 };
    bool ref_in[THREADS + 1] = { false };
    size_t applied = 0;   /* all[] sorted by time; hits before this index are applied in the reference */
    uint64_t round_end = 0;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t lo = round_end > 300 ? round_end - 300 : 0;   /* some hits predate the previous cut */
        uint64_t hi = round_end + 2000;
        size_t first_new = n_all;
        for (int i = 0; i < PER_ROUND; i++) {
            struct ref_hit h = {
                .tid = 1 + (uint32_t)(rand() % THREADS),
                .time = lo + (uint64_t)(rand() % (int)(hi - lo)),
                .kind = random_kind(),
                .task = 1 + (uint64_t)(rand() % 20),
                .seq = seq++,
            };
            /* keep hits after the previous cut so the reference's order is well defined */
            if (h.time <= round_end)
                h.time = round_end + 1 + h.time % 7;
            all[n_all++] = h;
        }
        /* queue this round's hits in a scrambled order, but each thread's hits of equal time in seq order
         * (arrival order is what breaks ties): queue in reverse-time order by thread parity, stable per time */
        size_t cnt = n_all - first_new;
        struct ref_hit *scr = malloc(cnt * sizeof(*scr));
        assert_non_null(scr);
        memcpy(scr, all + first_new, cnt * sizeof(*scr));
        /* shuffle, then restore seq order among hits of the same tid and time (a stable relation) */
        for (size_t i = cnt; i > 1; i--) {
            size_t j = (size_t)rand() % i;
            struct ref_hit tmp = scr[i - 1];
            scr[i - 1] = scr[j];
            scr[j] = tmp;
        }
        for (size_t i = 0; i < cnt; i++)
            for (size_t j = i + 1; j < cnt; j++)
                if (scr[i].tid == scr[j].tid && scr[i].time == scr[j].time && scr[i].seq > scr[j].seq) {
                    struct ref_hit tmp = scr[i];
                    scr[i] = scr[j];
                    scr[j] = tmp;
                }
        for (size_t i = 0; i < cnt; i++)
            queue(&t, scr[i].tid, scr[i].time, scr[i].kind, scr[i].task);
        free(scr);
        assert_int_equal(task_tracker_round_begin(&t), 0);
        qsort(all, n_all, sizeof(*all), ref_order);
        /* samples at increasing times on random threads */
        uint64_t cut = round_end + 1500;
        for (uint64_t now = round_end; now <= cut; now += 1 + (uint64_t)(rand() % 40)) {
            while (applied < n_all && all[applied].time <= now) {
                const struct ref_hit *h = &all[applied++];
                ref_apply(h, ref_in, ref_task);
            }
            uint32_t tid = 1 + (uint32_t)(rand() % THREADS);
            struct task_tracker_sample at;
            task_tracker_sample(&t, tid, now, 0, &at);
            enum sampler_task_state st = at.state;
            uint64_t id = at.task_id;
            /* the thread's next poll start or end queued: an end that does not close the open poll (its start
             * or a start before it was lost) makes the task unknown */
            enum sampler_task_state want = ref_in[tid] ? SAMPLER_IN_TASK : SAMPLER_NOT_IN_TASK;
            for (size_t k = applied; k < n_all; k++) {
                if (all[k].tid != tid || (all[k].kind != MARKER_POLL_START && all[k].kind != MARKER_POLL_END))
                    continue;
                if (all[k].kind == MARKER_POLL_END && !(ref_in[tid] && ref_task[tid] == all[k].task))
                    want = SAMPLER_UNKNOWN_TASK;
                break;
            }
            if (st != want || (want == SAMPLER_IN_TASK && id != ref_task[tid]))
                fail_msg("round %d tid %u at %llu: state %d task %llu, reference %d %llu", round, tid,
                         (unsigned long long)now, st, (unsigned long long)id, ref_in[tid],
                         (unsigned long long)ref_task[tid]);
        }
        task_tracker_round_end(&t, cut);
        while (applied < n_all && all[applied].time <= cut) {
            const struct ref_hit *h = &all[applied++];
            ref_apply(h, ref_in, ref_task);
        }
        for (uint32_t tid = 1; tid <= THREADS; tid++) {
            enum sampler_task_state st;
            uint64_t id, pa;
            task_tracker_current(&t, tid, &st, &id, &pa);
            assert_int_equal(st, ref_in[tid] ? SAMPLER_IN_TASK : SAMPLER_NOT_IN_TASK);
            if (ref_in[tid])
                assert_int_equal(id, ref_task[tid]);
        }
        assert_int_equal(task_tracker_pending(&t), n_all - applied);
        round_end = cut;
    }
    free(all);
    task_tracker_free(&t);
}

/* ---- sorting ---------------------------------------------------------------------------------------------- */

static void poll_for(struct task_tracker *t, uint32_t tid, uint64_t task, uint64_t start, uint64_t ns)
{
    task_tracker_marker(t, tid, start, MARKER_POLL_START, task, 0);
    task_tracker_marker(t, tid, start + ns, MARKER_POLL_END, task, 0);
}

static void test_sort_busiest_first(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    poll_for(&t, 1, 1, 0, 5);
    poll_for(&t, 1, 3, 100, 30);
    poll_for(&t, 1, 2, 200, 30);
    task_tracker_marker(&t, 1, 300, MARKER_SPAWN, 4, 0);   /* never polled */
    poll_for(&t, 2, 5, 0, 12 * MS);
    task_tracker_sort(&t);
    assert_int_equal(t.tasks.n, 5);
    static const uint64_t order[] = { 5, 2, 3, 1, 4 };   /* by total time, ties by id */
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(t.tasks.v[i].task_id, order[i]);
    /* lookups by id still reach the right entries after the move */
    poll_for(&t, 1, 1, 1000, 100);
    poll_for(&t, 1, 4, 2000, 7);
    task_tracker_marker(&t, 1, 3000, MARKER_SPAWN, 2, 0);
    assert_int_equal(t.tasks.n, 5);   /* no duplicate entries */
    assert_int_equal(stat_of(&t, 1)->total_poll_ns, 105);
    assert_int_equal(stat_of(&t, 1)->polls, 2);
    assert_int_equal(stat_of(&t, 4)->total_poll_ns, 7);
    assert_int_equal(stat_of(&t, 2)->total_poll_ns, 30);
    assert_int_equal(stat_of(&t, 5)->longest_poll_ns, 12 * MS);
    task_tracker_sort(&t);
    static const uint64_t order2[] = { 5, 1, 2, 3, 4 };
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(t.tasks.v[i].task_id, order2[i]);
    /* many tasks: the rebuilt index still finds each */
    for (uint64_t id = 100; id < 3100; id++)
        poll_for(&t, 3, id, id * 10, id % 97);
    task_tracker_sort(&t);
    for (uint32_t i = 1; i < t.tasks.n; i++)
        assert_true(t.tasks.v[i - 1].total_poll_ns >= t.tasks.v[i].total_poll_ns);
    for (uint64_t id = 100; id < 3100; id++)
        poll_for(&t, 3, id, id * 10, 1);
    assert_int_equal(t.tasks.n, 3005);
    for (uint64_t id = 100; id < 3100; id += 37) {
        const struct sampler_task_stat *s = stat_of(&t, id);
        assert_non_null(s);
        assert_int_equal(s->polls, 2);
        assert_int_equal(s->total_poll_ns, id % 97 + 1);
    }
    task_tracker_free(&t);
}

/* The wait profile's task events: told as hits are applied, in time order per thread (queued out of order),
 * a runtime poll function's return as POLL_END of the task it ends, wakes and registrations unchanged (a
 * registration with its hit's return address, its call site); a hit after the round's end waits for the next
 * round. */
struct told { uint32_t tid; enum marker_kind kind; uint64_t task, time, ret_addr; };
struct told_list { struct told v[16]; size_t n; };
static void tell(void *ctx, uint32_t tid, enum marker_kind kind, uint64_t task_id, uint64_t time_ns, uint64_t ret_addr)
{
    struct told_list *l = ctx;
    if (l->n < 16)
        l->v[l->n++] = (struct told){ tid, kind, task_id, time_ns, ret_addr };
}

static void test_task_events(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    struct told_list l = { .n = 0 };
    t.on_task_event = tell;
    t.poll_ctx = &l;
    const struct marker_hit hits[] = {
        { .tid = 1, .kind = MARKER_WAKER_REGISTERED, .time_ns = 150, .arg0 = 0xa, .ret_addr = 0x401234 },
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 100, .arg0 = 0xa },
        { .tid = 2, .kind = MARKER_WAKE, .time_ns = 170, .arg0 = 0xa },
        { .tid = 1, .kind = MARKER_POLL_RETURN, .time_ns = 200 },
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 400, .arg0 = 0xb },   /* after the round */
    };
    for (size_t i = 0; i < sizeof(hits) / sizeof(hits[0]); i++)
        assert_int_equal(task_tracker_queue(&t, &hits[i]), 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    task_tracker_round_end(&t, 300);
    assert_int_equal(l.n, 4);
    size_t on1 = 0;
    const enum marker_kind want1[] = { MARKER_POLL_START, MARKER_WAKER_REGISTERED, MARKER_POLL_END };
    const uint64_t time1[] = { 100, 150, 200 };
    for (size_t i = 0; i < l.n; i++) {
        assert_int_equal(l.v[i].task, 0xa);
        if (l.v[i].tid == 2) {
            assert_int_equal(l.v[i].kind, MARKER_WAKE);
            continue;
        }
        assert_int_equal(l.v[i].kind, want1[on1]);
        assert_int_equal(l.v[i].time, time1[on1]);
        assert_int_equal(l.v[i].ret_addr, want1[on1] == MARKER_WAKER_REGISTERED ? 0x401234 : 0);
        on1++;
    }
    assert_int_equal(on1, 3);
    task_tracker_round_end(&t, UINT64_MAX);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.v[4].kind, MARKER_POLL_START);
    assert_int_equal(l.v[4].task, 0xb);
    task_tracker_free(&t);
}

/* Runtime waker-function hits in a marker program (MARKER_RUNTIME_ kinds, arg0 a header): told like wakes and
 * registrations, before the hit changes anything, so task_tracker_current in the callback gives the marker
 * task the thread polled at the hit (what the sampler joins the header to); they change no thread's state. */
struct polled_list { struct task_tracker *t; enum marker_kind kind[8]; uint64_t arg[8], polled[8]; bool in[8]; size_t n; };
static void tell_polled(void *ctx, uint32_t tid, enum marker_kind kind, uint64_t task_id, uint64_t time_ns,
                        uint64_t ret_addr)
{
    struct polled_list *l = ctx;
    (void)time_ns;
    (void)ret_addr;
    if (l->n >= 8)
        return;
    enum sampler_task_state st;
    uint64_t probe;
    task_tracker_current(l->t, tid, &st, &l->polled[l->n], &probe);
    l->in[l->n] = st == SAMPLER_IN_TASK;
    l->kind[l->n] = kind;
    l->arg[l->n++] = task_id;
}

static void test_runtime_waker_events(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    struct polled_list l = { .t = &t, .n = 0 };
    t.on_task_event = tell_polled;
    t.poll_ctx = &l;
    const struct marker_hit hits[] = {
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 100, .arg0 = 5 },
        { .tid = 1, .kind = MARKER_RUNTIME_WAKER_REGISTERED, .time_ns = 150, .arg0 = 0x7f00a000 },
        { .tid = 1, .kind = MARKER_POLL_END, .time_ns = 200, .arg0 = 5 },
        { .tid = 1, .kind = MARKER_RUNTIME_WAKE, .time_ns = 250, .arg0 = 0x7f00a000 },
    };
    for (size_t i = 0; i < sizeof(hits) / sizeof(hits[0]); i++)
        assert_int_equal(task_tracker_queue(&t, &hits[i]), 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    struct task_tracker_sample at;
    task_tracker_sample(&t, 1, 160, 0, &at);                /* a stack at the clone: inside task 5's poll */
    assert_int_equal(at.state, SAMPLER_IN_TASK);
    assert_int_equal(at.task_id, 5);
    task_tracker_round_end(&t, UINT64_MAX);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.kind[1], MARKER_RUNTIME_WAKER_REGISTERED);
    assert_int_equal(l.arg[1], 0x7f00a000);
    assert_true(l.in[1]);
    assert_int_equal(l.polled[1], 5);
    assert_int_equal(l.kind[3], MARKER_RUNTIME_WAKE);
    assert_false(l.in[3]);                                    /* after the poll's end */
    assert_int_equal(t.polls, 1);                             /* no poll, no task from the header */
    assert_int_equal(t.tasks.n, 1);
    task_tracker_free(&t);
}

/* The return address a poll function's entry recorded (its return probe's trampoline replaces it on the
 * stack): known inside that poll, from queued hits and then from the applied state; not after its return;
 * the last probe hit before a time for samples in an out-of-line single step. */
/* A sample read after its round (written late) finds the hits before it applied: its thread's state then is
 * known only when no hit came between its time and the round's end. */
static void test_sample_after_its_round(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    const struct marker_hit hits[] = {
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 100, .arg0 = 0xa, .probe_addr = 0x1000 },
        { .tid = 1, .kind = MARKER_POLL_END, .time_ns = 200, .arg0 = 0xa, .probe_addr = 0x1100 },
        { .tid = 2, .kind = MARKER_POLL_START, .time_ns = 120, .arg0 = 0xb, .probe_addr = 0x1000 },
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(task_tracker_queue(&t, &hits[i]), 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    struct task_tracker_sample at;
    task_tracker_sample(&t, 1, 150, 0, &at);                /* in its round: in the poll */
    assert_int_equal(at.state, SAMPLER_IN_TASK);
    assert_int_equal(at.task_id, 0xa);
    task_tracker_round_end(&t, 300);
    task_tracker_sample(&t, 1, 150, 0, &at);                /* late: the end at 200 came between */
    assert_int_equal(at.state, SAMPLER_UNKNOWN_TASK);
    assert_int_equal(at.task_id, 0);
    task_tracker_sample(&t, 1, 250, 0, &at);                /* late, but after the thread's last hit */
    assert_int_equal(at.state, SAMPLER_NOT_IN_TASK);
    task_tracker_sample(&t, 2, 150, 0, &at);                /* late, after its thread's last hit */
    assert_int_equal(at.state, SAMPLER_IN_TASK);
    assert_int_equal(at.task_id, 0xb);
    task_tracker_sample(&t, 2, 110, 0, &at);                /* late, before its start */
    assert_int_equal(at.state, SAMPLER_UNKNOWN_TASK);
    task_tracker_sample(&t, 1, 350, 0, &at);                /* a later round's */
    assert_int_equal(at.state, SAMPLER_NOT_IN_TASK);
    task_tracker_free(&t);
}

static void test_poll_return_address(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    const struct marker_hit hits[] = {
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 100, .arg0 = 0xa, .probe_addr = 0x1000,
          .ret_addr = 0x4242, .ret_slot = 0x7ff0 },
        { .tid = 1, .kind = MARKER_WAKER_REGISTERED, .time_ns = 150, .arg0 = 0xa, .probe_addr = 0x2000 },
        { .tid = 1, .kind = MARKER_POLL_RETURN, .time_ns = 200, .probe_addr = 0x3000 },
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(task_tracker_queue(&t, &hits[i]), 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    struct task_tracker_sample at;
    task_tracker_sample(&t, 1, 120, 0, &at);
    assert_int_equal(at.ret_slot, 0x7ff0);
    assert_int_equal(at.ret_addr, 0x4242);
    assert_int_equal(at.last_hit_addr, 0x1000);
    task_tracker_sample(&t, 1, 160, 0, &at);                /* a registration does not end the poll */
    assert_int_equal(at.ret_addr, 0x4242);
    assert_int_equal(at.last_hit_addr, 0x2000);
    task_tracker_sample(&t, 1, 250, 0, &at);
    assert_int_equal(at.ret_slot | at.ret_addr, 0);
    task_tracker_sample(&t, 1, 50, 0, &at);                 /* before any hit */
    assert_int_equal(at.ret_addr, 0);
    assert_int_equal(at.last_hit_addr, 0);
    task_tracker_sample(&t, 2, 160, 0, &at);                /* a thread without hits */
    assert_int_equal(at.ret_addr | at.last_hit_addr, 0);
    task_tracker_round_end(&t, 150);                        /* the start applied, the return still queued */
    task_tracker_sample(&t, 1, 180, 0, &at);
    assert_int_equal(at.ret_slot, 0x7ff0);
    assert_int_equal(at.ret_addr, 0x4242);
    assert_int_equal(at.last_hit_addr, 0x2000);
    task_tracker_round_end(&t, UINT64_MAX);
    task_tracker_sample(&t, 1, 300, 0, &at);
    assert_int_equal(at.ret_addr, 0);
    assert_int_equal(at.last_hit_addr, 0x3000);
    task_tracker_free(&t);
}

/* A sample at a probe's address or the instruction after its breakpoint, next to that probe's hit in time (the
 * last hit before it or the first after), may be in the probe's trap: trap_addr names the probe; elsewhere 0. */
static void test_trap_address(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    const struct marker_hit hits[] = {
        { .tid = 1, .kind = MARKER_POLL_START, .time_ns = 100, .arg0 = 0xa, .probe_addr = 0x1000 },
        { .tid = 1, .kind = MARKER_WAKE, .time_ns = 150, .arg0 = 0xb, .probe_addr = 0x2000 },
        { .tid = 1, .kind = MARKER_POLL_END, .time_ns = 200, .arg0 = 0xa, .probe_addr = 0x3000 },
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(task_tracker_queue(&t, &hits[i]), 0);
    assert_int_equal(task_tracker_round_begin(&t), 0);
    struct task_tracker_sample at;
    task_tracker_sample(&t, 1, 160, 0x2001, &at);           /* just after the wake's stamp */
    assert_int_equal(at.trap_addr, 0x2000);
    task_tracker_sample(&t, 1, 140, 0x2001, &at);           /* just before it (stamped inside its trap) */
    assert_int_equal(at.trap_addr, 0x2000);
    task_tracker_sample(&t, 1, 160, 0x1001, &at);           /* that probe's hit is not next to the sample */
    assert_int_equal(at.trap_addr, 0);
    task_tracker_sample(&t, 1, 160, 0x2000, &at);           /* at the probe itself: the kernel sets the ip back */
    assert_int_equal(at.trap_addr, 0x2000);                 /* there while the probe's programs run */
    task_tracker_sample(&t, 1, 160, 0x2002, &at);           /* past the probed instruction: not in the trap */
    assert_int_equal(at.trap_addr, 0);
    task_tracker_sample(&t, 1, 160, 0, &at);
    assert_int_equal(at.trap_addr, 0);
    task_tracker_sample(&t, 2, 160, 0x2001, &at);           /* a thread without hits */
    assert_int_equal(at.trap_addr, 0);
    task_tracker_round_end(&t, UINT64_MAX);                 /* applied: the thread's last hit still counts */
    task_tracker_sample(&t, 1, 250, 0x3001, &at);
    assert_int_equal(at.trap_addr, 0x3000);
    task_tracker_free(&t);
}

/* The reference for test_sample_query_against_replay: every hit queued so far, per thread in time order (equal
 * times in queue order, as task_tracker_round_begin sorts them), and the loss; each question is answered by
 * replaying the thread's hits from the start, the way SPEC section 3 and task_tracker.h describe them. */
enum { REPLAY_THREADS = 4, REPLAY_PER_ROUND = 200, REPLAY_ROUNDS = 4 };
struct replay {
    struct marker_hit hits[REPLAY_THREADS + 2][REPLAY_PER_ROUND * REPLAY_ROUNDS];
    int round_of[REPLAY_THREADS + 2][REPLAY_PER_ROUND * REPLAY_ROUNDS];
    size_t n[REPLAY_THREADS + 2];
    uint64_t applied_until;              /* the last task_tracker_round_end's time */
    bool lost;
    int lost_round;                      /* the loss came after this round's hits were queued */
    uint64_t lost_at, seen_by;           /* applied_until then; task_tracker_loss_seen_by's time */
};

static void replay_queue(struct replay *r, const struct marker_hit *h, int round)
{
    size_t *n = &r->n[h->tid];
    size_t at = *n;
    while (at > 0 && r->hits[h->tid][at - 1].time_ns > h->time_ns)
        at--;
    memmove(&r->hits[h->tid][at + 1], &r->hits[h->tid][at], (*n - at) * sizeof(*h));
    memmove(&r->round_of[h->tid][at + 1], &r->round_of[h->tid][at], (*n - at) * sizeof(int));
    r->hits[h->tid][at] = *h;
    r->round_of[h->tid][at] = round;
    (*n)++;
}

static bool replay_at_probe(uint64_t ip, uint64_t probe)
{
    return ip && probe && (ip == probe || ip == probe + 1);
}

static void replay_answer(const struct replay *r, uint32_t tid, uint64_t time, uint64_t ip,
                          struct task_tracker_sample *want)
{
    const struct marker_hit *h = r->hits[tid];
    size_t n = r->n[tid];
    *want = (struct task_tracker_sample){ .state = SAMPLER_NOT_IN_TASK };
    if (n == 0) {                        /* a thread no hit named: not in a task, after a loss in an unknown one */
        if (r->lost)
            want->state = SAMPLER_UNKNOWN_TASK;
        return;
    }
    size_t lo = 0;
    while (lo < n && h[lo].time_ns <= time)
        lo++;
    /* the last hit at or before the time; the last poll hit decides the return address */
    want->last_hit_addr = lo ? h[lo - 1].probe_addr : 0;
    for (size_t k = lo; k > 0; k--) {
        if (h[k - 1].kind == MARKER_POLL_START) {
            want->ret_slot = h[k - 1].ret_slot;
            want->ret_addr = h[k - 1].ret_addr;
            break;
        }
        if (h[k - 1].kind == MARKER_POLL_END || h[k - 1].kind == MARKER_POLL_RETURN)
            break;
    }
    /* a sample in the trap of a still-queued poll hit is on the poll's side of it */
    if (lo > 0 && h[lo - 1].time_ns > r->applied_until && h[lo - 1].kind == MARKER_POLL_END &&
        replay_at_probe(ip, h[lo - 1].probe_addr))
        lo--;
    else if (lo < n && h[lo].kind == MARKER_POLL_START && replay_at_probe(ip, h[lo].probe_addr))
        lo++;
    enum sampler_task_state st = SAMPLER_NOT_IN_TASK;
    uint64_t task = 0, probe = 0, unknown_until = 0;
    bool saw = false, loss_done = !r->lost;
    for (size_t k = 0; k <= lo; k++) {
        if (!loss_done && (k == lo || h[k].time_ns > r->lost_at)) {
            /* the loss: a thread that saw a poll hit, applied or queued, is in an unknown task */
            bool queued_poll = false;
            for (size_t q = 0; q < n; q++)
                queued_poll |= h[q].time_ns > r->lost_at && r->round_of[tid][q] <= r->lost_round &&
                               (h[q].kind == MARKER_POLL_START || h[q].kind == MARKER_POLL_END);
            if (saw || queued_poll) {
                st = SAMPLER_UNKNOWN_TASK;
                probe = 0;
                unknown_until = r->seen_by;
            }
            loss_done = true;
        }
        if (k == lo)
            break;
        enum marker_kind kind = h[k].kind;
        if (kind == MARKER_POLL_RETURN && st == SAMPLER_IN_TASK)
            kind = MARKER_POLL_END;
        if (kind == MARKER_POLL_START || kind == MARKER_POLL_END)
            saw = true;
        if (st == SAMPLER_UNKNOWN_TASK && (kind != MARKER_POLL_START || h[k].time_ns <= unknown_until))
            continue;
        if (kind == MARKER_POLL_START) {
            st = SAMPLER_IN_TASK;
            task = h[k].arg0;
            probe = h[k].probe_addr;
        } else if (kind == MARKER_POLL_END) {
            st = SAMPLER_NOT_IN_TASK;
            probe = 0;
        }
    }
    /* the next queued poll hit: an end that does not close the open poll means a record was lost unseen */
    for (size_t k = lo; k < n; k++) {
        if (h[k].kind != MARKER_POLL_START && h[k].kind != MARKER_POLL_END)
            continue;
        if (h[k].kind == MARKER_POLL_END && !(st == SAMPLER_IN_TASK && task == h[k].arg0)) {
            st = SAMPLER_UNKNOWN_TASK;
            probe = 0;
        }
        break;
    }
    want->state = st;
    want->task_id = st == SAMPLER_IN_TASK ? task : 0;
    want->probe_addr = probe;
}

static void expect_sample(struct task_tracker *t, const struct replay *r, uint32_t tid, uint64_t time,
                          uint64_t user_ip, struct task_tracker_sample *got)
{
    struct task_tracker_sample want;
    task_tracker_sample(t, tid, time, user_ip, got);
    replay_answer(r, tid, time, user_ip, &want);
    if (got->state != want.state || got->task_id != want.task_id || got->probe_addr != want.probe_addr ||
        got->ret_slot != want.ret_slot || got->ret_addr != want.ret_addr || got->last_hit_addr != want.last_hit_addr)
        fail_msg("tid %u at %llu ip %#llx: sample %d %llu %#llx %#llx %#llx %#llx, replay %d %llu %#llx %#llx %#llx "
                 "%#llx", tid, (unsigned long long)time, (unsigned long long)user_ip, got->state,
                 (unsigned long long)got->task_id, (unsigned long long)got->probe_addr,
                 (unsigned long long)got->ret_slot, (unsigned long long)got->ret_addr,
                 (unsigned long long)got->last_hit_addr, want.state, (unsigned long long)want.task_id,
                 (unsigned long long)want.probe_addr, (unsigned long long)want.ret_slot,
                 (unsigned long long)want.ret_addr, (unsigned long long)want.last_hit_addr);
}

/* task_tracker_sample against the replay: random hits with probe and return addresses over rounds (some left
 * queued into the next), a loss among them, samples in the probes' traps and elsewhere, a thread without hits. */
static void test_sample_query_against_replay(void **state)
{
    (void)state;
    struct task_tracker t;
    assert_int_equal(task_tracker_init(&t), 0);
    struct replay *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    struct task_tracker_sample none;
    task_tracker_sample(&t, 9, 100, 0x500, &none);
    assert_int_equal(none.state, SAMPLER_NOT_IN_TASK);
    assert_int_equal(none.task_id | none.probe_addr | none.ret_slot | none.ret_addr | none.last_hit_addr, 0);
    srand(4242);
    uint64_t round_end = 0;
    size_t checked = 0, in_task = 0, unknown = 0, with_return = 0, in_trap = 0;
    for (int round = 0; round < REPLAY_ROUNDS; round++) {
        for (int i = 0; i < REPLAY_PER_ROUND; i++) {
            enum marker_kind kind = random_kind();
            uint64_t probe = kind == MARKER_POLL_START ? 0x500 : kind == MARKER_POLL_END ? 0x600 : 0x700;
            struct marker_hit h = { .tid = 1 + (uint32_t)(rand() % REPLAY_THREADS), .kind = kind,
                                    .time_ns = round_end + 1 + (uint64_t)(rand() % 1000),
                                    .arg0 = 1 + (uint64_t)(rand() % 5), .probe_addr = probe };
            if (kind == MARKER_POLL_START && rand() % 2) {
                h.ret_addr = 0x4000 + h.arg0;
                h.ret_slot = 0x7f00 + h.time_ns;
            }
            assert_int_equal(task_tracker_queue(&t, &h), 0);
            replay_queue(r, &h, round);
        }
        if (round == 2) {
            task_tracker_lost(&t);
            task_tracker_loss_seen_by(&t, round_end + 300);
            r->lost = true;
            r->lost_round = round;
            r->lost_at = r->applied_until;
            r->seen_by = round_end + 300;
        }
        assert_int_equal(task_tracker_round_begin(&t), 0);
        uint64_t cut = round_end + 800;    /* some hits stay queued into the next round */
        const uint64_t ips[] = { 0, 0x500, 0x501, 0x600, 0x601, 0x1234 };
        for (uint64_t now = round_end; now <= round_end + 1000; now += 1 + (uint64_t)(rand() % 7))
            for (uint32_t tid = 1; tid <= REPLAY_THREADS + 1; tid++)
                for (size_t k = 0; k < sizeof(ips) / sizeof(ips[0]); k++) {
                    struct task_tracker_sample got, at_zero;
                    expect_sample(&t, r, tid, now, ips[k], &got);
                    task_tracker_sample(&t, tid, now, 0, &at_zero);
                    in_task += got.state == SAMPLER_IN_TASK;
                    unknown += got.state == SAMPLER_UNKNOWN_TASK;
                    with_return += got.ret_addr != 0;
                    in_trap += got.state != at_zero.state;
                    checked++;
                }
        task_tracker_round_end(&t, cut);
        r->applied_until = cut;
        round_end = cut;
    }
    /* the comparison covered samples in tasks, in unknown ones, in probes' traps, and inside polls with a
     * recorded return address */
    assert_true(checked > 1000);
    assert_true(in_task > 0);
    assert_true(unknown > 0);
    assert_true(in_trap > 0);
    assert_true(with_return > 0);
    free(r);
    task_tracker_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poll_attribution),
        cmocka_unit_test(test_poll_statistics),
        cmocka_unit_test(test_mismatched_and_orphan_ends),
        cmocka_unit_test(test_spawn_terminate_park),
        cmocka_unit_test(test_lost),
        cmocka_unit_test(test_lost_in_round),
        cmocka_unit_test(test_silent_loss_seen_in_next_end),
        cmocka_unit_test(test_sample_in_marker_trap),
        cmocka_unit_test(test_round_out_of_order),
        cmocka_unit_test(test_runtime_waker_events),
        cmocka_unit_test(test_round_keeps_later_hits),
        cmocka_unit_test(test_round_equal_times_keep_arrival_order),
        cmocka_unit_test(test_round_random_against_reference),
        cmocka_unit_test(test_sort_busiest_first),
        cmocka_unit_test(test_task_events),
        cmocka_unit_test(test_poll_return_address),
        cmocka_unit_test(test_trap_address),
        cmocka_unit_test(test_sample_after_its_round),
        cmocka_unit_test(test_sample_query_against_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
