/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_internal.h: the sampler's state and the steps its files share (events, records, the loop). Included
 * only by the .c files at sampler/'s top level. */
#ifndef TASKSPY_SAMPLER_INTERNAL_H
#define TASKSPY_SAMPLER_INTERNAL_H

#include <pthread.h>
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
#include "sampler/markers/tls_join.h"
#include "base/u64_map.h"
#include "sampler/unwind/unwind.h"
#include "sampler/perf/record_queue.h"

#define MAX_THREADS 65536
/* Records copied out and waiting for the processing thread, at most (then samples are left out, counted). */
#define SAMPLER_QUEUE_MAX_BYTES (256u << 20)
/* A long-running consumer's processed batches kept for reuse, each at most (bigger ones come from a stall of the
   processing thread: kept, they would hold its memory at that stall's mark for the rest of the view) */
#define SAMPLER_LONG_RUNNING_SPARE_MAX_BYTES (1u << 20)
/* A batch the reader keeps while the queue's lock is busy, at most (then it waits for the lock) */
#define SAMPLER_BATCH_KEEP_MAX_BYTES (64u << 20)

/* All general-purpose registers: what DWARF CFI may refer to, and what marker arguments live in. */
#define USER_REGS_MASK ((1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_CX) | \
                        (1ULL << PERF_REG_X86_DX) | (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) | \
                        (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) | \
                        (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R9) | (1ULL << PERF_REG_X86_R10) | \
                        (1ULL << PERF_REG_X86_R11) | (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) | \
                        (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15))

/* Two threads share this while recording. The reading thread (sampler_run's caller) owns the ring buffers,
 * markers, the task tracker, target, events, attached/born and the lost counts; the processing thread owns
 * maps, unwinder, names, the sink and the other statistics. They meet only in queue. */
struct sampler {
    struct sampler_config cfg;
    struct target target;
    char root[64];                       /* "/proc/PID/root" */
    struct proc_maps maps;
    struct unwinder *unwinder;
    struct task_tracker tasks;
    struct markers *markers;
    struct tls_join *tls;                /* tasks from a TLS marker read at each sample, or NULL */
    struct wait_stacks *wait;            /* the wait profile's stacks and events (sampler_wait.c), or NULL */
    char probe_spec[256];                /* the --markers spec the probes get (sampler_tls.c) */
    struct sample_layout layout;
    struct perf_event_attr attr;         /* of the sampling events */
    struct cpu_buffers cpus;             /* the samples' ring buffer of each CPU */
    struct event_fds events;             /* every sampling event, for enable/disable/close */
    struct u64_map attached;             /* tids with their own sampling event */
    struct thread_names names;
    struct u64_map born;                 /* tids seen in our events' FORK or COMM records (reading thread) */
    struct record_queue queue;           /* reading thread -> processing thread */
    struct record_batch batch;           /* the round being copied */
    uint64_t copy_failures;              /* records not copied (out of memory) */
    pthread_t processor;
    bool processing;                     /* the processing thread runs */
    uint64_t processor_cpu_ns;           /* its CPU time, when it ended */
    const struct sampler_sink *sink;
    struct sampler_stats stats;
    /* processing thread: the last dwarf unwind stopped at a return probe's trampoline with no return address to
     * put back; the poll entries were told to read those addresses */
    bool cut_at_trampoline, return_reads_asked;
    uint64_t start_ns;
    uint64_t last_maps_reload_ns;
    uint64_t round_end_ns;               /* records after this time wait for the next round */
    uint64_t last_round_ns;              /* when the last round began (0: none yet) */
    uint64_t next_progress_ns;           /* when the sink hears how the recording goes next */
    /* per-sample scratch */
    uint64_t regs[PERF_REG_X86_64_MAX];
    uint64_t user_ips[SAMPLER_MAX_FRAMES];
    uint64_t other_user_ips[SAMPLER_MAX_FRAMES];   /* a trap sample's other reading (sampler_records.c) */
    uint64_t kernel_ips[SAMPLER_MAX_FRAMES];
    uint64_t chain_user[SAMPLER_MAX_FRAMES];
};

/* x86-64: a sampled ip at or above it is the kernel's (the sample was taken in kernel mode). */
#define KERNEL_ADDRESSES_START 0xffff800000000000ull

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

/* sampler_records.c (processing thread): name a thread (counting it, telling the sink); announce a mapping to
 * the sink; process one batch; start the processing thread (0, or -1: batches are then processed by the
 * reading thread as they are handed over); stop it after the last batch (closing the queue) and add up. */
void sampler_name_thread(struct sampler *s, pid_t tid, const char *name);
void sampler_emit_mapping(struct sampler *s, const struct proc_map *m);
void sampler_process_batch(struct sampler *s, const struct record_batch *b);
/* A sample's user frames into out (user_ips, n_user, truncated): unwound from its copied stack (dwarf) or its
 * callchain's user part (fp, n_chain_user entries already in s->chain_user); e: its entry (ret_slot, ret_addr,
 * last_hit_addr: what a return probe's trampoline or an out-of-line single step hides). */
void sampler_user_frames(struct sampler *s, const struct decoded_sample *d, size_t n_chain_user,
                         const struct queued_entry *e, struct sampler_sample *out);
int sampler_start_processing(struct sampler *s);
void sampler_stop_processing(struct sampler *s);

/* sampler_round.c (reading thread): read one round of records (final: everything left, after the events are
 * disabled) and hand it over; name a thread attached while recording (through the batch once the processing
 * thread runs); queue a progress report; hand the batch over now. */
void sampler_read_round(struct sampler *s, bool final);
void sampler_name_thread_later(struct sampler *s, pid_t tid, const char *name);
/* The warning callback the sampler's parts get (ctx: the sampler): the configured one, through the batch once
 * the processing thread runs, so that every callback comes from one thread. */
void sampler_relay_warning(void *ctx, const char *message);
/* The task tracker's poll callback (ctx: the sampler): the poll goes to the sink through the batch. */
void sampler_queue_poll(void *ctx, const struct sampler_poll *p);
void sampler_queue_progress(struct sampler *s, uint64_t t);
/* Queue the batch for the processing thread; unless wait, only if the queue's lock is free at once (else the
 * batch stays, to go with a later round). */
void sampler_hand_over(struct sampler *s, bool wait);

/* sampler_events.c: open the events of the launched target's first thread (choosing the event type); attach
 * every thread of a running target without an event (first: the initial attach, whose failure is fatal);
 * enable or disable every event, markers' too. Return 0, or -1 with a message in err. */
int sampler_open_first_event(struct sampler *s, pid_t tid, char *err, size_t errlen);
int sampler_attach_new_threads(struct sampler *s, bool first, char *err, size_t errlen);
void sampler_enable(struct sampler *s, bool on);

/* sampler_tls.c: the TLS marker route (sampler/markers/tls_join.h): open it if the spec and the executable
 * allow (else the probes' spec says what to attach instead), run it on each new sampling event, take a
 * sample's task from it, and its counts for the statistics. */
void sampler_tls_open(struct sampler *s);
void sampler_tls_attach(struct sampler *s, int event_fd);
/* On the reading thread, as a sample is attributed: the TLS marker's task overrides the probes' where the route
 * is open (*provisional: the marker's own id, tls_join_sample's). */
void sampler_tls_sample(struct sampler *s, uint32_t tid, uint64_t time_ns, enum sampler_task_state *state,
                        uint64_t *task_id, uint64_t *poll_probe_addr, bool *provisional);
void sampler_tls_stats(struct sampler *s);
/* On the reading thread: the target maps [start, end) of path (as it sees it) from pgoff. */
void sampler_tls_mapping(struct sampler *s, const char *path, uint64_t start, uint64_t end, uint64_t pgoff);

/* sampler_wait.c: the wait profile (cfg->wait_profile; each a no-op without it). Open its state (0, or -1 out
 * of memory); a waker-registration site (ctx: the sampler; markers_config's on_waker_site): stack events
 * there, with slots their filter writing the site's marker slots too (true when it does); on the
 * reading thread, set a waker-registration stack record apart (true when rec was one), queue a task event
 * (the task tracker's callback, ctx: the sampler), and end a round (its stacks, then QUEUED_WAIT_ROUND); on
 * the processing thread, deliver a wait entry (true when e was one); fill the statistics; close. */
int sampler_wait_open(struct sampler *s);
bool sampler_wait_site(void *ctx, const char *path, uint64_t offset, bool runtime_ids,
                       const struct bpf_marker_program_spec *slots);
bool sampler_wait_copy(struct sampler *s, const struct perf_event_header *rec);
void sampler_wait_queue_event(void *ctx, uint32_t tid, enum marker_kind kind, uint64_t task_id, uint64_t time_ns,
                              uint64_t ret_addr);
void sampler_wait_round_end(struct sampler *s, uint64_t until_ns);
bool sampler_wait_process(struct sampler *s, const struct queued_entry *e, const void *data);
void sampler_wait_finish(struct sampler *s);
void sampler_wait_close(struct sampler *s);

#endif
