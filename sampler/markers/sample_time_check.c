/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sample_time_check.c: whether this kernel lets a program on a sampling event see the sample's own time
 * (see sample_time_check.h). The check is the real thing on taskspy's own thread: a task-clock event
 * sampling every 100 us of this thread's CPU, the sample program attached, some CPU burnt, then each perf
 * sample's time looked up among the ring's records. Kernels that run the program before perf_prepare_sample
 * (before Linux 6.3) leave the time as it was on the stack: no record carries a sample's time. */
#include "sampler/markers/sample_time_check.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/bpf/bpf_ring.h"
#include "sampler/bpf/bpf_sys.h"
#include "sampler/perf/ring_buffer.h"

#define MAX_TIMES 256
#define BURN_NS 4000000ull              /* this thread's CPU time burnt under the event: ~40 samples */

struct times {
    uint64_t sample[MAX_TIMES];         /* the perf samples' times */
    size_t n_samples;
    size_t matched;                     /* ring records carrying one of them */
};

static enum ring_buffer_next take_sample(void *ctx, const struct perf_event_header *rec)
{
    struct times *t = ctx;
    if (rec->type == PERF_RECORD_SAMPLE && rec->size >= sizeof(*rec) + 16 && t->n_samples < MAX_TIMES)
        memcpy(&t->sample[t->n_samples++], (const uint8_t *)(rec + 1) + 8, 8);   /* after TID */
    return RING_BUFFER_CONTINUE;
}

static void take_record(void *ctx, const void *data, uint32_t len)
{
    struct times *t = ctx;
    struct bpf_sample_record r;
    if (len < sizeof(r))
        return;
    memcpy(&r, data, sizeof(r));
    for (size_t i = 0; i < t->n_samples; i++)
        if (t->sample[i] == r.time_ns) {
            t->matched++;
            return;
        }
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void burn(void)
{
    uint64_t until = thread_cpu_ns() + BURN_NS;
    volatile uint64_t x = 1;
    while (thread_cpu_ns() < until)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1;
}

/* Sample this thread with the program attached; fill t. Returns 0, or -1 with err. */
static int sample_self(int prog_fd, struct times *t, char *err, size_t errlen)
{
    struct perf_event_attr attr = {
        .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_TASK_CLOCK,
        .sample_period = 100000, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME, .disabled = 1,
        .exclude_kernel = 1, .exclude_hv = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC,
    };
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot sample taskspy's own thread to check the kernel: %s", strerror(errno));
        return -1;
    }
    struct ring_buffer rb = { 0 };
    int rc = -1;
    if (ring_buffer_map(&rb, fd, 2) != 0)
        snprintf(err, errlen, "cannot map a perf buffer to check the kernel: %s", strerror(errno));
    else if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) != 0)
        snprintf(err, errlen, "cannot attach the BPF program to a sampling event: %s", strerror(errno));
    else if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
        snprintf(err, errlen, "cannot enable a sampling event: %s", strerror(errno));
    else {
        burn();
        if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0)
            snprintf(err, errlen, "cannot disable a sampling event: %s", strerror(errno));
        else if (ring_buffer_drain(&rb, take_sample, t) < 0)
            snprintf(err, errlen, "a corrupt perf buffer while checking the kernel");
        else
            rc = 0;
    }
    ring_buffer_unmap(&rb);
    close(fd);
    return rc;
}

int sample_time_check(const struct bpf_sample_program_spec *kernel, char *err, size_t errlen)
{
    struct bpf_ring ring = { .map_fd = -1 };
    if (bpf_ring_create(&ring, (size_t)16 << 10) != 0) {
        snprintf(err, errlen, "cannot create a BPF ring buffer: %s", strerror(errno));
        return -1;
    }
    /* this process, its fs_base's first word (glibc's TCB points at itself: always readable) */
    struct bpf_sample_program_spec spec = *kernel;
    spec.tgid = (uint32_t)getpid();
    spec.ring_fd = ring.map_fd;
    spec.tp_offset = 0;
    spec.has_tag = false;
    spec.place_map_fd = -1;
    struct bpf_insn insns[BPF_SAMPLE_PROGRAM_MAX];
    int n = bpf_sample_program(&spec, insns, BPF_SAMPLE_PROGRAM_MAX);
    char log[4096] = "";
    int prog_fd = n < 0 ? -1 : bpf_sys_prog_load_perf_event(insns, (size_t)n, log, sizeof(log));
    if (prog_fd < 0) {
        if (n < 0)
            snprintf(err, errlen, "the sample program does not fit");
        else
            bpf_sys_refusal(log, errno, err, errlen);
        bpf_ring_destroy(&ring);
        return -1;
    }
    struct times t = { .n_samples = 0 };
    int rc = sample_self(prog_fd, &t, err, errlen);
    close(prog_fd);
    if (rc == 0) {
        bpf_ring_consume(&ring, take_record, &t);
        if (t.n_samples == 0) {
            snprintf(err, errlen, "no sample of taskspy's own thread to check the kernel with");
            rc = -1;
        } else if (t.matched * 2 < t.n_samples) {
            snprintf(err, errlen, "the kernel runs BPF programs on a sample before it fills the sample's time "
                     "(%zu of %zu samples found their record; Linux 6.3 and later fill it first)", t.matched,
                     t.n_samples);
            rc = 0;
        } else {
            rc = 1;
        }
    }
    bpf_ring_destroy(&ring);
    return rc;
}
