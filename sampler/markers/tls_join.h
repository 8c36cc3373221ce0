/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_join.h: task attribution from a TLS task marker (sampler/probes/tls_marker.h), read in the kernel at
 * every sample: a BPF program on each sampling event (sampler/bpf/sample_program.h) writes (tid, sample
 * time, marker value) into a BPF ring, and each perf sample takes the record of its exact (tid, time). A
 * sample with no record is in an unknown task, never guessed. No probe is needed for attribution; poll
 * probes, where attached, still give poll events (counts, durations). */
#ifndef TASKSPY_TLS_JOIN_H
#define TASKSPY_TLS_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/sampler_types.h"

struct tls_join;

/* What the route did, for the summary. */
struct tls_join_stats {
    char symbol[512];                  /* the marker's symbol */
    int64_t tp_offset;                 /* its offset from the thread pointer */
    uint64_t records;                  /* records read from the ring */
    uint64_t joined;                   /* samples that found their record */
    uint64_t missing;                  /* samples without a record: [unknown task] */
    uint64_t unreadable;               /* records whose marker could not be read: [unknown task] */
    uint64_t probe_disagreements;      /* joined samples where the poll probes said otherwise */
    uint64_t probe_compared;           /* joined samples compared with the poll probes' answer */
};

/* The --markers spec split: *tls is true for "auto" or a "tls" entry; probes gets the rest of the spec
 * ("auto" stays "auto"; "tls" alone gives "none"). */
void tls_join_split_spec(const char *spec, bool *tls, char *probes, size_t len);
/* Look for the marker in exe (the target's executable as seen from here; with tokio, also tokio's
 * CONTEXT.current_task_id through the executable's DWARF) and set up the ring and the program for process
 * tgid. Returns 1 (ready), 0 (no marker: *out NULL), or -1 with a reason in err (BPF not permitted, no
 * kernel BTF, the program refused). */
int tls_join_open(struct tls_join **out, pid_t tgid, const char *exe, bool tokio, char *err, size_t errlen);
/* Run the program at every sample of the sampling event event_fd (inherited by the threads the event
 * follows). Returns 0, or -1 with a reason in err. */
int tls_join_attach(struct tls_join *j, int event_fd, char *err, size_t errlen);
/* Sampling events the program runs on. */
size_t tls_join_attached(const struct tls_join *j);
/* The task of the sample of tid at time_ns. The poll probes' answer comes in *state, *task_id and
 * *probe_addr and is replaced by the marker's: in a task (value non-zero), not (0), or unknown (no
 * record, or the marker was not readable). probes: poll probes are attached, so their answer is compared
 * (for the summary). */
void tls_join_sample(struct tls_join *j, uint32_t tid, uint64_t time_ns, bool probes,
                     enum sampler_task_state *state, uint64_t *task_id, uint64_t *probe_addr);
const struct tls_join_stats *tls_join_stats(const struct tls_join *j);
void tls_join_close(struct tls_join *j);

#endif
