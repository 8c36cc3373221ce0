/* SPDX-License-Identifier: GPL-3.0-or-later */
/* marker_program.c: builds the per-location marker program (see marker_program.h) as BPF
 * instructions. Registers: r6 the probe's pt_regs, r7 pid_tgid, r8 arg0, r9 the CPU's region, then the claimed
 * slot. Stack: fp-8 a memory operand's bytes, fp-16 the claimed slot number, fp-24 the CPU number, fp-32 the
 * return address. */
#include "sampler/bpf/marker_program.h"
#include "sampler/bpf/bpf_emit.h"

#include <asm/perf_regs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* r8 = r8 truncated to bytes and sign- or zero-extended to 64 bits. */
static void emit_extend(struct emitter *e, unsigned bytes, bool is_signed)
{
    if (bytes >= 8)
        return;
    int32_t shift = 64 - 8 * (int32_t)bytes;
    emit(e, BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_8, 0, 0, shift);
    emit(e, BPF_ALU64 | (is_signed ? BPF_ARSH : BPF_RSH) | BPF_K, BPF_REG_8, 0, 0, shift);
}

int bpf_marker_pt_regs_offset(int perf_reg)
{
    /* struct pt_regs (arch/x86/include/asm/ptrace.h), 8 bytes per slot:
     * r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di orig_ax ip cs flags sp ss */
    switch (perf_reg) {
    case PERF_REG_X86_R15: return 0;
    case PERF_REG_X86_R14: return 8;
    case PERF_REG_X86_R13: return 16;
    case PERF_REG_X86_R12: return 24;
    case PERF_REG_X86_BP: return 32;
    case PERF_REG_X86_BX: return 40;
    case PERF_REG_X86_R11: return 48;
    case PERF_REG_X86_R10: return 56;
    case PERF_REG_X86_R9: return 64;
    case PERF_REG_X86_R8: return 72;
    case PERF_REG_X86_AX: return 80;
    case PERF_REG_X86_CX: return 88;
    case PERF_REG_X86_DX: return 96;
    case PERF_REG_X86_SI: return 104;
    case PERF_REG_X86_DI: return 112;
    case PERF_REG_X86_IP: return 128;
    case PERF_REG_X86_CS: return 136;
    case PERF_REG_X86_FLAGS: return 144;
    case PERF_REG_X86_SP: return 152;
    case PERF_REG_X86_SS: return 160;
    default: return -1;
    }
}

/* r8 = arg0. Returns -1 when a program cannot read it. */
static int emit_arg(struct emitter *e, const struct usdt_arg *a)
{
    if (!a) {
        emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_8, 0, 0, 0);
        return 0;
    }
    if (a->size == 0 || a->size > 8)
        return -1;
    if (a->kind == USDT_ARG_IMM) {
        emit_ld64(e, BPF_REG_8, 0, usdt_arg_extend(a, (uint64_t)a->imm));
        return 0;
    }
    int off = bpf_marker_pt_regs_offset(a->reg);
    if (off < 0)
        return -1;
    if (a->kind == USDT_ARG_REG) {
        emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_8, BPF_REG_6, (int16_t)off, 0);
        if (a->reg_shift)
            emit(e, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_8, 0, 0, (int32_t)a->reg_shift);
        if (a->reg_bytes < 8)
            emit_extend(e, a->reg_bytes, false);
        emit_extend(e, a->size, a->is_signed);
        return 0;
    }
    if (a->kind != USDT_ARG_MEM || a->imm < INT32_MIN || a->imm > INT32_MAX)
        return -1;
    /* bpf_probe_read_user(fp - 8, size, base + displacement); a failed read leaves the zero stored first. */
    emit(e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_6, (int16_t)off, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, (int32_t)a->imm);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, -8);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, (int32_t)a->size);
    emit_call(e, BPF_FUNC_probe_read_user);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_8, BPF_REG_10, -8, 0);
    emit_extend(e, a->size, a->is_signed);
    return 0;
}

int bpf_marker_emit(struct emitter *ep, const struct bpf_marker_program_spec *spec,
                    void (*then)(struct emitter *, const void *), const void *then_ctx)
{
    struct emitter e = *ep;
    if (spec->slot_bits < 4 || spec->slot_bits > 24)
        return -1;
    const int32_t mask = (int32_t)((1u << spec->slot_bits) - 1), eighth = (int32_t)((1u << spec->slot_bits) / 8 - 1);

    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
    emit_call(&e, BPF_FUNC_get_current_pid_tgid);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
    emit(&e, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
    size_t other_process = emit_jump(&e, BPF_JNE, BPF_REG_0, (int32_t)spec->tgid);
    if (emit_arg(&e, spec->arg0) != 0)
        return -1;
    /* r9 = this CPU's region */
    emit_call(&e, BPF_FUNC_get_smp_processor_id);
    emit(&e, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -24, 0);
    emit_map_lookup(&e, spec->slots_fd, -24);
    size_t no_region = emit_jump(&e, BPF_JEQ, BPF_REG_0, 0);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_9, BPF_REG_0, 0, 0);
    /* claim: r1 = head++ (kept at fp-16 for the commit and the doorbell); r9 = the slot */
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
    emit(&e, BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_9, BPF_REG_1, offsetof(struct bpf_slots_header, head),
         BPF_ADD | BPF_FETCH);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, -16, 0);
    emit(&e, BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, mask);
    emit(&e, BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_1, 0, 0, BPF_SLOT_SHIFT);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, (int32_t)sizeof(struct bpf_slots_header));
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_9, BPF_REG_1, 0, 0);
    /* being written: sequence 0, then the fields, then the sequence of this claim (head + 1) */
    emit(&e, BPF_ST | BPF_MEM | BPF_W, BPF_REG_9, 0, offsetof(struct bpf_slot, seq), 0);
    emit(&e, BPF_STX | BPF_MEM | BPF_W, BPF_REG_9, BPF_REG_7, offsetof(struct bpf_slot, tid), 0);
    emit(&e, BPF_ST | BPF_MEM | BPF_W, BPF_REG_9, 0, offsetof(struct bpf_slot, location), (int32_t)spec->location);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_8, offsetof(struct bpf_slot, arg0), 0);
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6, (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_IP),
         0);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_1, offsetof(struct bpf_slot, ip), 0);
    size_t flag_off = SIZE_MAX, read_done = SIZE_MAX;
    if (spec->return_read == BPF_RETURN_WHEN_FLAGGED) {
        /* r1 = &flag (the map's value, in place); not set: no read */
        emit_ld64(&e, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, (uint32_t)spec->return_flag_fd);
        emit(&e, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_1, BPF_REG_1, 0, 0);
        flag_off = emit_jump(&e, BPF_JEQ, BPF_REG_1, 0);
    }
    if (spec->return_read != BPF_RETURN_NEVER) {
        emit_read_user(&e, -32, 8, BPF_REG_6, (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_SP));
        emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, -32, 0);
        emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_1, offsetof(struct bpf_slot, ret_addr), 0);
        emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6,
             (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_SP), 0);
        emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_1, offsetof(struct bpf_slot, ret_slot), 0);
    }
    if (spec->return_read == BPF_RETURN_WHEN_FLAGGED) {
        read_done = emit(&e, BPF_JMP | BPF_JA, 0, 0, 0, 0);
        land(&e, flag_off);
    }
    if (spec->return_read != BPF_RETURN_ALWAYS) {
        emit(&e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_9, 0, offsetof(struct bpf_slot, ret_addr), 0);
        emit(&e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_9, 0, offsetof(struct bpf_slot, ret_slot), 0);
    }
    if (read_done != SIZE_MAX)
        land(&e, read_done);
    emit_call(&e, BPF_FUNC_ktime_get_ns);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_0, offsetof(struct bpf_slot, time_ns), 0);
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, -16, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1);
    emit(&e, BPF_STX | BPF_MEM | BPF_W, BPF_REG_9, BPF_REG_1, offsetof(struct bpf_slot, seq), 0);
    /* an eighth of the region since the last doorbell: ring it (the record is the CPU number) */
    emit(&e, BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, eighth);
    size_t quiet = emit_jump(&e, BPF_JNE, BPF_REG_1, 0);
    emit_ld64(&e, BPF_REG_1, BPF_PSEUDO_MAP_FD, (uint32_t)spec->doorbell_fd);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -24);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 4);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_RB_FORCE_WAKEUP);
    emit_call(&e, BPF_FUNC_ringbuf_output);
    land(&e, quiet);
    if (then)
        then(&e, then_ctx);
    land(&e, other_process);
    land(&e, no_region);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
    emit(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    *ep = e;
    return e.full ? -1 : 0;
}

int bpf_marker_program(const struct bpf_marker_program_spec *spec, struct bpf_insn *out, size_t max)
{
    struct emitter e = { out, 0, max, false };
    return bpf_marker_emit(&e, spec, NULL, NULL) != 0 ? -1 : (int)e.n;
}
