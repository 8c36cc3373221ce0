/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_slots.c: creating, mapping and reading the per-CPU slot regions of the marker programs (protocol in
 * bpf_slots.h). */
#include "sampler/bpf/bpf_slots.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sampler/bpf/bpf_sys.h"

_Static_assert(sizeof(struct bpf_slot) == 1u << BPF_SLOT_SHIFT, "slot size");
_Static_assert(sizeof(struct bpf_slots_header) == 64, "header size");

static size_t region_bytes(unsigned bits)
{
    return sizeof(struct bpf_slots_header) + ((size_t)1 << (bits + BPF_SLOT_SHIFT));
}

int bpf_slots_create(struct bpf_slots *s, size_t n_regions, unsigned bits)
{
    *s = (struct bpf_slots){ .map_fd = -1 };
    if (n_regions == 0 || bits < BPF_SLOTS_MIN_BITS || bits > BPF_SLOTS_MAX_BITS) {
        errno = EINVAL;
        return -1;
    }
    size_t bytes = region_bytes(bits);
    int fd = bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4, (uint32_t)bytes, (uint32_t)n_regions, BPF_F_MMAPABLE);
    if (fd < 0)
        return -1;
    long page = sysconf(_SC_PAGESIZE);
    size_t len = n_regions * bytes;
    if (page > 0)
        len = (len + (size_t)page - 1) & ~((size_t)page - 1);
    void *base = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    uint64_t *tail = calloc(n_regions, sizeof(*tail));
    if (base == MAP_FAILED || !tail) {
        int saved = base == MAP_FAILED ? errno : ENOMEM;
        if (base != MAP_FAILED)
            munmap(base, len);
        free(tail);
        close(fd);
        errno = saved;
        return -1;
    }
    *s = (struct bpf_slots){ .map_fd = fd, .n_regions = n_regions, .bits = bits, .region_bytes = bytes,
                             .base = base, .map_len = len, .tail = tail };
    return 0;
}

void bpf_slots_wrap(struct bpf_slots *s, const uint8_t *base, size_t n_regions, unsigned bits, uint64_t *tail)
{
    *s = (struct bpf_slots){ .map_fd = -1, .n_regions = n_regions, .bits = bits, .region_bytes = region_bytes(bits),
                             .base = base, .tail = tail };
}

/* Copy a slot another CPU may be writing (field by field, no torn 8-byte value). */
static void copy_slot(const struct bpf_slot *from, struct bpf_slot *to)
{
    to->tid = __atomic_load_n(&from->tid, __ATOMIC_RELAXED);
    to->location = __atomic_load_n(&from->location, __ATOMIC_RELAXED);
    to->time_ns = __atomic_load_n(&from->time_ns, __ATOMIC_RELAXED);
    to->arg0 = __atomic_load_n(&from->arg0, __ATOMIC_RELAXED);
    to->ip = __atomic_load_n(&from->ip, __ATOMIC_RELAXED);
    to->ret_addr = __atomic_load_n(&from->ret_addr, __ATOMIC_RELAXED);
    to->ret_slot = __atomic_load_n(&from->ret_slot, __ATOMIC_RELAXED);
}

size_t bpf_slots_read(struct bpf_slots *s, bpf_slots_fn fn, void *ctx, struct bpf_slots_loss *loss)
{
    size_t n = 0;
    uint64_t slots = (uint64_t)1 << s->bits, mask = slots - 1;
    *loss = (struct bpf_slots_loss){ 0 };
    for (size_t r = 0; r < s->n_regions; r++) {
        const uint8_t *region = s->base + r * s->region_bytes;
        const struct bpf_slots_header *h = (const struct bpf_slots_header *)region;
        const struct bpf_slot *slot0 = (const struct bpf_slot *)(region + sizeof(*h));
        uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE), t = s->tail[r];
        if (head - t > loss->max_backlog)
            loss->max_backlog = head - t;
        if (head - t > slots) {                 /* a whole region behind: those are overwritten */
            loss->lapped += head - t - slots;
            t = head - slots;
        }
        while (t < head) {
            const struct bpf_slot *slot = &slot0[t & mask];
            uint32_t want = (uint32_t)(t + 1);
            uint32_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
            if (seq != want) {
                bool overwritten = seq != 0 && (int32_t)(seq - want) > 0;
                if (overwritten || head - t > slots / 2) {
                    if (overwritten)            /* a later claim's */
                        loss->lapped++;
                    else                        /* a writer that never finished */
                        loss->unfinished++;
                    t++;
                    continue;
                }
                break;                          /* still being written: read from here next time */
            }
            struct bpf_slot copy;
            copy_slot(slot, &copy);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != want) {
                loss->torn++;                   /* overwritten while copied */
                t++;
                continue;
            }
            copy.seq = want;
            fn(ctx, &copy);
            n++;
            t++;
        }
        s->tail[r] = t;
    }
    return n;
}

void bpf_slots_skip_overrun(struct bpf_slots *s)
{
    uint64_t slots = (uint64_t)1 << s->bits;
    for (size_t r = 0; r < s->n_regions; r++) {
        const struct bpf_slots_header *h = (const struct bpf_slots_header *)(s->base + r * s->region_bytes);
        uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
        if (head - s->tail[r] > slots)
            s->tail[r] = head - slots;
    }
}

void bpf_slots_destroy(struct bpf_slots *s)
{
    if (s->map_len)
        munmap((void *)s->base, s->map_len);
    if (s->map_fd >= 0) {
        close(s->map_fd);
        free(s->tail);
    }
    *s = (struct bpf_slots){ .map_fd = -1 };
}
