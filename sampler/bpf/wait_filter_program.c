/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_filter_program.c: builds the waker-registration stacks' budget filter (wait_filter_program.h) as BPF
 * instructions. Registers: r6 the probe's pt_regs, then the counters; r7 the task; r8 the return address; r9
 * now. Stack: fp-8 the task (map key), fp-16 the return address read, fp-20 the counters' key, fp-40 the
 * task's new value. */
#include "sampler/bpf/wait_filter_program.h"

#include <asm/perf_regs.h>
#include <stddef.h>

#include "sampler/bpf/bpf_emit.h"
#include "sampler/bpf/marker_program.h"

/* (*(u64 *)(r6 + off)) += 1, atomically (counters shared by every CPU) */
static void emit_count(struct emitter *e, int16_t off)
{
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
    emit(e, BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_6, BPF_REG_1, off, BPF_ADD);
}

int wait_filter_program(const struct wait_filter_spec *spec, struct bpf_insn *out, size_t max)
{
    struct emitter e = { out, 0, max, false };
    if (spec->interval_ns > INT32_MAX || spec->window_ns > INT32_MAX || spec->max_per_window > INT32_MAX)
        return -1;
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
    /* the CPU first: the programs of the other CPUs' events leave at once */
    size_t other_cpu = SIZE_MAX;
    if (spec->cpu != WAIT_FILTER_ANY_CPU) {
        emit_call(&e, BPF_FUNC_get_smp_processor_id);
        other_cpu = emit_jump(&e, BPF_JNE, BPF_REG_0, (int32_t)spec->cpu);
    }
    emit_call(&e, BPF_FUNC_get_current_pid_tgid);
    emit(&e, BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
    size_t other_process = emit_jump(&e, BPF_JNE, BPF_REG_0, (int32_t)spec->tgid);
    /* r7 = the task (%rdi), the map key at fp-8 */
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_7, BPF_REG_6, (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_DI), 0);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, -8, 0);
    /* r8 = the return address at %rsp (0 when unreadable) */
    emit_read_user(&e, -16, 8, BPF_REG_6, (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_SP));
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_8, BPF_REG_10, -16, 0);
    emit_call(&e, BPF_FUNC_ktime_get_ns);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_9, BPF_REG_0, 0, 0);
    /* r6 = the counters */
    emit(&e, BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -20, 0);
    emit_map_lookup(&e, spec->counters_fd, -20);
    size_t no_counters = emit_jump(&e, BPF_JEQ, BPF_REG_0, 0);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0);
    /* the task's last capture: same caller and recent -> skip */
    emit_map_lookup(&e, spec->tasks_fd, -8);
    size_t unseen = emit_jump(&e, BPF_JEQ, BPF_REG_0, 0);
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, offsetof(struct wait_filter_task, last_return), 0);
    size_t other_caller = emit(&e, BPF_JMP | BPF_JNE | BPF_X, BPF_REG_1, BPF_REG_8, 0, 0);
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, offsetof(struct wait_filter_task, last_ns), 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, (int32_t)spec->interval_ns);
    size_t recent = emit(&e, BPF_JMP | BPF_JGT | BPF_X, BPF_REG_1, BPF_REG_9, 0, 0);
    land(&e, unseen);
    land(&e, other_caller);
    /* the rate cap: a new window when the last began window_ns ago */
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6, offsetof(struct wait_filter_counters, window_start), 0);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_9, 0, 0);
    emit(&e, BPF_ALU64 | BPF_SUB | BPF_X, BPF_REG_2, BPF_REG_1, 0, 0);
    size_t same_window = emit_jump(&e, BPF_JLT, BPF_REG_2, (int32_t)spec->window_ns);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_6, BPF_REG_9, offsetof(struct wait_filter_counters, window_start), 0);
    emit(&e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_6, 0, offsetof(struct wait_filter_counters, in_window), 0);
    land(&e, same_window);
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6, offsetof(struct wait_filter_counters, in_window), 0);
    size_t over_budget = emit_jump(&e, BPF_JGE, BPF_REG_1, (int32_t)spec->max_per_window);
    emit_count(&e, offsetof(struct wait_filter_counters, in_window));
    /* taken: remember (now, caller) for the task */
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_9, -40 + (int16_t)offsetof(struct wait_filter_task, last_ns), 0);
    emit(&e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_8, -40 + (int16_t)offsetof(struct wait_filter_task, last_return),
         0);
    emit_ld64(&e, BPF_REG_1, BPF_PSEUDO_MAP_FD, (uint32_t)spec->tasks_fd);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
    emit(&e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -40);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_ANY);
    emit_call(&e, BPF_FUNC_map_update_elem);
    emit_count(&e, offsetof(struct wait_filter_counters, taken));
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
    emit(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    land(&e, recent);
    land(&e, over_budget);
    emit_count(&e, offsetof(struct wait_filter_counters, skipped));
    land(&e, other_process);
    if (other_cpu != SIZE_MAX)
        land(&e, other_cpu);
    land(&e, no_counters);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
    emit(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return e.full ? -1 : (int)e.n;
}
