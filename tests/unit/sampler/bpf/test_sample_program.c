/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_sample_program.c: unit tests of the TLS marker's kernel side. The BTF reader (sampler/bpf/btf_offsets)
 * on a synthetic BTF image: member paths through nested structs, typedefs and anonymous unions, a bit-field
 * and a missing member refused, a bad header refused. Then, where this process may use BPF and the kernel
 * has BTF: the per-sample program (sampler/bpf/sample_program) is accepted by the verifier, attached to a
 * real cpu-clock sampling event of this thread, and while the thread burns CPU with its marker set to 42,
 * every record it writes names this thread and 42, with the sample's time close to the program's clock.
 * The same with an Option-shaped marker (tokio's): the value while its discriminant says Some, 0 after. */
#include <errno.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampler/bpf/bpf_ring.h"
#include "sampler/bpf/bpf_sys.h"
#include "sampler/bpf/btf_offsets.h"
#include "sampler/bpf/sample_program.h"
#include "sampler/probes/tls_marker.h"

__thread uint64_t taskspy_current_task __attribute__((tls_model("initial-exec"), used));
/* an Option<u64> as tokio's current_task_id lays it out: discriminant (1: Some), then the value */
__thread struct { uint64_t tag, id; } option_task __attribute__((tls_model("initial-exec")));

/* ---- a synthetic BTF image ---- */

struct image {
    uint8_t bytes[1024];
    size_t types_len;
    char strings[256];
    size_t strings_len;
};

static uint32_t add_string(struct image *im, const char *s)
{
    uint32_t at = (uint32_t)im->strings_len;
    memcpy(im->strings + at, s, strlen(s) + 1);
    im->strings_len += strlen(s) + 1;
    return at;
}

static void add_words(struct image *im, const uint32_t *w, size_t n)
{
    memcpy(im->bytes + sizeof(struct btf_header) + im->types_len, w, n * 4);
    im->types_len += n * 4;
}

#define INFO(kind, vlen, kflag) (((uint32_t)(kflag) << 31) | ((uint32_t)(kind) << 24) | (uint32_t)(vlen))

/* 1 int u64; 2 struct thread_struct { u64 sp; u64 fsbase; }; 3 typedef thread_struct thread_t;
 * 4 union (anonymous) { u64 a; u64 b; }; 5 struct task_struct { u64 pid; union { a; b }; thread_t thread; }
 * 6 struct bits { u64 flag:1 (kind_flag) }. Returns the image's size. */
static size_t build_image(struct image *im)
{
    memset(im, 0, sizeof(*im));
    im->strings_len = 1;                              /* offset 0: the empty name */
    uint32_t u64 = add_string(im, "u64"), ts = add_string(im, "thread_struct"), sp = add_string(im, "sp"),
             fsbase = add_string(im, "fsbase"), tt = add_string(im, "thread_t"), a = add_string(im, "a"),
             b = add_string(im, "b"), task = add_string(im, "task_struct"), pid = add_string(im, "pid"),
             thread = add_string(im, "thread"), bits = add_string(im, "bits"), flag = add_string(im, "flag");
    const uint32_t types[] = {
        u64, INFO(BTF_KIND_INT, 0, 0), 8, 64,
        ts, INFO(BTF_KIND_STRUCT, 2, 0), 16, sp, 1, 0, fsbase, 1, 64,
        tt, INFO(BTF_KIND_TYPEDEF, 0, 0), 2,
        0, INFO(BTF_KIND_UNION, 2, 0), 8, a, 1, 0, b, 1, 0,
        task, INFO(BTF_KIND_STRUCT, 3, 0), 32, pid, 1, 0, 0, 4, 64, thread, 3, 128,
        bits, INFO(BTF_KIND_STRUCT, 1, 1), 8, flag, 1, (1u << 24) | 3,
    };
    add_words(im, types, sizeof(types) / 4);
    struct btf_header h = { .magic = BTF_MAGIC, .version = 1, .hdr_len = sizeof(h), .type_off = 0,
                            .type_len = (uint32_t)im->types_len, .str_off = (uint32_t)im->types_len,
                            .str_len = (uint32_t)im->strings_len };
    memcpy(im->bytes, &h, sizeof(h));
    memcpy(im->bytes + sizeof(h) + im->types_len, im->strings, im->strings_len);
    return sizeof(h) + im->types_len + im->strings_len;
}

static void test_btf_paths(void **state)
{
    (void)state;
    struct image im;
    size_t size = build_image(&im);
    struct btf_types b;
    assert_int_equal(btf_types_from_memory(&b, im.bytes, size), 0);
    uint32_t off = 99;
    assert_int_equal(btf_member_offset(&b, "task_struct", "thread.fsbase", &off), 0);
    assert_int_equal(off, 16 + 8);
    assert_int_equal(btf_member_offset(&b, "task_struct", "b", &off), 0);    /* in the anonymous union */
    assert_int_equal(off, 8);
    assert_int_equal(btf_member_offset(&b, "thread_struct", "sp", &off), 0);
    assert_int_equal(off, 0);
    assert_int_equal(btf_member_offset(&b, "task_struct", "thread.nothere", &off), -1);
    assert_int_equal(btf_member_offset(&b, "task_struct", "threadx", &off), -1);
    assert_int_equal(btf_member_offset(&b, "no_such_struct", "a", &off), -1);
    assert_int_equal(btf_member_offset(&b, "bits", "flag", &off), -1);       /* a bit-field */
    btf_types_free(&b);
    im.bytes[0] ^= 0xff;                                                       /* not BTF */
    assert_int_equal(btf_types_from_memory(&b, im.bytes, size), -1);
    assert_int_equal(errno, EINVAL);
    im.bytes[0] ^= 0xff;
    assert_int_equal(btf_types_from_memory(&b, im.bytes, sizeof(struct btf_header) + 6), -1);   /* cut short */
}

/* ---- the program on a real sampling event ---- */

static int open_sampling_event(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.freq = 1;
    a.sample_freq = 999;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.disabled = 1;
    a.exclude_kernel = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

struct seen {
    uint32_t tid;
    uint64_t want;
    uint32_t want_flags;
    size_t records, right, close_in_time;
};

static void count_record(void *ctx, const void *data, uint32_t len)
{
    struct seen *s = ctx;
    struct bpf_sample_record r;
    assert_true(len >= sizeof(r));
    memcpy(&r, data, sizeof(r));
    s->records++;
    if (r.tid == s->tid && r.task == s->want && r.flags == s->want_flags)
        s->right++;
    uint64_t skew = r.time_ns > r.ktime_ns ? r.time_ns - r.ktime_ns : r.ktime_ns - r.time_ns;
    if (r.time_ns && skew < 10000000)
        s->close_in_time++;
}

static uintptr_t thread_pointer(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

/* Load the program of spec (ring, tgid and kernel offsets filled here), sample this thread for 100 ms of
 * CPU and check every record says want (with want_flags). Skips where BPF or BTF is missing. */
static void run_program(struct bpf_sample_program_spec *spec, uint64_t want, uint32_t want_flags)
{
    struct btf_types btf;
    if (btf_types_load(&btf, "/sys/kernel/btf/vmlinux") != 0)
        skip();                                   /* no kernel BTF: the route falls back to probes */
    uint32_t data, time, fsbase;
    assert_int_equal(btf_member_offset(&btf, "bpf_perf_event_data_kern", "data", &data), 0);
    assert_int_equal(btf_member_offset(&btf, "perf_sample_data", "time", &time), 0);
    assert_int_equal(btf_member_offset(&btf, "task_struct", "thread.fsbase", &fsbase), 0);
    btf_types_free(&btf);
    struct bpf_ring ring;
    if (bpf_ring_create(&ring, 1 << 16) != 0 && (errno == EPERM || errno == EACCES))
        skip();
    assert_true(ring.map_fd >= 0);
    spec->tgid = (uint32_t)getpid();
    spec->ring_fd = ring.map_fd;
    spec->off_ctx_data = (uint16_t)data;
    spec->off_data_time = (uint16_t)time;
    spec->off_task_fsbase = (uint16_t)fsbase;
    struct bpf_insn insns[BPF_SAMPLE_PROGRAM_MAX];
    int n = bpf_sample_program(spec, insns, BPF_SAMPLE_PROGRAM_MAX);
    assert_true(n > 0);
    assert_int_equal(bpf_sample_program(spec, insns, 8), -1);     /* does not fit: refused */
    char log[4096] = "";
    int prog = bpf_sys_prog_load_perf_event(insns, (size_t)n, log, sizeof(log));
    if (prog < 0)
        fprintf(stderr, "# verifier: %s\n", log);
    assert_true(prog >= 0);
    int ev = open_sampling_event();
    assert_true(ev >= 0);
    assert_int_equal(ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog), 0);
    assert_int_equal(ioctl(ev, PERF_EVENT_IOC_ENABLE, 0), 0);
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile uint64_t x = 1;
    do {                                            /* 100 ms of CPU: about 100 samples */
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ull + 1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 100000000L);
    assert_int_equal(ioctl(ev, PERF_EVENT_IOC_DISABLE, 0), 0);
    struct seen s = { .tid = (uint32_t)syscall(SYS_gettid), .want = want, .want_flags = want_flags };
    bpf_ring_consume(&ring, count_record, &s);
    assert_true(s.records >= 10);
    assert_int_equal(s.right, s.records);
    assert_int_equal(s.close_in_time, s.records);
    close(ev);
    close(prog);
    bpf_ring_destroy(&ring);
}

static void test_program_on_samples(void **state)
{
    (void)state;
    struct tls_marker m;
    assert_int_equal(tls_marker_find("/proc/self/exe", &m), 1);
    struct bpf_sample_program_spec spec = { .tp_offset = (int32_t)m.tp_offset, .place_map_fd = -1 };
    taskspy_current_task = 42;
    run_program(&spec, 42, 0);
    taskspy_current_task = 0;
}

/* The offset from a place map (a marker in a shared library, placed once loaded): not known yet, the record
 * says so (task 0); once set, the marker's value. */
static void test_place_map(void **state)
{
    (void)state;
    int32_t at = (int32_t)((intptr_t)&taskspy_current_task - (intptr_t)thread_pointer());
    int map = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
    if (map < 0 && (errno == EPERM || errno == EACCES))
        skip();
    assert_true(map >= 0);
    struct bpf_sample_program_spec spec = { .tp_offset = 0, .place_map_fd = map };
    taskspy_current_task = 23;
    run_program(&spec, 0, BPF_SAMPLE_PLACE_UNKNOWN);   /* entry 0 is 0: no place yet */
    uint32_t key = 0;
    int64_t offset = at;
    assert_int_equal(bpf_sys_map_update(map, &key, &offset), 0);
    run_program(&spec, 23, 0);
    taskspy_current_task = 0;
    spec.has_tag = true;                            /* a tag with a place map: refused */
    spec.tag_size = 1;
    struct bpf_insn insns[BPF_SAMPLE_PROGRAM_MAX];
    assert_int_equal(bpf_sample_program(&spec, insns, BPF_SAMPLE_PROGRAM_MAX), -1);
    close(map);
}

static void test_option_marker(void **state)
{
    (void)state;
    int32_t at = (int32_t)((intptr_t)&option_task - (intptr_t)thread_pointer());
    struct bpf_sample_program_spec spec = { .has_tag = true, .tag_tp_offset = at, .tag_size = 8, .some_value = 1,
                                            .tp_offset = at + 8, .place_map_fd = -1 };
    option_task.tag = 1;
    option_task.id = 7;
    run_program(&spec, 7, 0);
    option_task.tag = 0;                            /* None: the stale id is not read */
    run_program(&spec, 0, 0);
    spec.tag_size = 9;
    struct bpf_insn insns[BPF_SAMPLE_PROGRAM_MAX];
    assert_int_equal(bpf_sample_program(&spec, insns, BPF_SAMPLE_PROGRAM_MAX), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_btf_paths),
        cmocka_unit_test(test_program_on_samples),
        cmocka_unit_test(test_option_marker),
        cmocka_unit_test(test_place_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
