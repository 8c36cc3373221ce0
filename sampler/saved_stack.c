/* SPDX-License-Identifier: GPL-3.0-or-later */
/* saved_stack.c: the sampler's unwinder (sampler/unwind) over a thread's state saved outside a sample, as a
 * core file keeps it: its general registers (x86-64's struct user_regs_struct, as NT_PRSTATUS holds them) turned
 * into the sample registers the unwinder reads, its stack as saved from rsp up, the target's mappings from the
 * caller (a core's NT_FILE entries), opened as files. */
#include "sampler/sampler.h"

#include <asm/perf_regs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "sampler/target/proc_maps.h"
#include "sampler/unwind/unwind.h"

struct saved_stack_unwinder {
    struct proc_maps maps;
    struct unwinder *unwinder;
};

#define USER_REG(name) (offsetof(struct user_regs_struct, name) / sizeof(uint64_t))

/* perf's register index <- struct user_regs_struct's */
static const struct {
    uint8_t perf, user;
} reg_pairs[] = {
    { PERF_REG_X86_AX, USER_REG(rax) },   { PERF_REG_X86_BX, USER_REG(rbx) },   { PERF_REG_X86_CX, USER_REG(rcx) },
    { PERF_REG_X86_DX, USER_REG(rdx) },   { PERF_REG_X86_SI, USER_REG(rsi) },   { PERF_REG_X86_DI, USER_REG(rdi) },
    { PERF_REG_X86_BP, USER_REG(rbp) },   { PERF_REG_X86_SP, USER_REG(rsp) },   { PERF_REG_X86_IP, USER_REG(rip) },
    { PERF_REG_X86_FLAGS, USER_REG(eflags) }, { PERF_REG_X86_CS, USER_REG(cs) }, { PERF_REG_X86_SS, USER_REG(ss) },
    { PERF_REG_X86_DS, USER_REG(ds) },    { PERF_REG_X86_ES, USER_REG(es) },    { PERF_REG_X86_FS, USER_REG(fs) },
    { PERF_REG_X86_GS, USER_REG(gs) },    { PERF_REG_X86_R8, USER_REG(r8) },    { PERF_REG_X86_R9, USER_REG(r9) },
    { PERF_REG_X86_R10, USER_REG(r10) },  { PERF_REG_X86_R11, USER_REG(r11) },  { PERF_REG_X86_R12, USER_REG(r12) },
    { PERF_REG_X86_R13, USER_REG(r13) },  { PERF_REG_X86_R14, USER_REG(r14) },  { PERF_REG_X86_R15, USER_REG(r15) },
};

struct saved_stack_unwinder *saved_stack_unwinder_new(const struct sampler_mapping *mappings, size_t n)
{
    struct saved_stack_unwinder *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        struct proc_map m = { .start = mappings[i].start, .end = mappings[i].end, .pgoff = mappings[i].pgoff,
                              .readable = true, .executable = mappings[i].executable,
                              .path = (char *)mappings[i].path };
        if (proc_maps_insert(&u->maps, &m) != 0) {
            saved_stack_unwinder_free(u);
            return NULL;
        }
    }
    if (!(u->unwinder = unwinder_new(&u->maps, ""))) {
        saved_stack_unwinder_free(u);
        return NULL;
    }
    return u;
}

size_t saved_stack_unwind(struct saved_stack_unwinder *u, const uint64_t *regs, const uint8_t *stack,
                          size_t stack_len, uint64_t *ips, size_t max_ips, bool *truncated)
{
    uint64_t sample_regs[PERF_REG_X86_64_MAX] = { 0 };
    for (size_t i = 0; i < sizeof(reg_pairs) / sizeof(reg_pairs[0]); i++)
        sample_regs[reg_pairs[i].perf] = regs[reg_pairs[i].user];
    return unwinder_unwind(u->unwinder, sample_regs, stack, stack_len, ips, max_ips, truncated);
}

void saved_stack_unwinder_free(struct saved_stack_unwinder *u)
{
    if (!u)
        return;
    unwinder_free(u->unwinder);
    proc_maps_free(&u->maps);
    free(u);
}
