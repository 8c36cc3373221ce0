/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record_options.c: the options of `taskspy record`, described once in an option table (cli/option_table.h)
 * that gives both the parsing and --help, and the checks that take several options together. */
#include "cli/record_options.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/option_table.h"

/* enum options are stored as int by the table */
_Static_assert(sizeof(enum sampler_call_graph) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum task_grouping) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(pid_t) == sizeof(int), "pid_t stored as int");
_Static_assert(sizeof(enum sampler_marker_records) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum sampler_uprobe_events) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum wait_mode) == sizeof(int), "enum stored as int");

static const struct option_choice call_graph_modes[] = {
    { "dwarf", SAMPLER_CALL_GRAPH_DWARF }, { "fp", SAMPLER_CALL_GRAPH_FP }, { NULL, 0 },
};
/* --debug-marker-records: bpf (the default: BPF on uprobe_multi links, else on uprobe events, else perf
 * samples), bpf-event (BPF on uprobe events, else perf samples) or perf (no BPF) */
static const struct option_choice marker_record_routes[] = {
    { "bpf", SAMPLER_MARKER_RECORDS_AUTO }, { "bpf-event", SAMPLER_MARKER_RECORDS_BPF_EVENT },
    { "perf", SAMPLER_MARKER_RECORDS_PERF }, { NULL, 0 },
};
/* --debug-uprobes: tracefs (the default: tracefs events where tracefs is writable, else uprobe PMU events)
 * or pmu */
static const struct option_choice uprobe_event_kinds[] = {
    { "tracefs", SAMPLER_UPROBES_AUTO }, { "pmu", SAMPLER_UPROBES_PMU }, { NULL, 0 },
};
static const struct option_choice wait_modes[] = {
    { "snapshots", WAIT_MODE_SNAPSHOTS }, { "events", WAIT_MODE_EVENTS }, { NULL, 0 },
};
static const struct option_choice groupings[] = {
    { "entry", GROUP_BY_ENTRY }, { "task", GROUP_BY_TASK }, { "none", GROUP_BY_NONE }, { NULL, 0 },
};

/* -o is repeatable: every output of the recording (cli/output_formats.h) */
static int add_output(void *outputs, const char *path, char *err, size_t errlen)
{
    return output_list_add(outputs, path, err, errlen);
}

/* --mmap-pages: as perf record -m, a power of two (65536 pages, 256 MiB per CPU, is far past any need). */
static int set_mmap_pages(void *field, const char *arg, char *err, size_t errlen)
{
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (end == arg || *end || arg[0] == '-' || v < 1 || v > 65536 || (v & (v - 1))) {
        snprintf(err, errlen, "invalid --mmap-pages '%s' (a power of two, 1 to 65536)", arg);
        return -1;
    }
    *(size_t *)field = (size_t)v;
    return 0;
}

/* --wait-output: .folded or .svg, from the extension (no -f: the CPU profile's -f does not apply). */
static int set_wait_output(void *field, const char *path, char *err, size_t errlen)
{
    struct record_options *o = (struct record_options *)((char *)field - offsetof(struct record_options, wait_output));
    size_t len = strlen(path);
    if (len > 7 && strcmp(path + len - 7, ".folded") == 0)
        o->wait_format = FORMAT_FOLDED;
    else if (len > 4 && strcmp(path + len - 4, ".svg") == 0)
        o->wait_format = FORMAT_FLAMEGRAPH;
    else {
        snprintf(err, errlen, "invalid --wait-output '%s' (a .folded or .svg file)", path);
        return -1;
    }
    o->wait_output = path;
    return 0;
}

#define AT(field) offsetof(struct record_options, field)

static const struct option_spec record_specs[] = {
    { .name = "pid", .short_name = 'p', .arg = "PID", .kind = OPTION_INT, .offset = AT(pid), .min = 1,
      .max = 4194304, .bad_value = "invalid PID '%s'",
      .help = "attach to every thread of PID (and threads it creates)" },
    { .name = "duration", .short_name = 'd', .arg = "SECS", .kind = OPTION_REAL, .offset = AT(duration),
      .min = 0.001, .max = 31536000, .bad_value = "invalid duration '%s' (seconds, > 0)",
      .help = "stop after SECS (also on Ctrl-C or when the target exits)" },
    { .name = "frequency", .short_name = 'F', .arg = "HZ", .kind = OPTION_WHOLE, .offset = AT(frequency),
      .min = 1, .max = 100000, .bad_value = "invalid frequency '%s' (1 to 100000 Hz)",
      .help = "samples per second of CPU time, per thread (default 99)" },
    { .name = "output", .short_name = 'o', .arg = "FILE", .kind = OPTION_CALL, .offset = AT(outputs),
      .call = add_output,
      .help = ".svg flame graph, .folded/.txt folded stacks, .speedscope.json,\n"
              ".pb.gz/.pprof pprof, .trace.json Chrome trace (polls and samples in\n"
              "time); repeatable: every file from the same recording" },
    { .name = "wait-output", .arg = "FILE", .kind = OPTION_CALL, .offset = AT(wait_output),
      .call = set_wait_output,
      .help = "also record where tasks wait (wall time at each await, [suspended]\n"
              "until woken, [runnable] until polled): .folded or .svg" },
    { .name = "wait-mode", .arg = "MODE", .kind = OPTION_CHOICE, .offset = AT(wait_mode), .choices = wait_modes,
      .bad_value = "invalid --wait-mode '%s' (snapshots or events)",
      .help = "snapshots (every task's async backtrace read from memory, no probe)\n"
              "or events (waker probes); default: snapshots where they can be read" },
    { .name = "wait-frequency", .arg = "HZ", .kind = OPTION_WHOLE, .offset = AT(wait_frequency), .min = 1,
      .max = 1000, .bad_value = "invalid --wait-frequency '%s' (1 to 1000 Hz)",
      .help = "task snapshots per second in snapshot mode (default 49)" },
    { .name = "waker-symbol", .arg = "NAME", .kind = OPTION_STRING, .offset = AT(waker_symbol), .non_empty = true,
      .bad_value = "invalid --waker-symbol '%s' (a function name)",
      .help = "with --wait-output from events and markers: the program's function\n"
              "that a task calls to register its waker (task id in its first argument)" },
    { .name = "format", .short_name = 'f', .arg = "FMT", .kind = OPTION_STRING, .offset = AT(format_name),
      .help = "flamegraph, folded, speedscope, pprof or chrometrace: for an -o whose\nextension says nothing" },
    { .name = "call-graph", .arg = "MODE", .kind = OPTION_CHOICE, .offset = AT(call_graph),
      .choices = call_graph_modes, .bad_value = "invalid --call-graph '%s' (dwarf or fp)",
      .help = "dwarf (default) or fp" },
    { .name = "stack-size", .arg = "BYTES", .kind = OPTION_WHOLE, .offset = AT(stack_size), .min = 8,
      .max = SAMPLER_MAX_STACK_SIZE, .bad_value = "invalid --stack-size '%s' (8 to 65528 bytes)",
      .help = "user stack copied per sample in dwarf mode (default/max 65528)" },
    { .name = "mmap-pages", .short_name = 'm', .arg = "N", .kind = OPTION_CALL, .offset = AT(mmap_pages),
      .call = set_mmap_pages,
      .help = "ring-buffer data pages per CPU, a power of two (default: from\nfrequency x sample size x CPUs, as perf record -m)" },
    { .name = "group-by", .arg = "KEY", .kind = OPTION_CHOICE, .offset = AT(group_by), .choices = groupings,
      .bad_value = "invalid --group-by '%s' (entry, task or none)", .help = "entry (default), task or none" },
    { .name = "await-points", .arg = "on|off", .kind = OPTION_ON_OFF, .offset = AT(await_points),
      .bad_value = "invalid --await-points '%s' (on or off)",
      .help = "label async frames with the await they poll (default on)" },
    { .name = "markers", .arg = "SPEC", .kind = OPTION_STRING, .offset = AT(markers), .non_empty = true,
      .bad_value = "invalid --markers '%s' (auto, none, probes, or providers and tls)",
      .help = "auto (default: the cheapest route found), none, probes (poll\nprobes only), or a comma list of providers and tls (the task's\nthread-local, read at each sample)" },
    { .name = "task-boundary", .arg = "RE", .kind = OPTION_STRING, .offset = AT(task_boundary),
      .help = "extra runtime frame (regex) below which task stacks start" },
    { .name = "poll-times", .kind = OPTION_FLAG, .offset = AT(poll_times),
      .help = "runtimes without markers: also probe poll returns, for poll durations" },
    { .name = "kernel", .kind = OPTION_FLAG, .offset = AT(kernel), .help = "include kernel frames (suffixed _[k])" },
    { .name = "title", .arg = "TEXT", .kind = OPTION_STRING, .offset = AT(title),
      .help = "flame graph title (default: the target's command line)" },
    { .name = "help", .short_name = 'h', .kind = OPTION_HELP, .help = "this help" },
    /* hidden (no help line), for debugging and tests: force a slower marker route */
    { .name = "debug-marker-records", .arg = "ROUTE", .kind = OPTION_CHOICE, .offset = AT(marker_records),
      .choices = marker_record_routes, .bad_value = "invalid --debug-marker-records '%s' (bpf, bpf-event or perf)" },
    { .name = "debug-uprobes", .arg = "KIND", .kind = OPTION_CHOICE, .offset = AT(uprobe_events),
      .choices = uprobe_event_kinds, .bad_value = "invalid --debug-uprobes '%s' (tracefs or pmu)" },
    /* log2 of the BPF marker slots per CPU region (default 15): small regions overrun, for the tests of loss */
    { .name = "debug-marker-slots", .arg = "BITS", .kind = OPTION_WHOLE, .offset = AT(marker_slot_bits),
      .min = SAMPLER_MARKER_SLOT_BITS_MIN, .max = SAMPLER_MARKER_SLOT_BITS_MAX,
      .bad_value = "invalid --debug-marker-slots '%s' (4 to 15: log2 of the slots per CPU)" },
};

static const struct option_table record_table = {
    .specs = record_specs, .n = sizeof(record_specs) / sizeof(record_specs[0]), .stop_at_operand = true,
};

void record_usage(FILE *out)
{
    fputs("usage: taskspy record -p PID [-d SECS] [options] -o FILE\n"
          "       taskspy record [-d SECS] [options] -o FILE -- CMD ARGS...\n"
          "\n",
          out);
    option_table_help(&record_table, out);
}

static void set_defaults(struct record_options *o)
{
    memset(o, 0, sizeof(*o));
    o->frequency = 99;
    o->call_graph = SAMPLER_CALL_GRAPH_DWARF;
    o->stack_size = SAMPLER_MAX_STACK_SIZE;
    o->group_by = GROUP_BY_ENTRY;
    o->await_points = true;
    o->markers = "auto";
}

/* Copies of the user stack are whole 8-byte words. */
static void round_stack_size(struct record_options *o)
{
    o->stack_size = (o->stack_size + 7u) & ~7u;
    if (o->stack_size > SAMPLER_MAX_STACK_SIZE)
        o->stack_size = SAMPLER_MAX_STACK_SIZE;
}

static int check_target(const struct record_options *o, char *err, size_t errlen)
{
    if (o->pid && o->argv)
        snprintf(err, errlen, "give either -p PID or a command after --, not both");
    else if (!o->pid && !o->argv)
        snprintf(err, errlen, "nothing to record: give -p PID or a command after --");
    else if (o->waker_symbol && !o->wait_output)
        snprintf(err, errlen, "--waker-symbol is for the wait profile: give --wait-output FILE too");
    else if ((o->wait_mode != WAIT_MODE_AUTO || o->wait_frequency) && !o->wait_output)
        snprintf(err, errlen, "--wait-mode and --wait-frequency are for the wait profile: give --wait-output FILE too");
    else if (o->waker_symbol && o->wait_mode == WAIT_MODE_SNAPSHOTS)
        snprintf(err, errlen, "--waker-symbol names a probe for --wait-mode events, not snapshots");
    else if (o->wait_frequency && o->wait_mode == WAIT_MODE_EVENTS)
        snprintf(err, errlen, "--wait-frequency is the snapshot rate: not for --wait-mode events");
    else
        return 0;
    return -1;
}

int record_options_parse(struct record_options *o, int argc, char **argv, char *err, size_t errlen)
{
    set_defaults(o);
    int operands = argc;
    enum option_parse_result rc = option_table_parse(&record_table, o, argc, argv, &operands, err, errlen);
    if (rc == OPTIONS_HELP) {
        record_usage(stdout);
        return 1;
    }
    if (rc != OPTIONS_OK)
        return -1;
    round_stack_size(o);
    if (operands < argc)
        o->argv = &argv[operands];   /* the command to launch, after "--" or at the first operand */
    /* each output's format: from its extension, else -f */
    if (check_target(o, err, errlen) != 0 || output_list_resolve(&o->outputs, o->format_name, err, errlen) != 0)
        return -1;
    return 0;
}
