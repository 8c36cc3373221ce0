/* bpf_marker_program.h: the BPF program taskspy runs at one marker location instead of having the kernel
 * write a perf sample per hit. It reads arg0 from the probe's registers (or from user memory at a register
 * plus displacement), and puts one fixed-size record (thread, location, time, arg0, address) in the BPF ring
 * buffer of the CPU it runs on (one ring per CPU: a ring shared by CPUs costs every hit a contended lock and
 * cache lines taken from the other CPUs), waking the reader only when a quarter of the ring waits. Hits in
 * other processes (system-wide probes) are ignored; a hit the ring has no room for is counted in a
 * one-element array. */
#ifndef TASKSPY_BPF_MARKER_PROGRAM_H
#define TASKSPY_BPF_MARKER_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "sampler/usdt_args.h"

/* What a program writes per hit; time on CLOCK_MONOTONIC, as the sampling events' (use_clockid). */
struct bpf_marker_record {
    uint32_t tid;
    uint32_t location;                 /* the spec's location: which marker fired */
    uint64_t time_ns;
    uint64_t arg0;                     /* 0 when the marker has no argument or it could not be read */
    uint64_t ip;                       /* the probe's address in the target */
};

struct bpf_marker_program_spec {
    const struct usdt_arg *arg0;       /* NULL: no argument */
    uint32_t location;
    uint32_t tgid;                     /* the target process */
    int rings_fd;                      /* BPF_MAP_TYPE_ARRAY_OF_MAPS: CPU number -> its BPF_MAP_TYPE_RINGBUF */
    uint32_t ring_bytes;               /* the size of each ring */
    int lost_fd;                       /* BPF_MAP_TYPE_ARRAY of one uint64_t */
};

#define BPF_MARKER_PROGRAM_MAX 64

/* Write the program into out (max instructions). Returns the number of instructions, or -1 when the
 * argument is out of a program's reach (a segment register, a displacement wider than 32 bits). */
int bpf_marker_program(const struct bpf_marker_program_spec *spec, struct bpf_insn *out, size_t max);
/* Offset of a PERF_REG_X86_* register in the x86-64 struct pt_regs a probe program gets, or -1. */
int bpf_marker_pt_regs_offset(int perf_reg);

#endif
