/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler.h: the whole interface of the sampler layer. It attaches to (or launches) a target, samples its
 * threads with perf_event_open, unwinds each sample to a list of instruction addresses, follows poll
 * markers to tell which task each thread is polling, and hands everything downstream through a sink of
 * callbacks, in order per thread. Nothing here knows about symbols or output formats. */
#ifndef TASKSPY_SAMPLER_H
#define TASKSPY_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/sampler_types.h"

enum sampler_call_graph { SAMPLER_CALL_GRAPH_DWARF, SAMPLER_CALL_GRAPH_FP };

#define SAMPLER_MAX_STACK_SIZE 65528u
#define SAMPLER_MAX_FRAMES 256u
#define SAMPLER_NO_THREAD UINT32_MAX     /* a sample of a thread whose name could not be learnt */

/* The BPF marker slots per CPU region, log2 (sampler_config.marker_slot_bits). */
#define SAMPLER_MARKER_SLOT_BITS_MIN 4
#define SAMPLER_MARKER_SLOT_BITS_MAX 15

struct debug_files;

struct sampler_config {
    pid_t pid;                       /* attach to this process (all threads), or 0 to launch argv */
    char *const *argv;               /* command to launch when pid == 0 */
    unsigned frequency;              /* samples per second of CPU time, per thread */
    enum sampler_call_graph call_graph;
    unsigned stack_size;             /* user stack bytes copied per sample in dwarf mode */
    size_t mmap_pages;               /* data pages per CPU ring buffer (a power of two); 0: from the frequency,
                                        the sample size and the CPUs, as perf record's -m */
    bool kernel;                     /* also record kernel frames */
    double duration;                 /* seconds; 0 = until stopped or the target exits */
    const char *markers;             /* "auto", "none", or a comma list of provider names */
    bool poll_times;                 /* runtimes without markers: also probe poll returns (poll durations) */
    volatile sig_atomic_t *stop;     /* becomes non-zero when the user asks to stop (SIGINT/SIGTERM) */
    const char *search_path;         /* PATH to find the launched command in (as execvp does); NULL: a default */
    enum sampler_marker_records marker_records;  /* debugging: how marker hits come (default: best route) */
    enum sampler_uprobe_events uprobe_events;    /* debugging: which uprobe events (default: tracefs first) */
    unsigned marker_slot_bits;       /* testing: log2 of the BPF marker slots per CPU region (0: the largest) */
    /* The wait profile (SPEC section 3a): also deliver task events (poll start/end, wake, waker registered)
     * through on_task_event and waker-registration stacks through on_wait_stack. */
    bool wait_profile;
    const char *waker_symbol;        /* marker runtimes: a function whose first argument (rdi) is a task id and
                                        that the program calls when a task registers its waker; NULL: none */
    /* elf/'s shared debug-file lookup (elf/elf_file.h), for the runtime symbols and DWARF types of a stripped
     * executable: a debuginfod download is waited for while opening only, for the executable only; objects
     * mapped later get what the local places have. NULL: the local places alone. */
    struct debug_files *debug_files;
    /* A consumer that runs as long as it is left (taskspy top): no per-task tables kept for the summary (tasks
     * seen), so memory does not grow with the tasks the target spawns, and no big record batch kept for reuse
     * after a stall of the processing thread. */
    bool long_running;
    /* A problem that does not stop the recording (a marker left out, a slower route taken): one line
     * without a prefix or newline. May be called from sampler_open and sampler_run. NULL: not reported. */
    void (*on_warning)(void *ctx, const char *message);
    void *warning_ctx;
};

/* One mapped file of the target, as /proc/PID/maps or a PERF_RECORD_MMAP2 describes it. */
struct sampler_mapping {
    uint64_t start, end, pgoff;
    const char *path;                /* as the target sees it; "" for anonymous */
    const char *root;                /* prefix to open it from this side, e.g. "/proc/PID/root", or "" */
    bool executable;
};

/* One on-CPU sample, unwound. Addresses are innermost first; user_ips[0] is the sampled instruction,
 * the rest are return addresses. Pointers are valid only during the callback. */
struct sampler_sample {
    pid_t pid, tid;
    uint64_t time_ns;
    const uint64_t *kernel_ips;
    size_t n_kernel;
    const uint64_t *user_ips;
    size_t n_user;
    bool truncated;                  /* the unwind stopped before reaching the thread's start */
    uint32_t thread;                 /* the thread's number as on_thread_name gave it, or SAMPLER_NO_THREAD */
    enum sampler_task_state task_state;
    uint64_t task_id;
    bool task_id_provisional;        /* task_id is the TLS marker's own id where the recording names tasks by the
                                        poll probes' ids, which had not named a poll of this task yet: once
                                        sampling stopped, sampler_task_named_later may give the probes' id */
    uint64_t poll_probe_addr;        /* address of the poll-start probe that opened the poll, or 0; in no task
                                        with a TLS marker, where a poll would be cut (the poll-start marker's
                                        place), so that a poll frame on a stack the marker says is in no task
                                        can be told */
};

/* The wait profile's events (cfg->wait_profile). For tokio without markers task_id is the task's header
 * pointer, the value raw::poll<T,S> and the waker vtable functions receive in rdi; with poll markers it
 * is the markers' arg0, tokio's waker functions' headers joined to it (the task whose poll registered the
 * header). */
enum sampler_task_event_kind {
    SAMPLER_TASK_POLL_START,         /* a worker thread began polling the task */
    SAMPLER_TASK_POLL_END,           /* ... and that poll returned (Pending or Ready) */
    SAMPLER_TASK_WAKE,               /* the task was woken (tokio: wake_by_val / wake_by_ref; markers: task-wake),
                                        on any thread, also from inside a poll */
    SAMPLER_TASK_WAKER_REGISTERED,   /* the task registered its waker (tokio: clone_waker; --waker-symbol) */
    SAMPLER_TASK_TERMINATE,          /* the task completed (a marker, where the runtime has one) */
};

struct sampler_task_event {
    enum sampler_task_event_kind kind;
    uint32_t tid;                    /* the thread the event happened on */
    uint32_t thread;                 /* its number as on_thread_name gave it, or SAMPLER_NO_THREAD */
    uint64_t task_id;
    uint64_t time_ns;                /* on the samples' clock (CLOCK_MONOTONIC) */
    uint64_t call_site;              /* SAMPLER_TASK_WAKER_REGISTERED: where the registering function was called
                                        from, the word at the stack pointer its probe read (the return address
                                        at its entry), as sampler_wait_stack's; 0: unknown */
};

/* The stack at which a task registered its waker (a SAMPLER_TASK_WAKER_REGISTERED event of the same task and
 * thread, stamped by its own probe a moment apart, is delivered too). Not every registration has one: stacks
 * are taken at a budget (per task: when the registering caller changed or its last stack is 50 ms old; 300
 * per second in all, and besides those up to 600 a second of tasks' first stacks); a registration without
 * one is filed by its event's call_site (flamegraph/wait_profile.h). Addresses as in sampler_sample:
 * innermost first, user_ips[0] in the registering function (the waker machinery: its entry, or its first
 * instruction the kernel emulates). */
struct sampler_wait_stack {
    pid_t tid;
    uint32_t thread;
    uint64_t task_id;
    uint64_t poll_probe_addr;        /* a stack in a poll marker's poll, its task from the poll (tokio's clone_waker
                                        in a marker program): the poll-start probe's address, as in
                                        sampler_sample; else 0 */
    uint64_t time_ns;
    uint64_t call_site;              /* the word at the stack pointer in the stack's copy (dwarf), as
                                        sampler_task_event's; 0: none */
    const uint64_t *user_ips;
    size_t n_user;
    bool truncated;
};

/* How the recording is going, for a live status line. */
struct sampler_progress {
    double elapsed_s;                /* since the events were enabled */
    double duration_s;               /* as configured; 0 = until stopped or the target exits */
    uint64_t samples;                /* samples delivered so far */
    uint64_t lost;                   /* sample records the kernel dropped so far */
    uint64_t polls;                  /* task polls seen so far (poll markers) */
    bool counts_polls;               /* poll probes are attached, so polls are seen (zero-probe attribution
                                        alone sees tasks, not polls) */
    uint64_t tasks_seen;             /* distinct tasks seen so far (by the TLS marker where it attributes) */
};

/* How often sampler_run calls on_progress. */
#define SAMPLER_PROGRESS_INTERVAL_NS 250000000ull

struct sampler_sink {
    void *ctx;
    void (*on_mapping)(void *ctx, const struct sampler_mapping *m);
    /* Thread tid is named (or renamed) name. Threads are numbered 0, 1, ... as first seen: thread. */
    void (*on_thread_name)(void *ctx, uint32_t thread, pid_t tid, const char *name);
    void (*on_sample)(void *ctx, const struct sampler_sample *s);
    /* A task poll ended (its start and end markers seen on one thread), as marker hits are applied: in time
     * order per thread, so one thread's polls never overlap. NULL: not called. */
    void (*on_poll)(void *ctx, const struct sampler_poll *p);
    /* About every SAMPLER_PROGRESS_INTERVAL_NS while recording; NULL: not called. Every callback comes from one
     * thread: while sampler_run records, a thread of the sampler's own (the reading thread never waits on the
     * sink); before and after, the caller's. */
    void (*on_progress)(void *ctx, const struct sampler_progress *p);
    /* The wait profile (cfg->wait_profile; NULL: not called). Task events come in time order per thread; a
     * wait stack comes after the events of its thread up to its time. on_wait_round says that every task
     * event and wait stack up to until_ns (of any thread) has been delivered, so a consumer may settle the
     * intervals that end before it; a last call with UINT64_MAX comes before sampler_run returns. (A marker
     * record the kernel wrote late, after its round was read, still comes, later: counted in
     * stats.late_markers.) Each round: its task events (per thread in time order), then its wait stacks,
     * then on_wait_round. */
    void (*on_task_event)(void *ctx, const struct sampler_task_event *e);
    void (*on_wait_stack)(void *ctx, const struct sampler_wait_stack *w);
    void (*on_wait_round)(void *ctx, uint64_t until_ns);
};

struct sampler_stats {
    uint64_t samples;                /* samples delivered */
    uint64_t lost;                   /* samples the kernel dropped: both kinds below */
    uint64_t lost_no_room;           /* of lost: the ring buffer was full (PERF_RECORD_LOST) */
    uint64_t lost_by_event;          /* of lost: dropped before the buffer (PERF_RECORD_LOST_SAMPLES) */
    uint64_t lost_markers;           /* marker records lost (their buffers are apart): both kinds below */
    uint64_t lost_markers_perf;      /* of lost_markers: a full perf marker buffer (PERF_RECORD_LOST) */
    uint64_t lost_markers_bpf;       /* of lost_markers: BPF slots overwritten before they were read */
    uint64_t lost_markers_lapped;    /* of lost_markers_bpf: a region lapped (the reader a region behind) */
    uint64_t lost_markers_unfinished;/* of lost_markers_bpf: hits whose writer had not finished when passed */
    uint64_t bpf_region_slots;       /* slots in one BPF region (0: no BPF route) */
    uint64_t bpf_backlog;            /* the most hits waiting in one region when it was read */
    /* how the reading thread kept up: the longest time between the starts of two rounds while recording,
       the longest round, and the round that found the most hits lost: its start (from the recording's) and
       the time since the round before it */
    uint64_t reader_longest_gap_ns, reader_longest_gap_at_ns, reader_longest_round_ns;
    uint64_t worst_loss, worst_loss_at_ns, worst_loss_gap_ns;
    uint64_t dropped_samples;        /* copied out but left unprocessed: the processing queue was full */
    uint64_t late_markers;           /* marker records read after samples later than them were attributed */
    uint64_t unknown_task_samples;   /* samples delivered as SAMPLER_UNKNOWN_TASK (after a lost marker) */
    uint64_t throttled_markers;      /* times the kernel throttled a marker event (records dropped) */
    bool reader_realtime;            /* the reading thread recorded as a real-time thread (SCHED_FIFO) */
    uint64_t unwind_truncated;
    /* of unwind_truncated: cut at a return probe's trampoline with no return address to put back (another
     * tracer's return probes on the poll functions, whose entries read it only once told: the wait profile's
     * events); return_reads_at_s: when the first such stack (a sample's or a waker registration's), once
     * unwound, told them to (seconds into the recording; < 0: never) */
    uint64_t trampoline_cuts;
    double return_reads_at_s;
    uint64_t other_processes;        /* samples of the target's child processes, left out */
    unsigned threads;                /* distinct threads seen */
    double duration_s;               /* wall time recorded */
    uint64_t processing_cpu_ns;      /* taskspy CPU time from ring buffers to aggregated, symbolized stacks
                                        (reading, decoding, unwinding, the sink's work), while recording */
    uint64_t marker_records;         /* marker records decoded */
    uint64_t marker_cpu_ns;          /* of processing_cpu_ns: reading marker records and applying them */
    bool target_exited;              /* the target ended before the recording did */
    int target_status;               /* its wait status, in launch mode */
    const char *event_name;          /* "cycles" or "cpu-clock" */
    /* markers */
    struct sampler_probe_stat *probes;
    size_t n_probes;
    size_t marker_locations_bpf;             /* locations whose hits come through BPF */
    size_t marker_locations_perf;            /* ... and through perf samples */
    uint64_t polls, spawns, terminates, tasks_seen;
    uint64_t timed_polls;                    /* polls whose end was seen (so their duration is known) */
    const struct sampler_task_stat *tasks;   /* every task seen, busiest (total poll time) first */
    size_t n_tasks;
    uint64_t long_polls;                     /* polls longer than 10 ms */
    /* the TLS marker route (README, "TLS task marker"): each sample's task read in the kernel */
    const char *tls_marker;                  /* the marker's symbol, or NULL when tasks came from poll probes */
    int64_t tls_offset;                      /* its offset from the thread pointer */
    const char *tls_debug_file;              /* found in this separate debug file (stripped), or NULL */
    const char *tls_note;                    /* a problem placing a library's marker (one line), or NULL */
    bool tls_program_store;                  /* the marker is the program's own taskspy_current_task (its code
                                                stores it: a compiler may drop a plain store), not tokio's */
    uint64_t tls_joined;                     /* samples whose task came from the marker */
    uint64_t tls_missing;                    /* samples without a marker record: [unknown task] */
    uint64_t tls_unreadable;                 /* samples whose marker could not be read: [unknown task] */
    uint64_t tls_compared, tls_disagreements;/* joined samples the poll probes also placed, and disagreed on */
    /* the wait profile (cfg->wait_profile) */
    size_t waker_locations;                  /* waker functions probed (clone/wake, or --waker-symbol, task-wake) */
    bool task_completion_unknown;            /* waker registrations are probed (tokio's clone_waker,
                                                --waker-symbol) but no task-terminate marker: the runtime does
                                                not say when a task completed */
    uint64_t task_events;                    /* task events delivered */
    uint64_t waker_registrations;            /* of task_events: SAMPLER_TASK_WAKER_REGISTERED */
    uint64_t wakes;                          /* of task_events: SAMPLER_TASK_WAKE */
    uint64_t wait_stacks;                    /* waker-registration stacks delivered */
    uint64_t wait_stacks_skipped;            /* registrations whose stack the budget did not take */
    uint64_t wait_stacks_lost;               /* stacks the filter let through but never read (a full buffer) */
    uint64_t unjoined_waker_events;          /* tokio waker-function hits in a program whose tasks come from poll
                                                markers that named no marker task (a header no poll had
                                                registered yet; a stack outside a marker poll): dropped */
    const char *wait_note;                   /* why there is no wait profile or only part of one (no waker
                                                functions found, no BPF), one line; NULL: none */
};

struct sampler;

/* Attach or launch and arm the events. On failure returns -1 with a one-line message in err. */
int sampler_open(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen);
/* Record until the duration ends, *cfg->stop is set, or the target exits; deliver through sink.
 * Returns 0 on success, -1 with a message in err. */
int sampler_run(struct sampler *s, const struct sampler_sink *sink, char *err, size_t errlen);
const struct sampler_stats *sampler_stats(const struct sampler *s);
/* After sampler_run returned: the poll probes' id learnt, after the sample, for a sample's provisional task_id
 * (task_id_provisional): true and *named, or false (the probes never named that task). */
bool sampler_task_named_later(const struct sampler *s, uint64_t task_id, uint64_t *named);
pid_t sampler_target_pid(const struct sampler *s);
/* Where a launch would find the command cmd (searched in search_path, the caller's PATH, as execvp does; NULL:
 * a default): true with its path in buf. */
bool sampler_command_path(const char *cmd, const char *search_path, char *buf, size_t len);
/* Number of task-poll-start probe locations attached so far (0 without markers). */
size_t sampler_poll_markers(const struct sampler *s);
/* Whether tasks come from a TLS marker read at each sample (sampler/markers/tls_join.h), not probes. */
bool sampler_tls_route(const struct sampler *s);
/* Detach everything (probes, semaphores, events) and free. Safe after a failed run. */
void sampler_close(struct sampler *s);

/* The same DWARF unwinder over a thread's state saved elsewhere than in a sample (a core file's registers and
 * stack; sampler/saved_stack.c): mappings are the target's files (root "" and executable as in
 * sampler_mapping), regs x86-64's struct user_regs_struct's 27 registers in its order, stack the bytes from its
 * rsp up. Writes up to max_ips addresses, innermost first (the registers' ip, then return addresses), and
 * returns how many; *truncated as unwinder_unwind says. NULL from _new when out of memory. */
struct saved_stack_unwinder;
struct saved_stack_unwinder *saved_stack_unwinder_new(const struct sampler_mapping *mappings, size_t n);
size_t saved_stack_unwind(struct saved_stack_unwinder *u, const uint64_t *regs, const uint8_t *stack,
                          size_t stack_len, uint64_t *ips, size_t max_ips, bool *truncated);
void saved_stack_unwinder_free(struct saved_stack_unwinder *u);

/* ---- one thread's stack now, read without stopping it (thread_stack.c) --------------------------------- */
/* taskspy tasks shows a running task where it is: its worker's stack. A thread in a system call (a sleep, a
 * blocking read, a lock) is read from /proc/PID/task/TID/syscall's stack and instruction pointers and its stack's
 * bytes (process_vm_readv); a thread running in user space from one perf sample of it (its registers and stack
 * copied by the kernel; waited for up to 100 ms). Both unwound as samples are. */
struct thread_stack_reader;
enum thread_stack_source { THREAD_STACK_NONE, THREAD_STACK_SYSCALL, THREAD_STACK_SAMPLE };
/* Returns 0, or -1 with a line in err. root: the prefix to open the target's files through, or "". */
int thread_stack_reader_open(struct thread_stack_reader **out, pid_t pid, const char *root, char *err,
                             size_t errlen);
/* Thread tid's return addresses now, innermost first (the first its instruction pointer), at most max, and how
 * they were read. Returns how many: 0 when nothing could be read. */
size_t thread_stack_read(struct thread_stack_reader *r, pid_t tid, uint64_t *ips, size_t max,
                         enum thread_stack_source *source);
void thread_stack_reader_close(struct thread_stack_reader *r);

#endif
