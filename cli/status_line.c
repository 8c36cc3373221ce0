/* SPDX-License-Identifier: GPL-3.0-or-later */
/* status_line.c: the in-place recording status of status_line.h: "\r", the text cut to the terminal's width
 * (a wrapped line could not be rewritten), then "clear to end of line". */
#include "cli/status_line.h"

#include <inttypes.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void status_line_init(struct status_line *sl, FILE *out)
{
    sl->out = out;
    sl->enabled = isatty(fileno(out)) == 1;
    sl->shown = false;
}

/* Columns of the terminal, or 80 when it does not say. */
static size_t terminal_width(FILE *out)
{
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/* Show text (len bytes of it, as snprintf counted) in place of the status. */
static void put(struct status_line *sl, const char *text, int len, size_t text_size)
{
    size_t width = terminal_width(sl->out);
    size_t shown = len < 0 ? 0 : (size_t)len < text_size ? (size_t)len : text_size - 1;
    if (shown > width - 1)
        shown = width - 1;
    fprintf(sl->out, "\r%.*s\033[K", (int)shown, text);
    fflush(sl->out);
    sl->shown = true;
}

void status_line_show(struct status_line *sl, const struct sampler_progress *p)
{
    if (!sl->enabled)
        return;
    char duration[32] = "";
    if (p->duration_s > 0)
        snprintf(duration, sizeof(duration), " / %.1f s", p->duration_s);
    char text[256], polls[40] = "";
    if (p->counts_polls)
        snprintf(polls, sizeof(polls), ", %" PRIu64 " polls", p->polls);
    int len = snprintf(text, sizeof(text), "taskspy: recording %.1f s%s, %" PRIu64 " samples, %" PRIu64 " lost%s, %" PRIu64
                       " tasks", p->elapsed_s, duration, p->samples, p->lost, polls, p->tasks_seen);
    put(sl, text, len, sizeof(text));
}

void status_line_show_download(struct status_line *sl, const char *object, uint64_t bytes, uint64_t total)
{
    if (!sl->enabled)
        return;
    const char *slash = strrchr(object, '/');
    char text[400], amount[64] = "waiting for the server";
    if (total)
        snprintf(amount, sizeof(amount), "%.1f of %.1f MB", bytes / 1e6, total / 1e6);
    else if (bytes)
        snprintf(amount, sizeof(amount), "%.1f MB", bytes / 1e6);
    int len = snprintf(text, sizeof(text), "taskspy: debuginfod: downloading the debug file of %.200s: %s",
                       slash ? slash + 1 : object, amount);
    put(sl, text, len, sizeof(text));
}

void status_line_clear(struct status_line *sl)
{
    if (!sl->shown)
        return;
    fputs("\r\033[K", sl->out);
    fflush(sl->out);
    sl->shown = false;
}
