/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_reader.c: reads folded stacks ("root;frame;...;leaf COUNT", as written by taskspy, the
 * stackcollapse scripts, perf, inferno and py-spy) into a profile, merging equal prefixes. Also accepts
 * perf report's count-first form ("COUNT root;...;leaf"), CRLF endings and '#' comment lines. Malformed
 * lines are reported with their line number and skipped; memory is bounded by a few times the longest
 * accepted line (a read chunk's lines are handed on together with the chunk, which is reused once they are in
 * the profile). A regular file is read through a mapping instead, its pages released behind the reading.
 * Big inputs are read on two threads: lines split and their names hashed on this one, names interned and the
 * stack tree built on another; a batch's names are numbered (its distinct ones found) on whichever of the two
 * is ahead, and the one ahead spends what it would wait on the other's page faults: this one faults in the
 * node memory the tree fills next, the tree thread maps the input pages this one reads next. */
#include "flamegraph/profile_internal.h"

#include "base/handoff.h"
#include "base/intern_table.h"
#include "base/vec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FOLDED_MAX_LINE (8u << 20)       /* longer lines are reported and skipped */
#define FOLDED_READ_CHUNK (256u << 10)    /* a batch of lines: big enough that handing batches to
                                           the tree thread (a wakeup each) costs little */
/* A regular file bigger than a chunk is read through a mapping of it: its lines are used where they are in
 * the page cache, not copied into the chunk (that copy was a sixth of the reading thread's time). The pages
 * of batches already in the profile are unmapped every FOLDED_MAP_RELEASE bytes (they stay cached), so the
 * file does not all count in this process's memory. */
#define FOLDED_MAP_RELEASE (2u << 20)
/* The tree thread, when it has no batch to add, maps the input's pages the reading thread reads next (the
 * faults of a 73 MB input cost that thread ~10 ms), MAP_AHEAD_STEP bytes at a time, at most MAP_AHEAD bytes past
 * where its batch begins. */
#define MAP_AHEAD (2u << 20)
#define MAP_AHEAD_STEP (256u << 10)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22            /* Linux 5.14; older headers lack it */
#endif
#define FOLDED_MAX_WARNINGS 100           /* malformed lines reported one by one; the rest summed up */
/* A file's size and the first batch's frames per byte give a first guess of the profile's size, so its
 * tables are made big enough once instead of growing step by step: stacks in random order that share
 * prefixes with others make a node per 2 frames of the file (shallow stacks of many names) to 4 (real
 * programs' deep stacks, whose callers repeat: gen_folded.py --real) and a name per ~8 nodes; the guess takes
 * 3. In sorted input a node is at most a frame not shared with the line before, which the batch counts too.
 * Counting frames, not bytes, keeps long names (C++, Rust) from doubling the guess: a guess too big costs the
 * zeroing of table pages that random lookups all touch (dear on a VM, whose memory left free a while is
 * given back to its host and mapped again at the first touch), one too small a rehash. */
#define FOLDED_FRAMES_PER_NODE 3
#define FOLDED_NODES_PER_NAME 8
/* At most this many nodes guessed (~12 million frames): a big file of repeated, unmerged lines would otherwise
 * get huge tables whose few used slots are spread over all their pages. */
#define FOLDED_MAX_GUESS_NODES (4u << 20)

/* The pages of a mapped input: unmapped behind the batches in the profile, mapped ahead of the reading. Whoever
 * adds the batches to the profile (the tree thread while there is one) owns them. */
struct input_pages {
    char *buf;                           /* the mapping (NULL: the input is read, not mapped) */
    size_t size;
    size_t page;                         /* the page size */
    size_t released;                     /* the pages before this are unmapped (page aligned) */
    size_t mapped_to;                    /* mapped ahead up to here */
    bool map_ahead_off;                  /* the kernel cannot (MADV_POPULATE_READ is Linux 5.14's) */
};

/* Block reader returning lines without their '\n'; bounded by FOLDED_MAX_LINE. A line points into the
 * buffer, valid until the next refill: the lines taken since are handed on (as a batch) before it. */
struct line_reader {
    FILE *in;
    char *buf;                           /* alloc bytes, cap of them for lines (one more for a NUL) */
    size_t alloc, cap, start, end;
    size_t scanned;                      /* bytes from start up to here hold no '\n' */
    bool eof;
    bool discarding;                     /* inside a line already known to be too long */
    size_t batch_from;                   /* mapped: where the batch being filled begins */
    struct input_pages pages;            /* a mapped input's pages (buf then the whole file, mapped read
                                            only: never refilled); pages.buf NULL: read chunk by chunk */
};

static bool input_mapped(const struct line_reader *r)
{
    return r->pages.buf != NULL;
}

enum line_status { LINE_OK, LINE_TOO_LONG, LINE_EOF, LINE_ERROR, LINE_REFILL };

/* The next line in the buffer; LINE_REFILL when it holds no whole line and refill() must read more. */
static enum line_status next_line(struct line_reader *r, char **line, size_t *len)
{
    char *nl = memchr(r->buf + r->scanned, '\n', r->end - r->scanned);
    if (!nl && !r->eof) {
        r->scanned = r->end;
        return LINE_REFILL;
    }
    bool discarded = r->discarding;
    r->discarding = false;
    if (nl) {
        *line = r->buf + r->start;
        *len = (size_t)(nl - *line);
        r->start = r->scanned = (size_t)(nl - r->buf) + 1;
        return discarded ? LINE_TOO_LONG : LINE_OK;
    }
    if (r->start == r->end)
        return discarded ? LINE_TOO_LONG : LINE_EOF;
    *line = r->buf + r->start;
    *len = r->end - r->start;
    r->start = r->scanned = r->end;
    return discarded ? LINE_TOO_LONG : LINE_OK;
}

/* Move the partial line to the front, grow up to the limit (else drop the line's bytes so far), read. */
static enum line_status refill(struct line_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scanned -= r->start;
        r->start = 0;
    }
    if (r->end == r->cap) {
        if (r->cap < FOLDED_MAX_LINE) {
            size_t cap = r->cap * 2 > FOLDED_MAX_LINE ? FOLDED_MAX_LINE : r->cap * 2;
            if (vec_reserve_raw((void **)&r->buf, &r->alloc, 1, cap + 1) != 0)
                return LINE_ERROR;
            r->cap = cap;
        } else {
            r->discarding = true;
            r->end = r->scanned = 0;
        }
    }
    size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->in);
    r->end += got;
    if (got == 0) {
        if (ferror(r->in))
            return LINE_ERROR;
        r->eof = true;
    }
    return LINE_OK;
}

/* Stacks parsed but not yet in the profile: their frames are interned and their paths added together
 * (profile_intern_batch, profile_add_batch), so the cache misses of many lookups overlap. Frames a stack
 * shares with the stack before it (sorted input: most) take that stack's ids instead of being interned, and
 * each distinct name of the batch is interned once (in a batch of random-order stacks ~1 in 6 is new). */
struct batch {
    /* per frame of every stack (these, the per frame to intern and the per distinct name ones: cap_frames
     * each) */
    uint32_t *ids;
    uint32_t *ends;                      /* where the frame ends in its stack's text (its ';' or the end) */
    size_t n_frames, cap_frames;
    /* per frame to intern */
    const char **names;
    uint32_t *name_lens, *name_frame, *name_ids;
    uint32_t *name_distinct;             /* its name's number among the batch's distinct names */
    size_t n_names;
    /* per distinct name of the batch: the first frame's name, its length, hash (then id) */
    const char **distinct;
    uint32_t *distinct_lens, *distinct_ids;
    size_t n_distinct;
    bool numbered;                       /* the names' distinct numbers are made (number_names) */
    /* per stack (cap_stacks each) */
    const char **text;
    uint32_t *text_len, *start, *len, *shared;
    uint64_t *count;
    size_t n_stacks, cap_stacks;
};

/* A batch's distinct names by hash (open addressing: number + 1), emptied for each batch. Whichever thread
 * numbers a batch's names (number_names) has one. */
struct name_seen {
    uint32_t *slots;
    size_t mask;
};

/* A batch handed on to the profile, with the read chunk its names point into (a mapped input's: where in the
 * mapping the batch ends). */
struct tree_work {
    struct batch b;
    char *text;
    size_t text_alloc;
    size_t text_end;
};

/* Where the profile's side of the reading is: the frame ids of the last stack handed on (its batch's last),
 * which the first stack of the next batch may share a prefix with. */
struct tree_state {
    uint32_t *prev_ids;
    size_t prev_cap;
    struct name_seen seen;               /* for the batches this thread numbers */
};

/* An input of more than one read chunk is read by two threads, each with about half of the work: this one
 * reads, splits and hashes names, the tree thread interns them and adds each batch's paths to the profile,
 * in order, at most TREE_QUEUE batches behind. Only the tree thread touches the profile until it is
 * joined. */
#define TREE_QUEUE 4
/* While the tree thread is a whole queue behind, this one would wait for it: it faults in the node memory the
 * tree fills next instead (profile_prefault), PREFAULT_STEP bytes at a time, at most PREFAULT_AHEAD ahead. A
 * fault costs the tree thread ~3 us a page, longer the first time on a VM; a quarter of its time was in them. */
#define PREFAULT_AHEAD (2u << 20)
#define PREFAULT_STEP (256u << 10)

struct tree_pipe {
    struct handoff handoff;              /* the works to the tree thread */
    struct tree_work work[TREE_QUEUE];   /* the hand-off's slots */
    struct profile *p;
    struct tree_state *state;
    struct input_pages *pages;           /* a mapped input's (else NULL): the tree thread's until joined */
    _Atomic size_t read_from;            /* where the batch the reading thread fills begins */
};

/* State of one read: the profile, where to report, the batch, the last stack of the batch handed on. */
struct folded_parse {
    struct profile *p;
    const char *name;
    const struct folded_warnings *warn;
    uint64_t line_no;
    uint64_t warnings;
    struct batch b;
    struct tree_work work;               /* handed to the tree on this thread while there is no pipe */
    struct tree_pipe *pipe;
    struct tree_state tree;              /* the tree thread's while there is one */
    VEC_OF(char) prev;                   /* the last stack's text and frame ends, once its batch is */
    uint32_t *prev_ends;                 /* handed on: a prefix shared with it is not interned again */
    size_t prev_frames, prev_frames_cap;
    struct name_seen seen;               /* for the batches this thread numbers */
    struct folded_read_report *report;
    uint64_t total;                      /* the profile's total as this read goes (checked for overflow) */
    size_t guess_bytes;                  /* the input's size while the profile's is still to be guessed */
};

__attribute__((format(printf, 2, 3)))
static void malformed(struct folded_parse *fp, const char *fmt, ...)
{
    fp->report->skipped++;
    if (!fp->warn || !fp->warn->warn || ++fp->warnings > FOLDED_MAX_WARNINGS)
        return;
    char why[256], message[sizeof(why) + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(message, sizeof(message), "%.400s:%llu: %s, line skipped", fp->name, (unsigned long long)fp->line_no,
             why);
    fp->warn->warn(fp->warn->ctx, message);
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

static int reserve_frames(struct batch *b, size_t need)
{
    const struct parallel_array arrays[] = {
        PARALLEL_ARRAY(b->ids), PARALLEL_ARRAY(b->ends), PARALLEL_ARRAY(b->names), PARALLEL_ARRAY(b->name_lens),
        PARALLEL_ARRAY(b->name_frame), PARALLEL_ARRAY(b->name_ids), PARALLEL_ARRAY(b->name_distinct),
        PARALLEL_ARRAY(b->distinct), PARALLEL_ARRAY(b->distinct_lens), PARALLEL_ARRAY(b->distinct_ids),
    };
    return reserve_parallel(&b->cap_frames, need, arrays, sizeof(arrays) / sizeof(arrays[0]));
}

static int reserve_stack(struct batch *b)
{
    const struct parallel_array arrays[] = {
        PARALLEL_ARRAY(b->text), PARALLEL_ARRAY(b->text_len), PARALLEL_ARRAY(b->start), PARALLEL_ARRAY(b->len), PARALLEL_ARRAY(b->shared),
        PARALLEL_ARRAY(b->count),
    };
    return reserve_parallel(&b->cap_stacks, b->n_stacks + 1, arrays, sizeof(arrays) / sizeof(arrays[0]));
}

static void batch_free(struct batch *b)
{
    free(b->ids);
    free(b->ends);
    free(b->names);
    free(b->name_lens);
    free(b->name_frame);
    free(b->name_ids);
    free(b->name_distinct);
    free(b->distinct);
    free(b->distinct_lens);
    free(b->distinct_ids);
    free(b->text);
    free(b->text_len);
    free(b->start);
    free(b->len);
    free(b->shared);
    free(b->count);
}

static void work_free(struct tree_work *w)
{
    batch_free(&w->b);
    free(w->text);
}

/* Put the batch's distinct names (their hashes in distinct_ids) in a table of mask + 1 slots. */
static int make_seen(struct name_seen *seen, const struct batch *b, size_t mask)
{
    uint32_t *slots = calloc(mask + 1, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t u = 0; u < b->n_distinct; u++) {
        size_t i = b->distinct_ids[u] & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint32_t)u + 1;
    }
    free(seen->slots);
    seen->slots = slots;
    seen->mask = mask;
    return 0;
}

/* Number the batch's names to intern among its distinct names (b->distinct...), in order: the same numbers
 * whichever thread makes them. Returns 0 or -1 (no memory). */
static int number_names(struct name_seen *seen, struct batch *b)
{
    if (!seen->slots && make_seen(seen, b, 4095) != 0)
        return -1;
    b->n_distinct = 0;
    int rc = 0;
    for (size_t k = 0; k < b->n_names && rc == 0; k++) {
        const char *name = b->names[k];
        uint32_t len = b->name_lens[k], hash = b->name_ids[k];
        size_t i = hash & seen->mask;
        uint32_t slot;
        for (; (slot = seen->slots[i]) != 0; i = (i + 1) & seen->mask) {
            uint32_t u = slot - 1;
            if (b->distinct_ids[u] == hash && b->distinct_lens[u] == len && memcmp(b->distinct[u], name, len) == 0)
                break;
        }
        if (slot) {
            b->name_distinct[k] = slot - 1;
            continue;
        }
        size_t u = b->n_distinct++;
        b->distinct[u] = name;
        b->distinct_lens[u] = len;
        b->distinct_ids[u] = hash;
        b->name_distinct[k] = (uint32_t)u;
        seen->slots[i] = (uint32_t)u + 1;
        if (b->n_distinct * 2 > seen->mask)
            rc = make_seen(seen, b, seen->mask * 2 + 1);
    }
    memset(seen->slots, 0, (seen->mask + 1) * sizeof(*seen->slots));   /* empty for the next batch */
    b->numbered = rc == 0;
    return rc;
}

/* Put a batch's stacks in the profile: number its names unless done already, intern them, take shared
 * frames' ids from the stack before, add the paths of the stacks with a count. Returns 0 or -1 (no memory). */
static int add_work(struct profile *p, struct tree_work *w, struct tree_state *ts)
{
    struct batch *b = &w->b;
    if (b->n_stacks == 0)
        return 0;
    if (!b->numbered && number_names(&ts->seen, b) != 0)
        return -1;
    if (profile_intern_batch(p, b->distinct, b->distinct_lens, b->distinct_ids, b->n_distinct, b->distinct_ids) != 0)
        return -1;
    for (size_t i = 0; i < b->n_names; i++)
        b->ids[b->name_frame[i]] = b->distinct_ids[b->name_distinct[i]];
    for (size_t k = 0; k < b->n_stacks; k++) {
        const uint32_t *from = k ? b->ids + b->start[k - 1] : ts->prev_ids;
        if (b->shared[k] > 0)
            memcpy(b->ids + b->start[k], from, b->shared[k] * sizeof(*b->ids));
    }
    size_t last = b->n_stacks - 1;
    const struct parallel_array prev[] = { PARALLEL_ARRAY(ts->prev_ids) };
    if (reserve_parallel(&ts->prev_cap, b->len[last] + 1, prev, 1) != 0)
        return -1;
    memcpy(ts->prev_ids, b->ids + b->start[last], b->len[last] * sizeof(*ts->prev_ids));
    size_t n = 0;                                   /* the stacks with a count, in place */
    for (size_t k = 0; k < b->n_stacks; k++) {
        if (b->count[k] == 0)
            continue;
        b->start[n] = b->start[k];
        b->len[n] = b->len[k];
        b->count[n++] = b->count[k];
    }
    return profile_add_batch(p, b->ids, b->start, b->len, b->count, n, profile_frame_count(p));
}

/* Unmap the mapped input's pages before consumed (the batches there are in the profile), FOLDED_MAP_RELEASE
 * bytes or more at a time. A failure leaves them mapped: more memory, no harm. */
static void release_input(struct input_pages *in, size_t consumed)
{
    if (!in->buf || consumed < in->released + FOLDED_MAP_RELEASE)
        return;
    size_t end = consumed & ~(in->page - 1);
    if (madvise(in->buf + in->released, end - in->released, MADV_DONTNEED) == 0)
        in->released = end;
}

/* Map the next step of the input's pages from read_from on, MAP_AHEAD bytes at most. Returns whether it did. */
static bool map_ahead(struct input_pages *in, size_t read_from)
{
    if (!in->buf || in->map_ahead_off)
        return false;
    size_t from = read_from & ~(in->page - 1);
    if (from < in->mapped_to)
        from = in->mapped_to;
    size_t to = in->size - read_from > MAP_AHEAD ? read_from + MAP_AHEAD : in->size;
    if (from >= to)
        return false;
    size_t len = to - from < MAP_AHEAD_STEP ? to - from : MAP_AHEAD_STEP;
    if (madvise(in->buf + from, len, MADV_POPULATE_READ) != 0) {
        in->map_ahead_off = true;        /* an old kernel; or the file shrank (the reading thread is told) */
        return false;
    }
    in->mapped_to = from + len;
    return true;
}

/* The tree thread's work: one batch's paths into the profile, then the input's pages before it released. */
static int add_slot(void *ctx, size_t slot)
{
    struct tree_pipe *t = ctx;
    if (add_work(t->p, &t->work[slot], t->state) != 0)
        return ENOMEM;
    if (t->pages)
        release_input(t->pages, t->work[slot].text_end);
    return 0;
}

/* The tree thread with no batch to add: the input's next pages mapped for the reading thread. */
static bool tree_idle(void *ctx)
{
    struct tree_pipe *t = ctx;
    return t->pages && map_ahead(t->pages, atomic_load_explicit(&t->read_from, memory_order_relaxed));
}

/* Start the tree thread; without one (it could not be made) the tree is built on this thread. A mapped
 * input's pages are the tree thread's until it is joined. */
static void pipe_open(struct folded_parse *fp, struct line_reader *r)
{
    struct tree_pipe *t = calloc(1, sizeof(*t));
    if (!t)
        return;
    t->p = fp->p;
    t->state = &fp->tree;
    t->pages = input_mapped(r) ? &r->pages : NULL;
    atomic_init(&t->read_from, r->start);
    if (!handoff_open_idle(&t->handoff, TREE_QUEUE, add_slot, tree_idle, t)) {
        free(t);
        return;
    }
    fp->pipe = t;
}

/* Let the tree thread finish the queued work and end. Returns 0, or -1 if adding failed (no memory). */
static int pipe_close(struct folded_parse *fp)
{
    struct tree_pipe *t = fp->pipe;
    if (!t)
        return 0;
    int rc = handoff_close(&t->handoff) != 0 ? -1 : 0;
    for (size_t i = 0; i < TREE_QUEUE; i++)
        work_free(&t->work[i]);
    free(t);
    fp->pipe = NULL;
    return rc;
}

/* The work to fill next: the pipe's next free one (waiting for room), or this thread's. NULL if the tree
 * thread failed. */
static struct tree_work *work_to_fill(struct folded_parse *fp)
{
    struct tree_pipe *t = fp->pipe;
    if (!t)
        return &fp->work;
    int error;
    size_t slot = handoff_slot(&t->handoff, &error);
    return error ? NULL : &t->work[slot];
}

static int submit_work(struct folded_parse *fp, struct tree_work *w)
{
    struct tree_pipe *t = fp->pipe;
    if (!t)
        return add_work(fp->p, w, &fp->tree);
    (void)handoff_submit(&t->handoff);   /* a failure shows at the next work_to_fill, or at pipe_close */
    return 0;
}

/* Keep the batch's last stack (text, frame ends) for the first stack of the next batch. */
static int remember_last(struct folded_parse *fp)
{
    const struct batch *b = &fp->b;
    size_t k = b->n_stacks - 1;
    size_t len = b->text_len[k], n = b->len[k];
    const struct parallel_array per_frame[] = { PARALLEL_ARRAY(fp->prev_ends) };
    if (vec_reserve(&fp->prev, len) != 0 || reserve_parallel(&fp->prev_frames_cap, n, per_frame, 1) != 0)
        return -1;
    memcpy(fp->prev.v, b->text[k], len);
    memcpy(fp->prev_ends, b->ends + b->start[k], n * sizeof(*fp->prev_ends));
    fp->prev.n = len;
    fp->prev_frames = n;
    return 0;
}

/* Give the reader's buffer, which the batch's names point into, to w, and take w's (free: its batch is in the
 * profile) in exchange, with the line begun but not ended copied to its start. */
static int take_buffer(struct line_reader *r, struct tree_work *w)
{
    if (input_mapped(r)) {
        w->text_end = r->start;
        return 0;
    }
    if (vec_reserve_raw((void **)&w->text, &w->text_alloc, 1, r->cap + 1) != 0)
        return -1;
    size_t tail = r->end - r->start;
    memcpy(w->text, r->buf + r->start, tail);
    char *buf = r->buf;
    size_t alloc = r->alloc;
    r->buf = w->text;
    r->alloc = w->text_alloc;
    w->text = buf;
    w->text_alloc = alloc;
    r->end = tail;
    r->scanned -= r->start;
    r->start = 0;
    return 0;
}

/* Make room in the profile for what the whole input will make, guessed from its size and the first batch
 * (its frames, and those not shared with the line before, in the bytes up to r's start), before the batch
 * goes to the profile; once. Only a guess: when the room cannot be had, the tables grow as they fill. */
static void reserve_guess(struct folded_parse *fp, const struct line_reader *r)
{
    if (!fp->guess_bytes || r->start == 0)
        return;
    double per_frame = (double)fp->b.n_frames / FOLDED_FRAMES_PER_NODE;
    double per_batch = per_frame < (double)fp->b.n_names ? per_frame : (double)fp->b.n_names;
    double guess = (double)fp->guess_bytes * per_batch / (double)r->start;
    size_t nodes = guess < FOLDED_MAX_GUESS_NODES ? (size_t)guess : FOLDED_MAX_GUESS_NODES;
    if (profile_reserve(fp->p, nodes, nodes / FOLDED_NODES_PER_NAME) != 0)
        errno = 0;
    fp->guess_bytes = 0;
}

/* Hand the batch's stacks, with the buffer they are in, on to the profile (add_work, here or on the tree
 * thread). Returns 0 or -1 (no memory). */
static int flush_batch(struct folded_parse *fp, struct line_reader *r)
{
    if (fp->b.n_stacks == 0)
        return 0;
    if (remember_last(fp) != 0)
        return -1;
    /* The names are numbered on whichever thread has less to do: here while the tree thread has more to add
     * than the batch it is at, else by the tree thread (add_work), which would otherwise wait for this one. */
    if (fp->pipe && handoff_pending(&fp->pipe->handoff) > 1 && number_names(&fp->seen, &fp->b) != 0)
        return -1;
    while (fp->pipe && handoff_pending(&fp->pipe->handoff) == TREE_QUEUE &&
           profile_prefault(fp->p, PREFAULT_AHEAD, PREFAULT_STEP) > 0) {
    }
    struct tree_work *w = work_to_fill(fp);
    if (!w)
        return -1;
    if (take_buffer(r, w) != 0)
        return -1;
    if (fp->pipe)
        atomic_store_explicit(&fp->pipe->read_from, r->start, memory_order_relaxed);
    struct batch filled = fp->b;
    fp->b = w->b;                                  /* its arrays are free too */
    w->b = filled;
    fp->b.n_frames = fp->b.n_names = fp->b.n_distinct = fp->b.n_stacks = 0;
    fp->b.numbered = false;
    int rc = submit_work(fp, w);
    if (!fp->pipe)
        release_input(&r->pages, w->text_end);     /* added here and now (the tree thread releases its own) */
    return rc;
}

/* Read a regular file of more than a chunk, of which nothing is read yet, through a mapping: r then holds it
 * whole. Returns whether it does; if not, the stream is read chunk by chunk. */
static bool map_input(struct line_reader *r, FILE *in, size_t size)
{
    int fd = fileno(in);
    long page = sysconf(_SC_PAGESIZE);
    if (fd < 0 || size <= FOLDED_READ_CHUNK || page <= 0 || ftello(in) != 0)
        return false;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return false;
    free(r->buf);
    r->buf = map;
    r->alloc = r->cap = r->end = size;
    r->eof = true;
    r->pages = (struct input_pages){ .buf = map, .size = size, .page = (size_t)page };
    return true;
}

/* Split stack (len bytes) at ';' into the batch, to be added count times (0: its names are only interned).
 * Frames in the prefix shared with the last stack keep their ids (folded files are usually sorted, so most
 * frames are). Returns 1 (in the batch), 0 after reporting a malformed stack, or -1 on allocation failure. */
static int batch_stack(struct folded_parse *fp, const char *stack, size_t len, uint64_t count)
{
    struct batch *b = &fp->b;
    /* a stack has at most len / 2 + 1 frames */
    if (reserve_stack(b) != 0 || reserve_frames(b, b->n_frames + len / 2 + 1) != 0)
        return -1;
    const char *prev = fp->prev.v;
    const uint32_t *prev_ends = fp->prev_ends;
    size_t prev_len = fp->prev.n, prev_frames = fp->prev_frames;
    if (b->n_stacks > 0) {
        size_t k = b->n_stacks - 1;
        prev = b->text[k];
        prev_len = b->text_len[k];
        prev_ends = b->ends + b->start[k];
        prev_frames = b->len[k];
    }
    size_t common = 0;
    size_t limit = len < prev_len ? len : prev_len;
    while (common < limit && stack[common] == prev[common])
        common++;
    size_t n = 0;
    while (n < prev_frames && prev_ends[n] < common)  /* frame and its ';' identical */
        n++;
    size_t shared = n;
    size_t first = b->n_frames;
    if (shared > 0)
        memcpy(b->ends + first, prev_ends, shared * sizeof(*b->ends));
    size_t from = n ? prev_ends[n - 1] + 1 : 0;
    size_t names_before = b->n_names;
    while (from <= len) {
        size_t span;
        uint32_t hash = (uint32_t)intern_hash_span(INTERN_HASH_SEED, stack + from, len - from, ';', &span);
        size_t end = from + span;
        if (end == from) {
            malformed(fp, "empty frame name (frame %zu)", n + 1);
            b->n_names = names_before;              /* the line is skipped whole */
            return 0;
        }
        b->names[b->n_names] = stack + from;
        b->name_lens[b->n_names] = (uint32_t)(end - from);
        b->name_ids[b->n_names] = hash;                 /* made the name's id by profile_intern_batch */
        b->name_frame[b->n_names++] = (uint32_t)(first + n);
        b->ends[first + n++] = (uint32_t)end;
        from = end + 1;
    }
    size_t k = b->n_stacks++;
    b->text[k] = stack;
    b->text_len[k] = (uint32_t)len;
    b->start[k] = (uint32_t)first;
    b->len[k] = (uint32_t)n;
    b->shared[k] = (uint32_t)shared;
    b->count[k] = count;
    b->n_frames = first + n;
    return 1;
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
    int added = batch_stack(fp, stack, stack_len, count);
    if (added <= 0)
        return added;
    fp->total += count;
    fp->report->stacks++;
    return 0;
}

int profile_read_folded(struct profile *p, FILE *in, const char *name, const struct folded_warnings *warnings,
                        struct folded_read_report *report, char *err, size_t errlen)
{
    struct folded_read_report local_report;
    if (!report)
        report = &local_report;
    memset(report, 0, sizeof(*report));
    if (!name)
        name = "<input>";
    struct line_reader r = { .in = in, .cap = FOLDED_READ_CHUNK, .alloc = FOLDED_READ_CHUNK + 1 };
    r.buf = malloc(r.alloc);
    struct folded_parse fp = { .p = p, .name = name, .warn = warnings, .report = report, .total = profile_total(p) };
    int rc = -1;
    if (!r.buf) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    struct stat file;
    int fd = fileno(in);             /* -1 for a memory stream: no guess then */
    if (fd >= 0 && fstat(fd, &file) == 0 && S_ISREG(file.st_mode) && file.st_size > 0 &&
        (uint64_t)file.st_size <= SIZE_MAX) {
        fp.guess_bytes = (size_t)file.st_size;   /* reserve_guess, at the first batch */
        if (map_input(&r, in, fp.guess_bytes) && warnings && warnings->mapped)
            warnings->mapped(warnings->ctx, r.buf, r.cap);
    }
    for (;;) {
        char *line = NULL;
        size_t len = 0;
        enum line_status st = input_mapped(&r) && r.start - r.batch_from >= FOLDED_READ_CHUNK
                              ? LINE_REFILL                  /* a chunk's lines: hand them on */
                              : next_line(&r, &line, &len);
        if (st == LINE_OK && input_mapped(&r) && len >= FOLDED_MAX_LINE)
            st = LINE_TOO_LONG;         /* as a chunk read could not hold it */
        if (st == LINE_REFILL) {
            reserve_guess(&fp, &r);     /* before the tree thread, which then alone touches the profile */
            /* more than a chunk to read: build the tree on a second thread */
            if (!fp.pipe && report->lines > 0)
                pipe_open(&fp, &r);
            /* the batch points into the buffer: hand it on before the buffer moves */
            if (flush_batch(&fp, &r) != 0)
                goto no_memory;
            if (input_mapped(&r)) {
                r.batch_from = r.start;     /* the next batch begins here (also after lines without a stack) */
                continue;
            }
            st = refill(&r);
            if (st == LINE_OK)
                continue;
        }
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
        if (parse_line(&fp, line, len) != 0)
            goto no_memory;
    }
    if (!fp.pipe)
        reserve_guess(&fp, &r);         /* an input of one chunk */
    if (flush_batch(&fp, &r) != 0 || pipe_close(&fp) != 0)
        goto no_memory;
    if (fp.warnings > FOLDED_MAX_WARNINGS) {
        char message[512];
        snprintf(message, sizeof(message), "%.400s: %llu more malformed lines skipped", name,
                 (unsigned long long)(fp.warnings - FOLDED_MAX_WARNINGS));
        warnings->warn(warnings->ctx, message);
    }
    if (report->stacks == 0) {
        snprintf(err, errlen, "%s: no valid folded stack lines (%llu lines read, %llu malformed)", name,
                 (unsigned long long)report->lines, (unsigned long long)report->skipped);
        goto done;
    }
    rc = 0;
    goto done;
no_memory:
    snprintf(err, errlen, "%s:%llu: out of memory", name, (unsigned long long)fp.line_no);
done:
    if (pipe_close(&fp) != 0 && rc == 0)
        rc = -1;
    if (input_mapped(&r)) {
        if (warnings && warnings->mapped)
            warnings->mapped(warnings->ctx, NULL, 0);
        (void)munmap(r.buf, r.cap);     /* fails only for a range that is not a mapping (a bug) */
    } else
        free(r.buf);
    batch_free(&fp.b);
    work_free(&fp.work);
    vec_free(&fp.prev);
    free(fp.tree.prev_ids);
    free(fp.prev_ends);
    free(fp.seen.slots);
    free(fp.tree.seen.slots);
    return rc;
}
