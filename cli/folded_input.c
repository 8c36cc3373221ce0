/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_input.c: a folded-stack file of the command line into a profile (flamegraph/'s reader), its
 * malformed lines and failures printed, one line each. The reader maps a regular file; a file that shrinks
 * while it is read (rewritten meanwhile) is refused with one line, not a crash (input_guard). */
#include "cli/folded_input.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Should the input shrink while the reader maps it, touching a page past its new end raises SIGBUS. The
 * handler maps a zero page there (the read goes on, finding NUL bytes) and the read is refused as a whole.
 * A signal handler reaches its state only through static storage: this one, set while a read runs. */
struct input_guard {
    volatile uintptr_t start, end;       /* the input's mapping, while there is one */
    uintptr_t page;
    volatile sig_atomic_t shrank;
    struct sigaction before;             /* SIGBUS's action before the read */
};
static struct input_guard guard;

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)context;
    uintptr_t at = (uintptr_t)info->si_addr;
    if (info->si_code == BUS_ADRERR && at >= guard.start && at < guard.end &&
        mmap((void *)(at & ~(guard.page - 1)), guard.page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) != MAP_FAILED) {
        guard.shrank = 1;
        return;
    }
    /* not the input's: the action before, when the access is made again */
    (void)sigaction(SIGBUS, &guard.before, NULL);
}

static void input_mapped(void *ctx, const void *start, size_t len)
{
    (void)ctx;
    guard.start = (uintptr_t)start;
    guard.end = (uintptr_t)start + len;
}

/* Catch SIGBUS while the reader runs; returns whether it is caught (else a shrinking file kills the process,
 * as it would any reader of a mapping). */
static bool guard_begin(void)
{
    long page = sysconf(_SC_PAGESIZE);
    struct sigaction catch = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
    sigemptyset(&catch.sa_mask);
    memset(&guard, 0, sizeof(guard));
    guard.page = page > 0 ? (uintptr_t)page : 4096;
    return sigaction(SIGBUS, &catch, &guard.before) == 0;
}

static void guard_end(bool caught)
{
    guard.start = guard.end = 0;
    if (caught && sigaction(SIGBUS, &guard.before, NULL) != 0)
        signal(SIGBUS, SIG_DFL);
}

static bool is_stdin(const char *path)
{
    return !path || strcmp(path, "-") == 0;
}

const char *folded_input_name(const char *path)
{
    return is_stdin(path) ? "<stdin>" : path;
}

/* A malformed line of the input, as the folded reader reports it (not once the input shrank: its lines are
 * then zero bytes, and the read is refused). */
static void print_warning(void *ctx, const char *message)
{
    (void)ctx;
    if (!guard.shrank)
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
    const struct folded_warnings warnings = { .warn = print_warning, .mapped = input_mapped };
    bool caught = guard_begin();
    int rc = profile_read_folded(p, in, name, &warnings, &report, err, sizeof(err));
    guard_end(caught);
    if (!from_stdin)
        fclose(in);
    if (guard.shrank) {
        fprintf(stderr, "taskspy: %s shrank while it was being read (written to meanwhile?): nothing done\n", name);
        return FOLDED_INPUT_FAILED;
    }
    if (rc != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        return FOLDED_INPUT_FAILED;
    }
    if (report.skipped > 0)
        fprintf(stderr, "taskspy: %s: %llu of %llu lines malformed and skipped\n", name,
                (unsigned long long)report.skipped, (unsigned long long)report.lines);
    return FOLDED_INPUT_OK;
}
