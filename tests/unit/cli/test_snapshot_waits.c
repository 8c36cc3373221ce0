/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_snapshot_waits.c: unit tests of the snapshot wait profile (SPEC section 3a, snapshot mode) on
 * snapshots built here: each snapshot's interval (the first since the recording began, at most one period)
 * filed per task under `task: ROOT;frames;leaf;[suspended]`, `[runnable]` or `task: ROOT;[running]` in
 * microseconds; per task totals; a task missing from a snapshot ended (and kept among the longest waiters),
 * one missing from a walk that stopped early carried over; stuck tasks (idle at one await in every snapshot)
 * grouped by their await, most time first; tasks nothing could wake in any snapshot; complete tasks left out;
 * runs of one state as spans for the trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/snapshot_waits.h"
#include "flamegraph/flamegraph.h"

#define MS 1000000ull
#define START (1000 * MS)
#define PERIOD (20 * MS)

static struct task_frame sleeper_frames[] = { { .function = "app::park", .file = "main.rs", .line = 17 }, { .function = "app::nap", .file = "main.rs", .line = 13 } };
static struct task_frame reader_frames[] = { { .function = "app::read", .file = "main.rs", .line = 40 } };
static struct task_frame reader_frames_41[] = { { .function = "app::read", .file = "main.rs", .line = 41 } };

#define SLEEPER(task_id)                                                                                       \
    { .id = (task_id), .state = TASK_IDLE, .root = "app::park", .frames = sleeper_frames, .n_frames = 2,     \
      .leaf = "tokio::time::sleep::Sleep" }

static struct task_snapshot snapshot_of(uint64_t taken_ns, struct task_info *tasks, size_t n)
{
    return (struct task_snapshot){ .taken_ns = taken_ns, .tasks = tasks, .n_tasks = n, .listed = n };
}

/* The count of the folded line for stack (frames joined by ';'), 0 when there is none. */
static uint64_t count_of(const struct profile *p, const char *stack)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(profile_write_folded(p, f), 0);
    fclose(f);
    uint64_t count = 0;
    size_t want = strlen(stack);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, stack, want) == 0 && line[want] == ' ')
            count = strtoull(line + want + 1, NULL, 10);
    free(text);
    return count;
}

#define SLEEP_STACK "task: app::park;app::park @ main.rs:17;app::nap @ main.rs:13;tokio::time::sleep::Sleep;[suspended]"

static void test_intervals_filed_by_state(void **state)
{
    (void)state;
    struct snapshot_waits w;
    assert_int_equal(snapshot_waits_init(&w, START, PERIOD, false, 0), 0);
    struct task_info first[] = {
        SLEEPER(1),
        { .id = 2, .state = TASK_SCHEDULED, .root = "app::read", .frames = reader_frames, .n_frames = 1,
          .leaf = "tokio::net::tcp::stream::TcpStream" },
        { .id = 3, .state = TASK_RUNNING, .root = "app::spin" },
        { .id = 4, .state = TASK_COMPLETE, .root = "app::done" },
        { .id = 5, .state = TASK_CHANGING, .root = "app::spin" },
    };
    /* the first snapshot 50 ms after the start: counted as one period (20 ms) */
    struct task_snapshot s = snapshot_of(START + 50 * MS, first, 5);
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    /* the second 30 ms later: a real interval longer than the period */
    s.taken_ns += 30 * MS;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    assert_int_equal(count_of(w.profile, SLEEP_STACK), 50000);
    assert_int_equal(count_of(w.profile, "task: app::read;app::read @ main.rs:40;tokio::net::tcp::stream::TcpStream;"
                                         "[runnable]"), 50000);
    assert_int_equal(count_of(w.profile, "task: app::spin;[running]"), 100000);   /* running and changing */
    assert_int_equal(count_of(w.profile, "task: app::done;[running]"), 0);
    assert_int_equal(profile_total(w.profile), 200000);
    assert_int_equal(w.snapshots, 2);
    assert_int_equal(w.tasks_seen, 4);
    assert_int_equal(w.task_readings, 8);
    assert_int_equal(w.suspended_ns, 50 * MS);
    assert_int_equal(w.runnable_ns, 50 * MS);
    assert_int_equal(w.running_ns, 100 * MS);
    assert_int_equal(snapshot_waits_finish(&w), 0);
    snapshot_waits_free(&w);
}

static void test_ended_tasks_and_longest(void **state)
{
    (void)state;
    struct snapshot_waits w;
    assert_int_equal(snapshot_waits_init(&w, START, PERIOD, false, 0), 0);
    struct task_info all[] = { SLEEPER(1), SLEEPER(2), SLEEPER(3) };
    struct task_snapshot s = snapshot_of(START, all, 3);
    for (int i = 0; i < 3; i++) {
        s.taken_ns += PERIOD;
        assert_int_equal(snapshot_waits_add(&w, &s), 0);
    }
    /* task 1 gone from a whole walk: ended; task 2 gone from a walk that stopped early: carried over */
    struct task_info rest[] = { SLEEPER(3) };
    s = snapshot_of(s.taken_ns + PERIOD, rest, 1);
    s.list_truncated = true;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    assert_int_equal(w.live.n, 3);
    s.list_truncated = false;
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    assert_int_equal(w.live.n, 1);
    assert_int_equal(w.n_longest, 2);
    const struct snapshot_task *longest[5];
    assert_int_equal(snapshot_waits_longest(&w, longest, 5), 3);
    assert_int_equal(longest[0]->id, 3);          /* in all five snapshots */
    assert_int_equal(longest[0]->suspended_ns, 5 * PERIOD);
    assert_int_equal(longest[1]->suspended_ns, 3 * PERIOD);
    assert_int_equal(w.tasks_seen, 3);
    snapshot_waits_free(&w);
}

static void test_stuck_and_unwakeable(void **state)
{
    (void)state;
    struct snapshot_waits w;
    assert_int_equal(snapshot_waits_init(&w, START, PERIOD, false, 0), 0);
    struct task_info tasks[] = {
        SLEEPER(1), SLEEPER(2), SLEEPER(3),
        { .id = 4, .state = TASK_IDLE, .root = "app::read", .frames = reader_frames, .n_frames = 1 },
        { .id = 5, .state = TASK_IDLE, .unwakeable = true, .root = "app::forever", .frames = reader_frames,
          .n_frames = 1 },
        { .id = 6, .state = TASK_SCHEDULED, .root = "app::read", .frames = reader_frames, .n_frames = 1 },
    };
    struct task_snapshot s = snapshot_of(START, tasks, 6);
    for (int i = 0; i < 4; i++) {
        s.taken_ns += PERIOD;
        if (i == 2)
            tasks[3].frames = reader_frames_41;   /* task 4 moved on to another await */
        assert_int_equal(snapshot_waits_add(&w, &s), 0);
    }
    struct snapshot_stuck_group groups[5];
    size_t n_groups;
    assert_int_equal(snapshot_waits_stuck(&w, groups, 5, &n_groups), 4);   /* the sleepers and task 5 */
    assert_int_equal(n_groups, 2);
    assert_int_equal(groups[0].n, 3);
    assert_int_equal(groups[0].task->id, 1);
    assert_int_equal(groups[0].wait_ns, 4 * PERIOD);
    assert_string_equal(profile_frame_name(w.profile, groups[0].task->site), "app::nap @ main.rs:13");
    assert_string_equal(profile_frame_name(w.profile, groups[0].task->leaf), "tokio::time::sleep::Sleep");
    assert_int_equal(groups[1].task->id, 5);
    const struct snapshot_task *unwakeable[5];
    assert_int_equal(snapshot_waits_unwakeable(&w, unwakeable, 5), 1);
    assert_int_equal(unwakeable[0]->id, 5);
    /* one snapshot where it could be woken: no longer listed */
    tasks[4].unwakeable = false;
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    assert_int_equal(snapshot_waits_unwakeable(&w, unwakeable, 5), 0);
    snapshot_waits_free(&w);
}

static void test_spans(void **state)
{
    (void)state;
    struct snapshot_waits w;
    assert_int_equal(snapshot_waits_init(&w, START, PERIOD, true, 100), 0);
    struct task_info t[] = { SLEEPER(1) };
    struct task_snapshot s = snapshot_of(START + PERIOD, t, 1);
    assert_int_equal(snapshot_waits_add(&w, &s), 0);           /* suspended from START */
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    t[0].state = TASK_SCHEDULED;
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);           /* runnable from START + 2 periods */
    t[0].state = TASK_RUNNING;
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);           /* running: no span */
    t[0].state = TASK_IDLE;
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    assert_int_equal(snapshot_waits_finish(&w), 0);
    assert_int_equal(w.spans.n, 3);
    assert_int_equal(w.spans.v[0].start_ns, START);
    assert_int_equal(w.spans.v[0].end_ns, START + 2 * PERIOD);
    assert_false(w.spans.v[0].runnable);
    assert_string_equal(profile_frame_name(w.profile, w.spans.v[0].root), "task: app::park");
    assert_string_equal(profile_frame_name(w.profile, w.spans.v[0].site), "app::nap @ main.rs:13");
    assert_int_equal(w.spans.v[1].start_ns, START + 2 * PERIOD);
    assert_int_equal(w.spans.v[1].end_ns, START + 3 * PERIOD);
    assert_true(w.spans.v[1].runnable);
    assert_int_equal(w.spans.v[2].start_ns, START + 4 * PERIOD);
    assert_int_equal(w.spans.v[2].end_ns, START + 5 * PERIOD);
    snapshot_waits_free(&w);
}

/* A task waiting on three futures at once (a select!): its time split evenly among them, the task counted once;
   the summary's figures (stuck, its await) follow its first branch. */
static void test_tree_split(void **state)
{
    (void)state;
    struct task_node nodes[] = {
        { .frame = { .function = "app::run", .file = "main.rs", .line = 7, .macro = "select!" },
          .parent = TASK_NO_NODE, .n_children = 3, .subtree = 4 },
        { .frame = { .function = "app::read", .file = "main.rs", .line = 40 }, .leaf = "Rx", .parent = 0, .subtree = 1 },
        { .leaf = "Notified", .parent = 0, .subtree = 1 },
        { .leaf = "Sleep", .parent = 0, .subtree = 1 },
    };
    struct task_frame path[] = { nodes[0].frame, nodes[1].frame };
    struct task_info tasks[] = { { .id = 1, .state = TASK_IDLE, .root = "app::run", .nodes = nodes, .n_nodes = 4,
                                   .frames = path, .n_frames = 2, .leaf = "Rx" } };
    struct snapshot_waits w;
    assert_int_equal(snapshot_waits_init(&w, START, PERIOD, false, 0), 0);
    struct task_snapshot s = snapshot_of(START + PERIOD, tasks, 1);
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    s.taken_ns += PERIOD;
    assert_int_equal(snapshot_waits_add(&w, &s), 0);
    assert_int_equal(profile_total(w.profile), 40000);         /* 2 x 20 ms, once */
    assert_int_equal(count_of(w.profile, "task: app::run;app::run @ main.rs:7 (select!);app::read @ main.rs:40;Rx;"
                                         "[suspended]"), 2 * 6667);
    assert_int_equal(count_of(w.profile, "task: app::run;app::run @ main.rs:7 (select!);Notified;[suspended]"),
                     2 * 6667);
    assert_int_equal(count_of(w.profile, "task: app::run;app::run @ main.rs:7 (select!);Sleep;[suspended]"), 2 * 6666);
    assert_int_equal(w.suspended_ns, 2 * PERIOD);
    struct snapshot_stuck_group groups[2];
    size_t n_groups;
    assert_int_equal(snapshot_waits_stuck(&w, groups, 2, &n_groups), 1);
    assert_int_equal(n_groups, 1);
    assert_string_equal(profile_frame_name(w.profile, groups[0].task->site), "app::read @ main.rs:40");
    assert_string_equal(profile_frame_name(w.profile, groups[0].task->leaf), "Rx");
    snapshot_waits_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intervals_filed_by_state),
        cmocka_unit_test(test_ended_tasks_and_longest),
        cmocka_unit_test(test_stuck_and_unwakeable),
        cmocka_unit_test(test_spans),
        cmocka_unit_test(test_tree_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
