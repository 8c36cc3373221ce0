/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output_formats.h: taskspy's output formats, named by -f or told by the output's file extension, and a
 * set of output files written from one profile: every file is created before any work (an unwritable one
 * fails early), written at the end, and appears whole or not at all (cli/output_file.h). */
#ifndef TASKSPY_OUTPUT_FORMATS_H
#define TASKSPY_OUTPUT_FORMATS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/output_file.h"
#include "flamegraph/flamegraph.h"

enum output_format { FORMAT_FOLDED, FORMAT_FLAMEGRAPH, FORMAT_SPEEDSCOPE, FORMAT_PPROF, FORMAT_TRACE };

#define MAX_OUTPUTS 8

struct output_request {
    const char *path;                /* "-" is standard output */
    enum output_format format;
};

/* The -o options in the order given. */
struct output_list {
    struct output_request items[MAX_OUTPUTS];
    size_t n;
};

/* Add one -o PATH (its format is settled by output_list_resolve). Returns 0, or -1 with a message in err. */
int output_list_add(struct output_list *l, const char *path, char *err, size_t errlen);
/* Give each output its format: from its extension, else the format named format_name (-f; may be NULL).
 * Returns 0, or -1 with a message in err (unknown -f name, an output whose format nothing tells). */
int output_list_resolve(struct output_list *l, const char *format_name, char *err, size_t errlen);
/* The format a file name's extension tells; -1 when it tells none. */
int output_format_of_path(const char *path, enum output_format *format);

/* What every output is made from. */
struct output_content {
    const struct profile *profile;
    const struct svg_options *svg;       /* for FORMAT_FLAMEGRAPH */
    const struct export_info *info;      /* for FORMAT_SPEEDSCOPE, FORMAT_PPROF and FORMAT_TRACE */
    const struct trace_events *trace;    /* for FORMAT_TRACE: polls and samples with their times (record only) */
    struct trace_report *trace_report;   /* FORMAT_TRACE tells what it did with the polls there; may be NULL */
    const struct address_profile *addresses;   /* for FORMAT_PPROF: the stacks as addresses (record only);
                                                  NULL: pprof from the names */
};
/* Write content in format to out. Returns 0 or -1 (errno; EINVAL: a trace without content->trace). */
int output_write(enum output_format format, const struct output_content *content, FILE *out);

struct output_set {
    struct output_file files[MAX_OUTPUTS];
    size_t n;
};
/* Create every output's temporary file. Returns 0, or -1 with a message in err (nothing left behind). */
int output_set_open(struct output_set *s, const struct output_list *l, char *err, size_t errlen);
/* Write every output, then put them all in place. Returns 0, or -1 with a message in err; the outputs not
 * yet in place are removed. */
int output_set_write(struct output_set *s, const struct output_list *l, const struct output_content *content,
                     char *err, size_t errlen);
/* Remove the outputs not yet in place. */
void output_set_abort(struct output_set *s);

#endif
