/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tasks.h: a target's async tasks, read from outside (SPEC section 3b): tokio's owned-task list reached from its
 * CONTEXT thread-local, each task's state word, id, root future and async backtrace decoded through the
 * program's DWARF (dwarf/), the leaf future described where it can be read. The target is a live process
 * (nothing in it is stopped, probed or signalled: memory is read with process_vm_readv) or a core file (its
 * saved memory, and the files it names for what it left out). The whole interface of tasks/.
 *
 * A task_reader is opened once per target (DWARF, tokio's layout, threads) and then snapshots as often as
 * wanted (taskspy tasks takes one; record's snapshot wait profile takes one every 1/HZ s). */
#ifndef TASKSPY_TASKS_H
#define TASKSPY_TASKS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum task_state {
    TASK_IDLE,                 /* not running, not notified: waits for a wake */
    TASK_SCHEDULED,            /* notified, not running yet (in a run queue) */
    TASK_RUNNING,              /* being polled now: no frame read from it */
    TASK_COMPLETE,             /* done; its output (or JoinHandle) not yet released */
    TASK_CHANGING,             /* changed on every read: not decoded */
};
const char *task_state_name(enum task_state s);   /* "idle", "scheduled", ... */

/* One async frame, outermost first in a task's backtrace: an async fn (or block) suspended at an await. The await's
 * position is the program's own: written inside a macro (tokio's select!, join!), it is the line where the macro
 * was invoked, with the macro named; where the DWARF cannot tell that line, the macro's own file and line are kept
 * and macro_line says so (never a guessed line). */
struct task_frame {
    const char *function;      /* "my_app::handle" (async suffixes removed) */
    const char *file;          /* base name of the await's file, or NULL */
    uint32_t line;             /* the await's line, 0 when unknown */
    const char *macro;         /* the macro the await is written in ("select!", "join!", "try_join!"; "macro"
                                  for another), NULL when none */
    bool macro_line;           /* file and line are the macro's own source: the program's line was not found */
};

/* One node of a task's async backtrace tree: an async fn suspended at an await (frame.function set) and/or
 * the leaf future it waits for. A node's children are what it waits for at once: every pending branch of a
 * join!, select!, join_all, FuturesUnordered/FuturesOrdered or select_all (a finished branch is left out). A
 * chain of awaits is a node with one child. Nodes are in preorder: a node's children follow it, each child's
 * subtree after the previous one's; nodes[0] is the root. */
#define TASK_NO_NODE UINT32_MAX
struct task_node {
    struct task_frame frame;   /* frame.function NULL: no async fn here (a leaf, or futures awaited directly) */
    const char *leaf;          /* the leaf future's type, or NULL */
    const char *detail;        /* what could be read of it, or NULL */
    uint32_t parent;           /* TASK_NO_NODE for the root */
    uint32_t n_children;
    uint32_t subtree;          /* nodes in its subtree, itself included */
};

struct task_info {
    uint64_t id;               /* tokio's own task id */
    uint64_t header;           /* the task's header address in the target (its identity for a snapshot) */
    enum task_state state;
    bool unwakeable;           /* idle, not notified, and no waker holds a reference: nothing can wake it
                                  (decided only from the state word's reference count) */
    const char *root;          /* the root future's function ("my_app::main"), or its type name */
    const char *root_file;     /* where the root future is declared (base name), NULL when not known */
    uint32_t root_line;
    uint64_t future_size;      /* bytes of the root future as tokio holds it (its type's size), 0 when not known */
    uint64_t boxed_size;       /* the root future is a Pin<Box<F>> (tokio boxes a large future on spawn): F's
                                  bytes; 0 when it is not boxed */
    struct task_node *nodes;   /* the tree (preorder), n_nodes 0: nothing read (running, complete, changing) */
    size_t n_nodes;
    bool tree_truncated;       /* the walk stopped at a bound (depth, bytes, nodes): branches may be missing */
    /* the first pending path of the tree (the first child at each node): */
    struct task_frame *frames; /* its async frames, outermost first */
    size_t n_frames;
    const char *leaf;          /* the innermost future's type ("tokio::time::sleep::Sleep"), or NULL */
    const char *detail;        /* what could be read of it ("deadline in 2.1 ms"), or NULL */
    /* a running task: the native stack of the worker thread polling it (innermost first; n_stack 0 when not
       read, task_reader_stack, or when it could not be): a live one's read without stopping it, a core's from
       the dump's registers and saved stack */
    struct task_frame *stack;
    size_t n_stack;
};

struct task_worker {
    pid_t tid;
    char name[16];             /* the thread's comm */
    int64_t index;             /* tokio's worker index, -1 when not a worker (a block_on thread) */
    uint64_t current_task;     /* the task it polls now (tokio's id), 0 when none */
    int64_t local_queue;       /* tasks in its local run queue, -1 when unknown */
    int64_t tick;              /* tokio's count of its scheduler's turns (the core's tick, a u32 that wraps), read
                                  while it polls (its core is then in its context); -1 when not: the same task and
                                  tick in two snapshots is one poll that lasted the time between them */
    const uint64_t *queued;    /* the headers (task_info.header) of the tasks queued on its scheduler core, read while
                                  the core is in its context (while it polls): a multi-thread worker's LIFO slot and
                                  local run queue, a current-thread runtime's queue; they wait for this thread */
    size_t n_queued;
    int64_t cpu_ns;            /* the thread's time on a CPU so far (the kernel's schedstat), -1 when unknown */
    char sched_state;          /* its state now: 'R' (on a CPU, or waiting for one), 'S' or 'D' (blocked), ...; 0
                                  unknown. A poll holds its worker while the thread runs or blocks in it, not while
                                  the system keeps it waiting for a CPU */
};

/* One snapshot. Strings belong to the reader (its string pool) and live until task_reader_close. */
struct task_snapshot {
    uint64_t taken_ns;         /* CLOCK_MONOTONIC when the walk began */
    pid_t pid;                 /* the process read (a core's: the process it was dumped from) */
    const char *program;       /* its executable's file as taskspy read it */
    const char *runtime;       /* "tokio 1.54.1", or "tokio" when the version is not known */
    struct task_worker *workers;
    size_t n_workers;
    struct task_info *tasks;
    size_t n_tasks;
    size_t listed;             /* entries walked in the owned-task lists (tasks read, any state) */
    int64_t global_queue;      /* the first runtime's global (injection) queue length, -1 when unknown */
    int64_t blocking_threads;  /* ... its blocking pool's threads, and how many are idle: -1 when unknown */
    int64_t blocking_idle;
    uint64_t next_task_id;     /* tokio's task id counter (every task spawned so far, blocking ones too, took an
                                  id from it), 0 when unknown */
    bool list_truncated;       /* the walk stopped at its bound or at a broken link */
    bool target_gone;          /* the target exited during the walk: what was read is here */
    /* a core's: what it could not answer (all 0 for a live process) */
    size_t unsaved_pages;      /* pages the reads needed that the core did not save and no file could give */
    uint64_t first_unsaved;    /* the first of them */
    const char *first_unsaved_in;   /* the file mapped there, NULL: anonymous memory (a heap, a stack) */
    size_t unusable_files;     /* files the core names that are not on this machine or are of another build */
    const char *first_unusable;
    bool program_unchecked;    /* the core holds no build id of the program: its file was taken as found */
    bool time_unknown;         /* the dump's moment is not known (its file's time is from before this boot):
                                  no deadline is given */
};

/* A thread's state at a core's dump, for its native stack: its registers and the stack the core saved, and the
 * target's file mappings (to unwind with). */
struct task_mapping {
    uint64_t start, end, offset;
    const char *path;          /* the file taskspy reads for it */
    bool executable;
};
struct task_native_state {
    pid_t tid;
    const uint64_t *regs;      /* x86-64 struct user_regs_struct's 27 registers, in its order (<sys/user.h>) */
    const uint8_t *stack;      /* its stack from regs' rsp up, stack_len bytes (NULL: not saved) */
    size_t stack_len;
    const struct task_mapping *mappings;   /* sorted by start */
    size_t n_mappings;
};
/* A running task's native stack (task_reader_stack): the return addresses of thread tid (the worker polling it),
 * innermost first (its instruction pointer first), into ips (at most max); returns how many. A live process's
 * (state NULL): read now, without stopping the thread; a core's: unwound from state, the thread's registers and
 * stack at the dump. The reader names them with the program's DWARF. */
typedef size_t (*task_worker_stack_fn)(void *ctx, pid_t tid, const struct task_native_state *state, uint64_t *ips,
                                       size_t max);

struct task_reader;

/* Settings the cli fills (library layers read no environment). */
struct task_reader_options {
    const char *root;          /* "/proc/PID/root" prefix for the target's files, or "" */
    size_t max_tasks;          /* bound on the owned-list walk (0: 1,000,000) */
    unsigned max_depth;        /* bound on nested futures per task (0: 64) */
    size_t max_bytes;          /* bound on bytes read per task's futures (0: 4 MB) */
    bool no_details;           /* leave task_info.detail NULL: nothing read of the leaf futures (a reader that
                                  takes many snapshots and shows no detail spares their reads; a detail lives
                                  until the next snapshot either way, so memory stays flat) */
    task_worker_stack_fn worker_stack;   /* a running task's native stack (NULL: none read) */
    void *worker_stack_ctx;
};

/* Open a reader for pid: its executable's DWARF (or the verified debug file), tokio's structures found by
 * name. Returns 0, or -1 with one line in err naming what is missing (no tokio; no DWARF types: built
 * line-tables-only or without debug info; a layout path that did not match, by name). */
int task_reader_open(struct task_reader **out, pid_t pid, const struct task_reader_options *options,
                     char *err, size_t errlen);
/* The same in two steps, for a command about to be launched: open a reader on its executable file (path; the
 * DWARF and tokio's layout, as task_reader_open), then bind it to the process once that process runs the file
 * (same device and inode) and has loaded its C library. task_reader_attach returns 0, or -1 with err, the
 * reader unchanged: call it again later (the process has not exec'd yet, its libraries are not mapped yet). */
int task_reader_open_file(struct task_reader **out, const char *path, const struct task_reader_options *options,
                          char *err, size_t errlen);
int task_reader_attach(struct task_reader *r, pid_t pid, char *err, size_t errlen);
/* Open a reader on a core file: its program found from the files the core names (exe: the program's file when
 * those names do not lead to it, or NULL), checked by build id. Returns 0, or -1 with one line in err (a core
 * that cannot be read: not a core, truncated, 32-bit, another machine's; the program not found, or of another
 * build than the core's; what task_reader_open says). */
int task_reader_open_core(struct task_reader **out, const char *core, const char *exe,
                          const struct task_reader_options *options, char *err, size_t errlen);
/* Take a snapshot into *snap (valid until the next snapshot or close). Returns 0, or -1 with err (the target
 * gone before anything was read, or no runtime found in any thread). */
int task_reader_snapshot(struct task_reader *r, struct task_snapshot *snap, char *err, size_t errlen);
/* The native stack of running task t of the last snapshot, read now (options.worker_stack) into t->stack: its
 * worker's, kept only if the worker still polls t after the read. Read on demand (a caller reads those it shows:
 * each costs a read of the worker's stack, or a perf sample of it). Returns t->n_stack. */
size_t task_reader_stack(struct task_reader *r, struct task_info *t);
/* The program's file as the target's mappings name it (what snapshots give as program), NULL before attached. */
const char *task_reader_program(const struct task_reader *r);
void task_reader_close(struct task_reader *r);

/* ---- a task named by its root future, from the code that polls it (task_roots.c) ------------------------- */
/* tokio polls each task through the raw::poll<T, S> of its future type T (the task vtable's poll entry), so the
 * copy a poll went through names the task as taskspy tasks does: record names so the tasks no sample caught. */
struct task_root_namer;
/* For process pid; dwarf_path: the file to read its DWARF from (its separate debug file), NULL: its executable.
 * Returns 0, or -1 with one line in err. */
int task_root_namer_open(struct task_root_namer **out, pid_t pid, const char *dwarf_path, char *err, size_t errlen);
/* The root future's name of the tasks polled by the raw::poll<T, S> holding runtime address addr (the address of a
 * probe in it), NULL when addr is in no such function. Found once per address; valid until close. */
const char *task_root_namer_name(struct task_root_namer *n, uint64_t addr);
void task_root_namer_close(struct task_root_namer *n);

/* ---- where tokio keeps the id of the task a thread polls (tokio_layout.c) ------------------------------- */
/* tokio::runtime::context::CONTEXT (a thread-local, tokio 1.24 and later) holds current_task_id: the id of the
 * task the thread polls, None outside a poll. The sampler reads it at each sample (the zero-probe route); the task
 * reader reads it from each thread. Found once, here, from the file's symbol table, TLS segment and DWARF. */
struct tokio_task_id_place {
    char symbol[1024];         /* CONTEXT's storage symbol ("" when there is none) */
    int64_t context_tp_offset; /* the storage from the thread pointer (x86-64 static TLS) */
    uint64_t context_size;     /* its size */
    bool found;                /* the DWARF describes current_task_id; then: */
    int64_t id_tp_offset;      /* the id from the thread pointer, id_size bytes */
    uint32_t id_size;
    bool has_tag;              /* the Option has a discriminant of its own (else the id is, 0 None): */
    int64_t tag_tp_offset;     /* its place from the thread pointer, */
    uint32_t tag_size;         /* size (1, 2, 4 or 8), */
    uint64_t some_value;       /* and value for Some */
};
/* In the file at path (the executable, or its separate debug file: the same TLS segment). Returns 1 found, 0 when
 * not (no CONTEXT: symbol ""; CONTEXT without the DWARF types that describe it: symbol and context_* set), -1 when
 * the file cannot be read as ELF. */
int tokio_task_id_place_find(const char *path, struct tokio_task_id_place *out);

/* ---- a snapshot's tasks grouped by identical async backtrace (task_groups.c) ----------------------------- */
/* As `taskspy tasks` prints them and `taskspy top` shows them (like Go's goroutine dump): a group's key is its
 * state, whether nothing can wake it, its root, its tree (every node's frame: function, file, line, macro; its
 * leaf future; its place in the tree); the leaves' details (a deadline, say) differ from task to task and are not
 * part of the key. Groups come largest first, ties by their smallest task id; a group's tasks by id. Also the
 * view of a task's tree every output draws. */
/* A task's tree as the outputs draw it: its nodes, or, for a task with frames and no nodes (made by hand), its
 * frames and leaf as a chain (own: allocated then). */
struct task_tree {
    const struct task_node *nodes;
    size_t n;
    struct task_node *own;
};
/* Returns 0, or -1 when out of memory (tree empty). */
int task_tree_of(const struct task_info *t, struct task_tree *tree);
void task_tree_free(struct task_tree *tree);
/* The order groups are keyed in: a tree node's shape (children, subtree), leaf and frame (function, file, line,
 * macro), not its detail; 0 for nodes a group would not tell apart. */
int task_node_compare(const struct task_node *a, const struct task_node *b);
/* Node index's frame, leaf, detail of t (index < its tree's nodes; for a chain: its frames, then its leaf). */
const char *task_node_detail(const struct task_info *t, size_t index);

struct task_group {
    const struct task_info *const *tasks;   /* its tasks, by id (into task_groups.order) */
    size_t n;
};

struct task_groups {
    const struct task_info **order;         /* every task of the snapshot, by key: the groups point into it */
    struct task_group *v;
    size_t n;
};

/* Group the n tasks (which must outlive the groups). Returns 0, or -1 when out of memory (g is then empty). */
int task_groups_build(struct task_groups *g, const struct task_info *tasks, size_t n);
void task_groups_free(struct task_groups *g);

/* The detail a group's leaf line shows, written into buf: the detail when all its tasks have the same one; a
 * range when they all read "TEXT NUMBER UNIT" with the same TEXT and UNIT ("deadline in 3598.1-3599.9 s");
 * else the first task's with "; others differ". Returns buf, or NULL when no task of the group has one.
 * task_group_detail: of the first pending path's leaf; task_group_node_detail: of node index of the group's
 * tree (its tasks' trees have one shape). */
const char *task_group_detail(const struct task_group *group, char *buf, size_t len);
const char *task_group_node_detail(const struct task_group *group, size_t index, char *buf, size_t len);

/* ---- a snapshot every 1/HZ s on a thread of its own (snapshot_loop.c) ----------------------------------- */
/* What record's snapshot wait profile and `taskspy top` share: one reader opened before the loop starts, then a
 * deadline every 1/HZ s on CLOCK_MONOTONIC and a snapshot at each, handed to a callback on the loop's thread
 * (deadlines that pass while one is being taken are counted missed and skipped: the next snapshot's interval is
 * the real time since the last). Nothing is attached to the target: its memory is read with process_vm_readv.
 * In launch mode the reader is opened on the command's file and attached once the process runs it; until its
 * runtime exists, snapshots fail and are tried again at the next deadline. The loop's own CPU (snapshots and the
 * callback, not its sleeps) is counted. */
struct task_snapshot_loop;

/* Each snapshot, on the loop's thread (snap valid during the call only). Returns 0, or -1 when out of memory:
 * the loop takes no more snapshots and says failed. */
typedef int (*task_snapshot_fn)(void *ctx, const struct task_snapshot *snap);

struct task_snapshot_loop_options {
    unsigned hz;                     /* snapshots per second */
    uint64_t start_ns;               /* the first deadline (CLOCK_MONOTONIC) */
    pid_t launch_pid;                /* launch mode: the process to attach the reader to (0: attached at open) */
    uint64_t deadline_ns;            /* no snapshot after it (0: none) */
    volatile sig_atomic_t *stop_requested;   /* no snapshot once it is set (may be NULL) */
    task_snapshot_fn on_snapshot;
    void *ctx;
};

struct task_snapshot_loop_stats {
    uint64_t taken, missed, failed_snapshots, attach_tries;
    uint64_t cpu_ns;                 /* the thread's CPU in snapshots and their callbacks (not in sleeping) */
    uint64_t first_cpu_ns;           /* of which the first snapshot's (it indexes the DWARF it needs) */
    uint64_t first_ns;               /* when the first snapshot was taken (CLOCK_MONOTONIC), 0: none */
    uint64_t stopped_ns;             /* no snapshot after it (task_snapshot_loop_stop's stop_ns), 0: running */
    bool failed;                     /* the callback failed (out of memory): what it made is not whole */
    bool target_gone;                /* the target exited */
    char last_error[256];            /* why the last attach or snapshot failed */
};

/* Open the loop's reader (options: as for task_reader_open; NULL: the target's root, no details): on process
 * pid (attach mode), or on the command's executable file path (launch mode, pid 0; attached to the process once
 * it runs). Attach mode takes one snapshot now, so that the DWARF the decoding needs is indexed before the loop
 * starts. Returns 0, or -1 with one line in err (the reader cannot read this program's tasks: no tokio, no DWARF
 * types). */
int task_snapshot_loop_open(struct task_snapshot_loop **out, pid_t pid, const char *path,
                            const struct task_reader_options *options, char *err, size_t errlen);
/* The reader the loop reads with (for a caller that wants a running task's stack, task_reader_stack, from its own
 * thread: only between two snapshots, in the callback). */
struct task_reader *task_snapshot_loop_reader(struct task_snapshot_loop *l);
/* Start the thread. The loop ends at options->deadline_ns, when *stop_requested is set or when the target exits,
 * whichever is first: no snapshot is taken after that, even before task_snapshot_loop_stop. Returns 0, or -1 (no
 * memory, no thread). */
int task_snapshot_loop_start(struct task_snapshot_loop *l, const struct task_snapshot_loop_options *options);
/* No snapshot after stop_ns (0: now; one under way finishes); stop the thread and wait for it. */
void task_snapshot_loop_stop(struct task_snapshot_loop *l, uint64_t stop_ns);
/* The counts so far (read them once stopped, or accept a moment's staleness). */
const struct task_snapshot_loop_stats *task_snapshot_loop_stats(const struct task_snapshot_loop *l);
void task_snapshot_loop_free(struct task_snapshot_loop *l);

/* ---- a live view of every task, over time (task_top.c) --------------------------------------------------- */
/* What `taskspy top` shows (SPEC section 3c), made from snapshots (the snapshot loop's, 10 a second) and CPU
 * samples (each with the task it was taken in, the sampler's): one row per await point (a group: the root future
 * and its tree, as task_groups_build keys them but whatever the tasks' states; a running task stays at the await
 * it was last seen at) or per task, each with its state counts, CPU share, busy / scheduled / idle shares of the
 * wall time since the last frame, time at the await, warnings; the workers (task, local queue, busy share), the
 * runtime's figures; per group its hottest on-CPU frames. Memory follows the tasks alive, the distinct await
 * points and the frames met, not the time viewed. Thread-safe: snapshots, samples and frames may each come from a
 * thread of their own. */
enum task_top_warning {        /* bits of task_top_row.warnings */
    TASK_TOP_LOST_WAKER = 1,   /* idle and nothing can wake it (its state word's reference count) */
    TASK_TOP_BLOCKING = 2,     /* held its worker in one poll longer than long_poll_ns (the worker's task and tick
                                  unchanged between snapshots); sticky: shown while the task lives */
    TASK_TOP_STARVED = 4,      /* scheduled, not polled, longer than starve_ns: queued in consecutive snapshots on
                                  the core of a worker that stayed in one poll (its LIFO slot, local run queue, a
                                  current-thread runtime's queue), so not polled meanwhile; sticky */
    TASK_TOP_LEAK = 8,         /* its await point's tasks grew through the view: never fewer, more in at least half
                                  of leak_frames frames or more */
    TASK_TOP_BOXED = 16,       /* its root future is a Box of more than 2048 bytes: tokio boxed it on spawn (1.41 on:
                                  over 16384 bytes, 2048 in debug builds; 1.24: over 2048 in debug builds) */
    TASK_TOP_LARGE = 32,       /* its root future is over 16384 bytes and not boxed: held inline (a tokio before
                                  1.41, a release build) */
};
#define TASK_TOP_WARNINGS 6
/* "lost-waker", "blocking", "starved", "leak", "boxed", "large" */
const char *task_top_warning_word(enum task_top_warning w);

struct task_top_options {
    unsigned sample_hz;        /* the sampler's frequency; 0: no sampling (CPU shares not known) */
    uint64_t long_poll_ns;     /* 0: 100 ms */
    uint64_t starve_ns;        /* 0: 100 ms */
    unsigned leak_frames;      /* 0: 5 */
};

enum task_top_rows { TASK_TOP_GROUPS, TASK_TOP_TASKS };

struct task_top_row {
    uint64_t id;               /* the task's id; a group's smallest */
    uint32_t group;            /* its await point (task_top_hot_frames, task_top_tree) */
    const char *root;
    const char *root_file;     /* where the root future is declared, NULL when not known */
    uint32_t root_line;
    const struct task_frame *await_frame;   /* the innermost async frame of its first pending path, or NULL */
    const char *leaf;          /* the leaf future of that path, or NULL */
    char detail[96];           /* its detail (a group's: the same, a range, or the first), "" when none */
    size_t count;              /* tasks */
    size_t states[TASK_CHANGING + 1];       /* tasks in each state, in the last snapshot */
    double cpu_percent;        /* of one CPU, since the last frame; -1 when not known */
    double busy_percent, scheduled_percent, idle_percent;   /* shares of its tasks' wall time since the last frame */
    double await_s;            /* time at its await point (since first seen there; a group's: its longest) */
    unsigned warnings;         /* enum task_top_warning bits */
};

struct task_top_worker {
    pid_t tid;
    char name[16];
    int64_t index;             /* -1: not a multi-thread worker (a current-thread runtime's thread, block_on's) */
    uint64_t task;             /* the task it polls in the last snapshot, 0 none */
    int64_t local_queue;       /* -1 when unknown */
    double busy_percent;       /* snapshots since the last frame in which it polled a task */
};

/* A line of the warnings panel. */
struct task_top_note {
    enum task_top_warning kind;
    uint64_t task;             /* the task it is about (a group's: its worst or first) */
    uint32_t group;
    char text[320];
};

struct task_top_frame {
    uint64_t number;           /* 1, 2, ... */
    double uptime_s;           /* since the view's first snapshot */
    double interval_s;         /* since the last frame */
    pid_t pid;
    const char *runtime;
    size_t tasks;
    size_t states[TASK_CHANGING + 1];
    bool spawned_known;        /* tokio's id counter read: spawned and ended are exact (else tasks first seen, and
                                  seen no more: short-lived tasks between two snapshots are missed) */
    uint64_t spawned, ended;   /* since the view began */
    struct task_top_worker *workers;
    size_t n_workers;
    int64_t global_queue, blocking_threads, blocking_idle;   /* -1: not known */
    uint64_t snapshots;        /* since the last frame */
    double cpu_percent;        /* the process, from samples since the last frame (of one CPU); -1: not known */
    double cpu_in_tasks_percent;
    double cpu_unlisted_percent; /* of that, in tasks no snapshot listed (they lived between two): in no row */
    struct task_top_row *rows; /* unsorted */
    size_t n_rows;
    struct task_top_note *notes;
    size_t n_notes;
    bool target_gone;
};

struct task_top;
struct task_top *task_top_new(const struct task_top_options *options);   /* NULL when out of memory */
/* A snapshot (the loop's callback). reader: the reader that took it, to read the stack of a task that holds its
 * worker (task_reader_stack: where it blocks), or NULL. Returns 0, or -1 when out of memory. */
int task_top_add_snapshot(struct task_top *t, const struct task_snapshot *snap, struct task_reader *reader);
/* A CPU sample taken at time_ns (CLOCK_MONOTONIC) in task task_id (0: in no task), frame: its innermost frame
 * outside Rust's standard library (a name that lives as long as t; NULL: none). */
void task_top_add_sample(struct task_top *t, uint64_t task_id, uint64_t time_ns, const char *frame);
/* The target exited: the next frame says so. */
void task_top_target_gone(struct task_top *t);
/* A frame of the view: the figures since the last one (valid until the next call or task_top_free). Returns 0, or
 * -1 when out of memory. */
int task_top_frame(struct task_top *t, enum task_top_rows rows, struct task_top_frame *out);
/* A group's tree (its await point: nodes in preorder, details NULL), into *nodes (valid while t lives). */
size_t task_top_tree(struct task_top *t, uint32_t group, const struct task_node **nodes);
/* A group's hottest on-CPU frames over the view: up to max, the most samples first. */
size_t task_top_hot_frames(struct task_top *t, uint32_t group, const char **frames, uint64_t *samples, size_t max);
void task_top_free(struct task_top *t);

#endif
