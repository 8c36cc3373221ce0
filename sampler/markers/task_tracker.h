/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_tracker.h: which task each thread is polling, from poll markers seen in time order per thread, and
 * the per-task poll statistics (polls, total and longest poll time, long polls) for the summary. */
#ifndef TASKSPY_TASK_TRACKER_H
#define TASKSPY_TASK_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/sampler_types.h"
#include "base/u64_map.h"
#include "base/vec.h"

enum marker_kind {
    MARKER_POLL_START,
    MARKER_POLL_END,
    MARKER_SPAWN,
    MARKER_TERMINATE,
    MARKER_PARK,
    MARKER_UNPARK,
    MARKER_POLL_RETURN,        /* a runtime poll function returned: ends whatever poll is open */
    MARKER_WAKE,               /* arg0's task was woken (task-wake, tokio's wake_by_val / wake_by_ref) */
    MARKER_WAKER_REGISTERED,   /* arg0's task registered its waker (tokio's clone_waker, --waker-symbol) */
    /* As MARKER_WAKE and MARKER_WAKER_REGISTERED, in a program whose tasks come from poll markers: arg0 is the
     * runtime's own task header (tokio's wake_by_val / wake_by_ref, clone_waker), which the sampler joins to
     * the marker task (sampler/markers/header_join.h) */
    MARKER_RUNTIME_WAKE,
    MARKER_RUNTIME_WAKER_REGISTERED,
    MARKER_KIND_COUNT,
};

#define LONG_POLL_NS 10000000ull

struct thread_poll_state {
    uint32_t tid;
    enum sampler_task_state state;
    bool saw_marker;
    uint32_t task_slot;                    /* tasks[] index of task_id while polling it */
    uint64_t task_id;
    uint64_t poll_start_ns;
    uint64_t probe_addr;
    /* While UNKNOWN (a marker record was lost): poll-starts up to this time may have lost their ends and do
     * not make the task known again; UINT64_MAX while the loss's end is not known yet. */
    uint64_t unknown_until;
    uint64_t poll_ret_addr, poll_ret_slot; /* the open poll's return address and its place on the stack, as its
                                              entry's hit recorded them (0: not recorded) */
    uint64_t last_hit_addr;                /* the probe address of the last hit applied */
    uint64_t last_hit_ns;                  /* and its time */
};

/* A marker record waiting to be applied in time order. */
struct marker_hit {
    uint32_t tid;
    enum marker_kind kind;
    uint64_t time_ns;
    uint64_t arg0;
    uint64_t probe_addr;
    uint64_t ret_addr, ret_slot;           /* a runtime poll function's entry: the caller's return address and
                                              where it is on the stack (0: not recorded) */
};

/* One thread's queued hits, in time order once the round has begun. */
struct thread_hits {
    struct marker_hit *v;
    size_t n, cap;
    bool unsorted;                         /* a hit came in earlier than the one before it */
};

struct task_tracker {
    struct u64_map thread_index;           /* tid -> threads.v[] */
    VEC_OF(struct thread_poll_state) threads;
    struct u64_map task_index;             /* task id -> tasks.v[] */
    VEC_OF(struct sampler_task_stat) tasks;
    uint64_t polls, spawns, terminates, long_polls, parks, unparks;
    uint64_t timed_polls;                  /* polls whose end was seen too (durations known) */
    /* marker hits waiting to be applied, one queue per thread (parallel to threads[]), each sorted by time at
     * round start: a thread's hits come from several CPUs' buffers, each in time order */
    VEC_OF(struct thread_hits) hits;
    VEC_OF(uint32_t) active;               /* threads.v[] indices whose queue is not empty */
    uint32_t last_tid, last_index;         /* the thread of the previous queued hit (usually the next's too) */
    bool have_last;
    uint64_t applied_until;                /* the last round_end's time: hits up to it are applied */
    uint64_t late_hits;                    /* hits queued at or before applied_until: samples after them were
                                              attributed without them */
    bool loss_open;                        /* a loss whose end task_tracker_loss_seen_by() has not given yet */
    bool lost_any;                         /* a loss happened: threads no hit named yet are in an unknown task */
    /* told of every poll whose start and end were both seen, as its end is applied (thread not filled in:
     * UINT32_MAX); NULL: not told. Set after task_tracker_init. */
    void (*on_poll)(void *ctx, const struct sampler_poll *p);
    void *poll_ctx;
    /* told of every task event as hits are applied (in time order per thread): kind MARKER_POLL_START,
     * MARKER_POLL_END (also a runtime poll function's return, with the task it ends), MARKER_WAKE,
     * MARKER_WAKER_REGISTERED, MARKER_RUNTIME_WAKE, MARKER_RUNTIME_WAKER_REGISTERED or MARKER_TERMINATE, told
     * before the hit changes its thread's state (task_tracker_current then gives the poll it happened in);
     * NULL: not told. ctx: poll_ctx. ret_addr: the word at the stack pointer the hit's probe read (a
     * function's return address at its entry; a waker registration's call site), else 0. */
    void (*on_task_event)(void *ctx, uint32_t tid, enum marker_kind kind, uint64_t task_id, uint64_t time_ns,
                          uint64_t ret_addr);
};

int task_tracker_init(struct task_tracker *t);
void task_tracker_free(struct task_tracker *t);
/* A marker fired on tid at time_ns with arg0; probe_addr is the probe's address in the target. */
int task_tracker_marker(struct task_tracker *t, uint32_t tid, uint64_t time_ns, enum marker_kind kind,
                        uint64_t arg0, uint64_t probe_addr);
/* Marker records were lost, of an unknown thread (a CPU's buffer may hold any thread's records, and a thread
 * migrates): every thread that has seen a marker is in an unknown task (and from then on a thread no hit named yet,
 * until its first poll-start) from the start of the unapplied hits
 * until its first poll-start after the loss, and ends seen meanwhile do not make it known. The loss's end
 * is open until task_tracker_loss_seen_by(). */
void task_tracker_lost(struct task_tracker *t);
/* The losses reported so far all happened before until_ns (a time taken after the read that found them): a
 * poll-start after it makes its thread's task known again. */
void task_tracker_loss_seen_by(struct task_tracker *t, uint64_t until_ns);
/* Rounds: marker records are queued as they are read (from any buffer), then applied per thread in time
 * order as that thread's samples are handled, so a sample is attributed by the markers before it even when
 * marker and sample records came through different ring buffers. */
int task_tracker_queue(struct task_tracker *t, const struct marker_hit *hit);
int task_tracker_round_begin(struct task_tracker *t);
/* Everything a sample's attribution needs about tid at time_ns, from one thread lookup and one search of its
 * hits. Samples of a thread come from several CPUs' buffers, so they may be asked about out of time order; the
 * answer does not depend on the order of the questions. */
struct task_tracker_sample {
    /* What tid was polling: the state after its last queued hit at or before time_ns (or its state before the
     * round). user_ip (0: not known) is the sampled instruction: a sample in a poll marker's trap counts as
     * inside that poll. UNKNOWN after a lost record, and when the thread's next queued poll hit is an end that
     * does not close the poll open at time_ns (a record was lost unseen). task_id 0 unless IN_TASK; probe_addr
     * the address of the poll-start probe of the open poll (0: none). */
    enum sampler_task_state state;
    uint64_t task_id, probe_addr;
    /* The return address of the poll open at time_ns and where it is on the stack, as the poll function's entry
     * recorded them (both 0: none open, or not recorded). A return probe's trampoline replaces that word while
     * the poll runs: a stack unwound inside the poll gets it back from here. */
    uint64_t ret_slot, ret_addr;
    /* The probe address of tid's last hit at or before time_ns (0: none known). A sample taken while the
     * kernel single-steps a probed instruction out of line (in the "[uprobes]" page) stands for that probe's
     * address. */
    uint64_t last_hit_addr;
    /* A sample at a probe's address or the instruction after its breakpoint, next to a hit of that probe in
     * time (tid's last hit at or before time_ns, or its first after): the probe's address, else 0. Taken in
     * the kernel, such a sample is in the probe's trap: the breakpoint leaves the user ip one past the probe,
     * the kernel sets it back to the probe while the probe's programs run and emulates the probed
     * instruction, so the user state is before or after that instruction. */
    uint64_t trap_addr;
};
void task_tracker_sample(const struct task_tracker *t, uint32_t tid, uint64_t time_ns, uint64_t user_ip,
                         struct task_tracker_sample *out);
/* Apply every queued hit up to time_ns in time order (statistics, state); later ones wait for the next
 * round. */
void task_tracker_round_end(struct task_tracker *t, uint64_t time_ns);
/* Hits queued and not applied yet. */
size_t task_tracker_pending(const struct task_tracker *t);

/* What tid is polling now. */
void task_tracker_current(const struct task_tracker *t, uint32_t tid, enum sampler_task_state *state,
                          uint64_t *task_id, uint64_t *probe_addr);
/* Sort the task table busiest first (total poll time) for the summary. */
void task_tracker_sort(struct task_tracker *t);

#endif
