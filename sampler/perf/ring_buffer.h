/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ring_buffer.h: a perf_event mmap ring buffer (one metadata page + 2^n data pages) and the walk over the
 * records between data_tail and data_head, with the memory ordering the kernel requires. A record that wraps
 * around the end of the data area is copied into a scratch buffer so callers always see it contiguous. */
#ifndef TASKSPY_RING_BUFFER_H
#define TASKSPY_RING_BUFFER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ring_buffer {
    struct perf_event_mmap_page *meta;
    uint8_t *data;             /* data area (meta + page size when mapped) */
    size_t data_size;          /* power of two */
    size_t map_size;           /* whole mapping, 0 when not owned (synthetic buffers in tests) */
    uint8_t *scratch;          /* for records that wrap; 64 KiB (the largest record) */
};

/* Map data_pages (a power of two) of fd's ring buffer. Returns 0, or -1 with errno. */
int ring_buffer_map(struct ring_buffer *rb, int fd, size_t data_pages);
/* The same, halving data_pages (down to 8) while locked memory is short (unprivileged users). */
int ring_buffer_map_fitting(struct ring_buffer *rb, int fd, size_t data_pages);
/* The pages of locked memory perf lets this process map (perf_event_mlock_kb per online CPU, then
 * RLIMIT_MEMLOCK), or SIZE_MAX when unlimited (CAP_IPC_LOCK, or both limits infinite). */
size_t ring_buffer_lock_budget(void);
/* The data pages for each of n_buffers buffers: wanted (a power of two), halved until the buffers and their
 * metadata pages fit in budget pages, but not below 8 (mapping then reports the shortage). */
size_t ring_buffer_pages_within(size_t wanted, size_t n_buffers, size_t budget);
/* Automatic sizing, as perf record's -m: data pages per CPU buffer for records of record_bytes arriving at up to
 * rate per second on each CPU (one thread runs on a CPU at a time), room for RING_BUFFER_SECONDS of them: a
 * power of two, at least 32 pages and 4 records, at most RING_BUFFER_MAX_PAGES, and at most
 * RING_BUFFER_MAX_TOTAL_BYTES over n_cpus buffers (but not below the minimum). */
#define RING_BUFFER_SECONDS_NUM 1
#define RING_BUFFER_SECONDS_DEN 2
#define RING_BUFFER_MAX_PAGES 4096u
#define RING_BUFFER_MAX_TOTAL_BYTES (128ull << 20)
size_t ring_buffer_pages_for(unsigned rate, size_t record_bytes, size_t n_cpus, size_t page_size);
/* Use memory the caller owns (meta followed by data), for tests. Returns 0 or -1. */
int ring_buffer_wrap(struct ring_buffer *rb, struct perf_event_mmap_page *meta, uint8_t *data, size_t data_size);
void ring_buffer_unmap(struct ring_buffer *rb);

/* What a record callback wants next. */
enum ring_buffer_next {
    RING_BUFFER_CONTINUE = 0,
    RING_BUFFER_STOP = 1,          /* the record is consumed; stop the walk */
    RING_BUFFER_KEEP = 2,          /* stop before this record: it stays for the next walk */
};
typedef enum ring_buffer_next (*ring_buffer_record_fn)(void *ctx, const struct perf_event_header *rec);
/* Walk every record available now, then release the space to the kernel. Returns the number of records
 * walked, or -1 if the buffer is corrupt (a record size of 0 or larger than what is available). */
long ring_buffer_drain(struct ring_buffer *rb, ring_buffer_record_fn fn, void *ctx);

/* Walk the records available now without consuming them (the next drain sees them again). */
long ring_buffer_peek(struct ring_buffer *rb, ring_buffer_record_fn fn, void *ctx);

/* A walk taken one record at a time (several buffers' walks merged by the caller): begin, then record / next
 * until record gives NULL (the end of what was available at begin, or corruption), then end, which releases
 * the space of the records passed with next (all of it after corruption). A wrapped record is in rb's scratch
 * until the next call of record. */
struct ring_buffer_cursor {
    uint64_t head, tail;
    long count;                /* records passed */
    bool corrupt;
};
void ring_buffer_cursor_begin(struct ring_buffer *rb, struct ring_buffer_cursor *c);
const struct perf_event_header *ring_buffer_cursor_record(struct ring_buffer *rb, struct ring_buffer_cursor *c);
void ring_buffer_cursor_next(struct ring_buffer_cursor *c, const struct perf_event_header *rec);
/* Returns the records passed, or -1 if the buffer was corrupt. */
long ring_buffer_cursor_end(struct ring_buffer *rb, struct ring_buffer_cursor *c);

/* The bytes the kernel may still write before it drops records (data_size less what is unread). Between two
 * drains it only shrinks: room for a record now means no record was dropped since the last drain. */
size_t ring_buffer_room(const struct ring_buffer *rb);

#endif
