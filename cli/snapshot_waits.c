/* SPDX-License-Identifier: GPL-3.0-or-later */
/* snapshot_waits.c: snapshots of every task's backtrace in, the snapshot wait profile out (see
 * snapshot_waits.h). Each snapshot builds the next generation of the task table from the last one (tasks
 * matched by tokio's id), so a task missing from a snapshot is dropped: memory follows the tasks alive. */
#include "cli/snapshot_waits.h"

#include <stdlib.h>
#include <string.h>

int snapshot_waits_init(struct snapshot_waits *w, uint64_t start_ns, uint64_t period_ns, bool keep_spans,
                        size_t max_spans)
{
    memset(w, 0, sizeof(*w));
    w->start_ns = start_ns;
    w->period_ns = period_ns;
    w->keep_spans = keep_spans;
    w->max_spans = max_spans;
    if (!(w->profile = profile_new()) || u64_map_init(&w->live_by_id, 64) != 0 ||
        u64_map_init(&w->next_by_id, 64) != 0) {
        snapshot_waits_free(w);
        return -1;
    }
    return 0;
}

void snapshot_waits_free(struct snapshot_waits *w)
{
    profile_free(w->profile);
    w->profile = NULL;
    vec_free(&w->live);
    vec_free(&w->next);
    u64_map_free(&w->live_by_id);
    u64_map_free(&w->next_by_id);
    vec_free(&w->spans);
    vec_free(&w->ids);
}

static uint64_t waited_ns(const struct snapshot_task *t)
{
    return t->suspended_ns + t->runnable_ns;
}

/* The task's current run of [suspended] or [runnable] as a span (none for a run of [running]). */
static int close_run(struct snapshot_waits *w, const struct snapshot_task *t)
{
    if (!w->keep_spans || (t->run_state != TASK_IDLE && t->run_state != TASK_SCHEDULED) ||
        t->run_end_ns <= t->run_start_ns)
        return 0;
    if (w->spans.n >= w->max_spans) {
        w->spans_left_out++;
        return 0;
    }
    struct snapshot_span *s = vec_push(&w->spans);
    if (!s)
        return -1;
    *s = (struct snapshot_span){ .task_id = t->id, .root = t->root, .site = t->run_site, .start_ns = t->run_start_ns,
                                 .end_ns = t->run_end_ns, .runnable = t->run_state == TASK_SCHEDULED };
    return 0;
}

/* An ended task: its last run closed, kept among the longest waiters if it is one. */
static int retire(struct snapshot_waits *w, const struct snapshot_task *t)
{
    size_t at = w->n_longest;
    while (at > 0 && waited_ns(&w->longest[at - 1]) < waited_ns(t))
        at--;
    if (at < SNAPSHOT_LONGEST) {
        size_t keep = w->n_longest < SNAPSHOT_LONGEST ? w->n_longest : SNAPSHOT_LONGEST - 1;
        memmove(&w->longest[at + 1], &w->longest[at], (keep - at) * sizeof(w->longest[0]));
        w->longest[at] = *t;
        if (w->n_longest < SNAPSHOT_LONGEST)
            w->n_longest++;
    }
    return close_run(w, t);
}

/* Put t into the next generation. Returns 0, or -1 when out of memory. */
static int carry(struct snapshot_waits *w, const struct snapshot_task *t)
{
    uint32_t index;
    int rc = u64_map_index(&w->next_by_id, t->id, &w->next, &index);
    if (rc == 1)
        w->next.v[index] = *t;
    return rc < 0 ? -1 : 0;
}

/* The snapshot's record of task t (a copy of its last one, or a new one), updated with its stack just added
 * (ids, ending at leaf_node) and the interval. */
static int add_task(struct snapshot_waits *w, const struct task_info *t, bool running, uint64_t interval_ns,
                    uint64_t now_ns)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(w->profile, &n_nodes);
    uint32_t leaf_node = profile_last_leaf(w->profile);
    uint32_t await_node = !running && leaf_node < n_nodes ? nodes[leaf_node].parent : PROFILE_NO_NODE;
    uint32_t site = !running && t->n_frames ? w->ids.v[t->n_frames] : PROFILE_NO_FRAME;
    uint32_t leaf = !running && t->leaf && *t->leaf ? w->ids.v[1 + t->n_frames] : PROFILE_NO_FRAME;
    struct snapshot_task rec;
    uint32_t at;
    if (u64_map_get(&w->next_by_id, t->id, &at))
        return 0;                         /* listed twice in one walk: counted once */
    if (u64_map_get(&w->live_by_id, t->id, &at)) {
        rec = w->live.v[at];
    } else {
        rec = (struct snapshot_task){ .id = t->id, .root = w->ids.v[0], .await_node = await_node, .site = site,
                                      .leaf = leaf, .first = w->snapshots, .one_await = true, .unwakeable = true,
                                      .run_state = TASK_COMPLETE };
        w->tasks_seen++;
    }
    enum task_state state = running ? TASK_RUNNING : t->state;
    rec.one_await &= state == TASK_IDLE && await_node == rec.await_node;
    rec.unwakeable &= state == TASK_IDLE && t->unwakeable;
    uint64_t *total = state == TASK_IDLE ? &rec.suspended_ns : state == TASK_SCHEDULED ? &rec.runnable_ns
                                                                                         : &rec.running_ns;
    *total += interval_ns;
    uint64_t *all = state == TASK_IDLE ? &w->suspended_ns : state == TASK_SCHEDULED ? &w->runnable_ns
                                                                                      : &w->running_ns;
    *all += interval_ns;
    uint32_t run_site = site != PROFILE_NO_FRAME ? site : leaf;
    if (rec.run_state == state && rec.run_site == run_site) {
        rec.run_end_ns = now_ns;
    } else {
        if (close_run(w, &rec) != 0)
            return -1;
        rec.run_state = state;
        rec.run_site = run_site;
        rec.run_start_ns = now_ns - interval_ns;
        rec.run_end_ns = now_ns;
    }
    return carry(w, &rec);
}

static int reset_next(struct snapshot_waits *w, size_t tasks)
{
    w->next.n = 0;
    u64_map_free(&w->next_by_id);
    return u64_map_init(&w->next_by_id, tasks * 2 + 16);
}

int snapshot_waits_add(struct snapshot_waits *w, const struct task_snapshot *snap)
{
    uint64_t now = snap->taken_ns;
    uint64_t since = w->snapshots ? w->prev_ns : w->start_ns;
    uint64_t interval = now > since ? now - since : 0;
    if (!w->snapshots && interval > w->period_ns)
        interval = w->period_ns;          /* the first: the tasks may not have existed long before it */
    if (reset_next(w, snap->n_tasks) != 0)
        return -1;
    for (size_t i = 0; i < snap->n_tasks; i++) {
        const struct task_info *t = &snap->tasks[i];
        if (t->state == TASK_COMPLETE)
            continue;                     /* done: it waits for nothing */
        /* a task that changed on every read was being polled or woken: running, as far as the snapshot says */
        bool running = t->state == TASK_RUNNING || t->state == TASK_CHANGING;
        struct task_info bare = { .id = t->id, .root = t->root };
        const char *state = running ? "[running]" : t->state == TASK_SCHEDULED ? "[runnable]" : "[suspended]";
        /* (split among the branches the task waits on at once: it counts once; its first branch added last) */
        if (task_stack_add(w->profile, running ? &bare : t, state, interval / 1000, &w->ids) != 0 ||
            add_task(w, t, running, interval, now) != 0)
            return -1;
        w->task_readings++;
    }
    /* the tasks of the last snapshot not in this one have ended, unless the walk stopped short of them */
    for (size_t i = 0; i < w->live.n; i++) {
        uint32_t at;
        if (u64_map_get(&w->next_by_id, w->live.v[i].id, &at))
            continue;
        if ((snap->list_truncated ? carry(w, &w->live.v[i]) : retire(w, &w->live.v[i])) != 0)
            return -1;
    }
    struct u64_map m = w->live_by_id;
    w->live_by_id = w->next_by_id;
    w->next_by_id = m;
    struct snapshot_task_vec v = w->live;
    w->live = w->next;
    w->next = v;
    w->prev_ns = now;
    w->snapshots++;
    return 0;
}

int snapshot_waits_finish(struct snapshot_waits *w)
{
    for (size_t i = 0; i < w->live.n; i++)
        if (close_run(w, &w->live.v[i]) != 0)
            return -1;
    return 0;
}

static int by_wait_desc(const void *a, const void *b)
{
    uint64_t x = waited_ns(*(const struct snapshot_task *const *)a), y = waited_ns(*(const struct snapshot_task *const *)b);
    return x < y ? 1 : x > y ? -1 : 0;
}

size_t snapshot_waits_longest(const struct snapshot_waits *w, const struct snapshot_task **out, size_t max)
{
    const struct snapshot_task **all = malloc((w->live.n + w->n_longest + 1) * sizeof(*all));
    if (!all)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < w->live.n; i++)
        if (waited_ns(&w->live.v[i]))
            all[n++] = &w->live.v[i];
    for (size_t i = 0; i < w->n_longest; i++)
        if (waited_ns(&w->longest[i]))
            all[n++] = &w->longest[i];
    qsort(all, n, sizeof(*all), by_wait_desc);
    n = n < max ? n : max;
    memcpy(out, all, n * sizeof(*all));
    free(all);
    return n;
}

static bool stuck(const struct snapshot_waits *w, const struct snapshot_task *t)
{
    return w->snapshots > 1 && t->first == 0 && t->one_await;
}

static int by_await_then_id(const void *a, const void *b)
{
    const struct snapshot_task *x = *(const struct snapshot_task *const *)a, *y = *(const struct snapshot_task *const *)b;
    if (x->await_node != y->await_node)
        return x->await_node < y->await_node ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_group_time_desc(const void *a, const void *b)
{
    const struct snapshot_stuck_group *x = a, *y = b;
    double tx = (double)x->n * (double)x->wait_ns, ty = (double)y->n * (double)y->wait_ns;
    return tx < ty ? 1 : tx > ty ? -1 : (x->task->id > y->task->id) - (x->task->id < y->task->id);
}

size_t snapshot_waits_stuck(const struct snapshot_waits *w, struct snapshot_stuck_group *out, size_t max,
                            size_t *n_groups)
{
    *n_groups = 0;
    const struct snapshot_task **all = malloc((w->live.n + 1) * sizeof(*all));
    struct snapshot_stuck_group *groups = malloc((w->live.n + 1) * sizeof(*groups));
    size_t n = 0, g = 0;
    if (all && groups) {
        for (size_t i = 0; i < w->live.n; i++)
            if (stuck(w, &w->live.v[i]))
                all[n++] = &w->live.v[i];
        qsort(all, n, sizeof(*all), by_await_then_id);
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || all[i]->await_node != all[i - 1]->await_node)
                groups[g++] = (struct snapshot_stuck_group){ .task = all[i] };
            groups[g - 1].n++;
            if (waited_ns(all[i]) > groups[g - 1].wait_ns)
                groups[g - 1].wait_ns = waited_ns(all[i]);
        }
        qsort(groups, g, sizeof(*groups), by_group_time_desc);
        memcpy(out, groups, (g < max ? g : max) * sizeof(*groups));
        *n_groups = g;
    }
    free(all);
    free(groups);
    return n;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = (*(const struct snapshot_task *const *)a)->id, y = (*(const struct snapshot_task *const *)b)->id;
    return x < y ? -1 : x > y;
}

size_t snapshot_waits_unwakeable(const struct snapshot_waits *w, const struct snapshot_task **out, size_t max)
{
    const struct snapshot_task **all = malloc((w->live.n + 1) * sizeof(*all));
    if (!all)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < w->live.n; i++)
        if (w->live.v[i].unwakeable)
            all[n++] = &w->live.v[i];
    qsort(all, n, sizeof(*all), by_id);
    memcpy(out, all, (n < max ? n : max) * sizeof(*all));
    free(all);
    return n;
}
