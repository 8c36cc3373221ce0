/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_route.h: marker hits through BPF instead of perf samples. Every marker location runs a small
 * program (sampler/bpf/marker_program.h) that writes a slot in its CPU's region (sampler/bpf/bpf_slots.h), and
 * the kernel writes no perf sample. The target pays about what perf stat's counting of the probe costs,
 * and the reader is woken a few times per region. Needs CAP_BPF with CAP_PERFMON, or CAP_SYS_ADMIN;
 * marker_attach.c falls back to per-CPU perf samples without. */
#ifndef TASKSPY_MARKER_BPF_H
#define TASKSPY_MARKER_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/bpf/marker_program.h"
#include "sampler/bpf/bpf_slots.h"
#include "sampler/probes/usdt_args.h"

struct marker_bpf;

/* Slot regions (one per CPU, 2 MiB each: 2^BPF_SLOTS_MAX_BITS slots; slot_bits, when not 0, gives fewer,
 * for tests that overrun them) for hits in process tgid. Returns 0, or -1 with a reason in err (errno kept:
 * EPERM when BPF is not permitted). */
int marker_bpf_open(struct marker_bpf **out, pid_t tgid, unsigned slot_bits, char *err, size_t errlen);
/* Run the location's program (tagging its records with location, reading arg0; NULL: none; reading the
 * return address at %rsp as return_read says, for a function's entry) at a uprobe of
 * its own: a uprobe_multi link at offset of path (a uretprobe with retprobe; semaphore at ref_ctr_offset,
 * 0 none) filtered to the process by the kernel. The cheapest way per hit (no perf event), kernel 6.6+.
 * Returns the link's fd, which the caller closes like an event's (closing it removes the probe, waiting
 * for the kernel's unregistration), or -1 with a reason in err. */
int marker_bpf_attach_uprobe(struct marker_bpf *b, const char *path, uint64_t offset, uint64_t ref_ctr_offset,
                             bool retprobe, uint32_t location, const struct usdt_arg *arg0,
                             enum bpf_return_read return_read, char *err, size_t errlen);
/* The location's program spec (as the two above load it), for a program of another consumer that writes the
 * location's slots itself (the wait profile's registration stacks: sampler/bpf/wait_filter_program.h). */
void marker_bpf_program_spec(const struct marker_bpf *b, uint32_t location, const struct usdt_arg *arg0,
                             enum bpf_return_read return_read, struct bpf_marker_program_spec *spec);
/* The same at the uprobe event event_fd (any CPU's: the program runs on every hit of the probe). */
int marker_bpf_attach_event(struct marker_bpf *b, int event_fd, uint32_t location, const struct usdt_arg *arg0,
                            enum bpf_return_read return_read, char *err, size_t errlen);
/* From now on the programs of BPF_RETURN_WHEN_FLAGGED read the return address too (thread-safe: one map
 * update). Returns 0, or -1 (errno). */
int marker_bpf_read_returns(struct marker_bpf *b);
/* An fd that polls readable when a region has filled by an eighth since (each read drains it). */
int marker_bpf_wake_fd(const struct marker_bpf *b);
/* Slots in one region (hits a CPU can hold before the reader must have read them). */
uint64_t marker_bpf_region_slots(const struct marker_bpf *b);
/* Hand every slot written so far to fn; *loss gets the hits lost since the last read, by cause (bpf_slots.h).
 * Returns the number of slots. */
size_t marker_bpf_read(struct marker_bpf *b, bpf_slots_fn fn, void *ctx, struct bpf_slots_loss *loss);
/* The recording starts: hits that overran a region before it (while the probes were attached one by one, each
 * attach waiting for the kernel) are not lost records of the recording. */
void marker_bpf_skip_overrun(struct marker_bpf *b);
void marker_bpf_close(struct marker_bpf *b);

#endif
