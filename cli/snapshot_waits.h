/* SPDX-License-Identifier: GPL-3.0-or-later */
/* snapshot_waits.h: the wait profile of `record --wait-output` in snapshot mode (SPEC section 3a), made from
 * snapshots of every task's async backtrace (tasks/tasks.h). Each snapshot adds, for every task in it, the
 * interval since the previous snapshot (the first: since the recording began, at most one period) to the
 * task's stack as `taskspy tasks -o` names it (cli/task_stack_names.h), split evenly among the branches it waits
 * on at once (the summary's figures follow its first branch): `task: ROOT;frames;leaf;[suspended]` when idle, `...;[runnable]` when scheduled, `task: ROOT;[running]` when running (or changing while read);
 * counts are microseconds. Per task it keeps the time in each state, whether it sat at one await (the same
 * frames and leaf) in every snapshot and whether nothing could wake it in any, for the summary; and, for a
 * Chrome trace, each task's runs of [suspended] or [runnable] as spans. Memory grows with the tasks alive at
 * once (a task missing from a snapshot has ended: it is folded into the totals and dropped), the distinct
 * stacks, and the spans when kept. Not thread-safe: one thread adds, others read after it is done. */
#ifndef TASKSPY_SNAPSHOT_WAITS_H
#define TASKSPY_SNAPSHOT_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/u64_map.h"
#include "base/vec.h"
#include "cli/task_stack_names.h"
#include "flamegraph/flamegraph.h"
#include "tasks/tasks.h"

/* One task of the recording. */
struct snapshot_task {
    uint64_t id;                  /* tokio's task id */
    uint32_t root;                /* frame id of "task: ROOT" in the profile */
    uint32_t await_node;          /* profile node of its first stack above the state frame (ROOT;frames;leaf) */
    uint32_t site;                /* frame id of its first stack's innermost async frame ("NAME @ FILE:LINE") */
    uint32_t leaf;                /* ... and of its leaf future (PROFILE_NO_FRAME: none, or no such frame) */
    uint64_t suspended_ns, runnable_ns, running_ns;
    uint64_t first;               /* the number of the first snapshot it was in (0: the first of all) */
    bool one_await;               /* idle or scheduled at await_node in every snapshot it was in */
    bool unwakeable;              /* idle with nothing to wake it in every snapshot it was in */
    /* the current run of one state, for the trace */
    enum task_state run_state;
    uint32_t run_site;
    uint64_t run_start_ns, run_end_ns;
};

struct snapshot_task_vec {
    struct snapshot_task *v;
    size_t n, cap;
};

/* A run of [suspended] or [runnable] of one task, from consecutive snapshots (for the Chrome trace). */
struct snapshot_span {
    uint64_t task_id;
    uint32_t root, site;          /* frame ids of the profile (site PROFILE_NO_FRAME: none) */
    uint64_t start_ns, end_ns;
    bool runnable;                /* [runnable], else [suspended] */
};

#define SNAPSHOT_LONGEST 5        /* tasks listed as waiting longest */

struct snapshot_waits {
    struct profile *profile;      /* the wait profile */
    uint64_t start_ns, period_ns;
    uint64_t snapshots;           /* added */
    uint64_t prev_ns;             /* when the last one was taken */
    uint64_t task_readings;       /* tasks over all snapshots */
    uint64_t tasks_seen;          /* distinct tasks */
    uint64_t suspended_ns, runnable_ns, running_ns;
    struct snapshot_task_vec live;       /* the tasks of the last snapshot, mapped by id in live_by_id */
    struct u64_map live_by_id;
    struct snapshot_task_vec next;       /* the next generation being built */
    struct u64_map next_by_id;
    struct snapshot_task longest[SNAPSHOT_LONGEST];   /* of the ended tasks, longest waits first */
    size_t n_longest;
    bool keep_spans;
    size_t max_spans;
    VEC_OF(struct snapshot_span) spans;
    uint64_t spans_left_out;      /* over max_spans */
    struct task_stack_ids ids;    /* scratch */
};

/* start_ns: when the recording began (CLOCK_MONOTONIC), period_ns: 1/HZ; keep_spans: keep up to max_spans
 * spans for a trace. Returns 0, or -1 when out of memory. */
int snapshot_waits_init(struct snapshot_waits *w, uint64_t start_ns, uint64_t period_ns, bool keep_spans,
                        size_t max_spans);
/* Add one snapshot (taken after the previous one). Returns 0, or -1 when out of memory. */
int snapshot_waits_add(struct snapshot_waits *w, const struct task_snapshot *snap);
/* The recording is over: close the runs into spans. Returns 0, or -1 when out of memory. */
int snapshot_waits_finish(struct snapshot_waits *w);
/* The tasks that waited longest ([suspended] + [runnable]), longest first, up to max, into out. */
size_t snapshot_waits_longest(const struct snapshot_waits *w, const struct snapshot_task **out, size_t max);
/* The tasks at one await in every snapshot, grouped by that await (and root), the most time first (tasks x
 * time): up to max groups into out; returns the number of such tasks in all (0: none). */
struct snapshot_stuck_group {
    const struct snapshot_task *task;    /* the group's first task (smallest id) */
    size_t n;                            /* its tasks */
    uint64_t wait_ns;                    /* the longest wait of one of them */
};
size_t snapshot_waits_stuck(const struct snapshot_waits *w, struct snapshot_stuck_group *out, size_t max,
                            size_t *n_groups);
/* The tasks nothing could wake in any snapshot since they were first seen, by id: up to max into out; returns
 * how many there are in all. */
size_t snapshot_waits_unwakeable(const struct snapshot_waits *w, const struct snapshot_task **out, size_t max);
void snapshot_waits_free(struct snapshot_waits *w);

#endif
