/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bpf_ring.c: creating, mapping and reading a BPF ring buffer map (the consumer side of the kernel's
 * kernel/bpf/ringbuf.c protocol: 8-byte record headers holding the length with a busy and a discard bit,
 * records rounded up to 8 bytes, positions that only grow). */
#include "sampler/bpf/bpf_ring.h"

#include <errno.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sampler/bpf/bpf_sys.h"

int bpf_ring_create(struct bpf_ring *r, size_t size)
{
    *r = (struct bpf_ring){ .map_fd = -1 };
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || size < (size_t)page || (size & (size - 1)) || size > (1u << 30)) {
        errno = EINVAL;
        return -1;
    }
    int fd = bpf_sys_map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, (uint32_t)size, 0);
    if (fd < 0)
        return -1;
    void *cons = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (cons == MAP_FAILED) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    size_t prod_len = (size_t)page + 2 * size;
    void *prod = mmap(NULL, prod_len, PROT_READ, MAP_SHARED, fd, (off_t)page);
    if (prod == MAP_FAILED) {
        int saved = errno;
        munmap(cons, (size_t)page);
        close(fd);
        errno = saved;
        return -1;
    }
    r->map_fd = fd;
    r->size = size;
    r->consumer_map = cons;
    r->producer_map = prod;
    r->producer_map_len = prod_len;
    r->consumer_pos = cons;
    r->producer_pos = prod;
    r->data = (const uint8_t *)prod + page;
    return 0;
}

void bpf_ring_wrap(struct bpf_ring *r, uint64_t *consumer_pos, const uint64_t *producer_pos, const uint8_t *data,
                   size_t size)
{
    *r = (struct bpf_ring){ .map_fd = -1, .size = size, .consumer_pos = consumer_pos, .producer_pos = producer_pos,
                            .data = data };
}

size_t bpf_ring_pending(const struct bpf_ring *r)
{
    return (size_t)(__atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE) -
                    __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED));
}

size_t bpf_ring_consume(struct bpf_ring *r, bpf_ring_record_fn fn, void *ctx)
{
    uint64_t cons = __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED);
    uint64_t prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
    size_t n = 0;
    while (cons < prod) {
        const uint8_t *hdr = r->data + (cons & (r->size - 1));
        uint32_t len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
        if (len & BPF_RINGBUF_BUSY_BIT)
            break;                                   /* still being written: the rest waits for it */
        uint32_t body = len & ~(uint32_t)BPF_RINGBUF_DISCARD_BIT;
        if ((uint64_t)body + BPF_RINGBUF_HDR_SZ > prod - cons)
            break;                                   /* not a record the kernel wrote: stop here */
        if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
            fn(ctx, hdr + BPF_RINGBUF_HDR_SZ, body);
            n++;
        }
        cons += ((uint64_t)body + BPF_RINGBUF_HDR_SZ + 7) & ~(uint64_t)7;
    }
    __atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
    return n;
}

void bpf_ring_destroy(struct bpf_ring *r)
{
    if (r->producer_map)
        munmap(r->producer_map, r->producer_map_len);
    if (r->consumer_map)
        munmap(r->consumer_map, (size_t)sysconf(_SC_PAGESIZE));
    if (r->map_fd >= 0)
        close(r->map_fd);
    *r = (struct bpf_ring){ .map_fd = -1 };
}
