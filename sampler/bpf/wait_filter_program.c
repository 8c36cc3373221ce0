/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_filter_program.c: builds the waker-registration stacks' budget filter (wait_filter_program.h) as BPF
 * instructions, alone or after a marker program's slot write (sampler/bpf/marker_program.h). Registers: r6 the
 * probe's pt_regs, then the return address; r7 the task, then its map value; r8 the counters; r9 now. Stack:
 * fp-8 the task (map key), fp-16 the return address read, fp-20 the counters' key, fp-40 the task's new
 * value. */
#include "sampler/bpf/wait_filter_program.h"

#include <asm/perf_regs.h>
#include <stdbool.h>
#include <stddef.h>

#include "sampler/bpf/bpf_emit.h"
#include "sampler/bpf/marker_program.h"

/* (*(u64 *)(base + off)) += 1, atomically (counters shared by every CPU) */
static void emit_count(struct emitter *e, uint8_t base, int16_t off)
{
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
    emit(e, BPF_STX | BPF_ATOMIC | BPF_DW, base, BPF_REG_1, off, BPF_ADD);
}

/* r6 = the return address at %rsp, read through the probe's pt_regs in r6 (0 when unreadable) */
static void emit_read_caller(struct emitter *e)
{
    emit_read_user(e, -16, 8, BPF_REG_6, (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_SP));
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_6, BPF_REG_10, -16, 0);
}

/* The budget, the hit in the target: from r6 the probe's pt_regs, r7 the task, r9 now; exits with 1 (take
 * the stack) or 0. The rate caps first: once a window's stacks and first stacks are taken, which at a
 * saturated target is within its first milliseconds, every hit leaves after three loads, without the task's
 * map lookup or the return address read (a hit is taken only when both allow, so the order changes no
 * outcome). A task with no stack yet takes one over the window's cap, from the first stacks' own allowance:
 * under thousands of registrations a second, the tasks that register often would otherwise take the window's
 * stacks within its first moments, window after window, and a task that registers every 20 ms went up to
 * 0.38 s of a 3 s recording without a stack (tokio fixture, ~290 tasks), its waits under its root alone. At
 * the start, when no task has a stack, such a task still waits its turn behind those that register often
 * (up to 0.42 s of 3 s with the allowance). */
static void emit_budget(struct emitter *e, const struct wait_filter_spec *spec)
{
    /* r8 = the counters */
    emit(e, BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -20, 0);
    emit_map_lookup(e, spec->counters_fd, -20);
    size_t no_counters = emit_jump(e, BPF_JEQ, BPF_REG_0, 0);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_8, BPF_REG_0, 0, 0);
    /* the rate caps: a new window when the last began window_ns ago */
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_8, offsetof(struct wait_filter_counters, window_start), 0);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_9, 0, 0);
    emit(e, BPF_ALU64 | BPF_SUB | BPF_X, BPF_REG_2, BPF_REG_1, 0, 0);
    size_t same_window = emit_jump(e, BPF_JLT, BPF_REG_2, (int32_t)spec->window_ns);
    emit(e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_8, BPF_REG_9, offsetof(struct wait_filter_counters, window_start), 0);
    emit(e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_8, 0, offsetof(struct wait_filter_counters, in_window), 0);
    emit(e, BPF_ST | BPF_MEM | BPF_DW, BPF_REG_8, 0, offsetof(struct wait_filter_counters, first_in_window), 0);
    land(e, same_window);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_8, offsetof(struct wait_filter_counters, in_window), 0);
    size_t within_cap = emit_jump(e, BPF_JLT, BPF_REG_1, (int32_t)spec->max_per_window);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_8, offsetof(struct wait_filter_counters, first_in_window), 0);
    size_t over_budget = emit_jump(e, BPF_JGE, BPF_REG_1, (int32_t)spec->max_first_per_window);
    land(e, within_cap);
    /* the task's last capture (map key at fp-8); r7 = it, or 0 for a task with no stack yet */
    emit(e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_7, -8, 0);
    emit_map_lookup(e, spec->tasks_fd, -8);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
    size_t unseen = emit_jump(e, BPF_JEQ, BPF_REG_7, 0);
    /* a task with a stack: within the window's cap, when its caller changed or its stack is old */
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_8, offsetof(struct wait_filter_counters, in_window), 0);
    size_t seen_over_cap = emit_jump(e, BPF_JGE, BPF_REG_1, (int32_t)spec->max_per_window);
    emit_read_caller(e);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_7, offsetof(struct wait_filter_task, last_return), 0);
    size_t other_caller = emit(e, BPF_JMP | BPF_JNE | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_7, offsetof(struct wait_filter_task, last_ns), 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, (int32_t)spec->interval_ns);
    size_t recent = emit(e, BPF_JMP | BPF_JGT | BPF_X, BPF_REG_1, BPF_REG_9, 0, 0);
    size_t old_stack = emit_jump(e, BPF_JA, 0, 0);
    /* a task with no stack: within the window's cap, else from the first stacks' allowance (checked above) */
    land(e, unseen);
    emit_read_caller(e);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_8, offsetof(struct wait_filter_counters, in_window), 0);
    size_t first_allowance = emit_jump(e, BPF_JGE, BPF_REG_1, (int32_t)spec->max_per_window);
    land(e, old_stack);
    land(e, other_caller);
    emit_count(e, BPF_REG_8, offsetof(struct wait_filter_counters, in_window));
    size_t counted = emit_jump(e, BPF_JA, 0, 0);
    land(e, first_allowance);
    emit_count(e, BPF_REG_8, offsetof(struct wait_filter_counters, first_in_window));
    land(e, counted);
    /* taken: remember (now, caller) for the task */
    emit(e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_9, -40 + (int16_t)offsetof(struct wait_filter_task, last_ns), 0);
    emit(e, BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_6, -40 + (int16_t)offsetof(struct wait_filter_task, last_return),
         0);
    emit_ld64(e, BPF_REG_1, BPF_PSEUDO_MAP_FD, (uint32_t)spec->tasks_fd);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0);
    emit(e, BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -40);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, BPF_ANY);
    emit_call(e, BPF_FUNC_map_update_elem);
    emit_count(e, BPF_REG_8, offsetof(struct wait_filter_counters, taken));
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
    emit(e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    land(e, recent);
    land(e, seen_over_cap);
    land(e, over_budget);
    emit_count(e, BPF_REG_8, offsetof(struct wait_filter_counters, skipped));
    land(e, no_counters);
    emit(e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
    emit(e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static bool spec_fits(const struct wait_filter_spec *spec)
{
    return spec->interval_ns <= INT32_MAX && spec->window_ns <= INT32_MAX && spec->max_per_window <= INT32_MAX &&
           spec->max_first_per_window <= INT32_MAX;
}

int wait_filter_program(const struct wait_filter_spec *spec, struct bpf_insn *out, size_t max)
{
    struct emitter e = { out, 0, max, false };
    if (!spec_fits(spec))
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
    emit(&e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_7, BPF_REG_6, (int16_t)bpf_marker_pt_regs_offset(PERF_REG_X86_DI), 0);
    emit_call(&e, BPF_FUNC_ktime_get_ns);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_9, BPF_REG_0, 0, 0);
    emit_budget(&e, spec);
    land(&e, other_process);
    if (other_cpu != SIZE_MAX)
        land(&e, other_cpu);
    emit(&e, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
    emit(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return e.full ? -1 : (int)e.n;
}

/* After the marker program's slot write: r7 = the task (arg0, in r8), r9 = the slot's time; then the budget. */
static void emit_budget_after_slot(struct emitter *e, const void *spec)
{
    emit(e, BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_8, 0, 0);
    emit(e, BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_9, BPF_REG_9, offsetof(struct bpf_slot, time_ns), 0);
    emit_budget(e, spec);
}

int wait_filter_slot_program(const struct wait_filter_spec *spec, const struct bpf_marker_program_spec *slots,
                             struct bpf_insn *out, size_t max)
{
    struct emitter e = { out, 0, max, false };
    if (!spec_fits(spec) || spec->cpu != WAIT_FILTER_ANY_CPU || !slots->arg0 || slots->arg0->kind != USDT_ARG_REG ||
        slots->arg0->reg != PERF_REG_X86_DI || slots->arg0->size != 8 || slots->arg0->reg_bytes != 8 ||
        slots->arg0->reg_shift != 0)
        return -1;
    if (bpf_marker_emit(&e, slots, emit_budget_after_slot, spec) != 0)
        return -1;
    return e.full ? -1 : (int)e.n;
}
