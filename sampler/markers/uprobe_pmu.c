/* SPDX-License-Identifier: GPL-3.0-or-later */
/* uprobe_pmu.c: uprobe PMU perf events for USDT markers: sysfs discovery, attr setup, the sample
 * layout each argument needs, and decoding arg0 from a marker sample. */
#include "sampler/markers/uprobe_pmu.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BASE_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/* The part of a plan both ways share: no argument, or an immediate (nothing to sample: the value is in the
 * spec). Returns true when that is the whole plan. */
static bool plan_without_sampling(const struct usdt_arg *arg, struct uprobe_arg_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->sample_type = BASE_SAMPLE_TYPE;
    if (!arg) {
        plan->method = UPROBE_ARG_NONE;
        return true;
    }
    if (arg->kind == USDT_ARG_IMM) {
        plan->method = UPROBE_ARG_REGS;
        return true;
    }
    return false;
}

int uprobe_arg_plan_for(const struct usdt_arg *arg, struct uprobe_arg_plan *plan)
{
    if (plan_without_sampling(arg, plan))
        return 0;
    if (arg->reg < 0 || arg->reg >= UPROBE_REGS_MAX)
        return -1;
    switch (arg->kind) {
    case USDT_ARG_IMM:
        return 0;
    case USDT_ARG_REG:
        plan->method = UPROBE_ARG_REGS;
        plan->sample_type |= PERF_SAMPLE_REGS_USER;
        plan->regs_mask = UINT64_C(1) << arg->reg;
        return 0;
    case USDT_ARG_MEM:
        if (arg->reg == PERF_REG_X86_SP && arg->imm >= 0 &&
            (uint64_t)arg->imm + arg->size <= UPROBE_STACK_ARG_MAX) {
            plan->method = UPROBE_ARG_STACK;
            plan->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
            plan->regs_mask = UINT64_C(1) << PERF_REG_X86_SP;
            plan->stack_size = (uint32_t)(((uint64_t)arg->imm + arg->size + 7) & ~UINT64_C(7));
            return 0;
        }
        plan->method = UPROBE_ARG_TRACEFS;
        plan->sample_type |= PERF_SAMPLE_RAW;
        plan->raw_size = arg->size;
        return 0;
    }
    return -1;
}

int uprobe_arg_plan_tracefs(const struct usdt_arg *arg, struct uprobe_arg_plan *plan)
{
    if (plan_without_sampling(arg, plan))
        return 0;
    if (!usdt_arg_kernel_fetchable(arg))
        return -1;
    plan->method = UPROBE_ARG_TRACEFS;
    plan->sample_type |= PERF_SAMPLE_RAW;
    plan->raw_size = arg->size;
    return 0;
}

static int read_small_file(const char *path, char *buf, size_t bufsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, bufsz - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    return 0;
}

int uprobe_pmu_info_at(const char *dir, struct uprobe_pmu *pmu)
{
    char path[512], buf[64];
    pmu->type = -1;
    pmu->ref_ctr_shift = -1;
    snprintf(path, sizeof(path), "%s/type", dir);
    if (read_small_file(path, buf, sizeof(buf)) != 0)
        return -1;
    char *end;
    long type = strtol(buf, &end, 10);
    if (end == buf || type < 0 || type > INT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    pmu->type = (int)type;
    snprintf(path, sizeof(path), "%s/format/ref_ctr_offset", dir);
    unsigned lo, hi;
    if (read_small_file(path, buf, sizeof(buf)) == 0 && sscanf(buf, "config:%u-%u", &lo, &hi) == 2 &&
        lo < 64 && hi < 64 && lo <= hi)
        pmu->ref_ctr_shift = (int)lo;
    return 0;
}

int uprobe_pmu_info(struct uprobe_pmu *pmu)
{
    return uprobe_pmu_info_at("/sys/bus/event_source/devices/uprobe", pmu);
}

int uprobe_event_attr(const struct uprobe_pmu *pmu, const struct uprobe_attach *a, void *attr_out)
{
    struct perf_event_attr *attr = attr_out;
    memset(attr, 0, sizeof(*attr));
    if (!a->path || !a->plan || a->plan->method == UPROBE_ARG_TRACEFS || pmu->type < 0) {
        errno = EINVAL;
        return -1;
    }
    if (a->ref_ctr_offset) {
        if (pmu->ref_ctr_shift < 0 || (pmu->ref_ctr_shift > 0 && a->ref_ctr_offset >> (64 - pmu->ref_ctr_shift))) {
            errno = EOPNOTSUPP;
            return -1;
        }
        attr->config = a->ref_ctr_offset << pmu->ref_ctr_shift;
    }
    if (a->retprobe)
        attr->config |= 1;                             /* format: retprobe config:0 */
    attr->size = sizeof(*attr);
    attr->type = (uint32_t)pmu->type;
    attr->config1 = (uint64_t)(uintptr_t)a->path;     /* uprobe_path */
    attr->config2 = a->offset;                         /* probe_offset */
    attr->sample_period = 1;
    attr->sample_type = a->plan->sample_type;
    attr->sample_regs_user = a->plan->regs_mask;
    attr->sample_stack_user = a->plan->stack_size;
    attr->inherit = a->inherit;
    attr->disabled = a->disabled;
    attr->sample_id_all = 1;
    /* No wake-up per record: a wake-up every N records costs the target an interrupt and a context switch
     * per N polls (measured on the executor, waking every 64 records more than doubled the cost of a marker
     * hit); the buffer wakes the reader at a byte watermark instead. */
    attr->watermark = 1;
    attr->wakeup_watermark = UPROBE_WAKEUP_BYTES;
    /* Same clock as taskspy's sampling events: the kernel only lets events that share a clock share a
     * ring buffer, and marker and sample times are compared. */
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;
    return 0;
}

int uprobe_event_open(const struct uprobe_pmu *pmu, const struct uprobe_attach *a)
{
    struct perf_event_attr attr;
    if (uprobe_event_attr(pmu, a, &attr) != 0)
        return -1;
    long fd = syscall(SYS_perf_event_open, &attr, a->tid, a->cpu, a->group_fd, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -1 : (int)fd;
}

/* Bounded reader over a sample body. */
struct cursor {
    const uint8_t *p;
    size_t left;
};

static bool take(struct cursor *c, void *dst, size_t n)
{
    if (c->left < n)
        return false;
    if (dst)
        memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}

#define SUPPORTED_SAMPLE_BITS                                                                        \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | \
     PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                 \
     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

int uprobe_sample_parse(const struct uprobe_arg_plan *plan, const void *body, size_t size,
                        struct uprobe_sample *out)
{
    /* Everything but regs[] (read only where regs_present says): this runs for every marker hit. */
    memset(out, 0, offsetof(struct uprobe_sample, regs));
    uint64_t st = plan->sample_type;
    if (st & ~(uint64_t)SUPPORTED_SAMPLE_BITS)
        return -1;
    struct cursor c = {body, size};
    uint64_t u;
    if ((st & PERF_SAMPLE_IDENTIFIER) && !take(&c, &out->id, 8))
        return -1;
    if ((st & PERF_SAMPLE_IP) && !take(&c, &out->ip, 8))
        return -1;
    if (st & PERF_SAMPLE_TID) {
        if (!take(&c, &out->pid, 4) || !take(&c, &out->tid, 4))
            return -1;
    }
    if ((st & PERF_SAMPLE_TIME) && !take(&c, &out->time, 8))
        return -1;
    if ((st & PERF_SAMPLE_ADDR) && !take(&c, NULL, 8))
        return -1;
    if ((st & PERF_SAMPLE_ID) && !take(&c, &out->id, 8))
        return -1;
    if ((st & PERF_SAMPLE_STREAM_ID) && !take(&c, NULL, 8))
        return -1;
    if ((st & PERF_SAMPLE_CPU) && !take(&c, NULL, 8))
        return -1;
    if ((st & PERF_SAMPLE_PERIOD) && !take(&c, NULL, 8))
        return -1;
    if (st & PERF_SAMPLE_CALLCHAIN) {
        if (!take(&c, &u, 8) || u > c.left / 8 || !take(&c, NULL, u * 8))
            return -1;
    }
    if (st & PERF_SAMPLE_RAW) {
        uint32_t raw_size;
        if (!take(&c, &raw_size, 4) || raw_size > c.left)
            return -1;
        out->raw = c.p;
        out->raw_len = raw_size;
        take(&c, NULL, raw_size);
    }
    if (st & PERF_SAMPLE_REGS_USER) {
        if (!take(&c, &u, 8))
            return -1;
        if (u != PERF_SAMPLE_REGS_ABI_NONE) {
            for (uint64_t left = plan->regs_mask; left; left &= left - 1) {
                int r = __builtin_ctzll(left);      /* the kernel writes the registers in bit order */
                uint64_t v;
                if (!take(&c, &v, 8))
                    return -1;
                if (r < UPROBE_REGS_MAX) {
                    out->regs[r] = v;
                    out->regs_present |= UINT64_C(1) << r;
                }
            }
        }
    }
    if (st & PERF_SAMPLE_STACK_USER) {
        uint64_t stack_size;
        if (!take(&c, &stack_size, 8) || stack_size > c.left)
            return -1;
        const uint8_t *data = c.p;
        take(&c, NULL, stack_size);
        if (stack_size) {
            uint64_t dyn;
            if (!take(&c, &dyn, 8))
                return -1;
            out->stack = data;
            out->stack_len = dyn < stack_size ? dyn : stack_size;
        }
    }
    return 0;
}

static bool sample_reg(void *ctx, int reg, uint64_t *v)
{
    const struct uprobe_sample *s = ctx;
    if (reg < 0 || reg >= UPROBE_REGS_MAX || !(s->regs_present & (UINT64_C(1) << reg)))
        return false;
    *v = s->regs[reg];
    return true;
}

int uprobe_arg_decode(const struct usdt_arg *arg, const struct uprobe_arg_plan *plan,
                      const struct uprobe_sample *s, uint64_t *out)
{
    switch (plan->method) {
    case UPROBE_ARG_NONE:
        return -1;
    case UPROBE_ARG_REGS:
        return usdt_arg_value(arg, sample_reg, (void *)s, out);
    case UPROBE_ARG_STACK: {
        uint64_t sp, base;
        if (!sample_reg((void *)s, PERF_REG_X86_SP, &sp) || !sample_reg((void *)s, arg->reg, &base) ||
            !s->stack)
            return -1;
        uint64_t addr = usdt_arg_address(arg, base);
        if (addr < sp || addr - sp > s->stack_len || s->stack_len - (addr - sp) < arg->size)
            return -1;
        *out = usdt_arg_from_memory(arg, s->stack + (addr - sp));
        return 0;
    }
    case UPROBE_ARG_TRACEFS:
        if (!s->raw || plan->raw_size < arg->size || plan->raw_offset > s->raw_len ||
            s->raw_len - plan->raw_offset < arg->size)
            return -1;
        *out = usdt_arg_from_memory(arg, s->raw + plan->raw_offset);
        return 0;
    }
    return -1;
}
