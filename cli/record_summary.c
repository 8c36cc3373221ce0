/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record_summary.c: the summary `taskspy record` prints at the end (SPEC section 1): samples and lost samples,
 * threads, processing cost, marker probes attached, polls and tasks, the busiest tasks and the long polls, a TLS
 * marker that read 0 inside every task; with --wait-output the waker events and stacks per second, the tasks
 * that waited longest and the longest [runnable] delay. */
#include "cli/record_summary.h"

#include <inttypes.h>
#include <string.h>

/* A task id as the graph shows it: addresses (a runtime's task header, without markers) in hex. */
static const char *task_id_text(uint64_t id, char *buf, size_t len)
{
    if (id > UINT32_MAX)
        snprintf(buf, len, "0x%" PRIx64, id);
    else
        snprintf(buf, len, "%" PRIu64, id);
    return buf;
}

static void print_totals(FILE *out, const struct record_options *o, const struct sampler_stats *st, pid_t pid)
{
    fprintf(out,
            "taskspy: %" PRIu64 " samples, %" PRIu64 " lost, %u threads, pid %d, %.1f s at %u Hz (%s, %s)\n",
            st->samples, st->lost, st->threads, (int)pid, st->duration_s, o->frequency,
            st->event_name ? st->event_name : "?", o->call_graph == SAMPLER_CALL_GRAPH_DWARF ? "dwarf" : "fp");
    if (st->lost)
        fprintf(out, "taskspy: lost samples: %" PRIu64 " for want of ring-buffer room (PERF_RECORD_LOST; a larger "
                     "--mmap-pages helps), %" PRIu64 " dropped by the event (PERF_RECORD_LOST_SAMPLES)\n",
                st->lost_no_room, st->lost_by_event);
    if (st->dropped_samples)
        fprintf(out, "taskspy: %" PRIu64 " samples lost: processing fell behind by more than its memory bound "
                     "(the records copied out and waiting)\n", st->dropped_samples);
}

/* after_cpu_ns: symbolizing done after the recording (cli/sink_journal.h), in the command's own thread: added
 * to the sampler's count, which covers its threads. */
static void print_processing(FILE *out, const struct sampler_stats *st, uint64_t after_cpu_ns)
{
    uint64_t cpu_ns = st->processing_cpu_ns + after_cpu_ns;
    if (cpu_ns) {
        fprintf(out, "taskspy: processing: %" PRIu64 " samples and %" PRIu64 " marker records in %.3f CPU-s "
                     "(%.0f records per CPU-s", st->samples, st->marker_records, cpu_ns / 1e9,
                (double)(st->samples + st->marker_records) * 1e9 / (double)cpu_ns);
        if (st->marker_records)
            fprintf(out, "; markers %.3f CPU-s, %.0f ns per record", st->marker_cpu_ns / 1e9,
                    (double)st->marker_cpu_ns / (double)st->marker_records);
        if (after_cpu_ns)
            fprintf(out, "; %.3f CPU-s of it symbolizing, deferred until sampling stopped", after_cpu_ns / 1e9);
        fprintf(out, ")\n");
    }
}

static void print_caveats(FILE *out, const struct record_options *o, const struct sampler_stats *st)
{
    if (st->other_processes)
        fprintf(out, "taskspy: %" PRIu64 " samples of the target's child processes left out (only the target "
                     "process is profiled)\n", st->other_processes);
    if (st->unwind_truncated)
        fprintf(out, "taskspy: %" PRIu64 " stacks were truncated (deeper than the %u-byte copy or no unwind info)\n",
                st->unwind_truncated, o->stack_size);
    if (st->trampoline_cuts) {
        fprintf(out, "taskspy: %" PRIu64 " of them at a return probe's trampoline with no return address to put back "
                     "(another tracer's return probes on the poll functions)", st->trampoline_cuts);
        if (st->return_reads_at_s >= 0)
            fprintf(out, "; the poll probes read it from %.2f s on", st->return_reads_at_s);
        fputc('\n', out);
    }
}

/* Where the samples' tasks come from: the TLS marker read at each sample, or the poll probes. */
static void print_task_source(FILE *out, const struct sampler_stats *st, const struct record_provisional_ids *ids)
{
    if (st->tls_marker) {
        fprintf(out, "taskspy: tasks: from the TLS marker %s (thread pointer %+" PRId64 ") read at each sample: "
                     "%" PRIu64 " samples, %" PRIu64 " without a record and %" PRIu64 " unreadable ([unknown task])",
                st->tls_marker, st->tls_offset, st->tls_joined, st->tls_missing, st->tls_unreadable);
        if (st->tls_compared)
            fprintf(out, "; poll probes disagreed on %" PRIu64 " of %" PRIu64, st->tls_disagreements,
                    st->tls_compared);
        if (ids && (ids->renamed || ids->kept))
            fprintf(out, "; of the samples in a task no poll probe had placed yet, %" PRIu64 " took the probes' id "
                         "learnt after them and %" PRIu64 " keep the marker's id (not the probes' id the waits carry)",
                    ids->renamed, ids->kept);
        if (st->tls_debug_file)
            fprintf(out, "; placed through the debug file %s", st->tls_debug_file);
        if (st->tls_note)
            fprintf(out, "\ntaskspy: TLS marker: %s", st->tls_note);
        fprintf(out, "\n");
    } else if (st->n_probes) {
        fprintf(out, "taskspy: tasks: from poll probes\n");
    }
}

/* The probes attached, or why there were none. Returns true if there were. */
static bool print_markers(FILE *out, const struct record_options *o, const struct sampler_stats *st,
                          uint64_t boundary_samples, const struct record_provisional_ids *ids)
{
    if (strcmp(o->markers, "none") == 0) {
        fprintf(out, "taskspy: markers: off (--markers none)\n");
        return false;
    }
    print_task_source(out, st, ids);
    if (st->n_probes == 0 && st->tls_marker) {
        fprintf(out, "taskspy: markers: no poll probes (tasks from the TLS marker only)\n");
        return false;
    }
    if (st->n_probes == 0) {
        if (boundary_samples)
            fprintf(out, "taskspy: markers: none found; %" PRIu64 " samples put in tasks by the runtime's task "
                            "boundary frames (tokio's raw::poll<T,S>), grouped by entry\n", boundary_samples);
        else
            fprintf(out, "taskspy: markers: none found, and no known runtime task boundary (tokio's "
                            "raw::poll<T,S>) on any stack; stacks are rooted at thread names\n");
        return false;
    }
    fprintf(out, "taskspy: markers:");
    for (size_t i = 0; i < st->n_probes; i++)
        fprintf(out, "%s %s:%s x %u", i ? "," : "", st->probes[i].provider, st->probes[i].name,
                st->probes[i].locations);
    if (st->tls_marker)
        fprintf(out, " (poll events; tasks from the TLS marker)");
    if (!st->marker_locations_perf)
        fprintf(out, "; hits through BPF");
    else if (!st->marker_locations_bpf)
        fprintf(out, "; hits as perf samples");
    else
        fprintf(out, "; hits through BPF at %zu locations, as perf samples at %zu",
                st->marker_locations_bpf, st->marker_locations_perf);
    fprintf(out, "\n");
    fprintf(out, "taskspy: %" PRIu64 " polls, %" PRIu64 " tasks, %" PRIu64 " spawned, %" PRIu64
            " terminated, %" PRIu64 " lost marker records\n",
            st->polls, st->tasks_seen, st->spawns, st->terminates, st->lost_markers);
    if (st->lost_markers || st->unknown_task_samples)
        fprintf(out, "taskspy: lost marker records: %" PRIu64 " from full perf buffers, %" PRIu64 " overwritten "
                     "BPF slots; %" PRIu64 " samples counted as [unknown task] (until their thread's next poll)\n",
                st->lost_markers_perf, st->lost_markers_bpf, st->unknown_task_samples);
    if (st->lost_markers_bpf)
        fprintf(out, "taskspy: BPF slots lost: %" PRIu64 " lapped (the reading thread a whole region of %" PRIu64
                     " slots behind), %" PRIu64 " whose writer had not finished; at most %" PRIu64 " hits waiting in a "
                     "region; the reading thread's longest wait between reads %.1f ms (%.2f s in), longest read %.1f ms; the "
                     "largest loss (%" PRIu64 ") %.2f s into the recording, %.1f ms after the read before it\n",
                st->lost_markers_lapped, st->bpf_region_slots, st->lost_markers_unfinished, st->bpf_backlog,
                st->reader_longest_gap_ns / 1e6, st->reader_longest_gap_at_ns / 1e9, st->reader_longest_round_ns / 1e6,
                st->worst_loss,
                st->worst_loss_at_ns / 1e9, st->worst_loss_gap_ns / 1e6);
    if (st->lost_markers_bpf && !st->reader_realtime)
        fprintf(out, "taskspy: the reading thread could not run as a real-time thread (SCHED_FIFO needs root or "
                     "CAP_SYS_NICE): on a loaded machine it may wait for a CPU while the BPF slots fill\n");
    if (st->late_markers)
        fprintf(out, "taskspy: %" PRIu64 " marker records were read after later samples of their thread had "
                     "been attributed\n", st->late_markers);
    if (st->throttled_markers)
        fprintf(out, "taskspy: the kernel throttled marker events %" PRIu64 " times (records dropped; raise "
                     "kernel.perf_event_max_sample_rate); those threads count as [unknown task] until "
                     "their next poll\n", st->throttled_markers);
    if (st->polls && !st->timed_polls)
        fprintf(out, "taskspy: poll entries only (no poll durations; --poll-times adds return probes)\n");
    return true;
}

static void print_busiest_tasks(FILE *out, const struct sampler_stats *st)
{
    char id[32];
    for (size_t i = 0; i < st->n_tasks && i < 5; i++) {
        if (st->timed_polls)
            fprintf(out, "taskspy:   task %s: %" PRIu64 " polls, %.1f ms total, longest %.2f ms\n",
                    task_id_text(st->tasks[i].task_id, id, sizeof(id)), st->tasks[i].polls,
                    st->tasks[i].total_poll_ns / 1e6, st->tasks[i].longest_poll_ns / 1e6);
        else
            fprintf(out, "taskspy:   task %s: %" PRIu64 " polls\n", task_id_text(st->tasks[i].task_id, id, sizeof(id)),
                    st->tasks[i].polls);
    }
}

static void print_long_polls(FILE *out, const struct sampler_stats *st)
{
    char id[32];
    if (st->long_polls) {
        fprintf(out, "taskspy: %" PRIu64 " long polls (> 10 ms) blocked an executor thread:", st->long_polls);
        size_t shown = 0;
        for (size_t i = 0; i < st->n_tasks && shown < 5; i++)
            if (st->tasks[i].longest_poll_ns > 10000000ull) {
                fprintf(out, "%s task %s (%.1f ms)", shown ? "," : "",
                        task_id_text(st->tasks[i].task_id, id, sizeof(id)), st->tasks[i].longest_poll_ns / 1e6);
                shown++;
            }
        fprintf(out, "\n");
    }
}

void record_summary_print(FILE *out, const struct record_options *o, const struct sampler_stats *st, pid_t pid,
                          uint64_t boundary_samples, uint64_t after_cpu_ns, const struct record_provisional_ids *ids)
{
    print_totals(out, o, st, pid);
    print_processing(out, st, after_cpu_ns);
    print_caveats(out, o, st);
    if (!print_markers(out, o, st, boundary_samples, ids))
        return;
    print_busiest_tasks(out, st);
    print_long_polls(out, st);
}

void record_summary_print_unset_marker(FILE *out, const struct sampler_stats *st,
                                       const struct task_boundary_counts *below_boundary, const struct profile *names)
{
    if (!st->tls_marker || !st->tls_program_store || !task_boundary_never_in_task(below_boundary))
        return;
    fprintf(out, "taskspy: the TLS marker %s read 0 in all %" PRIu64 " samples taken inside a task boundary (%s): "
                 "the compiler may have dropped the store; declare it volatile or store it with a relaxed atomic "
                 "(README, TLS task marker)\n", st->tls_marker, below_boundary->samples,
            profile_frame_name(names, below_boundary->function));
}

void record_summary_print_waits(FILE *out, const struct wait_summary *w, const struct profile *names,
                                const struct sampler_stats *st)
{
    char id[32];
    if (st->wait_note)
        fprintf(out, "taskspy: waits: %s\n", st->wait_note);
    fprintf(out, "taskspy: waits: %" PRIu64 " waits of %zu tasks, %.2f s suspended, %.2f s runnable; %" PRIu64
                 " registration stacks (%" PRIu64 " skipped by the budget, %" PRIu64 " lost), %" PRIu64
                 " waker locations probed\n",
            w->intervals, w->n_tasks, w->suspended_ns / 1e9, w->runnable_ns / 1e9, w->stacks,
            st->wait_stacks_skipped, st->wait_stacks_lost, (uint64_t)st->waker_locations);
    /* the rates make bench row 10 (waker events and stacks per second on a saturated server) */
    if (st->duration_s > 0)
        fprintf(out, "taskspy: waits: %" PRIu64 " waker events (%" PRIu64 " registrations, %" PRIu64
                     " wakes) in %.1f s: %.0f events/s, %.0f stacks/s taken, %.0f/s skipped\n",
                st->waker_registrations + st->wakes, st->waker_registrations, st->wakes, st->duration_s,
                (st->waker_registrations + st->wakes) / st->duration_s, w->stacks / st->duration_s,
                st->wait_stacks_skipped / st->duration_s);
    if (w->stray_stacks)
        fprintf(out, "taskspy: waits: %" PRIu64 " registration stacks came outside a poll of their task: left out\n",
                w->stray_stacks);
    if (st->unjoined_waker_events)
        fprintf(out, "taskspy: waits: %" PRIu64 " tokio waker events named no marker task (a header no polled task "
                     "had registered yet, or outside a poll): left out\n", st->unjoined_waker_events);
    if (w->n_tasks)
        fprintf(out, "taskspy: waited longest:\n");
    for (size_t i = 0; i < w->n_listed && i < 5; i++)
        fprintf(out, "taskspy:   task %s (%s): %.1f ms suspended, %.1f ms runnable\n",
                task_id_text(w->tasks[i].task_id, id, sizeof(id)), profile_frame_name(names, w->tasks[i].root),
                w->tasks[i].suspended_ns / 1e6, w->tasks[i].runnable_ns / 1e6);
    if (w->longest_runnable_ns)
        fprintf(out, "taskspy: longest [runnable] delay: %.2f ms, task %s (%s)\n", w->longest_runnable_ns / 1e6,
                task_id_text(w->longest_runnable_task, id, sizeof(id)),
                w->longest_runnable_root != PROFILE_NO_FRAME ? profile_frame_name(names, w->longest_runnable_root)
                                                             : "?");
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

static void print_snapshot_longest(FILE *out, const struct snapshot_waits *w)
{
    const struct snapshot_task *longest[SNAPSHOT_LONGEST];
    size_t n = snapshot_waits_longest(w, longest, SNAPSHOT_LONGEST);
    if (n)
        fprintf(out, "taskspy: waited longest:\n");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "taskspy:   task %" PRIu64 " (%s): %.1f ms suspended, %.1f ms runnable\n", longest[i]->id,
                profile_frame_name(w->profile, longest[i]->root), longest[i]->suspended_ns / 1e6,
                longest[i]->runnable_ns / 1e6);
}

/* "SITE -> LEAF" of a task's first stack (either may be missing) */
static void print_await(FILE *out, const struct snapshot_waits *w, const struct snapshot_task *t)
{
    const char *site = t->site != PROFILE_NO_FRAME ? profile_frame_name(w->profile, t->site) : NULL;
    const char *leaf = t->leaf != PROFILE_NO_FRAME ? profile_frame_name(w->profile, t->leaf) : NULL;
    fprintf(out, "%s%s%s", site ? site : "", site && leaf ? " -> " : "", leaf ? leaf : site ? "" : "its root");
}

static void print_stuck(FILE *out, const struct snapshot_waits *w)
{
    struct snapshot_stuck_group groups[5];
    size_t n_groups, n = snapshot_waits_stuck(w, groups, 5, &n_groups);
    if (!n)
        return;
    fprintf(out, "taskspy: stuck: %zu task%s at one await in all %" PRIu64 " snapshots (%zu await%s)%s\n", n, plural(n),
            w->snapshots, n_groups, plural(n_groups), n_groups > 5 ? "; the 5 longest:" : ":");
    for (size_t i = 0; i < n_groups && i < 5; i++) {
        const struct snapshot_task *t = groups[i].task;
        fprintf(out, "taskspy:   %zu task%s (%s) at ", groups[i].n, plural(groups[i].n), profile_frame_name(w->profile, t->root));
        print_await(out, w, t);
        fprintf(out, ": %.2f s (task %" PRIu64 "%s)\n", groups[i].wait_ns / 1e9, t->id, groups[i].n > 1 ? " and others" : "");
    }
}

static void print_unwakeable(FILE *out, const struct snapshot_waits *w)
{
    const struct snapshot_task *tasks[5];
    size_t n = snapshot_waits_unwakeable(w, tasks, 5);
    if (!n)
        return;
    fprintf(out, "taskspy: nothing can wake %zu task%s (idle, not scheduled, no waker left, in every snapshot "
                 "since first seen)%s\n", n, plural(n), n > 5 ? "; the first 5:" : ":");
    for (size_t i = 0; i < n && i < 5; i++) {
        fprintf(out, "taskspy:   task %" PRIu64 " (%s) at ", tasks[i]->id, profile_frame_name(w->profile, tasks[i]->root));
        print_await(out, w, tasks[i]);
        fprintf(out, ": %.2f s\n", (tasks[i]->suspended_ns + tasks[i]->runnable_ns) / 1e9);
    }
}

void record_summary_print_snapshot_waits(FILE *out, const struct task_snapshot_loop_stats *s,
                                         const struct snapshot_waits *w, unsigned hz)
{
    fprintf(out, "taskspy: waits: from %" PRIu64 " task snapshots at %u Hz (%" PRIu64 " missed, %" PRIu64
                 " failed), no probe: %" PRIu64 " tasks, %.2f s suspended, %.2f s runnable, %.2f s running\n",
            s->taken, hz, s->missed, s->failed_snapshots, w->tasks_seen, w->suspended_ns / 1e9, w->runnable_ns / 1e9,
            w->running_ns / 1e9);
    if (s->taken)
        fprintf(out, "taskspy: waits: snapshots cost %.2f ms of taskspy CPU each, %.1f us per task (%" PRIu64
                     " task readings; the first %.1f ms)\n", s->cpu_ns / 1e6 / s->taken,
                w->task_readings ? s->cpu_ns / 1e3 / w->task_readings : 0.0, w->task_readings, s->first_cpu_ns / 1e6);
    print_snapshot_longest(out, w);
    print_stuck(out, w);
    print_unwakeable(out, w);
}
