/* SPDX-License-Identifier: GPL-3.0-or-later */
/* uprobe_tracefs.h: tracefs uprobe_events for markers. Each event "p:taskspy_<ourpid>/<name>
 * PATH:0xOFF(0xREFCTR) arg0=FETCH:uN" ("r:" for a return probe; no arg0 when there is nothing to fetch)
 * fetches arg0 in the kernel (a register, or memory such as a heap pointer "8@8(%rbx)" that the uprobe
 * PMU cannot read); it is opened with PERF_TYPE_TRACEPOINT, one perf event per CPU on one kernel probe,
 * and arg0 comes back in PERF_SAMPLE_RAW at an offset read from the event's format file.
 * Why markers prefer it to the uprobe PMU: every uprobe PMU event is a probe consumer of its own, so a
 * location opened on N CPUs runs N handlers per hit (and unregisters N times at exit); a tracefs event is
 * one consumer whatever the number of CPUs.
 * Lifetime: the definition lives in tracefs until removed, but the probe is only inserted into the target
 * while a perf fd is open on it, so a killed taskspy leaves no probe in the target; the dormant
 * definition is removed by uprobe_tracefs_cleanup (normal exit), uprobe_tracefs_cleanup_signal_safe
 * (from a SIGINT/SIGTERM handler) or uprobe_tracefs_remove_stale (next start, for SIGKILL). */
#ifndef TASKSPY_UPROBE_TRACEFS_H
#define TASKSPY_UPROBE_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/markers/uprobe_pmu.h"
#include "sampler/probes/usdt_args.h"

struct uprobe_tracefs {
    char root[256];                     /* tracefs mount point, e.g. /sys/kernel/tracing */
    char events_file[288];              /* root + "/uprobe_events" (prebuilt for the signal path) */
    char group[32];                     /* "taskspy_<pid>" */
    char remove_group_cmd[48];          /* "-:taskspy_<pid>/\n" */
    unsigned next_serial;
};

struct uprobe_tracefs_event {
    char name[64];                      /* event name inside the group */
    int tp_id;                          /* tracepoint id (attr.config) */
    uint32_t raw_offset, raw_size;      /* arg0 inside PERF_SAMPLE_RAW data */
    char remove_cmd[112];               /* "-:group/name\n" (prebuilt for the signal path) */
};

/* Find a mounted, writable tracefs and name our group after getpid(). Returns 0, or -1 (ENOENT). */
int uprobe_tracefs_find(struct uprobe_tracefs *tf);
/* Find tracefs (mounting it at /sys/kernel/tracing when it is not mounted) and name our group after
 * getpid(). Returns 0, or -1 with a one-line reason in err. */
int uprobe_tracefs_init(struct uprobe_tracefs *tf, char *err, size_t errlen);
/* Same with an explicit mount point and group pid (tests). No mounting. */
int uprobe_tracefs_init_at(struct uprobe_tracefs *tf, const char *root, pid_t group_pid);

/* The uprobe_events line that defines an event (without newline): arg NULL or an immediate fetches
 * nothing, a register its low arg->size bytes, a memory operand arg->size bytes at it. Returns 0, or -1
 * when the path contains blanks or the operand cannot be expressed. Exposed for tests. */
int uprobe_tracefs_format_probe(const char *group, const char *name, const char *path, uint64_t offset,
                                uint64_t ref_ctr_offset, const struct usdt_arg *arg, bool retprobe, char *buf,
                                size_t bufsz);
/* Same for an entry probe with a memory operand (-1 for any other argument). */
int uprobe_tracefs_format_def(const char *group, const char *name, const char *path, uint64_t offset,
                              uint64_t ref_ctr_offset, const struct usdt_arg *arg, char *buf, size_t bufsz);
/* Offset and size of field "arg0" in a tracefs event format file's text. Returns 0 or -1. */
int uprobe_tracefs_parse_format(const char *text, uint32_t *offset, uint32_t *size);

/* Define an event at PATH:offset (semaphore at ref_ctr_offset, 0 = none; a return probe if retprobe);
 * hint (e.g. the probe name) becomes part of the event name. Fills ev, and plan->raw_offset/raw_size
 * when the plan fetches arg0 (plan from uprobe_arg_plan_tracefs, or uprobe_arg_plan_for for a memory
 * operand). Returns 0, or -1 with errno and a reason in err. */
int uprobe_tracefs_create(struct uprobe_tracefs *tf, const char *path, uint64_t offset, uint64_t ref_ctr_offset,
                          const struct usdt_arg *arg, bool retprobe, const char *hint, struct uprobe_tracefs_event *ev,
                          struct uprobe_arg_plan *plan, char *err, size_t errlen);
/* The perf_event_attr (attr: a struct perf_event_attr) of the event, sampling every hit with plan->sample_type
 * (user registers and stack as the plan says when it asks for them). */
void uprobe_tracefs_attr(const struct uprobe_tracefs_event *ev, const struct uprobe_arg_plan *plan, bool inherit,
                         bool disabled, void *attr);
/* perf_event_open the event for one thread on cpu (-1: any; see uprobe_attach.inherit for the mmap rule),
 * sampling every hit with plan->sample_type. Returns the fd or -1 with errno. */
int uprobe_tracefs_open(const struct uprobe_tracefs_event *ev, const struct uprobe_arg_plan *plan, pid_t tid,
                        int cpu, bool inherit, bool disabled, int group_fd);
/* Remove one event; every perf fd on it must be closed first (else EBUSY). Returns 0 or -1. */
int uprobe_tracefs_remove(const struct uprobe_tracefs *tf, const struct uprobe_tracefs_event *ev);
/* Remove the whole group and then each event (for kernels without group removal). Perf fds first. */
void uprobe_tracefs_cleanup(const struct uprobe_tracefs *tf, const struct uprobe_tracefs_event *evs, size_t n);
/* The same using only async-signal-safe calls (open, write, close), for a signal handler; the caller
 * closes its perf fds (close(2) is signal-safe) before calling it. */
void uprobe_tracefs_cleanup_signal_safe(const struct uprobe_tracefs *tf, const struct uprobe_tracefs_event *evs,
                                        size_t n);
/* Remove every "taskspy_<pid>" group whose pid is no longer alive. Returns how many groups were removed,
 * or -1 when the events directory cannot be read. */
int uprobe_tracefs_remove_stale(const struct uprobe_tracefs *tf);

#endif
