/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_ring.h: a BPF ring buffer map (BPF_MAP_TYPE_RINGBUF) read from user space: one writable consumer
 * page, then the producer page and the data area mapped twice in a row (so a record that wraps is still
 * contiguous). Records are walked in the order they were reserved, up to the first one still being
 * written; discarded ones are skipped. */
#ifndef TASKSPY_BPF_RING_H
#define TASKSPY_BPF_RING_H

#include <stddef.h>
#include <stdint.h>

struct bpf_ring {
    int map_fd;                        /* -1 for memory the caller owns (tests) */
    size_t size;                       /* data area, a power of two multiple of the page size */
    uint64_t *consumer_pos;
    const uint64_t *producer_pos;
    const uint8_t *data;
    void *consumer_map, *producer_map; /* the mappings (NULL for caller memory) */
    size_t producer_map_len;
};

/* Create a ring of size bytes (a power of two, at least a page) and map it. Returns 0, or -1 with errno. */
int bpf_ring_create(struct bpf_ring *r, size_t size);
/* Use memory the caller owns: data must hold 2 * size bytes whose second half mirrors the first (tests). */
void bpf_ring_wrap(struct bpf_ring *r, uint64_t *consumer_pos, const uint64_t *producer_pos, const uint8_t *data,
                   size_t size);
/* Bytes written and not consumed yet. */
size_t bpf_ring_pending(const struct bpf_ring *r);
typedef void (*bpf_ring_record_fn)(void *ctx, const void *data, uint32_t len);
/* Hand every committed record to fn in order, release their space, and return how many were handed. */
size_t bpf_ring_consume(struct bpf_ring *r, bpf_ring_record_fn fn, void *ctx);
void bpf_ring_destroy(struct bpf_ring *r);

#endif
