/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_types.h: the small types the sampler's parts share with its interface (task states, per-probe and
 * per-task statistics, debugging choices of marker routes), so that a part's header need not include the
 * whole of sampler.h. */
#ifndef TASKSPY_SAMPLER_TYPES_H
#define TASKSPY_SAMPLER_TYPES_H

#include <stdint.h>

enum sampler_task_state {
    SAMPLER_NOT_IN_TASK = 0,         /* no poll open on this thread */
    SAMPLER_IN_TASK,                 /* polling task_id */
    SAMPLER_UNKNOWN_TASK,            /* a marker record was lost: which task is not known */
};

/* One attached marker probe name, for the summary. */
struct sampler_probe_stat {
    char provider[64];
    char name[64];
    unsigned locations;
};

/* Per-task accounting from poll markers. */
struct sampler_task_stat {
    uint64_t task_id;
    uint64_t polls;
    uint64_t total_poll_ns;
    uint64_t longest_poll_ns;
};

/* One poll of a task by a thread: from its task-poll-start to its task-poll-end marker (a return probe's
 * hit with --poll-times), times on the clock of the samples' time_ns (CLOCK_MONOTONIC). */
struct sampler_poll {
    uint32_t tid;
    uint32_t thread;                 /* the thread's number as on_thread_name gave it, or SAMPLER_NO_THREAD */
    uint64_t task_id;
    uint64_t start_ns, end_ns;
    uint64_t start_addr;             /* where the probe that began it sits (a runtime's poll function: tokio's
                                        raw::poll<T, S>, whose T names the task), 0 when not known */
};

/* How marker hits reach taskspy (a debugging choice; each route falls back to the next when it cannot work). */
enum sampler_marker_records {
    SAMPLER_MARKER_RECORDS_AUTO = 0, /* BPF programs on uprobe_multi links, else on uprobe events, else perf */
    SAMPLER_MARKER_RECORDS_BPF_EVENT,/* BPF programs on uprobe events (no uprobe_multi links), else perf */
    SAMPLER_MARKER_RECORDS_PERF,     /* no BPF: uprobe events write perf samples */
};

/* Which uprobe events carry marker hits (a debugging choice). */
enum sampler_uprobe_events {
    SAMPLER_UPROBES_AUTO = 0,        /* tracefs events where tracefs is writable, else uprobe PMU events */
    SAMPLER_UPROBES_PMU,             /* uprobe PMU events only (tracefs still for what only it can fetch) */
};

#endif
