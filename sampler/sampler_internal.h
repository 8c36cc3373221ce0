/* sampler_internal.h: the sampler's state and the steps its files share (events, records, the loop). Never
 * included from outside sampler/. */
#ifndef TASKSPY_SAMPLER_INTERNAL_H
#define TASKSPY_SAMPLER_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include <asm/perf_regs.h>
#include <linux/perf_event.h>

#include "sampler/sampler.h"
#include "sampler/markers/markers.h"
#include "sampler/perf/perf_records.h"
#include "sampler/target/proc_maps.h"
#include "sampler/perf/ring_buffer.h"
#include "sampler/target/target.h"
#include "sampler/markers/task_tracker.h"
#include "base/u64_map.h"
#include "sampler/unwind/unwind.h"

#define MAX_THREADS 65536
#define THREAD_NAME_LEN 16
#define TOTAL_BUFFER_BYTES (64u << 20)

/* All general-purpose registers: what DWARF CFI may refer to, and what marker arguments live in. */
#define USER_REGS_MASK ((1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_CX) | \
                        (1ULL << PERF_REG_X86_DX) | (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) | \
                        (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) | \
                        (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R9) | (1ULL << PERF_REG_X86_R10) | \
                        (1ULL << PERF_REG_X86_R11) | (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) | \
                        (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15))

struct cpu_buffer {
    int cpu;
    int fd;                              /* the event that owns the buffer; -1 until the first opens */
    struct ring_buffer rb;
};

struct thread_name {
    char name[THREAD_NAME_LEN];
};

struct sampler {
    struct sampler_config cfg;
    struct target target;
    char root[64];                       /* "/proc/PID/root" */
    struct proc_maps maps;
    struct unwinder *unwinder;
    struct task_tracker tasks;
    struct markers *markers;
    struct sample_layout layout;
    struct perf_event_attr attr;         /* of the sampling events */
    struct cpu_buffer *cpus;
    size_t n_cpus;
    int *fds;                            /* every sampling event, for enable/disable/close */
    size_t n_fds, cap_fds;
    size_t buffer_pages;
    struct u64_map attached;             /* tids with their own sampling event */
    struct u64_map thread_names;         /* tid -> names[] */
    struct thread_name *names;
    uint32_t n_names, cap_names;
    const struct sampler_sink *sink;
    struct sampler_stats stats;
    uint64_t start_ns;
    uint64_t last_maps_reload_ns;
    uint64_t round_end_ns;               /* records after this time wait for the next round */
    bool stopping;
    char *err;                           /* where the run loop reports a fatal error */
    size_t errlen;
    /* per-sample scratch */
    uint64_t regs[PERF_REG_X86_64_MAX];
    uint64_t user_ips[SAMPLER_MAX_FRAMES];
    uint64_t kernel_ips[SAMPLER_MAX_FRAMES];
    uint64_t chain_user[SAMPLER_MAX_FRAMES];
};

static inline uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* sampler_records.c */
void set_thread_name(struct sampler *s, pid_t tid, const char *name);
const char *thread_name(const struct sampler *s, pid_t tid);
void emit_mapping(struct sampler *s, const struct proc_map *m);
void drain_all(struct sampler *s, bool final);

/* sampler_events.c */
int open_first_event(struct sampler *s, pid_t tid, char *err, size_t errlen);
int attach_new_threads(struct sampler *s, bool first, char *err, size_t errlen);
void enable_all(struct sampler *s, unsigned long request);

#endif
