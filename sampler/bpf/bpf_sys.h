/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_sys.h: the few bpf(2) commands taskspy uses (no libbpf: raw system calls, as for perf_event_open):
 * create a map, load a program run at uprobes or at perf samples, link it to a uprobe. Each returns what
 * bpf(2) returns (an fd, 0) or -1 with errno. */
#ifndef TASKSPY_BPF_SYS_H
#define TASKSPY_BPF_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/bpf.h>

int bpf_sys_map_create(enum bpf_map_type type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
                       uint32_t flags);
/* Set the value at key of a map (BPF_ANY). */
int bpf_sys_map_update(int map_fd, const void *key, const void *value);
/* A BPF_PROG_TYPE_KPROBE program: for perf's kprobe and uprobe events (uprobe_multi false), or for a
 * uprobe_multi link (kernel 6.6+). The verifier's reasons, when it refuses, go into log (may be NULL). */
int bpf_sys_prog_load_probe(const struct bpf_insn *insns, size_t n, bool uprobe_multi, char *log, size_t logsz);
/* A BPF_PROG_TYPE_PERF_EVENT program, run at each sample of a perf event (PERF_EVENT_IOC_SET_BPF). */
int bpf_sys_prog_load_perf_event(const struct bpf_insn *insns, size_t n, char *log, size_t logsz);
/* Why a program was refused, for a message: "BPF program refused: STRERROR(err_no): LAST VERIFIER LINE" into
 * out (log: the verifier's log from a failed load, trimmed in place). */
void bpf_sys_refusal(char *log, int err_no, char *out, size_t len);
/* A uprobe_multi link running prog at one file offset of path (a uretprobe with retprobe), with the
 * semaphore at ref_ctr_offset raised (0: none), only in process pid. Closing the fd removes the probe. */
int bpf_sys_uprobe_link(int prog_fd, const char *path, uint64_t offset, uint64_t ref_ctr_offset, bool retprobe,
                        pid_t pid);

#endif
