/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ring_buffer.c: mapping a perf_event ring buffer and walking its records. The kernel publishes data_head
 * after writing records (we read it with acquire ordering) and we publish data_tail after reading them (with
 * release ordering), as the perf_event_open(2) man page describes for the mmap layout. */
#include "sampler/perf/ring_buffer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define SCRATCH_SIZE 65536u

int ring_buffer_map(struct ring_buffer *rb, int fd, size_t data_pages)
{
    memset(rb, 0, sizeof(*rb));
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || data_pages == 0 || (data_pages & (data_pages - 1)) != 0) {
        errno = EINVAL;
        return -1;
    }
    size_t size = (data_pages + 1) * (size_t)page;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    rb->scratch = malloc(SCRATCH_SIZE);
    if (!rb->scratch) {
        munmap(p, size);
        errno = ENOMEM;
        return -1;
    }
    rb->meta = p;
    rb->data = (uint8_t *)p + page;
    rb->data_size = data_pages * (size_t)page;
    rb->map_size = size;
    return 0;
}

int ring_buffer_map_fitting(struct ring_buffer *rb, int fd, size_t data_pages)
{
    int rc;
    while ((rc = ring_buffer_map(rb, fd, data_pages)) != 0 && (errno == EPERM || errno == ENOMEM) && data_pages > 8)
        data_pages /= 2;
    return rc;
}

/* Does the effective capability set hold CAP_IPC_LOCK (no locked-memory limit for perf buffers)? */
static bool can_lock_without_limit(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return false;
    char line[256];
    unsigned long long caps = 0;
    bool found = false;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "CapEff: %llx", &caps) == 1;
    fclose(f);
    return found && (caps >> 14 & 1);   /* CAP_IPC_LOCK */
}

size_t ring_buffer_lock_budget(void)
{
    if (can_lock_without_limit())
        return SIZE_MAX;
    long page = sysconf(_SC_PAGESIZE), cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct rlimit rl;
    if (page <= 0 || cpus <= 0 || getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return SIZE_MAX;
    unsigned long long perf_kb = 0;
    FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r");
    if (f) {
        if (fscanf(f, "%llu", &perf_kb) != 1)
            perf_kb = 0;
        fclose(f);
    }
    return (size_t)(perf_kb * 1024 / (unsigned long long)page) * (size_t)cpus + (size_t)rl.rlim_cur / (size_t)page;
}

size_t ring_buffer_pages_within(size_t wanted, size_t n_buffers, size_t budget)
{
    size_t pages = wanted;
    while (pages > 8 && n_buffers > 0 && (pages + 1) > budget / n_buffers)
        pages /= 2;
    return pages;
}

static size_t round_up_pow2(size_t v)
{
    size_t p = 1;
    while (p < v && p <= SIZE_MAX / 2)
        p *= 2;
    return p;
}

size_t ring_buffer_pages_for(unsigned rate, size_t record_bytes, size_t n_cpus, size_t page_size)
{
    if (page_size == 0)
        page_size = 4096;
    if (n_cpus == 0)
        n_cpus = 1;
    size_t min = round_up_pow2((4 * record_bytes + page_size - 1) / page_size);
    if (min < 32)
        min = 32;
    uint64_t want_bytes = (uint64_t)rate * record_bytes * RING_BUFFER_SECONDS_NUM / RING_BUFFER_SECONDS_DEN;
    size_t pages = round_up_pow2((size_t)((want_bytes + page_size - 1) / page_size));
    while (pages > RING_BUFFER_MAX_PAGES || (uint64_t)pages * page_size * n_cpus > RING_BUFFER_MAX_TOTAL_BYTES)
        pages /= 2;
    return pages < min ? min : pages;
}

int ring_buffer_wrap(struct ring_buffer *rb, struct perf_event_mmap_page *meta, uint8_t *data, size_t data_size)
{
    memset(rb, 0, sizeof(*rb));
    if (data_size == 0 || (data_size & (data_size - 1)) != 0) {
        errno = EINVAL;
        return -1;
    }
    rb->scratch = malloc(SCRATCH_SIZE);
    if (!rb->scratch)
        return -1;
    rb->meta = meta;
    rb->data = data;
    rb->data_size = data_size;
    return 0;
}

void ring_buffer_unmap(struct ring_buffer *rb)
{
    if (rb->map_size)
        munmap(rb->meta, rb->map_size);
    free(rb->scratch);
    memset(rb, 0, sizeof(*rb));
}

size_t ring_buffer_room(const struct ring_buffer *rb)
{
    if (!rb->meta)
        return 0;
    uint64_t head = __atomic_load_n(&rb->meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t unread = head - rb->meta->data_tail;
    return unread < rb->data_size ? rb->data_size - (size_t)unread : 0;
}

void ring_buffer_cursor_begin(struct ring_buffer *rb, struct ring_buffer_cursor *c)
{
    *c = (struct ring_buffer_cursor){ 0 };
    if (!rb->meta)
        return;
    c->head = __atomic_load_n(&rb->meta->data_head, __ATOMIC_ACQUIRE);
    c->tail = rb->meta->data_tail;
}

const struct perf_event_header *ring_buffer_cursor_record(struct ring_buffer *rb, struct ring_buffer_cursor *c)
{
    if (!rb->meta || c->corrupt || c->tail >= c->head)
        return NULL;
    uint64_t avail = c->head - c->tail, mask = rb->data_size - 1;
    if (avail < sizeof(struct perf_event_header) || avail > rb->data_size) {
        c->corrupt = true;
        return NULL;
    }
    size_t off = (size_t)(c->tail & mask);
    struct perf_event_header hdr;
    if (off + sizeof(hdr) <= rb->data_size) {
        memcpy(&hdr, rb->data + off, sizeof(hdr));
    } else {
        /* The header itself wraps (records are 8-byte aligned, so only with a corrupt buffer). */
        for (size_t i = 0; i < sizeof(hdr); i++)
            ((uint8_t *)&hdr)[i] = rb->data[(off + i) & mask];
    }
    /* The kernel writes 8-byte aligned records; anything else is corruption (and would misalign the next
     * header). A u16 size never exceeds the 64 KiB scratch. */
    if (hdr.size < sizeof(hdr) || hdr.size > avail || hdr.size % 8 != 0) {
        c->corrupt = true;
        return NULL;
    }
    if (off + hdr.size <= rb->data_size)
        return (const struct perf_event_header *)(rb->data + off);
    size_t first = rb->data_size - off;
    memcpy(rb->scratch, rb->data + off, first);
    memcpy(rb->scratch + first, rb->data, hdr.size - first);
    return (const struct perf_event_header *)rb->scratch;
}

void ring_buffer_cursor_next(struct ring_buffer_cursor *c, const struct perf_event_header *rec)
{
    c->tail += rec->size;
    c->count++;
}

long ring_buffer_cursor_end(struct ring_buffer *rb, struct ring_buffer_cursor *c)
{
    if (!rb->meta)
        return 0;
    if (c->corrupt)
        c->tail = c->head;   /* skip what cannot be parsed rather than spin on it */
    __atomic_store_n(&rb->meta->data_tail, c->tail, __ATOMIC_RELEASE);
    return c->corrupt ? -1 : c->count;
}

static long walk(struct ring_buffer *rb, ring_buffer_record_fn fn, void *ctx, bool consume)
{
    struct ring_buffer_cursor c;
    ring_buffer_cursor_begin(rb, &c);
    const struct perf_event_header *rec;
    while ((rec = ring_buffer_cursor_record(rb, &c))) {
        enum ring_buffer_next next = fn(ctx, rec);
        if (next == RING_BUFFER_KEEP)
            break;
        ring_buffer_cursor_next(&c, rec);
        if (next == RING_BUFFER_STOP)
            break;
    }
    if (consume)
        return ring_buffer_cursor_end(rb, &c);
    return c.corrupt ? -1 : c.count;
}

long ring_buffer_drain(struct ring_buffer *rb, ring_buffer_record_fn fn, void *ctx)
{
    return walk(rb, fn, ctx, true);
}

long ring_buffer_peek(struct ring_buffer *rb, ring_buffer_record_fn fn, void *ctx)
{
    return walk(rb, fn, ctx, false);
}
