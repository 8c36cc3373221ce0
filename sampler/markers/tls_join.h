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
struct debug_files;

/* What the route did, for the summary. */
struct tls_join_stats {
    char symbol[512];                  /* the marker's symbol */
    bool program_store;                /* the program's own taskspy_current_task, which its code stores (a
                                          compiler may drop a plain store), not tokio's CONTEXT */
    char debug_file[512];              /* found in this separate debug file (a stripped executable), or "" */
    char place_error[400];             /* a library's marker could not be placed once loaded (why), or "" */
    bool place_corrected;              /* its place, predicted before the start, was another once loaded */
    int64_t tp_offset;                 /* its offset from the thread pointer */
    uint64_t records;                  /* records read from the ring */
    uint64_t joined;                   /* samples that found their record */
    uint64_t missing;                  /* samples without a record: [unknown task] */
    uint64_t unreadable;               /* records whose marker could not be read: [unknown task] */
    uint64_t probe_disagreements;      /* joined samples where the poll probes said otherwise */
    uint64_t probe_compared;           /* joined samples compared with the poll probes' answer */
    uint64_t probe_names_lost;         /* probe ids not learnt (out of memory) */
};

/* The --markers spec split: *tls is true for "auto" or a "tls" entry; probes gets the rest of the spec
 * ("auto" stays "auto"; "tls" alone gives "none"; "probes", the probe route alone, gives "auto" without
 * TLS). */
void tls_join_split_spec(const char *spec, bool *tls, char *probes, size_t len);
struct tls_join_target {
    pid_t tgid;
    const char *exe;                   /* the executable as seen from here */
    const char *root;                  /* "/proc/PID/root": the target's files from here */
    const char *target_path;           /* the executable as the target names it, or NULL */
    struct debug_files *debug_files;   /* elf/'s shared debug-file lookup (a stripped executable), or NULL */
    bool launched;                     /* held before its exec: libraries are placed once it has loaded them */
    bool name_by_probes;               /* tasks named by the poll probes' ids where their ids are of another
                                          kind (the wait profile's, which only they can name) */
    bool uncounted;                    /* keep no set of the task ids seen (tls_join_tasks_seen stays 0): a view
                                          that runs for days keeps its memory flat as the target spawns tasks */
};
/* Look for the marker in the executable, else tokio's CONTEXT.current_task_id through its DWARF; in a
 * stripped executable, in its separate debug file; else in a shared library loaded at start
 * (sampler/probes/tls_library.h). Set up the ring and the program for the process. Returns 1 (ready), 0 (no
 * marker: *out NULL), or -1 with a reason in err (BPF not permitted, no kernel BTF, the program refused, a
 * kernel that runs the program before it fills the sample's time, a library's dynamic TLS block). */
int tls_join_open(struct tls_join **out, const struct tls_join_target *t, char *err, size_t errlen);
/* Run the program at every sample of the sampling event event_fd (inherited by the threads the event
 * follows). Returns 0, or -1 with a reason in err. */
int tls_join_attach(struct tls_join *j, int event_fd, char *err, size_t errlen);
/* Whether task stacks need the poll probes to be cut right: the executable has poll-start USDT markers in
 * several poll wrappers (only a probe's hit tells which one a sample is in), or none and no runtime rule
 * cuts its stacks (poll markers in a library may). */
bool tls_join_needs_poll_probes(const struct tls_join *j);
/* Sampling events the program runs on. */
size_t tls_join_attached(const struct tls_join *j);
/* The target maps [start, end) of the file at path (as seen from here) from offset pgoff: when that is the
 * executable and holds its poll-start USDT marker, samples in a task get the marker's address as their poll
 * frame (task stacks are cut there, as with the marker's probe) until a probe says otherwise. */
void tls_join_mapping(struct tls_join *j, const char *path, uint64_t start, uint64_t end, uint64_t pgoff);
/* The task of the sample of tid at time_ns. The poll probes' answer comes in *state, *task_id and
 * *probe_addr and is replaced by the marker's: in a task (value non-zero), not (0), or unknown (no
 * record, or the marker was not readable). In no task, *probe_addr is still where a poll is cut (the
 * probes' poll, else the poll-start marker's place), or 0: a stack in a poll whose marker reads 0 can be
 * told. probes: poll probes are attached, so their answer is compared (for the summary); where their ids
 * are of another kind (tokio's CONTEXT beside tokio's header addresses or a marker program's ids) and
 * name_by_probes was asked for, a sample in a task is named by the probes' id for it, as the poll events,
 * waits and summary of the recording are: the marker's id only where the probes had not named its task yet
 * (*provisional then true: tls_join_probes_name may name it later; else false). */
void tls_join_sample(struct tls_join *j, uint32_t tid, uint64_t time_ns, bool probes,
                     enum sampler_task_state *state, uint64_t *task_id, uint64_t *probe_addr, bool *provisional);
/* The probes' id learnt for the marker's id marker_id (a sample's provisional id) so far: true and *probe_id,
 * or false (never learnt, or the samples are not named by the probes' ids). */
bool tls_join_probes_name(const struct tls_join *j, uint64_t marker_id, uint64_t *probe_id);
/* Distinct non-zero task ids the samples were in so far. */
uint64_t tls_join_tasks_seen(const struct tls_join *j);
/* A poll probe's task id as the samples name the task: without name_by_probes, where the marker is tokio's
 * CONTEXT (tokio's ids where the probes give header addresses or a fixture's own ids), learnt from the
 * samples both placed in a task; probe_id itself when the ids are the same kind, the samples are named by
 * the probes' ids, or the task was not sampled yet. For poll events, so that they name the tasks the samples
 * do. poll_function: the poll's probe address (0: unknown); a pair learnt in another poll function is not
 * this poll's task (tokio gives a finished task's header to a new one), so probe_id itself then too. */
uint64_t tls_join_task_of_probe_id(const struct tls_join *j, uint64_t probe_id, uint64_t poll_function);
const struct tls_join_stats *tls_join_stats(const struct tls_join *j);
void tls_join_close(struct tls_join *j);

#endif
