/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_record_summary.c: unit tests of cli/record_summary (the summary `taskspy record` prints, SPEC section
 * 1): samples, lost, threads, pid, duration and frequency; the markers line with provider:name x locations;
 * polls, tasks and the busiest tasks with their poll times; long polls named with their task (ids above
 * 32 bits in hex); "--markers none" and "none found" (with and without runtime boundary samples) stop
 * before any task line; the wait profile's lines; the processing line with deferred symbolizing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/record_summary.h"

static char *summary_ids(const struct record_options *o, const struct sampler_stats *st, uint64_t boundary_samples,
                         uint64_t after_cpu_ns, const struct record_provisional_ids *ids)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    record_summary_print(out, o, st, 4242, boundary_samples, after_cpu_ns, ids);
    fclose(out);
    return text;
}

static char *summary_after(const struct record_options *o, const struct sampler_stats *st, uint64_t boundary_samples,
                           uint64_t after_cpu_ns)
{
    return summary_ids(o, st, boundary_samples, after_cpu_ns, NULL);
}

static char *summary(const struct record_options *o, const struct sampler_stats *st, uint64_t boundary_samples)
{
    return summary_after(o, st, boundary_samples, 0);
}

static struct record_options options(const char *markers)
{
    struct record_options o;
    memset(&o, 0, sizeof(o));
    o.frequency = 99;
    o.call_graph = SAMPLER_CALL_GRAPH_DWARF;
    o.stack_size = 65528;
    o.markers = markers;
    return o;
}

#define CONTAINS(text, want)                                                                    \
    do {                                                                                        \
        if (!strstr((text), (want)))                                                            \
            fail_msg("'%s' is not in the summary:\n%s", (want), (text));                        \
    } while (0)

static void test_with_markers(void **state)
{
    (void)state;
    struct sampler_probe_stat probes[2] = { { "tokio", "task__poll__start", 3 }, { "tokio", "task__poll__end", 1 } };
    struct sampler_task_stat tasks[2] = {
        { .task_id = 7, .polls = 10, .total_poll_ns = 25000000, .longest_poll_ns = 12000000 },
        { .task_id = 0x7f0000001000ull, .polls = 4, .total_poll_ns = 2000000, .longest_poll_ns = 900000 },
    };
    struct sampler_stats st = {
        .samples = 1234, .lost = 5, .threads = 3, .duration_s = 2.04, .event_name = "cycles",
        .probes = probes, .n_probes = 2, .marker_locations_perf = 4, .polls = 14, .tasks_seen = 2, .spawns = 2,
        .terminates = 1, .timed_polls = 14, .tasks = tasks, .n_tasks = 2, .long_polls = 1,
    };
    struct record_options o = options("auto");
    char *text = summary(&o, &st, 0);
    CONTAINS(text, "taskspy: 1234 samples, 5 lost, 3 threads, pid 4242, 2.0 s at 99 Hz (cycles, dwarf)\n");
    CONTAINS(text, "taskspy: markers: tokio:task__poll__start x 3, tokio:task__poll__end x 1; hits as perf samples\n");
    CONTAINS(text, "taskspy: 14 polls, 2 tasks, 2 spawned, 1 terminated, 0 lost marker records\n");
    CONTAINS(text, "taskspy:   task 7: 10 polls, 25.0 ms total, longest 12.00 ms\n");
    CONTAINS(text, "taskspy:   task 0x7f0000001000: 4 polls, 2.0 ms total, longest 0.90 ms\n");
    CONTAINS(text, "taskspy: 1 long polls (> 10 ms) blocked an executor thread: task 7 (12.0 ms)\n");
    free(text);
}

/* Zero-probe attribution: the route named, with probes for poll events only, a debug file, a library note. */
static void test_tls_route(void **state)
{
    (void)state;
    struct sampler_probe_stat probes[1] = { { "tokio", "poll (return)", 7 } };
    struct sampler_stats st = {
        .samples = 100, .threads = 3, .duration_s = 1.0, .event_name = "cpu-clock", .tls_marker = "tokio CONTEXT.current_task_id",
        .tls_offset = -176, .tls_joined = 100, .tls_debug_file = "/x.debug", .tls_note = "a note",
        .probes = probes, .n_probes = 1, .marker_locations_bpf = 7,
    };
    struct record_options o = options("auto");
    char *text = summary(&o, &st, 0);
    CONTAINS(text, "taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id (thread pointer -176) read at "
                   "each sample: 100 samples, 0 without a record and 0 unreadable ([unknown task]); placed through "
                   "the debug file /x.debug\ntaskspy: TLS marker: a note\n");
    CONTAINS(text, "taskspy: markers: tokio:poll (return) x 7 (poll events; tasks from the TLS marker); hits through BPF\n");
    free(text);
    /* samples that came before the probes named their task: renamed at the end, or kept */
    struct record_provisional_ids ids = { .renamed = 64, .kept = 3 };
    text = summary_ids(&o, &st, 0, 0, &ids);
    CONTAINS(text, "([unknown task]); of the samples in a task no poll probe had placed yet, 64 took the probes' id "
                   "learnt after them and 3 keep the marker's id (not the probes' id the waits carry); placed through");
    free(text);
    ids = (struct record_provisional_ids){ 0 };
    text = summary_ids(&o, &st, 0, 0, &ids);
    assert_null(strstr(text, "no poll probe had placed yet"));
    free(text);
    st.n_probes = 0;
    text = summary(&o, &st, 0);
    CONTAINS(text, "taskspy: markers: no poll probes (tasks from the TLS marker only)\n");
    free(text);
}

static void test_without_markers(void **state)
{
    (void)state;
    struct sampler_stats st = { .samples = 10, .threads = 1, .duration_s = 1, .event_name = "cpu-clock",
                                .unwind_truncated = 2 };
    struct record_options o = options("none");
    char *text = summary(&o, &st, 0);
    CONTAINS(text, "taskspy: 2 stacks were truncated (deeper than the 65528-byte copy or no unwind info)\n");
    CONTAINS(text, "taskspy: markers: off (--markers none)\n");
    assert_null(strstr(text, "polls"));
    free(text);
    o = options("auto");
    text = summary(&o, &st, 6);
    CONTAINS(text, "taskspy: markers: none found; 6 samples put in tasks by the runtime's task boundary frames");
    free(text);
    text = summary(&o, &st, 0);
    CONTAINS(text, "taskspy: markers: none found, and no known runtime task boundary");
    assert_null(strstr(text, "task 0"));
    free(text);
}

/* --wait-output: waits counted, waker events and stacks per second, the tasks that waited longest with their
 * roots, the longest [runnable] delay, the sampler's note. */
static void test_waits(void **state)
{
    (void)state;
    struct profile *names = profile_new();
    assert_non_null(names);
    uint32_t sleeper = profile_intern(names, "task: app::sleeper", 18);
    uint32_t server = profile_intern(names, "task: app::serve", 16);
    struct wait_task_total tasks[2] = {
        { .task_id = 0x7f0000001000ull, .root = sleeper, .suspended_ns = 2900000000ull, .runnable_ns = 4000000 },
        { .task_id = 9, .root = server, .suspended_ns = 1000000000ull, .runnable_ns = 250000000ull,
          .longest_runnable_ns = 31500000 },
    };
    struct wait_summary w = { .intervals = 1500, .suspended_ns = 3900000000ull, .runnable_ns = 254000000ull,
                              .stacks = 300, .longest_runnable_ns = 31500000, .longest_runnable_task = 9,
                              .longest_runnable_root = server, .tasks = tasks, .n_tasks = 2, .n_listed = 2 };
    struct sampler_stats st = { .wait_stacks_skipped = 700, .wait_stacks_lost = 2, .waker_locations = 3,
                                .wait_note = "some note", .duration_s = 2.0, .waker_registrations = 5000,
                                .wakes = 4000 };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    record_summary_print_waits(out, &w, names, &st);
    fclose(out);
    CONTAINS(text, "taskspy: waits: some note\n");
    CONTAINS(text, "taskspy: waits: 1500 waits of 2 tasks, 3.90 s suspended, 0.25 s runnable; 300 registration "
                   "stacks (700 skipped by the budget, 2 lost), 3 waker locations probed\n");
    CONTAINS(text, "taskspy: waits: 9000 waker events (5000 registrations, 4000 wakes) in 2.0 s: 4500 events/s, "
                   "150 stacks/s taken, 350/s skipped\n");
    CONTAINS(text, "taskspy: waited longest:\n"
                   "taskspy:   task 0x7f0000001000 (task: app::sleeper): 2900.0 ms suspended, 4.0 ms runnable\n"
                   "taskspy:   task 9 (task: app::serve): 1000.0 ms suspended, 250.0 ms runnable\n");
    CONTAINS(text, "taskspy: longest [runnable] delay: 31.50 ms, task 9 (task: app::serve)\n");
    free(text);
    profile_free(names);
}

/* The processing line: the sampler's CPU and the deferred symbolizing after it, added and the latter named. */
static void test_processing(void **state)
{
    (void)state;
    struct sampler_stats st = { .samples = 1000, .marker_records = 1000, .processing_cpu_ns = 100000000,
                                .marker_cpu_ns = 20000000, .event_name = "cycles" };
    struct record_options o = options("none");
    char *text = summary_after(&o, &st, 0, 300000000);
    CONTAINS(text, "taskspy: processing: 1000 samples and 1000 marker records in 0.400 CPU-s (5000 records per "
                   "CPU-s; markers 0.020 CPU-s, 20000 ns per record; 0.300 CPU-s of it symbolizing, deferred until "
                   "sampling stopped)\n");
    free(text);
    text = summary(&o, &st, 0);
    CONTAINS(text, "in 0.100 CPU-s (20000 records per CPU-s; markers 0.020 CPU-s, 20000 ns per record)\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_with_markers),
        cmocka_unit_test(test_tls_route),
        cmocka_unit_test(test_waits),
        cmocka_unit_test(test_without_markers),
        cmocka_unit_test(test_processing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
