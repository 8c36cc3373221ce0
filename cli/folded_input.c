/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_input.c: a folded-stack file of the command line into a profile (flamegraph/'s reader), its
 * malformed lines and failures printed, one line each. */
#include "cli/folded_input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static bool is_stdin(const char *path)
{
    return !path || strcmp(path, "-") == 0;
}

const char *folded_input_name(const char *path)
{
    return is_stdin(path) ? "<stdin>" : path;
}

/* A malformed line of the input, as the folded reader reports it. */
static void print_warning(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "%s\n", message);
}

enum folded_input_result folded_input_read(struct profile *p, const char *path)
{
    bool from_stdin = is_stdin(path);
    const char *name = folded_input_name(path);
    FILE *in = from_stdin ? stdin : fopen(path, "r");
    if (!in) {
        fprintf(stderr, "taskspy: cannot open %s: %s\n", name, strerror(errno));
        return FOLDED_INPUT_FAILED;
    }
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
        if (!from_stdin)
            fclose(in);
        return FOLDED_INPUT_EMPTY;
    }
    struct folded_read_report report;
    char err[512];
    const struct folded_warnings warnings = { .warn = print_warning };
    int rc = profile_read_folded(p, in, name, &warnings, &report, err, sizeof(err));
    if (!from_stdin)
        fclose(in);
    if (rc != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        return FOLDED_INPUT_FAILED;
    }
    if (report.skipped > 0)
        fprintf(stderr, "taskspy: %s: %llu of %llu lines malformed and skipped\n", name,
                (unsigned long long)report.skipped, (unsigned long long)report.lines);
    return FOLDED_INPUT_OK;
}
