/* SPDX-License-Identifier: GPL-3.0-or-later */
/* diff_cmd.c: `taskspy diff BEFORE AFTER -o FILE [-n]`: compares two folded-stack files (taskspy's CPU or
 * wait profiles, perf's, inferno's) and writes difffolded.pl's two-count folded lines (.folded, .txt, or
 * '-' for stdout) or the differential flame graph flamegraph.pl draws from them (.svg), through
 * cli/output_file (whole or not at all). Exit status: 0 done, 1 runtime error (an input that cannot be read,
 * is empty or has a total of 0), 2 usage error; every error is one "taskspy: ..." line on stderr. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/folded_input.h"
#include "cli/option_table.h"
#include "cli/output_file.h"
#include "cli/output_formats.h"
#include "flamegraph/flamegraph.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

struct diff_args {
    const char *before, *after;
    const char *output;
    const char *title;
    bool normalize;
    bool svg;                        /* the output is the flame graph, not the folded lines */
};

#define AT(field) offsetof(struct diff_args, field)

static const struct option_spec diff_specs[] = {
    { .name = "output", .short_name = 'o', .arg = "FILE", .kind = OPTION_STRING, .offset = AT(output),
      .help = "FILE.folded (or .txt; '-' for stdout): difffolded.pl's lines\n"
              "FILE.svg: the differential flame graph" },
    { .name = "normalize", .short_name = 'n', .kind = OPTION_FLAG, .offset = AT(normalize),
      .help = "scale BEFORE's counts to AFTER's total first (difffolded.pl -n)" },
    { .name = "title", .arg = "TEXT", .kind = OPTION_STRING, .offset = AT(title),
      .help = "flame graph title (default \"Differential Flame Graph\")" },
    { .name = "help", .short_name = 'h', .kind = OPTION_HELP, .help = "this help" },
};

static const struct option_table diff_table = {
    .specs = diff_specs, .n = sizeof(diff_specs) / sizeof(diff_specs[0]),
};

static const struct option_command diff_cmd = {
    .name = "diff",
    .usage = "usage: taskspy diff BEFORE AFTER -o FILE [options]\n"
             "Compare two folded-stack files (taskspy's, perf's, inferno's). FILE.folded gets one line per stack\n"
             "of either, \"stack BEFORE_COUNT AFTER_COUNT\" (as difffolded.pl writes them); FILE.svg the\n"
             "differential flame graph: widths from AFTER, frames whose own samples grew red, shrank blue.\n"
             "\n",
    .table = &diff_table,
};

static int usage_error(const char *message)
{
    return option_command_usage_error(&diff_cmd, message);
}

/* Returns 0, or an exit status (EXIT_USAGE; or -1 meaning --help was printed, exit 0). */
static int parse_args(int argc, char **argv, struct diff_args *a)
{
    memset(a, 0, sizeof(*a));
    a->title = "Differential Flame Graph";
    char err[512];
    int operands = argc;
    enum option_parse_result rc = option_command_parse(&diff_cmd, a, argc, argv, &operands);
    if (rc != OPTIONS_OK)
        return rc == OPTIONS_HELP ? -1 : EXIT_USAGE;
    if (argc - operands != 2) {
        snprintf(err, sizeof(err), "give two folded files, BEFORE and AFTER (%d given)", argc - operands);
        return usage_error(err);
    }
    a->before = argv[operands];
    a->after = argv[operands + 1];
    if (!a->output)
        return usage_error("no output: give -o FILE.folded or -o FILE.svg");
    enum output_format format = FORMAT_FOLDED;       /* "-": the lines, for a pipe into flamegraph.pl */
    bool known = strcmp(a->output, "-") == 0 || output_format_of_path(a->output, &format) == 0;
    if (!known || (format != FORMAT_FOLDED && format != FORMAT_FLAMEGRAPH)) {
        snprintf(err, sizeof(err), "cannot write %s: a diff is written as .folded (or .txt) or .svg (to compare "
                 "two pprof files: go tool pprof -diff_base=BEFORE.pb.gz AFTER.pb.gz)", a->output);
        return usage_error(err);
    }
    a->svg = format == FORMAT_FLAMEGRAPH;
    return 0;
}

/* Read one of the two inputs. Returns 0, or -1 after saying why there is nothing to compare. */
static int read_input(struct profile *p, const char *path)
{
    enum folded_input_result rc = folded_input_read(p, path);
    if (rc == FOLDED_INPUT_EMPTY)
        fprintf(stderr, "taskspy: diff: %s is empty: nothing to compare\n", path);
    else if (rc == FOLDED_INPUT_OK && profile_total(p) == 0)
        fprintf(stderr, "taskspy: diff: %s has a total of 0 samples (every count is 0): nothing to compare\n", path);
    else
        return rc == FOLDED_INPUT_OK ? 0 : -1;
    return -1;
}

/* Pair the two inputs; NULL after saying why. */
static struct diff_profile *read_diff(const struct diff_args *a)
{
    struct profile *before = profile_new(), *after = profile_new();
    struct diff_profile *d = NULL;
    if (!before || !after)
        fprintf(stderr, "taskspy: out of memory\n");
    else if (read_input(before, a->before) == 0 && read_input(after, a->after) == 0) {
        d = diff_profile_new(before, after, a->normalize);
        after = NULL;                                /* the diff's now, or freed */
        if (!d)
            fprintf(stderr, "taskspy: diff: %s\n", strerror(errno));
    }
    profile_free(before);
    profile_free(after);
    return d;
}

static int write_diff(const struct diff_profile *d, const struct diff_args *a, FILE *out)
{
    if (!a->svg)
        return diff_profile_write_folded(d, out);
    struct diff_summary sum;
    diff_profile_summary(d, &sum);
    char subtitle[1024];
    snprintf(subtitle, sizeof(subtitle), "before: %s (%llu samples%s), after: %s (%llu samples); widths: after; "
             "red: grew, blue: shrank", a->before, (unsigned long long)sum.before_total,
             a->normalize ? ", normalized" : "", a->after, (unsigned long long)sum.after_total);
    struct svg_options svg;
    svg_options_init(&svg);
    svg.title = a->title;
    svg.subtitle = subtitle;
    return diff_profile_write_svg(d, out, &svg);
}

static void print_summary(const struct diff_profile *d, const struct diff_args *a)
{
    struct diff_summary s;
    diff_profile_summary(d, &s);
    fprintf(stderr, "taskspy: wrote %s: %llu stacks, %llu grew, %llu shrank (%llu only in %s, %llu only in %s); "
            "%llu samples before%s, %llu after\n", strcmp(a->output, "-") == 0 ? "<stdout>" : a->output,
            (unsigned long long)s.stacks, (unsigned long long)s.grew, (unsigned long long)s.shrank,
            (unsigned long long)s.only_before, a->before, (unsigned long long)s.only_after, a->after,
            (unsigned long long)s.before_total, a->normalize ? " (normalized)" : "", (unsigned long long)s.after_total);
}

int diff_command(int argc, char **argv)
{
    struct diff_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc != 0)
        return rc < 0 ? 0 : rc;

    /* Create the output first, so an unwritable destination fails before any work. */
    struct output_file out;
    char err[512];
    if (output_file_open(&out, args.output, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        return EXIT_RUNTIME;
    }
    int status = EXIT_RUNTIME;
    struct diff_profile *d = read_diff(&args);
    if (d) {
        if (write_diff(d, &args, out.stream) != 0 || fflush(out.stream) != 0)
            fprintf(stderr, "taskspy: cannot write %s: %s\n", args.output, strerror(errno));
        else if (output_file_commit(&out, err, sizeof(err)) != 0)
            fprintf(stderr, "taskspy: %s\n", err);
        else
            status = 0;
    }
    if (status != 0)
        output_file_abort(&out);
    else
        print_summary(d, &args);
    diff_profile_free(d);
    return status;
}
