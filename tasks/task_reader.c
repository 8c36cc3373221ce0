/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_reader.c: tasks.h's reader: the target's executable (or its debug file) and tokio's layout found once;
 * each snapshot lists the target's threads (a live process's through libthread_db, a core's from its notes:
 * target_view.c), reads what each thread's CONTEXT says (its task, its
 * runtime, its worker), walks every runtime's owned-task lists with a visited set and a bound, and decodes
 * every task that is not running: its state word, its future, and its state word again (a change is read
 * again, a few times, then the task is `changing`). */
#include "tasks/tasks_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/proc_exe.h"
#include "base/vec.h"

#define DEFAULT_MAX_TASKS 1000000
#define DEFAULT_MAX_DEPTH 256
#define DEFAULT_MAX_BYTES (4u << 20)
#define MAX_RUNTIMES 16
#define MAX_HEADS 4096
#define REREADS 3
#define MAX_RETURNS 256
#define MAX_STACK_FRAMES 128          /* a running task's native stack, frames kept */
#define MAX_QUEUED 1024               /* tasks read of one core's queues (a local run queue holds 256, and its LIFO
                                         slot one; a current-thread runtime's queue grows) */

struct plan_vec {
    struct task_plan *v;
    size_t n, cap;
};

struct task_vec {
    struct task_info *v;
    size_t n, cap;
};

struct worker_vec {
    struct task_worker *v;
    size_t n, cap;
};

struct task_reader {
    dev_t exe_dev;                    /* the executable the layout was read from */
    ino_t exe_ino;
    char root[64];
    struct task_reader_options opt;
    struct tokio_layout layout;
    struct target_view *target;            /* NULL until attached */
    struct string_pool pool;
    struct string_pool details;       /* the leaves' details of the last snapshot (emptied at each: memory flat) */
    struct u64_map plan_by_vtable;    /* vtable address -> index in plans */
    struct plan_vec plans;
    struct task_vec tasks;
    struct worker_vec workers;
    struct {
        uint64_t *v;
        size_t n, cap;
    } worker_fsbase;                  /* each worker's thread pointer (where its CONTEXT is read again) */
    struct {
        size_t *v;
        size_t n, cap;
    } worker_thread;                  /* each worker's thread in threads (a core's: its registers and stack) */
    struct {
        uint64_t *v;
        size_t n, cap;
    } queued;                         /* the headers queued on every worker's core, worker after worker */
    struct {
        size_t *v;
        size_t n, cap;
    } worker_queued;                  /* where each worker's are in queued */
    struct u64_map visited;
    struct memory_cache cache;        /* one task's pages at a time */
    struct memory_cache threads_cache;   /* a snapshot's reads of its threads and runtimes (glibc's thread list,
                                            CONTEXT, the runtimes' queues and lists), by page: reset at each
                                            snapshot (a read each was a third of a snapshot's system calls) */
    struct target_threads threads;    /* the snapshot's threads (a core's: with registers and stacks) */
    struct {
        struct task_mapping *v;
        size_t n, cap;
    } mappings;                       /* a core's file mappings, for native stacks */
    struct type_cache types;          /* what the decoder found of the types it met */
    struct {
        uint64_t *v;
        size_t n, cap;
    } path;                           /* the headers on the walk's way from the list's head */
};

/* what a task's reading allocated (its tree, with its first path's frames in the same block; its stack) */
static void task_info_release(struct task_info *t)
{
    free(t->nodes);
    free(t->stack);
    t->nodes = NULL;
    t->frames = NULL;
    t->stack = NULL;
    t->n_nodes = t->n_frames = t->n_stack = 0;
}

const char *task_state_name(enum task_state s)
{
    static const char *const names[] = { "idle", "scheduled", "running", "complete", "changing" };
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* the file to read symbols and DWARF from: the executable, or its verified separate debug file when it is
   stripped (no .symtab) */
static char *symbol_file(const char *exe, const char *root, const char *target_path)
{
    struct elf_file ef;
    if (elf_file_open(&ef, exe) != 0)
        return NULL;
    char *found = NULL;
    if (!elf_file_section(&ef, ".symtab") && target_path[0] == '/')
        found = elf_debug_file_find(&ef, root, target_path);
    elf_file_close(&ef);
    return found ? found : strdup(exe);
}

/* The reader with its settings and tokio's layout from exe (the file to read; target_path: its path as the
 * target names it, for the debug-file lookup), not bound to a process yet. */
static int open_layout(struct task_reader **out, const char *exe, const char *target_path,
                       const struct task_reader_options *options, char *err, size_t errlen)
{
    *out = NULL;
    struct task_reader *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->opt = *options;
    snprintf(r->root, sizeof(r->root), "%s", options->root ? options->root : "");
    if (!r->opt.max_tasks)
        r->opt.max_tasks = DEFAULT_MAX_TASKS;
    if (!r->opt.max_depth)
        r->opt.max_depth = DEFAULT_MAX_DEPTH;
    if (!r->opt.max_bytes)
        r->opt.max_bytes = DEFAULT_MAX_BYTES;
    struct stat st;
    if (stat(exe, &st) != 0) {
        snprintf(err, errlen, "cannot read %s (%s)", target_path, strerror(errno));
        free(r);
        return -1;
    }
    r->exe_dev = st.st_dev;
    r->exe_ino = st.st_ino;
    char *symbols = symbol_file(exe, r->root, target_path);
    int rc = -1;
    if (!symbols)
        snprintf(err, errlen, "cannot read %s", target_path);
    else if (tokio_layout_find(&r->layout, symbols, err, errlen) == 0)
        rc = 0;
    free(symbols);
    if (rc != 0) {
        task_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

int task_reader_open_file(struct task_reader **out, const char *path, const struct task_reader_options *options,
                          char *err, size_t errlen)
{
    return open_layout(out, path, path, options, err, errlen);
}

/* Bind the reader to its target (opened by the caller, closed by the reader from now on, whatever happens): the
   program placed in its memory, the caches made. Returns 0, or -1 with err (the target closed, r as before). */
static int bind_target(struct task_reader *r, struct target_view *t, char *err, size_t errlen)
{
    struct elf_file ef;
    int rc = -1;
    if (elf_file_open(&ef, t->program_file) != 0)
        snprintf(err, errlen, "cannot read %s", t->program);
    else {
        bool placed = target_maps_bias(&t->maps, t->program, &ef, &r->layout.bias);
        elf_file_close(&ef);
        if (!placed)
            snprintf(err, errlen, "cannot place %s in process %d's memory", t->program, (int)t->pid);
        else if (u64_map_init(&r->plan_by_vtable, 64) != 0 || u64_map_init(&r->visited, 1024) != 0 ||
                 memory_cache_init(&r->cache, t) != 0 || memory_cache_init(&r->threads_cache, t) != 0)
            snprintf(err, errlen, "out of memory");
        else
            rc = 0;
    }
    if (rc != 0) {             /* as before the call: another try may come later */
        u64_map_free(&r->plan_by_vtable);
        u64_map_free(&r->visited);
        memory_cache_free(&r->cache);
        memory_cache_free(&r->threads_cache);
        view_close(t);
        return -1;
    }
    r->target = t;
    return 0;
}

int task_reader_attach(struct task_reader *r, pid_t pid, char *err, size_t errlen)
{
    if (r->target) {
        snprintf(err, errlen, "the task reader already reads process %d", (int)r->target->pid);
        return -1;
    }
    char exe[64];
    snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
    struct stat st;
    if (stat(exe, &st) != 0) {
        snprintf(err, errlen, "cannot read process %d's executable (%s)", (int)pid, strerror(errno));
        return -1;
    }
    if (st.st_dev != r->exe_dev || st.st_ino != r->exe_ino) {
        snprintf(err, errlen, "process %d does not run the file the task reader was opened on (yet)", (int)pid);
        return -1;
    }
    struct target_view *t;
    if (view_open_live(&t, pid, r->root, err, errlen) != 0)
        return -1;
    return bind_target(r, t, err, errlen);
}

int task_reader_open_core(struct task_reader **out, const char *core, const char *exe,
                          const struct task_reader_options *options, char *err, size_t errlen)
{
    *out = NULL;
    struct target_view *t;
    if (view_open_core(&t, core, exe, err, errlen) != 0)
        return -1;
    struct task_reader_options core_options = *options;
    core_options.root = "";            /* the core's files are named as they are on this machine */
    struct task_reader *r;
    if (open_layout(&r, t->program_file, t->program, &core_options, err, errlen) != 0) {
        view_close(t);
        return -1;
    }
    for (size_t i = 0; i < t->maps.n; i++) {
        const struct target_mapping *m = &t->maps.v[i];
        struct task_mapping *tm = m->path ? vec_push(&r->mappings) : NULL;
        if (tm)
            *tm = (struct task_mapping){ m->start, m->end, m->offset, m->path, m->executable };
        else if (m->path) {
            snprintf(err, errlen, "out of memory");
            view_close(t);
            task_reader_close(r);
            return -1;
        }
    }
    if (bind_target(r, t, err, errlen) != 0) {
        task_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

int task_reader_open(struct task_reader **out, pid_t pid, const struct task_reader_options *options, char *err,
                     size_t errlen)
{
    *out = NULL;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        snprintf(err, errlen, "no process %d", (int)pid);
        return -1;
    }
    char exe[64], target_path[4096];
    if (proc_exe_path(pid, exe, sizeof(exe), target_path, sizeof(target_path)) != 0) {
        snprintf(err, errlen, "cannot read process %d's executable (%s)", (int)pid, strerror(errno));
        return -1;
    }
    struct task_reader *r;
    if (open_layout(&r, exe, target_path, options, err, errlen) != 0)
        return -1;
    if (task_reader_attach(r, pid, err, errlen) != 0) {
        task_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

const char *task_reader_program(const struct task_reader *r)
{
    return r->target ? r->target->program : NULL;
}

void task_reader_close(struct task_reader *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->tasks.n; i++)
        task_info_release(&r->tasks.v[i]);
    vec_free(&r->tasks);
    vec_free(&r->workers);
    vec_free(&r->worker_fsbase);
    vec_free(&r->worker_thread);
    vec_free(&r->queued);
    vec_free(&r->worker_queued);
    vec_free(&r->plans);
    vec_free(&r->path);
    u64_map_free(&r->plan_by_vtable);
    u64_map_free(&r->visited);
    string_pool_free(&r->pool);
    string_pool_free(&r->details);
    type_cache_free(&r->types);
    memory_cache_free(&r->cache);
    memory_cache_free(&r->threads_cache);
    vec_free(&r->threads);
    vec_free(&r->mappings);
    view_close(r->target);
    tokio_layout_free(&r->layout);
    free(r);
}

static const struct task_plan *plan_for(struct task_reader *r, const struct task_header *h)
{
    uint32_t index;
    int rc = u64_map_index(&r->plan_by_vtable, h->vtable, &r->plans, &index);
    if (rc < 0)
        return NULL;
    if (rc == 1)
        task_plan_find(&r->layout, &r->pool, h->poll, &r->plans.v[index]);
    return &r->plans.v[index];
}

/* an elf_memory_reader for the second read of a state word: straight from the target, with the page of the
   next task's header read ahead in the same system call */
struct read_now {
    struct memory_cache *cache;
    uint64_t ahead;
};

static bool read_now(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct read_now *now = ctx;
    return memory_cache_read_now(now->cache, addr, buf, len, now->ahead);
}

/* one task: its header read (through the cache, flushed just before), its future decoded from the same cache
   between two reads of its state word, the second straight from the target (with the page of next, the header
   the walk reads after this one, read ahead) */
static void read_task(struct task_reader *r, uint64_t header, const struct task_header *first, uint64_t next,
                      struct task_info *t)
{
    struct decode_limits limits = { r->opt.max_depth, r->opt.max_bytes, r->opt.no_details, &r->details };
    struct task_header h = *first;
    t->id = h.id;
    t->header = header;
    for (int attempt = 0;; attempt++) {
        task_info_release(t);
        t->leaf = t->detail = NULL;
        t->tree_truncated = false;
        const struct task_plan *plan = plan_for(r, &h);
        t->root = plan && plan->ok ? plan->root : NULL;
        if (plan && plan->ok) {
            t->root_file = plan->file;
            t->root_line = plan->line;
            t->future_size = plan->future_size;
            t->boxed_size = plan->boxed_size;
        }
        if (h.state & TOKIO_STATE_COMPLETE) {
            t->state = TASK_COMPLETE;
            return;
        }
        if (h.state & TOKIO_STATE_RUNNING) {
            t->state = TASK_RUNNING;
            return;
        }
        struct decoded_future d = { 0 };
        if (plan && plan->ok)
            future_decode(&r->layout, &r->pool, &r->types, &limits, memory_cache_read, &r->cache, header, plan, &d);
        uint64_t state_again = 0;
        struct read_now now = { &r->cache, next };
        bool same = tokio_read_state(&r->layout, read_now, &now, header, &state_again) &&
                    state_again == h.state;
        if (same || attempt == REREADS) {
            t->nodes = d.nodes;
            t->n_nodes = d.n_nodes;
            t->tree_truncated = d.truncated;
            t->frames = d.frames;
            t->n_frames = d.n_frames;
            t->leaf = d.leaf;
            t->detail = d.detail;
            t->state = !same                              ? TASK_CHANGING
                       : h.state & TOKIO_STATE_NOTIFIED ? TASK_SCHEDULED
                                                        : TASK_IDLE;
            uint64_t refs = h.state >> TOKIO_STATE_REF_SHIFT;
            uint64_t held = 1 + ((h.state & TOKIO_STATE_JOIN_INTEREST) ? 1 : 0);   /* the owned list, a JoinHandle */
            t->unwakeable = same && t->state == TASK_IDLE && refs == held;
            if (!same) {
                task_info_release(t);
                t->leaf = t->detail = NULL;
            }
            return;
        }
        free(d.nodes);
        memory_cache_reset(&r->cache);        /* the next try reads what follows the changed state word */
        if (!tokio_read_header(&r->layout, memory_cache_read, &r->cache, header, &h)) {
            t->state = TASK_CHANGING;         /* freed while read */
            return;
        }
    }
}

/* the header at, read through the cache reset just before: this task's pages from now on */
static bool fresh_header(struct task_reader *r, uint64_t at, struct task_header *h)
{
    memory_cache_reset(&r->cache);
    return tokio_read_header(&r->layout, memory_cache_read, &r->cache, at, h);
}

/* Walk one owned list from head, reading each task met for the first time. The list changes under the walk
   (tasks are added at its head, and taken out, their links cleared, as they complete): a task taken out (or
   freed) sends the walk back to the last task behind it on its path that is still in the list, whose next
   link now leads past it (or to the head when none is). A task met again is passed over; the walk stops, as
   broken, after more steps than twice the tasks read (a cycle) or too many returns. False when out of memory. */
static bool walk_list(struct task_reader *r, uint64_t head, struct task_snapshot *snap)
{
    size_t steps = 0, returns = 0;
    r->path.n = 0;
    for (uint64_t at = head; at;) {
        if (snap->listed >= r->opt.max_tasks || ++steps > 2 * r->visited.count + 1024 || returns > MAX_RETURNS) {
            snap->list_truncated = true;
            return true;
        }
        struct task_header h;
        bool read = fresh_header(r, at, &h);
        /* a task is its header and its id: a freed header is soon another task's (the allocator reuses it) */
        uint64_t key = at ^ (h.id * 0x9e3779b97f4a7c15ull);
        uint32_t seen;
        bool known = read && u64_map_get(&r->visited, key, &seen);
        if (read && !known) {
            if (u64_map_put(&r->visited, key, 0) != 0)
                return false;
            snap->listed++;
            struct task_info *t = vec_push(&r->tasks);
            if (!t)
                return false;
            read_task(r, at, &h, h.next, t);
        }
        if (read && (h.next || h.prev || at == head)) {
            uint64_t *step = vec_push(&r->path);
            if (!step)
                return false;
            *step = at;
            at = h.next;
            continue;
        }
        /* taken out of the list (or freed) under the walk: back to a task behind it that is still linked */
        returns++;
        at = head;
        while (r->path.n > 0) {
            uint64_t back = r->path.v[--r->path.n];
            struct task_header b;
            if (fresh_header(r, back, &b) && (b.next || b.prev || back == head)) {
                r->path.n++;
                at = b.next;
                break;
            }
        }
        if (!at)
            return true;                      /* it was the last: the end of the list, from a task still in it */
    }
    return true;
}

size_t task_reader_stack(struct task_reader *r, struct task_info *t)
{
    if (!r->opt.worker_stack || t->state != TASK_RUNNING || t->stack || !r->target)
        return t->n_stack;
    struct target_view *target = r->target;
    for (size_t w = 0; w < r->workers.n; w++) {
        if (r->workers.v[w].current_task != t->id)
            continue;
        uint64_t ips[MAX_STACK_FRAMES];
        size_t n;
        if (target->core) {   /* the dump's registers and saved stack of the worker's thread */
            const struct target_thread *th = w < r->worker_thread.n ? &r->threads.v[r->worker_thread.v[w]] : NULL;
            if (!th || !th->regs)
                break;
            struct task_native_state state = { th->tid, th->regs, th->stack, th->stack_len, r->mappings.v,
                                               r->mappings.n };
            n = r->opt.worker_stack(r->opt.worker_stack_ctx, th->tid, &state, ips, MAX_STACK_FRAMES);
        } else {
            n = r->opt.worker_stack(r->opt.worker_stack_ctx, r->workers.v[w].tid, NULL, ips, MAX_STACK_FRAMES);
            /* the worker still polls the task (read straight from it): else the stack may be another task's */
            struct thread_context c;
            if (n > 0 && w < r->worker_fsbase.n &&
                (!tokio_thread_context(&r->layout, view_read, target, r->worker_fsbase.v[w], &c) ||
                 c.current_task != t->id))
                n = 0;
        }
        if (n == 0)
            break;
        t->stack = calloc(MAX_STACK_FRAMES, sizeof(*t->stack));
        if (t->stack)
            t->n_stack = native_frames(&r->layout, &target->maps, target->program, r->root, &r->pool, ips, n,
                                       t->stack, MAX_STACK_FRAMES);
        break;
    }
    return t->n_stack;
}

/* err for a snapshot that found no runtime: the process exited, or no thread is in one (and what a core left out,
   which may be why) */
static void no_runtime(struct task_reader *r, char *err, size_t errlen)
{
    const struct target_view *t = r->target;
    if (t->ops->gone(r->target))
        snprintf(err, errlen, "process %d exited", (int)t->pid);
    else if (!t->core)
        snprintf(err, errlen, "no thread of process %d is in a tokio runtime (is the runtime started?)", (int)t->pid);
    else if (t->gaps.pages == 0)
        snprintf(err, errlen, "no thread of process %d was in a tokio runtime when it was dumped (was the runtime "
                 "started?)", (int)t->pid);
    else
        snprintf(err, errlen, "no tokio runtime found in the core of process %d: it did not save %zu pages the reads "
                 "needed (the first at 0x%" PRIx64 " in %s; its coredump_filter left them out?)", (int)t->pid,
                 t->gaps.pages, t->gaps.first, t->gaps.first_path ? t->gaps.first_path : "anonymous memory");
}

int task_reader_snapshot(struct task_reader *r, struct task_snapshot *snap, char *err, size_t errlen)
{
    memset(snap, 0, sizeof(*snap));
    if (!r->target) {
        snprintf(err, errlen, "the task reader is not attached to a process");
        return -1;
    }
    struct target_view *target = r->target;
    for (size_t i = 0; i < r->tasks.n; i++)
        task_info_release(&r->tasks.v[i]);
    r->tasks.n = 0;
    string_pool_free(&r->details);    /* (the last snapshot's details: it is no longer valid) */
    r->workers.n = 0;
    r->worker_fsbase.n = 0;
    r->worker_thread.n = 0;
    r->queued.n = r->worker_queued.n = 0;
    u64_map_free(&r->visited);
    if (u64_map_init(&r->visited, 1024) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snap->taken_ns = now_ns();
    snap->runtime = r->layout.version;
    snap->pid = target->pid;
    snap->program = target->program;
    if (!target->ops->now(target, &r->layout.now))
        r->layout.now = (struct timespec){ -1, 0 };
    memory_cache_reset(&r->threads_cache);
    vec_free(&r->threads);
    if (target->ops->threads(target, memory_cache_read, &r->threads_cache, &r->threads, err, errlen) != 0) {
        if (target->ops->gone(target))
            snprintf(err, errlen, "process %d exited", (int)target->pid);
        return -1;
    }
    uint64_t runtimes[MAX_RUNTIMES];
    bool multi[MAX_RUNTIMES];
    size_t n_runtimes = 0;
    for (size_t i = 0; i < r->threads.n; i++) {
        const struct target_thread *th = &r->threads.v[i];
        struct thread_context c;
        if (!tokio_thread_context(&r->layout, memory_cache_read, &r->threads_cache, th->fsbase, &c) || !c.handle)
            continue;
        size_t k = 0;
        while (k < n_runtimes && runtimes[k] != c.handle)
            k++;
        if (k == n_runtimes && n_runtimes < MAX_RUNTIMES) {
            runtimes[n_runtimes] = c.handle;
            multi[n_runtimes++] = c.multi_thread;
        }
        struct task_worker *w = vec_push(&r->workers);
        uint64_t *fsbase = vec_push(&r->worker_fsbase);
        size_t *thread = vec_push(&r->worker_thread);
        size_t *queued_at = vec_push(&r->worker_queued);
        if (!w || !fsbase || !thread || !queued_at || vec_reserve(&r->queued, r->queued.n + MAX_QUEUED) != 0)
            break;
        *queued_at = r->queued.n;
        w->n_queued = tokio_core_queue(&r->layout, memory_cache_read, &r->threads_cache, &c, r->queued.v + r->queued.n,
                                       MAX_QUEUED);
        r->queued.n += w->n_queued;
        *fsbase = th->fsbase;
        *thread = i;
        w->tid = th->tid;
        target->ops->thread_name(target, th->tid, w->name);
        w->index = c.worker_index;
        w->current_task = c.current_task;
        w->tick = c.tick;
        uint64_t cpu;
        if (target->ops->thread_sched(target, th->tid, &cpu, &w->sched_state))
            w->cpu_ns = (int64_t)cpu;
        else
            w->cpu_ns = -1;
        w->local_queue = c.worker_index >= 0
                             ? tokio_local_queue(&r->layout, memory_cache_read, &r->threads_cache, c.handle,
                                                 c.worker_index)
                             : -1;
    }
    if (n_runtimes == 0) {
        no_runtime(r, err, errlen);
        return -1;
    }
    snap->global_queue = tokio_global_queue(&r->layout, memory_cache_read, &r->threads_cache, runtimes[0], multi[0]);
    if (!tokio_blocking_threads(&r->layout, memory_cache_read, &r->threads_cache, runtimes[0], multi[0],
                                &snap->blocking_threads, &snap->blocking_idle))
        snap->blocking_threads = snap->blocking_idle = -1;
    snap->next_task_id = tokio_next_task_id(&r->layout, memory_cache_read, &r->threads_cache);
    bool ok = true;
    for (size_t k = 0; k < n_runtimes && ok; k++) {
        uint64_t heads[MAX_HEADS];
        size_t n = tokio_owned_heads(&r->layout, memory_cache_read, &r->threads_cache, runtimes[k], multi[k], heads,
                                     MAX_HEADS);
        for (size_t i = 0; i < n && ok; i++)
            ok = walk_list(r, heads[i], snap);
    }
    if (!ok) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snap->target_gone = target->ops->gone(target);
    for (size_t i = 0; i < r->workers.n && i < r->worker_queued.n; i++)   /* (queued no longer moves) */
        r->workers.v[i].queued = r->queued.v + r->worker_queued.v[i];
    snap->workers = r->workers.v;
    snap->n_workers = r->workers.n;
    snap->tasks = r->tasks.v;
    snap->n_tasks = r->tasks.n;
    snap->unsaved_pages = target->gaps.pages;
    snap->first_unsaved = target->gaps.first;
    snap->first_unsaved_in = target->gaps.first_path;
    snap->unusable_files = target->unusable_files;
    snap->first_unusable = target->first_unusable;
    snap->program_unchecked = target->program_unchecked;
    snap->time_unknown = r->layout.now.tv_sec < 0;
    return 0;
}
