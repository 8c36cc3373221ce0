/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sample_program.h: the BPF program taskspy runs on each sample of its sampling perf events
 * (BPF_PROG_TYPE_PERF_EVENT, attached with PERF_EVENT_IOC_SET_BPF) when the target has a TLS task marker.
 * It reads the sampled thread's fs_base from its task_struct (current->thread.fsbase), then the marker at
 * fs_base + tp_offset from user memory, and writes one record (thread, the sample's own time, the value)
 * into a BPF ring buffer; it returns 1 so the kernel still writes the perf sample. The sample's time is the
 * one in the kernel's perf_sample_data (already filled when the program runs), so the record and the
 * sample join on exact (tid, time). Kernel offsets come from BTF (sampler/bpf/btf_offsets.h). */
#ifndef TASKSPY_BPF_SAMPLE_PROGRAM_H
#define TASKSPY_BPF_SAMPLE_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

/* One record in the ring, per sample of the target. */
struct bpf_sample_record {
    uint32_t tid;
    uint32_t flags;                    /* BPF_SAMPLE_* */
    uint64_t time_ns;                  /* the perf sample's time (perf_sample_data.time) */
    uint64_t task;                     /* the marker's value: 0 outside a poll */
    uint64_t ktime_ns;                 /* bpf_ktime_get_ns() when the program ran: a check on time_ns */
};

#define BPF_SAMPLE_FSBASE_UNREADABLE 1u  /* task_struct could not be read: task not known */
#define BPF_SAMPLE_TLS_UNREADABLE 2u     /* the marker's page could not be read: task not known */
#define BPF_SAMPLE_PLACE_UNKNOWN 4u      /* the place map holds no offset yet: task not known */

struct bpf_sample_program_spec {
    uint32_t tgid;                     /* the target process: other processes' samples are not recorded */
    int ring_fd;                       /* BPF_MAP_TYPE_RINGBUF */
    int32_t tp_offset;                 /* the marker at fs_base + tp_offset */
    /* Or, when place_map_fd >= 0 (a marker in a shared library whose place is learnt once the target has
     * loaded it), the offset is read at each sample from that BPF_MAP_TYPE_ARRAY's entry 0 (an int64; 0:
     * not known yet, and the record says so). No tag then. */
    int place_map_fd;
    /* A marker that is an Option with a discriminant of its own (tokio's current_task_id): the value is
     * read only when the discriminant (tag_size bytes at fs_base + tag_tp_offset) is some_value, else 0. */
    bool has_tag;
    int32_t tag_tp_offset;
    uint32_t tag_size;                 /* 1 to 8 */
    uint32_t some_value;
    uint16_t off_ctx_data;             /* offsetof(struct bpf_perf_event_data_kern, data) */
    uint16_t off_data_time;            /* offsetof(struct perf_sample_data, time) */
    uint16_t off_task_fsbase;          /* offsetof(struct task_struct, thread.fsbase) */
};

#define BPF_SAMPLE_PROGRAM_MAX 128
#define BPF_SAMPLE_WRITE_RETRIES 3          /* more tries when the ring write fails */

/* Write the program into out (max instructions). Returns the number of instructions, or -1 (no room, or a
 * tag size out of range). */
int bpf_sample_program(const struct bpf_sample_program_spec *spec, struct bpf_insn *out, size_t max);

#endif
