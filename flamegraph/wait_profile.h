/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_profile.h: the whole interface of the wait-time profile (SPEC section 3a). It takes the task events
 * of a recording (poll start and end, wake, waker registered, terminate; in time order per thread, in rounds
 * across threads) and the stacks at which tasks registered their wakers, and files each task's wall time
 * from the end of a poll to its next poll under the stack where the task was suspended, split into
 * "[suspended]" (until the wake) and "[runnable]" (from the wake to the next poll). Stacks are cut by the
 * task_stacks rules of the CPU profile, minus the waker machinery at the leaf. Memory grows with the tasks alive
 * (and those whose root is not known yet) and with distinct stacks and roots, not with events (intervals are
 * settled at each round) nor with tasks that finished: a task known finished (terminated, its last poll over)
 * is folded into per-root totals and taken out of the table at a round. Runtimes without a terminate event
 * (tokio without markers) name tasks by their header address, which the allocator reuses: the table grows
 * with the most headers alive at once.
 * Polls without a poll-end event (tokio's raw::poll<T,S> probed at its entry only, to spare the target a
 * return probe per poll): such a poll is taken to have ended, and the task's suspension to have begun, at the
 * poll's last waker registration (the last thing a poll that returns Pending does: register, then return), or,
 * when it registered none, at the poll's start (its end is not known: the wait then also holds that poll's
 * own run time, which a CPU profile shows). Its end is known to have come by the next poll start on its thread
 * (on a thread that never reported a poll end) or the task's own next poll start, whichever is first; wakes
 * after that end point split [suspended] from [runnable], one before it (in the poll, before its last
 * registration) makes the whole wait [runnable], as a wake during a poll does. The invariants hold as with
 * poll ends: one task's waits never overlap (each begins at or after its poll's start and ends at its next
 * poll's start) and never exceed the recording. */
#ifndef TASKSPY_WAIT_PROFILE_H
#define TASKSPY_WAIT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flamegraph/flamegraph.h"

enum wait_event_kind {
    WAIT_POLL_START,         /* a thread began polling the task */
    WAIT_POLL_END,           /* ... and that poll returned */
    WAIT_WAKE,               /* the task was woken (any thread, also during its poll) */
    WAIT_REGISTERED,         /* the task registered its waker (with or without a stack) */
    WAIT_TERMINATE,          /* the task completed: its last poll returned Ready */
};

struct wait_event {
    enum wait_event_kind kind;
    uint64_t task_id;
    uint64_t time_ns;
    uint32_t thread;         /* the thread it happened on (any number naming it, e.g. its tid); 0: unknown */
    uint64_t call_site;      /* WAIT_REGISTERED: where the registering function was called from, as its probe
                                saw it (the word at the stack pointer: the return address at a function's
                                entry), as wait_profile_stack's call_site of a stack taken there; 0: unknown */
};

/* One wait as it is settled, for a timeline: from start_ns (the end of the poll it follows, or the recording's
 * start) to end_ns (the task's next poll, or the stop), woken at woken_ns (end_ns: no wake). site: the await
 * point the task was suspended at (its innermost "NAME @ FILE:LINE" frame, else its stack's leaf; valid while
 * the wait profile is), NULL when only the task's root is known. doubtful: a wait wait_profile_finish leaves
 * out when ready_unless_registered (it may follow the task's last poll). */
struct wait_interval {
    uint64_t task_id;
    uint64_t start_ns, woken_ns, end_ns;
    const char *site;
    bool doubtful;
};

struct wait_options {
    uint64_t start_ns;       /* when the recording began: no wait counts before */
    /* Called with each wait as it is settled (in wait_profile_round or _finish); NULL: not called. */
    void (*on_interval)(void *ctx, const struct wait_interval *iv);
    void *interval_ctx;
};

/* One task's waits, for the summary. root is a frame id of the task_stacks' profile ("task: ENTRY"). */
struct wait_task_total {
    uint64_t task_id;
    uint32_t root;
    uint64_t suspended_ns, runnable_ns;
    uint64_t longest_runnable_ns;
};

struct wait_summary {
    uint64_t intervals;                  /* waits counted */
    uint64_t suspended_ns, runnable_ns;  /* their total */
    uint64_t taken_as_ready;             /* waits left out: the task's last poll returned Ready (a terminate
                                            event, or ready_unless_registered) */
    uint64_t stacks;                     /* registration stacks applied */
    uint64_t stray_stacks;               /* registration stacks outside a poll of their task (left out) */
    uint64_t longest_runnable_ns;        /* the longest single [runnable] delay ... */
    uint64_t longest_runnable_task;      /* ... its task ... */
    uint32_t longest_runnable_root;      /* ... and that task's root frame (PROFILE_NO_FRAME: none) */
    size_t n_tasks;                      /* tasks that waited */
    /* after finish, longest total wait first: the tasks still in the table and the WAIT_LISTED_RETIRED longest
     * of those taken out (so at least the first WAIT_LISTED_RETIRED of all) */
    const struct wait_task_total *tasks;
    size_t n_listed;
};

#define WAIT_LISTED_RETIRED 5

struct wait_profile;

/* stacks: the CPU profile's task_stacks (its rules, groupings and task roots), names: the profile it was made
 * with (stack_frame ids are its frame ids). Returns NULL when out of memory. */
struct wait_profile *wait_profile_new(struct task_stacks *stacks, const struct profile *names,
                                      const struct wait_options *options);
void wait_profile_free(struct wait_profile *w);
/* One task event. Returns 0 or -1 (no memory). */
int wait_profile_event(struct wait_profile *w, const struct wait_event *e);
/* The stack at which task task_id registered its waker at time_ns: frames outermost first, without the
 * registering function's own frame (the waker symbol); waker machinery frames at the leaf are cut here.
 * thread_root: the thread's root frame, for a stack that turns out not to be a task's. key: the caller's id
 * of this stack in another form (the pprof export's addresses), WAIT_NO_KEY for none: the waits filed under
 * this stack are also reported by key (wait_profile_each_site). call_site: where the registering function was called
 * from (as wait_event's; 0: unknown). Stacks are taken at a budget, and a registration without one (a
 * WAIT_REGISTERED event alone) is filed under the task's last stack from the same call site (a task that
 * alternates between two await points, say a socket read and a timer, registers from two sites); from a
 * site it has no stack of while it has some of others, under its root alone (where it is is not known); with
 * no call site known, under its last stack. Returns 0 or -1. */
#define WAIT_NO_KEY UINT32_MAX
int wait_profile_stack(struct wait_profile *w, uint64_t task_id, uint64_t time_ns, uint32_t thread_root,
                       const struct stack_frame *const *frames, size_t n, uint32_t key, uint64_t call_site);
/* How many of a registration stack's frames (outermost first) wait_profile_stack keeps: those above the waker
 * machinery at its leaf. */
size_t wait_profile_kept_frames(const struct stack_frame *const *frames, size_t n);
/* Every event and stack up to until_ns has been given: settle them. Returns 0 or -1 (no memory). */
int wait_profile_round(struct wait_profile *w, uint64_t until_ns);
/* The recording stopped at stop_ns: settle what is left, count open waits up to stop_ns, and return the wait
 * profile (counts in microseconds; "[suspended]" and "[runnable]" leaves), which the caller frees; NULL when
 * out of memory. Call once, after task_stacks_finish.
 * ready_unless_registered: the runtime reports waker registrations but not when a task completes (tokio
 * without markers): a poll that registered no waker and was followed by no wake is taken as the task's last
 * (it returned Ready), so the time after it does not count (neither until the stop nor until a reused id's
 * next poll); nor do the waits of a task that never registered a waker while recorded (a finished task's
 * reused id). Otherwise (a terminate marker says it, or nothing registers) those waits count. */
struct profile *wait_profile_finish(struct wait_profile *w, uint64_t stop_ns, bool ready_unless_registered);
/* The waits of the profile wait_profile_finish returned, by site: the caller's key of the registration stack
 * and that stack's root frame (of names), or for waits with no such stack (key WAIT_NO_KEY) the task's root
 * frame; the same waits as the profile's lines, in nanoseconds. */
struct wait_site_time {
    uint32_t key;
    uint32_t root;
    uint64_t suspended_ns, runnable_ns;
};
/* Call fn for each site with time (after wait_profile_finish); stops at and returns fn's first non-zero
 * result, else 0 (-1: out of memory). */
int wait_profile_each_site(struct wait_profile *w, int (*fn)(void *ctx, const struct wait_site_time *t), void *ctx);
/* Tasks in the table now (finished ones are taken out at rounds). */
size_t wait_profile_tasks_held(const struct wait_profile *w);
/* What was counted (tasks sorted after wait_profile_finish). */
const struct wait_summary *wait_profile_summary(const struct wait_profile *w);

#endif
