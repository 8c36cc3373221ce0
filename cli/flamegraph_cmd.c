/* SPDX-License-Identifier: GPL-3.0-or-later */
/* flamegraph_cmd.c: `taskspy flamegraph [FOLDED|-] -o FILE.svg [svg options]`: reads a folded-stack file
 * (taskspy's, perf's, stackcollapse's, inferno's, py-spy's) or stdin and writes an interactive SVG, or
 * converts it when the output's extension names another format (.speedscope.json, .pb.gz, .folded). The
 * output appears under its name only when complete (cli/output_file). Options come from one option table.
 * Exit status: 0 done, 1 runtime error, 2 usage error; every error is one "taskspy: ..." line on stderr. */
#include <errno.h>
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/folded_input.h"
#include "cli/option_table.h"
#include "cli/output_file.h"
#include "cli/output_formats.h"
#include "cli/version.h"
#include "flamegraph/flamegraph.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#define OUTPUT_BUFFER (1u << 20)

struct flamegraph_args {
    const char *input;               /* path, or NULL/"-" for stdin */
    const char *output;
    struct svg_options svg;
};

#define AT(field) offsetof(struct flamegraph_args, field)

static const struct option_spec flamegraph_specs[] = {
    { .name = "output", .short_name = 'o', .arg = "FILE", .kind = OPTION_STRING, .offset = AT(output),
      .help = "where to write the SVG ('-' for stdout)" },
    { .name = "title", .arg = "TEXT", .kind = OPTION_STRING, .offset = AT(svg.title),
      .help = "title (default \"Flame Graph\")" },
    { .name = "subtitle", .arg = "TEXT", .kind = OPTION_STRING, .offset = AT(svg.subtitle),
      .help = "second title line" },
    { .name = "width", .arg = "PX", .kind = OPTION_WHOLE, .offset = AT(svg.width), .min = 100, .max = 1000000,
      .bad_value = "--width wants a whole number of pixels from 100 to 1000000, not '%s'",
      .help = "image width (default 1200)" },
    { .name = "height", .arg = "PX", .kind = OPTION_WHOLE, .offset = AT(svg.frame_height), .min = 1, .max = 1000,
      .bad_value = "--height wants a whole number of pixels from 1 to 1000, not '%s'",
      .help = "frame height (default 16)" },
    { .name = "minwidth", .arg = "PX", .kind = OPTION_REAL, .offset = AT(svg.min_width), .min = 0, .max = DBL_MAX,
      .bad_value = "--minwidth wants a number of pixels >= 0, not '%s'",
      .help = "leave out frames narrower than this (default 0.1)" },
    { .name = "colors", .arg = "PALETTE", .kind = OPTION_STRING, .offset = AT(svg.colors),
      .valid = svg_palette_known, .bad_value = "unknown palette '%s' for --colors",
      .help = "frame colours (default taskspy)", .help_list = svg_palette_names },
    { .name = "inverted", .kind = OPTION_FLAG, .offset = AT(svg.inverted), .help = "icicle graph: roots at the top" },
    { .name = "reverse", .kind = OPTION_FLAG, .offset = AT(svg.reverse), .help = "merge stacks leaf first" },
    { .name = "countname", .arg = "NAME", .kind = OPTION_STRING, .offset = AT(svg.count_name),
      .help = "what a count is (default \"samples\")" },
    { .name = "help", .short_name = 'h', .kind = OPTION_HELP, .help = "this help" },
};

static const struct option_table flamegraph_table = {
    .specs = flamegraph_specs, .n = sizeof(flamegraph_specs) / sizeof(flamegraph_specs[0]),
};

static const struct option_command flamegraph_cmd = {
    .name = "flamegraph",
    .usage = "usage: taskspy flamegraph [FOLDED|-] -o FILE.svg [options]\n"
             "Render folded stacks (taskspy, perf, stackcollapse, inferno, py-spy; '-' or none: stdin) as an\n"
             "interactive SVG flame graph, or convert them: FILE.speedscope.json, FILE.pb.gz (pprof), FILE.folded.\n"
             "\n",
    .table = &flamegraph_table,
};

static int usage_error(const char *message)
{
    return option_command_usage_error(&flamegraph_cmd, message);
}

/* Returns 0, or an exit status (EXIT_USAGE; or -1 meaning --help was printed, exit 0). */
static int parse_args(int argc, char **argv, struct flamegraph_args *a)
{
    memset(a, 0, sizeof(*a));
    svg_options_init(&a->svg);
    char err[512];
    int operands = argc;
    enum option_parse_result rc = option_command_parse(&flamegraph_cmd, a, argc, argv, &operands);
    if (rc != OPTIONS_OK)
        return rc == OPTIONS_HELP ? -1 : EXIT_USAGE;
    if (operands < argc)
        a->input = argv[operands++];
    if (operands < argc) {
        snprintf(err, sizeof(err), "unexpected argument '%s': give one folded file", argv[operands]);
        return usage_error(err);
    }
    if (!a->output)
        return usage_error("no output: give -o FILE.svg");
    enum output_format format;
    if (output_format_of_path(a->output, &format) == 0 && format == FORMAT_TRACE) {
        snprintf(err, sizeof(err), "cannot write %s: a Chrome trace needs the times of polls and samples, which a "
                 "folded file does not have (taskspy record -o FILE.trace.json writes one)", a->output);
        return usage_error(err);
    }
    return 0;
}

static int read_profile(struct profile *p, const char *input)
{
    switch (folded_input_read(p, input)) {
    case FOLDED_INPUT_OK:
        return 0;
    case FOLDED_INPUT_EMPTY:
        /* an empty recording: the outputs say so (an empty profile) rather than fail */
        fprintf(stderr, "taskspy: %s is empty: writing an empty profile\n", folded_input_name(input));
        return 0;
    default:
        return -1;
    }
}

int flamegraph_command(int argc, char **argv)
{
    struct flamegraph_args args;
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
    char *buffer = out.stream == stdout ? NULL : malloc(OUTPUT_BUFFER);
    if (buffer)
        setvbuf(out.stream, buffer, _IOFBF, OUTPUT_BUFFER);

    int status = EXIT_RUNTIME;
    struct profile *p = profile_new();
    if (!p) {
        fprintf(stderr, "taskspy: out of memory\n");
    } else if (read_profile(p, args.input) == 0) {
        profile_trim(p);                              /* all added: the writers reuse its tables' memory */
        enum output_format format = FORMAT_FLAMEGRAPH;   /* what any other name gets, "-" too */
        output_format_of_path(args.output, &format);
        struct export_info info = { .name = args.input ? args.input : "<stdin>", .exporter = "taskspy " TASKSPY_VERSION };
        struct output_content content = { .profile = p, .svg = &args.svg, .info = &info };
        if (output_write(format, &content, out.stream) != 0)
            fprintf(stderr, "taskspy: cannot write %s: %s\n", args.output, strerror(errno));
        else if (output_file_commit(&out, err, sizeof(err)) != 0)
            fprintf(stderr, "taskspy: %s\n", err);
        else
            status = 0;
    }
    if (status != 0)
        output_file_abort(&out);
    free(buffer);
    profile_free(p);
    return status;
}
