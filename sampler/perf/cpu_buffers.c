/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cpu_buffers.c: the per-CPU ring buffer set of cpu_buffers.h. */
#include "sampler/perf/cpu_buffers.h"

#include <sys/ioctl.h>

#include <linux/perf_event.h>

int cpu_buffers_init(struct cpu_buffers *b, const int *cpus, size_t n, size_t pages)
{
    *b = (struct cpu_buffers){ .pages = pages };
    if (vec_reserve(b, n ? n : 1) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        b->v[b->n++] = (struct cpu_buffer){ .cpu = cpus ? cpus[i] : (int)i, .fd = -1 };
    return 0;
}

int cpu_buffers_route(struct cpu_buffers *b, size_t i, int fd)
{
    struct cpu_buffer *cb = &b->v[i];
    if (cb->fd >= 0)
        return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, cb->fd);
    if (ring_buffer_map_fitting(&cb->rb, fd, b->pages) != 0)
        return -1;
    cb->fd = fd;
    return 0;
}

void cpu_buffers_forget(struct cpu_buffers *b, size_t i, int fd)
{
    struct cpu_buffer *cb = &b->v[i];
    if (cb->fd >= 0 && cb->fd == fd) {
        ring_buffer_unmap(&cb->rb);
        cb->fd = -1;
    }
}

size_t cpu_buffers_mapped(const struct cpu_buffers *b, int *fds, int *cpus, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n && n < max; i++) {
        if (b->v[i].fd < 0)
            continue;
        if (fds)
            fds[n] = b->v[i].fd;
        if (cpus)
            cpus[n] = b->v[i].cpu;
        n++;
    }
    return n;
}

void cpu_buffers_drain(struct cpu_buffers *b, ring_buffer_record_fn fn, void *ctx)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].fd >= 0)
            ring_buffer_drain(&b->v[i].rb, fn, ctx);
}

/* The buffer whose next record is the earliest (the first such on ties), or NULL when all are done. */
static struct cpu_buffer *earliest(struct cpu_buffers *b)
{
    struct cpu_buffer *best = NULL;
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].next && (!best || b->v[i].next_time < best->next_time))
            best = &b->v[i];
    return best;
}

static void take_next(struct cpu_buffer *cb, uint64_t (*time_of)(const struct perf_event_header *))
{
    cb->next = ring_buffer_cursor_record(&cb->rb, &cb->cursor);
    cb->next_time = cb->next ? time_of(cb->next) : 0;
}

void cpu_buffers_drain_in_time_order(struct cpu_buffers *b, uint64_t (*time_of)(const struct perf_event_header *),
                                     ring_buffer_record_fn fn, void *ctx)
{
    for (size_t i = 0; i < b->n; i++) {
        struct cpu_buffer *cb = &b->v[i];
        cb->next = NULL;
        if (cb->fd < 0)
            continue;
        ring_buffer_cursor_begin(&cb->rb, &cb->cursor);
        take_next(cb, time_of);
    }
    struct cpu_buffer *cb;
    while ((cb = earliest(b))) {
        enum ring_buffer_next next = fn(ctx, cb->next);
        if (next == RING_BUFFER_KEEP) {
            cb->next = NULL;
            continue;
        }
        ring_buffer_cursor_next(&cb->cursor, cb->next);
        if (next == RING_BUFFER_STOP)
            break;
        take_next(cb, time_of);
    }
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].fd >= 0)
            ring_buffer_cursor_end(&b->v[i].rb, &b->v[i].cursor);
}

void cpu_buffers_peek(struct cpu_buffers *b, ring_buffer_record_fn fn, void *ctx)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].fd >= 0)
            ring_buffer_peek(&b->v[i].rb, fn, ctx);
}

size_t cpu_buffers_least_room(const struct cpu_buffers *b)
{
    size_t least = SIZE_MAX;
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].fd >= 0 && b->v[i].rb.meta) {
            size_t room = ring_buffer_room(&b->v[i].rb);
            if (room < least)
                least = room;
        }
    return least;
}

void cpu_buffers_free(struct cpu_buffers *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].fd >= 0)
            ring_buffer_unmap(&b->v[i].rb);
    vec_free(b);
}
