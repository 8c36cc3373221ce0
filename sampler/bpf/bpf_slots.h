/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_slots.h: per-CPU slot regions in one mmapable BPF array map (one element per CPU), written by the
 * marker programs (sampler/bpf/marker_program.h) and read here without a lock or a system call. A region is
 * a header (head: slots claimed so far, only grows) and 2^bits slots of 64 bytes. A writer claims slot n with
 * an atomic add on head, stores sequence 0, the fields, then sequence (uint32_t)(n + 1). The reader takes
 * slot n when its sequence is n + 1 before and after copying it (a seqlock), counts as lost a slot already
 * overwritten by a later claim (the reader fell a whole region behind), and waits at a slot whose writer
 * has not finished (unless the region has moved half a region past it: then that hit is lost). */
#ifndef TASKSPY_BPF_SLOTS_H
#define TASKSPY_BPF_SLOTS_H

#include <stddef.h>
#include <stdint.h>

struct bpf_slots_header {
    uint64_t head;
    uint8_t unused[56];                /* the slots start on their own cache line */
};

struct bpf_slot {
    uint32_t seq;                      /* claim number + 1 once written, 0 while being written */
    uint32_t tid;
    uint32_t location;                 /* which marker location fired */
    uint32_t unused;
    uint64_t time_ns;                  /* CLOCK_MONOTONIC, as the sampling events' (use_clockid) */
    uint64_t arg0;                     /* 0 when the marker has no argument or it could not be read */
    uint64_t ip;                       /* the probe's address in the target */
    uint64_t ret_addr;                 /* the return address at the probe's %rsp (a function entry's caller),
                                          where the location's program reads it; else 0 */
    uint64_t ret_slot;                 /* ... and where it is: that %rsp (0 when not read) */
    uint8_t unused2[8];
};

#define BPF_SLOT_SHIFT 6               /* log2 sizeof(struct bpf_slot) */
#define BPF_SLOTS_MIN_BITS 4           /* 16 slots: tests force a region overrun with it */
#define BPF_SLOTS_MAX_BITS 15          /* a region must stay under the kernel's 4 MiB array value limit */

struct bpf_slots {
    int map_fd;                        /* -1 for memory the caller owns (tests) */
    size_t n_regions;
    unsigned bits;
    size_t region_bytes;
    const uint8_t *base;               /* region r at base + r * region_bytes */
    size_t map_len;                    /* 0 when not mapped here */
    uint64_t *tail;                    /* per region: the next claim number to read */
};

/* Create the map (n_regions regions of 2^bits slots) and map it. Returns 0, or -1 with errno. */
int bpf_slots_create(struct bpf_slots *s, size_t n_regions, unsigned bits);
/* Read regions the caller owns (tests): base holds n_regions regions of the layout above; tail has one
 * element per region. */
void bpf_slots_wrap(struct bpf_slots *s, const uint8_t *base, size_t n_regions, unsigned bits, uint64_t *tail);
typedef void (*bpf_slots_fn)(void *ctx, const struct bpf_slot *slot);
/* What one read lost, by cause, and how far behind it found the regions. */
struct bpf_slots_loss {
    uint64_t lapped;                   /* overwritten by a later claim: the reader fell a whole region behind */
    uint64_t unfinished;               /* a writer that had not finished when the region moved half past it */
    uint64_t torn;                     /* overwritten while copied */
    uint64_t max_backlog;              /* the most claims not yet read in one region when the read began */
};
/* Hand every finished slot not read yet to fn, region by region, each region in claim order. *loss gets what
 * was lost since the last read (zeroed first). Returns the number handed. */
size_t bpf_slots_read(struct bpf_slots *s, bpf_slots_fn fn, void *ctx, struct bpf_slots_loss *loss);
/* Leave unread the slots of a region that later claims have overwritten (the reader was not reading yet),
 * without counting them lost: the next read starts at the oldest slot still there. */
void bpf_slots_skip_overrun(struct bpf_slots *s);
void bpf_slots_destroy(struct bpf_slots *s);

#endif
