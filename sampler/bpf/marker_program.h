/* SPDX-License-Identifier: GPL-3.0-or-later */
/* marker_program.h: the BPF program taskspy runs at one marker location instead of having the kernel
 * write a perf sample per hit. It reads arg0 from the probe's registers (or from user memory at a register
 * plus displacement) and writes one slot (thread, location, time, arg0, address) in the slot region of the
 * CPU it runs on (at a function's entry, also the return address at %rsp, or only once a flag says so): an
 * atomic add claims the slot, the slot's sequence word marks it being written and then committed (see
 * sampler/bpf/bpf_slots.h). No lock, no ring buffer helper: per hit this costs the target what
 * perf stat's counting does. Every eighth of a region it rings a doorbell (a one-record BPF ring buffer
 * write that wakes the reader). Hits in other processes (system-wide probes) are ignored. */
#ifndef TASKSPY_BPF_MARKER_PROGRAM_H
#define TASKSPY_BPF_MARKER_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "sampler/bpf/bpf_slots.h"
#include "sampler/probes/usdt_args.h"

struct bpf_marker_program_spec {
    const struct usdt_arg *arg0;       /* NULL: no argument */
    uint32_t location;
    uint32_t tgid;                     /* the target process */
    int slots_fd;                      /* BPF_MAP_TYPE_ARRAY: one slot region per CPU (sampler/bpf/bpf_slots.h) */
    unsigned slot_bits;                /* log2 of the slots per region */
    int doorbell_fd;                   /* BPF_MAP_TYPE_RINGBUF written every eighth of a region */
    /* At a function's entry: also store the u64 at %rsp (the caller's return address) in the slot's ret_addr
     * and %rsp in its ret_slot (else both are 0): always, or while the u32 at return_flag_fd's value (a
     * one-entry BPF_MAP_TYPE_ARRAY, read in place) is not 0. */
    enum bpf_return_read { BPF_RETURN_NEVER, BPF_RETURN_ALWAYS, BPF_RETURN_WHEN_FLAGGED } return_read;
    int return_flag_fd;
};

#define BPF_MARKER_PROGRAM_MAX 104

/* Write the program into out (max instructions). Returns the number of instructions, or -1 when the
 * argument is out of a program's reach (a segment register, a displacement wider than 32 bits). */
int bpf_marker_program(const struct bpf_marker_program_spec *spec, struct bpf_insn *out, size_t max);
/* For sampler/bpf's other programs: the same program into e, with then (when not NULL) emitting more code
 * where the slot is written and committed, its own exits included (registers then: r6 the probe's pt_regs,
 * r8 arg0, r9 the slot, whose time_ns is the hit's time); hits in other processes exit with 0 before it.
 * Returns 0, or -1 (argument out of reach, no room). */
struct emitter;
int bpf_marker_emit(struct emitter *e, const struct bpf_marker_program_spec *spec,
                    void (*then)(struct emitter *, const void *), const void *then_ctx);
/* Offset of a PERF_REG_X86_* register in the x86-64 struct pt_regs a probe program gets, or -1. */
int bpf_marker_pt_regs_offset(int perf_reg);

#endif
