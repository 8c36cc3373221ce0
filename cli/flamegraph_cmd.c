/* flamegraph_cmd.c: `taskspy flamegraph [FOLDED|-] -o FILE.svg [svg options]`: reads a folded-stack file
 * (taskspy's, perf's, stackcollapse's, inferno's, py-spy's) or stdin and writes an interactive SVG, or
 * converts it when the output's extension names another format (.speedscope.json, .pb.gz, .folded). The
 * output goes to a temporary file beside the output and is renamed into place only when complete. Exit
 * status: 0 done, 1 runtime error, 2 usage error; every error is one "taskspy: ..." line on stderr. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/output_formats.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/svg_internal.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#define OUTPUT_BUFFER (1u << 20)

enum flamegraph_option {
    OPT_TITLE = 256, OPT_SUBTITLE, OPT_WIDTH, OPT_HEIGHT, OPT_MINWIDTH, OPT_COLORS, OPT_INVERTED,
    OPT_REVERSE, OPT_COUNTNAME,
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: taskspy flamegraph [FOLDED|-] -o FILE.svg [options]\n"
            "Render folded stacks (taskspy, perf, stackcollapse, inferno, py-spy; '-' or none: stdin) as an\n"
            "interactive SVG flame graph, or convert them: FILE.speedscope.json, FILE.pb.gz (pprof), FILE.folded.\n"
            "  -o, --output FILE   where to write the SVG ('-' for stdout)\n"
            "  --title TEXT        title (default \"Flame Graph\")\n"
            "  --subtitle TEXT     second title line\n"
            "  --width PX          image width (default 1200)\n"
            "  --height PX         frame height (default 16)\n"
            "  --minwidth PX       leave out frames narrower than this (default 0.1)\n"
            "  --colors PALETTE    %s (default taskspy)\n"
            "  --inverted          icicle graph: roots at the top\n"
            "  --reverse           merge stacks leaf first\n"
            "  --countname NAME    what a count is (default \"samples\")\n"
            "  -h, --help          this help\n",
            svg_palette_names());
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("taskspy: flamegraph: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see 'taskspy flamegraph --help')\n", stderr);
    return EXIT_USAGE;
}

static int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

struct flamegraph_args {
    const char *input;               /* path, or NULL/"-" for stdin */
    const char *output;
    struct svg_options svg;
};

/* Returns 0, or an exit status (EXIT_USAGE; or -1 meaning --help was printed, exit 0). */
static int parse_args(int argc, char **argv, struct flamegraph_args *a)
{
    static const struct option long_options[] = {
        { "output", required_argument, NULL, 'o' },      { "help", no_argument, NULL, 'h' },
        { "title", required_argument, NULL, OPT_TITLE }, { "subtitle", required_argument, NULL, OPT_SUBTITLE },
        { "width", required_argument, NULL, OPT_WIDTH }, { "height", required_argument, NULL, OPT_HEIGHT },
        { "minwidth", required_argument, NULL, OPT_MINWIDTH },
        { "colors", required_argument, NULL, OPT_COLORS },
        { "inverted", no_argument, NULL, OPT_INVERTED }, { "reverse", no_argument, NULL, OPT_REVERSE },
        { "countname", required_argument, NULL, OPT_COUNTNAME },
        { NULL, 0, NULL, 0 },
    };
    memset(a, 0, sizeof(*a));
    svg_options_init(&a->svg);
    opterr = 0;
    optind = 0;                      /* full reinitialisation of getopt (GNU) */
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 'h': usage(stdout); return -1;
        case OPT_TITLE: a->svg.title = optarg; break;
        case OPT_SUBTITLE: a->svg.subtitle = optarg; break;
        case OPT_WIDTH:
            if (parse_unsigned(optarg, 100, 1000000, &a->svg.width) != 0)
                return usage_error("--width wants a whole number of pixels from 100 to 1000000, not '%s'", optarg);
            break;
        case OPT_HEIGHT:
            if (parse_unsigned(optarg, 1, 1000, &a->svg.frame_height) != 0)
                return usage_error("--height wants a whole number of pixels from 1 to 1000, not '%s'", optarg);
            break;
        case OPT_MINWIDTH: {
            char *end = NULL;
            errno = 0;
            double v = strtod(optarg, &end);
            if (errno || end == optarg || *end != '\0' || !isfinite(v) || v < 0)
                return usage_error("--minwidth wants a number of pixels >= 0, not '%s'", optarg);
            a->svg.min_width = v;
            break;
        }
        case OPT_COLORS:
            if (!svg_palette_known(optarg))
                return usage_error("unknown palette '%s' for --colors", optarg);
            a->svg.colors = optarg;
            break;
        case OPT_INVERTED: a->svg.inverted = true; break;
        case OPT_REVERSE: a->svg.reverse = true; break;
        case OPT_COUNTNAME: a->svg.count_name = optarg; break;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        a->input = argv[optind++];
    if (optind < argc)
        return usage_error("unexpected argument '%s': give one folded file", argv[optind]);
    if (!a->output)
        return usage_error("%s", "no output: give -o FILE.svg");
    enum output_format format;
    if (output_format_of_path(a->output, &format) == 0 && format == FORMAT_TRACE)
        return usage_error("cannot write %s: a Chrome trace needs the times of polls and samples, which a folded "
                           "file does not have (taskspy record -o FILE.trace.json writes one)", a->output);
    return 0;
}

static int read_profile(struct profile *p, const char *input)
{
    bool from_stdin = !input || strcmp(input, "-") == 0;
    const char *name = from_stdin ? "<stdin>" : input;
    FILE *in = from_stdin ? stdin : fopen(input, "r");
    if (!in) {
        fprintf(stderr, "taskspy: cannot open %s: %s\n", name, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
        /* an empty recording: the outputs say so (an empty profile) rather than fail */
        fprintf(stderr, "taskspy: %s is empty: writing an empty profile\n", name);
        if (!from_stdin)
            fclose(in);
        return 0;
    }
    struct folded_read_report report;
    char err[512];
    int rc = profile_read_folded(p, in, name, stderr, &report, err, sizeof(err));
    if (!from_stdin)
        fclose(in);
    if (rc != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        return -1;
    }
    if (report.skipped > 0)
        fprintf(stderr, "taskspy: %s: %llu of %llu lines malformed and skipped\n", name,
                (unsigned long long)report.skipped, (unsigned long long)report.lines);
    return 0;
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
        enum output_format format = FORMAT_FLAMEGRAPH;   /* what any other name gets, "-" too */
        output_format_of_path(args.output, &format);
        struct export_info info = { .name = args.input ? args.input : "<stdin>", .exporter = "taskspy 0.1" };
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
