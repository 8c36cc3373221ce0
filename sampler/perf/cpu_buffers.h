/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cpu_buffers.h: a set of perf ring buffers, one per CPU. The first event opened on a CPU maps that CPU's
 * buffer and owns it; every later event on the CPU writes into the same buffer (PERF_EVENT_IOC_SET_OUTPUT),
 * as perf record does. The sampler keeps one set for its samples, the marker layer one for marker records. */
#ifndef TASKSPY_CPU_BUFFERS_H
#define TASKSPY_CPU_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "sampler/perf/ring_buffer.h"

struct cpu_buffer {
    int cpu;
    int fd;                            /* the event that owns the buffer; -1 until one maps it */
    struct ring_buffer rb;
    struct ring_buffer_cursor cursor;  /* cpu_buffers_drain_in_time_order's walk of it */
    const struct perf_event_header *next;   /* ... its next record (NULL: done), and that record's time */
    uint64_t next_time;
};

struct cpu_buffers {
    struct cpu_buffer *v;
    size_t n, cap;
    size_t pages;                      /* data pages per buffer (a power of two) */
};

/* One unmapped buffer per CPU of cpus[0..n) (NULL: CPUs 0 to n-1), each of pages data pages when mapped.
 * Returns 0, or -1 when out of memory. */
int cpu_buffers_init(struct cpu_buffers *b, const int *cpus, size_t n, size_t pages);
/* Let event fd, opened on the CPU of v[i], write into that CPU's buffer (mapping the buffer when fd is the
 * CPU's first event). Returns 0, or -1 with errno. */
int cpu_buffers_route(struct cpu_buffers *b, size_t i, int fd);
/* fd is being closed after a failure: when it owns v[i]'s buffer, unmap it (the next event maps it again). */
void cpu_buffers_forget(struct cpu_buffers *b, size_t i, int fd);
/* The mapped buffers (at most max): their owner fds, to poll, into fds, and their CPUs into cpus (either may
 * be NULL). Returns how many. */
size_t cpu_buffers_mapped(const struct cpu_buffers *b, int *fds, int *cpus, size_t max);
/* Walk every mapped buffer's records (ring_buffer_drain: consuming; ring_buffer_peek: not). */
void cpu_buffers_drain(struct cpu_buffers *b, ring_buffer_record_fn fn, void *ctx);
void cpu_buffers_peek(struct cpu_buffers *b, ring_buffer_record_fn fn, void *ctx);
/* Walk every mapped buffer's records as one stream in time order (each buffer's own order is its time order),
 * consuming them, time_of giving a record's time. A record fn keeps (RING_BUFFER_KEEP) ends its buffer's walk;
 * RING_BUFFER_STOP ends all. Samples of one CPU then never come before an earlier mapping recorded through
 * another CPU (a launched target's loader and its first threads often run on different CPUs). */
void cpu_buffers_drain_in_time_order(struct cpu_buffers *b, uint64_t (*time_of)(const struct perf_event_header *),
                                     ring_buffer_record_fn fn, void *ctx);
/* The least ring_buffer_room of the mapped buffers (SIZE_MAX: none mapped). */
size_t cpu_buffers_least_room(const struct cpu_buffers *b);
/* Unmap every buffer and free the set (the events themselves are closed by their owner). */
void cpu_buffers_free(struct cpu_buffers *b);

#endif
