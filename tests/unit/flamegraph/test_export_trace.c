/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_export_trace.c: unit tests of the Chrome trace export (flamegraph/export_trace.c): a small trace written
 * exactly (metadata, the recording's track, polls sorted per thread as complete events in microseconds, a poll
 * overlapping the previous one of its thread clipped and one inside it left out, task ids beyond 32 bits in
 * hex, samples as instant events whose "sf" points into a stackFrames table holding only the stacks sampled,
 * with their parents), names escaped as JSON (quotes, backslashes, control characters, invalid UTF-8),
 * profile_last_leaf, an empty trace, and write errors reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "flamegraph/flamegraph.h"

#define STACK(...) (const char *const[]){ __VA_ARGS__ }, sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *)

static uint32_t intern(struct profile *p, const char *name)
{
    uint32_t id = profile_intern(p, name, strlen(name));
    assert_int_not_equal(id, PROFILE_NO_FRAME);
    return id;
}

/* Add one sample's stack and return the node it ends at. */
static uint32_t add_stack(struct profile *p, const char *const *names, size_t n)
{
    assert_int_equal(profile_add(p, names, n, 1), 0);
    uint32_t node = profile_last_leaf(p);
    assert_int_not_equal(node, PROFILE_NO_NODE);
    return node;
}

static char *trace_text(const struct profile *p, const struct trace_events *ev, const struct export_info *info,
                        struct trace_report *report)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(profile_write_trace(p, ev, info, out, report), 0);
    assert_int_equal(fclose(out), 0);
    return buf;
}

static void expect_text(const char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        print_error("trace:\n%s\nwant:\n%s\n", got, want);
    assert_string_equal(got, want);
}

static void test_last_leaf(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    uint32_t a = add_stack(p, STACK("w", "main", "f"));
    uint32_t b = add_stack(p, STACK("w", "main"));
    uint32_t c = add_stack(p, STACK("w", "main", "f"));
    size_t n;
    const struct profile_node *nodes = profile_nodes(p, &n);
    assert_int_equal(a, c);
    assert_int_equal(nodes[a].parent, b);
    assert_string_equal(profile_frame_name(p, nodes[a].frame), "f");
    assert_string_equal(profile_frame_name(p, nodes[b].frame), "main");
    assert_int_equal(profile_add(p, NULL, 0, 1), 0);
    assert_int_equal(profile_last_leaf(p), 0);          /* an empty stack ends at the root */
    profile_free(p);
}

#define T0 1000000000ull     /* the recording's start, ns */

static void test_trace(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    uint32_t serve = intern(p, "task: serve");
    uint32_t in_task = add_stack(p, STACK("task: serve", "handle \"req\"", "memchr"));
    uint32_t in_thread = add_stack(p, STACK("worker-0", "main"));
    add_stack(p, STACK("worker-1", "not sampled in the trace"));
    const struct trace_thread threads[] = {
        { .tid = 10, .name = intern(p, "worker-0") },
        { .tid = 11, .name = intern(p, "we\"ird\\\t\xff") },
        { .tid = 12, .name = PROFILE_NO_FRAME },            /* a thread without a name: no metadata */
    };
    const struct trace_poll polls[] = {
        /* given out of order: written sorted by thread, then start */
        { .start_ns = T0 + 2500, .end_ns = T0 + 4000, .task_id = 2, .tid = 10, .root = serve },   /* clipped */
        { .start_ns = T0 + 1000, .end_ns = T0 + 3000, .task_id = 1, .tid = 10, .root = serve },
        { .start_ns = T0 + 3100, .end_ns = T0 + 3500, .task_id = 3, .tid = 10, .root = serve },   /* inside */
        { .start_ns = T0 + 1500, .end_ns = T0 + 1500, .task_id = 0x100000000ull, .tid = 11,
          .root = PROFILE_NO_FRAME },
        { .start_ns = T0 + 4000, .end_ns = T0 + 1004000, .task_id = 1, .tid = 10, .root = serve },
        /* task 1 waited [3000, 4000]: this poll's records were two polls' (left out) */
        { .start_ns = T0 + 3200, .end_ns = T0 + 3800, .task_id = 1, .tid = 11, .root = serve },
    };
    const struct trace_sample samples[] = {
        { .time_ns = T0 + 1200, .tid = 10, .node = in_task },
        { .time_ns = T0 + 1800, .tid = 11, .node = PROFILE_NO_NODE },
        { .time_ns = T0 + 5000, .tid = 10, .node = in_thread },
    };
    const struct trace_wait waits[] = {      /* each task on a track of its own above the recording's */
        { .start_ns = T0 + 3000, .woken_ns = T0 + 3500, .end_ns = T0 + 4000, .task_id = 1, .root = serve,
          .site = "serve @ main.rs:9" },
        { .start_ns = T0 + 1500, .woken_ns = T0 + 1500, .end_ns = T0 + 2500, .task_id = 0x100000000ull,
          .root = PROFILE_NO_FRAME },    /* woken at once: [runnable] alone */
    };
    struct trace_events ev = {
        .pid = 7, .start_ns = T0, .threads = threads, .n_threads = 3, .polls = polls, .n_polls = 6,
        .samples = samples, .n_samples = 3, .waits = waits, .n_waits = 2, .left_out = 4,
    };
    struct export_info info = { .name = "demo \"x\"", .exporter = "taskspy test", .period_ns = 1000,
                                .duration_ns = 2000000 };
    struct trace_report report;
    char *got = trace_text(p, &ev, &info, &report);
    char want[8192];
    snprintf(want, sizeof(want),
        "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":7,\"ts\":0,\"args\":{\"name\":\"demo \\\"x\\\"\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":4194304,\"ts\":0,\"args\":{\"name\":\"taskspy recording\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":10,\"ts\":0,\"args\":{\"name\":\"worker-0\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":11,\"ts\":0,\"args\":{\"name\":\"we\\\"ird\\\\\\t\\ufffd\"}},\n"
        "{\"name\":\"recording\",\"cat\":\"recording\",\"ph\":\"X\",\"pid\":7,\"tid\":4194304,\"ts\":0.000,\"dur\":2000.000},\n"
        "{\"name\":\"task: serve\",\"cat\":\"poll\",\"ph\":\"X\",\"pid\":7,\"tid\":10,\"ts\":1.000,\"dur\":2.000,\"args\":{\"task_id\":\"1\"}},\n"
        "{\"name\":\"task: serve\",\"cat\":\"poll\",\"ph\":\"X\",\"pid\":7,\"tid\":10,\"ts\":3.000,\"dur\":1.000,\"args\":{\"task_id\":\"2\"}},\n"
        "{\"name\":\"task: serve\",\"cat\":\"poll\",\"ph\":\"X\",\"pid\":7,\"tid\":10,\"ts\":4.000,\"dur\":1000.000,\"args\":{\"task_id\":\"1\"}},\n"
        "{\"name\":\"[task entry unknown]\",\"cat\":\"poll\",\"ph\":\"X\",\"pid\":7,\"tid\":11,\"ts\":1.500,\"dur\":0.000,\"args\":{\"task_id\":\"0x100000000\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":4194305,\"ts\":0,\"args\":{\"name\":\"waits of task 1: task: serve\"}},\n"
        "{\"name\":\"task: serve [suspended]\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":7,\"tid\":4194305,\"ts\":3.000,\"dur\":0.500,\"args\":{\"state\":\"[suspended]\",\"task_id\":\"1\",\"await\":\"serve @ main.rs:9\"}},\n"
        "{\"name\":\"task: serve [runnable]\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":7,\"tid\":4194305,\"ts\":3.500,\"dur\":0.500,\"args\":{\"state\":\"[runnable]\",\"task_id\":\"1\",\"await\":\"serve @ main.rs:9\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":4194306,\"ts\":0,\"args\":{\"name\":\"waits of task 0x100000000: [task entry unknown]\"}},\n"
        "{\"name\":\"[task entry unknown] [runnable]\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":7,\"tid\":4194306,\"ts\":1.500,\"dur\":1.000,\"args\":{\"state\":\"[runnable]\",\"task_id\":\"0x100000000\"}},\n"
        "{\"name\":\"memchr\",\"cat\":\"sample\",\"ph\":\"i\",\"s\":\"t\",\"pid\":7,\"tid\":10,\"ts\":1.200,\"sf\":%u},\n"
        "{\"name\":\"[stack unknown]\",\"cat\":\"sample\",\"ph\":\"i\",\"s\":\"t\",\"pid\":7,\"tid\":11,\"ts\":1.800},\n"
        "{\"name\":\"main\",\"cat\":\"sample\",\"ph\":\"i\",\"s\":\"t\",\"pid\":7,\"tid\":10,\"ts\":5.000,\"sf\":%u}\n"
        "],\"stackFrames\":{\n"
        "\"1\":{\"name\":\"task: serve\",\"category\":\"task\"},\n"
        "\"2\":{\"name\":\"handle \\\"req\\\"\",\"category\":\"task\",\"parent\":\"1\"},\n"
        "\"3\":{\"name\":\"memchr\",\"category\":\"task\",\"parent\":\"2\"},\n"
        "\"4\":{\"name\":\"worker-0\",\"category\":\"thread\"},\n"
        "\"5\":{\"name\":\"main\",\"category\":\"thread\",\"parent\":\"4\"}\n"
        "},\"otherData\":{\"exporter\":\"taskspy test\",\"command\":\"demo \\\"x\\\"\",\"pid\":7,"
        "\"sample_period_ns\":1000,\"duration_ns\":2000000,\"samples\":3,\"polls\":4,\"polls_clipped\":1,"
        "\"polls_dropped\":1,\"polls_contradicted\":1,\"wait_spans\":3,\"events_left_out\":4}}\n",
        in_task, in_thread);
    assert_int_equal(in_task, 3);
    assert_int_equal(in_thread, 5);
    expect_text(got, want);
    assert_int_equal(report.polls, 4);
    assert_int_equal(report.clipped, 1);
    assert_int_equal(report.dropped, 1);
    assert_int_equal(report.contradicted, 1);
    assert_int_equal(report.wait_spans, 3);
    free(got);
    profile_free(p);
}

/* Nothing recorded: still a trace, with the process, the recording's track and its complete event (a viewer
 * that imports only complete events has one to show). */
static void test_empty_trace(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    struct trace_events ev = { .pid = 42 };
    char *got = trace_text(p, &ev, NULL, NULL);
    expect_text(got,
        "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":42,\"tid\":42,\"ts\":0,\"args\":{\"name\":\"taskspy\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,\"tid\":4194304,\"ts\":0,\"args\":{\"name\":\"taskspy recording\"}},\n"
        "{\"name\":\"recording\",\"cat\":\"recording\",\"ph\":\"X\",\"pid\":42,\"tid\":4194304,\"ts\":0.000,\"dur\":0.000}\n"
        "],\"stackFrames\":{\n"
        "},\"otherData\":{\"exporter\":\"taskspy\",\"command\":\"taskspy\",\"pid\":42,\"sample_period_ns\":0,"
        "\"duration_ns\":0,\"samples\":0,\"polls\":0,\"polls_clipped\":0,\"polls_dropped\":0,\"polls_contradicted\":0,\"wait_spans\":0,\"events_left_out\":0}}\n");
    free(got);
    profile_free(p);
}

/* Events before the recording's start (another clock, or no start given) move the origin: no negative ts. */
static void test_origin(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    const struct trace_poll poll = { .start_ns = 500, .end_ns = 2500, .task_id = 9, .tid = 3, .root = PROFILE_NO_FRAME };
    struct trace_events ev = { .pid = 1, .start_ns = 1000, .polls = &poll, .n_polls = 1 };
    char *got = trace_text(p, &ev, NULL, NULL);
    assert_non_null(strstr(got, "\"tid\":4194304,\"ts\":0.500,\"dur\":0.000}"));
    assert_non_null(strstr(got, "\"tid\":3,\"ts\":0.000,\"dur\":2.000,\"args\":{\"task_id\":\"9\"}}"));
    free(got);
    ev.start_ns = 0;
    got = trace_text(p, &ev, NULL, NULL);
    assert_non_null(strstr(got, "\"tid\":3,\"ts\":0.000,\"dur\":2.000,"));
    free(got);
    profile_free(p);
}

static void test_write_error(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        skip();
    setvbuf(full, NULL, _IONBF, 0);
    struct profile *p = profile_new();
    assert_non_null(p);
    struct trace_events ev = { .pid = 1 };
    errno = 0;
    assert_int_equal(profile_write_trace(p, &ev, NULL, full, NULL), -1);
    assert_int_equal(errno, ENOSPC);
    fclose(full);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_leaf),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_origin),
        cmocka_unit_test(test_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
