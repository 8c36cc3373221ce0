/* SPDX-License-Identifier: GPL-3.0-or-later */
/* unwind.c: per-sample DWARF unwinding with libunwind's remote API. The accessors read registers from the
 * sample, stack words from the sample's stack copy and everything else (.eh_frame_hdr, .eh_frame, code)
 * from the mapped object files; unwind tables are found through each object's .eh_frame_hdr. The libunwind
 * linked is the build's own, without signal masking around its cache's lock (GNUmakefile, "libunwind"). */
#include "sampler/unwind/unwind.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "sampler/unwind/unwind_objects.h"

/* Exported by libunwind-x86_64 but not declared by its headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

#define UNWIND_CACHE_SIZE 4096 /* libunwind register-state cache entries (per address space) */

/* What is known about one entry of maps->v, valid for one maps->generation. */
struct map_slot {
    bool resolved;
    bool bias_ok;
    struct unwind_object *obj; /* NULL: anonymous, special or unopenable */
    uint64_t bias;
};

struct unwinder {
    const struct proc_maps *maps;
    unsigned generation;
    bool generation_seen;
    VEC_OF(struct map_slot) slots;   /* parallel to maps->v: slots.v[i] for maps->v[i] while i < slots.n */
    struct unwind_objects objects;
    unw_addr_space_t as;
    /* Object of the last table lookup: serves reads of its data when that mapping is not in maps (the
     * sampler may only learn of executable mappings from PERF_RECORD_MMAP2). */
    struct unwind_object *last_obj;
    uint64_t last_bias;
};

/* Per-sample state handed to the accessors as libunwind's `arg`. */
struct unwind_sample {
    struct unwinder *u;
    const uint64_t *regs;
    const uint8_t *stack;
    size_t stack_len;
    uint64_t sp;
    bool no_info;              /* a table lookup failed during the current step */
    bool mem_fault;            /* a memory read failed during the current step */
};

/* libunwind x86_64 register numbers to perf's PERF_REG_X86_* indices. */
static const int8_t perf_reg_of_unw[] = {
    [UNW_X86_64_RAX] = PERF_REG_X86_AX, [UNW_X86_64_RDX] = PERF_REG_X86_DX,
    [UNW_X86_64_RCX] = PERF_REG_X86_CX, [UNW_X86_64_RBX] = PERF_REG_X86_BX,
    [UNW_X86_64_RSI] = PERF_REG_X86_SI, [UNW_X86_64_RDI] = PERF_REG_X86_DI,
    [UNW_X86_64_RBP] = PERF_REG_X86_BP, [UNW_X86_64_RSP] = PERF_REG_X86_SP,
    [UNW_X86_64_R8] = PERF_REG_X86_R8,  [UNW_X86_64_R9] = PERF_REG_X86_R9,
    [UNW_X86_64_R10] = PERF_REG_X86_R10, [UNW_X86_64_R11] = PERF_REG_X86_R11,
    [UNW_X86_64_R12] = PERF_REG_X86_R12, [UNW_X86_64_R13] = PERF_REG_X86_R13,
    [UNW_X86_64_R14] = PERF_REG_X86_R14, [UNW_X86_64_R15] = PERF_REG_X86_R15,
    [UNW_X86_64_RIP] = PERF_REG_X86_IP,
};

/* Drop everything keyed on the old mappings when the caller's maps changed. Allocates only then. */
static void sync_generation(struct unwinder *u)
{
    if (u->generation_seen && u->generation == u->maps->generation)
        return;
    if (u->maps->n > u->slots.n &&
        vec_reserve(&u->slots, u->maps->cap > u->maps->n ? u->maps->cap : u->maps->n) == 0)
        u->slots.n = u->slots.cap;
    if (u->slots.v)
        memset(u->slots.v, 0, u->slots.n * sizeof(*u->slots.v));
    unw_flush_cache(u->as, 0, 0);
    u->last_obj = NULL;
    u->generation = u->maps->generation;
    u->generation_seen = true;
}

static void resolve_slot(struct unwinder *u, const struct proc_map *m, struct map_slot *slot)
{
    slot->obj = unwind_objects_get(&u->objects, m);
    slot->bias_ok = slot->obj && unwind_object_bias(slot->obj, m, &slot->bias);
    slot->resolved = true;
}

/* The slot for mapping m (cached per generation), or the scratch slot when the cache has no room. */
static const struct map_slot *slot_for(struct unwinder *u, const struct proc_map *m, struct map_slot *scratch)
{
    size_t i = (size_t)(m - u->maps->v);
    struct map_slot *slot = i < u->slots.n ? &u->slots.v[i] : scratch;
    if (!slot->resolved)
        resolve_slot(u, m, slot);
    return slot;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info,
                          void *arg)
{
    struct unwind_sample *s = arg;
    struct unwinder *u = s->u;
    const struct proc_map *m = proc_maps_find(u->maps, ip);
    struct map_slot scratch = {0};
    const struct map_slot *slot = m ? slot_for(u, m, &scratch) : NULL;
    if (!slot || !slot->obj || !slot->bias_ok || !slot->obj->has_table) {
        s->no_info = true;
        return -UNW_ENOINFO;
    }
    const struct unwind_object *o = slot->obj;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof(di));
    di.start_ip = m->start;
    di.end_ip = m->end;
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.u.rti.segbase = slot->bias + o->hdr_vaddr;
    di.u.rti.table_data = di.u.rti.segbase + o->table_offset;
    di.u.rti.table_len = o->fde_count * 8 / sizeof(unw_word_t);
    u->last_obj = slot->obj;
    u->last_bias = slot->bias;
    int ret = _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
    if (ret < 0)
        s->no_info = true;
    return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as, (void)pi, (void)arg; /* the tables live in the object cache: nothing to release */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as, (void)addr, (void)arg;
    return -UNW_ENOINFO;
}

static bool read_object_memory(struct unwinder *u, uint64_t addr, unw_word_t *valp)
{
    const struct proc_map *m = proc_maps_find(u->maps, addr);
    if (m) {
        struct map_slot scratch = {0};
        const struct map_slot *slot = slot_for(u, m, &scratch);
        return slot->obj && unwind_object_read(slot->obj, addr - m->start + m->pgoff, valp, sizeof(*valp));
    }
    if (u->last_obj && u->last_obj->usable) {
        int64_t off = elf_file_vaddr_to_offset(&u->last_obj->elf, addr - u->last_bias);
        return off >= 0 && unwind_object_read(u->last_obj, (uint64_t)off, valp, sizeof(*valp));
    }
    return false;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
    (void)as;
    struct unwind_sample *s = arg;
    if (write) {
        s->mem_fault = true;
        return -UNW_EINVAL;
    }
    if (addr >= s->sp && s->stack_len >= sizeof(*valp) && addr - s->sp <= s->stack_len - sizeof(*valp)) {
        memcpy(valp, s->stack + (addr - s->sp), sizeof(*valp));
        return 0;
    }
    if (read_object_memory(s->u, addr, valp))
        return 0;
    s->mem_fault = true;
    return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
    (void)as;
    struct unwind_sample *s = arg;
    if (write)
        return -UNW_EREADONLYREG;
    if (reg < 0 || (size_t)reg >= sizeof(perf_reg_of_unw) / sizeof(perf_reg_of_unw[0]))
        return -UNW_EBADREG;
    *valp = s->regs[perf_reg_of_unw[reg]];
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *offp,
                         void *arg)
{
    (void)as, (void)addr, (void)buf, (void)len, (void)offp, (void)arg;
    return -UNW_EINVAL;
}

/* libunwind copies the accessor table into the address space. */
static const unw_accessors_t unwind_accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

struct unwinder *unwinder_new(const struct proc_maps *maps, const char *root)
{
    struct unwinder *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    u->maps = maps;
    if (unwind_objects_init(&u->objects, root) != 0) {
        free(u);
        errno = ENOMEM;
        return NULL;
    }
    unw_accessors_t acc = unwind_accessors;
    u->as = unw_create_addr_space(&acc, 0);
    if (!u->as) {
        unwind_objects_free(&u->objects);
        free(u);
        errno = ENOMEM;
        return NULL;
    }
    if (unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL) != 0 ||
        unw_set_cache_size(u->as, UNWIND_CACHE_SIZE, 0) != 0) {
        unwinder_free(u);
        errno = EINVAL;
        return NULL;
    }
    return u;
}

void unwinder_free(struct unwinder *u)
{
    if (!u)
        return;
    if (u->as)
        unw_destroy_addr_space(u->as);
    unwind_objects_free(&u->objects);
    vec_free(&u->slots);
    free(u);
}

/* One step outwards. Returns 1 with the caller's ip/sp, 0 at the outermost frame, -1 when the unwind
 * cannot go on (no unwind info, memory outside the copy, a step that does not move up the stack). */
static int step(unw_cursor_t *c, struct unwind_sample *s, uint64_t prev_sp, uint64_t *ip, uint64_t *sp)
{
    s->no_info = false;
    s->mem_fault = false;
    int r = unw_step(c);
    /* On a failed table lookup libunwind guesses with the frame-pointer chain; do not trust that. */
    if (r < 0 || s->no_info || s->mem_fault)
        return -1;
    if (r == 0)
        return 0;
    unw_word_t nip, nsp;
    if (unw_get_reg(c, UNW_REG_IP, &nip) < 0 || unw_get_reg(c, UNW_REG_SP, &nsp) < 0)
        return -1;
    if (nip == 0 || nsp <= prev_sp)
        return -1;
    *ip = nip;
    *sp = nsp;
    return 1;
}

/* x86-64 register numbers (as pop encodes them, REX.B adding 8) to perf's; rsp (4) is never popped here. */
static const int8_t perf_reg_of_pop[16] = {
    PERF_REG_X86_AX, PERF_REG_X86_CX, PERF_REG_X86_DX, PERF_REG_X86_BX, -1, PERF_REG_X86_BP, PERF_REG_X86_SI,
    PERF_REG_X86_DI, PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11, PERF_REG_X86_R12,
    PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
};

/* A word of the stack copy (based at base) at addr. */
static bool stack_word(const uint8_t *stack, size_t len, uint64_t base, uint64_t addr, uint64_t *out)
{
    if (!stack || addr < base || len < 8 || addr - base > len - 8)
        return false;
    memcpy(out, stack + (addr - base), 8);
    return true;
}

/* Whether code (len bytes) starts with a jmp: rel8, rel32, or indirect (ff /4, an optional REX prefix). */
static bool is_jmp(const uint8_t *code, size_t len)
{
    size_t at = len > 0 && (code[0] & 0xf0) == 0x40 ? 1 : 0;      /* REX */
    if (at >= len)
        return false;
    if (at == 0 && (code[0] == 0xeb || code[0] == 0xe9))
        return true;
    return code[at] == 0xff && at + 1 < len && (code[at + 1] & 0x38) == 0x20;
}

/* A sample inside a function's epilogue, after some `pop`s of callee-saved registers and before its `ret`
 * (or the `jmp` of a tail call, which leaves the stack as the ret would: after at least one pop, or with
 * bare_jmp at a jmp itself, which may as well be a loop's, so only tried when the unwind failed).
 * The unwind tables GCC and LLVM emit move only the CFA at each pop: the popped registers keep their "saved
 * at CFA-n" rules, although their slots are now below the stack pointer, outside the copy the kernel made
 * from SP upwards. The caller's frame pointer is then unreadable and unwinding stopped after one or two
 * frames (about 1 sample in 1,500 on the hyper server: one instruction per call, the `ret`). The popped
 * registers already hold the caller's values: finish the epilogue by hand, the remaining pops and the ret,
 * from the code at IP and the stack copy. regs (a copy) becomes the caller's state. Returns false, regs
 * untouched, when IP is not at such a sequence (a tail call's return address must be in a mapped object:
 * a jmp after a pop inside a function would read a local). */
static bool finish_epilogue(struct unwinder *u, uint64_t *regs, const uint8_t *stack, size_t stack_len,
                            bool bare_jmp)
{
    uint8_t code[16];
    unw_word_t word;
    if (!read_object_memory(u, regs[PERF_REG_X86_IP], &word))
        return false;
    memcpy(code, &word, 8);
    size_t code_len = 8;
    if (read_object_memory(u, regs[PERF_REG_X86_IP] + 8, &word)) {
        memcpy(code + 8, &word, 8);
        code_len = 16;
    }
    uint64_t base = regs[PERF_REG_X86_SP], sp = base, values[8];
    int8_t popped[8];
    size_t at = 0, n = 0;
    while (n < 8 && at < code_len) {
        size_t reg;
        if (code[at] >= 0x58 && code[at] <= 0x5f) {
            reg = (size_t)(code[at] - 0x58);
            at += 1;
        } else if (code[at] == 0x41 && at + 1 < code_len && code[at + 1] >= 0x58 && code[at + 1] <= 0x5f) {
            reg = 8 + (size_t)(code[at + 1] - 0x58);
            at += 2;
        } else {
            break;
        }
        if (perf_reg_of_pop[reg] < 0 || !stack_word(stack, stack_len, base, sp, &values[n]))
            return false;
        popped[n++] = perf_reg_of_pop[reg];
        sp += 8;
    }
    uint64_t ret;
    bool tail_call = (n > 0 || bare_jmp) && at < code_len && is_jmp(code + at, code_len - at);
    if (at >= code_len || (code[at] != 0xc3 && !tail_call) || !stack_word(stack, stack_len, base, sp, &ret) ||
        ret == 0 || (tail_call && !read_object_memory(u, ret, &word)))
        return false;
    for (size_t i = 0; i < n; i++)
        regs[popped[i]] = values[i];
    regs[PERF_REG_X86_IP] = ret;
    regs[PERF_REG_X86_SP] = sp + 8;
    return true;
}

/* libunwind's steps from regs (the sampled state, or its caller's finished by hand), with the copy of the
 * stack from the sampled SP: the frames after the n in ips. Returns the count; *truncated unless the chain
 * ended. */
static size_t unwind_steps(struct unwinder *u, uint64_t *regs, uint64_t sampled_sp, const uint8_t *stack,
                           size_t stack_len, uint64_t *ips, size_t n, size_t max_ips, bool *truncated)
{
    *truncated = true;
    struct unwind_sample s = { .u = u, .regs = regs, .stack = stack, .stack_len = stack_len, .sp = sampled_sp };
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, u->as, &s) < 0)
        return n;
    uint64_t sp = regs[PERF_REG_X86_SP], ip;
    for (;;) {
        int r = step(&cursor, &s, sp, &ip, &sp);
        if (r == 0)
            *truncated = false;
        if (r <= 0 || n == max_ips) /* at max_ips the extra step only tells whether that was the end */
            break;
        ips[n++] = ip;
    }
    return n;
}

size_t unwinder_unwind(struct unwinder *u, const uint64_t *sampled_regs, const uint8_t *stack, size_t stack_len,
                       uint64_t *ips, size_t max_ips, bool *truncated)
{
    *truncated = true;
    if (max_ips == 0 || sampled_regs[PERF_REG_X86_IP] == 0)
        return 0;
    if (!stack)
        stack_len = 0;
    ips[0] = sampled_regs[PERF_REG_X86_IP];
    size_t n = 1;
    sync_generation(u);
    uint64_t sampled_sp = sampled_regs[PERF_REG_X86_SP], regs[PERF_REG_X86_64_MAX];
    memcpy(regs, sampled_regs, sizeof(regs));
    bool finished = finish_epilogue(u, regs, stack, stack_len, false);
    if (finished) {
        if (n == max_ips)
            return n;
        ips[n++] = regs[PERF_REG_X86_IP];   /* the caller, from its return address like every outer frame */
    }
    n = unwind_steps(u, regs, sampled_sp, stack, stack_len, ips, n, max_ips, truncated);
    /* At a tail call's jmp, its epilogue done, the unwind rules still say the popped frame pointer is saved
     * below the stack pointer: a caller that needs it stopped the unwind there. Finished by hand instead, the
     * one that unwinds further is kept (the two frames it may replace put back otherwise). */
    if (*truncated && !finished && n <= 2 && max_ips > 1) {
        memcpy(regs, sampled_regs, sizeof(regs));
        if (finish_epilogue(u, regs, stack, stack_len, true)) {
            uint64_t kept = n > 1 ? ips[1] : 0;
            size_t kept_n = n;
            bool other_truncated;
            ips[1] = regs[PERF_REG_X86_IP];
            n = unwind_steps(u, regs, sampled_sp, stack, stack_len, ips, 2, max_ips, &other_truncated);
            if (other_truncated && n <= kept_n) {
                ips[1] = kept;
                n = kept_n;
            } else {
                *truncated = other_truncated;
            }
        }
    }
    return n;
}

bool unwinder_function_start(struct unwinder *u, uint64_t ip, uint64_t *start)
{
    unw_proc_info_t pi;
    struct unwind_sample s = { .u = u };
    memset(&pi, 0, sizeof(pi));
    if (find_proc_info(u->as, ip, &pi, 0, &s) < 0 || pi.start_ip == 0)
        return false;
    *start = pi.start_ip;
    return true;
}
