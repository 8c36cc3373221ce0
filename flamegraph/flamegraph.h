/* SPDX-License-Identifier: GPL-3.0-or-later */
/* flamegraph.h: the whole interface of the flamegraph layer: a profile (stacks of named frames merged into
 * a tree of counts, memory growing with distinct stacks, not samples), task-aware stack building (task
 * roots, runtime frames cut, await points), the folded and SVG readers/writers, differential profiles (two
 * folded files compared), and the speedscope, pprof and Chrome trace exports. */
#ifndef TASKSPY_FLAMEGRAPH_H
#define TASKSPY_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- profile: interned frame names and a prefix tree of stacks ---------------------------------- */

#define PROFILE_NO_FRAME UINT32_MAX
#define PROFILE_NO_NODE UINT32_MAX

struct profile;

/* A node of the stack tree. Node 0 is the root (frame PROFILE_NO_FRAME); a node's total counts every
 * sample whose stack passes through it, self those whose stack ends there. A node comes after its parent
 * in the array; its children are the nodes that name it their parent (no links: 24 bytes a node, the
 * biggest part of a big profile's memory). */
struct profile_node {
    uint32_t frame;
    uint32_t parent;
    uint64_t total;
    uint64_t self;
};

struct profile *profile_new(void);
void profile_free(struct profile *p);
/* Intern a frame name (len bytes, need not be NUL-terminated). Returns its id, or PROFILE_NO_FRAME on
 * allocation failure. The same name always gets the same id. */
uint32_t profile_intern(struct profile *p, const char *name, size_t len);
const char *profile_frame_name(const struct profile *p, uint32_t frame);
size_t profile_frame_count(const struct profile *p);
/* Add count samples of a stack of frame ids, root first. Returns 0, or -1 on allocation failure. */
int profile_add_ids(struct profile *p, const uint32_t *frames, size_t n, uint64_t count);
/* Same with names (interned on the way). */
int profile_add(struct profile *p, const char *const *names, size_t n, uint64_t count);
const struct profile_node *profile_nodes(const struct profile *p, size_t *n);
/* The node where the stack added last ends (0 for an empty stack), PROFILE_NO_NODE when that add failed. */
uint32_t profile_last_leaf(const struct profile *p);
uint64_t profile_total(const struct profile *p);
size_t profile_distinct_stacks(const struct profile *p);
/* Free the lookup tables that adding stacks and names uses (~20 bytes a node): reading the profile needs
 * none of them, and the next intern or add makes them again. Call when done adding, before writing: peak
 * memory then holds the writer's allocations or the tables, not both (big allocations are unmapped and
 * mapped afresh, so the writer's pages are new ones the kernel zeroes either way). */
void profile_trim(struct profile *p);

/* ---- await points --------------------------------------------------------------------------------------- */

/* An await point's frame name (await_names.c): "NAME @ FILE:LINE" ("NAME" when FILE or LINE is not known), then
 * " (MACRO)" when the await is written inside a macro (macro: "select!", "join!"; FILE:LINE the line where it was
 * invoked) or " (MACRO, its own line)" when FILE:LINE is the macro's own source. Returns snprintf's. */
int await_point_name(char *buf, size_t len, const char *function, const char *file, unsigned line,
                     const char *macro, bool macro_line);
/* The length of name (len bytes) without such a " (MACRO...)" suffix: len when it has none. */
size_t await_point_macro_at(const char *name, size_t len);

/* ---- task-aware stacks ------------------------------------------------------------------------------ */

/* One symbolized frame, prepared once per address (names interned in the profile). */
struct stack_frame {
    uint32_t display;          /* what the graph shows: "NAME", "NAME @ FILE:LINE" (await point), "NAME_[k]" */
    uint32_t function;         /* the function's name as symbolized (matches poll-marker frames) */
    uint32_t entry;            /* the name a task root uses: async suffixes removed */
    uint8_t runtime;           /* non-zero for a runtime's frame (flags): 1 polls one task (a known boundary
                                  or --task-boundary), 2 glue inlined below such a frame, 4 a worker loop,
                                  8 the frame the task's future follows, 16 a boundary whose rule has one */
    bool async;                /* an async frame (its name had an async suffix) */
    uint32_t macro;            /* an async frame positioned in a macro's own source (the closure a select! or
                                  join! polls its branches in): the macro's name ("select!"), else
                                  PROFILE_NO_FRAME */
};

enum task_grouping { GROUP_BY_ENTRY, GROUP_BY_TASK, GROUP_BY_NONE };

enum stack_task_state { STACK_NO_TASK, STACK_IN_TASK, STACK_UNKNOWN_TASK };

struct task_stacks;

/* boundary_regex: extra runtime boundary (POSIX extended regex over function names) or NULL. Returns NULL
 * with a message in err for a bad regex or no memory. */
struct task_stacks *task_stacks_new(struct profile *p, enum task_grouping group_by, bool await_points,
                                    const char *boundary_regex, char *err, size_t errlen);
void task_stacks_free(struct task_stacks *t);
/* Without poll markers, find tasks by the runtimes' boundary frames (tokio's raw::poll<T,S>, and
 * Harness<T,S>::poll where a build keeps it out of line): a sample
 * whose stack passes through one (and not through a worker loop below it) is a task sample. */
void task_stacks_use_runtime_boundaries(struct task_stacks *t, bool on);
/* The samples' task ids are read from the runtime's thread-local (tokio's CONTEXT.current_task_id), not
 * from poll probes. tokio sets a task's id there while it drops that task's output, also inside another
 * task's poll (a JoinHandle dropped there): a stack that does so below its boundary gets no id, only its
 * entry ("task: ENTRY"), and teaches no entry for the id. */
void task_stacks_ids_from_thread_local(struct task_stacks *t, bool on);
/* Samples attributed to tasks by boundary frames so far. */
uint64_t task_stacks_boundary_samples(const struct task_stacks *t);
/* Samples the markers placed (in a task or in none: not with runtime boundaries alone) whose stack runs task
 * code below a task boundary (the poll marker's frame, a runtime boundary or --task-boundary, not above a
 * worker loop; below it, not in the boundary frame itself). */
struct task_boundary_counts {
    uint64_t samples;
    uint64_t no_task;          /* of them, those the markers said were in no task */
    uint32_t function;         /* the boundary's function in the last of those, or PROFILE_NO_FRAME */
};
void task_stacks_boundary_counts(const struct task_stacks *t, struct task_boundary_counts *out);
/* Whether the markers put every one of at least TASK_BOUNDARY_MIN_SAMPLES such samples in no task: a TLS
 * marker that read 0 in all of them was never set (its store dropped by a compiler). */
#define TASK_BOUNDARY_MIN_SAMPLES 10
bool task_boundary_never_in_task(const struct task_boundary_counts *c);
/* Prepare one frame: name as symbolized, source file base name and line (NULL/0 if unknown). */
int task_stacks_prepare(struct task_stacks *t, const char *name, const char *file, unsigned line, bool kernel,
                        struct stack_frame *out);
/* The same, for a frame whose position is in a macro's own source (macro: its name, "select!"; NULL: none, as
 * task_stacks_prepare). Such an async frame is the macro's closure inside the function that invoked it: on a
 * stack where that function's own async frame is above it (a few frames up), it is left out and that frame is
 * shown as "NAME @ FILE:LINE (select!)" (its line is the invocation's); elsewhere it shows "NAME @ FILE:LINE
 * (select!, its own line)". */
int task_stacks_prepare_in_macro(struct task_stacks *t, const char *name, const char *file, unsigned line,
                                 bool kernel, const char *macro, struct stack_frame *out);
/* Add count samples of one stack, frames root first (outermost first), kernel frames last. thread_root is
 * the frame id of the thread's name. A task stack is cut below the innermost frame whose function is
 * marker_function (the frame that fired the poll marker), else below the innermost runtime frame, then
 * rooted "task: ENTRY" / "task ID: ENTRY" / nothing by the grouping. Samples outside a task keep their
 * whole stack under thread_root. Returns 0 or -1 (no memory). */
int task_stacks_add(struct task_stacks *t, uint32_t thread_root, enum stack_task_state state, uint64_t task_id,
                    uint32_t marker_function, const struct stack_frame *const *frames, size_t n, uint64_t count);
/* The stack task_stacks_add would add for a stack of task task_id (in a task; cut below the poll-marker frame the
 * samples showed last when it is on this stack, else at the runtime boundaries), without adding it: frame ids root first in *ids (valid until the next call on t), their
 * number in *n_ids; 0 when only the task's root can be told: a stack inside the poll wrapper of a task whose
 * entry is not known yet (task_stacks_task_root at the end names it), or one on which no boundary is found
 * (where a sample keeps its innermost frames, a wait would be filed under the thread's whole stack: a
 * registration stack taken before any sample showed the poll marker's function, at a recording's start).
 * Returns 0 or -1 (no memory). */
/* A stack inside a poll marker's poll that task_stacks_add does not get (a waker-registration stack) had
 * marker_function as its poll-marker frame's function: task_stacks_cut cuts below it from now on, as after a
 * sample with it. PROFILE_NO_FRAME: nothing changes. */
void task_stacks_saw_marker(struct task_stacks *t, uint32_t marker_function);
int task_stacks_cut(struct task_stacks *t, uint32_t thread_root, uint64_t task_id,
                    const struct stack_frame *const *frames, size_t n, const uint32_t **ids, size_t *n_ids);
/* The profile node of the stack the last task_stacks_add put in the profile, or PROFILE_NO_NODE when it
 * held that sample back (its task's entry not known yet; settled by task_stacks_finish). */
uint32_t task_stacks_last_node(const struct task_stacks *t);
/* The root frame the samples of task task_id have by the grouping ("task: ENTRY" or "task ID: ENTRY"; with
 * --group-by none "task: ENTRY" too), "[task entry unknown]" when no sample told its entry; PROFILE_NO_FRAME
 * when out of memory. */
uint32_t task_stacks_task_root(struct task_stacks *t, uint64_t task_id);
/* Whether some sample told task_id's entry. */
bool task_stacks_entry_known(const struct task_stacks *t, uint64_t task_id);
/* Name task_id's entry from outside its samples (its root future, from the code that polled it) when no sample
 * told it: its held-back samples, polls and waits are then rooted "task: ENTRY". Returns 0 or -1 (no memory). */
int task_stacks_name_task(struct task_stacks *t, uint64_t task_id, const char *entry);
/* The root task_id's samples would have (as task_stacks_task_root) if its entry were entry. PROFILE_NO_FRAME: no
 * memory. */
uint32_t task_stacks_root_for(struct task_stacks *t, uint64_t task_id, const char *entry);
/* Settle samples held back because their task's entry was not known when they came. Call once at the end,
 * before writing. Returns 0 or -1 (no memory). */
int task_stacks_finish(struct task_stacks *t);
/* Remove Rust async suffixes ("::{{closure}}", "::{async_fn#0}", "::{async_block#0}", "::{closure#0}") from
 * the end of name, in place. Returns true if it was an async frame. */
bool task_stacks_strip_async_suffix(char *name);

/* ---- folded stacks -------------------------------------------------------------------------------- */

/* Write "root;...;leaf COUNT" lines, one per distinct stack, sorted. Returns 0 or -1 (errno). */
int profile_write_folded(const struct profile *p, FILE *out);

struct folded_read_report {
    uint64_t lines;          /* lines read */
    uint64_t stacks;         /* lines accepted */
    uint64_t skipped;        /* malformed lines skipped (each reported through the warnings callback) */
};
/* Where the reader reports malformed lines: one call per message, a line without '\n'. */
struct folded_warnings {
    void (*warn)(void *ctx, const char *message);
    void *ctx;
    /* If not NULL: the input (a regular file) is read through a mapping of it, len bytes from start, until a
     * call with (NULL, 0). Should the file shrink meanwhile, touching its pages past the new end raises SIGBUS
     * there: a caller catching it may map zero pages over them, so the read goes on (it finds NUL bytes, lines
     * reported malformed), and must then discard the profile. */
    void (*mapped)(void *ctx, const void *start, size_t len);
};
/* Read folded text into p (merging with what it holds). Malformed lines (no count, negative or
 * non-numeric count, empty frames, over-long lines) are reported as "NAME:LINE: why, line skipped"
 * through warnings (if not NULL; the first 100, then "NAME: N more malformed lines skipped") and skipped;
 * CRLF endings are accepted; perf script's trailing annotations are tolerated. Returns 0, or -1 with a
 * one-line message in err for a fatal problem (read error, no valid line). */
int profile_read_folded(struct profile *p, FILE *in, const char *name, const struct folded_warnings *warnings,
                        struct folded_read_report *report, char *err, size_t errlen);

/* ---- SVG flame graph ------------------------------------------------------------------------------- */

struct svg_options {
    const char *title;       /* default "Flame Graph" */
    const char *subtitle;    /* second line, or NULL */
    const char *header;      /* what was profiled: target, duration, frequency, samples, lost; or NULL */
    unsigned width;          /* image width in px, default 1200 */
    unsigned frame_height;   /* px per frame, default 16 */
    double min_width;        /* frames narrower than this (px) are left out, default 0.1 */
    const char *colors;      /* palette name: "taskspy" (default), "hot", "mem", "io", ..., "wait" */
    bool inverted;           /* icicle graph: root at the top */
    bool reverse;            /* merge stacks reversed (leaf first) */
    const char *count_name;  /* "samples" */
    unsigned count_divisor;  /* > 1: tooltips show counts divided by it, 3 decimals (microseconds as "ms") */
};
void svg_options_init(struct svg_options *o);
/* True if palette names a known palette ("taskspy", "hot", "mem", "io", "red", ...). */
bool svg_palette_known(const char *palette);
/* Comma-separated list of the known palettes, for --help and error messages. */
const char *svg_palette_names(void);
/* Render p as one self-contained interactive SVG. Returns 0 or -1 (errno). */
int profile_write_svg(const struct profile *p, FILE *out, const struct svg_options *opts);

/* ---- differential profiles: two profiles side by side (taskspy diff) ---------------------------------- */

/* Every stack of two profiles with its count in each, as difffolded.pl pairs two folded files; drawn as
 * flamegraph.pl draws such a pair. */
struct diff_profile;

/* Pair before with after. A stack in one only counts 0 in the other. normalize: before's counts are scaled
 * to after's total first, as difffolded.pl -n does (each stack's count x after's total / before's total,
 * rounded down). Takes after, which keeps the graph's widths (before's stacks are added to it with no
 * samples), and frees it with the diff, or at once on failure; before stays the caller's. Both totals must
 * be above 0. Returns NULL with errno EINVAL (a total of 0) or ENOMEM. */
struct diff_profile *diff_profile_new(const struct profile *before, struct profile *after, bool normalize);
void diff_profile_free(struct diff_profile *d);

/* What the pair holds. */
struct diff_summary {
    uint64_t stacks;                  /* distinct stacks in either */
    uint64_t grew, shrank;            /* stacks with more samples in after / fewer (before normalized) */
    uint64_t only_before, only_after; /* stacks in one profile only */
    uint64_t before_total;            /* before's samples, normalized when asked */
    uint64_t after_total;
};
void diff_profile_summary(const struct diff_profile *d, struct diff_summary *out);

/* difffolded.pl's output: "root;...;leaf BEFORE AFTER", one line per stack of either profile, sorted.
 * Returns 0 or -1 (errno). */
int diff_profile_write_folded(const struct diff_profile *d, FILE *out);

/* The differential flame graph, as flamegraph.pl draws difffolded.pl's output: widths from after; each
 * frame's fill from the change of its own samples (the stacks ending in it: after - before), red where
 * they grew and blue where they shrank, the deeper the more they changed, relative to the largest change of
 * any stack (white: unchanged); tooltips "NAME (A samples, P%; before B, after A; +D%)" with the frame's
 * samples in each profile and the change of its own samples as a share of after's total (flamegraph.pl's
 * figure). opts->reverse is not supported (EINVAL); opts->colors is not used. Returns 0 or -1 (errno). */
int diff_profile_write_svg(const struct diff_profile *d, FILE *out, const struct svg_options *opts);

/* ---- exports for other viewers: speedscope, pprof ------------------------------------------------- */

/* What the exports say about the recording besides the stacks (0 / NULL: unknown). */
struct export_info {
    const char *name;            /* what was profiled (command line, file name); default "taskspy" */
    const char *exporter;        /* the program that wrote it, e.g. "taskspy 0.1" */
    uint64_t period_ns;          /* CPU time one sample stands for: 1e9 / frequency */
    uint64_t duration_ns;        /* wall time recorded */
    uint64_t start_time_ns;      /* when the recording started, ns since the Unix epoch */
    bool wait;                   /* pprof: a third sample type, wait/nanoseconds (the wait profile's) */
};

/* speedscope's own JSON file format (https://www.speedscope.app/file-format-schema.json): one sampled
 * profile per root frame (task root or thread name; that frame is the profile's name, not a frame of its
 * stacks), a shared frame table with file and line read from "NAME @ FILE:LINE"-style names, weights in
 * samples. An empty profile gives one empty profile. Returns 0 or -1 (errno). */
int profile_write_speedscope(const struct profile *p, FILE *out, const struct export_info *info);

/* pprof: a gzipped profile.proto message. Sample types samples/count and, when period_ns is known,
 * cpu/nanoseconds (count x period_ns); labels task, task_id and thread read from the root frame; one
 * Location per distinct frame (with a synthetic address in one synthetic mapping), frames annotated "_[i]"
 * joining the location of the frame they are inlined into as its inline chain; Functions with names and
 * file names. Returns 0 or -1 (errno). */
int profile_write_pprof(const struct profile *p, FILE *out, const struct export_info *info);

/* ---- address stacks: a recording as pprof shows it --------------------------------------------------- */

/* The distinct stacks of a recording as instruction addresses, with counts and labels, beside the profile
 * of names (kept only when a pprof output is asked for). Each distinct address is a Location with its
 * mapping and its inline chain; memory grows with distinct stacks and addresses, not with samples. */
struct address_profile;

struct address_profile *address_profile_new(void);
void address_profile_free(struct address_profile *a);

/* A mapped object of the target. */
struct address_mapping {
    uint64_t start, limit, offset;     /* address range, file offset at start */
    const char *file;                  /* path as the target maps it */
    const char *build_id;              /* hex, or NULL */
};
/* The id (from 1) of the mapping known by key (the caller's: the same key is the same mapping), added as m
 * when new; 0 when out of memory. */
uint32_t address_profile_mapping(struct address_profile *a, uint64_t key, const struct address_mapping *m);

/* One source frame of a location. */
struct address_line {
    const char *function;              /* shown name */
    const char *system_name;           /* linker name (mangled), or NULL: the same */
    const char *file;                  /* source file, or NULL */
    unsigned line, start_line;         /* 0: unknown */
};
/* A new location (id from 1, 0 when out of memory): address in mapping (an id from address_profile_mapping, or
 * 0 for none, as kernel addresses), its inline chain innermost first (the last line is the function the
 * others are inlined into). Each call makes a new location: the caller keeps one per distinct address. */
uint32_t address_profile_location(struct address_profile *a, uint64_t address, uint32_t mapping,
                                  const struct address_line *lines, size_t n);

/* What a stack's samples are labelled with: the frame ids of the thread's name and of the stack's root in
 * the profile of names (a task root or the thread's name; PROFILE_NO_FRAME: the task's root was not known
 * yet, address_profile_finish settles it from task_id, given only then, with has_task_id). */
struct address_labels {
    uint32_t thread;
    uint32_t root;
    uint64_t task_id;
    bool has_task_id;
};
/* Add count samples of a stack of location ids, leaf first. Returns 0 or -1 (no memory). */
int address_profile_add(struct address_profile *a, const uint32_t *locations, size_t n,
                        const struct address_labels *labels, uint64_t count);
/* Add wait_ns nanoseconds of wall time waited (sample type wait/nanoseconds) to a stack of location ids,
 * leaf first (its labels settled). Returns 0 or -1 (no memory). */
int address_profile_add_wait(struct address_profile *a, const uint32_t *locations, size_t n,
                             const struct address_labels *labels, uint64_t wait_ns);
/* A part of stacks to come (a waker-registration stack, leaf first), kept once: its id, UINT32_MAX when out of
 * memory. address_profile_part_locations gives its locations back (n in *n). */
uint32_t address_profile_part(struct address_profile *a, const uint32_t *locations, size_t n);
const uint32_t *address_profile_part_locations(const struct address_profile *a, uint32_t part, size_t *n);
/* Settle the roots not known when their samples came (task_stacks_task_root). Call once, after
 * task_stacks_finish. Returns 0 or -1 (no memory). */
int address_profile_finish(struct address_profile *a, struct task_stacks *t);
/* Distinct stacks so far. */
size_t address_profile_stacks(const struct address_profile *a);

/* pprof from addresses: as profile_write_pprof, but one Location per distinct address with its mapping
 * (file, offset, build id) and inline chain as Lines, Functions with name, system name, file and start line,
 * and labels thread (always), task and task_id (as the stack's root names them: "task: ENTRY", "task ID:
 * ENTRY"). names: the profile the labels' frame ids are in. Returns 0 or -1 (errno). */
int profile_write_pprof_addresses(const struct address_profile *a, const struct profile *names, FILE *out,
                                  const struct export_info *info);

/* ---- Chrome trace: task polls and CPU samples on a time line ---------------------------------------- */

/* A thread of the trace: its tid and the frame id of its name (PROFILE_NO_FRAME: not known). */
struct trace_thread {
    uint32_t tid;
    uint32_t name;
};
/* One poll of a task by a thread; root is the frame id of the task's root ("task: ENTRY"), its name. */
struct trace_poll {
    uint64_t start_ns, end_ns;
    uint64_t task_id;
    uint32_t tid;
    uint32_t root;
};
/* One CPU sample: the profile node its stack ends at (PROFILE_NO_NODE: not known). */
struct trace_sample {
    uint64_t time_ns;
    uint32_t tid;
    uint32_t node;
};
/* One wait of a task between two polls (the wait profile's): [suspended] from start_ns to woken_ns, then
 * [runnable] to end_ns; root as in trace_poll; site: the await point (NULL: not known). */
struct trace_wait {
    uint64_t start_ns, woken_ns, end_ns;
    uint64_t task_id;
    uint32_t root;
    const char *site;
};
/* What the trace shows; times in ns on one clock (any: only differences are written). */
struct trace_events {
    uint32_t pid;
    uint64_t start_ns;                   /* when the recording started; 0: at the first event */
    const struct trace_thread *threads;
    size_t n_threads;
    const struct trace_poll *polls;
    size_t n_polls;
    const struct trace_sample *samples;
    size_t n_samples;
    const struct trace_wait *waits;      /* in time order per task */
    size_t n_waits;
    uint64_t left_out;                   /* polls and samples the recording did not keep (a cap) */
};
/* What the writer did with the polls. */
struct trace_report {
    uint64_t polls;                      /* written */
    uint64_t clipped;                    /* started before the previous poll of their thread ended: their
                                            start moved to that end (written, shorter) */
    uint64_t dropped;                    /* wholly inside an earlier poll of their thread: left out */
    uint64_t contradicted;               /* overlapping a wait of their task (their start and end two polls',
                                            the records between lost): left out */
    uint64_t wait_spans;                 /* [suspended] and [runnable] spans written */
};
/* Trace Event JSON ({"traceEvents":[...]}, as Perfetto UI, chrome://tracing and speedscope open it), times in
 * microseconds from the recording's start: process_name and thread_name metadata; each poll a complete event
 * ("ph":"X") named by its task root with the task id in args, one track per thread, a thread's polls never
 * overlapping (sorted; overlaps clipped); each sample an instant event ("ph":"i") named by its leaf frame
 * whose "sf" points into a stackFrames table of the profile's nodes (name, parent); one "recording" complete
 * event on a track of its own (tid 4194304, above any real tid) spanning info->duration_ns; each task that waited
 * a track of its own above that (thread_name "waits of task ID: ROOT"), its waits as complete events named
 * "ROOT [suspended]" / "ROOT [runnable]" (category "wait"), the await point and task id in args. report may be NULL. Returns 0 or -1 (errno). */
int profile_write_trace(const struct profile *p, const struct trace_events *ev, const struct export_info *info,
                        FILE *out, struct trace_report *report);

#endif
