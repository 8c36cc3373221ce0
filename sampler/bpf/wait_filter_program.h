/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_filter_program.h: the BPF program that decides, at each hit of a waker-registration probe whose perf
 * event copies the user stack (the wait profile's stacks, SPEC section 3a), whether the kernel writes that
 * sample: it returns 0 (no sample) unless the budget allows. A task's stack is taken again only when the
 * return address at %rsp (the registering caller) differs from the one at its last capture, or that capture
 * is older than interval_ns; and at most max_per_window stacks per window_ns in all, besides at most
 * max_first_per_window first stacks of tasks that have none yet (which the cap would starve). Per task (the
 * probe's %rdi) it keeps the last capture's time and return address in an LRU hash map; the counters (the
 * window and how many were taken and skipped) sit in a one-element mmapable array the reader reads without a
 * system call. Hits in other processes, and on other CPUs than the event's (unless it is for any CPU), are refused
 * (uncounted). */
#ifndef TASKSPY_BPF_WAIT_FILTER_PROGRAM_H
#define TASKSPY_BPF_WAIT_FILTER_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "sampler/bpf/marker_program.h"

/* The counters' array element. */
struct wait_filter_counters {
    uint64_t window_start;             /* ns, of the current window */
    uint64_t in_window;                /* stacks let through in it */
    uint64_t taken;                    /* stacks let through in all */
    uint64_t skipped;                  /* registrations refused by the budget */
    uint64_t first_in_window;          /* first stacks let through over the cap in the current window */
};

/* The per-task map's value (key: the task id, u64). */
struct wait_filter_task {
    uint64_t last_ns;
    uint64_t last_return;
};

struct wait_filter_spec {
    uint32_t tgid;                     /* the target process */
    uint32_t cpu;                      /* the CPU of the event it filters: every CPU's uprobe PMU event of a probe
                                          runs its program at each hit, only this CPU's writes the sample;
                                          WAIT_FILTER_ANY_CPU: one program for all CPUs' events (a tracefs
                                          event: one probe consumer, its program run once per hit, the sample
                                          written by the event of the CPU it ran on) */
    int tasks_fd;                      /* BPF_MAP_TYPE_LRU_HASH: u64 -> struct wait_filter_task */
    int counters_fd;                   /* BPF_MAP_TYPE_ARRAY of one struct wait_filter_counters */
    uint32_t interval_ns;              /* same caller: again after this long (< 2^31) */
    uint32_t window_ns;                /* the rate cap's window (< 2^31) */
    uint32_t max_per_window;
    uint32_t max_first_per_window;     /* tasks' first stacks over max_per_window */
};

#define WAIT_FILTER_ANY_CPU UINT32_MAX
#define WAIT_FILTER_PROGRAM_MAX 160

/* Write the program into out (max instructions). Returns the number of instructions, or -1 (no room, or a
 * time that does not fit an immediate). */
int wait_filter_program(const struct wait_filter_spec *spec, struct bpf_insn *out, size_t max);
/* The same filter after a marker program's slot write (slots: its spec, arg0 the task in %rdi), for a tracefs
 * event (spec->cpu WAIT_FILTER_ANY_CPU) that is the registration site's only probe consumer: each hit writes
 * its slot and is filtered in one program run. Returns the number of instructions, or -1 (as above, or
 * another argument or CPU). */
int wait_filter_slot_program(const struct wait_filter_spec *spec, const struct bpf_marker_program_spec *slots,
                             struct bpf_insn *out, size_t max);

#endif
