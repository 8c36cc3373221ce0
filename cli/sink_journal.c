/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sink_journal.c: journals a sampler sink's callbacks into one byte buffer and replays them in order
 * (cli/sink_journal.h). An entry is a header (its kind and payload size), then the callback's struct copied
 * whole with its pointers left out, then what they pointed to: address arrays, NUL-terminated strings. One
 * append per callback, no allocation per frame. A mapping's root ("/proc/PID/root", the target's file system)
 * is opened once while the target lives and journaled as "/proc/self/fd/N", so that the files can still be
 * opened when the entries are replayed after the target has exited. */
#include "cli/sink_journal.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum entry_kind {
    ENTRY_MAPPING, ENTRY_THREAD_NAME, ENTRY_SAMPLE, ENTRY_POLL, ENTRY_TASK_EVENT, ENTRY_WAIT_STACK, ENTRY_WAIT_ROUND,
};

struct entry_head {
    uint32_t kind;
    uint32_t size;                     /* payload bytes after the header (the entry is padded to 8) */
};

/* The fixed parts of the entries that carry strings. */
struct mapping_entry {
    uint64_t start, end, pgoff;
    uint32_t path_len, root_len;       /* the strings follow, each NUL-terminated */
    bool executable;
};

struct thread_name_entry {
    uint32_t thread;
    pid_t tid;
    uint32_t name_len;
    bool has_name;                     /* the name was not NULL */
};

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* One piece of an entry's payload. */
struct part {
    const void *data;
    size_t len;
};

static void append(struct sink_journal *j, enum entry_kind kind, const struct part *parts, size_t n_parts)
{
    size_t size = 0;
    for (size_t i = 0; i < n_parts; i++)
        size += parts[i].len;
    size_t total = sizeof(struct entry_head) + ALIGN8(size);
    if (j->bytes.n && j->bytes.n + total > j->budget)
        sink_journal_replay(j);        /* full: the buffer never holds more than the budget (or one entry) */
    /* the whole budget at once (pages are only touched as entries fill them), so the buffer is not copied
     * while it grows */
    size_t need = j->bytes.n + total > j->budget ? j->bytes.n + total : j->budget;
    if (size > UINT32_MAX || vec_reserve(&j->bytes, need) != 0) {
        j->failed = true;
        return;
    }
    unsigned char *at = j->bytes.v + j->bytes.n;
    struct entry_head h = { .kind = (uint32_t)kind, .size = (uint32_t)size };
    memcpy(at, &h, sizeof(h));
    at += sizeof(h);
    for (size_t i = 0; i < n_parts; i++) {
        if (parts[i].len)
            memcpy(at, parts[i].data, parts[i].len);
        at += parts[i].len;
    }
    memset(at, 0, ALIGN8(size) - size);
    j->bytes.n += total;
    j->entries++;
}

/* The root to journal for root: the held-open one when root is the target's. */
static const char *pinned_root(struct sink_journal *j, const char *root)
{
    if (!root || !*root)
        return root;
    if (j->root_fd >= 0 && strcmp(root, j->root_from) == 0)
        return j->root_as;
    if (strlen(root) >= sizeof(j->root_from))
        return root;
    int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return root;                   /* as it was: opened at replay, if it still can be */
    if (j->root_fd >= 0)
        close(j->root_fd);
    j->root_fd = fd;
    snprintf(j->root_from, sizeof(j->root_from), "%s", root);
    snprintf(j->root_as, sizeof(j->root_as), "/proc/self/fd/%d", fd);
    return j->root_as;
}

static void journal_mapping(void *ctx, const struct sampler_mapping *m)
{
    struct sink_journal *j = ctx;
    const char *path = m->path ? m->path : "";
    const char *root = pinned_root(j, m->root);
    root = root ? root : "";
    struct mapping_entry e = { .start = m->start, .end = m->end, .pgoff = m->pgoff, .executable = m->executable,
                               .path_len = (uint32_t)strlen(path), .root_len = (uint32_t)strlen(root) };
    struct part parts[] = { { &e, sizeof(e) }, { path, e.path_len + 1u }, { root, e.root_len + 1u } };
    append(j, ENTRY_MAPPING, parts, 3);
}

static void journal_thread_name(void *ctx, uint32_t thread, pid_t tid, const char *name)
{
    struct sink_journal *j = ctx;
    struct thread_name_entry e = { .thread = thread, .tid = tid, .has_name = name != NULL,
                                   .name_len = name ? (uint32_t)strlen(name) : 0 };
    struct part parts[] = { { &e, sizeof(e) }, { name ? name : "", e.name_len + 1u } };
    append(j, ENTRY_THREAD_NAME, parts, 2);
}

static void journal_sample(void *ctx, const struct sampler_sample *s)
{
    struct sink_journal *j = ctx;
    struct sampler_sample e = *s;
    e.kernel_ips = e.user_ips = NULL;
    struct part parts[] = { { &e, sizeof(e) }, { s->kernel_ips, s->n_kernel * sizeof(uint64_t) },
                            { s->user_ips, s->n_user * sizeof(uint64_t) } };
    append(j, ENTRY_SAMPLE, parts, 3);
}

static void journal_poll(void *ctx, const struct sampler_poll *p)
{
    struct part part = { p, sizeof(*p) };
    append(ctx, ENTRY_POLL, &part, 1);
}

static void journal_task_event(void *ctx, const struct sampler_task_event *e)
{
    struct part part = { e, sizeof(*e) };
    append(ctx, ENTRY_TASK_EVENT, &part, 1);
}

static void journal_wait_stack(void *ctx, const struct sampler_wait_stack *w)
{
    struct sampler_wait_stack e = *w;
    e.user_ips = NULL;
    struct part parts[] = { { &e, sizeof(e) }, { w->user_ips, w->n_user * sizeof(uint64_t) } };
    append(ctx, ENTRY_WAIT_STACK, parts, 2);
}

static void journal_wait_round(void *ctx, uint64_t until_ns)
{
    struct part part = { &until_ns, sizeof(until_ns) };
    append(ctx, ENTRY_WAIT_ROUND, &part, 1);
}

/* Progress is for now: not journaled. */
static void forward_progress(void *ctx, const struct sampler_progress *p)
{
    struct sink_journal *j = ctx;
    j->target.on_progress(j->target.ctx, p);
}

void sink_journal_init(struct sink_journal *j, const struct sampler_sink *target, size_t budget)
{
    memset(j, 0, sizeof(*j));
    j->target = *target;
    j->budget = budget ? budget : SINK_JOURNAL_BUDGET;
    j->root_fd = -1;
}

void sink_journal_name_tasks(struct sink_journal *j, bool (*named_later)(void *ctx, uint64_t task_id, uint64_t *named),
                             void *ctx)
{
    j->named_later = named_later;
    j->named_ctx = ctx;
}

struct sampler_sink sink_journal_sink(struct sink_journal *j)
{
    const struct sampler_sink *t = &j->target;
    return (struct sampler_sink){
        .ctx = j,
        .on_mapping = t->on_mapping ? journal_mapping : NULL,
        .on_thread_name = t->on_thread_name ? journal_thread_name : NULL,
        .on_sample = t->on_sample ? journal_sample : NULL,
        .on_poll = t->on_poll ? journal_poll : NULL,
        .on_task_event = t->on_task_event ? journal_task_event : NULL,
        .on_wait_stack = t->on_wait_stack ? journal_wait_stack : NULL,
        .on_wait_round = t->on_wait_round ? journal_wait_round : NULL,
        .on_progress = t->on_progress ? forward_progress : NULL,
    };
}

/* Each entry to the target. Fixed parts are copied out (the buffer is aligned to 8, the copies need not be). */
static void replay_entry(struct sink_journal *j, enum entry_kind kind, const unsigned char *p)
{
    const struct sampler_sink *t = &j->target;
    switch (kind) {
    case ENTRY_MAPPING: {
        struct mapping_entry e;
        memcpy(&e, p, sizeof(e));
        const char *path = (const char *)p + sizeof(e);
        struct sampler_mapping m = { .start = e.start, .end = e.end, .pgoff = e.pgoff, .path = path,
                                     .root = path + e.path_len + 1, .executable = e.executable };
        t->on_mapping(t->ctx, &m);
        break;
    }
    case ENTRY_THREAD_NAME: {
        struct thread_name_entry e;
        memcpy(&e, p, sizeof(e));
        t->on_thread_name(t->ctx, e.thread, e.tid, e.has_name ? (const char *)p + sizeof(e) : NULL);
        break;
    }
    case ENTRY_SAMPLE: {
        struct sampler_sample s;
        memcpy(&s, p, sizeof(s));
        s.kernel_ips = (const uint64_t *)(const void *)(p + sizeof(s));
        s.user_ips = s.kernel_ips + s.n_kernel;
        uint64_t named;
        if (s.task_id_provisional && j->named_later && j->named_later(j->named_ctx, s.task_id, &named)) {
            s.task_id = named;
            s.task_id_provisional = false;
            j->renamed++;
        }
        t->on_sample(t->ctx, &s);
        break;
    }
    case ENTRY_POLL: {
        struct sampler_poll e;
        memcpy(&e, p, sizeof(e));
        t->on_poll(t->ctx, &e);
        break;
    }
    case ENTRY_TASK_EVENT: {
        struct sampler_task_event e;
        memcpy(&e, p, sizeof(e));
        t->on_task_event(t->ctx, &e);
        break;
    }
    case ENTRY_WAIT_STACK: {
        struct sampler_wait_stack w;
        memcpy(&w, p, sizeof(w));
        w.user_ips = (const uint64_t *)(const void *)(p + sizeof(w));
        t->on_wait_stack(t->ctx, &w);
        break;
    }
    case ENTRY_WAIT_ROUND: {
        uint64_t until_ns;
        memcpy(&until_ns, p, sizeof(until_ns));
        t->on_wait_round(t->ctx, until_ns);
        break;
    }
    }
}

void sink_journal_hold_provisional(struct sink_journal *j)
{
    j->hold_provisional = true;
}

/* Whether the entry at p (its header h, total bytes with it) is a sample to hold back, and then held: copied
 * to held, where there is room (else counted in held_over). */
static bool held_back(struct sink_journal *j, const struct entry_head *h, const unsigned char *p, size_t total)
{
    if (!j->hold_provisional || j->named_later || h->kind != ENTRY_SAMPLE)
        return false;
    bool provisional;
    memcpy(&provisional, p + sizeof(*h) + offsetof(struct sampler_sample, task_id_provisional), sizeof(provisional));
    if (!provisional)
        return false;
    if (j->held.n + total > SINK_JOURNAL_HELD_BUDGET || vec_reserve(&j->held, j->held.n + total) != 0) {
        j->held_over++;
        return false;
    }
    memcpy(j->held.v + j->held.n, p, total);
    j->held.n += total;
    return true;
}

/* Replay the entries of bytes[0, n), holding back the samples held_back takes. */
static void replay_entries(struct sink_journal *j, const unsigned char *bytes, size_t n)
{
    for (size_t at = 0; at + sizeof(struct entry_head) <= n;) {
        struct entry_head h;
        memcpy(&h, bytes + at, sizeof(h));
        size_t total = sizeof(h) + ALIGN8((size_t)h.size);
        if (!held_back(j, &h, bytes + at, total))
            replay_entry(j, (enum entry_kind)h.kind, bytes + at + sizeof(h));
        at += total;
    }
}

void sink_journal_replay(struct sink_journal *j)
{
    /* the structs' sizes are multiples of 8 (each holds a uint64_t), so address arrays after them are aligned */
    _Static_assert(sizeof(struct sampler_sample) % 8 == 0, "sample entry alignment");
    _Static_assert(sizeof(struct sampler_wait_stack) % 8 == 0, "wait stack entry alignment");
    _Static_assert(sizeof(struct entry_head) == 8, "entry header alignment");
    if (j->named_later && j->held.n) {     /* the held samples first: older than anything in the journal */
        replay_entries(j, j->held.v, j->held.n);
        vec_free(&j->held);
    }
    replay_entries(j, j->bytes.v, j->bytes.n);
    j->bytes.n = 0;
    j->replays++;
}

void sink_journal_free(struct sink_journal *j)
{
    vec_free(&j->bytes);
    vec_free(&j->held);
    if (j->root_fd >= 0)
        close(j->root_fd);
    j->root_fd = -1;
}
