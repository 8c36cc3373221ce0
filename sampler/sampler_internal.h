/* sampler_internal.h: the sampler's state and the steps its files share (events, records, the loop). Included
 * only by the .c files at sampler/'s top level. */
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
#include "sampler/perf/cpu_buffers.h"
#include "sampler/perf/event_fds.h"
#include "sampler/target/target.h"
#include "sampler/target/thread_names.h"
#include "sampler/markers/task_tracker.h"
#include "base/u64_map.h"
#include "sampler/unwind/unwind.h"

#define MAX_THREADS 65536

/* All general-purpose registers: what DWARF CFI may refer to, and what marker arguments live in. */
#define USER_REGS_MASK ((1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_CX) | \
                        (1ULL << PERF_REG_X86_DX) | (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) | \
                        (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) | \
                        (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R9) | (1ULL << PERF_REG_X86_R10) | \
                        (1ULL << PERF_REG_X86_R11) | (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) | \
                        (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15))

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
    struct cpu_buffers cpus;             /* the samples' ring buffer of each CPU */
    struct event_fds events;             /* every sampling event, for enable/disable/close */
    struct u64_map attached;             /* tids with their own sampling event */
    struct thread_names names;
    const struct sampler_sink *sink;
    struct sampler_stats stats;
    uint64_t start_ns;
    uint64_t last_maps_reload_ns;
    uint64_t round_end_ns;               /* records after this time wait for the next round */
    uint64_t next_progress_ns;           /* when the sink hears how the recording goes next */
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

/* sampler_records.c: name a thread (counting it, telling the sink); announce a mapping to the sink; read one
 * round of records (final: everything left, after the events are disabled). */
void sampler_name_thread(struct sampler *s, pid_t tid, const char *name);
void sampler_emit_mapping(struct sampler *s, const struct proc_map *m);
void sampler_read_round(struct sampler *s, bool final);

/* sampler_events.c: open the events of the launched target's first thread (choosing the event type); attach
 * every thread of a running target without an event (first: the initial attach, whose failure is fatal);
 * enable or disable every event, markers' too. Return 0, or -1 with a message in err. */
int sampler_open_first_event(struct sampler *s, pid_t tid, char *err, size_t errlen);
int sampler_attach_new_threads(struct sampler *s, bool first, char *err, size_t errlen);
void sampler_enable(struct sampler *s, bool on);

#endif
