/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_wait_profile.c: unit tests of flamegraph/wait_profile.c with synthetic task events and stacks: a wait
 * split at the first wake into [suspended] and [runnable], a wake during the poll making the task runnable from
 * the poll's end, waits still open at the stop counted up to it, a poll that registers no new waker leaving the
 * task where it last registered, events of one task arriving out of order across threads (settled by rounds),
 * the waker machinery cut from the leaf and the runtime cut from the root, terminated tasks and the
 * ready-unless-registered rule not counting after their last poll, wait stacks cut below the poll-marker frame
 * the samples showed, on random event streams no task's waits ever exceeding the recording's duration, and many
 * short-lived tasks leaving the table no bigger than the tasks alive, with the results of all of them; polls
 * whose end is not reported (tokio probed at raw::poll's entry only) ending at their last registration, or
 * their start, once their thread or the task polls again, and an end reported after all correcting it; on
 * random streams with and without poll ends, one task's waits never overlapping; a task polled on a second
 * thread before its poll on the first ended waiting only once both did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flamegraph/flamegraph.h"
#include "flamegraph/wait_profile.h"
#include "folded_text.h"

#define US 1000ull                       /* events in microseconds, as ns */

struct env {
    struct profile *p;
    struct task_stacks *t;
    struct wait_profile *w;
    struct profile *out;
    bool ready_rule;                     /* wait_profile_finish's ready_unless_registered */
    uint32_t thread_root;
    char err[256];
};

static void env_init_with(struct env *e, const struct wait_options *o)
{
    memset(e, 0, sizeof(*e));
    e->p = profile_new();
    assert_non_null(e->p);
    e->t = task_stacks_new(e->p, GROUP_BY_ENTRY, true, "^executor::poll_task$", e->err, sizeof(e->err));
    assert_non_null(e->t);
    e->w = wait_profile_new(e->t, e->p, o);
    assert_non_null(e->w);
    e->thread_root = profile_intern(e->p, "worker", 6);
}

static void env_init(struct env *e)
{
    struct wait_options o = { .start_ns = 0 };
    env_init_with(e, &o);
}

static void env_free(struct env *e)
{
    profile_free(e->out);
    wait_profile_free(e->w);
    task_stacks_free(e->t);
    profile_free(e->p);
}

static void event_on(struct env *e, enum wait_event_kind kind, uint64_t task, uint64_t time_us, uint32_t thread)
{
    struct wait_event ev = { .kind = kind, .task_id = task, .time_ns = time_us * US, .thread = thread };
    assert_int_equal(wait_profile_event(e->w, &ev), 0);
}

static void event(struct env *e, enum wait_event_kind kind, uint64_t task, uint64_t time_us)
{
    event_on(e, kind, task, time_us, 0);
}

static void registered_from(struct env *e, uint64_t task, uint64_t time_us, uint64_t site)
{
    struct wait_event ev = { .kind = WAIT_REGISTERED, .task_id = task, .time_ns = time_us * US, .call_site = site };
    assert_int_equal(wait_profile_event(e->w, &ev), 0);
}

/* A registration stack of task in app::handler at line (a sleep), down through the waker machinery, taken at
 * call site site (0: unknown), with its registration event. */
static void stack_from(struct env *e, uint64_t task, uint64_t time_us, unsigned line, uint64_t site)
{
    struct stack_frame f[7];
    const struct { const char *name; const char *file; unsigned line; } names[7] = {
        { "start_thread", NULL, 0 },
        { "executor::poll_task", "executor.c", 40 },
        { "app::handler::{{closure}}", "main.rs", line },
        { "tokio::time::sleep::Sleep::poll", "sleep.rs", 400 },
        { "tokio::sync::task::atomic_waker::AtomicWaker::register_by_ref", "atomic_waker.rs", 200 },
        { "<&core::task::wake::Waker as tokio::sync::task::atomic_waker::WakerRef>::into_waker", "atomic_waker.rs", 9 },
        { "core::task::wake::Waker::clone", "wake.rs", 500 },
    };
    const struct stack_frame *ptrs[7];
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(task_stacks_prepare(e->t, names[i].name, names[i].file, names[i].line, false, &f[i]), 0);
        ptrs[i] = &f[i];
    }
    assert_int_equal(wait_profile_stack(e->w, task, time_us * US, e->thread_root, ptrs, 7, WAIT_NO_KEY, site), 0);
    registered_from(e, task, time_us, site);
}

static void stack_at(struct env *e, uint64_t task, uint64_t time_us, unsigned line)
{
    stack_from(e, task, time_us, line, 0);
}

static void poll_once(struct env *e, uint64_t task, uint64_t start_us, uint64_t end_us)
{
    event(e, WAIT_POLL_START, task, start_us);
    event(e, WAIT_POLL_END, task, end_us);
}

static void expect_folded(struct env *e, uint64_t stop_us, const char *want)
{
    assert_int_equal(task_stacks_finish(e->t), 0);
    e->out = wait_profile_finish(e->w, stop_us * US, e->ready_rule);
    assert_non_null(e->out);
    char *got = folded_text(e->out);
    if (strcmp(got, want) != 0)
        fail_msg("got:\n%swant:\n%s", got, want);
    free(got);
}

#define SLEEP_STACK(line) "task: app::handler;app::handler @ main.rs:" #line ";tokio::time::sleep::Sleep::poll;"

static void test_split_at_first_wake(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event(&e, WAIT_POLL_START, 1, 0);
    stack_at(&e, 1, 5, 12);
    event(&e, WAIT_POLL_END, 1, 10);
    event(&e, WAIT_WAKE, 1, 40);
    event(&e, WAIT_WAKE, 1, 45);          /* a second wake changes nothing */
    poll_once(&e, 1, 50, 60);                  /* no new registration: still at line 12 */
    assert_int_equal(wait_profile_round(e.w, 60 * US), 0);
    expect_folded(&e, 60, SLEEP_STACK(12) "[runnable] 10\n" SLEEP_STACK(12) "[suspended] 30\n");
    const struct wait_summary *s = wait_profile_summary(e.w);
    assert_int_equal(s->intervals, 1);
    assert_int_equal(s->longest_runnable_ns, 10 * US);
    assert_int_equal(s->longest_runnable_task, 1);
    assert_int_equal(s->n_tasks, 1);
    assert_string_equal(profile_frame_name(e.p, s->tasks[0].root), "task: app::handler");
    env_free(&e);
}

static void test_wake_during_poll(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event(&e, WAIT_POLL_START, 1, 0);
    stack_at(&e, 1, 2, 12);
    event(&e, WAIT_WAKE, 1, 8);           /* woken before the poll returned: runnable from its end */
    event(&e, WAIT_POLL_END, 1, 10);
    poll_once(&e, 1, 30, 31);
    expect_folded(&e, 31, SLEEP_STACK(12) "[runnable] 20\n");
    env_free(&e);
}

static void test_open_at_stop(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event(&e, WAIT_POLL_START, 1, 0);
    stack_at(&e, 1, 1, 12);
    event(&e, WAIT_POLL_END, 1, 10);      /* never woken: suspended until the stop */
    event(&e, WAIT_POLL_START, 2, 0);
    stack_at(&e, 2, 1, 20);
    event(&e, WAIT_POLL_END, 2, 10);
    event(&e, WAIT_WAKE, 2, 70);          /* woken, never polled again: runnable until the stop */
    expect_folded(&e, 100, SLEEP_STACK(12) "[suspended] 90\n" SLEEP_STACK(20) "[runnable] 30\n"
                           SLEEP_STACK(20) "[suspended] 60\n");
    env_free(&e);
}

static void test_no_new_waker_keeps_last_stack(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event(&e, WAIT_POLL_START, 1, 0);
    stack_at(&e, 1, 5, 12);
    event(&e, WAIT_POLL_END, 1, 10);
    event(&e, WAIT_WAKE, 1, 20);
    poll_once(&e, 1, 30, 40);                  /* registers nothing: still suspended at line 12 */
    event(&e, WAIT_WAKE, 1, 60);
    event(&e, WAIT_POLL_START, 1, 70);
    event(&e, WAIT_REGISTERED, 1, 72);    /* registered, but its stack was not taken: still line 12 */
    event(&e, WAIT_POLL_END, 1, 80);
    event(&e, WAIT_WAKE, 1, 90);
    event(&e, WAIT_POLL_START, 1, 100);
    stack_at(&e, 1, 105, 30);             /* a new stack: suspended at line 30 from here */
    event(&e, WAIT_POLL_END, 1, 110);
    event(&e, WAIT_WAKE, 1, 115);
    poll_once(&e, 1, 120, 125);
    expect_folded(&e, 125, SLEEP_STACK(12) "[runnable] 30\n" SLEEP_STACK(12) "[suspended] 40\n"
                           SLEEP_STACK(30) "[runnable] 5\n" SLEEP_STACK(30) "[suspended] 5\n");
    env_free(&e);
}

/* A task that alternates between two await points (a socket read and a timer, registering from two call
 * sites): a registration without a stack is filed under the task's last stack from the same site, not under
 * its last stack; from a site it has no stack of, under its root alone; a site's stack is replaced by a newer
 * one from it. */
static void test_registration_by_call_site(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    const uint64_t timer = 0x401000, socket = 0x402000, other = 0x403000;
    event(&e, WAIT_POLL_START, 1, 0);
    stack_from(&e, 1, 5, 12, timer);            /* line 12 from the timer site */
    event(&e, WAIT_POLL_END, 1, 10);
    poll_once(&e, 1, 20, 20);                   /* waited 10 at line 12 (no wake: suspended) */
    event(&e, WAIT_POLL_START, 1, 30);
    stack_from(&e, 1, 35, 30, socket);          /* line 30 from the socket site */
    event(&e, WAIT_POLL_END, 1, 40);
    event(&e, WAIT_POLL_START, 1, 60);          /* waited 20 at line 30 */
    registered_from(&e, 1, 62, timer);          /* no stack: the timer site's, line 12 */
    event(&e, WAIT_POLL_END, 1, 70);
    event(&e, WAIT_POLL_START, 1, 100);         /* waited 30 at line 12 */
    registered_from(&e, 1, 102, socket);        /* no stack: line 30 */
    event(&e, WAIT_POLL_END, 1, 110);
    event(&e, WAIT_POLL_START, 1, 150);         /* waited 40 at line 30 */
    registered_from(&e, 1, 152, other);         /* a site with no stack: its root alone */
    event(&e, WAIT_POLL_END, 1, 160);
    event(&e, WAIT_POLL_START, 1, 210);         /* waited 50 at its root */
    stack_from(&e, 1, 212, 44, timer);          /* the timer site's stack is line 44 now */
    event(&e, WAIT_POLL_END, 1, 220);
    event(&e, WAIT_POLL_START, 1, 280);         /* waited 60 at line 44 */
    registered_from(&e, 1, 282, timer);         /* line 44, not 12 */
    event(&e, WAIT_POLL_END, 1, 290);
    expect_folded(&e, 360, "task: app::handler;[suspended] 50\n"
                           SLEEP_STACK(12) "[suspended] 50\n" SLEEP_STACK(30) "[suspended] 60\n"
                           SLEEP_STACK(44) "[suspended] 130\n");
    env_free(&e);
}

static void test_out_of_order_across_threads(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    /* thread B's wake (at 40) and the next poll on thread C (at 50) come before thread A's poll end (at 10) */
    event(&e, WAIT_WAKE, 1, 40);
    event(&e, WAIT_POLL_START, 1, 50);
    assert_int_equal(wait_profile_round(e.w, 30 * US), 0);   /* only events up to 30 may be settled */
    event(&e, WAIT_POLL_START, 1, 0);
    stack_at(&e, 1, 5, 12);
    event(&e, WAIT_POLL_END, 1, 10);
    assert_int_equal(wait_profile_round(e.w, 30 * US), 0);
    event(&e, WAIT_POLL_END, 1, 55);
    assert_int_equal(wait_profile_round(e.w, 55 * US), 0);
    expect_folded(&e, 55, SLEEP_STACK(12) "[runnable] 10\n" SLEEP_STACK(12) "[suspended] 30\n");
    env_free(&e);
}

static void test_terminated_and_ready(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event(&e, WAIT_POLL_START, 1, 0);
    event(&e, WAIT_POLL_END, 1, 10);
    event(&e, WAIT_TERMINATE, 1, 11);     /* its last poll returned Ready: no wait after it */
    event(&e, WAIT_POLL_START, 2, 0);
    event(&e, WAIT_TERMINATE, 2, 5);      /* completed inside its poll */
    event(&e, WAIT_POLL_END, 2, 6);
    expect_folded(&e, 100, "");
    assert_int_equal(wait_profile_summary(e.w)->n_tasks, 0);
    env_free(&e);

    /* tokio without markers: a poll that registered nothing and was never woken was the task's last */
    env_init(&e);
    e.ready_rule = true;
    poll_once(&e, 1, 0, 10);                   /* finished (nothing registered, no wake) */
    poll_once(&e, 1, 50, 60);                  /* the header reused by a new task: no wait 10..50 */
    event(&e, WAIT_POLL_START, 2, 0);
    stack_at(&e, 2, 1, 12);
    event(&e, WAIT_POLL_END, 2, 10);      /* registered: waits until the stop */
    poll_once(&e, 3, 0, 10);
    event(&e, WAIT_WAKE, 3, 95);          /* never registered a waker: a finished task's reused id, not a wait */
    expect_folded(&e, 100, SLEEP_STACK(12) "[suspended] 90\n");
    assert_int_equal(wait_profile_summary(e.w)->taken_as_ready, 3);
    env_free(&e);
}

static void test_marker_runtime_root_only(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    poll_once(&e, 7, 0, 10);                   /* no stacks at all: the task's root alone */
    event(&e, WAIT_WAKE, 7, 25);
    poll_once(&e, 7, 30, 40);
    expect_folded(&e, 40, "[task entry unknown];[runnable] 5\n[task entry unknown];[suspended] 15\n");
    env_free(&e);
}

/* With poll markers the samples name the marker's frame (a poll wrapper): wait stacks are cut below it too. */
static void test_cut_at_marker_frame(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    const char *names[4] = { "start_thread", "exec::instrumented_poll", "app::serve::{{closure}}", "app::read" };
    struct stack_frame f[4];
    const struct stack_frame *ptrs[4];
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(task_stacks_prepare(e.t, names[i], "lib.rs", 7, false, &f[i]), 0);
        ptrs[i] = &f[i];
    }
    uint32_t marker = profile_intern(e.p, names[1], strlen(names[1]));
    assert_int_equal(task_stacks_add(e.t, e.thread_root, STACK_IN_TASK, 3, marker, ptrs, 4, 1), 0);
    event(&e, WAIT_POLL_START, 3, 0);
    assert_int_equal(wait_profile_stack(e.w, 3, 1 * US, e.thread_root, ptrs, 4, WAIT_NO_KEY, 0), 0);
    event(&e, WAIT_POLL_END, 3, 10);
    expect_folded(&e, 20, "task: app::serve;app::serve @ lib.rs:7;app::read;[suspended] 10\n");
    env_free(&e);
}

/* A wait stack that knows its poll marker's frame (task_stacks_saw_marker: tokio's clone_waker in a marker
 * program) is cut below it with no CPU sample of the task at all, and teaches the task its root. */
static void test_cut_at_wait_stacks_own_marker_frame(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    const char *names[4] = { "start_thread", "exec::instrumented_poll", "app::serve::{{closure}}", "app::read" };
    struct stack_frame f[4];
    const struct stack_frame *ptrs[4];
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(task_stacks_prepare(e.t, names[i], "lib.rs", 7, false, &f[i]), 0);
        ptrs[i] = &f[i];
    }
    task_stacks_saw_marker(e.t, PROFILE_NO_FRAME);     /* nothing known: changes nothing */
    task_stacks_saw_marker(e.t, profile_intern(e.p, names[1], strlen(names[1])));
    event(&e, WAIT_POLL_START, 3, 0);
    assert_int_equal(wait_profile_stack(e.w, 3, 1 * US, e.thread_root, ptrs, 4, WAIT_NO_KEY, 0), 0);
    event(&e, WAIT_POLL_END, 3, 10);
    expect_folded(&e, 20, "task: app::serve;app::serve @ lib.rs:7;app::read;[suspended] 10\n");
    env_free(&e);
}

/* A wait stack of a task on which no boundary is known yet (before any sample or wait stack showed the poll
 * marker's frame: a registration at a recording's start) is not filed under the thread's whole stack: the task's
 * root alone, until a stack that can be cut comes. */
static void test_wait_stack_without_boundary_is_root_alone(void **state)
{
    (void)state;
    struct env e;
    struct wait_options o = { .start_ns = 0 };
    memset(&e, 0, sizeof(e));
    e.p = profile_new();
    assert_non_null(e.p);
    e.t = task_stacks_new(e.p, GROUP_BY_ENTRY, true, NULL, e.err, sizeof(e.err));   /* no --task-boundary */
    assert_non_null(e.t);
    e.w = wait_profile_new(e.t, e.p, &o);
    assert_non_null(e.w);
    e.thread_root = profile_intern(e.p, "worker", 6);
    const char *names[4] = { "start_thread", "exec::instrumented_poll", "app::serve::{{closure}}", "app::read" };
    struct stack_frame f[4];
    const struct stack_frame *ptrs[4];
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(task_stacks_prepare(e.t, names[i], "lib.rs", 7, false, &f[i]), 0);
        ptrs[i] = &f[i];
    }
    event(&e, WAIT_POLL_START, 3, 0);
    assert_int_equal(wait_profile_stack(e.w, 3, 1 * US, e.thread_root, ptrs, 4, WAIT_NO_KEY, 0), 0);
    event(&e, WAIT_POLL_END, 3, 10);
    expect_folded(&e, 20, "[task entry unknown];[suspended] 10\n");
    env_free(&e);
}

/* A CPU sample of task in app::handler: tells the task's entry (its root) without a registration stack. */
static void sample_in_handler(struct env *e, uint64_t task)
{
    const char *names[3] = { "start_thread", "executor::poll_task", "app::handler::{{closure}}" };
    struct stack_frame f[3];
    const struct stack_frame *ptrs[3];
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(task_stacks_prepare(e->t, names[i], "main.rs", 30, false, &f[i]), 0);
        ptrs[i] = &f[i];
    }
    assert_int_equal(task_stacks_add(e->t, e->thread_root, STACK_IN_TASK, task, PROFILE_NO_FRAME, ptrs, 3, 1), 0);
}

/* Many short-lived tasks, one after another, each terminated: every other one waits at a sleep (28 us
 * suspended, 10 runnable), the others register nothing (48 us suspended, 10 runnable at their root: doubtful
 * waits, left out under the ready-unless-registered rule). With a round after each task the table never holds
 * more than a few hundred tasks, and the profile and summary count every task. */
static void test_short_lived_tasks_bounded(void **state)
{
    (void)state;
    const uint64_t n = 20000;
    for (int ready_rule = 0; ready_rule < 2; ready_rule++) {
        struct env e;
        env_init(&e);
        e.ready_rule = ready_rule;
        size_t most_held = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t id = i + 1, base = i * 100;
            event(&e, WAIT_POLL_START, id, base);
            if (i % 2 == 0) {
                stack_at(&e, id, base + 1, 12);
                event(&e, WAIT_POLL_END, id, base + 2);
                event(&e, WAIT_WAKE, id, base + 30);
                event(&e, WAIT_POLL_START, id, base + 40);
                event(&e, WAIT_TERMINATE, id, base + 41);
                event(&e, WAIT_POLL_END, id, base + 42);
            } else {
                sample_in_handler(&e, id);
                event(&e, WAIT_POLL_END, id, base + 2);
                event(&e, WAIT_WAKE, id, base + 50);
                event(&e, WAIT_POLL_START, id, base + 60);
                event(&e, WAIT_TERMINATE, id, base + 61);
                event(&e, WAIT_POLL_END, id, base + 62);
            }
            assert_int_equal(wait_profile_round(e.w, (base + 99) * US), 0);
            size_t held = wait_profile_tasks_held(e.w);
            most_held = held > most_held ? held : most_held;
        }
        assert_true(most_held <= 300);
        char want[512];
        if (ready_rule)
            snprintf(want, sizeof(want), SLEEP_STACK(12) "[runnable] %llu\n" SLEEP_STACK(12) "[suspended] %llu\n",
                     (unsigned long long)(10 * n / 2), (unsigned long long)(28 * n / 2));
        else
            snprintf(want, sizeof(want),
                     "task: app::handler;[runnable] %llu\ntask: app::handler;[suspended] %llu\n"
                     SLEEP_STACK(12) "[runnable] %llu\n" SLEEP_STACK(12) "[suspended] %llu\n",
                     (unsigned long long)(10 * n / 2), (unsigned long long)(48 * n / 2),
                     (unsigned long long)(10 * n / 2), (unsigned long long)(28 * n / 2));
        expect_folded(&e, n * 100, want);
        const struct wait_summary *s = wait_profile_summary(e.w);
        assert_int_equal(s->n_tasks, ready_rule ? n / 2 : n);
        assert_int_equal(s->intervals, ready_rule ? n / 2 : n);
        assert_int_equal(s->taken_as_ready, ready_rule ? n / 2 : 0);
        assert_int_equal(s->longest_runnable_ns, 10 * US);
        assert_true(s->n_listed >= WAIT_LISTED_RETIRED);
        assert_int_equal(s->tasks[0].suspended_ns + s->tasks[0].runnable_ns, (ready_rule ? 38 : 58) * US);
        assert_string_equal(profile_frame_name(e.p, s->tasks[0].root), "task: app::handler");
        env_free(&e);
    }
}

/* Polls without poll-end events: each ends at its last registration, once its thread polls another task (or
 * the task is polled again); a wake after that point splits the wait. */
static void test_unreported_end_at_registration(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event_on(&e, WAIT_POLL_START, 1, 0, 7);
    stack_at(&e, 1, 5, 12);               /* registered at 5: suspended from there */
    event_on(&e, WAIT_POLL_START, 2, 10, 7);   /* thread 7 polls task 2: task 1's poll is over */
    stack_at(&e, 2, 12, 20);
    event_on(&e, WAIT_WAKE, 1, 40, 8);
    event_on(&e, WAIT_POLL_START, 1, 50, 8);
    assert_int_equal(wait_profile_round(e.w, 50 * US), 0);
    /* task 2's poll is still open at the stop: over at its registration (12), waiting until the stop */
    expect_folded(&e, 50, SLEEP_STACK(12) "[runnable] 10\n" SLEEP_STACK(12) "[suspended] 35\n"
                          SLEEP_STACK(20) "[suspended] 38\n");
    assert_int_equal(wait_profile_summary(e.w)->intervals, 2);
    env_free(&e);
}

/* Without poll ends: a wake before the poll's last registration is one during the poll (runnable from its
 * end point); a poll that registers nothing ends at its start (the best bound known), still suspended where
 * the task last registered. */
static void test_unreported_end_wakes_and_no_registration(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    e.ready_rule = true;
    event_on(&e, WAIT_POLL_START, 1, 0, 7);
    event_on(&e, WAIT_WAKE, 1, 2, 7);     /* woken in its poll, before it registered at 3 */
    stack_at(&e, 1, 3, 12);
    event_on(&e, WAIT_POLL_START, 1, 20, 7);   /* its own next poll: the last one is over; 3..20 runnable */
    event_on(&e, WAIT_WAKE, 1, 25, 8);
    event_on(&e, WAIT_POLL_START, 3, 30, 7);   /* task 1's poll (registered nothing) ended by now: at 20 */
    event_on(&e, WAIT_POLL_START, 1, 40, 8);   /* 20..25 suspended, 25..40 runnable, at line 12 */
    /* task 3 (registered nothing, never woken) and task 1's last poll: taken as completed (ready rule) */
    expect_folded(&e, 40, SLEEP_STACK(12) "[runnable] 32\n" SLEEP_STACK(12) "[suspended] 5\n");
    env_free(&e);
}

/* A poll closed for want of its end (a nested poll began on its thread before the thread reported any end)
 * whose end comes after all: the wait starts at the reported end. */
static void test_unreported_end_then_reported(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event_on(&e, WAIT_POLL_START, 1, 0, 7);
    stack_at(&e, 1, 2, 12);
    event_on(&e, WAIT_POLL_START, 2, 4, 7);    /* nested in task 1's poll */
    event_on(&e, WAIT_POLL_END, 2, 6, 7);
    event_on(&e, WAIT_POLL_END, 1, 8, 7);      /* task 1's end after all: waits from 8 */
    event_on(&e, WAIT_WAKE, 1, 20, 8);
    event_on(&e, WAIT_POLL_START, 1, 30, 7);
    event_on(&e, WAIT_POLL_END, 1, 31, 7);
    expect_folded(&e, 31, "[task entry unknown];[suspended] 25\n" SLEEP_STACK(12) "[runnable] 10\n"
                          SLEEP_STACK(12) "[suspended] 12\n");
    env_free(&e);
}

/* Woken during its poll on thread 7 and polled on thread 8 before that poll's end came (tokio queues a task
 * notified while running before its poll returns; another worker can steal it): no wait until both polls
 * ended, none inside either. */
static void test_overlapping_polls_on_two_threads(void **state)
{
    (void)state;
    struct env e;
    env_init(&e);
    event_on(&e, WAIT_POLL_START, 2, 0, 7);    /* thread 7 reports its poll ends (a return probe) */
    event_on(&e, WAIT_TERMINATE, 2, 0, 7);
    event_on(&e, WAIT_POLL_END, 2, 0, 7);
    event_on(&e, WAIT_POLL_START, 1, 0, 7);
    stack_at(&e, 1, 2, 12);
    event_on(&e, WAIT_WAKE, 1, 4, 8);
    event_on(&e, WAIT_POLL_START, 1, 5, 8);    /* stolen: thread 7's poll has not returned yet */
    event_on(&e, WAIT_POLL_END, 1, 9, 8);
    event_on(&e, WAIT_POLL_END, 1, 12, 7);     /* thread 7's end, due: the wait begins here */
    event_on(&e, WAIT_WAKE, 1, 20, 9);
    event_on(&e, WAIT_POLL_START, 1, 30, 7);
    event_on(&e, WAIT_POLL_END, 1, 31, 7);
    expect_folded(&e, 31, SLEEP_STACK(12) "[runnable] 10\n" SLEEP_STACK(12) "[suspended] 8\n");
    env_free(&e);
    /* the due end comes during the second poll: it ends nothing */
    env_init(&e);
    event_on(&e, WAIT_POLL_START, 2, 0, 7);
    event_on(&e, WAIT_TERMINATE, 2, 0, 7);
    event_on(&e, WAIT_POLL_END, 2, 1, 7);
    event_on(&e, WAIT_POLL_START, 1, 10, 7);
    stack_at(&e, 1, 12, 12);
    event_on(&e, WAIT_WAKE, 1, 14, 8);
    event_on(&e, WAIT_POLL_START, 1, 15, 8);
    event_on(&e, WAIT_POLL_END, 1, 16, 7);
    stack_at(&e, 1, 18, 13);
    event_on(&e, WAIT_POLL_END, 1, 19, 8);
    event_on(&e, WAIT_WAKE, 1, 25, 9);
    event_on(&e, WAIT_POLL_START, 1, 29, 8);
    event_on(&e, WAIT_POLL_END, 1, 30, 8);
    expect_folded(&e, 30, SLEEP_STACK(13) "[runnable] 4\n" SLEEP_STACK(13) "[suspended] 6\n");
    env_free(&e);
}

struct interval_check {
    uint64_t last_end[4];
    size_t n;
};

static void check_interval(void *ctx, const struct wait_interval *iv)
{
    struct interval_check *c = ctx;
    assert_true(iv->task_id < 4);
    assert_true(iv->start_ns <= iv->woken_ns && iv->woken_ns <= iv->end_ns);
    assert_true(iv->start_ns >= c->last_end[iv->task_id]);   /* one task's waits never overlap */
    c->last_end[iv->task_id] = iv->end_ns;
    c->n++;
}

/* Random streams: whatever the order, no task's waits exceed the recording (start..stop) nor overlap, with
 * poll ends reported (on thread 0, unknown, or threads 1 and 2) or not (threads 1 and 2 with no end events). */
static void test_duration_bound(void **state)
{
    (void)state;
    srand(16);
    for (int round = 0; round < 100; round++) {
        struct env e;
        struct interval_check c = { .n = 0 };
        struct wait_options o = { .start_ns = 100 * US, .on_interval = check_interval, .interval_ctx = &c };
        env_init_with(&e, &o);
        bool ends = round % 2 == 0;
        uint64_t stop_us = 100 + (uint64_t)(rand() % 1000);
        for (int i = 0; i < 300; i++) {
            uint64_t task = (uint64_t)(rand() % 4);
            uint64_t t = 100 + (uint64_t)(rand() % (int)(stop_us - 100 + 1));
            int kind = rand() % 6;
            if (kind == 5)
                stack_at(&e, task, t, 10 + (unsigned)(rand() % 3));
            else if (!ends && kind == WAIT_POLL_END)
                continue;
            else
                event_on(&e, (enum wait_event_kind)kind, task, t, ends && round % 4 == 0 ? 0 : 1 + (uint32_t)(rand() % 2));
            if (rand() % 50 == 0)
                assert_int_equal(wait_profile_round(e.w, t * US), 0);
        }
        assert_int_equal(task_stacks_finish(e.t), 0);
        e.out = wait_profile_finish(e.w, stop_us * US, rand() % 2);
        assert_non_null(e.out);
        const struct wait_summary *s = wait_profile_summary(e.w);
        for (size_t i = 0; i < s->n_listed; i++)
            assert_true(s->tasks[i].suspended_ns + s->tasks[i].runnable_ns <= (stop_us - 100) * US);
        assert_true(profile_total(e.out) <= 4 * (stop_us - 100));
        assert_true(c.n > 0 || stop_us < 110);
        env_free(&e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_at_first_wake),
        cmocka_unit_test(test_wake_during_poll),
        cmocka_unit_test(test_open_at_stop),
        cmocka_unit_test(test_no_new_waker_keeps_last_stack),
        cmocka_unit_test(test_registration_by_call_site),
        cmocka_unit_test(test_out_of_order_across_threads),
        cmocka_unit_test(test_terminated_and_ready),
        cmocka_unit_test(test_marker_runtime_root_only),
        cmocka_unit_test(test_cut_at_marker_frame),
        cmocka_unit_test(test_unreported_end_at_registration),
        cmocka_unit_test(test_unreported_end_wakes_and_no_registration),
        cmocka_unit_test(test_unreported_end_then_reported),
        cmocka_unit_test(test_overlapping_polls_on_two_threads),
        cmocka_unit_test(test_duration_bound),
        cmocka_unit_test(test_short_lived_tasks_bounded),
        cmocka_unit_test(test_cut_at_wait_stacks_own_marker_frame),
        cmocka_unit_test(test_wait_stack_without_boundary_is_root_alone),   /* tokio's waker stacks in marker programs */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
