/* SPDX-License-Identifier: GPL-3.0-or-later */
/* taskspy.c: the program entry point: dispatches to the subcommands of a table that also makes the usage
 * text; --help / -h print it to stdout, --version the version. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/version.h"

struct command {
    const char *name;
    const char *synopsis;            /* usage lines after "taskspy NAME", '\n'-separated */
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
    { "record", "-p PID [-d SECS] [options] -o FILE\n[-d SECS] [options] -o FILE -- CMD ARGS...", record_command },
    { "flamegraph", "[FOLDED|-] -o FILE.svg [svg options]", flamegraph_command },
    { "diff", "BEFORE AFTER -o FILE [-n]", diff_command },
    { "tasks", "-p PID [--json] [-v] [-o FILE]\n--core CORE [--exe PROGRAM] [--json] [-v] [-o FILE]", tasks_command },
    { "top", "-p PID [-i SECS] [-b [-n FRAMES] [--json]]", top_command },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    const char *lead = "usage:";
    for (size_t i = 0; i < N_COMMANDS; i++) {
        for (const char *line = commands[i].synopsis; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(out, "%-6s taskspy %s %.*s\n", lead, commands[i].name, (int)len, line);
            lead = "";
            line += len + (line[len] == '\n');
        }
    }
    fputs("       taskspy --help | --version\n", out);
    fputs("Run 'taskspy COMMAND --help' for a command's options (", out);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "%s%s", i ? ", " : "", commands[i].name);
    fputs(").\n", out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("taskspy " TASKSPY_VERSION);
        return 0;
    }
    fprintf(stderr, "taskspy: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
