/* SPDX-License-Identifier: GPL-3.0-or-later */
/* trace_collect.h: what `record` keeps for a Chrome trace (-o FILE.trace.json) while it records: each poll
 * and each sample with its thread and time, each wait of a task (--wait-output), in memory bounded by a cap on the number of events, and, once
 * the recording is over, the task roots that name the polls and waits. */
#ifndef TASKSPY_TRACE_COLLECT_H
#define TASKSPY_TRACE_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/wait_profile.h"
#include "sampler/sampler.h"

#define TRACE_MAX_EVENTS 2000000u    /* polls, samples and waits kept at most (96 MB at most) */

/* A sample whose stack task_stacks held back (its task's entry unknown then): rooted at the end. */
struct trace_pending_sample {
    size_t index;                    /* into samples */
    uint64_t task_id;
};

struct trace_collect {
    size_t cap;                      /* polls + samples kept at most */
    VEC_OF(struct trace_poll) polls;
    VEC_OF(struct trace_sample) samples;
    VEC_OF(struct trace_wait) waits;
    VEC_OF(bool) wait_doubtful;      /* by wait: the wait profile may leave it out (wait_interval.doubtful) */
    VEC_OF(struct trace_pending_sample) pending;
    VEC_OF(struct trace_thread) threads;  /* by thread number */
    uint64_t left_out;               /* events over the cap */
    VEC_OF(uint64_t) poll_starts;    /* by poll: where the probe that began it sits (sampler_poll.start_addr) */
    /* a poll of a task whose root no sample told: named by the function its probe sits in (a tokio raw::poll<T,
       S>'s T, as taskspy tasks names a root), NULL when it cannot be told; NULL: not named so */
    const char *(*name_poll)(void *ctx, uint64_t start_addr);
    void *name_poll_ctx;
};

void trace_collect_init(struct trace_collect *c, size_t cap);
void trace_collect_free(struct trace_collect *c);
/* Thread number thread is tid, named by frame name. Returns 0 or -1 (no memory). */
int trace_collect_thread(struct trace_collect *c, uint32_t thread, uint32_t tid, uint32_t name);
/* A poll ended. Returns 0 or -1 (no memory). */
int trace_collect_poll(struct trace_collect *c, const struct sampler_poll *p);
/* A sample of tid at time_ns whose stack ends at node (PROFILE_NO_NODE: held back; task_id its task).
 * Returns 0 or -1 (no memory). */
int trace_collect_sample(struct trace_collect *c, uint32_t tid, uint64_t time_ns, uint32_t node, uint64_t task_id);
/* A wait the wait profile settled. Returns 0 or -1 (no memory). */
int trace_collect_wait(struct trace_collect *c, const struct wait_interval *iv);
/* A wait whose task root is known already (root: a frame id of the trace's profile), as the snapshot wait
 * profile gives it. Returns 0 or -1 (no memory). */
int trace_collect_rooted_wait(struct trace_collect *c, const struct wait_interval *iv, uint32_t root);
/* After task_stacks_finish: name each poll and wait by its task's root, root the held-back samples, drop the
 * doubtful waits unless keep_doubtful_waits (as wait_profile_finish did), and describe the whole in *ev
 * (pointing into c). Returns 0 or -1 (no memory). */
int trace_collect_finish(struct trace_collect *c, struct task_stacks *stacks, const struct profile *p, uint32_t pid,
                         uint64_t start_ns, bool keep_doubtful_waits, struct trace_events *ev);

#endif
