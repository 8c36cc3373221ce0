/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_emit.h: writing BPF instructions into a bounded array, for the program generators of sampler/bpf/
 * (marker_program.c, wait_filter_program.c): one instruction, a 64-bit constant or map fd, a helper call, a
 * forward jump landed later. Overflow is remembered (full), not written. */
#ifndef TASKSPY_BPF_EMIT_H
#define TASKSPY_BPF_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

struct emitter {
    struct bpf_insn *v;
    size_t n, max;
    bool full;
};

static inline size_t emit(struct emitter *e, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    if (e->n < e->max)
        e->v[e->n] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
    else
        e->full = true;
    return e->n++;
}

/* dst = 64-bit constant (two instructions); src marks a map fd (BPF_PSEUDO_MAP_FD) or a map value address
 * (BPF_PSEUDO_MAP_VALUE, second word the offset). */
static inline void emit_ld64(struct emitter *e, uint8_t dst, uint8_t src, uint64_t value)
{
    emit(e, BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, (int32_t)(uint32_t)value);
    emit(e, 0, 0, 0, 0, (int32_t)(uint32_t)(value >> 32));
}

static inline void emit_call(struct emitter *e, int32_t helper)
{
    emit(e, BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}

/* A forward jump whose target is set later with land(). */
static inline size_t emit_jump(struct emitter *e, uint8_t op, uint8_t dst, int32_t imm)
{
    return emit(e, BPF_JMP | op | BPF_K, dst, 0, 0, imm);
}

static inline void land(struct emitter *e, size_t jump)
{
    if (jump < e->n && jump < e->max)
        e->v[jump].off = (int16_t)(e->n - jump - 1);
}

/* r0 = bpf_map_lookup_elem(map_fd, fp + key_off) */
static inline void emit_map_lookup(struct emitter *e, int map_fd, int16_t key_off)
{
    emit_ld64(e, BPF_REG_1, BPF_PSEUDO_MAP_FD, (uint32_t)map_fd);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, key_off);
    emit_call(e, BPF_FUNC_map_lookup_elem);
}

/* bpf_probe_read_user(fp + to_off, size, *(u64 *)(from_reg + from_off)); a failed read leaves the zero stored
 * at fp + to_off first (an 8-byte store: size at most 8) */
static inline void emit_read_user(struct emitter *e, int16_t to_off, int32_t size, uint8_t from_reg, int16_t from_off)
{
    emit(e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, to_off, 0);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, to_off);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, size);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, from_reg, from_off, 0);
    emit_call(e, BPF_FUNC_probe_read_user);
}

#endif
