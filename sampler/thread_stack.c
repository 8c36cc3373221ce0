/* SPDX-License-Identifier: GPL-3.0-or-later */
/* thread_stack.c: one thread's user stack now, read without stopping it (taskspy tasks: the worker polling a
 * running task). A thread that sits in a system call (a std::thread::sleep, a blocking read, a futex) has its
 * stack and instruction pointers in /proc/PID/task/TID/syscall, and its stack is not changing: its bytes are
 * read with process_vm_readv and unwound like a sample's copy. A thread running in user space has no such
 * place: one perf sample of it is taken (a task-clock event on that thread alone, its user registers and stack
 * copied by the kernel), up to a bound of waiting. Nothing is written to the target, no signal sent. */
#include "sampler/sampler.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sampler/perf/perf_records.h"
#include "sampler/perf/ring_buffer.h"
#include "sampler/sampler_internal.h"
#include "sampler/target/proc_maps.h"
#include "sampler/unwind/unwind.h"

#define STACK_BYTES 65536u          /* read above the stack pointer of a thread in a system call */
#define SAMPLE_STACK_BYTES 32768u   /* copied by the one perf sample of a running thread */
#define SAMPLE_PAGES 16u            /* its ring buffer's data pages (64 KB: room for the sample) */
#define SAMPLE_WAIT_MS 100          /* how long a running thread's sample is waited for */
#define SAMPLE_PERIOD_NS 200000u    /* task-clock period: the sample comes after 0.2 ms of its CPU time */

struct thread_stack_reader {
    pid_t pid;
    struct proc_maps maps;
    struct unwinder *unwinder;
    uint8_t stack[STACK_BYTES];
};

int thread_stack_reader_open(struct thread_stack_reader **out, pid_t pid, const char *root, char *err,
                             size_t errlen)
{
    *out = NULL;
    struct thread_stack_reader *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->pid = pid;
    if (proc_maps_load(&r->maps, pid) != 0) {
        snprintf(err, errlen, "cannot read /proc/%d/maps: %s", (int)pid, strerror(errno));
        free(r);
        return -1;
    }
    r->unwinder = unwinder_new(&r->maps, root ? root : "");
    if (!r->unwinder) {
        snprintf(err, errlen, "cannot set up the unwinder");
        thread_stack_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

void thread_stack_reader_close(struct thread_stack_reader *r)
{
    if (!r)
        return;
    unwinder_free(r->unwinder);
    proc_maps_free(&r->maps);
    free(r);
}

/* The stack and instruction pointers of a thread in a system call, from /proc/PID/task/TID/syscall ("NR ARGS...
   SP PC"; "running" when it is in user space, "-1 SP PC" when blocked outside a system call). */
static bool syscall_registers(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool read = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    if (!read || strncmp(line, "running", 7) == 0)
        return false;
    char *words[16];
    size_t n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \n", &save); w && n < 16; w = strtok_r(NULL, " \n", &save))
        words[n++] = w;
    if (n < 3 || strcmp(words[0], "-1") == 0)
        return false;       /* (blocked, not in a system call: its registers may still change under the read) */
    char *end;
    *sp = strtoull(words[n - 2], &end, 16);
    if (*end)
        return false;
    *pc = strtoull(words[n - 1], &end, 16);
    return !*end && *sp && *pc;
}

/* len bytes of the target at addr into buf, page by page as far as they can be read: how many were */
static size_t read_stack(pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t chunk = 4096 - ((addr + done) & 4095);
        if (chunk > len - done)
            chunk = len - done;
        struct iovec local = { buf + done, chunk }, remote = { (void *)(uintptr_t)(addr + done), chunk };
        if (syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0) != (long)chunk)
            break;
        done += chunk;
    }
    return done;
}

static size_t unwind(struct thread_stack_reader *r, uint64_t *regs, const uint8_t *stack, size_t len,
                     uint64_t *ips, size_t max, bool *truncated)
{
    if (proc_maps_find(&r->maps, regs[PERF_REG_X86_IP]) == NULL && proc_maps_load(&r->maps, r->pid) != 0)
        return 0;           /* (a mapping made since the reader opened) */
    return unwinder_unwind(r->unwinder, regs, stack, len, ips, max, truncated);
}

static bool executable(const struct proc_maps *maps, uint64_t addr)
{
    const struct proc_map *m = proc_maps_find(maps, addr);
    return m && m->executable;
}

/* The target of the call instruction before return address ret, from the target's code: a direct `call rel32`
   (e8), or a call through a pointer at a fixed place (`call *disp32(%rip)`, ff 15: how a position-independent
   executable calls another crate's function, through its GOT entry). */
static bool call_target(pid_t pid, uint64_t ret, uint64_t *target)
{
    uint8_t code[6];
    struct iovec local = { code, sizeof(code) }, remote = { (void *)(uintptr_t)(ret - 6), sizeof(code) };
    if (syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0) != (long)sizeof(code))
        return false;
    int32_t rel;
    if (code[1] == 0xe8) {
        memcpy(&rel, code + 2, 4);
        *target = ret + (uint64_t)(int64_t)rel;
        return true;
    }
    if (code[0] == 0xff && code[1] == 0x15) {
        memcpy(&rel, code + 2, 4);
        uint64_t slot = ret + (uint64_t)(int64_t)rel;
        struct iovec into = { target, 8 }, from = { (void *)(uintptr_t)slot, 8 };
        return syscall(SYS_process_vm_readv, pid, &into, 1, &from, 1, 0) == 8;
    }
    return false;
}

/* A thread in a system call gives its stack and instruction pointers only. Where a frame's unwind rule needs its
   frame pointer (std's functions keep one: CFA = rbp + 16, e.g. std::thread::sleep), the unwind stops at that
   frame. Its return address is then found on the stack: the nearest slot above the stopped frame's stack pointer
   holding an address just after a direct call of the stopped frame's function (checked in the code), with the
   caller's frame pointer saved just below it (the function's prologue pushed it there); the unwind goes on from
   that caller. Where no such slot is found the stack stays cut there (no guess). */
static size_t unwind_syscall_stack(struct thread_stack_reader *r, uint64_t *regs, const uint8_t *stack, size_t len,
                                   uint64_t *ips, size_t max)
{
    bool truncated;
    size_t n = unwind(r, regs, stack, len, ips, max, &truncated);
    uint64_t function, sp = regs[PERF_REG_X86_SP];
    if (!truncated || n == 0 || n >= max || !unwinder_function_start(r->unwinder, ips[n - 1] - (n > 1), &function))
        return n;
    for (size_t at = 8; at + 8 <= len; at += 8) {
        uint64_t ret, target, rbp;
        memcpy(&ret, stack + at, 8);
        if (!executable(&r->maps, ret) || !call_target(r->pid, ret, &target) || target != function)
            continue;
        memcpy(&rbp, stack + at - 8, 8);
        uint64_t caller[PERF_REG_X86_64_MAX] = { 0 };
        caller[PERF_REG_X86_IP] = ret;
        caller[PERF_REG_X86_SP] = sp + at + 8;
        caller[PERF_REG_X86_BP] = rbp;
        /* (the caller's instruction pointer is a return address: the unwinder is given it as a sampled ip, so its
           first address is ret itself) */
        size_t more = unwind(r, caller, stack + at + 8, len - at - 8, ips + n, max - n, &truncated);
        return n + more;
    }
    return n;
}

struct one_sample {
    struct sample_layout layout;
    uint64_t regs[PERF_REG_X86_64_MAX];
    uint8_t *stack;
    size_t stack_len;
    bool found;
};

static enum ring_buffer_next take_sample(void *ctx, const struct perf_event_header *rec)
{
    struct one_sample *s = ctx;
    struct decoded_sample d;
    if (rec->type != PERF_RECORD_SAMPLE || perf_decode_sample(rec, &s->layout, &d) != 0 || !d.regs_abi ||
        !d.stack)
        return RING_BUFFER_CONTINUE;
    perf_unpack_regs(&d, s->layout.regs_user_mask, s->regs, PERF_REG_X86_64_MAX);
    s->stack_len = d.stack_size < SAMPLE_STACK_BYTES ? (size_t)d.stack_size : SAMPLE_STACK_BYTES;
    memcpy(s->stack, d.stack, s->stack_len);
    s->found = s->regs[PERF_REG_X86_IP] != 0;
    return RING_BUFFER_STOP;
}

/* One perf sample of a thread running in user space: its registers and a copy of its stack. */
static bool sample_thread(pid_t tid, struct one_sample *s)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = SAMPLE_PERIOD_NS;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = USER_REGS_MASK;
    a.sample_stack_user = SAMPLE_STACK_BYTES;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    s->layout.sample_type = a.sample_type;
    s->layout.regs_user_mask = a.sample_regs_user;
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return false;
    struct ring_buffer rb;
    memset(&rb, 0, sizeof(rb));
    if (ring_buffer_map(&rb, fd, SAMPLE_PAGES) != 0) {
        close(fd);
        return false;
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        ring_buffer_drain(&rb, take_sample, s);
        if (s->found)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (waited >= SAMPLE_WAIT_MS || poll(&p, 1, (int)(SAMPLE_WAIT_MS - waited)) < 0)
            break;
    }
    ring_buffer_unmap(&rb);
    close(fd);
    return s->found;
}

size_t thread_stack_read(struct thread_stack_reader *r, pid_t tid, uint64_t *ips, size_t max,
                         enum thread_stack_source *source)
{
    uint64_t regs[PERF_REG_X86_64_MAX] = { 0 };
    *source = THREAD_STACK_NONE;
    if (syscall_registers(r->pid, tid, &regs[PERF_REG_X86_SP], &regs[PERF_REG_X86_IP])) {
        size_t len = read_stack(r->pid, regs[PERF_REG_X86_SP], r->stack, STACK_BYTES);
        size_t n = len ? unwind_syscall_stack(r, regs, r->stack, len, ips, max) : 0;
        if (n > 0)
            *source = THREAD_STACK_SYSCALL;
        return n;
    }
    struct one_sample s = { .stack = r->stack };
    if (!sample_thread(tid, &s))
        return 0;
    bool truncated;
    size_t n = unwind(r, s.regs, s.stack, s.stack_len, ips, max, &truncated);
    if (n > 0)
        *source = THREAD_STACK_SAMPLE;
    return n;
}
