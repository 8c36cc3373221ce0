/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_profile.c: the wait-time profile. Events are buffered until a round says every event up to a time
 * has come, then applied in time order to a small state per task (polling or waiting since, woken at, where
 * it was suspended); each wait is settled when the task's next poll starts (or at the stop) and added to its
 * suspension stack's two counters. Stacks are interned in a private tree (one node per distinct stack). */
#include "flamegraph/wait_profile.h"

#include "base/u64_map.h"
#include "base/vec.h"
#include "flamegraph/runtime_rules.h"

#include <stdlib.h>
#include <string.h>

#define ROOT_ONLY PROFILE_NO_NODE        /* a task's suspension stack is its root alone */
#define WAIT_STACK 0xffu                 /* buffered event kind: a registration stack (after wait_event_kind) */

enum task_phase { PHASE_UNKNOWN, PHASE_POLLING, PHASE_WAITING, PHASE_DONE };

/* How many call sites' stacks a task remembers (wait_profile_stack's call_site). */
#define SITE_STACKS 4

/* The last stack a task registered from one call site. */
struct site_stack {
    uint64_t call_site;                  /* 0: unused */
    uint32_t stack, key;
};

struct wait_times {
    uint64_t suspended_ns, runnable_ns, longest_runnable_ns;
    uint64_t waits;
};

struct task_wait {
    uint64_t id;
    uint8_t phase;
    bool woken_in_poll;                  /* a wake came during the current poll */
    bool registered_in_poll;             /* the current poll registered a waker */
    bool registered;                     /* the poll the task waits after registered a waker */
    bool ever_registered;                /* some poll of it did, while recorded */
    uint32_t poll_stack;                 /* stack registered in the current poll (ROOT_ONLY: none yet) */
    bool poll_has_stack;
    uint32_t stack;                      /* where the task is suspended (ROOT_ONLY: its root) */
    uint32_t poll_key, key;              /* the caller's keys of poll_stack and stack */
    struct site_stack site_stacks[SITE_STACKS];   /* by call site, the oldest replaced first */
    uint8_t next_site_stack;
    bool finished;                       /* terminated, and its last poll is over: nothing more to count */
    uint64_t wait_since;                 /* end of the poll it waits after */
    uint32_t poll_thread;                /* the thread of the current poll (0: unknown) */
    uint64_t poll_start_ns;              /* ... when it began */
    uint64_t last_registered_ns;         /* ... its last waker registration (0: none yet) */
    uint64_t woken_since_registered;     /* ... its first wake after that registration (0: none) */
    bool ended_unreported;               /* waiting since an end taken without a poll-end event */
    uint32_t end_due_thread;             /* a thread whose poll of it began another's overlapped (0: none) */
    uint64_t woken_at;                   /* 0: not woken since */
    uint64_t accounted_until;            /* no wait of this task counts before this */
    /* [0] certain waits, [1] doubtful ones: after a poll that registered no waker and was not woken again
     * (or woken, but the task never registered one): a completed task's, if the runtime says nothing of
     * completion (wait_profile_finish decides) */
    struct wait_times root[2];           /* waits filed under the task's root alone */
    struct wait_times total[2];          /* all its waits */
};

struct buffered_event {
    uint64_t time_ns;
    uint64_t task_id;
    uint64_t seq;                        /* arrival order: keeps one thread's events in their order */
    uint32_t stack;                      /* WAIT_STACK: the stack's node */
    uint32_t key;                        /* WAIT_STACK: the caller's key of it */
    uint32_t thread;                     /* as wait_event's (0: unknown) */
    uint64_t call_site;                  /* WAIT_REGISTERED, WAIT_STACK: as wait_event's (0: unknown) */
    uint8_t kind;
};

struct stack_times {
    struct wait_times by_doubt[2];       /* certain, doubtful (as in task_wait) */
};

/* The waits under one suspension stack as one caller's key of it (wait_profile_each_site). */
struct site_times {
    uint32_t key, node;
    struct wait_times by_doubt[2];
};

/* The root-only waits of the tasks taken out of the table, by root; [variant][0 suspended, 1 runnable], the
 * variants as kept() gives them: [0] certain waits only, [1] doubtful ones too. */
struct retired_root {
    uint32_t root;                       /* frame id of names */
    uint64_t line_us[2][2];              /* the sum of each task's own line (whole microseconds) */
    uint64_t ns[2][2];
};

/* What the tasks taken out of the table leave for wait_profile_finish (by variant, as retired_root). */
struct retired {
    VEC_OF(struct retired_root) roots;
    struct u64_map root_index;           /* root frame -> index into roots */
    uint64_t tasks[2], intervals[2], suspended_ns[2], runnable_ns[2];
    uint64_t doubtful_waits;             /* their doubtful waits (taken as ready when left out) */
    struct wait_task_total longest[2];   /* the one with the longest [runnable] delay */
    struct wait_task_total top[2][WAIT_LISTED_RETIRED];   /* longest total wait first */
    size_t n_top[2];
};

/* A thread's current poll, for polls whose end is not reported (see wait_profile.h). */
struct thread_poll {
    uint32_t thread;
    uint64_t task_id;
    uint64_t start_ns;
    bool open;                           /* a poll began here and no end is known */
    bool reports_ends;                   /* a poll-end event came from this thread */
};

struct wait_profile {
    struct task_stacks *stacks;
    const struct profile *names;
    struct wait_options options;
    struct profile *tree;                /* distinct suspension stacks; frames interned by name */
    VEC_OF(uint32_t) tree_frame;         /* names' frame id -> tree frame id (PROFILE_NO_FRAME: not yet) */
    VEC_OF(struct stack_times) times;    /* by tree node */
    struct u64_map site_index;           /* key << 32 | tree node -> index into sites */
    VEC_OF(struct site_times) sites;
    bool keep_doubtful;                  /* as wait_profile_finish decided */
    VEC_OF(struct buffered_event) pending;
    uint64_t seq;
    struct u64_map task_index;           /* task id -> index into tasks */
    struct u64_map thread_index;         /* thread -> index into threads */
    VEC_OF(struct thread_poll) threads;
    VEC_OF(struct task_wait) tasks;
    size_t compact_at;                   /* take the finished tasks out when the table holds this many */
    size_t n_finished;                   /* finished tasks in the table */
    struct retired retired;
    VEC_OF(struct wait_task_total) totals;
    VEC_OF(uint32_t) path;               /* scratch: one stack's tree frames */
    uint64_t stop_ns;                    /* UINT64_MAX until finish */
    struct wait_summary summary;
};

struct wait_profile *wait_profile_new(struct task_stacks *stacks, const struct profile *names,
                                      const struct wait_options *options)
{
    struct wait_profile *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->stacks = stacks;
    w->names = names;
    w->options = *options;
    w->stop_ns = UINT64_MAX;
    w->compact_at = 256;
    w->summary.longest_runnable_root = PROFILE_NO_FRAME;
    if (!(w->tree = profile_new()) || u64_map_init(&w->task_index, 256) != 0 || u64_map_init(&w->thread_index, 16) != 0 ||
        u64_map_init(&w->site_index, 256) != 0 || u64_map_init(&w->retired.root_index, 64) != 0) {
        wait_profile_free(w);
        return NULL;
    }
    return w;
}

void wait_profile_free(struct wait_profile *w)
{
    if (!w)
        return;
    profile_free(w->tree);
    vec_free(&w->tree_frame);
    vec_free(&w->times);
    u64_map_free(&w->site_index);
    vec_free(&w->sites);
    vec_free(&w->retired.roots);
    u64_map_free(&w->retired.root_index);
    vec_free(&w->pending);
    u64_map_free(&w->task_index);
    u64_map_free(&w->thread_index);
    vec_free(&w->threads);
    vec_free(&w->tasks);
    vec_free(&w->totals);
    vec_free(&w->path);
    free(w);
}

static struct task_wait *task_of(struct wait_profile *w, uint64_t id)
{
    uint32_t index;
    int added = u64_map_index(&w->task_index, id, &w->tasks, &index);
    if (added < 0)
        return NULL;
    struct task_wait *t = &w->tasks.v[index];
    if (!added)
        return t;
    t->id = id;
    t->phase = PHASE_UNKNOWN;
    t->stack = t->poll_stack = ROOT_ONLY;
    t->key = t->poll_key = WAIT_NO_KEY;
    return t;
}

static int buffer(struct wait_profile *w, uint8_t kind, uint64_t task_id, uint64_t time_ns, uint32_t stack,
                  uint32_t key, uint32_t thread, uint64_t call_site)
{
    struct buffered_event *e = vec_push(&w->pending);
    if (!e)
        return -1;
    *e = (struct buffered_event){ .time_ns = time_ns, .task_id = task_id, .seq = w->seq++, .stack = stack,
                                  .key = key, .thread = thread, .call_site = call_site, .kind = kind };
    return 0;
}

int wait_profile_event(struct wait_profile *w, const struct wait_event *e)
{
    return buffer(w, (uint8_t)e->kind, e->task_id, e->time_ns, 0, WAIT_NO_KEY, e->thread,
                  e->kind == WAIT_REGISTERED ? e->call_site : 0);
}

/* The tree's id of a frame of names. */
static uint32_t tree_frame(struct wait_profile *w, uint32_t frame)
{
    if (frame >= w->tree_frame.n) {
        if (vec_reserve(&w->tree_frame, (size_t)frame + 1) != 0)
            return PROFILE_NO_FRAME;
        while (w->tree_frame.n <= frame)
            w->tree_frame.v[w->tree_frame.n++] = PROFILE_NO_FRAME;
    }
    if (w->tree_frame.v[frame] == PROFILE_NO_FRAME) {
        const char *name = profile_frame_name(w->names, frame);
        w->tree_frame.v[frame] = profile_intern(w->tree, name, strlen(name));
    }
    return w->tree_frame.v[frame];
}

/* Where the waker machinery begins: the outermost of its frames (n when none is on the stack). */
size_t wait_profile_kept_frames(const struct stack_frame *const *frames, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (frames[i]->runtime & RUNTIME_WAKER)
            return i;
    return n;
}

/* The index of the site of key at tree node, made when new; UINT32_MAX when out of memory. */
static uint32_t site_of(struct wait_profile *w, uint32_t key, uint32_t node)
{
    uint64_t site_key = (uint64_t)key << 32 | node;
    uint32_t index;
    int added = u64_map_index(&w->site_index, site_key, &w->sites, &index);
    if (added < 0)
        return UINT32_MAX;
    if (added)
        w->sites.v[index] = (struct site_times){ .key = key, .node = node };
    return index;
}

int wait_profile_stack(struct wait_profile *w, uint64_t task_id, uint64_t time_ns, uint32_t thread_root,
                       const struct stack_frame *const *frames, size_t n, uint32_t key, uint64_t call_site)
{
    const uint32_t *ids;
    size_t n_ids;
    if (task_stacks_cut(w->stacks, thread_root, task_id, frames, wait_profile_kept_frames(frames, n), &ids, &n_ids) != 0)
        return -1;
    uint32_t node = ROOT_ONLY;
    if (n_ids > 0) {
        if (vec_reserve(&w->path, n_ids) != 0)
            return -1;
        for (size_t i = 0; i < n_ids; i++)
            if ((w->path.v[i] = tree_frame(w, ids[i])) == PROFILE_NO_FRAME)
                return -1;
        if (profile_add_ids(w->tree, w->path.v, n_ids, 0) != 0)
            return -1;
        node = profile_last_leaf(w->tree);
        if (vec_reserve(&w->times, (size_t)node + 1) != 0)
            return -1;
        while (w->times.n <= node)
            w->times.v[w->times.n++] = (struct stack_times){ 0 };
    }
    if (node != ROOT_ONLY && site_of(w, key, node) == UINT32_MAX)
        return -1;
    return buffer(w, WAIT_STACK, task_id, time_ns, node, key, 0, call_site);
}

static void add_time(struct wait_times *to, uint64_t suspended_ns, uint64_t runnable_ns)
{
    to->suspended_ns += suspended_ns;
    to->runnable_ns += runnable_ns;
    if (runnable_ns > to->longest_runnable_ns)
        to->longest_runnable_ns = runnable_ns;
    to->waits++;
}

/* The await point of a suspension stack: its innermost "NAME @ FILE:LINE" frame, else its leaf; NULL for
 * ROOT_ONLY. */
static const char *site_name(const struct wait_profile *w, uint32_t node)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(w->tree, &n_nodes);
    if (node == ROOT_ONLY || node == 0 || node >= n_nodes)
        return NULL;
    for (uint32_t at = node; at != 0; at = nodes[at].parent) {
        const char *name = profile_frame_name(w->tree, nodes[at].frame);
        if (strstr(name, " @ "))
            return name;
    }
    return profile_frame_name(w->tree, nodes[node].frame);
}

/* The wait of t that ends at end_ns: from its poll's end to the wake [suspended], to end_ns [runnable]. */
static void settle(struct wait_profile *w, struct task_wait *t, uint64_t end_ns)
{
    int doubtful = !t->registered && !(t->woken_at && t->ever_registered);
    uint64_t from = t->wait_since;
    if (from < t->accounted_until)
        from = t->accounted_until;
    if (from < w->options.start_ns)
        from = w->options.start_ns;
    if (end_ns > w->stop_ns)
        end_ns = w->stop_ns;
    if (end_ns <= from)
        return;
    uint64_t wake = t->woken_at ? t->woken_at : end_ns;
    wake = wake < from ? from : wake > end_ns ? end_ns : wake;
    t->accounted_until = end_ns;
    struct wait_times *at = t->stack == ROOT_ONLY ? &t->root[doubtful] : &w->times.v[t->stack].by_doubt[doubtful];
    add_time(at, wake - from, end_ns - wake);
    if (t->stack != ROOT_ONLY) {
        uint32_t site = site_of(w, t->key, t->stack);      /* made with the stack: found */
        if (site != UINT32_MAX)
            add_time(&w->sites.v[site].by_doubt[doubtful], wake - from, end_ns - wake);
    }
    add_time(&t->total[doubtful], wake - from, end_ns - wake);
    if (w->options.on_interval) {
        struct wait_interval iv = { .task_id = t->id, .start_ns = from, .woken_ns = wake, .end_ns = end_ns,
                                    .site = site_name(w, t->stack), .doubtful = doubtful };
        w->options.on_interval(w->options.interval_ctx, &iv);
    }
}

static void begin_poll(struct task_wait *t, uint32_t thread, uint64_t time_ns)
{
    t->phase = PHASE_POLLING;
    t->woken_in_poll = false;
    t->registered_in_poll = false;
    t->poll_has_stack = false;
    t->poll_thread = thread;
    t->poll_start_ns = time_ns;
    t->last_registered_ns = 0;
    t->woken_since_registered = 0;
    t->ended_unreported = false;
}

/* The poll of t ended at end_ns (Pending): it waits from there, suspended where it registered last. */
/* The current poll's registration, if any, is where t is suspended from now on (else still where it last
 * registered). */
static void keep_poll_stack(struct task_wait *t)
{
    if (t->poll_has_stack) {
        t->stack = t->poll_stack;
        t->key = t->poll_key;
    }
    t->ever_registered |= t->registered_in_poll;
}

static void end_poll(struct task_wait *t, uint64_t end_ns)
{
    keep_poll_stack(t);
    t->registered = t->registered_in_poll;
    t->phase = PHASE_WAITING;
    t->wait_since = end_ns;
    t->woken_at = t->woken_in_poll ? end_ns : 0;
}

/* The poll of t is known to be over but its end was not reported (wait_profile.h): it ended at its last waker
 * registration, or at its start when it registered none; a wake after that point splits the wait, one before
 * it (during the poll) makes it runnable from there. A task that terminated in it is finished. */
static void end_unreported_poll(struct wait_profile *w, struct task_wait *t)
{
    if (t->phase == PHASE_DONE) {
        if (!t->finished)
            w->n_finished++;
        t->finished = true;
        return;
    }
    uint64_t end = t->last_registered_ns > t->poll_start_ns ? t->last_registered_ns : t->poll_start_ns;
    uint64_t woken_after = t->woken_since_registered;
    end_poll(t, end);
    if (woken_after)
        t->woken_at = woken_after < end ? end : woken_after;
    t->ended_unreported = true;
}

/* The state of thread (NULL: unknown, or no memory: then its polls end at their task's next poll start). */
static struct thread_poll *thread_of(struct wait_profile *w, uint32_t thread)
{
    uint32_t index;
    if (thread == 0)
        return NULL;
    int added = u64_map_index(&w->thread_index, thread, &w->threads, &index);
    if (added < 0)
        return NULL;
    if (added)
        w->threads.v[index].thread = thread;
    return &w->threads.v[index];
}

/* A poll starts on th: the poll still open there (on a thread that does not report poll ends) is over. */
static void close_thread_poll(struct wait_profile *w, struct thread_poll *th)
{
    uint32_t index;
    if (!th || !th->open || th->reports_ends || !u64_map_get(&w->task_index, th->task_id, &index))
        return;
    struct task_wait *prev = &w->tasks.v[index];
    if ((prev->phase == PHASE_POLLING || prev->phase == PHASE_DONE) && prev->poll_thread == th->thread &&
        prev->poll_start_ns == th->start_ns)
        end_unreported_poll(w, prev);
    th->open = false;
}

/* t registered its waker during its poll at time_ns: a wake before is one during the poll. */
static void note_registration(struct task_wait *t, uint64_t time_ns)
{
    t->registered_in_poll = true;
    if (time_ns > t->last_registered_ns)
        t->last_registered_ns = time_ns;
    t->woken_since_registered = 0;
}

/* t's stack from call_site (not 0) is stack now. */
static void remember_site_stack(struct task_wait *t, uint64_t call_site, uint32_t stack, uint32_t key)
{
    struct site_stack *at = NULL;
    for (size_t i = 0; i < SITE_STACKS && !at; i++)
        if (t->site_stacks[i].call_site == call_site)
            at = &t->site_stacks[i];
    if (!at) {
        at = &t->site_stacks[t->next_site_stack];
        t->next_site_stack = (uint8_t)((t->next_site_stack + 1) % SITE_STACKS);
    }
    *at = (struct site_stack){ call_site, stack, key };
}

/* t registered from call_site (not 0) in its poll without a stack of its own: the current poll is suspended
 * where t last registered from that site; at a site t has no stack of, while it has some of others, at its
 * root alone (its last stack is another site's); with none of any site, where it was (wait_profile.h). */
static void registered_without_stack(struct task_wait *t, uint64_t call_site)
{
    bool any = false;
    for (size_t i = 0; i < SITE_STACKS; i++) {
        const struct site_stack *s = &t->site_stacks[i];
        if (s->call_site == call_site) {
            t->poll_stack = s->stack;
            t->poll_key = s->key;
            t->poll_has_stack = true;
            return;
        }
        any |= s->call_site != 0;
    }
    if (any) {
        t->poll_stack = ROOT_ONLY;
        t->poll_key = WAIT_NO_KEY;
        t->poll_has_stack = true;
    }
}

/* A poll of t starts on thread while its poll on another thread, one that reports its poll ends, is still
 * open and was woken during it: the two overlap. */
static bool overlapping_poll(struct wait_profile *w, const struct task_wait *t, uint32_t thread)
{
    if (t->phase != PHASE_POLLING || !t->woken_in_poll || thread == 0 || t->poll_thread == 0 ||
        t->poll_thread == thread)
        return false;
    uint32_t index;
    return u64_map_get(&w->thread_index, t->poll_thread, &index) && w->threads.v[index].reports_ends;
}

/* A later end of the poll t waits after (one taken early, or another's it overlapped): t waits from end_ns. */
static void wait_from_later_end(struct task_wait *t, uint64_t end_ns)
{
    t->wait_since = end_ns;
    if (t->woken_at && t->woken_at < end_ns)
        t->woken_at = end_ns;
}

static void apply(struct wait_profile *w, const struct buffered_event *e)
{
    struct task_wait *t = task_of(w, e->task_id);
    if (!t)
        return;                          /* no memory for a new task: its waits are left out */
    struct thread_poll *th = e->kind == WAIT_POLL_START || e->kind == WAIT_POLL_END ? thread_of(w, e->thread) : NULL;
    switch (e->kind) {
    case WAIT_POLL_START:
        close_thread_poll(w, th);
        if (overlapping_poll(w, t, e->thread)) {
            /* woken while polled and polled again on another thread before that poll's end (tokio pushes a
             * task notified while running to a run queue before its poll returns, and another worker may
             * steal it): never waiting in between; the earlier poll's end, still due, ends nothing */
            t->end_due_thread = t->poll_thread;
            keep_poll_stack(t);
        } else {
            if (t->phase == PHASE_POLLING || (t->phase == PHASE_DONE && !t->finished))
                end_unreported_poll(w, t);   /* its end never came: the poll is over by now */
            if (t->phase == PHASE_WAITING)
                settle(w, t, e->time_ns);
            if (t->finished) {               /* its id reused by a new task */
                t->finished = false;
                w->n_finished--;
            }
        }
        begin_poll(t, e->thread, e->time_ns);
        if (th)
            *th = (struct thread_poll){ .thread = e->thread, .task_id = t->id, .start_ns = e->time_ns,
                                        .open = true, .reports_ends = th->reports_ends };
        break;
    case WAIT_POLL_END:
        if (th) {
            th->reports_ends = true;
            th->open = false;
        }
        if (e->thread && e->thread == t->end_due_thread) {
            t->end_due_thread = 0;
            if (e->thread != t->poll_thread) {
                /* the end of a poll another overlapped: the task waits from the later of the two ends */
                if (t->phase == PHASE_WAITING && e->time_ns >= t->wait_since)
                    wait_from_later_end(t, e->time_ns);
                break;
            }
        }
        if (t->phase == PHASE_DONE) {    /* terminated during this poll: it returned Ready */
            if (!t->finished)
                w->n_finished++;
            t->finished = true;
            break;
        }
        if (t->phase == PHASE_WAITING && t->ended_unreported && e->time_ns >= t->wait_since) {
            /* its end came after all (another poll began on its thread first, as a nested poll does) */
            wait_from_later_end(t, e->time_ns);
            t->ended_unreported = false;
            break;
        }
        end_poll(t, e->time_ns);
        break;
    case WAIT_WAKE:
        if (t->phase == PHASE_WAITING) {
            if (!t->woken_at)
                t->woken_at = e->time_ns;
        } else if (t->phase != PHASE_DONE) {
            t->woken_in_poll = true;
            if (!t->woken_since_registered)
                t->woken_since_registered = e->time_ns;
        }
        break;
    case WAIT_REGISTERED:
        if (t->phase != PHASE_WAITING && t->phase != PHASE_DONE) {
            note_registration(t, e->time_ns);
            if (e->call_site)
                registered_without_stack(t, e->call_site);
        }
        break;
    case WAIT_TERMINATE:
        if (t->phase == PHASE_WAITING)
            w->summary.taken_as_ready++;
        if (t->phase != PHASE_POLLING && !t->finished) {
            t->finished = true;          /* not in a poll: no poll end to wait for */
            w->n_finished++;
        }
        t->phase = PHASE_DONE;
        break;
    case WAIT_STACK:
        if (t->phase == PHASE_WAITING || t->phase == PHASE_DONE) {
            w->summary.stray_stacks++;   /* not in a poll of this task: not where it suspends */
            break;
        }
        note_registration(t, e->time_ns);
        t->poll_stack = e->stack;
        t->poll_key = e->key;
        t->poll_has_stack = true;
        if (e->call_site)
            remember_site_stack(t, e->call_site, e->stack, e->key);
        w->summary.stacks++;
        break;
    }
}

static int by_time(const void *a, const void *b)
{
    const struct buffered_event *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int retire_finished(struct wait_profile *w);

int wait_profile_round(struct wait_profile *w, uint64_t until_ns)
{
    if (w->pending.n == 0)
        return 0;
    qsort(w->pending.v, w->pending.n, sizeof(w->pending.v[0]), by_time);
    size_t done = 0;
    while (done < w->pending.n && w->pending.v[done].time_ns <= until_ns)
        apply(w, &w->pending.v[done++]);
    if (done < w->pending.n)
        memmove(w->pending.v, w->pending.v + done, (w->pending.n - done) * sizeof(w->pending.v[0]));
    w->pending.n -= done;
    if (w->n_finished > 0 && w->tasks.n >= w->compact_at)
        return retire_finished(w);
    return 0;
}

/* Add a stack's time as two lines, "...;[suspended] US" and "...;[runnable] US". names: root first. */
static int add_lines(struct profile *out, const char **names, size_t n, uint64_t suspended_ns, uint64_t runnable_ns)
{
    names[n] = "[suspended]";
    if (suspended_ns >= 1000 && profile_add(out, names, n + 1, suspended_ns / 1000) != 0)
        return -1;
    names[n] = "[runnable]";
    if (runnable_ns >= 1000 && profile_add(out, names, n + 1, runnable_ns / 1000) != 0)
        return -1;
    return 0;
}

/* Certain waits, and the doubtful ones too unless they are taken as completed tasks' (keep_doubtful false). */
static struct wait_times kept(const struct wait_times by_doubt[2], bool keep_doubtful)
{
    struct wait_times k = by_doubt[0];
    if (keep_doubtful) {
        k.suspended_ns += by_doubt[1].suspended_ns;
        k.runnable_ns += by_doubt[1].runnable_ns;
        k.waits += by_doubt[1].waits;
        if (by_doubt[1].longest_runnable_ns > k.longest_runnable_ns)
            k.longest_runnable_ns = by_doubt[1].longest_runnable_ns;
    }
    return k;
}

/* Insert row into a list of at most WAIT_LISTED_RETIRED rows, longest total wait first. */
static int by_total_wait(const void *a, const void *b);
static void keep_top(struct wait_task_total *top, size_t *n, const struct wait_task_total *row)
{
    size_t at = *n;
    while (at > 0 && by_total_wait(row, &top[at - 1]) < 0)
        at--;
    if (at >= WAIT_LISTED_RETIRED)
        return;
    size_t last = *n < WAIT_LISTED_RETIRED ? *n : WAIT_LISTED_RETIRED - 1;
    memmove(&top[at + 1], &top[at], (last - at) * sizeof(*top));
    top[at] = *row;
    if (*n < WAIT_LISTED_RETIRED)
        (*n)++;
}

/* Fold a finished task whose root is root into the retired totals, as write_roots_and_totals would count it. */
static int retire(struct wait_profile *w, const struct task_wait *t, uint32_t root)
{
    struct retired *r = &w->retired;
    r->doubtful_waits += t->total[1].waits;
    for (int v = 0; v < 2; v++) {
        struct wait_times total = kept(t->total, v), root_only = kept(t->root, v);
        if (total.suspended_ns + total.runnable_ns == 0)
            continue;
        uint32_t index;
        int added = u64_map_index(&r->root_index, root, &r->roots, &index);
        if (added < 0)
            return -1;
        struct retired_root *rr = &r->roots.v[index];
        if (added)
            rr->root = root;
        rr->line_us[v][0] += root_only.suspended_ns / 1000;
        rr->line_us[v][1] += root_only.runnable_ns / 1000;
        rr->ns[v][0] += root_only.suspended_ns;
        rr->ns[v][1] += root_only.runnable_ns;
        struct wait_task_total row = { .task_id = t->id, .root = root, .suspended_ns = total.suspended_ns,
                                       .runnable_ns = total.runnable_ns,
                                       .longest_runnable_ns = total.longest_runnable_ns };
        r->tasks[v]++;
        r->intervals[v] += total.waits;
        r->suspended_ns[v] += total.suspended_ns;
        r->runnable_ns[v] += total.runnable_ns;
        if (row.longest_runnable_ns > r->longest[v].longest_runnable_ns)
            r->longest[v] = row;
        keep_top(r->top[v], &r->n_top[v], &row);
    }
    return 0;
}

/* Take the finished tasks whose root is known out of the table (folded into the retired totals), then index
 * the rest again. */
static int retire_finished(struct wait_profile *w)
{
    size_t kept_n = 0;
    for (size_t i = 0; i < w->tasks.n; i++) {
        const struct task_wait *t = &w->tasks.v[i];
        if (t->finished) {
            uint32_t root = task_stacks_task_root(w->stacks, t->id);
            if (root == PROFILE_NO_FRAME)
                return -1;
            /* a root not known yet may be learnt from samples still to come: keep the task until then */
            if (strcmp(profile_frame_name(w->names, root), "[task entry unknown]") != 0) {
                if (retire(w, t, root) != 0)
                    return -1;
                w->n_finished--;
                continue;
            }
        }
        w->tasks.v[kept_n++] = *t;
    }
    w->tasks.n = kept_n;
    u64_map_free(&w->task_index);
    if (u64_map_init(&w->task_index, kept_n * 2 > 256 ? kept_n * 2 : 256) != 0)
        return -1;
    for (size_t i = 0; i < kept_n; i++)
        if (u64_map_put(&w->task_index, w->tasks.v[i].id, (uint32_t)i) != 0)
            return -1;
    w->compact_at = 2 * kept_n + 256;
    return 0;
}

size_t wait_profile_tasks_held(const struct wait_profile *w)
{
    return w->tasks.n;
}

static int write_stacks(struct wait_profile *w, struct profile *out, bool keep_doubtful)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(w->tree, &n_nodes);
    VEC_OF(const char *) names = { 0 };
    int rc = 0;
    for (size_t node = 1; node < w->times.n && node < n_nodes && rc == 0; node++) {
        struct wait_times st = kept(w->times.v[node].by_doubt, keep_doubtful);
        if (st.suspended_ns < 1000 && st.runnable_ns < 1000)
            continue;
        size_t depth = 0;
        for (uint32_t at = (uint32_t)node; at != 0; at = nodes[at].parent)
            depth++;
        if (vec_reserve(&names, depth + 1) != 0) {
            rc = -1;
            break;
        }
        size_t i = depth;
        for (uint32_t at = (uint32_t)node; at != 0; at = nodes[at].parent)
            names.v[--i] = profile_frame_name(w->tree, nodes[at].frame);
        rc = add_lines(out, names.v, depth, st.suspended_ns, st.runnable_ns);
    }
    vec_free(&names);
    return rc;
}

static int by_total_wait(const void *a, const void *b)
{
    const struct wait_task_total *x = a, *y = b;
    uint64_t tx = x->suspended_ns + x->runnable_ns, ty = y->suspended_ns + y->runnable_ns;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return x->task_id < y->task_id ? -1 : x->task_id > y->task_id;
}

/* The retired tasks' root lines and totals (before the table's). */
static int write_retired(struct wait_profile *w, struct profile *out, bool keep_doubtful)
{
    const struct retired *r = &w->retired;
    struct wait_summary *s = &w->summary;
    int v = keep_doubtful;
    for (size_t i = 0; i < r->roots.n; i++) {
        const char *names[2] = { profile_frame_name(w->names, r->roots.v[i].root), "[suspended]" };
        if (r->roots.v[i].line_us[v][0] && profile_add(out, names, 2, r->roots.v[i].line_us[v][0]) != 0)
            return -1;
        names[1] = "[runnable]";
        if (r->roots.v[i].line_us[v][1] && profile_add(out, names, 2, r->roots.v[i].line_us[v][1]) != 0)
            return -1;
    }
    if (!keep_doubtful)
        s->taken_as_ready += r->doubtful_waits;
    for (size_t i = 0; i < r->n_top[v]; i++) {
        struct wait_task_total *row = vec_push(&w->totals);
        if (!row)
            return -1;
        *row = r->top[v][i];
    }
    s->n_tasks += r->tasks[v];
    s->intervals += r->intervals[v];
    s->suspended_ns += r->suspended_ns[v];
    s->runnable_ns += r->runnable_ns[v];
    if (r->longest[v].longest_runnable_ns > s->longest_runnable_ns) {
        s->longest_runnable_ns = r->longest[v].longest_runnable_ns;
        s->longest_runnable_task = r->longest[v].task_id;
        s->longest_runnable_root = r->longest[v].root;
    }
    return 0;
}

/* The waits filed under task roots alone, and every task's totals for the summary. */
static int write_roots_and_totals(struct wait_profile *w, struct profile *out, bool keep_doubtful)
{
    struct wait_summary *s = &w->summary;
    if (write_retired(w, out, keep_doubtful) != 0)
        return -1;
    for (size_t i = 0; i < w->tasks.n; i++) {
        const struct task_wait *t = &w->tasks.v[i];
        struct wait_times total = kept(t->total, keep_doubtful), root_only = kept(t->root, keep_doubtful);
        if (!keep_doubtful)
            s->taken_as_ready += t->total[1].waits;
        if (total.suspended_ns + total.runnable_ns == 0)
            continue;
        uint32_t root = task_stacks_task_root(w->stacks, t->id);
        if (root == PROFILE_NO_FRAME)
            return -1;
        const char *names[2] = { profile_frame_name(w->names, root), NULL };
        if (add_lines(out, names, 1, root_only.suspended_ns, root_only.runnable_ns) != 0)
            return -1;
        struct wait_task_total *row = vec_push(&w->totals);
        if (!row)
            return -1;
        s->n_tasks++;
        *row = (struct wait_task_total){ .task_id = t->id, .root = root, .suspended_ns = total.suspended_ns,
                                         .runnable_ns = total.runnable_ns,
                                         .longest_runnable_ns = total.longest_runnable_ns };
        s->intervals += total.waits;
        s->suspended_ns += total.suspended_ns;
        s->runnable_ns += total.runnable_ns;
        if (total.longest_runnable_ns > s->longest_runnable_ns) {
            s->longest_runnable_ns = total.longest_runnable_ns;
            s->longest_runnable_task = t->id;
            s->longest_runnable_root = root;
        }
    }
    if (w->totals.n)
        qsort(w->totals.v, w->totals.n, sizeof(w->totals.v[0]), by_total_wait);
    s->tasks = w->totals.v;
    s->n_listed = w->totals.n;
    return 0;
}

struct profile *wait_profile_finish(struct wait_profile *w, uint64_t stop_ns, bool ready_unless_registered)
{
    if (wait_profile_round(w, UINT64_MAX) != 0)
        return NULL;
    w->stop_ns = stop_ns;
    w->keep_doubtful = !ready_unless_registered;
    /* polls still open whose end is not reported are taken as over (one that registered a waker returned
       Pending; the wait after one that did not is doubtful, as after any poll without a registration) */
    for (size_t i = 0; i < w->threads.n; i++)
        close_thread_poll(w, &w->threads.v[i]);
    for (size_t i = 0; i < w->tasks.n; i++)
        if (w->tasks.v[i].phase == PHASE_WAITING)
            settle(w, &w->tasks.v[i], stop_ns);
    struct profile *out = profile_new();
    if (!out || write_stacks(w, out, !ready_unless_registered) != 0 ||
        write_roots_and_totals(w, out, !ready_unless_registered) != 0) {
        profile_free(out);
        return NULL;
    }
    return out;
}

int wait_profile_each_site(struct wait_profile *w, int (*fn)(void *ctx, const struct wait_site_time *t), void *ctx)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(w->tree, &n_nodes);
    VEC_OF(uint32_t) names_of = { 0 };   /* tree frame id -> names' frame id */
    size_t n_tree_frames = profile_frame_count(w->tree);
    if (vec_reserve(&names_of, n_tree_frames + 1) != 0)
        return -1;
    for (size_t i = 0; i < w->tree_frame.n; i++)
        if (w->tree_frame.v[i] != PROFILE_NO_FRAME && w->tree_frame.v[i] < n_tree_frames)
            names_of.v[w->tree_frame.v[i]] = (uint32_t)i;
    int rc = 0;
    for (size_t i = 0; i < w->sites.n && rc == 0; i++) {
        const struct site_times *st = &w->sites.v[i];
        struct wait_times k = kept(st->by_doubt, w->keep_doubtful);
        if (k.suspended_ns + k.runnable_ns == 0 || st->node >= n_nodes)
            continue;
        uint32_t node = st->node;
        while (nodes[node].parent != 0)
            node = nodes[node].parent;
        struct wait_site_time t = { .key = st->key, .root = names_of.v[nodes[node].frame],
                                    .suspended_ns = k.suspended_ns, .runnable_ns = k.runnable_ns };
        rc = fn(ctx, &t);
    }
    vec_free(&names_of);
    for (size_t i = 0; i < w->retired.roots.n && rc == 0; i++) {
        const struct retired_root *rr = &w->retired.roots.v[i];
        int v = w->keep_doubtful;
        struct wait_site_time t = { .key = WAIT_NO_KEY, .root = rr->root, .suspended_ns = rr->ns[v][0],
                                    .runnable_ns = rr->ns[v][1] };
        if (t.suspended_ns + t.runnable_ns)
            rc = fn(ctx, &t);
    }
    for (size_t i = 0; i < w->tasks.n && rc == 0; i++) {
        const struct task_wait *tw = &w->tasks.v[i];
        struct wait_times k = kept(tw->root, w->keep_doubtful);
        if (k.suspended_ns + k.runnable_ns == 0)
            continue;
        struct wait_site_time t = { .key = WAIT_NO_KEY, .root = task_stacks_task_root(w->stacks, tw->id),
                                    .suspended_ns = k.suspended_ns, .runnable_ns = k.runnable_ns };
        if (t.root == PROFILE_NO_FRAME)
            return -1;
        rc = fn(ctx, &t);
    }
    return rc;
}

const struct wait_summary *wait_profile_summary(const struct wait_profile *w)
{
    return &w->summary;
}
