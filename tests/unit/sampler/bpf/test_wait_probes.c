/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_wait_probes.c: unit tests of the wait profile's sampler parts that run without a target: the runtime
 * rule table finds tokio's waker functions (legacy and v0 mangling) with their roles and not their
 * neighbours (drop_waker, other crates); the waker-registration stacks' budget filter is generated within
 * its bounds, refuses times an immediate cannot hold, leaves the CPU check out for a program shared by every
 * CPU's event (tracefs), and (where this process may load BPF) the kernel's verifier accepts both kinds with
 * real maps; the filter after a marker slot write (one program per registration) only for a tracefs event
 * and a task in %rdi, and the verifier accepts it too, also with the slot's call site (the word at %rsp). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <asm/perf_regs.h>
#include <cmocka.h>

#include "sampler/bpf/bpf_ring.h"
#include "sampler/bpf/bpf_slots.h"

#include "sampler/bpf/bpf_sys.h"
#include "sampler/bpf/wait_filter_program.h"
#include "sampler/probes/runtime_probes.h"

static void expect_role(const char *mangled, enum runtime_probe_role want)
{
    enum runtime_probe_role role = RUNTIME_PROBE_POLL;
    const char *runtime = runtime_probes_match(mangled, &role);
    if (!runtime)
        fail_msg("not matched: %s", mangled);
    assert_string_equal(runtime, "tokio");
    assert_int_equal(role, want);
}

static void test_waker_rules(void **state)
{
    (void)state;
    expect_role("_ZN5tokio7runtime4task5waker11clone_waker17he7e38673b0d35139E", RUNTIME_PROBE_WAKER_CLONE);
    expect_role("_ZN5tokio7runtime4task5waker11wake_by_ref17h20b6485e47df2b54E", RUNTIME_PROBE_WAKE);
    expect_role("_ZN5tokio7runtime4task5waker11wake_by_val17h780486a4751fbcf5E", RUNTIME_PROBE_WAKE);
    expect_role("_RNvNtNtNtCsgbXk6m6MvQw_5tokio7runtime4task5waker11clone_waker", RUNTIME_PROBE_WAKER_CLONE);
    expect_role("_RNvNtNtNtCsgbXk6m6MvQw_5tokio7runtime4task5waker11wake_by_val", RUNTIME_PROBE_WAKE);
    /* polls: the task vtable's raw::poll<T, S> (legacy, and v0 with its type arguments after the path) */
    expect_role("_ZN5tokio7runtime4task3raw4poll17h7ae1a96983b482a9E", RUNTIME_PROBE_POLL);
    expect_role("_RINvNtNtNtCsgbXk6m6MvQw_5tokio7runtime4task3raw4pollNCNvCslHHUuw4SgW2_13tokio_fixture10parse_task0"
                "INtNtCslNYArtu3iFV_5alloc4sync3ArcNtNtNtB6_9scheduler14current_thread6HandleEEBS_", RUNTIME_PROBE_POLL);
    /* Harness::poll, which raw::poll calls or inlines, and RawTask::poll, which calls through the vtable, are not */
    assert_null(runtime_probes_match("_ZN5tokio7runtime4task7harness20Harness$LT$T$C$S$GT$4poll17h1fee3ed2b83b53ebE", NULL));
    assert_null(runtime_probes_match("_ZN5tokio7runtime4task3raw7RawTask4poll17h0123456789abcdefE", NULL));
    assert_null(runtime_probes_match("_RNvMNtNtNtCsgbXk6m6MvQw_5tokio7runtime4task3rawNtB2_7RawTask4poll", NULL));
    /* neighbours that are not registrations or wakes */
    assert_null(runtime_probes_match("_ZN5tokio7runtime4task5waker10drop_waker17hba6a0f1714c5f044E", NULL));
    assert_null(runtime_probes_match("_RNvNtNtNtCsgbXk6m6MvQw_5tokio7runtime4task5waker10drop_waker", NULL));
    assert_null(runtime_probes_match("_ZN4core4task4wake5Waker5clone17h0123456789abcdefE", NULL));
    assert_null(runtime_probes_match("_ZN5other7runtime4task5waker11clone_waker17h0123456789abcdefE", NULL));
    assert_null(runtime_probes_match("_RNvNtNtNtCsgbXk6m6MvQw_5tokio7runtime4task5waker11clone_wakerX", NULL));
}

static void test_filter_bounds(void **state)
{
    (void)state;
    struct bpf_insn p[WAIT_FILTER_PROGRAM_MAX];
    struct wait_filter_spec spec = { .tgid = 42, .cpu = 1, .tasks_fd = 5, .counters_fd = 6, .interval_ns = 50000000,
                                     .window_ns = 100000000, .max_per_window = 30,
                                     .max_first_per_window = 60 };
    int n = wait_filter_program(&spec, p, WAIT_FILTER_PROGRAM_MAX);
    assert_true(n > 0 && n <= (int)WAIT_FILTER_PROGRAM_MAX);
    assert_int_equal(p[n - 1].code, BPF_JMP | BPF_EXIT);
    assert_int_equal(wait_filter_program(&spec, p, 10), -1);       /* no room */
    spec.cpu = WAIT_FILTER_ANY_CPU;                                   /* no CPU check: its call and jump gone */
    assert_int_equal(wait_filter_program(&spec, p, WAIT_FILTER_PROGRAM_MAX), n - 2);
    for (int i = 0; i < n - 2; i++)
        assert_false(p[i].code == (BPF_JMP | BPF_CALL) && p[i].imm == BPF_FUNC_get_smp_processor_id);
    spec.window_ns = 3000000000u;                                     /* 3 s: not an immediate */
    assert_int_equal(wait_filter_program(&spec, p, WAIT_FILTER_PROGRAM_MAX), -1);
}

/* The filter's two maps, as the sampler creates them; false when this process may not create BPF maps. */
static bool filter_maps(int *tasks, int *counters)
{
    *tasks = bpf_sys_map_create(BPF_MAP_TYPE_LRU_HASH, 8, sizeof(struct wait_filter_task), 1024, 0);
    if (*tasks < 0 && (errno == EPERM || errno == EACCES))
        return false;
    assert_true(*tasks >= 0);
    *counters = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, sizeof(struct wait_filter_counters), 1, BPF_F_MMAPABLE);
    assert_true(*counters >= 0);
    return true;
}

static void test_filter_verifier_accepts(void **state)
{
    (void)state;
    int tasks, counters;
    if (!filter_maps(&tasks, &counters))
        skip();
    struct bpf_insn p[WAIT_FILTER_PROGRAM_MAX];
    struct wait_filter_spec spec = { .tgid = (uint32_t)getpid(), .cpu = 0, .tasks_fd = tasks, .counters_fd = counters,
                                     .interval_ns = 50000000, .window_ns = 100000000, .max_per_window = 30,
                                     .max_first_per_window = 60 };
    for (int any_cpu = 0; any_cpu < 2; any_cpu++) {
        spec.cpu = any_cpu ? WAIT_FILTER_ANY_CPU : 0;
        int n = wait_filter_program(&spec, p, WAIT_FILTER_PROGRAM_MAX);
        assert_true(n > 0);
        char log[16384];
        int fd = bpf_sys_prog_load_probe(p, (size_t)n, false, log, sizeof(log));
        if (fd < 0)
            fail_msg("refused: %s\n%s", strerror(errno), log);
        close(fd);
    }
    close(counters);
    close(tasks);
}

static void test_slot_filter(void **state)
{
    (void)state;
    int tasks, counters;
    if (!filter_maps(&tasks, &counters))
        skip();
    struct bpf_slots slots;
    struct bpf_ring doorbell;
    assert_int_equal(bpf_slots_create(&slots, 2, 8), 0);
    assert_int_equal(bpf_ring_create(&doorbell, 4096), 0);
    struct usdt_arg rdi = { .kind = USDT_ARG_REG, .size = 8, .reg = PERF_REG_X86_DI, .reg_bytes = 8 };
    struct bpf_marker_program_spec marker = { .arg0 = &rdi, .location = 3, .tgid = (uint32_t)getpid(),
                                              .slots_fd = slots.map_fd, .slot_bits = slots.bits,
                                              .doorbell_fd = doorbell.map_fd };
    struct wait_filter_spec spec = { .tgid = (uint32_t)getpid(), .cpu = WAIT_FILTER_ANY_CPU, .tasks_fd = tasks,
                                     .counters_fd = counters, .interval_ns = 50000000, .window_ns = 100000000,
                                     .max_per_window = 30,
                                     .max_first_per_window = 60 };
    struct bpf_insn p[WAIT_FILTER_PROGRAM_MAX];
    int n = wait_filter_slot_program(&spec, &marker, p, WAIT_FILTER_PROGRAM_MAX);
    assert_true(n > 0 && n <= (int)WAIT_FILTER_PROGRAM_MAX);
    /* one clock read and one process check for both jobs */
    int clock_reads = 0, pid_reads = 0;
    for (int i = 0; i < n; i++) {
        clock_reads += p[i].code == (BPF_JMP | BPF_CALL) && p[i].imm == BPF_FUNC_ktime_get_ns;
        pid_reads += p[i].code == (BPF_JMP | BPF_CALL) && p[i].imm == BPF_FUNC_get_current_pid_tgid;
    }
    assert_int_equal(clock_reads, 1);
    assert_int_equal(pid_reads, 1);
    char log[16384];
    int fd = bpf_sys_prog_load_probe(p, (size_t)n, false, log, sizeof(log));
    if (fd < 0)
        fail_msg("refused: %s\n%s", strerror(errno), log);
    close(fd);
    /* the registration's slot with its call site (the word at %rsp), as the markers write it: room, accepted */
    marker.return_read = BPF_RETURN_ALWAYS;
    int with_site = wait_filter_slot_program(&spec, &marker, p, WAIT_FILTER_PROGRAM_MAX);
    assert_true(with_site > n && with_site <= (int)WAIT_FILTER_PROGRAM_MAX);
    if ((fd = bpf_sys_prog_load_probe(p, (size_t)with_site, false, log, sizeof(log))) < 0)
        fail_msg("refused with the call site: %s\n%s", strerror(errno), log);
    close(fd);
    marker.return_read = BPF_RETURN_NEVER;
    assert_int_equal(wait_filter_slot_program(&spec, &marker, p, 20), -1);        /* no room */
    spec.cpu = 0;                                                                 /* per-CPU events: no */
    assert_int_equal(wait_filter_slot_program(&spec, &marker, p, WAIT_FILTER_PROGRAM_MAX), -1);
    spec.cpu = WAIT_FILTER_ANY_CPU;
    rdi.reg = PERF_REG_X86_SI;                                                    /* the task not in %rdi */
    assert_int_equal(wait_filter_slot_program(&spec, &marker, p, WAIT_FILTER_PROGRAM_MAX), -1);
    marker.arg0 = NULL;
    assert_int_equal(wait_filter_slot_program(&spec, &marker, p, WAIT_FILTER_PROGRAM_MAX), -1);
    bpf_ring_destroy(&doorbell);
    bpf_slots_destroy(&slots);
    close(counters);
    close(tasks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waker_rules),
        cmocka_unit_test(test_filter_bounds),
        cmocka_unit_test(test_filter_verifier_accepts),
        cmocka_unit_test(test_slot_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
