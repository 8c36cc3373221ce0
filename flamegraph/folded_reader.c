/* folded_reader.c: reads folded stacks ("root;frame;...;leaf COUNT", as written by taskspy, the
 * stackcollapse scripts, perf, inferno and py-spy) into a profile, merging equal prefixes. Also accepts
 * perf report's count-first form ("COUNT root;...;leaf"), CRLF endings and '#' comment lines. Malformed
 * lines are reported with their line number and skipped; memory is bounded by the longest accepted line. */
#include "flamegraph/flamegraph.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FOLDED_MAX_LINE (8u << 20)       /* longer lines are reported and skipped */
#define FOLDED_READ_CHUNK (64u << 10)
#define FOLDED_MAX_WARNINGS 100           /* malformed lines reported one by one; the rest summed up */

/* Block reader returning lines without their '\n'; bounded by FOLDED_MAX_LINE. */
struct line_reader {
    FILE *in;
    char *buf;
    size_t cap, start, end;
    bool eof;
};

enum line_status { LINE_OK, LINE_TOO_LONG, LINE_EOF, LINE_ERROR };

static enum line_status next_line(struct line_reader *r, char **line, size_t *len)
{
    bool discarding = false;             /* inside a line already known to be too long */
    size_t scanned = r->start;           /* bytes before this hold no '\n' */
    for (;;) {
        char *nl = memchr(r->buf + scanned, '\n', r->end - scanned);
        if (nl) {
            *line = r->buf + r->start;
            *len = (size_t)(nl - *line);
            r->start = (size_t)(nl - r->buf) + 1;
            return discarding ? LINE_TOO_LONG : LINE_OK;
        }
        if (r->eof) {
            if (r->start == r->end)
                return discarding ? LINE_TOO_LONG : LINE_EOF;
            *line = r->buf + r->start;
            *len = r->end - r->start;
            r->start = r->end;
            return discarding ? LINE_TOO_LONG : LINE_OK;
        }
        /* make room: move the partial line to the front, grow up to the limit, else drop it */
        if (r->start > 0) {
            memmove(r->buf, r->buf + r->start, r->end - r->start);
            r->end -= r->start;
            r->start = 0;
        }
        if (r->end == r->cap) {
            if (r->cap < FOLDED_MAX_LINE) {
                size_t cap = r->cap * 2 > FOLDED_MAX_LINE ? FOLDED_MAX_LINE : r->cap * 2;
                char *grown = realloc(r->buf, cap + 1);
                if (!grown)
                    return LINE_ERROR;
                r->buf = grown;
                r->cap = cap;
            } else {
                discarding = true;
                r->end = 0;
            }
        }
        scanned = r->end;
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->in);
        r->end += got;
        if (got == 0) {
            if (ferror(r->in))
                return LINE_ERROR;
            r->eof = true;
        }
    }
}

/* State of one read: the profile, where to report, the frame id buffer reused across lines. */
struct folded_parse {
    struct profile *p;
    const char *name;
    FILE *warn;
    uint64_t line_no;
    uint64_t warnings;
    uint32_t *ids;                       /* frame ids of the last stack */
    uint32_t *ends;                      /* where each of its frames ends in prev */
    size_t ids_cap;
    char *prev;                          /* the last stack's text: a shared prefix is not interned again */
    size_t prev_len, prev_cap, prev_frames;
    struct folded_read_report *report;
    uint64_t total;                      /* the profile's total as this read goes (checked for overflow) */
};

__attribute__((format(printf, 2, 3)))
static void malformed(struct folded_parse *fp, const char *fmt, ...)
{
    fp->report->skipped++;
    if (!fp->warn || ++fp->warnings > FOLDED_MAX_WARNINGS)
        return;
    fprintf(fp->warn, "%s:%llu: ", fp->name, (unsigned long long)fp->line_no);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(fp->warn, fmt, ap);
    va_end(ap);
    fputs(", line skipped\n", fp->warn);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

enum count_parse { COUNT_OK, COUNT_NOT_NUMBER, COUNT_NEGATIVE, COUNT_FRACTION, COUNT_TOO_LARGE };

static enum count_parse parse_count(const char *s, size_t len, uint64_t *count)
{
    if (len == 0)
        return COUNT_NOT_NUMBER;
    size_t i = 0;
    bool negative = s[0] == '-';
    if (s[0] == '+' || s[0] == '-')
        i++;
    if (i == len || !is_digit(s[i]))
        return COUNT_NOT_NUMBER;
    uint64_t v = 0;
    bool overflow = false;
    for (; i < len && is_digit(s[i]); i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            v = v * 10 + d;
    }
    bool zero_fraction = true;
    if (i < len && s[i] == '.') {         /* "12.0" is a whole count, "12.5" is not */
        for (i++; i < len && is_digit(s[i]); i++)
            if (s[i] != '0')
                zero_fraction = false;
    }
    if (i != len)
        return COUNT_NOT_NUMBER;
    if (negative && (v != 0 || !zero_fraction))
        return COUNT_NEGATIVE;
    if (!zero_fraction)
        return COUNT_FRACTION;
    if (overflow)
        return COUNT_TOO_LARGE;
    *count = v;
    return COUNT_OK;
}

static const char *count_problem(enum count_parse c)
{
    switch (c) {
    case COUNT_NEGATIVE: return "negative count";
    case COUNT_FRACTION: return "count is not a whole number";
    case COUNT_TOO_LARGE: return "count too large";
    default: return "count is not a number";
    }
}

static int remember_stack(struct folded_parse *fp, const char *stack, size_t len, size_t n)
{
    if (len > fp->prev_cap) {
        char *grown = realloc(fp->prev, len);
        if (!grown)
            return -1;
        fp->prev = grown;
        fp->prev_cap = len;
    }
    memcpy(fp->prev, stack, len);
    fp->prev_len = len;
    fp->prev_frames = n;
    return 0;
}

/* Split stack (len bytes) at ';' into interned frame ids in fp->ids. Frames in the prefix shared with the
 * last stack keep their ids (folded files are usually sorted, so most frames are). Returns the number of
 * frames, 0 after reporting a malformed stack, or -1 on allocation failure. */
static long intern_frames(struct folded_parse *fp, const char *stack, size_t len)
{
    size_t common = 0;
    size_t limit = len < fp->prev_len ? len : fp->prev_len;
    while (common < limit && stack[common] == fp->prev[common])
        common++;
    size_t n = 0;
    while (n < fp->prev_frames && fp->ends[n] < common)  /* frame and its ';' identical */
        n++;
    size_t from = n ? fp->ends[n - 1] + 1 : 0;
    fp->prev_len = 0;                                   /* ids are rewritten from here on */
    fp->prev_frames = 0;
    for (size_t i = from; i <= len; i++) {
        if (i < len && stack[i] != ';')
            continue;
        if (i == from) {
            malformed(fp, "empty frame name (frame %zu)", n + 1);
            return 0;
        }
        if (n == fp->ids_cap) {
            size_t cap = fp->ids_cap ? fp->ids_cap * 2 : 256;
            uint32_t *ids = realloc(fp->ids, cap * sizeof(*ids));
            if (ids)
                fp->ids = ids;
            uint32_t *ends = realloc(fp->ends, cap * sizeof(*ends));
            if (ends)
                fp->ends = ends;
            if (!ids || !ends)
                return -1;
            fp->ids_cap = cap;
        }
        uint32_t id = profile_intern(fp->p, stack + from, i - from);
        if (id == PROFILE_NO_FRAME)
            return -1;
        fp->ids[n] = id;
        fp->ends[n++] = (uint32_t)i;
        from = i + 1;
    }
    if (remember_stack(fp, stack, len, n) != 0)
        return -1;
    return (long)n;
}

/* Parse and add one line. Returns 0 (added, blank or skipped) or -1 on allocation failure. */
static int parse_line(struct folded_parse *fp, char *line, size_t len)
{
    while (len > 0 && is_space(line[len - 1]))
        len--;
    while (len > 0 && is_space(line[0])) {
        line++;
        len--;
    }
    if (len == 0 || line[0] == '#')
        return 0;
    if (memchr(line, '\0', len)) {
        malformed(fp, "NUL byte in line");
        return 0;
    }
    const char *stack = line;
    size_t stack_len = 0;
    uint64_t count = 0;
    size_t last_space = len;
    while (last_space > 0 && !is_space(line[last_space - 1]))
        last_space--;
    enum count_parse trailing = last_space > 0
        ? parse_count(line + last_space, len - last_space, &count) : COUNT_NOT_NUMBER;
    if (trailing == COUNT_OK) {
        stack_len = last_space;
        while (stack_len > 0 && is_space(stack[stack_len - 1]))
            stack_len--;
    } else {
        /* perf report -g folded,0,caller,count: "COUNT stack" */
        size_t first_space = 0;
        while (first_space < len && !is_space(line[first_space]))
            first_space++;
        if (first_space < len && trailing == COUNT_NOT_NUMBER &&
            parse_count(line, first_space, &count) == COUNT_OK) {
            stack = line + first_space;
            stack_len = len - first_space;
            while (stack_len > 0 && is_space(stack[0])) {
                stack++;
                stack_len--;
            }
            if (stack_len > 0 && stack[0] == '#') {
                /* written back as "#... COUNT" it would read as a comment: refuse it here */
                malformed(fp, "stack begins with '#'");
                return 0;
            }
        } else if (last_space == 0) {
            malformed(fp, "no count");
            return 0;
        } else {
            malformed(fp, "%s", count_problem(trailing));
            return 0;
        }
    }
    if (stack_len == 0) {
        malformed(fp, "no frames");
        return 0;
    }
    if (count > UINT64_MAX - fp->total) {
        malformed(fp, "count too large (total overflows)");
        return 0;
    }
    long n = intern_frames(fp, stack, stack_len);
    if (n <= 0)
        return (int)n;
    if (count > 0 && profile_add_ids(fp->p, fp->ids, (size_t)n, count) != 0)
        return -1;
    fp->total += count;
    fp->report->stacks++;
    return 0;
}

int profile_read_folded(struct profile *p, FILE *in, const char *name, FILE *warn,
                        struct folded_read_report *report, char *err, size_t errlen)
{
    struct folded_read_report local_report;
    if (!report)
        report = &local_report;
    memset(report, 0, sizeof(*report));
    if (!name)
        name = "<input>";
    struct line_reader r = { .in = in, .cap = FOLDED_READ_CHUNK };
    r.buf = malloc(r.cap + 1);
    struct folded_parse fp = { .p = p, .name = name, .warn = warn, .report = report, .total = profile_total(p) };
    int rc = -1;
    if (!r.buf) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    for (;;) {
        char *line = NULL;
        size_t len = 0;
        enum line_status st = next_line(&r, &line, &len);
        if (st == LINE_EOF)
            break;
        if (st == LINE_ERROR) {
            snprintf(err, errlen, "%s: read error after line %llu: %s", name,
                     (unsigned long long)report->lines, strerror(errno ? errno : EIO));
            goto done;
        }
        fp.line_no = ++report->lines;
        if (st == LINE_TOO_LONG) {
            malformed(&fp, "line longer than %u bytes", FOLDED_MAX_LINE);
            continue;
        }
        if (parse_line(&fp, line, len) != 0) {
            snprintf(err, errlen, "%s:%llu: out of memory", name, (unsigned long long)fp.line_no);
            goto done;
        }
    }
    if (warn && fp.warnings > FOLDED_MAX_WARNINGS)
        fprintf(warn, "%s: %llu more malformed lines skipped\n", name,
                (unsigned long long)(fp.warnings - FOLDED_MAX_WARNINGS));
    if (report->stacks == 0) {
        snprintf(err, errlen, "%s: no valid folded stack lines (%llu lines read, %llu malformed)", name,
                 (unsigned long long)report->lines, (unsigned long long)report->skipped);
        goto done;
    }
    rc = 0;
done:
    free(r.buf);
    free(fp.ids);
    free(fp.ends);
    free(fp.prev);
    return rc;
}
