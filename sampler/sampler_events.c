/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_events.c: the sampling events: their attributes (cycles, else cpu-clock; dwarf or fp call graphs),
 * one event per (thread, CPU) writing into that CPU's ring buffer, attaching threads of a running target,
 * and enabling or disabling them all. */
#include "sampler/sampler_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
    return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

/* kernel.perf_event_max_stack bounds callchain depth; asking for more is EINVAL. */
static unsigned max_kernel_stack(void)
{
    unsigned v = 127;
    FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
    if (f) {
        if (fscanf(f, "%u", &v) != 1)
            v = 127;
        fclose(f);
    }
    return v < SAMPLER_MAX_FRAMES - 2 ? v : SAMPLER_MAX_FRAMES - 2;
}

static void init_sampling_attr(struct sampler *s, bool hardware, bool exclude_kernel)
{
    struct perf_event_attr *a = &s->attr;
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
    a->config = hardware ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
    a->freq = 1;
    a->sample_freq = s->cfg.frequency;
    a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    bool dwarf = s->cfg.call_graph == SAMPLER_CALL_GRAPH_DWARF;
    if (!dwarf || s->cfg.kernel)
        a->sample_type |= PERF_SAMPLE_CALLCHAIN;
    if (dwarf) {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = USER_REGS_MASK;
        a->sample_stack_user = s->cfg.stack_size;
        a->exclude_callchain_user = 1;
    }
    a->exclude_callchain_kernel = !s->cfg.kernel;
    a->sample_max_stack = (uint16_t)max_kernel_stack();
    a->exclude_kernel = exclude_kernel;
    a->exclude_hv = 1;
    a->exclude_guest = 1;
    a->inherit = 1;
    a->disabled = 1;
    a->enable_on_exec = s->target.launched;
    a->mmap = 1;
    a->mmap2 = 1;
    a->mmap_data = 1;
    a->comm = 1;
    a->comm_exec = 1;
    a->task = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1;
    s->layout.sample_type = a->sample_type;
    s->layout.regs_user_mask = a->sample_regs_user;
}

/* Open the sampling events of one thread, one per CPU, each writing into its CPU's buffer (mapping the
 * buffer with the first event of that CPU). Returns 0, or -1 with errno (ESRCH: the thread is gone). */
static int open_thread_events(struct sampler *s, pid_t tid)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    s->attr.wakeup_watermark = (uint32_t)(s->cpus.pages * page / 4);
    size_t opened = 0;
    for (size_t c = 0; c < s->cpus.n; c++) {
        int fd = (int)perf_event_open(&s->attr, tid, s->cpus.v[c].cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            if (errno == ENODEV)
                continue;       /* CPU offline */
            return -1;
        }
        if (cpu_buffers_route(&s->cpus, c, fd) != 0 || event_fds_add(&s->events, fd) != 0) {
            int e = errno;
            cpu_buffers_forget(&s->cpus, c, fd);
            close(fd);
            errno = e;
            return -1;
        }
        sampler_tls_attach(s, fd);
        opened++;
    }
    if (opened == 0) {
        errno = ENODEV;
        return -1;
    }
    return u64_map_put(&s->attached, (uint64_t)tid, 0);
}

/* Open the first event, choosing the event (cycles, else cpu-clock) and whether kernel samples are allowed. */
int sampler_open_first_event(struct sampler *s, pid_t tid, char *err, size_t errlen)
{
    const bool try_hw[2] = { true, false };
    int last_errno = 0;
    for (int h = 0; h < 2; h++) {
        for (int excl = 0; excl < 2; excl++) {
            if (excl && s->cfg.kernel)
                break;          /* kernel frames were asked for: excluding the kernel is no answer */
            init_sampling_attr(s, try_hw[h], excl);
            if (open_thread_events(s, tid) == 0) {
                s->stats.event_name = try_hw[h] ? "cycles" : "cpu-clock";
                return 0;
            }
            last_errno = errno;
            if (errno == ESRCH) {
                snprintf(err, errlen, "no such process: %d", (int)s->target.pid);
                return -1;
            }
            if (errno != EACCES && errno != EPERM)
                break;          /* not a permission problem: try the next event type */
        }
    }
    if (last_errno == EACCES || last_errno == EPERM)
        target_permission_message(s->target.pid, last_errno, err, errlen);
    else
        snprintf(err, errlen, "perf_event_open failed for process %d: %s", (int)s->target.pid,
                 strerror(last_errno));
    return -1;
}

/* Give thread tid (named name) events of its own; after the first attach they are enabled at once.
 * Returns 0 (also when the thread is gone), or -1 with a message in err. */
static int attach_thread(struct sampler *s, pid_t tid, const char *name, bool first, char *err, size_t errlen)
{
    size_t events_before = s->events.n;
    if (events_before == 0) {
        if (sampler_open_first_event(s, tid, err, errlen) != 0)
            return -1;
        sampler_name_thread_later(s, tid, name);
        return 0;
    }
    if (open_thread_events(s, tid) != 0) {
        if (errno == ESRCH)
            return 0;
        snprintf(err, errlen, "perf_event_open failed for thread %d: %s", (int)tid, strerror(errno));
        return -1;
    }
    sampler_name_thread_later(s, tid, name);
    if (!first && event_fds_enable_from(&s->events, events_before, true) != 0) {
        snprintf(err, errlen, "cannot enable the event of thread %d: %s", (int)tid, strerror(errno));
        return -1;
    }
    return 0;
}

/* Attach to threads of the target that have no event of their own and were not born under one. */
int sampler_attach_new_threads(struct sampler *s, bool first, char *err, size_t errlen)
{
    pid_t *tids = malloc(MAX_THREADS * sizeof(*tids));
    if (!tids) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = target_list_threads(s->target.pid, tids, MAX_THREADS);
    if (n < 0) {
        free(tids);
        if (first) {
            snprintf(err, errlen, "no such process: %d", (int)s->target.pid);
            return -1;
        }
        return 0;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        uint32_t idx;
        if (u64_map_get(&s->attached, (uint64_t)tids[i], &idx) || u64_map_get(&s->born, (uint64_t)tids[i], &idx))
            continue;           /* has an event, or a FORK or COMM record showed it inherited one */
        char name[THREAD_NAME_LEN + 8];
        if (!target_thread_name(s->target.pid, tids[i], name, sizeof(name)))
            continue;           /* gone already */
        rc = attach_thread(s, tids[i], name, first, err, errlen);
    }
    free(tids);
    return rc;
}

void sampler_enable(struct sampler *s, bool on)
{
    event_fds_enable_from(&s->events, 0, on);
    if (s->markers)
        markers_enable(s->markers, on);
}
