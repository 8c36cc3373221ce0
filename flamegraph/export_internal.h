/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_internal.h: what the speedscope and pprof exports share: reading back what a frame name says
 * (source position, inlining, task roots) and a gzip stream. Internal to flamegraph/. */
#ifndef TASKSPY_EXPORT_INTERNAL_H
#define TASKSPY_EXPORT_INTERNAL_H

#include "flamegraph/flamegraph.h"

#include <zlib.h>

/* A frame name taken apart. Names follow the folded conventions: "NAME @ FILE:LINE" (taskspy's await
 * points), "NAME [FILE:LINE]" and "NAME (FILE:LINE)" (other profilers' source positions), and a trailing
 * "_[i]" (perf and inferno: inlined into the frame before it), which is not part of the function name.
 * Other annotations ("_[k]", "_[j]", "_[w]") stay in the name. */
struct frame_parts {
    const char *function;   /* points into the name */
    size_t function_len;
    const char *file;       /* NULL when the name has no source position */
    size_t file_len;
    unsigned line;          /* 0 when unknown */
    bool inlined;
};
void export_parse_frame(const char *name, struct frame_parts *out);

/* What a root frame says of its samples: "task: ENTRY", "task ID: ENTRY" (taskspy's task roots),
 * "[unknown task]" and "[task entry unknown]" are tasks; any other root is a thread's name. */
struct root_parts {
    const char *task;       /* the entry ("task: ENTRY"), or the whole root for the unknown-task roots */
    size_t task_len;
    const char *task_id;    /* "task ID: ENTRY": the id as shown (decimal or 0x hex), else NULL */
    size_t task_id_len;
    const char *thread;     /* a thread's root: the whole name, else NULL */
    size_t thread_len;
};
void export_parse_root(const char *name, struct root_parts *out);

/* gzip (RFC 1952) onto a FILE, as `go tool pprof` wants its input. */
struct gzip_sink {
    z_stream z;
    FILE *out;
    bool open;
    unsigned char chunk[1u << 15];
};
/* Returns 0, or -1 (errno ENOMEM). */
int gzip_sink_open(struct gzip_sink *g, FILE *out);
/* Compress len bytes onto out. Returns 0, or -1 (errno) when writing failed. */
int gzip_sink_write(struct gzip_sink *g, const void *data, size_t len);
/* Write what is left and the trailer; frees the stream. Returns 0 or -1 (errno). */
int gzip_sink_finish(struct gzip_sink *g);
/* Free the stream without finishing it (after a failure). */
void gzip_sink_abort(struct gzip_sink *g);

#endif
