/* taskspy.c: the program entry point: dispatches to the record and flamegraph subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static void usage(FILE *out)
{
    fputs("usage: taskspy record -p PID [-d SECS] [options] -o FILE\n"
          "       taskspy record [-d SECS] [options] -o FILE -- CMD ARGS...\n"
          "       taskspy flamegraph [FOLDED|-] -o FILE.svg [svg options]\n"
          "Run 'taskspy record --help' or 'taskspy flamegraph --help' for the options.\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "record") == 0)
        return record_command(argc - 1, argv + 1);
    if (strcmp(argv[1], "flamegraph") == 0)
        return flamegraph_command(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("taskspy 0.1");
        return 0;
    }
    fprintf(stderr, "taskspy: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
