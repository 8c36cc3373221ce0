/* task_tracker.c: per-thread poll state machine and per-task statistics. */
#include "sampler/task_tracker.h"

#include <stdlib.h>
#include <string.h>

int task_tracker_init(struct task_tracker *t)
{
    memset(t, 0, sizeof(*t));
    if (u64_map_init(&t->thread_index, 64) != 0 || u64_map_init(&t->task_index, 1024) != 0 ||
        u64_map_init(&t->pending_index, 64) != 0) {
        task_tracker_free(t);
        return -1;
    }
    return 0;
}

void task_tracker_free(struct task_tracker *t)
{
    u64_map_free(&t->thread_index);
    u64_map_free(&t->task_index);
    u64_map_free(&t->pending_index);
    free(t->threads);
    free(t->tasks);
    free(t->pending);
    free(t->pending_cursor);
    free(t->pending_end);
    free(t->after);
    memset(t, 0, sizeof(*t));
}

static struct thread_poll_state *thread_state(struct task_tracker *t, uint32_t tid)
{
    uint32_t idx;
    if (u64_map_get(&t->thread_index, tid, &idx))
        return &t->threads[idx];
    if (t->n_threads == t->cap_threads) {
        uint32_t cap = t->cap_threads ? t->cap_threads * 2 : 16;
        struct thread_poll_state *v = realloc(t->threads, cap * sizeof(*v));
        if (!v)
            return NULL;
        t->threads = v;
        t->cap_threads = cap;
    }
    if (u64_map_put(&t->thread_index, tid, t->n_threads) != 0)
        return NULL;
    struct thread_poll_state *s = &t->threads[t->n_threads++];
    memset(s, 0, sizeof(*s));
    s->tid = tid;
    return s;
}

static struct sampler_task_stat *task_stat(struct task_tracker *t, uint64_t id)
{
    uint32_t idx;
    if (u64_map_get(&t->task_index, id, &idx))
        return &t->tasks[idx];
    if (t->n_tasks == t->cap_tasks) {
        uint32_t cap = t->cap_tasks ? t->cap_tasks * 2 : 256;
        struct sampler_task_stat *v = realloc(t->tasks, cap * sizeof(*v));
        if (!v)
            return NULL;
        t->tasks = v;
        t->cap_tasks = cap;
    }
    if (u64_map_put(&t->task_index, id, t->n_tasks) != 0)
        return NULL;
    struct sampler_task_stat *s = &t->tasks[t->n_tasks++];
    memset(s, 0, sizeof(*s));
    s->task_id = id;
    return s;
}

int task_tracker_marker(struct task_tracker *t, uint32_t tid, uint64_t time_ns, enum marker_kind kind,
                        uint64_t arg0, uint64_t probe_addr)
{
    struct thread_poll_state *th;
    struct sampler_task_stat *task;
    switch (kind) {
    case MARKER_POLL_START:
        if (!(th = thread_state(t, tid)) || !(task = task_stat(t, arg0)))
            return -1;
        task->polls++;
        t->polls++;
        th->saw_marker = true;
        th->state = SAMPLER_IN_TASK;
        th->task_id = arg0;
        th->poll_start_ns = time_ns;
        th->probe_addr = probe_addr;
        return 0;
    case MARKER_POLL_END:
        if (!(th = thread_state(t, tid)))
            return -1;
        th->saw_marker = true;
        if (th->state == SAMPLER_IN_TASK && th->task_id == arg0 && (task = task_stat(t, arg0))) {
            uint64_t d = time_ns > th->poll_start_ns ? time_ns - th->poll_start_ns : 0;
            task->total_poll_ns += d;
            if (d > task->longest_poll_ns)
                task->longest_poll_ns = d;
            if (d > LONG_POLL_NS)
                t->long_polls++;
            t->timed_polls++;
        }
        /* An end without its start (lost record, or recording began mid-poll) still closes the poll. */
        th->state = SAMPLER_NOT_IN_TASK;
        th->probe_addr = 0;
        return 0;
    case MARKER_SPAWN:
        t->spawns++;
        return task_stat(t, arg0) ? 0 : -1;
    case MARKER_POLL_RETURN:
        if (!(th = thread_state(t, tid)))
            return -1;
        if (th->state == SAMPLER_IN_TASK)
            return task_tracker_marker(t, tid, time_ns, MARKER_POLL_END, th->task_id, probe_addr);
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

void task_tracker_lost(struct task_tracker *t)
{
    for (uint32_t i = 0; i < t->n_threads; i++) {
        if (t->threads[i].saw_marker) {
            t->threads[i].state = SAMPLER_UNKNOWN_TASK;
            t->threads[i].probe_addr = 0;
        }
    }
}

void task_tracker_current(const struct task_tracker *t, uint32_t tid, enum sampler_task_state *state,
                          uint64_t *task_id, uint64_t *probe_addr)
{
    uint32_t idx;
    if (!u64_map_get(&t->thread_index, tid, &idx)) {
        *state = SAMPLER_NOT_IN_TASK;
        *task_id = 0;
        *probe_addr = 0;
        return;
    }
    const struct thread_poll_state *s = &t->threads[idx];
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
    if (t->n_tasks > 1)     /* (qsort's array must not be NULL, even for no elements) */
        qsort(t->tasks, t->n_tasks, sizeof(*t->tasks), busiest_first);
    /* the index is stale after sorting: rebuild it */
    u64_map_free(&t->task_index);
    if (u64_map_init(&t->task_index, t->n_tasks + 16) == 0)
        for (uint32_t i = 0; i < t->n_tasks; i++)
            u64_map_put(&t->task_index, t->tasks[i].task_id, i);
}

/* Stable merge sort of marker hits (qsort is not stable). */
static int mergesort_hits(struct marker_hit *v, size_t n, int (*cmp)(const void *, const void *))
{
    struct marker_hit *tmp = malloc(n * sizeof(*tmp));
    if (!tmp)
        return -1;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = cmp(&v[b], &v[a]) < 0 ? v[b++] : v[a++];
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
    if (t->n_pending == t->cap_pending) {
        size_t cap = t->cap_pending ? t->cap_pending * 2 : 1024;
        struct marker_hit *v = realloc(t->pending, cap * sizeof(*v));
        if (!v)
            return -1;
        t->pending = v;
        t->cap_pending = cap;
    }
    t->pending[t->n_pending++] = *hit;
    return 0;
}

static int by_tid_then_time(const void *a, const void *b)
{
    const struct marker_hit *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

int task_tracker_round_begin(struct task_tracker *t)
{
    /* mergesort keeps records of equal time in arrival order */
    if (t->n_pending > 1 && mergesort_hits(t->pending, t->n_pending, by_tid_then_time) != 0)
        return -1;
    u64_map_free(&t->pending_index);
    if (u64_map_init(&t->pending_index, 64) != 0)
        return -1;
    t->n_cursors = 0;
    for (size_t i = 0; i < t->n_pending;) {
        size_t j = i;
        while (j < t->n_pending && t->pending[j].tid == t->pending[i].tid)
            j++;
        if (t->n_cursors == t->cap_cursors) {
            size_t cap = t->cap_cursors ? t->cap_cursors * 2 : 64;
            size_t *c = realloc(t->pending_cursor, cap * sizeof(*c));
            if (!c)
                return -1;
            t->pending_cursor = c;
            size_t *e = realloc(t->pending_end, cap * sizeof(*e));
            if (!e)
                return -1;
            t->pending_end = e;
            t->cap_cursors = cap;
        }
        t->pending_cursor[t->n_cursors] = i;
        t->pending_end[t->n_cursors] = j;
        if (u64_map_put(&t->pending_index, t->pending[i].tid, (uint32_t)t->n_cursors) != 0)
            return -1;
        t->n_cursors++;
        i = j;
    }
    /* The state of each thread after each of its hits, from its state before the round. */
    if (t->n_pending > t->cap_after) {
        struct thread_poll_state *v = realloc(t->after, t->n_pending * sizeof(*v));
        if (!v)
            return -1;
        t->after = v;
        t->cap_after = t->n_pending;
    }
    for (size_t slot = 0; slot < t->n_cursors; slot++) {
        uint32_t tid = t->pending[t->pending_cursor[slot]].tid;
        struct thread_poll_state st = { .tid = tid, .state = SAMPLER_NOT_IN_TASK };
        uint32_t idx;
        if (u64_map_get(&t->thread_index, tid, &idx))
            st = t->threads[idx];
        for (size_t k = t->pending_cursor[slot]; k < t->pending_end[slot]; k++) {
            const struct marker_hit *h = &t->pending[k];
            if (h->kind == MARKER_POLL_START) {
                st.state = SAMPLER_IN_TASK;
                st.task_id = h->arg0;
                st.probe_addr = h->probe_addr;
            } else if (h->kind == MARKER_POLL_END || (h->kind == MARKER_POLL_RETURN && st.state == SAMPLER_IN_TASK)) {
                st.state = SAMPLER_NOT_IN_TASK;
                st.probe_addr = 0;
            }
            t->after[k] = st;
        }
    }
    return 0;
}

static void apply_until(struct task_tracker *t, size_t slot, uint64_t time_ns)
{
    size_t *cur = &t->pending_cursor[slot];
    while (*cur < t->pending_end[slot] && t->pending[*cur].time_ns <= time_ns) {
        const struct marker_hit *h = &t->pending[*cur];
        task_tracker_marker(t, h->tid, h->time_ns, h->kind, h->arg0, h->probe_addr);
        (*cur)++;
    }
}

void task_tracker_at(struct task_tracker *t, uint32_t tid, uint64_t time_ns, enum sampler_task_state *state,
                     uint64_t *task_id, uint64_t *probe_addr)
{
    uint32_t slot;
    if (t->n_cursors && u64_map_get(&t->pending_index, tid, &slot)) {
        /* the last hit at or before time_ns */
        size_t lo = t->pending_cursor[slot], hi = t->pending_end[slot];
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t->pending[mid].time_ns <= time_ns)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > t->pending_cursor[slot]) {
            const struct thread_poll_state *st = &t->after[lo - 1];
            *state = st->state;
            *task_id = st->state == SAMPLER_IN_TASK ? st->task_id : 0;
            *probe_addr = st->probe_addr;
            return;
        }
    }
    task_tracker_current(t, tid, state, task_id, probe_addr);
}

void task_tracker_round_end(struct task_tracker *t, uint64_t time_ns)
{
    size_t kept = 0;
    for (size_t slot = 0; slot < t->n_cursors; slot++) {
        apply_until(t, slot, time_ns);
        for (size_t i = t->pending_cursor[slot]; i < t->pending_end[slot]; i++)
            t->pending[kept++] = t->pending[i];
    }
    t->n_pending = kept;
    t->n_cursors = 0;
}
