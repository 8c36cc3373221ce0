/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record_options.h: the options of `taskspy record` and their parsing (names follow perf, py-spy, samply). */
#ifndef TASKSPY_RECORD_OPTIONS_H
#define TASKSPY_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/output_formats.h"
#include "flamegraph/flamegraph.h"
#include "sampler/sampler.h"

/* Where --wait-output's waits come from (SPEC section 3a). */
enum wait_mode {
    WAIT_MODE_AUTO,              /* snapshots where task backtraces can be read, else events */
    WAIT_MODE_SNAPSHOTS,         /* periodic snapshots of every task's backtrace (tasks/), no probe */
    WAIT_MODE_EVENTS,            /* waker and poll probes (the sampler's task events) */
};
#define WAIT_FREQUENCY_DEFAULT 49

struct record_options {
    pid_t pid;
    char **argv;                 /* command to launch, NULL-terminated, or NULL */
    double duration;
    unsigned frequency;
    struct output_list outputs;  /* every -o, each with its format */
    const char *format_name;     /* -f as given, or NULL: each output's format comes from its extension */
    enum sampler_call_graph call_graph;
    unsigned stack_size;
    size_t mmap_pages;           /* --mmap-pages; 0: automatic */
    enum task_grouping group_by;
    bool await_points;
    const char *markers;
    bool poll_times;
    bool kernel;
    const char *title;
    const char *task_boundary;
    const char *wait_output;     /* --wait-output: the wait-time profile (.folded or .svg), or NULL */
    enum output_format wait_format;
    const char *waker_symbol;    /* --waker-symbol */
    enum wait_mode wait_mode;    /* --wait-mode */
    unsigned wait_frequency;     /* --wait-frequency: snapshots per second (0: not given, the default) */
    enum sampler_marker_records marker_records;   /* hidden --debug-marker-records */
    enum sampler_uprobe_events uprobe_events;     /* hidden --debug-uprobes */
    unsigned marker_slot_bits;                    /* hidden --debug-marker-slots; 0: the default */
};

/* Parse argv (argv[0] == "record"). Returns 0, 1 when --help was printed, or -1 with a message in err. */
int record_options_parse(struct record_options *o, int argc, char **argv, char *err, size_t errlen);
/* The usage lines and every option's help line (from the option table). */
void record_usage(FILE *out);

#endif
