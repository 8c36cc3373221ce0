/* record_options.c: parsing `taskspy record` options into struct record_options, with one-line errors. */
#include "cli/record_options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void record_usage(FILE *out)
{
    fputs("usage: taskspy record -p PID [-d SECS] [options] -o FILE\n"
          "       taskspy record [-d SECS] [options] -o FILE -- CMD ARGS...\n"
          "\n"
          "  -p, --pid PID            attach to every thread of PID (and threads it creates)\n"
          "  -d, --duration SECS      stop after SECS (also on Ctrl-C or when the target exits)\n"
          "  -F, --frequency HZ       samples per second of CPU time, per thread (default 99)\n"
          "  -o, --output FILE        .svg flame graph, .folded/.txt folded stacks, .speedscope.json,\n"
          "                           .pb.gz/.pprof pprof; repeatable: every file from the same recording\n"
          "  -f, --format FMT         flamegraph, folded, speedscope or pprof: for an -o whose extension\n"
          "                           says nothing\n"
          "      --call-graph MODE    dwarf (default) or fp\n"
          "      --stack-size BYTES   user stack copied per sample in dwarf mode (default/max 65528)\n"
          "  -m, --mmap-pages N       ring-buffer data pages per CPU, a power of two (default: from\n"
          "                           frequency x sample size x CPUs, as perf record -m)\n"
          "      --group-by KEY       entry (default), task or none\n"
          "      --await-points on|off  label async frames with the await they poll (default on)\n"
          "      --markers SPEC       auto (default), none, or a comma list of providers\n"
          "      --task-boundary RE   extra runtime frame (regex) below which task stacks start\n"
          "      --poll-times         runtimes without markers: also probe poll returns, for poll durations\n"
          "      --kernel             include kernel frames (suffixed _[k])\n"
          "      --title TEXT         flame graph title (default: the target's command line)\n"
          "  -h, --help               this help\n",
          out);
}

static int parse_number(const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < min || v > max || v != v)
        return -1;
    *out = v;
    return 0;
}

/* --debug-marker-records: bpf (the default: BPF on uprobe_multi links, else on uprobe events, else perf
 * samples), bpf-event (BPF on uprobe events, else perf samples) or perf (no BPF). */
static int parse_marker_records(const char *s, enum sampler_marker_records *out)
{
    if (strcmp(s, "bpf") == 0)
        *out = SAMPLER_MARKER_RECORDS_AUTO;
    else if (strcmp(s, "bpf-event") == 0)
        *out = SAMPLER_MARKER_RECORDS_BPF_EVENT;
    else if (strcmp(s, "perf") == 0)
        *out = SAMPLER_MARKER_RECORDS_PERF;
    else
        return -1;
    return 0;
}

/* --debug-uprobes: tracefs (the default: tracefs events where tracefs is writable, else uprobe PMU events)
 * or pmu. */
static int parse_uprobe_events(const char *s, enum sampler_uprobe_events *out)
{
    if (strcmp(s, "tracefs") == 0)
        *out = SAMPLER_UPROBES_AUTO;
    else if (strcmp(s, "pmu") == 0)
        *out = SAMPLER_UPROBES_PMU;
    else
        return -1;
    return 0;
}

int record_options_parse(struct record_options *o, int argc, char **argv, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->frequency = 99;
    o->call_graph = SAMPLER_CALL_GRAPH_DWARF;
    o->stack_size = SAMPLER_MAX_STACK_SIZE;
    o->group_by = GROUP_BY_ENTRY;
    o->await_points = true;
    o->markers = "auto";
    const char *format = NULL;
    enum { OPT_CALL_GRAPH = 256, OPT_STACK_SIZE, OPT_GROUP_BY, OPT_AWAIT, OPT_MARKERS, OPT_KERNEL, OPT_TITLE,
           OPT_BOUNDARY, OPT_POLL_TIMES, OPT_DEBUG_MARKER_RECORDS, OPT_DEBUG_UPROBES };
    static const struct option longopts[] = {
        { "pid", required_argument, NULL, 'p' },
        { "duration", required_argument, NULL, 'd' },
        { "frequency", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "format", required_argument, NULL, 'f' },
        { "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
        { "stack-size", required_argument, NULL, OPT_STACK_SIZE },
        { "mmap-pages", required_argument, NULL, 'm' },
        { "group-by", required_argument, NULL, OPT_GROUP_BY },
        { "await-points", required_argument, NULL, OPT_AWAIT },
        { "markers", required_argument, NULL, OPT_MARKERS },
        { "kernel", no_argument, NULL, OPT_KERNEL },
        { "title", required_argument, NULL, OPT_TITLE },
        { "task-boundary", required_argument, NULL, OPT_BOUNDARY },
        { "poll-times", no_argument, NULL, OPT_POLL_TIMES },
        { "help", no_argument, NULL, 'h' },
        /* hidden, for debugging and tests: force a slower marker route */
        { "debug-marker-records", required_argument, NULL, OPT_DEBUG_MARKER_RECORDS },
        { "debug-uprobes", required_argument, NULL, OPT_DEBUG_UPROBES },
        { NULL, 0, NULL, 0 },
    };
    optind = 0;   /* 0, not 1: makes glibc reinitialise getopt fully (a second parse in one process) */
    opterr = 0;
    int c;
    double v;
    while ((c = getopt_long(argc, argv, "+:p:d:F:o:f:m:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (parse_number(optarg, 1, 4194304, &v) != 0 || v != (double)(pid_t)v) {
                snprintf(err, errlen, "invalid PID '%s'", optarg);
                return -1;
            }
            o->pid = (pid_t)v;
            break;
        case 'd':
            if (parse_number(optarg, 0.001, 31536000, &o->duration) != 0) {
                snprintf(err, errlen, "invalid duration '%s' (seconds, > 0)", optarg);
                return -1;
            }
            break;
        case 'F':
            if (parse_number(optarg, 1, 100000, &v) != 0 || v != (unsigned)v) {
                snprintf(err, errlen, "invalid frequency '%s' (1 to 100000 Hz)", optarg);
                return -1;
            }
            o->frequency = (unsigned)v;
            break;
        case 'o':
            if (output_list_add(&o->outputs, optarg, err, errlen) != 0)
                return -1;
            break;
        case 'f':
            format = optarg;
            break;
        case OPT_CALL_GRAPH:
            if (strcmp(optarg, "dwarf") == 0)
                o->call_graph = SAMPLER_CALL_GRAPH_DWARF;
            else if (strcmp(optarg, "fp") == 0)
                o->call_graph = SAMPLER_CALL_GRAPH_FP;
            else {
                snprintf(err, errlen, "invalid --call-graph '%s' (dwarf or fp)", optarg);
                return -1;
            }
            break;
        case OPT_STACK_SIZE:
            if (parse_number(optarg, 8, SAMPLER_MAX_STACK_SIZE, &v) != 0 || v != (unsigned)v) {
                snprintf(err, errlen, "invalid --stack-size '%s' (8 to %u bytes)", optarg, SAMPLER_MAX_STACK_SIZE);
                return -1;
            }
            o->stack_size = ((unsigned)v + 7u) & ~7u;
            if (o->stack_size > SAMPLER_MAX_STACK_SIZE)
                o->stack_size = SAMPLER_MAX_STACK_SIZE;
            break;
        case 'm':
            /* as perf record -m: a power of two; 65536 pages (256 MiB per CPU) is far past any sane need */
            if (parse_number(optarg, 1, 65536, &v) != 0 || v != (unsigned)v || ((unsigned)v & ((unsigned)v - 1))) {
                snprintf(err, errlen, "invalid --mmap-pages '%s' (a power of two, 1 to 65536)", optarg);
                return -1;
            }
            o->mmap_pages = (size_t)v;
            break;
        case OPT_GROUP_BY:
            if (strcmp(optarg, "entry") == 0)
                o->group_by = GROUP_BY_ENTRY;
            else if (strcmp(optarg, "task") == 0)
                o->group_by = GROUP_BY_TASK;
            else if (strcmp(optarg, "none") == 0)
                o->group_by = GROUP_BY_NONE;
            else {
                snprintf(err, errlen, "invalid --group-by '%s' (entry, task or none)", optarg);
                return -1;
            }
            break;
        case OPT_AWAIT:
            if (strcmp(optarg, "on") == 0)
                o->await_points = true;
            else if (strcmp(optarg, "off") == 0)
                o->await_points = false;
            else {
                snprintf(err, errlen, "invalid --await-points '%s' (on or off)", optarg);
                return -1;
            }
            break;
        case OPT_MARKERS:
            if (!*optarg) {
                snprintf(err, errlen, "invalid --markers '' (auto, none, or providers)");
                return -1;
            }
            o->markers = optarg;
            break;
        case OPT_KERNEL:
            o->kernel = true;
            break;
        case OPT_TITLE:
            o->title = optarg;
            break;
        case OPT_BOUNDARY:
            o->task_boundary = optarg;
            break;
        case OPT_POLL_TIMES:
            o->poll_times = true;
            break;
        case OPT_DEBUG_MARKER_RECORDS:
            if (parse_marker_records(optarg, &o->marker_records) != 0) {
                snprintf(err, errlen, "invalid --debug-marker-records '%s' (bpf, bpf-event or perf)", optarg);
                return -1;
            }
            break;
        case OPT_DEBUG_UPROBES:
            if (parse_uprobe_events(optarg, &o->uprobe_events) != 0) {
                snprintf(err, errlen, "invalid --debug-uprobes '%s' (tracefs or pmu)", optarg);
                return -1;
            }
            break;
        case 'h':
            record_usage(stdout);
            return 1;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
            return -1;
        default:
            if (optopt && optopt < 256)
                snprintf(err, errlen, "unknown option '-%c'", optopt);
            else
                snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc)
        o->argv = &argv[optind];
    if (o->pid && o->argv) {
        snprintf(err, errlen, "give either -p PID or a command after --, not both");
        return -1;
    }
    if (!o->pid && !o->argv) {
        snprintf(err, errlen, "nothing to record: give -p PID or a command after --");
        return -1;
    }
    if (output_list_resolve(&o->outputs, format, err, errlen) != 0)
        return -1;
    return 0;
}
