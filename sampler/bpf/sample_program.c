/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sample_program.c: builds the per-sample TLS marker program (see sample_program.h) as BPF instructions.
 * Registers: r6 the program's context, r7 pid_tgid, r8 the flags, r9 the offset from the place map. Stack: the record at fp-32 (tid, flags,
 * time, task, ktime at fp-32, fp-28, fp-24, fp-16, fp-8), fp-40 a kernel pointer read on the way (then
 * fs_base), fp-48 an Option's discriminant. */
#include "sampler/bpf/sample_program.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emitter {
    struct bpf_insn *v;
    size_t n, max;
};

static size_t emit(struct emitter *e, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    if (e->n < e->max)
        e->v[e->n] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
    return e->n++;
}

#define REC (-32)                      /* the record's place on the stack */
#define SCRATCH (-40)
#define TAG (-48)

static void emit_mov_imm(struct emitter *e, uint8_t dst, int32_t imm)
{
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm);
}

/* helper(fp + stack_off, 8, r3): a probe read of 8 bytes into the stack (r3 already holds the source). */
static void emit_read8(struct emitter *e, int16_t stack_off, int32_t helper)
{
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, stack_off);
    emit_mov_imm(e, BPF_REG_2, 8);
    emit(e, BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}

/* if r0 != 0 (the read failed): flags |= flag. */
static void emit_flag_on_failure(struct emitter *e, uint32_t flag)
{
    emit(e, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0);
    emit(e, BPF_ALU64 | BPF_OR | BPF_K, BPF_REG_8, 0, 0, (int32_t)flag);
}

/* ringbuf_output(ring, the record, its size, no wakeup: the sample buffers wake the reader); r0: 0 or -errno */
static void emit_ring_output(struct emitter *e, int ring_fd)
{
    emit(e, BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, ring_fd);
    emit(e, 0, 0, 0, 0, 0);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, REC);
    emit_mov_imm(e, BPF_REG_3, (int32_t)sizeof(struct bpf_sample_record));
    emit_mov_imm(e, BPF_REG_4, BPF_RB_NO_WAKEUP);
    emit(e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output);
}

int bpf_sample_program(const struct bpf_sample_program_spec *spec, struct bpf_insn *out, size_t max)
{
    struct emitter e = { out, 0, max };
    if (spec->has_tag && (spec->tag_size < 1 || spec->tag_size > 8 || spec->some_value > INT32_MAX ||
                          spec->place_map_fd >= 0))
        return -1;
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
    emit(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
    emit(&e, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
    size_t other_process = emit(&e, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 0, (int32_t)spec->tgid);
    emit_mov_imm(&e, BPF_REG_8, 0);
    /* zeroes first: a failed read leaves them */
    for (int16_t off = REC; off < 0; off += 8)
        emit(&e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, off, 0);
    emit(&e, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_7, REC + (int16_t)offsetof(struct bpf_sample_record, tid),
         0);
    /* time: ((struct bpf_perf_event_data_kern *)ctx)->data->time */
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_6, 0, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, spec->off_ctx_data);
    emit_read8(&e, SCRATCH, BPF_FUNC_probe_read_kernel);
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_10, SCRATCH, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, spec->off_data_time);
    emit_read8(&e, REC + (int16_t)offsetof(struct bpf_sample_record, time_ns), BPF_FUNC_probe_read_kernel);
    emit(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, REC + (int16_t)offsetof(struct bpf_sample_record,
                                                                                          ktime_ns), 0);
    /* fs_base: current->thread.fsbase */
    emit(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_0, 0, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, spec->off_task_fsbase);
    emit_read8(&e, SCRATCH, BPF_FUNC_probe_read_kernel);
    emit_flag_on_failure(&e, BPF_SAMPLE_FSBASE_UNREADABLE);
    size_t none = SIZE_MAX;
    if (spec->has_tag) {
        /* the Option's discriminant: not Some, the value stays 0 */
        emit(&e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, TAG, 0);
        emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_10, SCRATCH, 0);
        emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, spec->tag_tp_offset);
        emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0);
        emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, TAG);
        emit_mov_imm(&e, BPF_REG_2, (int32_t)spec->tag_size);
        emit(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_user);
        emit_flag_on_failure(&e, BPF_SAMPLE_TLS_UNREADABLE);
        emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_10, TAG, 0);
        none = emit(&e, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, (int32_t)spec->some_value);
    }
    size_t unplaced[2] = { SIZE_MAX, SIZE_MAX };
    if (spec->place_map_fd >= 0) {
        /* the offset from the place map (key 0 at fp-48): r9 = *lookup, or the record says not known yet */
        emit(&e, BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, TAG, 0);
        emit(&e, BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, spec->place_map_fd);
        emit(&e, 0, 0, 0, 0, 0);
        emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
        emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, TAG);
        emit(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
        emit_mov_imm(&e, BPF_REG_9, 0);
        size_t no_entry = emit(&e, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0);
        emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_0, 0, 0);
        if (no_entry < e.max)
            e.v[no_entry].off = (int16_t)(e.n - no_entry - 1);
        unplaced[0] = emit(&e, BPF_JNE | BPF_JMP | BPF_K, BPF_REG_9, 0, 0, 0);   /* to the read below */
        emit(&e, BPF_ALU64 | BPF_OR | BPF_K, BPF_REG_8, 0, 0, (int32_t)BPF_SAMPLE_PLACE_UNKNOWN);
        unplaced[1] = emit(&e, BPF_JMP | BPF_JA, 0, 0, 0, 0);                    /* past it */
        if (unplaced[0] < e.max)
            e.v[unplaced[0]].off = (int16_t)(e.n - unplaced[0] - 1);
    }
    /* the marker: *(uint64_t *)(fs_base + tp_offset), from the thread's memory */
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_10, SCRATCH, 0);
    if (spec->place_map_fd >= 0)
        emit(&e, BPF_ALU64 | BPF_ADD | BPF_X, BPF_REG_3, BPF_REG_9, 0, 0);
    else
        emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, spec->tp_offset);
    emit_read8(&e, REC + (int16_t)offsetof(struct bpf_sample_record, task), BPF_FUNC_probe_read_user);
    emit_flag_on_failure(&e, BPF_SAMPLE_TLS_UNREADABLE);
    if (none < e.max)
        e.v[none].off = (int16_t)(e.n - none - 1);
    if (unplaced[1] < e.max)
        e.v[unplaced[1]].off = (int16_t)(e.n - unplaced[1] - 1);
    emit(&e, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_8,
         REC + (int16_t)offsetof(struct bpf_sample_record, flags), 0);
    /* The write can fail when another CPU holds the ring's lock and this program runs in an NMI (a hardware
     * PMU's sample), where the kernel only tries the lock: a few more tries, then the sample has no record
     * ([unknown task], counted by the reader). */
    emit_ring_output(&e, spec->ring_fd);
    size_t written[BPF_SAMPLE_WRITE_RETRIES];
    for (int i = 0; i < BPF_SAMPLE_WRITE_RETRIES; i++) {
        written[i] = emit(&e, BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0);
        emit_ring_output(&e, spec->ring_fd);
    }
    for (int i = 0; i < BPF_SAMPLE_WRITE_RETRIES; i++)
        if (written[i] < e.max)
            e.v[written[i]].off = (int16_t)(e.n - written[i] - 1);
    if (other_process < e.max)
        e.v[other_process].off = (int16_t)(e.n - other_process - 1);
    emit_mov_imm(&e, BPF_REG_0, 1);    /* the kernel still writes the sample */
    emit(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return e.n > e.max ? -1 : (int)e.n;
}
