/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tasks_internal.h: what the files of tasks/ share (never included outside tasks/): the target's memory and
 * threads, tokio's layout as found in the DWARF, the future decoder. */
#ifndef TASKSPY_TASKS_INTERNAL_H
#define TASKSPY_TASKS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/string_pool.h"
#include "base/u64_map.h"
#include "dwarf/dwarf_types.h"
#include "elf/elf_file.h"
#include "tasks/tasks.h"

/* ---- target_view.c: what the reader reads, a live process or a core file: one interface, two implementations
 * chosen at open (target_live.c, target_core.c) ---------------------------------------------------------- */
struct target_mapping {
    uint64_t start, end, offset;
    bool read_only;            /* a file mapped readable, not writable (code, a vtable's .data.rel.ro) */
    bool executable;
    char *path;                /* the file: as /proc/PID/maps names it (opened through the reader's root), or the
                                  file taskspy reads for a core's mapping; NULL for anonymous mappings */
};

struct target_maps {
    struct target_mapping *v;  /* sorted by address */
    size_t n, cap;
};

struct target_thread {
    pid_t tid;
    uint64_t fsbase;           /* the thread pointer: glibc's struct pthread, where x86-64's TLS is reached */
    const uint64_t *regs;      /* a core's: its registers at the dump (struct user_regs_struct's order); NULL live */
    const uint8_t *stack;      /* a core's: its stack as saved, from regs' rsp up (stack_len bytes); NULL live */
    size_t stack_len;
};

struct target_threads {
    struct target_thread *v;
    size_t n, cap;
};

/* What a core could not answer: reads of memory it describes but did not save, and no file could give. */
struct target_gaps {
    size_t pages;              /* distinct pages */
    uint64_t first;            /* the first one's address */
    const char *first_path;    /* the file mapped there (owned by the target), NULL: anonymous memory */
};

struct target_view;
struct target_view_ops {
    /* len bytes at addr; false when any byte cannot be read */
    bool (*read)(struct target_view *t, uint64_t addr, void *buf, size_t len);
    /* len bytes at addr (false when they cannot be read), and in the same go, when it can, the page at page
       (0: none) into page_buf: *page_read says whether it was read */
    bool (*read_with_page)(struct target_view *t, uint64_t addr, void *buf, size_t len, uint64_t page, void *page_buf,
                           bool *page_read);
    /* every thread, its thread pointer found (read/rctx: how to read the target for it, through a cache) */
    int (*threads)(struct target_view *t, elf_memory_reader read, void *rctx, struct target_threads *out, char *err,
                   size_t errlen);
    /* a thread's name (its comm), "" when not known (a core does not keep threads' names) */
    void (*thread_name)(struct target_view *t, pid_t tid, char name[16]);
    /* a thread's time on a CPU so far (ns, the scheduler's own count) and its state now ('R' running or waiting
       for a CPU, 'S' or 'D' blocked, ...); false when not known (a core) */
    bool (*thread_sched)(struct target_view *t, pid_t tid, uint64_t *cpu_ns, char *state);
    bool (*gone)(struct target_view *t);              /* the process exited (a core: never) */
    bool (*now)(struct target_view *t, struct timespec *out);   /* the moment the memory shows, on CLOCK_MONOTONIC */
    void (*close)(struct target_view *t);
};

struct target_view {
    const struct target_view_ops *ops;
    pid_t pid;                 /* the process (a core's: the dumped one's) */
    bool core;
    struct target_maps maps;
    const char *program;       /* the program's file as maps names it */
    const char *program_file;  /* where taskspy reads it ("/proc/PID/exe", a core's program file) */
    /* a core's: what it could not answer */
    struct target_gaps gaps;
    bool program_unchecked;    /* the core holds no build id of its program: the file was taken as found */
    size_t unusable_files;     /* files it names that are not on this machine, or of another build: not read */
    const char *first_unusable;
};

/* A live process: its maps read, its threads listed through libthread_db (root: "/proc/PID/root" or "").
 * Returns 0, or -1 with one line in err. */
int view_open_live(struct target_view **out, pid_t pid, const char *root, char *err, size_t errlen);
/* A core file (elf/'s elf_core), with the files it names opened where it left their memory out (each checked by
 * the build id the core holds of it); exe: the program's file when the core's names do not lead to it, or NULL.
 * Returns 0, or -1 with one line in err (a bad core; the program not found; a program of another build). */
int view_open_core(struct target_view **out, const char *core, const char *exe, char *err, size_t errlen);
/* an elf_memory_reader; ctx is a struct target_view * */
bool view_read(void *ctx, uint64_t addr, void *buf, size_t len);
void view_close(struct target_view *t);
/* the mapping that holds addr, or NULL */
const struct target_mapping *target_maps_find(const struct target_maps *m, uint64_t addr);
/* a live process's mappings, from /proc/PID/maps (sorted by address). Returns 0, or -1 with errno. */
int target_maps_load(pid_t pid, struct target_maps *out);
void target_maps_free(struct target_maps *m);
/* the load bias of the object at path (as maps names it) whose ELF is ef; false when it is not mapped */
bool target_maps_bias(const struct target_maps *m, const char *path, const struct elf_file *ef, uint64_t *bias);

/* ---- target_memory.c: reads through a cache of pages --------------------------------------------------- */
/* A cache of whole pages, one read of the target per page: a task's future is read in a few hundred small reads
 * of the same pages. Reset before each task, so that what one task's decode sees is read after that task's
 * first state word (the consistency check) and never a page read for another task's decode (the page read
 * ahead for a task is its header's, read before its first state word); pages of read-only mappings (the vtables
 * every task's header points to) are kept across resets. */
#define MEMORY_PAGE 4096u
struct memory_page {
    uint64_t addr;
    bool readable;
    uint8_t bytes[MEMORY_PAGE];
};

struct memory_pages {
    struct u64_map index;      /* page address -> index in v */
    struct memory_page *v;
    size_t n, cap;
};

struct memory_cache {
    struct target_view *target;
    struct memory_pages task;         /* this task's pages, dropped by each reset */
    struct memory_pages lasting;      /* pages of read-only mappings */
    struct memory_page ahead;         /* read ahead for the next task (addr 0: none), kept by the next reset */
    const struct memory_page *last;   /* the page the last read was in (most reads are in the one before) */
};

int memory_cache_init(struct memory_cache *c, struct target_view *target);
void memory_cache_reset(struct memory_cache *c);
void memory_cache_free(struct memory_cache *c);
/* an elf_memory_reader; ctx is a struct memory_cache * */
bool memory_cache_read(void *ctx, uint64_t addr, void *buf, size_t len);
/* len bytes at addr straight from the target (not cached), and in the same read the page that holds ahead (0:
 * none), which the next reset keeps as the first of its pages: a task's second read of its state word and the
 * next task's header in one system call. False when the bytes at addr cannot be read. */
bool memory_cache_read_now(struct memory_cache *c, uint64_t addr, void *buf, size_t len, uint64_t ahead);

/* ---- thread_pointers.c: every thread's thread pointer (libthread_db, no stop) ------------------------ */
struct thread_pointer {
    pid_t tid;
    uint64_t fsbase;           /* the thread pointer: glibc's struct pthread, where x86-64's TLS is reached */
};

struct thread_pointer_list {
    struct thread_pointer *v;
    size_t n, cap;
};

/* The threads of pid through glibc's libthread_db, its symbols looked up in the target's mapped objects (root:
 * the target's root directory prefix; maps must outlive the lister), the target's memory read with read/rctx
 * (of each listing: a live process through its cache, a core's saved memory and mapped files). Open once, list
 * at every snapshot. */
struct thread_lister;
int thread_lister_open(struct thread_lister **out, pid_t pid, const char *root, const struct target_maps *maps,
                       elf_memory_reader read, void *read_ctx, char *err, size_t errlen);
/* read (with read_ctx): how this listing reads the target's memory (NULL: as given to thread_lister_open) */
int thread_lister_list(struct thread_lister *t, elf_memory_reader read, void *read_ctx, struct thread_pointer_list *out,
                       char *err, size_t errlen);
void thread_lister_close(struct thread_lister *t);

/* ---- tokio_layout.c: tokio's structures, found by name ------------------------------------------------ */
/* CONTEXT's current_task_id, from the start of its Context struct: the id, and how its Option says Some */
struct tokio_id_field {
    uint64_t id_offset;
    uint32_t id_size;          /* 1 to 8 bytes (tokio's Id is a u64) */
    bool has_tag;              /* the Option has a discriminant of its own (else the id is, 0 None) */
    uint64_t tag_offset;
    uint32_t tag_size;
    uint64_t some_value;       /* the discriminant's value for Some */
};

struct tokio_layout {
    struct dwarf_types *dwarf;
    uint64_t bias;             /* the executable's load bias: runtime address = link-time + bias */
    int64_t context_tp_offset; /* tokio's CONTEXT (its Context struct) from the thread pointer */
    Dwarf_Die context;         /* its type */
    struct tokio_id_field task_id;   /* its current_task_id */
    int64_t worker_tp_offset;  /* tokio 1.24's multi-thread worker::CURRENT (a Cell<*const Context>), 0: none */
    int64_t current_tp_offset; /* tokio 1.24's current_thread::CURRENT (the same), 0: none */
    Dwarf_Die current_context; /* tokio 1.24's current_thread::Context, when current_tp_offset is set */
    uint64_t next_id;          /* tokio's task id counter (task::id::Id::next's NEXT_ID, link-time address), 0: none */
    Dwarf_Die header, vtable, trailer;
    Dwarf_Die handle_multi, handle_current;   /* the runtime handles' types (found: has_handle_*) */
    bool has_handle_multi, has_handle_current;
    Dwarf_Die worker_context;  /* tokio 1.24's multi_thread::worker::Context, when worker_tp_offset is set */
    struct dwarf_member header_state, header_vtable;
    struct dwarf_member vtable_poll, vtable_trailer_offset, vtable_id_offset;
    uint64_t trailer_next;     /* offset of the owned list's next pointer in Trailer */
    uint64_t trailer_prev;     /* ... and of its prev pointer */
    char version[64];          /* "tokio" or "tokio 1.54.1" (from the DWARF's file paths) */
    struct timespec now;       /* the moment the reads show (CLOCK_MONOTONIC; tv_sec < 0: not known), set by the
                                  reader at each snapshot: now for a live process, the dump's for a core */
};

/* Find the layout in exe (the file to read DWARF and symbols from: the executable or its debug file).
 * Returns 0, or -1 with one line in err naming what is missing. */
int tokio_layout_find(struct tokio_layout *out, const char *exe, char *err, size_t errlen);
void tokio_layout_free(struct tokio_layout *l);

/* per thread: what CONTEXT says (read from the thread pointer) */
struct thread_context {
    uint64_t current_task;     /* tokio's id of the task polled now, 0 none */
    uint64_t handle;           /* address of the runtime handle's data (multi_thread::Handle or
                                  current_thread::Handle), 0 when the thread is in no runtime */
    bool multi_thread;
    int64_t worker_index;      /* -1 when not a multi-thread worker */
    int64_t tick;              /* its scheduler core's tick (Core.tick: a turn of the scheduler's loop), read while
                                  the thread polls a task (its core is then in its scheduler Context), else -1 */
    uint64_t core;             /* that core's address (0: not in the context) and type */
    Dwarf_Die core_type;
};

bool tokio_thread_context(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t fsbase,
                          struct thread_context *out);
/* the list heads of the runtime's owned tasks (handle from thread_context) */
size_t tokio_owned_heads(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                         bool multi_thread, uint64_t *heads, size_t max);
/* the local run queue length of worker index of a multi-thread runtime, -1 when unknown */
int64_t tokio_local_queue(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                          int64_t index);
/* the runtime's global (injection) queue length, -1 when unknown */
int64_t tokio_global_queue(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                           bool multi_thread);
/* the runtime's blocking pool: its threads and how many of them are idle; false when unknown */
bool tokio_blocking_threads(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t handle,
                            bool multi_thread, int64_t *threads, int64_t *idle);
/* The task headers queued on the thread's core (c: its tokio_thread_context, its core in the context): a multi-thread
 * worker's LIFO slot and local run queue, a current-thread runtime's queue; into out, at most max. */
size_t tokio_core_queue(const struct tokio_layout *l, elf_memory_reader read, void *rctx,
                        const struct thread_context *c, uint64_t *out, size_t max);
/* tokio's next task id (its NEXT_ID counter: every task spawned so far took one), 0 when unknown */
uint64_t tokio_next_task_id(const struct tokio_layout *l, elf_memory_reader read, void *rctx);

/* tokio's task state word (tokio/src/runtime/task/state.rs: the same bits since tokio 1.0) */
#define TOKIO_STATE_RUNNING 0x1u
#define TOKIO_STATE_COMPLETE 0x2u
#define TOKIO_STATE_NOTIFIED 0x4u
#define TOKIO_STATE_JOIN_INTEREST 0x8u
#define TOKIO_STATE_REF_SHIFT 6

/* One task header as read: its state word, vtable and the vtable's fields. */
struct task_header {
    uint64_t state;
    uint64_t vtable;
    uint64_t poll;             /* the vtable's poll function (runtime address) */
    uint64_t trailer_offset, id_offset;
    uint64_t id;
    uint64_t next;             /* the next header in the owned list, 0 at the end */
    uint64_t prev;             /* the one before, 0 at the head (both 0: taken out of the list, or alone in it) */
};

bool tokio_read_header(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t header,
                       struct task_header *out);
/* the state word alone (the second read of the consistency check) */
bool tokio_read_state(const struct tokio_layout *l, elf_memory_reader read, void *rctx, uint64_t header,
                      uint64_t *state);

/* ---- future_decode.c: a task's async backtrace --------------------------------------------------------- */
struct decode_limits {
    unsigned max_depth;
    size_t max_bytes;
    bool no_details;           /* leaves named only, nothing read of them (task_reader_options.no_details) */
    struct string_pool *details;   /* where the leaves' details go (NULL: the decoder's pool): the reader's is
                                      emptied at each snapshot, since a detail's text changes from one to the next */
};

/* ---- future_leaves.c: what can be read of a leaf future --------------------------------------------------- */
enum leaf_strength { LEAF_NONE, LEAF_WEAK, LEAF_STRONG };
/* How a leaf future is read, found once per type: which rule named it and where its fields are. */
struct leaf_plan {
    enum leaf_strength strength;   /* LEAF_NONE: not a leaf taskspy knows */
    int rule;                      /* (future_leaves.c's rules) */
    bool fields_found;             /* the fields the detail reads */
    uint64_t offset[5];
    size_t size[2];
};
/* The one raw pointer inside a value of type (an AtomicPtr, Unique, NonNull, an Option<NonNull> niche, an Arc:
 * wrappers around it): its offset added to *offset, the type it points to in target. */
bool type_pointer_inside(Dwarf_Die *type, uint64_t *offset, Dwarf_Die *target);
/* Whether qualified (type's name) is a leaf future taskspy knows, and where what can be read of it is. */
void future_leaf_plan(const char *qualified, Dwarf_Die *type, struct leaf_plan *out);
/* The leaf at addr described (pooled), or NULL when nothing could be read. */
const char *future_leaf_detail(const struct tokio_layout *l, struct string_pool *pool, elf_memory_reader read,
                               void *rctx, const struct leaf_plan *plan, uint64_t addr);

/* What the decoder needs to know of a type, found once per DWARF entry and kept across snapshots (finding
 * them again for every value was most of a snapshot's CPU after the reads: qualified names, demangled
 * function names, variant parts looked for among a big struct's members): DIE offset -> facts. Zeroed: empty. */
enum type_kind {
    TYPE_OTHER,                /* searched through its members */
    TYPE_LEAF,                 /* a leaf future taskspy knows (future_leaf_plan) */
    TYPE_TRACE_ROOT,           /* tokio's taskdump wrapper: searched through */
    TYPE_SHARED,               /* Arc, Rc, the runtime's own state: not searched */
    TYPE_BOX,                  /* followed */
    TYPE_VEC,                  /* alloc::vec::Vec<T>: its elements are branches (select_all's futures) */
    TYPE_UNORDERED,            /* futures' FuturesUnordered: its tasks' futures, a raw-pointer list, are branches */
};
/* Where a set of futures awaited at once keeps them: a slice's or Vec's elements, a FuturesUnordered's list. */
struct branch_set {
    bool ok;
    uint64_t pointer_offset;   /* the elements' (or the list head's) pointer */
    uint64_t length_offset;    /* a slice's or Vec's length */
    uint64_t next_offset;      /* FuturesUnordered: a task's next_all pointer */
    uint64_t element_offset;   /* FuturesUnordered: a task's future */
    Dwarf_Die element;         /* the element type (FuturesUnordered: the task's future's) */
    int64_t element_size;
};
struct type_facts {
    int tag;                   /* DW_TAG_*: only a structure type's other facts are found */
    bool async_env;            /* an async fn's or block's state machine */
    bool branches;             /* a tuple: select!'s or join!'s branches */
    bool closure;              /* a closure's captures */
    bool members_known;        /* its members are members.v[members_at ..][n_members] */
    uint32_t members_at, n_members;
    const char *name;          /* qualified name (pooled), NULL: none */
    const char *function;      /* an async state machine's function (pooled), NULL: none or not one */
    const char *home;          /* an async state machine's source file (its Unresumed variant's, as the DWARF
                                  names it; pooled), NULL: not known */
    bool has_variants;         /* a Rust enum */
    bool maybe_done;           /* a MaybeDone (tokio's, futures'): its Done and Gone variants hold no future */
    bool discr_known;          /* its discriminant's place is known (discr_size 0: untagged) */
    uint64_t discr_offset;
    size_t discr_size;
    int64_t size;              /* DW_AT_byte_size, -1: none */
    enum type_kind kind;
    struct leaf_plan leaf;     /* TYPE_LEAF: how it is read */
    uint8_t lead;              /* enum type_lead */
    /* TYPE_BOX: a trait object's (data and vtable pointers at pointer_offset, vtable_offset), or a sized
       type's (its pointer at pointer_offset, to target); a union's value member (at pointer_offset, of type
       target: MaybeUninit's) */
    bool box_dyn, has_target;
    uint64_t pointer_offset, vtable_offset;
    Dwarf_Die target;
    /* a boxed or borrowed slice (Box<[T]>, &mut [T]: join_all's futures), a Vec, a FuturesUnordered */
    struct branch_set set;
    /* a closure of tokio's select!: its mask of disabled branches (a member `disabled`, by reference or not),
       which the tuple of its futures (its other member) is read with */
    bool has_mask, mask_indirect;
    uint64_t mask_offset;
    size_t mask_size;
};
/* The variant a value of one enum type holds, per discriminant value met, with what an async state machine's
 * variant says (the await's position, the awaited future). */
struct variant_facts {
    Dwarf_Off type;
    uint64_t value;
    bool ok;                   /* the value selects a variant */
    struct dwarf_member variant;
    const char *name;          /* the variant type's name (Suspend0, Unresumed, ...) */
    const char *file;          /* a Suspend variant's await: the program's line (see task_frame) */
    uint32_t line;
    const char *macro;         /* the macro the await is written in, NULL: none */
    bool macro_line;           /* file and line are the macro's own */
    bool done;                 /* a MaybeDone's Done or Gone: no future in it */
    bool has_awaitee;
    struct dwarf_member awaitee;
    bool has_field0;           /* a tuple variant's first field (Stage's Running(T)) */
    struct dwarf_member field0;
};
/* Whether a value of a type can lead to a future decode would show (future_decode.c's may_lead): found once
 * per type from the DWARF alone, whatever the value. */
enum type_lead { LEAD_UNKNOWN, LEAD_SEARCHING, LEAD_NONE, LEAD_MAYBE };
/* A structure's member as the decoder walks it. */
struct member_facts {
    Dwarf_Die type;
    uint64_t offset;
    bool marker;               /* PhantomData's _marker: nothing to search */
    uint8_t lead;              /* enum type_lead of its type, found on the member's first search */
};
struct type_cache {
    struct u64_map by_die;
    struct {
        struct type_facts *v;
        size_t n, cap;
    } facts;
    struct {
        struct member_facts *v;
        size_t n, cap;
    } members;
    struct u64_map variant_by_key;   /* (type, value) mixed -> index in variants */
    struct {
        struct variant_facts *v;
        size_t n, cap;
    } variants;
    struct decoder *spare;           /* future_decode's working state (~100 KB), kept for the next task */
};
void type_cache_free(struct type_cache *c);

/* What a vtable's tasks hold: the root future's type and where it is (found once per vtable). */
struct task_plan {
    bool ok;
    Dwarf_Die future;          /* T */
    Dwarf_Die stage;           /* CoreStage's Stage<T> enum */
    uint64_t stage_offset;     /* from the header */
    const char *root;          /* the root's function or type name (pooled) */
    uint64_t future_size;      /* bytes of T (0: not known) */
    uint64_t boxed_size;       /* T is a Pin<Box<F>> (tokio boxes large futures on spawn): F's bytes, else 0 */
    const char *file;          /* where the root future is declared (its type's, or its async fn's), NULL */
    uint32_t line;
};

bool task_plan_find(const struct tokio_layout *l, struct string_pool *pool, uint64_t poll, struct task_plan *out);
/* The root future's name of the tasks whose vtable's poll function is poll (a link-time address in it): its
 * function (an async fn's, as the CPU profile names it) or its type, from raw::poll<T, S>'s template parameter T,
 * into buf. False when poll is not in a tokio raw::poll<T, S> or T has no name. */
bool task_root_name(struct dwarf_types *dwarf, uint64_t poll, char *buf, size_t len);

/* "a::b::{async_fn_env#0}<T>" -> "a::b": async suffixes removed, in place (SPEC 3) */
void tasks_strip_async(char *name);

/* ---- native_frames.c: a running task's worker stack as frames ----------------------------------------- */
/* ips (innermost first, as the worker_stack callback read them) as frames into out (at most max): exe is the
 * executable's path as maps names it, root the prefix to open the target's files through. Returns how many. */
size_t native_frames(const struct tokio_layout *l, const struct target_maps *maps, const char *exe, const char *root,
                     struct string_pool *pool, const uint64_t *ips, size_t n, struct task_frame *out, size_t max);

/* A task's decoded tree (struct task_node, preorder), its first pending path, its leaf: all in one allocation
 * (nodes, then frames), owned by the caller (free(nodes)). */
struct decoded_future {
    struct task_node *nodes;
    size_t n_nodes;
    bool truncated;
    struct task_frame *frames;
    size_t n_frames;
    const char *leaf;
    const char *detail;
};

/* Decode the future of the task at header (plan from its vtable) into out (strings pooled; types: what is known
 * of the types met so far, kept by the caller). Returns false when the task's stage is not a running future
 * (complete, consumed) or nothing could be read; out is then empty. */
bool future_decode(const struct tokio_layout *l, struct string_pool *pool, struct type_cache *types,
                   const struct decode_limits *limits,
                   elf_memory_reader read, void *rctx, uint64_t header, const struct task_plan *plan,
                   struct decoded_future *out);



#endif
