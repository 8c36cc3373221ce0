/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_task_top.c: unit tests of tasks/'s live view (task_top, SPEC section 3c) on snapshots and samples made
 * here: a row per await point whatever its tasks' states (a running task stays at the await it was last seen at),
 * or per task; state counts; busy / scheduled / idle shares of the time between snapshots; CPU shares from
 * samples (a task sampled before a snapshot listed it counted once it is; one that ended unlisted counted apart);
 * spawned and ended from tokio's id counter; the warnings: lost waker, a worker held in one poll (its task and tick
 * unchanged; the time its thread waited for a CPU not counted, its time blocked in the poll counted), starved (queued
 * on the core of a worker held in one poll), a leak (an await point's tasks growing frame
 * after frame), boxed and large root futures; the hottest frames per group; memory: ended tasks dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tasks/tasks.h"

#define MS 1000000ull
#define T0 (1000 * MS)

static struct task_frame sleep_frames[] = { { .function = "app::park", .file = "main.rs", .line = 17 },
                                            { .function = "app::nap", .file = "main.rs", .line = 13 } };
static struct task_frame read_frames[] = { { .function = "app::read", .file = "main.rs", .line = 40 } };

static struct task_info sleeper(uint64_t id, const char *detail)
{
    return (struct task_info){ .id = id, .state = TASK_IDLE, .root = "app::park", .frames = sleep_frames,
                               .n_frames = 2, .leaf = "tokio::time::sleep::Sleep", .detail = detail };
}

static struct task_info reader_task(uint64_t id, enum task_state state)
{
    return (struct task_info){ .id = id, .state = state, .root = "app::read", .frames = read_frames, .n_frames = 1,
                               .leaf = "tokio::net::TcpStream" };
}

static struct task_snapshot snapshot(uint64_t taken_ns, struct task_info *tasks, size_t n)
{
    return (struct task_snapshot){ .taken_ns = taken_ns, .runtime = "tokio 1.54.1", .tasks = tasks, .n_tasks = n,
                                   .listed = n, .global_queue = -1, .blocking_threads = -1, .blocking_idle = -1 };
}

static struct task_top *model(unsigned hz)
{
    struct task_top *t = task_top_new(&(struct task_top_options){ .sample_hz = hz });
    assert_non_null(t);
    return t;
}

static const struct task_top_row *row_of(const struct task_top_frame *f, const char *root)
{
    for (size_t i = 0; i < f->n_rows; i++)
        if (strcmp(f->rows[i].root, root) == 0)
            return &f->rows[i];
    return NULL;
}

static bool noted(const struct task_top_frame *f, enum task_top_warning kind, uint64_t task)
{
    for (size_t i = 0; i < f->n_notes; i++)
        if (f->notes[i].kind == kind && (!task || f->notes[i].task == task))
            return true;
    return false;
}

static void test_groups_whatever_their_state(void **state)
{
    (void)state;
    struct task_top *t = model(0);
    struct task_info a[] = { sleeper(1, "deadline in 2 s"), sleeper(2, "deadline in 3 s"), reader_task(3, TASK_IDLE) };
    struct task_snapshot s = snapshot(T0, a, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    /* 100 ms later: a sleeper scheduled, the reader running (no tree read: it stays at its await) */
    struct task_info b[] = { sleeper(1, "deadline in 1.9 s"), sleeper(2, "deadline in 2.9 s"),
                             { .id = 3, .state = TASK_RUNNING, .root = "app::read" } };
    b[1].state = TASK_SCHEDULED;
    s = snapshot(T0 + 100 * MS, b, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    struct task_top_frame f;
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(f.n_rows, 2);
    const struct task_top_row *park = row_of(&f, "app::park"), *read = row_of(&f, "app::read");
    assert_non_null(park);
    assert_non_null(read);
    assert_int_equal(park->count, 2);
    assert_int_equal(park->states[TASK_IDLE], 1);
    assert_int_equal(park->states[TASK_SCHEDULED], 1);
    assert_int_equal(park->id, 1);
    assert_string_equal(park->await_frame->function, "app::nap");
    assert_int_equal(park->await_frame->line, 13);
    assert_string_equal(park->leaf, "tokio::time::sleep::Sleep");
    assert_string_equal(park->detail, "deadline in 1.9-2.9 s");
    /* the 100 ms between the snapshots: one sleeper idle, one scheduled; the reader running */
    assert_true(park->idle_percent > 49.9 && park->idle_percent < 50.1);
    assert_true(park->scheduled_percent > 49.9 && park->scheduled_percent < 50.1);
    assert_int_equal(read->count, 1);
    assert_int_equal(read->states[TASK_RUNNING], 1);
    assert_string_equal(read->await_frame->function, "app::read");
    assert_true(read->busy_percent > 99.9);
    assert_true(read->cpu_percent < 0);                    /* not sampled */
    assert_int_equal(f.states[TASK_IDLE], 1);
    assert_int_equal(f.states[TASK_SCHEDULED], 1);
    assert_int_equal(f.states[TASK_RUNNING], 1);
    /* a row per task */
    assert_int_equal(task_top_frame(t, TASK_TOP_TASKS, &f), 0);
    assert_int_equal(f.n_rows, 3);
    const struct task_node *nodes;
    assert_int_equal(task_top_tree(t, park->group, &nodes), 2);
    task_top_free(t);
}

static void test_cpu_from_samples(void **state)
{
    (void)state;
    struct task_top *t = model(100);
    struct task_info a[] = { sleeper(1, NULL), reader_task(2, TASK_IDLE) };
    struct task_snapshot s = snapshot(T0, a, 2);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    for (int i = 0; i < 30; i++)
        task_top_add_sample(t, 2, T0 + 1, "app::parse");
    for (int i = 0; i < 10; i++)
        task_top_add_sample(t, 2, T0 + 1, "app::read_frame");
    task_top_add_sample(t, 0, T0 + 1, NULL);              /* in no task */
    for (int i = 0; i < 5; i++)
        task_top_add_sample(t, 7, T0 + 1, NULL);          /* a task never listed */
    for (int i = 0; i < 4; i++)
        task_top_add_sample(t, 9, T0 + 1, NULL);          /* ... listed in the next snapshot */
    struct task_info b[] = { sleeper(1, NULL), reader_task(2, TASK_IDLE), reader_task(9, TASK_IDLE) };
    s = snapshot(T0 + 100 * MS, b, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    struct task_top_frame f;
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    double per_sample = 100.0 / 100 / f.interval_s;        /* percent of one CPU a sample stands for */
    const struct task_top_row *read = row_of(&f, "app::read");
    assert_int_equal(read->count, 2);
    assert_true(read->cpu_percent > 43.9 * per_sample && read->cpu_percent < 44.1 * per_sample);
    assert_true(row_of(&f, "app::park")->cpu_percent == 0);
    assert_true(f.cpu_percent > 49.9 * per_sample && f.cpu_percent < 50.1 * per_sample);
    assert_true(f.cpu_in_tasks_percent > 48.9 * per_sample && f.cpu_in_tasks_percent < 49.1 * per_sample);
    assert_true(f.cpu_unlisted_percent > 4.9 * per_sample && f.cpu_unlisted_percent < 5.1 * per_sample);
    const char *names[4];
    uint64_t samples[4];
    assert_int_equal(task_top_hot_frames(t, read->group, names, samples, 4), 2);
    assert_string_equal(names[0], "app::parse");
    assert_int_equal(samples[0], 30);
    assert_string_equal(names[1], "app::read_frame");
    /* the next frame starts from nothing */
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_true(row_of(&f, "app::read")->cpu_percent == 0);
    task_top_free(t);
}

static void test_spawned_and_ended(void **state)
{
    (void)state;
    struct task_top *t = model(0);
    struct task_info a[] = { sleeper(1, NULL), sleeper(2, NULL), sleeper(3, NULL) };
    struct task_snapshot s = snapshot(T0, a, 3);
    s.next_task_id = 10;
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    struct task_info b[] = { sleeper(1, NULL), sleeper(11, NULL), sleeper(12, NULL), sleeper(13, NULL) };
    s = snapshot(T0 + 100 * MS, b, 4);
    s.next_task_id = 17;                                    /* 7 spawned, 4 of them gone already */
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    struct task_top_frame f;
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_true(f.spawned_known);
    assert_int_equal(f.spawned, 7);
    assert_int_equal(f.ended, 6);                           /* 7 spawned, the list grew by 1 */
    assert_int_equal(f.tasks, 4);
    assert_int_equal(task_top_frame(t, TASK_TOP_TASKS, &f), 0);
    assert_int_equal(f.n_rows, 4);                          /* the ended tasks dropped */
    task_top_free(t);
    /* no id counter: the tasks seen come and go */
    t = model(0);
    s = snapshot(T0, a, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    s = snapshot(T0 + 100 * MS, b, 4);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_false(f.spawned_known);
    assert_int_equal(f.spawned, 3);
    assert_int_equal(f.ended, 2);
    task_top_free(t);
}

static void test_lost_waker_boxed_large(void **state)
{
    (void)state;
    struct task_top *t = model(0);
    struct task_info a[] = { sleeper(1, NULL), reader_task(2, TASK_IDLE), reader_task(3, TASK_IDLE) };
    a[0].unwakeable = true;
    a[1].root = "app::boxed";
    a[1].future_size = 8;
    a[1].boxed_size = 20000;
    a[2].root = "app::large";
    a[2].future_size = 20000;
    struct task_snapshot s = snapshot(T0, a, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    struct task_top_frame f;
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::park")->warnings, TASK_TOP_LOST_WAKER);
    assert_int_equal(row_of(&f, "app::boxed")->warnings, TASK_TOP_BOXED);
    assert_int_equal(row_of(&f, "app::large")->warnings, TASK_TOP_LARGE);
    assert_true(noted(&f, TASK_TOP_LOST_WAKER, 1));
    assert_true(noted(&f, TASK_TOP_BOXED, 2));
    assert_true(noted(&f, TASK_TOP_LARGE, 3));
    for (size_t i = 0; i < f.n_notes; i++)
        if (f.notes[i].kind == TASK_TOP_BOXED)
            assert_non_null(strstr(f.notes[i].text, "originally 20000 bytes, boxed size 8 bytes"));
    /* woken: no longer a lost waker */
    a[0].unwakeable = false;
    s = snapshot(T0 + 100 * MS, a, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::park")->warnings, 0);
    task_top_free(t);
}

static void test_blocking_worker(void **state)
{
    (void)state;
    struct task_top *t = model(0);
    struct task_info a[] = { { .id = 5, .state = TASK_RUNNING, .root = "app::block" }, reader_task(6, TASK_IDLE) };
    struct task_worker w[] = { { .tid = 100, .index = 0, .current_task = 5, .tick = 41, .local_queue = 0, .cpu_ns = -1 },
                               { .tid = 101, .index = 1, .current_task = 6, .tick = 7, .local_queue = 0, .cpu_ns = -1 } };
    for (int k = 0; k < 3; k++) {   /* worker 0 in one poll of task 5 for 160 ms; worker 1 moving on */
        struct task_snapshot s = snapshot(T0 + (uint64_t)k * 80 * MS, a, 2);
        w[1].tick = 7 + k;
        s.workers = w;
        s.n_workers = 2;
        assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    }
    struct task_top_frame f;
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::block")->warnings, TASK_TOP_BLOCKING);
    assert_int_equal(row_of(&f, "app::read")->warnings, 0);
    assert_true(noted(&f, TASK_TOP_BLOCKING, 5));
    assert_int_equal(f.n_workers, 2);
    assert_true(f.workers[0].busy_percent > 99.9);
    assert_int_equal(f.workers[0].task, 5);
    task_top_free(t);
    /* the same task, its tick moving: polls of it, not one */
    t = model(0);
    for (int k = 0; k < 3; k++) {
        struct task_snapshot s = snapshot(T0 + (uint64_t)k * 80 * MS, a, 2);
        w[0].tick = 41 + k;
        s.workers = w;
        s.n_workers = 1;
        assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    }
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::block")->warnings, 0);
    task_top_free(t);
    /* one poll, but the thread runnable with little CPU time (waiting for one on a loaded machine): not the task's
       doing; blocked in it (state S): the task's */
    t = model(0);
    w[0].tick = 41;
    w[0].sched_state = 'R';
    for (int k = 0; k < 3; k++) {
        struct task_snapshot s = snapshot(T0 + (uint64_t)k * 80 * MS, a, 2);
        w[0].cpu_ns = (int64_t)(k * 10 * MS);
        s.workers = w;
        s.n_workers = 1;
        assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    }
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::block")->warnings, 0);
    task_top_free(t);
    t = model(0);
    w[0].sched_state = 'S';
    for (int k = 0; k < 3; k++) {
        struct task_snapshot s = snapshot(T0 + (uint64_t)k * 80 * MS, a, 2);
        w[0].cpu_ns = 5 * MS;
        s.workers = w;
        s.n_workers = 1;
        assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    }
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::block")->warnings, TASK_TOP_BLOCKING);
    task_top_free(t);
}

static void test_starved(void **state)
{
    (void)state;
    struct task_top *t = model(100);
    struct task_info a[] = { { .id = 5, .state = TASK_RUNNING, .root = "app::block", .header = 0x5000 },
                             reader_task(1, TASK_SCHEDULED), reader_task(2, TASK_SCHEDULED),
                             reader_task(3, TASK_SCHEDULED) };
    a[1].header = 0x1000;
    a[2].header = 0x2000;
    a[3].header = 0x3000;
    uint64_t stuck_queue[] = { 0x1000 }, moving_queue[] = { 0x2000 };
    struct task_worker w[] = {
        { .tid = 100, .index = 0, .current_task = 5, .tick = 41, .cpu_ns = -1, .queued = stuck_queue, .n_queued = 1 },
        { .tid = 101, .index = 1, .current_task = 0, .tick = 7, .cpu_ns = -1, .queued = moving_queue, .n_queued = 1 },
    };
    for (int k = 0; k < 3; k++) {   /* 160 ms: task 1 queued on worker 0, in one poll; task 2 on worker 1, at work;
                                       task 3 scheduled elsewhere (the global queue) */
        struct task_snapshot s = snapshot(T0 + (uint64_t)k * 80 * MS, a, 4);
        w[1].tick = 7 + k;
        s.workers = w;
        s.n_workers = 2;
        assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    }
    struct task_top_frame f;
    assert_int_equal(task_top_frame(t, TASK_TOP_TASKS, &f), 0);
    for (size_t i = 0; i < f.n_rows; i++)
        assert_int_equal(f.rows[i].warnings & TASK_TOP_STARVED, f.rows[i].id == 1 ? TASK_TOP_STARVED : 0);
    assert_true(noted(&f, TASK_TOP_STARVED, 1));
    task_top_free(t);
}

static void test_leak(void **state)
{
    (void)state;
    struct task_top *t = model(0);
    struct task_info tasks[16];
    struct task_top_frame f;
    uint64_t at = T0;
    for (size_t n = 2; n <= 8; n++) {   /* one more reader every frame, 7 frames */
        for (size_t i = 0; i < n; i++)
            tasks[i] = reader_task(i + 1, TASK_IDLE);
        struct task_snapshot s = snapshot(at += 100 * MS, tasks, n);
        assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
        assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
        assert_int_equal(row_of(&f, "app::read")->warnings & TASK_TOP_LEAK ? 1 : 0, n >= 6);
    }
    assert_true(noted(&f, TASK_TOP_LEAK, 0));
    /* fewer: no longer a leak */
    struct task_snapshot s = snapshot(at += 100 * MS, tasks, 3);
    assert_int_equal(task_top_add_snapshot(t, &s, NULL), 0);
    assert_int_equal(task_top_frame(t, TASK_TOP_GROUPS, &f), 0);
    assert_int_equal(row_of(&f, "app::read")->warnings, 0);
    task_top_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_whatever_their_state),
        cmocka_unit_test(test_cpu_from_samples),
        cmocka_unit_test(test_spawned_and_ended),
        cmocka_unit_test(test_lost_waker_boxed_large),
        cmocka_unit_test(test_blocking_worker),
        cmocka_unit_test(test_starved),
        cmocka_unit_test(test_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
