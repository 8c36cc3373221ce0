/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record_summary.h: the summary `taskspy record` prints when it has recorded. */
#ifndef TASKSPY_RECORD_SUMMARY_H
#define TASKSPY_RECORD_SUMMARY_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/record_options.h"
#include "cli/snapshot_waits.h"
#include "flamegraph/wait_profile.h"
#include "sampler/sampler.h"

/* Samples that came with the TLS marker's own task id, the poll probes' id for it not learnt yet
 * (sampler_sample's task_id_provisional): renamed by the pair learnt after them (sink_journal_name_tasks), or
 * kept. */
struct record_provisional_ids {
    uint64_t renamed, kept;
};

/* Print the summary lines ("taskspy: ...") of a recording of pid to out. boundary_samples: samples put in
 * tasks by runtime boundary frames (no markers). after_cpu_ns: processing CPU spent after the recording, in
 * the caller's thread (deferred symbolizing), which st->processing_cpu_ns does not count. ids: NULL, or what
 * became of the provisional task ids. */
void record_summary_print(FILE *out, const struct record_options *o, const struct sampler_stats *st, pid_t pid,
                          uint64_t boundary_samples, uint64_t after_cpu_ns, const struct record_provisional_ids *ids);
/* One line when the program's TLS marker read 0 at every sample below a task boundary (counted by
 * task_stacks_boundary_counts; names: the profile its function is a frame of): its store was likely dropped. */
void record_summary_print_unset_marker(FILE *out, const struct sampler_stats *st,
                                       const struct task_boundary_counts *below_boundary, const struct profile *names);
/* The wait profile's lines: waits counted, the tasks that waited longest, the longest [runnable] delay, and the
 * sampler's note on what it could not record. names: the profile the task roots are frames of. */
void record_summary_print_waits(FILE *out, const struct wait_summary *w, const struct profile *names,
                                const struct sampler_stats *st);
/* The snapshot wait profile's lines: where its waits come from (hz snapshots per second, nothing attached) and
 * what the snapshots cost taskspy, the time in each state, the tasks that waited longest, the tasks at one
 * await in every snapshot (stuck) and those nothing could wake. */
void record_summary_print_snapshot_waits(FILE *out, const struct task_snapshot_loop_stats *s,
                                         const struct snapshot_waits *w, unsigned hz);

#endif
