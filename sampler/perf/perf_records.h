/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perf_records.h: decoding the perf_event records taskspy asks for (PERF_RECORD_SAMPLE with the fields of
 * its sample_type, MMAP2, COMM, FORK/EXIT, LOST) from raw ring-buffer bytes. Pure functions, bounds-checked:
 * a record that does not hold what its header promises is rejected, not read past. */
#ifndef TASKSPY_PERF_RECORDS_H
#define TASKSPY_PERF_RECORDS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an event's samples carry (the part of perf_event_attr that shapes the record). */
struct sample_layout {
    uint64_t sample_type;
    uint64_t regs_user_mask;
};

struct decoded_sample {
    uint64_t id;               /* PERF_SAMPLE_IDENTIFIER */
    uint64_t ip;
    uint32_t pid, tid;
    uint64_t time;
    const uint64_t *callchain; /* raw, with PERF_CONTEXT_* markers */
    uint64_t callchain_nr;
    const uint8_t *raw;        /* PERF_SAMPLE_RAW payload */
    uint32_t raw_size;
    uint64_t regs_abi;         /* PERF_SAMPLE_REGS_ABI_*; 0 = no user regs (kernel thread) */
    const uint64_t *regs;      /* packed: one u64 per bit set in regs_user_mask, in bit order */
    uint32_t n_regs;
    const uint8_t *stack;      /* PERF_SAMPLE_STACK_USER */
    uint64_t stack_size;       /* valid bytes (dyn_size) */
};

/* Decode a PERF_RECORD_SAMPLE. Returns 0 or -1 when the record is malformed. */
int perf_decode_sample(const struct perf_event_header *rec, const struct sample_layout *layout,
                       struct decoded_sample *out);
/* Expand packed regs into an array indexed by PERF_REG_X86_* (n entries, others zero). */
void perf_unpack_regs(const struct decoded_sample *s, uint64_t mask, uint64_t *regs, size_t n);
/* Split a callchain into kernel and user parts (markers removed). Returns false if malformed. */
bool perf_split_callchain(const uint64_t *chain, uint64_t nr, uint64_t *kernel, size_t *n_kernel,
                          uint64_t *user, size_t *n_user, size_t max);
/* The sample_id trailer's PERF_SAMPLE_IDENTIFIER (last u64 of a non-sample record with sample_id_all). */
bool perf_record_trailer_id(const struct perf_event_header *rec, uint64_t *id);

struct decoded_mmap2 {
    uint32_t pid, tid;
    uint64_t addr, len, pgoff;
    uint32_t prot;
    const char *filename;      /* NUL-terminated inside the record */
};
int perf_decode_mmap2(const struct perf_event_header *rec, struct decoded_mmap2 *out);

struct decoded_comm {
    uint32_t pid, tid;
    const char *comm;
    bool exec;
};
int perf_decode_comm(const struct perf_event_header *rec, struct decoded_comm *out);

struct decoded_task {          /* PERF_RECORD_FORK / PERF_RECORD_EXIT */
    uint32_t pid, ppid, tid, ptid;
    uint64_t time;
};
int perf_decode_task(const struct perf_event_header *rec, struct decoded_task *out);

/* PERF_RECORD_LOST: records the ring buffer had no room for (id, lost). */
int perf_decode_lost(const struct perf_event_header *rec, uint64_t *lost);
/* PERF_RECORD_LOST_SAMPLES: samples the event dropped before they reached the buffer (lost). */
int perf_decode_lost_samples(const struct perf_event_header *rec, uint64_t *lost);

#endif
