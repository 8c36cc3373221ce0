/* SPDX-License-Identifier: GPL-3.0-or-later */
/* markers.h: poll markers of the target: finds USDT probes (task-poll-start/end, spawn, terminate, park,
 * unpark) in the executable and every mapped object, attaches them as uprobes in the target, and turns
 * their hits into marker hits for the task tracker: through BPF programs writing per-CPU slots where BPF
 * is permitted (sampler/markers/bpf_route.h), else as perf samples. The kernel removes uprobes (and lowers
 * semaphores) when their links or events are closed, so nothing is left behind even when taskspy is
 * killed. */
#ifndef TASKSPY_MARKERS_H
#define TASKSPY_MARKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/sampler_types.h"
#include "sampler/markers/task_tracker.h"
#include "sampler/bpf/marker_program.h"

struct markers;
struct debug_files;

struct markers_config {
    const char *spec;                  /* "auto", "none" or a comma list of providers */
    bool poll_times;                   /* runtime functions: also probe where they return (poll durations) */
    bool wait_profile;                 /* also task-wake markers, runtime waker functions and waker_symbol */
    const char *waker_symbol;          /* a function (rdi: a task id) called where a task registers its waker */
    /* A function where tasks register their waker was attached (path as opened from here, file offset):
     * the sampler takes stacks there. runtime_ids: its %rdi is the runtime's task header in a program whose
     * tasks come from poll markers (hits of kind MARKER_RUNTIME_WAKER_REGISTERED). NULL: not told. ctx:
     * warning_ctx. It is first offered the site's hits (slots: the program spec of the location's BPF slot
     * writes, not yet attached): it returns true when its stack event's program writes them too (one probe
     * consumer per registration); else the location is attached as any and it is told again with NULL. */
    bool (*on_waker_site)(void *ctx, const char *path, uint64_t offset, bool runtime_ids,
                          const struct bpf_marker_program_spec *slots);
    pid_t pid;                         /* the target */
    const char *root;                  /* "/proc/PID/root": where the target's files are seen from here */
    struct debug_files *debug_files;   /* elf/'s shared debug-file lookup (stripped objects), or NULL */
    const int *cpus;                   /* the CPUs marker events go on, each with a marker buffer */
    size_t n_cpus;
    size_t buffer_pages;               /* data pages per marker buffer (a power of two) */
    enum sampler_marker_records records;   /* debugging: skip BPF routes */
    unsigned slot_bits;                /* testing: log2 of the BPF slots per CPU region (0: the largest) */
    enum sampler_uprobe_events uprobes;    /* debugging: uprobe PMU events, not tracefs */
    void (*on_warning)(void *ctx, const char *message);   /* one line, no prefix; NULL: not reported */
    void *warning_ctx;
};

/* cfg->spec: "auto", "none" or a comma list of providers. With "auto", an object without poll markers that
 * holds a runtime's poll functions (tokio's raw::poll<T,S>) gets entry probes on them (task id from a
 * register), and return probes too when poll_times. Without BPF, marker events are system-wide per CPU,
 * filtered to the pid, each CPU's writing into a marker ring buffer of its own, apart from the samples.
 * Either way the reader takes every marker hit in one pass, before the samples of the same time span.
 * Returns 0 (with *out NULL for "none"), or -1 with a message in err. */
int markers_open(struct markers **out, const struct markers_config *cfg, char *err, size_t errlen);
/* Look for probes in an object file the target maps (or will exec) and attach the new ones. Problems with
 * one object (an undecodable argument) are reported once through the warning callback, not fatal.
 * may_download: a stripped object's debug file may be waited for from debuginfod (before the recording, not
 * on the reading thread). */
void markers_scan_object(struct markers *m, const char *path, bool may_download);
/* Enable (the recording starts: BPF slots overrun before it are not counted lost) or disable the probes. */
void markers_enable(struct markers *m, bool on);
/* What one read of the marker buffers found. */
struct markers_read_counts {
    uint64_t records;                  /* marker hits in the target, queued */
    uint64_t lost;                     /* marker hits lost (a full perf buffer, BPF slots overwritten) */
    uint64_t lost_bpf;                 /* of lost: BPF slots overwritten */
    uint64_t lost_bpf_lapped;          /* of lost_bpf: a region lapped (the reader a whole region behind) */
    uint64_t lost_bpf_unfinished;      /* of lost_bpf: a writer that had not finished when passed */
    uint64_t bpf_backlog;              /* the most hits waiting in one slot region when read */
    uint64_t throttled;                /* times the kernel throttled a marker event */
};
/* Queue into tasks every marker hit up to until_ns (BPF slots: every hit written so far; the tracker keeps
 * later ones queued) from every CPU's marker buffer, consuming them; later perf records stay for the next
 * read. Counts are added to *counts. */
void markers_read(struct markers *m, uint64_t until_ns, struct task_tracker *tasks,
                  struct markers_read_counts *counts);
/* The fds to poll for marker hits (the BPF doorbell, the perf marker buffers at their watermark). Returns
 * how many. */
size_t markers_buffer_fds(const struct markers *m, int *fds, size_t max);
/* Number of task-poll-start locations attached. */
size_t markers_poll_starts(const struct markers *m);
/* Probe locations whose hits come through BPF, and through perf samples. */
void markers_routes(const struct markers *m, size_t *via_bpf, size_t *via_perf);
/* Slots in one CPU's BPF region, 0 without the BPF route. */
uint64_t markers_bpf_region_slots(const struct markers *m);
/* Number of probe locations attached. */
size_t markers_count(const struct markers *m);
/* From now on the poll entries that read the caller's return address only when told (the wait profile's
 * events: BPF_RETURN_WHEN_FLAGGED) read it at every hit. Safe on any thread once the probes are attached (one
 * map update). Returns 0, or -1 (no such entry attached, or the update failed). */
int markers_read_return_addresses(struct markers *m);
/* Locations of the wait profile's probes attached: waker functions, task-wake markers, the waker symbol. */
size_t markers_waker_locations(const struct markers *m);
void markers_stats(struct markers *m, struct sampler_probe_stat **probes, size_t *n);
/* Whether waker registrations are probed but no task-terminate marker is: the runtime does not say when a
 * task completed. */
bool markers_completion_unknown(const struct markers *m);
void markers_close(struct markers *m);

#endif
