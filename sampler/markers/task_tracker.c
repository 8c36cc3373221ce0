/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_tracker.c: per-thread poll state machine and per-task statistics. */
#include "sampler/markers/task_tracker.h"

#include <stdlib.h>
#include <string.h>

int task_tracker_init(struct task_tracker *t)
{
    memset(t, 0, sizeof(*t));
    if (u64_map_init(&t->thread_index, 64) != 0 || u64_map_init(&t->task_index, 1024) != 0) {
        task_tracker_free(t);
        return -1;
    }
    return 0;
}

void task_tracker_free(struct task_tracker *t)
{
    u64_map_free(&t->thread_index);
    u64_map_free(&t->task_index);
    for (size_t i = 0; i < t->hits.n; i++)
        vec_free(&t->hits.v[i]);
    vec_free(&t->hits);
    vec_free(&t->active);
    vec_free(&t->threads);
    vec_free(&t->tasks);
    memset(t, 0, sizeof(*t));
}

/* A thread first seen after a loss: the lost hits may have been its own (a lost hit carries no thread), so it
 * is in an unknown task until its first poll-start. */
static void unknown_since_loss(struct thread_poll_state *st)
{
    st->saw_marker = true;
    st->state = SAMPLER_UNKNOWN_TASK;
    st->probe_addr = 0;
    st->unknown_until = 0;
}

/* The state of a thread no hit named yet: not in a task, or after a loss, in an unknown one. */
static enum sampler_task_state unseen_thread_state(const struct task_tracker *t)
{
    return t->lost_any ? SAMPLER_UNKNOWN_TASK : SAMPLER_NOT_IN_TASK;
}

/* The threads[] index of tid, a new entry (not in a task; after a loss, in an unknown one) when unseen. Returns false when out of memory. */
static bool thread_slot(struct task_tracker *t, uint32_t tid, uint32_t *idx)
{
    if (u64_map_get(&t->thread_index, tid, idx))
        return true;
    /* threads and hits grow together: hits.v[i] is the queue of threads.v[i] (its room first) */
    if (vec_reserve(&t->hits, t->threads.n + 1) != 0 || u64_map_index(&t->thread_index, tid, &t->threads, idx) < 0)
        return false;
    struct thread_poll_state *st = &t->threads.v[*idx];
    st->tid = tid;
    if (t->lost_any)
        unknown_since_loss(st);
    vec_push(&t->hits);                                       /* room reserved above: cannot fail */
    return true;
}

static struct sampler_task_stat *task_stat(struct task_tracker *t, uint64_t id)
{
    uint32_t idx;
    int added = u64_map_index(&t->task_index, id, &t->tasks, &idx);
    if (added < 0)
        return NULL;
    if (added)
        t->tasks.v[idx].task_id = id;
    return &t->tasks.v[idx];
}

/* The poll state after a hit, as attribution sees it (apply_hit keeps the statistics). After a lost record
 * (SPEC section 3) the thread stays UNKNOWN until a poll-start later than the loss: an end does not make it
 * known (the next start may have been the lost record), nor does a start the loss may have followed. */
static void poll_state_after(struct thread_poll_state *st, uint64_t time_ns, enum marker_kind kind, uint64_t arg0,
                             uint64_t probe_addr)
{
    if (st->state == SAMPLER_UNKNOWN_TASK && (kind != MARKER_POLL_START || time_ns <= st->unknown_until))
        return;
    if (kind == MARKER_POLL_START) {
        st->state = SAMPLER_IN_TASK;
        st->task_id = arg0;
        st->probe_addr = probe_addr;
    } else if (kind == MARKER_POLL_END || (kind == MARKER_POLL_RETURN && st->state == SAMPLER_IN_TASK)) {
        st->state = SAMPLER_NOT_IN_TASK;
        st->probe_addr = 0;
    }
}

static void tell_event(struct task_tracker *t, const struct thread_poll_state *th, enum marker_kind kind,
                       uint64_t task_id, uint64_t time_ns, uint64_t ret_addr)
{
    if (t->on_task_event)
        t->on_task_event(t->poll_ctx, th->tid, kind, task_id, time_ns, ret_addr);
}

/* Apply one hit of the thread at threads[idx] (ret_addr: the hit's, told with its task event). */
static int apply_hit(struct task_tracker *t, uint32_t idx, uint64_t time_ns, enum marker_kind kind, uint64_t arg0,
                     uint64_t probe_addr, uint64_t ret_addr)
{
    struct thread_poll_state *th = &t->threads.v[idx];
    struct sampler_task_stat *task;
    if (kind == MARKER_POLL_START || kind == MARKER_POLL_END || kind == MARKER_WAKE ||
        kind == MARKER_WAKER_REGISTERED || kind == MARKER_RUNTIME_WAKE || kind == MARKER_RUNTIME_WAKER_REGISTERED ||
        kind == MARKER_TERMINATE)
        tell_event(t, th, kind, arg0, time_ns, ret_addr);
    switch (kind) {
    case MARKER_WAKE:
    case MARKER_WAKER_REGISTERED:
    case MARKER_RUNTIME_WAKE:
    case MARKER_RUNTIME_WAKER_REGISTERED:
        return 0;
    case MARKER_POLL_START:
        if (!(task = task_stat(t, arg0)))
            return -1;
        task->polls++;
        t->polls++;
        th->task_slot = (uint32_t)(task - t->tasks.v);   /* for its end: one task lookup per poll */
        th->saw_marker = true;
        th->poll_start_ns = time_ns;
        poll_state_after(th, time_ns, kind, arg0, probe_addr);
        return 0;
    case MARKER_POLL_END:
        th->saw_marker = true;
        if (th->state == SAMPLER_IN_TASK && th->task_id == arg0) {
            task = &t->tasks.v[th->task_slot];
            uint64_t d = time_ns > th->poll_start_ns ? time_ns - th->poll_start_ns : 0;
            task->total_poll_ns += d;
            if (d > task->longest_poll_ns)
                task->longest_poll_ns = d;
            if (d > LONG_POLL_NS)
                t->long_polls++;
            t->timed_polls++;
            if (t->on_poll) {
                struct sampler_poll poll = { .tid = th->tid, .thread = UINT32_MAX, .task_id = arg0,
                                             .start_ns = th->poll_start_ns, .end_ns = th->poll_start_ns + d,
                                             .start_addr = th->probe_addr };
                t->on_poll(t->poll_ctx, &poll);
            }
        }
        /* An end without its start (lost record, or recording began mid-poll) still closes the poll. */
        poll_state_after(th, time_ns, kind, arg0, probe_addr);
        return 0;
    case MARKER_SPAWN:
        t->spawns++;
        return task_stat(t, arg0) ? 0 : -1;
    case MARKER_POLL_RETURN:
        if (th->state == SAMPLER_IN_TASK)
            return apply_hit(t, idx, time_ns, MARKER_POLL_END, th->task_id, probe_addr, 0);
        return 0;
    case MARKER_TERMINATE:
        t->terminates++;
        return 0;
    case MARKER_PARK:
        t->parks++;
        return 0;
    case MARKER_UNPARK:
        t->unparks++;
        return 0;
    case MARKER_KIND_COUNT:
        break;
    }
    return 0;
}

int task_tracker_marker(struct task_tracker *t, uint32_t tid, uint64_t time_ns, enum marker_kind kind,
                        uint64_t arg0, uint64_t probe_addr)
{
    uint32_t idx;
    if (!thread_slot(t, tid, &idx))
        return -1;
    return apply_hit(t, idx, time_ns, kind, arg0, probe_addr, 0);
}

/* Which threads a loss concerns: a marker buffer is per CPU (perf) or per CPU region (BPF), but which threads
 * ran on that CPU meanwhile is not known (threads migrate, and samples are too sparse to tell), so the safe
 * rule is every thread that has seen a marker (applied or queued). A thread that never did is not polling. */
static bool queues_poll_hit(const struct thread_hits *h)
{
    for (size_t k = 0; k < h->n; k++)
        if (h->v[k].kind == MARKER_POLL_START || h->v[k].kind == MARKER_POLL_END)
            return true;
    return false;
}

void task_tracker_lost(struct task_tracker *t)
{
    for (size_t i = 0; i < t->threads.n; i++) {
        struct thread_poll_state *th = &t->threads.v[i];
        if (th->saw_marker || queues_poll_hit(&t->hits.v[i])) {
            th->saw_marker = true;
            th->state = SAMPLER_UNKNOWN_TASK;
            th->probe_addr = 0;
            th->unknown_until = UINT64_MAX;
        }
    }
    t->loss_open = true;
    t->lost_any = true;
}

void task_tracker_loss_seen_by(struct task_tracker *t, uint64_t until_ns)
{
    if (!t->loss_open)
        return;
    for (size_t i = 0; i < t->threads.n; i++)
        if (t->threads.v[i].unknown_until == UINT64_MAX)
            t->threads.v[i].unknown_until = until_ns;
    t->loss_open = false;
}

void task_tracker_current(const struct task_tracker *t, uint32_t tid, enum sampler_task_state *state,
                          uint64_t *task_id, uint64_t *probe_addr)
{
    uint32_t idx;
    if (!u64_map_get(&t->thread_index, tid, &idx)) {
        *state = unseen_thread_state(t);
        *task_id = 0;
        *probe_addr = 0;
        return;
    }
    const struct thread_poll_state *s = &t->threads.v[idx];
    *state = s->state;
    *task_id = s->task_id;
    *probe_addr = s->probe_addr;
}

static int busiest_first(const void *a, const void *b)
{
    const struct sampler_task_stat *x = a, *y = b;
    if (x->total_poll_ns != y->total_poll_ns)
        return x->total_poll_ns < y->total_poll_ns ? 1 : -1;
    if (x->polls != y->polls)
        return x->polls < y->polls ? 1 : -1;
    return x->task_id < y->task_id ? -1 : x->task_id > y->task_id;
}

void task_tracker_sort(struct task_tracker *t)
{
    if (t->tasks.n > 1)     /* (qsort's array must not be NULL, even for no elements) */
        qsort(t->tasks.v, t->tasks.n, sizeof(*t->tasks.v), busiest_first);
    /* the index is stale after sorting: rebuild it */
    u64_map_free(&t->task_index);
    if (u64_map_init(&t->task_index, t->tasks.n + 16) == 0)
        for (size_t i = 0; i < t->tasks.n; i++)
            u64_map_put(&t->task_index, t->tasks.v[i].task_id, (uint32_t)i);
}

/* Stable merge sort of one thread's hits by time (qsort is not stable): equal times keep arrival order. */
static int sort_by_time(struct marker_hit *v, size_t n)
{
    size_t i = 1;
    while (i < n && v[i - 1].time_ns <= v[i].time_ns)
        i++;
    if (i >= n)
        return 0;      /* the usual case: the thread stayed on one CPU, or its buffers were read in order */
    struct marker_hit *tmp = malloc(n * sizeof(*tmp));
    if (!tmp)
        return -1;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = v[b].time_ns < v[a].time_ns ? v[b++] : v[a++];
            while (a < mid)
                tmp[k++] = v[a++];
            while (b < hi)
                tmp[k++] = v[b++];
        }
        memcpy(v, tmp, n * sizeof(*v));
    }
    free(tmp);
    return 0;
}

int task_tracker_queue(struct task_tracker *t, const struct marker_hit *hit)
{
    uint32_t idx;
    if (t->have_last && t->last_tid == hit->tid)
        idx = t->last_index;
    else if (!thread_slot(t, hit->tid, &idx))
        return -1;
    t->have_last = true;
    t->last_tid = hit->tid;
    t->last_index = idx;
    struct thread_hits *h = &t->hits.v[idx];
    if (vec_reserve(h, h->n + 1) != 0)
        return -1;
    if (h->n == 0) {
        uint32_t *active = vec_push(&t->active);
        if (!active)
            return -1;
        *active = idx;
    }
    if (hit->time_ns <= t->applied_until)
        t->late_hits++;
    if (h->n > 0 && hit->time_ns < h->v[h->n - 1].time_ns)
        h->unsorted = true;       /* the thread migrated and its buffers were read out of order */
    h->v[h->n++] = *hit;
    return 0;
}

int task_tracker_round_begin(struct task_tracker *t)
{
    int rc = 0;
    for (size_t a = 0; a < t->active.n; a++) {
        struct thread_hits *h = &t->hits.v[t->active.v[a]];
        if (h->unsorted) {
            if (sort_by_time(h->v, h->n) != 0)
                rc = -1;
            h->unsorted = false;
        }
    }
    return rc;
}

/* Whether a sampled instruction is a probe's: the probe's address, or the one after its breakpoint (where the
 * trap leaves the user instruction pointer while the kernel handles the probe). */
static bool at_probe(uint64_t user_ip, uint64_t probe_addr)
{
    return user_ip != 0 && probe_addr != 0 && (user_ip == probe_addr || user_ip == probe_addr + 1);
}

/* How many of a thread's queued hits (in time order) are at or before time_ns. */
static size_t hits_until(const struct thread_hits *h, uint64_t time_ns)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->v[mid].time_ns <= time_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* What the thread at threads[idx] was polling after its first lo queued hits (the rule task_tracker.h gives for
 * task_tracker_sample's state; lo from hits_until at the sample's time). */
static void state_after_hits(const struct task_tracker *t, uint32_t idx, size_t lo, uint64_t user_ip,
                             enum sampler_task_state *state, uint64_t *task_id, uint64_t *probe_addr)
{
    const struct thread_hits *h = &t->hits.v[idx];
    /* A sample taken in a poll marker's own trap (the kernel handling the probe, around the moment the hit was
     * stamped) is on the poll's side of it: before a poll-end's stamp or after a poll-start's. Its stack is the
     * task's (the marker sits in the poll wrapper, often with the task's future inlined around it). */
    if (lo > 0 && h->v[lo - 1].kind == MARKER_POLL_END && at_probe(user_ip, h->v[lo - 1].probe_addr))
        lo--;
    else if (lo < h->n && h->v[lo].kind == MARKER_POLL_START && at_probe(user_ip, h->v[lo].probe_addr))
        lo++;
    /* The state after hits v[0..lo): replayed from the last hit among them that sets the state by itself, or
     * from the round's start (none: the thread's state now). Samples are rare next to hits, so this is cheaper
     * than keeping the state after every hit. Usually a poll start or end sets it; while the thread is UNKNOWN
     * (a lost record) only a start after the loss does. */
    struct thread_poll_state st = t->threads.v[idx];
    size_t from = lo;
    if (st.state != SAMPLER_UNKNOWN_TASK) {
        while (from > 0 && h->v[from - 1].kind != MARKER_POLL_START && h->v[from - 1].kind != MARKER_POLL_END)
            from--;
    } else {
        while (from > 0 && (h->v[from - 1].kind != MARKER_POLL_START || h->v[from - 1].time_ns <= st.unknown_until))
            from--;
        if (from > 0)
            st.state = SAMPLER_NOT_IN_TASK;   /* that start sets the state whatever came before */
    }
    for (size_t k = from > 0 ? from - 1 : 0; k < lo; k++)
        poll_state_after(&st, h->v[k].time_ns, h->v[k].kind, h->v[k].arg0, h->v[k].probe_addr);
    /* A record lost without a trace (a BPF program the kernel skipped, a loss the reader cannot see) shows in
     * the thread's next poll hit: an end that does not close the poll the state says is open means its start
     * was lost (or the one before it: a sample then may be in either task or in neither), so the sample's task
     * is not known. Only the hits already read can tell: later ones cannot change a sample already given. */
    size_t next = lo;
    while (next < h->n && h->v[next].kind != MARKER_POLL_START && h->v[next].kind != MARKER_POLL_END)
        next++;
    if (next < h->n && h->v[next].kind == MARKER_POLL_END &&
        !(st.state == SAMPLER_IN_TASK && st.task_id == h->v[next].arg0)) {
        st.state = SAMPLER_UNKNOWN_TASK;
        st.probe_addr = 0;
    }
    *state = st.state;
    *task_id = st.state == SAMPLER_IN_TASK ? st.task_id : 0;
    *probe_addr = st.probe_addr;
}

/* The probe address of the last hit among the first lo queued hits of threads[idx], else of the last applied. */
static uint64_t hit_before(const struct task_tracker *t, uint32_t idx, size_t lo)
{
    return lo > 0 ? t->hits.v[idx].v[lo - 1].probe_addr : t->threads.v[idx].last_hit_addr;
}

/* The open poll's return address and slot after the first lo queued hits of threads[idx]. */
static void poll_return_after(const struct task_tracker *t, uint32_t idx, size_t lo, uint64_t *ret_slot,
                              uint64_t *ret_addr)
{
    const struct thread_hits *h = &t->hits.v[idx];
    /* the last poll hit before it decides; none queued: the state the applied hits left */
    for (size_t k = lo; k > 0; k--) {
        const struct marker_hit *hit = &h->v[k - 1];
        if (hit->kind == MARKER_POLL_START) {
            *ret_slot = hit->ret_slot;
            *ret_addr = hit->ret_addr;
            return;
        }
        if (hit->kind == MARKER_POLL_END || hit->kind == MARKER_POLL_RETURN) {
            *ret_slot = *ret_addr = 0;
            return;
        }
    }
    *ret_slot = t->threads.v[idx].poll_ret_slot;
    *ret_addr = t->threads.v[idx].poll_ret_addr;
}

void task_tracker_sample(const struct task_tracker *t, uint32_t tid, uint64_t time_ns, uint64_t user_ip,
                         struct task_tracker_sample *out)
{
    uint32_t idx;
    if (!u64_map_get(&t->thread_index, tid, &idx)) {
        *out = (struct task_tracker_sample){ .state = unseen_thread_state(t) };
        return;
    }
    size_t lo = hits_until(&t->hits.v[idx], time_ns);
    state_after_hits(t, idx, lo, user_ip, &out->state, &out->task_id, &out->probe_addr);
    /* A sample read after its round (its record written late: a CPU held up between stamping and writing it)
     * finds the hits before it applied and gone: the thread's state now is its state then only when no hit
     * came between. */
    if (time_ns <= t->applied_until && t->threads.v[idx].last_hit_ns > time_ns) {
        out->state = SAMPLER_UNKNOWN_TASK;
        out->task_id = out->probe_addr = 0;
    }
    poll_return_after(t, idx, lo, &out->ret_slot, &out->ret_addr);
    out->last_hit_addr = hit_before(t, idx, lo);
    const struct thread_hits *h = &t->hits.v[idx];
    uint64_t after = lo < h->n ? h->v[lo].probe_addr : 0;
    out->trap_addr = 0;
    if (at_probe(user_ip, out->last_hit_addr))
        out->trap_addr = out->last_hit_addr;
    else if (at_probe(user_ip, after))
        out->trap_addr = after;
}

void task_tracker_round_end(struct task_tracker *t, uint64_t time_ns)
{
    size_t still = 0;
    for (size_t a = 0; a < t->active.n; a++) {
        uint32_t idx = t->active.v[a];
        struct thread_hits *h = &t->hits.v[idx];
        size_t k = 0;
        for (; k < h->n && h->v[k].time_ns <= time_ns; k++) {
            const struct marker_hit *hit = &h->v[k];
            apply_hit(t, idx, hit->time_ns, hit->kind, hit->arg0, hit->probe_addr, hit->ret_addr);
            struct thread_poll_state *th = &t->threads.v[idx];
            th->last_hit_addr = hit->probe_addr;
            th->last_hit_ns = hit->time_ns;
            if (hit->kind == MARKER_POLL_START) {
                th->poll_ret_addr = hit->ret_addr;
                th->poll_ret_slot = hit->ret_slot;
            } else if (hit->kind == MARKER_POLL_END || hit->kind == MARKER_POLL_RETURN) {
                th->poll_ret_addr = th->poll_ret_slot = 0;
            }
        }
        if (k < h->n) {
            memmove(h->v, h->v + k, (h->n - k) * sizeof(*h->v));
            h->n -= k;
            t->active.v[still++] = idx;
        } else {
            h->n = 0;
        }
    }
    t->active.n = still;
    if (time_ns > t->applied_until)
        t->applied_until = time_ns;
}

size_t task_tracker_pending(const struct task_tracker *t)
{
    size_t n = 0;
    for (size_t a = 0; a < t->active.n; a++)
        n += t->hits.v[t->active.v[a]].n;
    return n;
}
