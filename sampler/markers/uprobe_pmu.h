/* SPDX-License-Identifier: GPL-3.0-or-later */
/* uprobe_pmu.h: perf events on USDT marker locations through the uprobe PMU, and everything needed to
 * get arg0 out of their samples. How arg0 is obtained depends on its operand (uprobe_arg_plan_for):
 *   register / immediate      -> PERF_SAMPLE_REGS_USER with just that register (uprobe PMU)
 *   memory relative to %rsp   -> REGS_USER(sp) + a small PERF_SAMPLE_STACK_USER copy (uprobe PMU)
 *   any other memory operand  -> a tracefs uprobe_events event that fetches it in the kernel
 *                                (sampler/markers/uprobe_tracefs.h) read back through PERF_SAMPLE_RAW.
 * The uprobe PMU is preferred wherever it can work: its probe exists only while the fd is open, so
 * nothing is left behind in the target or in tracefs even when taskspy is SIGKILLed.
 *
 * Use from the sampler:
 *   struct uprobe_pmu pmu;  uprobe_pmu_info(&pmu)                once
 *   uprobe_arg_plan_for(&arg0, &plan)                             per probe location
 *   fd = uprobe_event_open(&pmu, &attach)                         per location x thread: either cpu -1 and
 *                                                                 no inherit (attach new threads as they
 *                                                                 appear), or per CPU with inherit
 *   ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd)                 the caller's business
 *   uprobe_sample_parse(&plan, body, size, &s); uprobe_arg_decode(&arg0, &plan, &s, &id)  per record
 * A sample's s.id (PERF_SAMPLE_IDENTIFIER) tells which event (hence which probe) fired: see
 * PERF_EVENT_IOC_ID. */
#ifndef TASKSPY_UPROBE_EVENTS_H
#define TASKSPY_UPROBE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/probes/usdt_args.h"

#define UPROBE_REGS_MAX 24              /* PERF_REG_X86_64_MAX */
/* Marker events wake the reader when this much is in their buffer (not per record: a wake-up costs the
 * target an interrupt and a context switch), a few times per 100 ms at tens of thousands of polls per
 * second, so each read round's hits still fit in the cache. */
#define UPROBE_WAKEUP_BYTES (256u << 10)

enum uprobe_arg_method {
    UPROBE_ARG_NONE,                    /* the probe has no argument taskspy needs */
    UPROBE_ARG_REGS,                    /* from sampled user registers (REG, IMM) */
    UPROBE_ARG_STACK,                   /* from the copied user stack (small %rsp-relative MEM) */
    UPROBE_ARG_TRACEFS,                 /* from PERF_SAMPLE_RAW of a tracefs uprobe event (other MEM) */
};

struct uprobe_arg_plan {
    enum uprobe_arg_method method;
    uint64_t sample_type;               /* the complete attr.sample_type to use */
    uint64_t regs_mask;                 /* attr.sample_regs_user */
    uint32_t stack_size;                /* attr.sample_stack_user (multiple of 8), 0 = none */
    uint32_t raw_offset, raw_size;      /* TRACEFS: arg0's place in the raw data (uprobe_tracefs sets) */
};

/* What the kernel must record for an argument (NULL: no argument). Stack copies up to
 * UPROBE_STACK_ARG_MAX bytes are used for %rsp-relative operands; beyond that, tracefs.
 * Returns 0, or -1 when the argument cannot be handled at all. */
#define UPROBE_STACK_ARG_MAX 512u
int uprobe_arg_plan_for(const struct usdt_arg *arg, struct uprobe_arg_plan *plan);
/* The plan for a tracefs event (sampler/markers/uprobe_tracefs.h) at the location instead: arg0 fetched by the
 * kernel into PERF_SAMPLE_RAW (registers, whose low arg->size bytes are the value, and memory operands),
 * from the spec (immediates), or nothing (NULL). Returns 0, or -1 when tracefs cannot fetch it (a high-byte
 * register such as %ah, a value wider than its register). */
int uprobe_arg_plan_tracefs(const struct usdt_arg *arg, struct uprobe_arg_plan *plan);

struct uprobe_pmu {
    int type;                           /* /sys/bus/event_source/devices/uprobe/type */
    int ref_ctr_shift;                  /* first config bit of ref_ctr_offset, -1 when unsupported */
};

/* Read the uprobe PMU's type and format. Returns 0, or -1 with errno (ENOENT: no uprobe PMU). */
int uprobe_pmu_info(struct uprobe_pmu *pmu);
/* Same, from a sysfs directory holding "type" and "format/" (for tests). */
int uprobe_pmu_info_at(const char *dir, struct uprobe_pmu *pmu);

struct uprobe_attach {
    const char *path;                   /* the object file, as this process can open it (the kernel
                                           resolves it at open time; use /proc/PID/root/... for containers) */
    uint64_t offset;                    /* file offset of the probe (usdt_note.pc_offset) */
    uint64_t ref_ctr_offset;            /* file offset of the semaphore, 0 = none */
    pid_t tid;                          /* thread to follow */
    int cpu;                            /* -1: any CPU (per-thread event), or one CPU */
    const struct uprobe_arg_plan *plan;
    bool inherit;                       /* also follow threads this one creates later. The kernel refuses
                                           to mmap an inherited per-thread (cpu -1) event (EINVAL), so an
                                           inherited event needs cpu >= 0 (one per CPU, as perf does) or
                                           PERF_EVENT_IOC_SET_OUTPUT into a buffer of the same thread+cpu */
    bool disabled;                      /* open disabled (enable with PERF_EVENT_IOC_ENABLE) */
    bool retprobe;                      /* fire when the function returns (uretprobe), not at offset */
    int group_fd;                       /* -1 for none */
};

/* perf_event_open a uprobe PMU event on a->tid / a->cpu (sample every hit, no wake-up of its own). Returns the fd, or -1
 * with errno (EOPNOTSUPP: a semaphore without kernel ref_ctr support; EINVAL: offset/plan rejected;
 * EACCES/EPERM: not permitted). The semaphore is raised while the fd is open. */
int uprobe_event_open(const struct uprobe_pmu *pmu, const struct uprobe_attach *a);
/* Fill a perf_event_attr for the above (exposed so the sampler can tweak fields). attr must point at a
 * struct perf_event_attr. */
int uprobe_event_attr(const struct uprobe_pmu *pmu, const struct uprobe_attach *a, void *attr);

/* One marker sample, parsed. */
struct uprobe_sample {
    uint64_t id;                        /* PERF_SAMPLE_IDENTIFIER */
    uint64_t ip;                        /* PERF_SAMPLE_IP: the probe's address in the process */
    uint32_t pid, tid;
    uint64_t time;
    uint64_t regs_present;              /* bit n: regs[n] was sampled */
    const uint8_t *stack;               /* user stack copy starting at regs[SP], or NULL */
    uint64_t stack_len;                 /* valid bytes (dyn_size) */
    const uint8_t *raw;                 /* PERF_SAMPLE_RAW data, or NULL */
    uint32_t raw_len;
    uint64_t regs[UPROBE_REGS_MAX];     /* by PERF_REG_X86_* number; only those in regs_present are set (last:
                                           the parser clears every field before it, not this array) */
};

/* Parse a PERF_RECORD_SAMPLE body (bytes after struct perf_event_header) of an event opened with
 * plan->sample_type. Returns 0, or -1 when the record is truncated or inconsistent. */
int uprobe_sample_parse(const struct uprobe_arg_plan *plan, const void *body, size_t size,
                        struct uprobe_sample *out);
/* arg0 of a parsed sample. Returns 0, or -1 when the data needed is missing (e.g. a %rsp-relative
 * operand outside the stack copy). */
int uprobe_arg_decode(const struct usdt_arg *arg, const struct uprobe_arg_plan *plan,
                      const struct uprobe_sample *s, uint64_t *out);

#endif
