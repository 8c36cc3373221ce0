/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_trace_collect.c: unit tests of cli/trace_collect (what `record` keeps for a Chrome trace): threads by
 * number, the cap on polls and samples (the ones over it counted, none kept), polls named at the end by their
 * task's root (known entry, or "[task entry unknown]"), samples held back by task_stacks pointed at the root-only
 * stack task_stacks_finish gave them, and the trace_events handed to the writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/trace_collect.h"

#define MARKER "poll_wrapper"

struct env {
    struct profile *p;
    struct task_stacks *t;
    struct stack_frame frames[4];
    const struct stack_frame *ptrs[4];
};

/* A task sample: the wrapper, then the task's function when entry is not NULL. Returns its stack's node. */
static uint32_t add_task_sample(struct env *e, uint64_t task, const char *entry)
{
    size_t n = 0;
    assert_int_equal(task_stacks_prepare(e->t, MARKER, NULL, 0, false, &e->frames[n++]), 0);
    if (entry)
        assert_int_equal(task_stacks_prepare(e->t, entry, NULL, 0, false, &e->frames[n++]), 0);
    for (size_t i = 0; i < n; i++)
        e->ptrs[i] = &e->frames[i];
    uint32_t root = profile_intern(e->p, "w", 1);
    uint32_t marker = profile_intern(e->p, MARKER, strlen(MARKER));
    assert_int_equal(task_stacks_add(e->t, root, STACK_IN_TASK, task, marker, e->ptrs, n, 1), 0);
    return task_stacks_last_node(e->t);
}

static void test_cap(void **state)
{
    (void)state;
    struct trace_collect c;
    trace_collect_init(&c, 3);
    struct sampler_poll poll = { .tid = 5, .thread = 0, .task_id = 1, .start_ns = 10, .end_ns = 20 };
    assert_int_equal(trace_collect_poll(&c, &poll), 0);
    assert_int_equal(trace_collect_sample(&c, 5, 15, 1, 0), 0);
    assert_int_equal(trace_collect_poll(&c, &poll), 0);
    assert_int_equal(trace_collect_poll(&c, &poll), 0);            /* over the cap */
    assert_int_equal(trace_collect_sample(&c, 5, 25, 1, 0), 0);    /* over the cap */
    assert_int_equal(c.polls.n, 2);
    assert_int_equal(c.samples.n, 1);
    assert_int_equal(c.left_out, 2);
    assert_int_equal(c.polls.v[0].tid, 5);
    assert_int_equal(c.polls.v[0].start_ns, 10);
    assert_int_equal(c.polls.v[0].end_ns, 20);
    trace_collect_free(&c);
}

static void test_threads(void **state)
{
    (void)state;
    struct trace_collect c;
    trace_collect_init(&c, 10);
    assert_int_equal(trace_collect_thread(&c, 2, 102, 7), 0);
    assert_int_equal(trace_collect_thread(&c, 0, 100, 8), 0);
    assert_int_equal(trace_collect_thread(&c, 0, 100, 9), 0);     /* renamed */
    assert_int_equal(trace_collect_thread(&c, SAMPLER_NO_THREAD, 1, 1), -1);
    assert_int_equal(c.threads.n, 3);
    assert_int_equal(c.threads.v[0].tid, 100);
    assert_int_equal(c.threads.v[0].name, 9);
    assert_int_equal(c.threads.v[1].name, PROFILE_NO_FRAME);      /* not named */
    assert_int_equal(c.threads.v[2].tid, 102);
    trace_collect_free(&c);
}

static void test_finish(void **state)
{
    (void)state;
    struct env e;
    char err[128];
    e.p = profile_new();
    assert_non_null(e.p);
    e.t = task_stacks_new(e.p, GROUP_BY_ENTRY, false, MARKER, err, sizeof(err));
    assert_non_null(e.t);
    struct trace_collect c;
    trace_collect_init(&c, 100);

    uint32_t held = add_task_sample(&e, 3, NULL);          /* entry not known yet */
    assert_int_equal(held, PROFILE_NO_NODE);
    assert_int_equal(trace_collect_sample(&c, 9, 100, held, 3), 0);
    uint32_t full = add_task_sample(&e, 3, "app::serve");
    assert_int_not_equal(full, PROFILE_NO_NODE);
    assert_int_equal(trace_collect_sample(&c, 9, 200, full, 3), 0);
    struct sampler_poll polls[] = {
        { .tid = 9, .task_id = 3, .start_ns = 50, .end_ns = 250 },
        { .tid = 9, .task_id = 4, .start_ns = 300, .end_ns = 400 },     /* a task never sampled */
        { .tid = 9, .task_id = 3, .start_ns = 500, .end_ns = 600 },
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(trace_collect_poll(&c, &polls[i]), 0);
    /* waits of task 3 between its polls: the doubtful one is left out, as the wait profile leaves it */
    struct wait_interval waits[] = {
        { .task_id = 3, .start_ns = 250, .woken_ns = 400, .end_ns = 500, .site = "app::serve @ main.rs:9" },
        { .task_id = 3, .start_ns = 600, .woken_ns = 700, .end_ns = 700, .doubtful = true },
    };
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(trace_collect_wait(&c, &waits[i]), 0);
    assert_int_equal(task_stacks_finish(e.t), 0);

    struct trace_events ev;
    assert_int_equal(trace_collect_finish(&c, e.t, e.p, 77, 40, false, &ev), 0);
    assert_int_equal(ev.n_waits, 1);
    assert_int_equal(ev.waits[0].woken_ns, 400);
    assert_string_equal(ev.waits[0].site, "app::serve @ main.rs:9");
    assert_string_equal(profile_frame_name(e.p, ev.waits[0].root), "task: app::serve");
    assert_int_equal(ev.pid, 77);
    assert_int_equal(ev.start_ns, 40);
    assert_int_equal(ev.n_polls, 3);
    assert_int_equal(ev.n_samples, 2);
    assert_string_equal(profile_frame_name(e.p, ev.polls[0].root), "task: app::serve");
    assert_string_equal(profile_frame_name(e.p, ev.polls[1].root), "[task entry unknown]");
    assert_int_equal(ev.polls[2].root, ev.polls[0].root);
    /* the held-back sample: the stack of its task's root alone, as the folded output has it */
    size_t n;
    const struct profile_node *nodes = profile_nodes(e.p, &n);
    uint32_t node = ev.samples[0].node;
    assert_true(node != PROFILE_NO_NODE && node < n);
    assert_int_equal(nodes[node].parent, 0);
    assert_string_equal(profile_frame_name(e.p, nodes[node].frame), "task: app::serve");
    assert_int_equal(nodes[node].self, 1);
    assert_int_equal(ev.samples[1].node, full);

    trace_collect_free(&c);
    task_stacks_free(e.t);
    profile_free(e.p);
}

static const char *name_by_start(void *ctx, uint64_t start_addr)
{
    (void)ctx;
    return start_addr == 0x1000 ? "app::sleeper" : start_addr == 0x2000 ? "app::other" : NULL;
}

/* A poll of a task no sample named is named by the function its probe sat in (name_poll: one id may be several
   tasks' in turn), a task a sample named keeps its root, and without a name the poll stays [task entry unknown]. */
static void test_polls_named_by_their_function(void **state)
{
    (void)state;
    struct env e;
    char err[128];
    e.p = profile_new();
    assert_non_null(e.p);
    e.t = task_stacks_new(e.p, GROUP_BY_ENTRY, true, NULL, err, sizeof(err));
    assert_non_null(e.t);
    add_task_sample(&e, 3, "app::serve::{{closure}}");
    struct trace_collect c;
    trace_collect_init(&c, 100);
    c.name_poll = name_by_start;
    struct sampler_poll polls[] = {
        { .tid = 9, .task_id = 3, .start_ns = 50, .end_ns = 60, .start_addr = 0x2000 },  /* sampled: its own root */
        { .tid = 9, .task_id = 4, .start_ns = 70, .end_ns = 80, .start_addr = 0x1000 },
        { .tid = 9, .task_id = 4, .start_ns = 90, .end_ns = 95, .start_addr = 0x2000 },  /* the id reused */
        { .tid = 9, .task_id = 5, .start_ns = 96, .end_ns = 99, .start_addr = 0x3000 },  /* no name */
    };
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(trace_collect_poll(&c, &polls[i]), 0);
    assert_int_equal(task_stacks_finish(e.t), 0);
    struct trace_events ev;
    assert_int_equal(trace_collect_finish(&c, e.t, e.p, 1, 0, false, &ev), 0);
    assert_string_equal(profile_frame_name(e.p, ev.polls[0].root), "task: app::serve");
    assert_string_equal(profile_frame_name(e.p, ev.polls[1].root), "task: app::sleeper");
    assert_string_equal(profile_frame_name(e.p, ev.polls[2].root), "task: app::other");
    assert_string_equal(profile_frame_name(e.p, ev.polls[3].root), "[task entry unknown]");
    trace_collect_free(&c);
    task_stacks_free(e.t);
    profile_free(e.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_finish),
        cmocka_unit_test(test_polls_named_by_their_function),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
