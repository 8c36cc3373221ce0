/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pprof_encoder.h: what both pprof writers share (the one from frame names, export_pprof.c, and the one
 * from a recording's addresses, export_pprof_addresses.c): profile.proto's messages encoded as they come and
 * gzipped in chunks, the string table, sample types and labels. Internal to flamegraph/. */
#ifndef TASKSPY_PPROF_ENCODER_H
#define TASKSPY_PPROF_ENCODER_H

#include "flamegraph/export_internal.h"
#include "flamegraph/protobuf_writer.h"

struct pprof_encoder {
    struct profile *strings;           /* the string table: a profile's interned names have ids 0, 1, ... in
                                          order of interning, "" first */
    struct pb_buffer out, message, part;
    struct gzip_sink gzip;
    uint64_t period_ns;                /* 0: only samples/count */
    bool wait;                         /* a wait/nanoseconds sample type after those */
    uint32_t key_task, key_task_id, key_thread;
    bool no_memory;                    /* a string could not be interned: the file would be wrong */
};

/* Label values as string ids (0: no such label). */
struct pprof_labels {
    uint32_t task, task_id, thread;
};

/* One Line of a Location: a function id (from 1) and the line executing in it (0 unknown). */
struct pprof_line {
    uint64_t function_id;
    uint64_t line;
};

struct pprof_mapping {
    uint64_t id;                       /* from 1 */
    uint64_t start, limit, offset;
    uint32_t file, build_id;           /* string ids */
};

/* Start a profile onto out: the sample types (samples/count, cpu/nanoseconds when info->period_ns, then
 * wait/nanoseconds when info->wait).
 * Returns 0, or -1 (errno ENOMEM; nothing to free). */
int pprof_encoder_open(struct pprof_encoder *e, FILE *out, const struct export_info *info);
/* The string's id in the string table (0 after an allocation failure, which sets no_memory). */
uint32_t pprof_string(struct pprof_encoder *e, const char *s, size_t len);
/* The labels a root frame's name gives (export_parse_root): task and task_id, or thread. */
void pprof_root_labels(struct pprof_encoder *e, const char *root, struct pprof_labels *out);
/* A Sample: location ids leaf first, count samples (and count x period_ns CPU nanoseconds), wait_ns
 * nanoseconds waited (written when the profile has the wait type). 0 or -1. */
int pprof_sample(struct pprof_encoder *e, const uint64_t *location_ids, size_t n, uint64_t count,
                 uint64_t wait_ns, const struct pprof_labels *labels);
/* A Mapping whose locations come symbolized (functions, file names, lines, inline frames). 0 or -1. */
int pprof_mapping(struct pprof_encoder *e, const struct pprof_mapping *m);
/* A Location: lines innermost first (the last is the function the others were inlined into). 0 or -1. */
int pprof_location(struct pprof_encoder *e, uint64_t id, uint64_t mapping_id, uint64_t address,
                   const struct pprof_line *lines, size_t n);
/* A Function: name, system (linker) name and file name as string ids, its start line (0 unknown). */
int pprof_function(struct pprof_encoder *e, uint64_t id, uint32_t name, uint32_t system_name, uint32_t file,
                   uint64_t start_line);
/* The rest of the profile (comment, times, period, the string table) and the gzip trailer, then free.
 * rc is what writing the rest returned: when not 0 the stream is abandoned. Returns 0 or -1 (errno). */
int pprof_encoder_close(struct pprof_encoder *e, int rc, const struct export_info *info);

#endif
