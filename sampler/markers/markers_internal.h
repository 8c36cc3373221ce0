/* SPDX-License-Identifier: GPL-3.0-or-later */
/* markers_internal.h: the state of the marker layer and the steps its files share: discovery
 * (marker_discovery.c) finds probe locations in objects, attaching (marker_attach.c) chooses the route for
 * each, hits (marker_hits.c) decodes what the routes deliver. Never included from outside sampler/markers/. */
#ifndef TASKSPY_MARKERS_INTERNAL_H
#define TASKSPY_MARKERS_INTERNAL_H

#include "sampler/markers/markers.h"
#include "sampler/markers/bpf_route.h"
#include "sampler/perf/cpu_buffers.h"
#include "sampler/perf/event_fds.h"
#include "base/vec.h"
#include "base/u64_map.h"
#include "sampler/markers/uprobe_pmu.h"
#include "sampler/markers/uprobe_tracefs.h"
#include "sampler/probes/usdt_args.h"
#include "elf/elf_file.h"

/* Where one probe goes. */
struct probe_location {
    const char *provider, *name;
    uint64_t offset;                   /* file offset */
    uint64_t semaphore_offset;         /* 0 = none */
    bool retprobe;
    enum bpf_return_read return_read;  /* a function's entry: its BPF program also reads the return address */
};

#define MAX_OPTIONAL_SITES 8

struct marker_probe {
    char provider[64];
    char name[64];
    enum marker_kind kind;
    bool has_arg;
    struct usdt_arg arg0;
    struct uprobe_arg_plan plan;
    bool tracefs;
    struct uprobe_tracefs_event tracefs_event;
    bool bpf;                          /* hits through BPF (else perf samples) */
};

struct markers {
    pid_t pid;
    char root[64];
    struct debug_files *debug_files;   /* the shared debug-file lookup, or NULL */
    struct cpu_buffers buffers;        /* the marker buffer of each CPU, apart from the samples' */
    uint32_t largest_record;           /* the largest marker sample record read from them so far */
    const char *spec;
    bool poll_times;                   /* runtime functions: also probe their returns (poll ends) */
    size_t runtime_functions;          /* runtime poll functions probed */
    bool wait_profile;                 /* also probe wakes and waker registrations */
    const char *waker_symbol;          /* NULL: none */
    size_t waker_locations;            /* wake / waker-registration locations attached */
    bool (*on_waker_site)(void *ctx, const char *path, uint64_t offset, bool runtime_ids,
                          const struct bpf_marker_program_spec *slots);
    struct uprobe_pmu pmu;
    bool have_pmu;
    struct marker_bpf *bpf;            /* hits through BPF slots (NULL: not set up yet, or unavailable) */
    size_t flagged_reads;              /* BPF programs reading return addresses once told (atomic: the processing
                                          thread reads it while objects loaded later are probed) */
    int bpf_state;                     /* 0 untried, 1 ready, -1 unavailable (or SAMPLER_MARKER_RECORDS_PERF) */
    unsigned slot_bits;                /* log2 of the BPF slots per CPU region (0: the largest) */
    bool bpf_links;                    /* programs on uprobe_multi links (else on perf uprobe events) */
    uint64_t bpf_from_ns, bpf_until_ns; /* the recording's window (CLOCK_MONOTONIC): a uprobe_multi link cannot
                                          be disabled, so the BPF slots' hits outside it are left out */
    struct uprobe_tracefs tracefs;
    int tracefs_state;                 /* 0 untried (or not mounted), 1 ready, -1 unavailable */
    bool prefer_tracefs;               /* tracefs events where possible (SAMPLER_UPROBES_PMU: never) */
    bool per_process;                  /* system-wide uprobes refused: follow the target process instead */
    VEC_OF(struct marker_probe) probes;
    struct event_fds events;           /* perf events and uprobe_multi links: closed together, concurrently */
    struct u64_map probe_of_id;        /* event id -> probes.v[] */
    VEC_OF(char *) scanned;            /* object paths already scanned */
    VEC_OF(struct sampler_probe_stat) stats;
    bool registration_probes;          /* a waker-registration probe is attached (MARKER_WAKER_REGISTERED, or
                                          MARKER_RUNTIME_WAKER_REGISTERED) */
    bool terminate_probes;             /* a task-terminate marker is attached */
    void (*on_warning)(void *ctx, const char *message);
    void *warning_ctx;
};

/* markers.c: report a problem that does not stop the recording through the warning callback. */
void markers_warn(const struct markers *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* marker_attach.c: attach one location of a marker (kind, arg0 NULL when it has none) the first way that
 * works. Returns 0, or -1 (reported once). */
int attach_location(struct markers *m, const char *path, const struct probe_location *n,
                    enum marker_kind kind, const struct usdt_arg *arg0);
/* A waker-registration location offered to on_waker_site with its slot program's spec (runtime_ids as
 * on_waker_site's). Returns 0 when that took it (its stack event's program writes the location's slots: one
 * probe consumer), -1 when the location is to be attached with attach_location. */
int offer_registration(struct markers *m, const char *path, const struct probe_location *n, enum marker_kind kind,
                       const struct usdt_arg *arg0, bool runtime_ids);

/* waker_sites.c: the wait profile's probes in an object: the runtime's waker functions found with its poll
 * functions (found: every role), and the --waker-symbol function. */
struct runtime_probe_list;
void attach_waker_functions(struct markers *m, const struct elf_file *ef, const char *full,
                            const struct runtime_probe_list *found);
/* The runtime's waker functions in an object whose tasks come from poll markers (path: as the target names it,
 * full: its path from here), their hits of the MARKER_RUNTIME_ kinds (%rdi the runtime's task header).
 * may_download: as markers_scan_object's. */
void attach_marker_runtime_wakers(struct markers *m, const struct elf_file *ef, const char *path, const char *full,
                                  bool may_download);

#endif
