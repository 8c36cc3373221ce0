/* markers.h: poll markers of the target: finds USDT probes (task-poll-start/end, spawn, terminate, park,
 * unpark) in the executable and every mapped object, attaches them as uprobes to the target's threads,
 * and turns their records into marker hits for the task tracker. The kernel removes uprobes (and lowers
 * semaphores) when their events are closed, so nothing is left behind even when taskspy is killed. */
#ifndef TASKSPY_MARKERS_H
#define TASKSPY_MARKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "sampler/proc_maps.h"
#include "sampler/sampler.h"
#include "sampler/task_tracker.h"

struct markers;

/* spec: "auto", "none" or a comma list of providers. With "auto", an object without poll markers that holds
 * a runtime's poll functions (tokio's Harness<T,S>::poll) gets entry probes on them (task id from a
 * register), and return probes too when poll_times. cpus/cpu_fds: the sampler's per-CPU ring-buffer
 * events; marker events are system-wide per CPU, filtered to pid, and write into those buffers, so marker
 * and sample records of a CPU are in one time-ordered stream. Returns 0 (with *out NULL for "none"), or -1. */
int markers_open(struct markers **out, const char *spec, bool poll_times, pid_t pid, const char *root,
                 const int *cpus, const int *cpu_fds, size_t n_cpus, char *err, size_t errlen);
/* Look for probes in an object file the target maps (or will exec) and attach the new ones. Problems with
 * one object (an undecodable argument) are reported on stderr once, not fatal. */
void markers_scan_object(struct markers *m, const char *path);
void markers_enable(struct markers *m, bool on);
/* A PERF_RECORD_SAMPLE whose IDENTIFIER is id: 1 and *hit filled when it is a marker hit in the target,
 * 0 when it is not a marker event of ours or fired in another process, -1 when malformed. */
int markers_decode(struct markers *m, const struct perf_event_header *rec, uint64_t id, struct marker_hit *hit);
/* Is id one of the marker events (for PERF_RECORD_THROTTLE / LOST records)? */
bool markers_owns_event(const struct markers *m, uint64_t id);
/* Number of task-poll-start locations attached. */
size_t markers_poll_starts(const struct markers *m);
/* Number of probe locations attached. */
size_t markers_count(const struct markers *m);
void markers_stats(struct markers *m, struct sampler_probe_stat **probes, size_t *n);
void markers_close(struct markers *m);

#endif
