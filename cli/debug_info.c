/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debug_info.c: the settings of the shared debug-file lookup, the download on the status line, and the summary's
 * lines on objects without symbols and on debuginfod (see debug_info.h). */
#include "cli/debug_info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/debian_package.h"

/* elf/'s download callback: the status line (on a terminal). */
static void show_download(void *ctx, const char *object, uint64_t bytes, uint64_t total)
{
    status_line_show_download(ctx, object, bytes, total);
}

int debug_info_init(struct debug_info *d, struct status_line *status)
{
    memset(d, 0, sizeof(*d));
    /* as perf and gdb: debuginfod is asked when DEBUGINFOD_URLS names a server (libdebuginfod reads it, and
     * DEBUGINFOD_CACHE_PATH and DEBUGINFOD_TIMEOUT, itself); a server that does not answer is given up after
     * DEBUGINFOD_TIMEOUT */
    const char *urls = getenv("DEBUGINFOD_URLS");
    /* libdebuginfod's own default; 0 waits as long as the server takes */
    const char *timeout = getenv("DEBUGINFOD_TIMEOUT");
    long wait_limit_s = timeout ? atol(timeout) : 90;
    struct debug_file_settings settings = {
        .debuginfod = urls && urls[strspn(urls, " \t")] != '\0', .on_progress = show_download, .progress_ctx = status,
        .wait_limit_s = wait_limit_s > 0 && wait_limit_s < 86400 ? (unsigned)wait_limit_s : 0,
    };
    d->files = debug_files_new(&settings);
    return d->files ? 0 : -1;
}

void debug_info_free(struct debug_info *d)
{
    debug_files_free(d->files);
    vec_free(&d->objects);
    free(d->lines);
    d->files = NULL;
    d->lines = NULL;
}

uint32_t debug_info_object(struct debug_info *d, const char *object)
{
    for (size_t i = 0; i < d->objects.n; i++)
        if (d->objects.v[i].object == object)
            return (uint32_t)i;
    struct unsymbolized_object *o = d->objects.n < DEBUG_INFO_NO_OBJECT ? vec_push(&d->objects) : NULL;
    if (!o)
        return DEBUG_INFO_NO_OBJECT;
    o->object = object;
    return (uint32_t)(d->objects.n - 1);
}

/* Why a server gave no answer. */
static const char *no_answer_text(int error)
{
    return error == ETIME || error == ETIMEDOUT ? "timed out" : strerror(error);
}

/* What debuginfod did for one object, as "(...)" after its name in the line. */
static const char *debuginfod_answer(const struct debug_file_result *r, char *buf, size_t len)
{
    switch (r->debuginfod) {
    case DEBUGINFOD_OFF: return "DEBUGINFOD_URLS unset";
    case DEBUGINFOD_NOT_ASKED: return r->build_id_path[0] ? "not asked" : "not asked: no build id";
    case DEBUGINFOD_FOUND: return "fetched";
    case DEBUGINFOD_NOT_FOUND: return "not on the servers";
    case DEBUGINFOD_NO_ANSWER: break;
    }
    snprintf(buf, len, "no answer: %s", no_answer_text(r->debuginfod_error));
    return buf;
}

/* What would fix it: the Debian package's -dbgsym, or a debuginfod server, or the build-id place. */
static void print_fix(FILE *out, const struct debug_file_result *r, const char *build_id_path, const char *package)
{
    bool no_servers = r->debuginfod == DEBUGINFOD_OFF;
    if (package)
        fprintf(out, "; install %s-dbgsym from Debian's debug archive%s", package,
                no_servers ? " or set DEBUGINFOD_URLS=https://debuginfod.debian.net" : "");
    else if (no_servers)
        fprintf(out, "; set DEBUGINFOD_URLS to a debuginfod server that has its debug file%s%s",
                build_id_path[0] ? ", or put the file at " : "", build_id_path);
    else if (build_id_path[0])
        fprintf(out, "; put its debug file at %s", build_id_path);
}

/* A path under root as the target sees it. */
static const char *in_target(const char *path, const char *root)
{
    size_t n = strlen(root);
    return n && strncmp(path, root, n) == 0 ? path + n : path;
}

void debug_info_print_object(FILE *out, const struct sym_object_report *r, double percent, const char *package)
{
    const struct debug_file_result *df = r->debug_file;
    const char *slash = strrchr(r->path, '/');
    const char *build_id_path = in_target(df->build_id_path, r->root);
    char answer[160];
    fprintf(out, "taskspy: no symbols for %s (%.1f%% of samples; its frames show as [%s]%s): ", r->path, percent,
            slash ? slash + 1 : r->path, r->dynamic_symbols ? " or by its exported symbols" : "");
    if (df->path[0]) {
        fprintf(out, "its debug file %s has none", df->source == DEBUG_FILE_DEBUGINFOD ? df->path
                                                                                        : in_target(df->path, r->root));
    } else {
        fprintf(out, "tried ");
        if (build_id_path[0])
            fprintf(out, "%s", build_id_path);
        else
            fprintf(out, "no build id");
        if (df->debuglink[0])
            fprintf(out, ", .gnu_debuglink %s (beside it, .debug/, /usr/lib/debug)", df->debuglink);
        else
            fprintf(out, ", no .gnu_debuglink");
        fprintf(out, ", debuginfod (%s)", debuginfod_answer(df, answer, sizeof(answer)));
        if (df->refused)
            fprintf(out, "; a debug file of another build was refused");
    }
    print_fix(out, df, build_id_path, package);
    fprintf(out, "\n");
}

void debug_info_print_debuginfod(FILE *out, const struct debug_files_stats *st)
{
    if (!st->asked)
        return;
    fprintf(out, "taskspy: debuginfod: asked for the debug files of %u object%s: %u fetched, %u not on the servers, "
                 "%u without an answer", st->asked, st->asked == 1 ? "" : "s", st->found, st->not_found, st->no_answer);
    if (st->no_answer)
        fprintf(out, " (%s for %s; each asked once, their frames have no names)", no_answer_text(st->first_error),
                st->first_failed);
    fprintf(out, "\n");
}

static int by_samples(const void *a, const void *b)
{
    const struct unsymbolized_object *x = a, *y = b;
    return x->samples == y->samples ? 0 : x->samples > y->samples ? -1 : 1;
}

void debug_info_settle(struct debug_info *d, struct symbolizer *s)
{
    size_t size;
    FILE *out = open_memstream(&d->lines, &size);
    if (!out)
        return;                        /* out of memory: no lines */
    /* the most samples first, in a copy: the counters' indices stay as they were given out */
    struct unsymbolized_object *sorted = d->objects.n ? malloc(d->objects.n * sizeof(*sorted)) : NULL;
    size_t n = sorted ? d->objects.n : 0;
    if (n) {
        memcpy(sorted, d->objects.v, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), by_samples);
    }
    for (size_t i = 0; i < n; i++) {
        const struct unsymbolized_object *o = &sorted[i];
        struct sym_object_report r;
        if (!o->samples || !symbolize_object_report(s, o->object, &r))
            continue;
        char package[256];
        bool packaged = debian_package_of(r.root, r.path, package, sizeof(package));
        debug_info_print_object(out, &r, 100.0 * (double)o->samples / (double)d->samples, packaged ? package : NULL);
    }
    free(sorted);
    struct debug_files_stats st;
    debug_files_stats(d->files, &st);
    debug_info_print_debuginfod(out, &st);
    if (fclose(out) != 0) {
        free(d->lines);
        d->lines = NULL;
    }
}

void debug_info_print(FILE *out, const struct debug_info *d)
{
    if (d->lines)
        fputs(d->lines, out);
}
