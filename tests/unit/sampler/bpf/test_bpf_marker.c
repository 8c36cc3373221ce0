/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_bpf_marker.c: unit tests of the BPF marker route's user-space parts. The per-location program
 * (sampler/bpf_marker_program) is run on a small interpreter of the instructions it uses, with the helpers
 * played by the test: arg0 from registers of every width (sign- and zero-extended, %ah), immediates and
 * memory operands; the slot's fields and sequence in the region of the hit's CPU; other processes ignored;
 * the doorbell rung once per eighth of a region; arguments out of reach refused; the return address at %rsp
 * and %rsp itself stored never, always, or while a flag map's value says so. When this process may
 * load BPF, the kernel's verifier must accept every program shape. The slot reader (sampler/bpf_slots) and
 * the doorbell ring's reader (sampler/bpf_ring) are run over synthetic memory: claim order, a slot still
 * being written, slots overwritten by a later lap (lost), a writer that never finishes; ring records in
 * order, one still being written, discarded ones, one across the end. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asm/perf_regs.h>
#include <cmocka.h>

#include "sampler/bpf/marker_program.h"
#include "sampler/bpf/bpf_ring.h"
#include "sampler/bpf/bpf_slots.h"
#include "sampler/bpf/bpf_sys.h"

/* ---- a tiny interpreter for the instructions bpf_marker_program emits ---- */

#define SLOTS_FD 7
#define DOORBELL_FD 9
#define FLAG_FD 11
#define SLOT_BITS 8u                   /* 256 slots: the doorbell rings every 32 */
#define REGION_BYTES (sizeof(struct bpf_slots_header) + ((size_t)64 << SLOT_BITS))

struct machine {
    uint64_t regs[21];                 /* the probe's struct pt_regs, 8-byte slots */
    uint64_t pid_tgid, now;
    uint32_t cpu, n_cpus;              /* the CPU the hit is on; regions exist for CPUs below n_cpus */
    uint8_t *regions;                  /* n_cpus regions of the bpf_slots layout */
    int doorbells;
    uint32_t doorbell_cpu;
    uint64_t user_addr;                /* a user memory region for probe_read_user */
    uint8_t user[64];
    uint32_t return_flag;              /* FLAG_FD's value */
};

static uint64_t call(struct machine *m, int32_t helper, const uint64_t *r)
{
    switch (helper) {
    case BPF_FUNC_get_current_pid_tgid: return m->pid_tgid;
    case BPF_FUNC_ktime_get_ns: return m->now;
    case BPF_FUNC_get_smp_processor_id: return m->cpu;
    case BPF_FUNC_map_lookup_elem: {
        assert_int_equal(r[1], SLOTS_FD);
        uint32_t key;
        memcpy(&key, (const void *)(uintptr_t)r[2], 4);
        return key < m->n_cpus ? (uint64_t)(uintptr_t)(m->regions + key * REGION_BYTES) : 0;
    }
    case BPF_FUNC_ringbuf_output:
        assert_int_equal(r[1], DOORBELL_FD);
        assert_int_equal(r[3], 4);
        assert_int_equal(r[4], BPF_RB_FORCE_WAKEUP);
        memcpy(&m->doorbell_cpu, (const void *)(uintptr_t)r[2], 4);
        m->doorbells++;
        return 0;
    case BPF_FUNC_probe_read_user: {
        uint64_t from = r[3], size = r[2];
        if (from < m->user_addr || from + size > m->user_addr + sizeof(m->user))
            return (uint64_t)-14;       /* -EFAULT, nothing written */
        memcpy((void *)(uintptr_t)r[1], m->user + (from - m->user_addr), size);
        return 0;
    }
    default: fail_msg("unexpected helper %d", helper); return 0;
    }
}

static void run(struct machine *m, const struct bpf_insn *p, int n)
{
    uint64_t r[11] = { 0 };
    _Alignas(8) uint8_t stack[512];
    memset(stack, 0xAA, sizeof(stack));
    r[1] = (uint64_t)(uintptr_t)m->regs;
    r[10] = (uint64_t)(uintptr_t)(stack + sizeof(stack));
    for (int pc = 0, steps = 0; steps < 1000; steps++) {
        assert_true(pc >= 0 && pc < n);
        const struct bpf_insn *i = &p[pc++];
        uint64_t *d = &r[i->dst_reg], s = r[i->src_reg], k = (uint64_t)(int64_t)i->imm;
        uint8_t cls = BPF_CLASS(i->code), op = BPF_OP(i->code);
        if (cls == BPF_ALU64) {
            uint64_t v = BPF_SRC(i->code) == BPF_X ? s : k;
            switch (op) {
            case BPF_MOV: *d = v; break;
            case BPF_ADD: *d += v; break;
            case BPF_AND: *d &= v; break;
            case BPF_LSH: *d <<= v; break;
            case BPF_RSH: *d >>= v; break;
            case BPF_ARSH: *d = (uint64_t)((int64_t)*d >> v); break;
            default: fail_msg("alu op %#x", op);
            }
        } else if (cls == BPF_LD) {
            assert_int_equal(i->code, BPF_LD | BPF_DW | BPF_IMM);
            *d = (uint32_t)i->imm | (uint64_t)(uint32_t)p[pc].imm << 32;
            if (i->src_reg == BPF_PSEUDO_MAP_VALUE) {      /* the value's address, in place */
                assert_int_equal(i->imm, FLAG_FD);
                *d = (uint64_t)(uintptr_t)&m->return_flag + (uint32_t)p[pc].imm;
            }
            pc++;
        } else if (cls == BPF_LDX) {
            uint8_t *a = (uint8_t *)(uintptr_t)(s + i->off);
            *d = BPF_SIZE(i->code) == BPF_DW ? *(uint64_t *)a : *(uint32_t *)a;
        } else if (cls == BPF_STX || cls == BPF_ST) {
            uint8_t *a = (uint8_t *)(uintptr_t)(*d + i->off);
            uint64_t v = cls == BPF_STX ? s : k;
            if (BPF_MODE(i->code) == BPF_ATOMIC) {
                assert_int_equal(i->imm, BPF_ADD | BPF_FETCH);
                uint64_t old;
                memcpy(&old, a, 8);
                uint64_t sum = old + v;
                memcpy(a, &sum, 8);
                r[i->src_reg] = old;
            } else if (BPF_SIZE(i->code) == BPF_DW) {
                memcpy(a, &v, 8);
            } else {
                uint32_t w = (uint32_t)v;
                memcpy(a, &w, 4);
            }
        } else if (cls == BPF_JMP) {
            if (op == BPF_CALL) {
                r[0] = call(m, i->imm, r);
                continue;
            }
            if (op == BPF_EXIT)
                return;
            bool jump;
            switch (op) {
            case BPF_JA: jump = true; break;
            case BPF_JEQ: jump = *d == k; break;
            case BPF_JNE: jump = *d != k; break;
            default: fail_msg("jump op %#x", op); return;
            }
            if (jump)
                pc += i->off;
        } else {
            fail_msg("instruction class %#x", cls);
        }
    }
    fail_msg("the program does not end");
}

static int build(const struct usdt_arg *arg, struct bpf_insn *p)
{
    struct bpf_marker_program_spec spec = {
        .arg0 = arg, .location = 5, .tgid = 1234, .slots_fd = SLOTS_FD, .slot_bits = SLOT_BITS,
        .doorbell_fd = DOORBELL_FD,
    };
    return bpf_marker_program(&spec, p, BPF_MARKER_PROGRAM_MAX);
}

static void set_reg(struct machine *m, int perf_reg, uint64_t v)
{
    m->regs[bpf_marker_pt_regs_offset(perf_reg) / 8] = v;
}

static struct machine *new_machine(void)
{
    struct machine *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    m->pid_tgid = (uint64_t)1234 << 32 | 1240;
    m->now = 987654321;
    m->n_cpus = 2;
    m->cpu = 1;
    m->regions = calloc(2, REGION_BYTES);
    assert_non_null(m->regions);
    set_reg(m, PERF_REG_X86_IP, 0x401234);
    return m;
}

static void free_machine(struct machine *m)
{
    free(m->regions);
    free(m);
}

static uint64_t head_of(const struct machine *m, uint32_t cpu)
{
    uint64_t head;
    memcpy(&head, m->regions + cpu * REGION_BYTES, 8);
    return head;
}

static struct bpf_slot slot_of(const struct machine *m, uint32_t cpu, uint64_t n)
{
    struct bpf_slot slot;
    memcpy(&slot, m->regions + cpu * REGION_BYTES + sizeof(struct bpf_slots_header) +
                      (n & ((1u << SLOT_BITS) - 1)) * sizeof(slot), sizeof(slot));
    return slot;
}

static struct bpf_slot arg0_of(const char *operand, struct machine *m)
{
    struct usdt_arg a;
    assert_int_equal(usdt_arg_parse_one(operand, &a), USDT_ARG_OK);
    struct bpf_insn p[BPF_MARKER_PROGRAM_MAX];
    int n = build(&a, p);
    assert_true(n > 0);
    run(m, p, n);
    assert_int_equal(head_of(m, m->cpu), 1);
    return slot_of(m, m->cpu, 0);
}

static void test_slot_fields(void **state)
{
    (void)state;
    struct machine *m = new_machine();
    set_reg(m, PERF_REG_X86_DI, 0x1122334455667788ull);
    struct bpf_slot slot = arg0_of("8@%rdi", m);
    assert_int_equal(slot.seq, 1);
    assert_int_equal(slot.tid, 1240);
    assert_int_equal(slot.location, 5);
    assert_int_equal(slot.time_ns, 987654321);
    assert_int_equal(slot.arg0, 0x1122334455667788ull);
    assert_int_equal(slot.ip, 0x401234);
    assert_int_equal(head_of(m, 0), 0);            /* the other CPU's region untouched */
    free_machine(m);
}

static void test_register_widths(void **state)
{
    (void)state;
    struct {
        const char *operand;
        int reg;
        uint64_t value, want;
    } cases[] = {
        { "-4@%edi", PERF_REG_X86_DI, 0xdeadbeeffffffff6ull, (uint64_t)-10 },
        { "4@%esi", PERF_REG_X86_SI, 0xdeadbeeffffffff6ull, 0xfffffff6ull },
        { "-2@%ax", PERF_REG_X86_AX, 0x1234ff80ull, (uint64_t)-128 },
        { "1@%ah", PERF_REG_X86_AX, 0x1234abcdull, 0xab },
        { "-1@%r9b", PERF_REG_X86_R9, 0x77ff, (uint64_t)-1 },
        { "8@%r15", PERF_REG_X86_R15, 42, 42 },
        { "4@%rbx", PERF_REG_X86_BX, 0x100000005ull, 5 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct machine *m = new_machine();
        set_reg(m, cases[i].reg, cases[i].value);
        struct bpf_slot slot = arg0_of(cases[i].operand, m);
        if (slot.arg0 != cases[i].want)
            fail_msg("%s: arg0 %#llx, want %#llx", cases[i].operand, (unsigned long long)slot.arg0,
                     (unsigned long long)cases[i].want);
        free_machine(m);
    }
}

static void test_immediate_and_memory(void **state)
{
    (void)state;
    struct machine *m = new_machine();
    assert_int_equal(arg0_of("-4@$-3", m).arg0, (uint64_t)-3);
    free_machine(m);

    m = new_machine();
    m->user_addr = 0x7ffd0000;
    uint64_t id = 0xabcdef0123ull;
    memcpy(m->user + 16, &id, 8);
    set_reg(m, PERF_REG_X86_BP, 0x7ffd0000 + 36);
    assert_int_equal(arg0_of("8@-20(%rbp)", m).arg0, id);
    free_machine(m);

    m = new_machine();
    m->user_addr = 0x5000;
    int32_t neg = -7;
    memcpy(m->user + 8, &neg, 4);
    memset(m->user + 12, 0x55, 4);         /* bytes past the operand must not leak in */
    set_reg(m, PERF_REG_X86_BX, 0x5000);
    assert_int_equal(arg0_of("-4@8(%rbx)", m).arg0, (uint64_t)-7);
    free_machine(m);

    m = new_machine();                     /* unreadable memory: 0, still recorded */
    m->user_addr = 0x5000;
    set_reg(m, PERF_REG_X86_BX, 0x9000);
    assert_int_equal(arg0_of("8@8(%rbx)", m).arg0, 0);
    free_machine(m);
}

static void test_claims_other_process_and_doorbell(void **state)
{
    (void)state;
    struct bpf_insn p[BPF_MARKER_PROGRAM_MAX];
    int n = build(NULL, p);
    assert_true(n > 0);
    struct machine *m = new_machine();
    for (int i = 0; i < 70; i++) {
        m->now = 1000 + (uint64_t)i;
        run(m, p, n);
    }
    assert_int_equal(head_of(m, 1), 70);
    for (uint64_t i = 0; i < 70; i++) {
        struct bpf_slot slot = slot_of(m, 1, i);
        assert_int_equal(slot.seq, i + 1);
        assert_int_equal(slot.time_ns, 1000 + i);
        assert_int_equal(slot.arg0, 0);
    }
    /* the 32nd and the 64th claim ring the doorbell (every eighth of 256 slots), with the CPU number */
    assert_int_equal(m->doorbells, 2);
    assert_int_equal(m->doorbell_cpu, 1);

    m->pid_tgid = (uint64_t)999 << 32 | 999;       /* another process: nothing */
    run(m, p, n);
    assert_int_equal(head_of(m, 1), 70);

    m->pid_tgid = (uint64_t)1234 << 32 | 1234;     /* a CPU without a region: nothing, no crash */
    m->cpu = 3;
    run(m, p, n);
    assert_int_equal(head_of(m, 0) + head_of(m, 1), 70);
    free_machine(m);
}

static void test_out_of_reach(void **state)
{
    (void)state;
    struct bpf_insn p[BPF_MARKER_PROGRAM_MAX];
    struct usdt_arg seg = { .kind = USDT_ARG_REG, .size = 8, .reg = PERF_REG_X86_FS, .reg_bytes = 8 };
    assert_int_equal(build(&seg, p), -1);
    struct usdt_arg far = { .kind = USDT_ARG_MEM, .size = 8, .reg = PERF_REG_X86_BX, .imm = (int64_t)1 << 33 };
    assert_int_equal(build(&far, p), -1);
    struct usdt_arg ok = { .kind = USDT_ARG_REG, .size = 8, .reg = PERF_REG_X86_DI, .reg_bytes = 8 };
    struct bpf_marker_program_spec spec = { .arg0 = &ok, .slot_bits = SLOT_BITS };
    assert_int_equal(bpf_marker_program(&spec, p, 8), -1);   /* no room for it */
}

/* The return address at %rsp and %rsp: never read (both 0), always, or while the flag is set. */
static void test_return_address(void **state)
{
    (void)state;
    struct machine *m = new_machine();
    m->user_addr = 0x7ffc0000;
    uint64_t ret = 0x55550000abcdull;
    memcpy(m->user + 16, &ret, 8);
    set_reg(m, PERF_REG_X86_SP, m->user_addr + 16);
    const enum bpf_return_read modes[] = { BPF_RETURN_NEVER, BPF_RETURN_ALWAYS, BPF_RETURN_WHEN_FLAGGED };
    for (size_t k = 0; k < 3; k++) {
        for (uint32_t flag = 0; flag < 2; flag++) {
            struct bpf_marker_program_spec spec = {
                .location = 5, .tgid = 1234, .slots_fd = SLOTS_FD, .slot_bits = SLOT_BITS, .doorbell_fd = DOORBELL_FD,
                .return_read = modes[k], .return_flag_fd = FLAG_FD,
            };
            struct bpf_insn p[BPF_MARKER_PROGRAM_MAX];
            int n = bpf_marker_program(&spec, p, BPF_MARKER_PROGRAM_MAX);
            assert_true(n > 0);
            m->return_flag = flag;
            uint64_t before = head_of(m, m->cpu);
            run(m, p, n);
            struct bpf_slot slot = slot_of(m, m->cpu, before);
            bool read = modes[k] == BPF_RETURN_ALWAYS || (modes[k] == BPF_RETURN_WHEN_FLAGGED && flag);
            assert_int_equal(slot.seq, before + 1);
            assert_int_equal(slot.ret_addr, read ? ret : 0);
            assert_int_equal(slot.ret_slot, read ? m->user_addr + 16 : 0);
            assert_int_equal(slot.ip, 0x401234);
        }
    }
    /* a stack pointer the read fails at: the zero stored before it */
    set_reg(m, PERF_REG_X86_SP, 0x1000);
    struct bpf_marker_program_spec spec = { .location = 5, .tgid = 1234, .slots_fd = SLOTS_FD, .slot_bits = SLOT_BITS,
                                            .doorbell_fd = DOORBELL_FD, .return_read = BPF_RETURN_ALWAYS };
    struct bpf_insn p[BPF_MARKER_PROGRAM_MAX];
    int n = bpf_marker_program(&spec, p, BPF_MARKER_PROGRAM_MAX);
    uint64_t before = head_of(m, m->cpu);
    run(m, p, n);
    assert_int_equal(slot_of(m, m->cpu, before).ret_addr, 0);
    assert_int_equal(slot_of(m, m->cpu, before).ret_slot, 0x1000);
    free_machine(m);
}

/* The kernel's verifier on real maps, when this process may load BPF programs (root, CAP_BPF). */
static void test_verifier_accepts(void **state)
{
    (void)state;
    struct bpf_slots slots;
    if (bpf_slots_create(&slots, 2, BPF_SLOTS_MAX_BITS) != 0 && (errno == EPERM || errno == EACCES))
        skip();
    assert_true(slots.map_fd >= 0);
    struct bpf_ring doorbell;
    assert_int_equal(bpf_ring_create(&doorbell, 4096), 0);
    int flag = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0);
    assert_true(flag >= 0);
    const char *operands[] = { NULL, "8@%rdi", "-4@%edi", "1@%ah", "-4@$-3", "8@-20(%rbp)", "-2@8(%rbx)" };
    for (size_t i = 0; i < sizeof(operands) / sizeof(operands[0]); i++) {
        struct usdt_arg a;
        if (operands[i])
            assert_int_equal(usdt_arg_parse_one(operands[i], &a), USDT_ARG_OK);
        struct bpf_marker_program_spec spec = {
            .arg0 = operands[i] ? &a : NULL, .location = 3, .tgid = (uint32_t)getpid(), .slots_fd = slots.map_fd,
            .slot_bits = slots.bits, .doorbell_fd = doorbell.map_fd,
            .return_read = (enum bpf_return_read)(i % 3), .return_flag_fd = flag,   /* each way of reading */
        };
        struct bpf_insn p[BPF_MARKER_PROGRAM_MAX];
        int n = bpf_marker_program(&spec, p, BPF_MARKER_PROGRAM_MAX);
        assert_true(n > 0);
        char log[8192];
        int fd = bpf_sys_prog_load_probe(p, (size_t)n, i % 2 == 0, log, sizeof(log));
        if (fd < 0)
            fail_msg("%s: refused: %s\n%s", operands[i] ? operands[i] : "(none)", strerror(errno), log);
        close(fd);
    }
    close(flag);
    bpf_ring_destroy(&doorbell);
    bpf_slots_destroy(&slots);
}

/* ---- the slot reader ---- */

struct region_fixture {
    _Alignas(8) uint8_t mem[2 * REGION_BYTES];
    uint64_t tail[2];
    struct bpf_slots s;
};

static struct bpf_slot *slot_at(struct region_fixture *f, size_t region, uint64_t n)
{
    return (struct bpf_slot *)(f->mem + region * REGION_BYTES + sizeof(struct bpf_slots_header)) +
           (n & ((1u << SLOT_BITS) - 1));
}

static void set_head(struct region_fixture *f, size_t region, uint64_t head)
{
    memcpy(f->mem + region * REGION_BYTES, &head, 8);
}

static uint64_t lost_total(const struct bpf_slots_loss *l)
{
    return l->lapped + l->unfinished + l->torn;
}

/* A finished write of claim n. */
static void write_claim(struct region_fixture *f, size_t region, uint64_t n, uint32_t tid)
{
    struct bpf_slot *slot = slot_at(f, region, n);
    slot->tid = tid;
    slot->time_ns = 100 + n;
    slot->location = 2;
    slot->seq = (uint32_t)(n + 1);
}

struct got_slots {
    size_t n;
    uint64_t times[600];
    uint32_t tids[600];
};

static void collect_slot(void *ctx, const struct bpf_slot *slot)
{
    struct got_slots *g = ctx;
    assert_true(g->n < 600);
    g->times[g->n] = slot->time_ns;
    g->tids[g->n++] = slot->tid;
}

static void test_slots_in_claim_order(void **state)
{
    (void)state;
    struct region_fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    bpf_slots_wrap(&f->s, f->mem, 2, SLOT_BITS, f->tail);
    for (uint64_t n = 0; n < 5; n++)
        write_claim(f, 0, n, 10);
    write_claim(f, 1, 0, 20);
    slot_at(f, 0, 5)->seq = 0;                      /* claim 5 being written */
    write_claim(f, 0, 6, 10);                       /* claim 6 done already */
    set_head(f, 0, 7);
    set_head(f, 1, 1);
    struct got_slots g = { 0 };
    struct bpf_slots_loss lost = { 99, 99, 99, 0 };
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), 6);
    assert_int_equal(lost_total(&lost), 0);
    assert_int_equal(lost.max_backlog, 7);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(g.times[i], 100 + i);
    assert_int_equal(g.tids[5], 20);
    assert_int_equal(f->tail[0], 5);                /* waits at claim 5 */
    write_claim(f, 0, 5, 10);
    memset(&g, 0, sizeof(g));
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), 2);
    assert_int_equal(g.times[0], 105);
    assert_int_equal(g.times[1], 106);
    assert_int_equal(lost_total(&lost), 0);
    free(f);
}

/* An overrun before the recording starts is skipped, not counted lost; a region not overrun is left as it is. */
static void test_slots_skip_overrun(void **state)
{
    (void)state;
    struct region_fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    bpf_slots_wrap(&f->s, f->mem, 2, SLOT_BITS, f->tail);
    const uint64_t slots = 1u << SLOT_BITS;
    for (uint64_t n = 0; n < slots + 10; n++)
        write_claim(f, 0, n, 7);
    set_head(f, 0, slots + 10);
    for (uint64_t n = 0; n < 3; n++)
        write_claim(f, 1, n, 8);
    set_head(f, 1, 3);
    bpf_slots_skip_overrun(&f->s);
    assert_int_equal(f->tail[0], 10);
    assert_int_equal(f->tail[1], 0);
    struct got_slots g = { 0 };
    struct bpf_slots_loss lost = { 99, 99, 99, 0 };
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), slots + 3);
    assert_int_equal(lost_total(&lost), 0);
    assert_int_equal(g.times[0], 110);
    free(f);
}

static void test_slots_overrun_and_stuck_writer(void **state)
{
    (void)state;
    struct region_fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    bpf_slots_wrap(&f->s, f->mem, 1, SLOT_BITS, f->tail);
    const uint64_t slots = 1u << SLOT_BITS;
    /* the writer went a region and 10 claims past the reader: claims 0..9 are gone, 10..slots+9 remain */
    for (uint64_t n = 0; n < slots + 10; n++)
        write_claim(f, 0, n, 7);
    set_head(f, 0, slots + 10);
    struct got_slots g = { 0 };
    struct bpf_slots_loss lost;
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), slots);
    assert_int_equal(lost.lapped, 10);                 /* lost by the lap, none otherwise */
    assert_int_equal(lost_total(&lost), 10);
    assert_int_equal(lost.max_backlog, slots + 10);
    assert_int_equal(g.times[0], 110);
    /* a slot read while a later lap overwrites it (its sequence is ahead) is lost, not handed over */
    f->tail[0] = 2 * slots;
    write_claim(f, 0, 2 * slots, 7);
    write_claim(f, 0, 3 * slots + 1, 7);            /* slot 1 already holds a later lap's claim */
    set_head(f, 0, 2 * slots + 2);
    memset(&g, 0, sizeof(g));
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), 1);
    assert_int_equal(lost.lapped, 1);
    assert_int_equal(lost_total(&lost), 1);
    /* a writer that never finishes is given up once the region has moved half a region past it */
    uint64_t t = 2 * slots + 2;
    slot_at(f, 0, t)->seq = 0;
    for (uint64_t n = t + 1; n < t + 10; n++)
        write_claim(f, 0, n, 7);
    set_head(f, 0, t + 10);
    memset(&g, 0, sizeof(g));
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), 0);   /* waits for it */
    for (uint64_t n = t + 10; n < t + slots / 2 + 2; n++)
        write_claim(f, 0, n, 7);
    set_head(f, 0, t + slots / 2 + 2);
    assert_int_equal(bpf_slots_read(&f->s, collect_slot, &g, &lost), slots / 2 + 1);
    assert_int_equal(lost.unfinished, 1);             /* the writer given up, nothing lapped */
    assert_int_equal(lost_total(&lost), 1);
    free(f);
}

/* ---- the ring reader ---- */

#define TEST_RING 256u

struct fake_ring {
    uint64_t consumer, producer;
    _Alignas(8) uint8_t data[2 * TEST_RING];
    struct bpf_ring r;
};

/* Write a record of len bytes of value v at position pos (header flags added), mirrored. Returns the next
 * position. */
static uint64_t put(struct fake_ring *f, uint64_t pos, uint32_t len, uint8_t v, uint32_t flags)
{
    uint8_t rec[64];
    uint32_t hdr[2] = { len | flags, 0 };
    memcpy(rec, hdr, 8);
    memset(rec + 8, v, len);
    size_t total = (8 + len + 7) & ~(size_t)7;
    for (size_t i = 0; i < total; i++) {
        size_t at = (pos + i) % TEST_RING;
        f->data[at] = f->data[at + TEST_RING] = i < 8 + len ? rec[i] : 0;
    }
    return pos + total;
}

struct got {
    size_t n;
    uint32_t len[16];
    uint8_t first[16], last[16];
};

static void collect(void *ctx, const void *data, uint32_t len)
{
    struct got *g = ctx;
    assert_true(g->n < 16);
    g->len[g->n] = len;
    g->first[g->n] = ((const uint8_t *)data)[0];
    g->last[g->n] = ((const uint8_t *)data)[len - 1];
    g->n++;
}

static void test_ring_records(void **state)
{
    (void)state;
    struct fake_ring *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    bpf_ring_wrap(&f->r, &f->consumer, &f->producer, f->data, TEST_RING);
    uint64_t pos = 0;
    pos = put(f, pos, 32, 1, 0);
    pos = put(f, pos, 5, 2, BPF_RINGBUF_DISCARD_BIT);
    pos = put(f, pos, 13, 3, 0);
    uint64_t busy_at = pos;
    pos = put(f, pos, 32, 4, BPF_RINGBUF_BUSY_BIT);
    pos = put(f, pos, 32, 5, 0);
    f->producer = pos;
    assert_int_equal(bpf_ring_pending(&f->r), pos);
    struct got g = { 0 };
    assert_int_equal(bpf_ring_consume(&f->r, collect, &g), 2);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.len[0], 32);
    assert_int_equal(g.first[0], 1);
    assert_int_equal(g.len[1], 13);
    assert_int_equal(g.last[1], 3);
    assert_int_equal(f->consumer, busy_at);         /* stops at the record being written */
    put(f, busy_at, 32, 4, 0);                       /* committed now */
    memset(&g, 0, sizeof(g));
    assert_int_equal(bpf_ring_consume(&f->r, collect, &g), 2);
    assert_int_equal(g.first[0], 4);
    assert_int_equal(g.first[1], 5);
    assert_int_equal(f->consumer, pos);
    assert_int_equal(bpf_ring_pending(&f->r), 0);
    free(f);
}

static void test_ring_wraps(void **state)
{
    (void)state;
    struct fake_ring *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    bpf_ring_wrap(&f->r, &f->consumer, &f->producer, f->data, TEST_RING);
    uint64_t pos = TEST_RING * 3 - 24;               /* positions keep growing past the size */
    f->consumer = pos;
    pos = put(f, pos, 40, 7, 0);                     /* crosses the end of the data area */
    pos = put(f, pos, 8, 8, 0);
    f->producer = pos;
    struct got g = { 0 };
    assert_int_equal(bpf_ring_consume(&f->r, collect, &g), 2);
    assert_int_equal(g.len[0], 40);
    assert_int_equal(g.first[0], 7);
    assert_int_equal(g.last[0], 7);
    assert_int_equal(g.first[1], 8);
    assert_int_equal(f->consumer, pos);
    /* a length beyond what was produced is not followed */
    uint32_t bogus[2] = { 1000, 0 };
    memcpy(f->data + pos % TEST_RING, bogus, 8);
    f->producer = pos + 16;
    memset(&g, 0, sizeof(g));
    assert_int_equal(bpf_ring_consume(&f->r, collect, &g), 0);
    assert_int_equal(f->consumer, pos);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_fields),
        cmocka_unit_test(test_register_widths),
        cmocka_unit_test(test_immediate_and_memory),
        cmocka_unit_test(test_claims_other_process_and_doorbell),
        cmocka_unit_test(test_out_of_reach),
        cmocka_unit_test(test_return_address),
        cmocka_unit_test(test_verifier_accepts),
        cmocka_unit_test(test_slots_in_claim_order),
        cmocka_unit_test(test_slots_overrun_and_stuck_writer),
        cmocka_unit_test(test_slots_skip_overrun),
        cmocka_unit_test(test_ring_records),
        cmocka_unit_test(test_ring_wraps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
