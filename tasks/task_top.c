/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_top.c: the live view of every task (tasks.h): a table of the tasks alive (by tokio's id, rebuilt at each
 * snapshot: a task missing from one has ended) and one of await points (groups: a root future and its tree, found
 * by a hash of the tree's interned strings and numbers, kept for the view), the workers by thread; snapshots file
 * each task's time since the last one under its state now, samples count per task and per group's frame; a frame
 * sums them per row and starts the next interval. One lock: snapshots, samples and frames come from three
 * threads. */
#include "tasks/tasks.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/u64_map.h"
#include "base/vec.h"

#define NO_SITE UINT32_MAX
#define DEFAULT_LONG_POLL_NS 100000000ull
#define DEFAULT_STARVE_NS 100000000ull
#define DEFAULT_LEAK_FRAMES 5
#define BOXED_OVER 2048u              /* the least size tokio boxes a future at (debug builds) */
#define LARGE_OVER 16384u             /* tokio 1.41 and later box a future over it in release builds */

struct hot_frame {
    const char *name;
    uint64_t samples;
};

/* An await point: a root future and its tree (a group of the view). */
struct top_site {
    uint64_t key;
    const char *root;
    struct task_node *nodes;          /* a copy, details NULL (the strings are the reader's: they outlive the view) */
    size_t n_nodes;
    const struct task_frame *await_frame;
    const char *leaf;
    /* its count at each frame, for a leak: since it was last fewer */
    size_t count, last_count, first_count;
    unsigned frames, grew;
    bool leak;
    struct u64_map hot_index;         /* frame name (pointer) -> index in hot */
    VEC_OF(struct hot_frame) hot;
};

struct top_task {
    uint64_t id;
    uint32_t site;                    /* its await point (the last known: a running task stays at its last) */
    uint64_t site_since_ns;
    enum task_state state;
    bool unwakeable;
    bool seen;                        /* in the snapshot being added */
    const char *root, *root_file;
    uint32_t root_line;
    uint64_t future_size, boxed_size;
    char detail[64];
    uint64_t busy_ns, scheduled_ns, idle_ns, samples;   /* since the last frame */
    pid_t waits_on;                   /* queued on the core of this worker in the last snapshot (0: not) */
    uint64_t starving_ns;             /* how long it has waited there, scheduled, in consecutive snapshots */
    uint64_t starved_ns;              /* the longest time seen scheduled without a poll */
    pid_t starved_tid;                /* ... on that worker's core */
    uint64_t blocked_ns;              /* the longest poll seen */
    pid_t blocked_tid;
    char blocked_at[200];             /* where that poll held its worker ("fn @ file:line"), "" when not read */
    unsigned sticky;                  /* TASK_TOP_BLOCKING, TASK_TOP_STARVED */
};

struct top_worker {
    struct task_top_worker shown;
    uint64_t snapshots, busy;         /* since the last frame */
    uint64_t poll_task;               /* the poll under way: task, tick (0: none) */
    int64_t poll_tick;
    uint64_t poll_held_ns;            /* how long it has held the thread so far (running in it, or blocked in it) */
    uint64_t last_ns;                 /* the last snapshot that saw the thread, its CPU time and state then */
    int64_t last_cpu_ns;
    bool stuck;                       /* in the same poll as at the last snapshot (its task and tick unchanged) */
    bool stack_read, seen;
};

struct pending_samples {              /* samples of a task no snapshot has listed yet */
    uint64_t id;
    uint64_t samples;
};

struct task_top {
    pthread_mutex_t lock;
    struct task_top_options opt;
    VEC_OF(struct top_site) sites;
    struct u64_map site_index;
    VEC_OF(struct top_task) tasks;
    struct u64_map task_index;
    VEC_OF(struct top_worker) workers;
    VEC_OF(struct pending_samples) pending;
    struct u64_map pending_index;
    struct u64_map queued_on;          /* a snapshot's tasks queued on the workers' cores: header -> worker */
    /* the view */
    uint64_t first_ns, last_snapshot_ns, last_frame_ns, frames, snapshots;
    uint64_t first_next_id, next_id;
    size_t first_listed, listed;
    uint64_t appeared, ended;          /* tasks first seen after the first snapshot, and seen no more */
    pid_t pid;
    const char *runtime;
    size_t states[TASK_CHANGING + 1];
    int64_t global_queue, blocking_threads, blocking_idle;
    bool ticks_read;                   /* a worker's tick was read: a worker without one is not in a poll */
    uint64_t samples, samples_in_tasks;   /* since the last frame */
    bool gone;
    /* the last frame's */
    VEC_OF(struct task_top_row) rows;
    VEC_OF(struct task_top_worker) shown_workers;
    VEC_OF(struct task_top_note) notes;
    VEC_OF(uint32_t) site_rows;        /* site -> its row (group mode) */
    VEC_OF(struct task_info) scratch;  /* a group's details, for task_group_detail */
    VEC_OF(const struct task_info *) scratch_refs;
};

const char *task_top_warning_word(enum task_top_warning w)
{
    switch (w) {
    case TASK_TOP_LOST_WAKER: return "lost-waker";
    case TASK_TOP_BLOCKING: return "blocking";
    case TASK_TOP_STARVED: return "starved";
    case TASK_TOP_LEAK: return "leak";
    case TASK_TOP_BOXED: return "boxed";
    case TASK_TOP_LARGE: return "large";
    }
    return "?";
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct task_top *task_top_new(const struct task_top_options *options)
{
    struct task_top *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->opt = *options;
    if (!t->opt.long_poll_ns)
        t->opt.long_poll_ns = DEFAULT_LONG_POLL_NS;
    if (!t->opt.starve_ns)
        t->opt.starve_ns = DEFAULT_STARVE_NS;
    if (!t->opt.leak_frames)
        t->opt.leak_frames = DEFAULT_LEAK_FRAMES;
    t->global_queue = t->blocking_threads = t->blocking_idle = -1;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    if (u64_map_init(&t->site_index, 64) != 0 || u64_map_init(&t->task_index, 256) != 0 ||
        u64_map_init(&t->pending_index, 64) != 0 || u64_map_init(&t->queued_on, 64) != 0) {
        task_top_free(t);
        return NULL;
    }
    return t;
}

void task_top_free(struct task_top *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->sites.n; i++) {
        free(t->sites.v[i].nodes);
        u64_map_free(&t->sites.v[i].hot_index);
        vec_free(&t->sites.v[i].hot);
    }
    vec_free(&t->sites);
    vec_free(&t->tasks);
    vec_free(&t->workers);
    vec_free(&t->pending);
    vec_free(&t->rows);
    vec_free(&t->shown_workers);
    vec_free(&t->notes);
    vec_free(&t->site_rows);
    vec_free(&t->scratch);
    vec_free(&t->scratch_refs);
    u64_map_free(&t->site_index);
    u64_map_free(&t->task_index);
    u64_map_free(&t->pending_index);
    u64_map_free(&t->queued_on);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* ---- await points ----------------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* The key of a root and tree: its strings by pointer (a reader's strings are interned), its numbers. */
static uint64_t site_key(const char *root, const struct task_node *nodes, size_t n)
{
    uint64_t h = mix(0x5a17e5ull, (uint64_t)(uintptr_t)root);
    h = mix(h, n);
    for (size_t i = 0; i < n; i++) {
        const struct task_node *x = &nodes[i];
        h = mix(h, (uint64_t)(uintptr_t)x->frame.function);
        h = mix(h, (uint64_t)(uintptr_t)x->frame.file);
        h = mix(h, ((uint64_t)x->frame.line << 1) | x->frame.macro_line);
        h = mix(h, (uint64_t)(uintptr_t)x->frame.macro);
        h = mix(h, (uint64_t)(uintptr_t)x->leaf);
        h = mix(h, ((uint64_t)x->n_children << 32) | x->subtree);
    }
    return h;
}

static bool same_site(const struct top_site *s, const char *root, const struct task_node *nodes, size_t n)
{
    if (s->root != root || s->n_nodes != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (task_node_compare(&s->nodes[i], &nodes[i]) != 0)
            return false;
    return true;
}

/* An async fn of the runtime's or a standard library's own (tokio's recv, yield_now; futures' join_all), not the
   program's. */
static bool library_frame(const char *function)
{
    static const char *const crates[] = { "tokio::", "futures_util::", "futures::", "std::", "core::", "alloc::",
                                          "<tokio::", "<futures_util::", "<std::", "<core::", "<alloc::" };
    for (size_t i = 0; i < sizeof(crates) / sizeof(crates[0]); i++)
        if (strncmp(function, crates[i], strlen(crates[i])) == 0)
            return true;
    return false;
}

/* The await point a group shows: the innermost async frame of its first pending path that is the program's (the
   innermost of all when none is), and that path's leaf. */
static void first_path(struct top_site *s)
{
    const struct task_frame *any = NULL;
    for (size_t i = 0; i < s->n_nodes; i++) {
        const struct task_frame *f = &s->nodes[i].frame;
        if (f->function && *f->function) {
            any = f;
            if (!library_frame(f->function))
                s->await_frame = f;
        }
        if (s->nodes[i].leaf)
            s->leaf = s->nodes[i].leaf;
        if (s->nodes[i].n_children == 0)
            break;
    }
    if (!s->await_frame)
        s->await_frame = any;
}

/* The await point of root and tree (its index), made on first sight; NO_SITE when out of memory. */
static uint32_t site_of(struct task_top *t, const char *root, const struct task_node *nodes, size_t n)
{
    uint64_t key = site_key(root, nodes, n);
    uint32_t at;
    for (int probe = 0; probe < 64 && u64_map_get(&t->site_index, key, &at); probe++) {
        if (same_site(&t->sites.v[at], root, nodes, n))
            return at;
        key = key * 31 + 1;          /* (another tree with the same hash: the next key) */
    }
    struct top_site *s = vec_push(&t->sites);
    if (!s)
        return NO_SITE;
    s->key = key;
    s->root = root;
    if (n && !(s->nodes = malloc(n * sizeof(*s->nodes)))) {
        t->sites.n--;
        return NO_SITE;
    }
    if (n)
        memcpy(s->nodes, nodes, n * sizeof(*nodes));
    for (size_t i = 0; i < n; i++)
        s->nodes[i].detail = NULL;
    s->n_nodes = n;
    first_path(s);
    at = (uint32_t)(t->sites.n - 1);
    if (u64_map_init(&s->hot_index, 16) != 0 || u64_map_put(&t->site_index, key, at) != 0) {
        free(s->nodes);
        u64_map_free(&s->hot_index);
        t->sites.n--;
        return NO_SITE;
    }
    return at;
}

/* ---- snapshots -------------------------------------------------------------------------------------------- */

/* The task's record (found, or made: *made), NULL when out of memory. */
static struct top_task *task_record(struct task_top *t, uint64_t id, bool *made)
{
    uint32_t at;
    int rc = u64_map_index(&t->task_index, id, &t->tasks, &at);
    if (rc < 0)
        return NULL;
    *made = rc == 1;
    struct top_task *task = &t->tasks.v[at];
    if (*made) {
        task->id = id;
        task->site = NO_SITE;
        uint32_t p;
        if (u64_map_get(&t->pending_index, id, &p))
            task->samples = t->pending.v[p].samples;    /* (sampled before it was first listed) */
    }
    return task;
}

/* Where a running task's worker stack holds it: its innermost frame of the program's own code (not the standard
   library's, tokio's, or an unnamed one), as "fn @ file:line"; "" when none was read. */
static void blocking_place(const struct task_info *ti, char *buf, size_t len)
{
    static const char *const others[] = { "std::", "core::", "alloc::", "tokio::", "__", "[", "<std::", "<core::",
                                          "<alloc::", "<tokio::" };
    buf[0] = '\0';
    for (size_t i = 0; i < ti->n_stack; i++) {
        const struct task_frame *f = &ti->stack[i];
        bool theirs = !f->function || !f->file;
        for (size_t k = 0; !theirs && k < sizeof(others) / sizeof(others[0]); k++)
            theirs = strncmp(f->function, others[k], strlen(others[k])) == 0;
        if (!theirs && strchr(f->function, ':')) {
            snprintf(buf, len, "%s @ %s:%u", f->function, f->file, f->line);
            return;
        }
    }
}

static const struct task_info *listed_task(const struct task_snapshot *snap, uint64_t id)
{
    for (size_t i = 0; i < snap->n_tasks; i++)
        if (snap->tasks[i].id == id)
            return &snap->tasks[i];
    return NULL;
}

/* A worker whose task and tick did not change since the last snapshot is in the same poll: long enough, its task
   holds it (and its stack, read once per poll, says where). The poll's time counts while the thread runs in it or
   is blocked in it (state S or D: a sleep, a blocking read), not while the system keeps it waiting for a CPU (a
   loaded machine, a throttled container: state R with less CPU time than the time passed). */
static void follow_worker(struct task_top *t, struct top_worker *w, const struct task_worker *tw,
                          const struct task_snapshot *snap, struct task_reader *reader, uint64_t now)
{
    uint64_t dt = w->last_ns && now > w->last_ns ? now - w->last_ns : 0;
    uint64_t ran = tw->cpu_ns >= 0 && w->last_cpu_ns >= 0 && tw->cpu_ns >= w->last_cpu_ns
                       ? (uint64_t)(tw->cpu_ns - w->last_cpu_ns) : dt;
    bool polling = tw->current_task && tw->tick >= 0 && listed_task(snap, tw->current_task);
    bool blocked = tw->sched_state == 'S' || tw->sched_state == 'D';
    w->stuck = false;
    w->last_ns = now;
    w->last_cpu_ns = tw->cpu_ns;
    if (!polling) {
        w->poll_task = 0;
        return;
    }
    if (w->poll_task != tw->current_task || w->poll_tick != tw->tick) {
        w->poll_task = tw->current_task;
        w->poll_tick = tw->tick;
        w->poll_held_ns = 0;
        w->stack_read = false;
        return;
    }
    w->stuck = true;
    w->poll_held_ns += blocked ? dt : ran < dt ? ran : dt;
    uint64_t held = w->poll_held_ns;
    uint32_t at;
    if (held <= t->opt.long_poll_ns || !u64_map_get(&t->task_index, tw->current_task, &at))
        return;
    struct top_task *task = &t->tasks.v[at];
    task->sticky |= TASK_TOP_BLOCKING;
    if (held > task->blocked_ns) {
        task->blocked_ns = held;
        task->blocked_tid = tw->tid;
    }
    const struct task_info *ti = listed_task(snap, tw->current_task);
    if (!w->stack_read && reader && ti && ti->state == TASK_RUNNING) {
        w->stack_read = true;
        char where[sizeof(task->blocked_at)];
        task_reader_stack(reader, (struct task_info *)ti);   /* (the reader's own snapshot: its stack is read now) */
        blocking_place(ti, where, sizeof(where));
        if (where[0])
            memcpy(task->blocked_at, where, sizeof(where));
    }
}

static int add_workers(struct task_top *t, const struct task_snapshot *snap, struct task_reader *reader,
                       uint64_t now)
{
    for (size_t i = 0; i < t->workers.n; i++)
        t->workers.v[i].seen = false;
    for (size_t k = 0; k < snap->n_workers; k++) {
        const struct task_worker *tw = &snap->workers[k];
        struct top_worker *w = NULL;
        for (size_t i = 0; i < t->workers.n && !w; i++)
            if (t->workers.v[i].shown.tid == tw->tid)
                w = &t->workers.v[i];
        if (!w && !(w = vec_push(&t->workers)))
            return -1;
        w->seen = true;
        /* polling: a task's id in its CONTEXT that is one of the runtime's tasks (a worker runs its scheduler's
           loop inside a blocking task of its own: that id is there between polls), and its core in its scheduler
           context where the tick can be read at all */
        t->ticks_read |= tw->tick >= 0;
        bool polling = tw->current_task && (tw->tick >= 0 || !t->ticks_read) && listed_task(snap, tw->current_task);
        w->shown = (struct task_top_worker){ .tid = tw->tid, .index = tw->index,
                                             .task = polling ? tw->current_task : 0, .local_queue = tw->local_queue };
        memcpy(w->shown.name, tw->name, sizeof(w->shown.name));
        w->snapshots++;
        w->busy += polling;
        follow_worker(t, w, tw, snap, reader, now);
    }
    size_t kept = 0;
    for (size_t i = 0; i < t->workers.n; i++)
        if (t->workers.v[i].seen)
            t->workers.v[kept++] = t->workers.v[i];
    t->workers.n = kept;
    return 0;
}

/* The tasks queued on the workers' cores: header -> worker (its tid). */
static int core_queues(struct task_top *t, const struct task_snapshot *snap)
{
    u64_map_clear(&t->queued_on);
    for (size_t k = 0; k < snap->n_workers; k++)
        for (size_t q = 0; q < snap->workers[k].n_queued; q++)
            if (u64_map_put(&t->queued_on, snap->workers[k].queued[q], (uint32_t)snap->workers[k].tid) != 0)
                return -1;
    return 0;
}

/* Whether worker tid stayed in one poll since the last snapshot. */
static bool worker_stuck(const struct task_top *t, pid_t tid)
{
    for (size_t i = 0; i < t->workers.n; i++)
        if (t->workers.v[i].shown.tid == tid)
            return t->workers.v[i].stuck;
    return false;
}

/* A task listed in the snapshot taken at now, dt after the last one. */
static int add_task(struct task_top *t, const struct task_info *ti, uint64_t now, uint64_t dt)
{
    bool made;
    struct top_task *task = task_record(t, ti->id, &made);
    if (!task)
        return -1;
    if (task->seen)
        return 0;                     /* listed twice in one walk: counted once */
    task->seen = true;
    if (made && t->snapshots)
        t->appeared++;
    if (!made) {                      /* the time since the last snapshot, under its state now */
        if (ti->state == TASK_IDLE)
            task->idle_ns += dt;
        else if (ti->state == TASK_SCHEDULED)
            task->scheduled_ns += dt;
        else if (ti->state != TASK_COMPLETE)
            task->busy_ns += dt;
    }
    task->state = ti->state;
    task->unwakeable = ti->unwakeable;
    task->root = ti->root;
    task->root_file = ti->root_file;
    task->root_line = ti->root_line;
    task->future_size = ti->future_size;
    task->boxed_size = ti->boxed_size;
    snprintf(task->detail, sizeof(task->detail), "%s", ti->detail ? ti->detail : "");
    /* its await point: the tree read (a running, complete or changing task's none: it stays where it was) */
    struct task_tree tree;
    if (task_tree_of(ti, &tree) != 0)
        return -1;
    uint32_t site = tree.n ? site_of(t, ti->root, tree.nodes, tree.n)
                           : task->site == NO_SITE ? site_of(t, ti->root, NULL, 0) : task->site;
    task_tree_free(&tree);
    if (site == NO_SITE)
        return -1;
    if (site != task->site) {
        task->site = site;
        task->site_since_ns = now;
    }
    /* starved: scheduled, queued on the core of a worker that stays in one poll (its LIFO slot, which no other
       worker steals from, its local run queue, a current-thread runtime's queue), in consecutive snapshots: it has
       not been polled meanwhile, and waits for that poll to end */
    uint32_t tid;
    pid_t waits_on = ti->state == TASK_SCHEDULED && u64_map_get(&t->queued_on, ti->header, &tid) ? (pid_t)tid : 0;
    if (!waits_on || waits_on != task->waits_on || !worker_stuck(t, waits_on)) {
        task->starving_ns = 0;
    } else if ((task->starving_ns += dt) > t->opt.starve_ns) {
        task->sticky |= TASK_TOP_STARVED;
        if (task->starving_ns > task->starved_ns) {
            task->starved_ns = task->starving_ns;
            task->starved_tid = waits_on;
        }
    }
    task->waits_on = waits_on;
    return 0;
}

/* The tasks not listed in this snapshot have ended (unless the walk stopped short of them): dropped. */
static int drop_ended(struct task_top *t, bool truncated)
{
    size_t kept = 0;
    for (size_t i = 0; i < t->tasks.n; i++) {
        struct top_task task = t->tasks.v[i];
        if (!task.seen && !truncated) {
            t->ended++;
            continue;
        }
        task.seen = false;
        t->tasks.v[kept++] = task;
    }
    t->tasks.n = kept;
    u64_map_clear(&t->task_index);
    for (size_t i = 0; i < t->tasks.n; i++)
        if (u64_map_put(&t->task_index, t->tasks.v[i].id, (uint32_t)i) != 0)
            return -1;
    return 0;
}

int task_top_add_snapshot(struct task_top *t, const struct task_snapshot *snap, struct task_reader *reader)
{
    pthread_mutex_lock(&t->lock);
    uint64_t now = snap->taken_ns;
    uint64_t dt = t->snapshots && now > t->last_snapshot_ns ? now - t->last_snapshot_ns : 0;
    if (!t->snapshots) {
        t->first_ns = now;
        t->first_next_id = snap->next_task_id;
        t->first_listed = snap->n_tasks;
    }
    t->pid = snap->pid;
    t->runtime = snap->runtime;
    t->global_queue = snap->global_queue;
    t->blocking_threads = snap->blocking_threads;
    t->blocking_idle = snap->blocking_idle;
    t->next_id = snap->next_task_id;
    t->listed = snap->n_tasks;
    memset(t->states, 0, sizeof(t->states));
    /* the workers first (whether they were at work), the tasks' records then (a blocking poll's task is found in
       them: a new one is found from the next snapshot on) */
    int rc = add_workers(t, snap, reader, now);
    if (rc == 0)
        rc = core_queues(t, snap);
    for (size_t i = 0; i < snap->n_tasks && rc == 0; i++) {
        t->states[snap->tasks[i].state]++;
        rc = add_task(t, &snap->tasks[i], now, dt);
    }
    if (rc == 0)
        rc = drop_ended(t, snap->list_truncated);
    t->last_snapshot_ns = now;
    t->snapshots++;
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* ---- samples ---------------------------------------------------------------------------------------------- */

static void count_frame(struct top_site *s, const char *frame)
{
    uint32_t at;
    if (u64_map_index(&s->hot_index, (uint64_t)(uintptr_t)frame, &s->hot, &at) < 0)
        return;                       /* (out of memory: this sample's frame not counted) */
    s->hot.v[at].name = frame;
    s->hot.v[at].samples++;
}

void task_top_add_sample(struct task_top *t, uint64_t task_id, uint64_t time_ns, const char *frame)
{
    pthread_mutex_lock(&t->lock);
    t->samples++;
    uint32_t at;
    if (task_id) {
        t->samples_in_tasks++;
        if (u64_map_get(&t->task_index, task_id, &at)) {
            struct top_task *task = &t->tasks.v[at];
            task->samples++;
            if (frame && task->site != NO_SITE)
                count_frame(&t->sites.v[task->site], frame);
        } else if (u64_map_index(&t->pending_index, task_id, &t->pending, &at) >= 0) {
            t->pending.v[at].id = task_id;
            t->pending.v[at].samples++;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void task_top_target_gone(struct task_top *t)
{
    pthread_mutex_lock(&t->lock);
    t->gone = true;
    pthread_mutex_unlock(&t->lock);
}

/* ---- frames ----------------------------------------------------------------------------------------------- */

static unsigned task_warnings(const struct top_task *task)
{
    unsigned w = task->sticky;
    if (task->unwakeable && task->state == TASK_IDLE)
        w |= TASK_TOP_LOST_WAKER;
    if (task->boxed_size > BOXED_OVER)
        w |= TASK_TOP_BOXED;
    else if (!task->boxed_size && task->future_size > LARGE_OVER)
        w |= TASK_TOP_LARGE;
    return w;
}

/* Each await point's count now, and whether it grows through the view: never fewer since it was last fewer, more
   in at least half of those frames, over leak_frames frames or more. */
static void follow_sites(struct task_top *t)
{
    for (size_t i = 0; i < t->sites.n; i++)
        t->sites.v[i].count = 0;
    for (size_t i = 0; i < t->tasks.n; i++)
        if (t->tasks.v[i].site != NO_SITE)
            t->sites.v[t->tasks.v[i].site].count++;
    for (size_t i = 0; i < t->sites.n; i++) {
        struct top_site *s = &t->sites.v[i];
        if (s->count == 0 || s->frames == 0 || s->count < s->last_count) {
            s->first_count = s->count;
            s->frames = s->grew = 0;
        }
        if (s->frames && s->count > s->last_count)
            s->grew++;
        s->frames++;
        s->last_count = s->count;
        s->leak = s->count && s->frames >= t->opt.leak_frames && s->count > s->first_count &&
                  2 * s->grew >= s->frames - 1;
    }
}

/* A row's figures from its tasks' sums. */
static void finish_row(const struct task_top *t, struct task_top_row *r, uint64_t samples, uint64_t busy,
                       uint64_t scheduled, uint64_t idle, double interval_s)
{
    r->cpu_percent = t->opt.sample_hz && interval_s > 0 ? 100.0 * (double)samples / t->opt.sample_hz / interval_s
                                                        : -1;
    uint64_t all = busy + scheduled + idle;
    r->busy_percent = all ? 100.0 * (double)busy / (double)all : 0;
    r->scheduled_percent = all ? 100.0 * (double)scheduled / (double)all : 0;
    r->idle_percent = all ? 100.0 * (double)idle / (double)all : 0;
}

static void row_from_site(struct task_top_row *r, const struct top_site *s, uint32_t site)
{
    r->group = site;
    r->root = s->root;
    r->await_frame = s->await_frame;
    r->leaf = s->leaf;
}

/* A group's detail, as task_group_detail words it (the same, a range, or the first). */
static int group_detail(struct task_top *t, uint32_t site, char *buf, size_t len)
{
    t->scratch.n = t->scratch_refs.n = 0;
    for (size_t i = 0; i < t->tasks.n; i++) {
        const struct top_task *task = &t->tasks.v[i];
        struct task_info *ti;
        if (task->site != site)
            continue;
        if (!(ti = vec_push(&t->scratch)))
            return -1;
        ti->id = task->id;
        ti->detail = task->detail[0] ? task->detail : NULL;
    }
    for (size_t i = 0; i < t->scratch.n; i++) {
        const struct task_info **ref = vec_push(&t->scratch_refs);
        if (!ref)
            return -1;
        *ref = &t->scratch.v[i];
    }
    struct task_group g = { .tasks = t->scratch_refs.v, .n = t->scratch_refs.n };
    buf[0] = '\0';
    if (g.n)
        task_group_detail(&g, buf, len);
    return 0;
}

static int make_rows(struct task_top *t, enum task_top_rows mode, uint64_t now, double interval_s)
{
    t->rows.n = 0;
    size_t n = mode == TASK_TOP_GROUPS ? t->sites.n : t->tasks.n;
    if (vec_reserve(&t->site_rows, t->sites.n + 1) != 0)
        return -1;
    for (size_t i = 0; i < t->sites.n; i++)
        t->site_rows.v[i] = UINT32_MAX;
    /* per row: samples, busy, scheduled, idle (the tasks' sums) */
    uint64_t *sums = calloc(4 * (n + 1), sizeof(*sums));
    if (!sums)
        return -1;
    for (size_t i = 0; i < t->tasks.n; i++) {
        struct top_task *task = &t->tasks.v[i];
        if (task->site == NO_SITE)
            continue;
        const struct top_site *s = &t->sites.v[task->site];
        uint32_t at = mode == TASK_TOP_GROUPS ? t->site_rows.v[task->site] : UINT32_MAX;
        if (at == UINT32_MAX) {
            struct task_top_row *r = vec_push(&t->rows);
            if (!r) {
                free(sums);
                return -1;
            }
            at = (uint32_t)(t->rows.n - 1);
            row_from_site(r, s, task->site);
            r->id = task->id;
            r->root_file = task->root_file;
            r->root_line = task->root_line;
            if (mode == TASK_TOP_GROUPS)
                t->site_rows.v[task->site] = at;
            else
                snprintf(r->detail, sizeof(r->detail), "%s", task->detail);
        }
        struct task_top_row *r = &t->rows.v[at];
        r->count++;
        r->states[task->state]++;
        r->warnings |= task_warnings(task) | (s->leak ? TASK_TOP_LEAK : 0);
        if (task->id < r->id)
            r->id = task->id;
        double await_s = (double)(now - task->site_since_ns) / 1e9;
        if (await_s > r->await_s)
            r->await_s = await_s;
        uint64_t *sum = &sums[4 * at];
        sum[0] += task->samples;
        sum[1] += task->busy_ns;
        sum[2] += task->scheduled_ns;
        sum[3] += task->idle_ns;
    }
    int rc = 0;
    for (size_t i = 0; i < t->rows.n; i++) {
        struct task_top_row *r = &t->rows.v[i];
        finish_row(t, r, sums[4 * i], sums[4 * i + 1], sums[4 * i + 2], sums[4 * i + 3], interval_s);
        if (mode == TASK_TOP_GROUPS && rc == 0)
            rc = group_detail(t, r->group, r->detail, sizeof(r->detail));
    }
    free(sums);
    return rc;
}

static const char *await_text(const struct top_site *s, char *buf, size_t len)
{
    if (s->await_frame && s->await_frame->file)
        snprintf(buf, len, "%s @ %s:%u", s->await_frame->function, s->await_frame->file, s->await_frame->line);
    else
        snprintf(buf, len, "%s", s->root ? s->root : "[task entry unknown]");
    return buf;
}

/* A note's text (cut at its size: a long root or await point shortens the line, never overruns it). */
static void note_text(struct task_top_note *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_text(struct task_top_note *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text, sizeof(n->text), fmt, ap);
    va_end(ap);
}

static struct task_top_note *note(struct task_top *t, enum task_top_warning kind, uint64_t task, uint32_t site)
{
    struct task_top_note *n = vec_push(&t->notes);
    if (n) {
        n->kind = kind;
        n->task = task;
        n->group = site;
    }
    return n;
}

/* The warnings panel: per await point and kind, its worst task (the longest poll or wait) and how many more. */
static int make_notes(struct task_top *t)
{
    t->notes.n = 0;
    for (unsigned bit = 1; bit < (1u << TASK_TOP_WARNINGS); bit <<= 1) {
        for (size_t si = 0; si < t->sites.n; si++) {
            const struct top_site *s = &t->sites.v[si];
            const struct top_task *worst = NULL;
            size_t n = 0;
            for (size_t i = 0; i < t->tasks.n; i++) {
                const struct top_task *task = &t->tasks.v[i];
                if (task->site != si || !(task_warnings(task) & bit))
                    continue;
                n++;
                if (!worst || (bit == TASK_TOP_BLOCKING && task->blocked_ns > worst->blocked_ns) ||
                    (bit == TASK_TOP_STARVED && task->starved_ns > worst->starved_ns))
                    worst = task;
            }
            if (bit == TASK_TOP_LEAK && s->leak && s->count) {
                struct task_top_note *l = note(t, TASK_TOP_LEAK, 0, (uint32_t)si);
                char where[400];
                if (!l)
                    return -1;
                note_text(l, "%zu tasks at %.200s, up from %zu over the last %u frames and never "
                         "fewer (%s)", s->count, await_text(s, where, sizeof(where)), s->first_count, s->frames,
                         s->root ? s->root : "?");
            }
            if (!worst)
                continue;
            struct task_top_note *w = note(t, (enum task_top_warning)bit, worst->id, (uint32_t)si);
            char where[400], more[64] = "";
            if (!w)
                return -1;
            if (n > 1)
                snprintf(more, sizeof(more), " (and %zu more tasks here)", n - 1);
            await_text(s, where, sizeof(where));
            switch (bit) {
            case TASK_TOP_LOST_WAKER:
                note_text(w, "task %" PRIu64 " at %.200s: This task has lost its waker, and will "
                         "never be woken again.%s", worst->id, where, more);
                break;
            case TASK_TOP_BLOCKING:
                note_text(w, "task %" PRIu64 " (%s) held its worker (tid %d) in one poll for "
                         "%.0f ms or more%s%s%s", worst->id, s->root ? s->root : "?", (int)worst->blocked_tid,
                         worst->blocked_ns / 1e6, worst->blocked_at[0] ? ", at " : "", worst->blocked_at, more);
                break;
            case TASK_TOP_STARVED:
                note_text(w, "task %" PRIu64 " at %.200s was scheduled, not polled, for %.0f ms or more: queued on "
                         "a worker (tid %d) held in one poll%s", worst->id, where, worst->starved_ns / 1e6,
                         (int)worst->starved_tid, more);
                break;
            case TASK_TOP_BOXED:
                note_text(w, "task %" PRIu64 " (%s): This task's future was auto-boxed by the "
                         "runtime when spawning, due to its size (originally %" PRIu64 " bytes, boxed size %" PRIu64
                         " bytes)%s", worst->id, s->root ? s->root : "?", worst->boxed_size, worst->future_size, more);
                break;
            case TASK_TOP_LARGE:
                note_text(w, "task %" PRIu64 " (%s): This task occupies a large amount of stack "
                         "space (%" PRIu64 " bytes)%s", worst->id, s->root ? s->root : "?", worst->future_size, more);
                break;
            default:
                break;
            }
        }
    }
    return 0;
}

int task_top_frame(struct task_top *t, enum task_top_rows mode, struct task_top_frame *out)
{
    pthread_mutex_lock(&t->lock);
    memset(out, 0, sizeof(*out));
    uint64_t now = now_ns();
    uint64_t since = t->last_frame_ns ? t->last_frame_ns : t->first_ns;
    double interval_s = since && now > since ? (double)(now - since) / 1e9 : 0;
    follow_sites(t);
    int rc = make_rows(t, mode, now, interval_s);
    if (rc == 0)
        rc = make_notes(t);
    t->shown_workers.n = 0;
    for (size_t i = 0; rc == 0 && i < t->workers.n; i++) {
        struct top_worker *w = &t->workers.v[i];
        struct task_top_worker *o = vec_push(&t->shown_workers);
        if (!o) {
            rc = -1;
            break;
        }
        *o = w->shown;
        o->busy_percent = w->snapshots ? 100.0 * (double)w->busy / (double)w->snapshots : 0;
        w->snapshots = w->busy = 0;
    }
    out->number = ++t->frames;
    out->uptime_s = t->first_ns && now > t->first_ns ? (double)(now - t->first_ns) / 1e9 : 0;
    out->interval_s = interval_s;
    out->pid = t->pid;
    out->runtime = t->runtime;
    out->tasks = t->listed;
    memcpy(out->states, t->states, sizeof(out->states));
    out->spawned_known = t->first_next_id && t->next_id >= t->first_next_id;
    if (out->spawned_known) {
        out->spawned = t->next_id - t->first_next_id;
        uint64_t grown = t->listed > t->first_listed ? t->listed - t->first_listed : 0;
        out->ended = out->spawned > grown ? out->spawned - grown : 0;
        if (t->listed < t->first_listed)
            out->ended = out->spawned + (t->first_listed - t->listed);
    } else {
        out->spawned = t->appeared;
        out->ended = t->ended;
    }
    out->workers = t->shown_workers.v;
    out->n_workers = t->shown_workers.n;
    out->global_queue = t->global_queue;
    out->blocking_threads = t->blocking_threads;
    out->blocking_idle = t->blocking_idle;
    out->snapshots = t->snapshots;
    bool sampling = t->opt.sample_hz && interval_s > 0;
    out->cpu_percent = sampling ? 100.0 * (double)t->samples / t->opt.sample_hz / interval_s : -1;
    out->cpu_in_tasks_percent = sampling ? 100.0 * (double)t->samples_in_tasks / t->opt.sample_hz / interval_s : -1;
    uint64_t unlisted = 0;              /* samples of tasks that ended before any snapshot listed them */
    for (size_t i = 0; i < t->pending.n; i++) {
        uint32_t at;
        if (!u64_map_get(&t->task_index, t->pending.v[i].id, &at))
            unlisted += t->pending.v[i].samples;
    }
    out->cpu_unlisted_percent = sampling ? 100.0 * (double)unlisted / t->opt.sample_hz / interval_s : -1;
    out->rows = t->rows.v;
    out->n_rows = t->rows.n;
    out->notes = t->notes.v;
    out->n_notes = t->notes.n;
    out->target_gone = t->gone;
    /* the next interval */
    for (size_t i = 0; i < t->tasks.n; i++) {
        struct top_task *task = &t->tasks.v[i];
        task->samples = task->busy_ns = task->scheduled_ns = task->idle_ns = 0;
    }
    t->samples = t->samples_in_tasks = 0;
    t->pending.n = 0;
    u64_map_clear(&t->pending_index);
    t->last_frame_ns = now;
    pthread_mutex_unlock(&t->lock);
    return rc;
}

static int by_samples_desc(const void *a, const void *b)
{
    const struct hot_frame *x = a, *y = b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->name, y->name);
}

size_t task_top_hot_frames(struct task_top *t, uint32_t group, const char **frames, uint64_t *samples, size_t max)
{
    pthread_mutex_lock(&t->lock);
    size_t n = 0;
    if (group < t->sites.n) {
        const struct top_site *s = &t->sites.v[group];
        struct hot_frame *sorted = s->hot.n ? malloc(s->hot.n * sizeof(*sorted)) : NULL;
        if (sorted) {
            memcpy(sorted, s->hot.v, s->hot.n * sizeof(*sorted));
            qsort(sorted, s->hot.n, sizeof(*sorted), by_samples_desc);
            for (n = 0; n < s->hot.n && n < max; n++) {
                frames[n] = sorted[n].name;
                samples[n] = sorted[n].samples;
            }
            free(sorted);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

size_t task_top_tree(struct task_top *t, uint32_t group, const struct task_node **nodes)
{
    pthread_mutex_lock(&t->lock);
    size_t n = 0;
    *nodes = NULL;
    if (group < t->sites.n) {
        *nodes = t->sites.v[group].nodes;
        n = t->sites.v[group].n_nodes;
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}
