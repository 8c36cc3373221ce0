/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_ring_buffer.c: unit tests of sampler/ring_buffer over a synthetic buffer (ring_buffer_wrap on a zeroed
 * perf_event_mmap_page and a 256-byte data area): records delivered in order and intact, the room left to the
 * kernel, a record that wraps around the end of the data area delivered contiguous, a header that itself
 * straddles the end, KEEP and STOP, peek not consuming, corrupt records (size 0, larger than available, too
 * much or too little data) giving -1 without looping, and data_tail published as the position after the last
 * consumed record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sampler/perf/ring_buffer.h"

#define DATA_SIZE 256u
#define MAX_SEEN 64

struct fixture {
    struct perf_event_mmap_page meta;
    _Alignas(8) uint8_t data[DATA_SIZE];
    struct ring_buffer rb;
};

/* What the callback saw: a copy of each record (valid only during the callback otherwise). */
struct seen {
    size_t n;
    struct {
        uint32_t type;
        uint16_t misc, size;
        uint64_t payload[16];
        size_t n_payload;
    } rec[MAX_SEEN];
    /* behaviour: at the record with this index (0-based), return `action`; otherwise CONTINUE */
    size_t act_at;
    enum ring_buffer_next action;
    size_t calls;
};

static enum ring_buffer_next record_cb(void *ctx, const struct perf_event_header *rec)
{
    struct seen *s = ctx;
    size_t idx = s->calls++;
    assert_true(s->calls < 1000);   /* a walk that loops forever would keep calling */
    if (idx == s->act_at && s->action != RING_BUFFER_CONTINUE) {
        if (s->action == RING_BUFFER_KEEP)
            return RING_BUFFER_KEEP;   /* not recorded: it stays for the next walk */
    }
    assert_true(s->n < MAX_SEEN);
    s->rec[s->n].type = rec->type;
    s->rec[s->n].misc = rec->misc;
    s->rec[s->n].size = rec->size;
    size_t words = (rec->size - sizeof(*rec)) / 8;
    assert_true(words <= 16);
    memcpy(s->rec[s->n].payload, rec + 1, words * 8);
    s->rec[s->n].n_payload = words;
    s->n++;
    return idx == s->act_at ? s->action : RING_BUFFER_CONTINUE;
}

static void seen_init(struct seen *s)
{
    memset(s, 0, sizeof(*s));
    s->act_at = SIZE_MAX;
    s->action = RING_BUFFER_CONTINUE;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    if (ring_buffer_wrap(&f->rb, &f->meta, f->data, DATA_SIZE) != 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    ring_buffer_unmap(&f->rb);
    free(f);
    return 0;
}

/* Write raw bytes at ring position pos (wrapping). */
static void put_bytes(struct fixture *f, uint64_t pos, const void *src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        f->data[(pos + i) & (DATA_SIZE - 1)] = ((const uint8_t *)src)[i];
}

/* Write a record at pos: header(type, misc, size = 8 + 8 * n) + n payload words; returns pos after it. */
static uint64_t put_record(struct fixture *f, uint64_t pos, uint32_t type, const uint64_t *payload, size_t n)
{
    struct perf_event_header h = { .type = type, .misc = (uint16_t)(0x40 + n), .size = (uint16_t)(8 + 8 * n) };
    put_bytes(f, pos, &h, sizeof(h));
    put_bytes(f, pos + 8, payload, n * 8);
    return pos + 8 + 8 * n;
}

/* Start the buffer at position pos (tail == head == pos). */
static void start_at(struct fixture *f, uint64_t pos)
{
    f->meta.data_tail = pos;
    f->meta.data_head = pos;
}

static void check_record(const struct seen *s, size_t i, uint32_t type, const uint64_t *payload, size_t n)
{
    assert_true(i < s->n);
    assert_int_equal(s->rec[i].type, type);
    assert_int_equal(s->rec[i].size, 8 + 8 * n);
    assert_int_equal(s->rec[i].misc, 0x40 + n);
    assert_int_equal(s->rec[i].n_payload, n);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(s->rec[i].payload[k], payload[k]);
}

static void test_wrap_rejects_bad_size(void **state)
{
    (void)state;
    struct perf_event_mmap_page meta;
    uint8_t data[256];
    struct ring_buffer rb;
    memset(&meta, 0, sizeof(meta));
    assert_int_equal(ring_buffer_wrap(&rb, &meta, data, 0), -1);
    assert_int_equal(ring_buffer_wrap(&rb, &meta, data, 192), -1);
    assert_int_equal(ring_buffer_wrap(&rb, &meta, data, 256), 0);
    ring_buffer_unmap(&rb);
}

static void test_empty(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 1000);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 0);
    assert_int_equal(s.calls, 0);
    assert_int_equal(f->meta.data_tail, 1000);
}

/* ring_buffer_room: what the kernel may still write, shrinking as records wait unread, whole again once drained */
static void test_room(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 4000);     /* positions are free-running: room does not depend on where the walk is */
    assert_int_equal(ring_buffer_room(&f->rb), DATA_SIZE);
    const uint64_t a[] = { 1, 2, 3 };
    uint64_t pos = put_record(f, 4000, 9, a, 3);
    pos = put_record(f, pos, 9, a, 3);
    f->meta.data_head = pos;
    assert_int_equal(ring_buffer_room(&f->rb), DATA_SIZE - 64);
    f->meta.data_head = f->meta.data_tail + DATA_SIZE;   /* full */
    assert_int_equal(ring_buffer_room(&f->rb), 0);
    f->meta.data_head = f->meta.data_tail + DATA_SIZE + 8;   /* a head past a whole buffer: no room, no wrap */
    assert_int_equal(ring_buffer_room(&f->rb), 0);
    f->meta.data_head = pos;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 2);
    assert_int_equal(ring_buffer_room(&f->rb), DATA_SIZE);
    struct ring_buffer unmapped = { 0 };
    assert_int_equal(ring_buffer_room(&unmapped), 0);
}

static void test_records_in_order(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 0);
    const uint64_t a[] = { 0x1111, 0x2222 }, b[] = { 0x3333 }, c[] = { 1, 2, 3, 4 };
    uint64_t pos = put_record(f, 0, 9, a, 2);
    pos = put_record(f, pos, 3, NULL, 0);   /* header only: size 8 */
    pos = put_record(f, pos, 10, b, 1);
    pos = put_record(f, pos, 11, c, 4);
    f->meta.data_head = pos;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 4);
    assert_int_equal(s.n, 4);
    check_record(&s, 0, 9, a, 2);
    check_record(&s, 1, 3, NULL, 0);
    check_record(&s, 2, 10, b, 1);
    check_record(&s, 3, 11, c, 4);
    assert_int_equal(f->meta.data_tail, pos);
    /* nothing new: a second drain sees nothing and leaves the tail */
    seen_init(&s);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 0);
    assert_int_equal(s.calls, 0);
    assert_int_equal(f->meta.data_tail, pos);
}

/* A record starting 16 bytes before the end of the data area and 48 bytes long: delivered whole. Positions
 * are far past the data size (they only grow), so masking is exercised too. */
static void test_record_wraps_around_end(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    uint64_t base = 1000 * (uint64_t)DATA_SIZE + DATA_SIZE - 16;
    start_at(f, base);
    memset(f->data, 0xee, sizeof(f->data));
    const uint64_t w[] = { 0xa1a1a1a1a1a1a1a1ull, 0xb2b2b2b2b2b2b2b2ull, 0xc3c3c3c3c3c3c3c3ull,
                           0xd4d4d4d4d4d4d4d4ull, 0xe5e5e5e5e5e5e5e5ull };
    const uint64_t after[] = { 77 };
    uint64_t pos = put_record(f, base, 9, w, 5);
    uint64_t pos2 = put_record(f, pos, 12, after, 1);
    f->meta.data_head = pos2;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 2);
    check_record(&s, 0, 9, w, 5);
    check_record(&s, 1, 12, after, 1);
    assert_int_equal(f->meta.data_tail, pos2);
    assert_true(f->meta.data_tail == base + 48 + 16);
}

/* A record that ends exactly at the end of the data area does not wrap; the next one starts at offset 0. */
static void test_record_ending_at_end(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    uint64_t base = 3 * (uint64_t)DATA_SIZE + DATA_SIZE - 24;
    start_at(f, base);
    const uint64_t w[] = { 5, 6 }, x[] = { 7 };
    uint64_t pos = put_record(f, base, 9, w, 2);
    assert_int_equal(pos & (DATA_SIZE - 1), 0);
    pos = put_record(f, pos, 9, x, 1);
    f->meta.data_head = pos;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 2);
    check_record(&s, 0, 9, w, 2);
    check_record(&s, 1, 9, x, 1);
    assert_int_equal(f->meta.data_tail, pos);
}

/* The header itself straddles the end (only possible off the 8-byte grid): still read correctly. */
static void test_header_straddles_end(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    uint64_t base = 7 * (uint64_t)DATA_SIZE + DATA_SIZE - 4;
    start_at(f, base);
    const uint64_t w[] = { 0x0102030405060708ull, 0x1112131415161718ull };
    uint64_t pos = put_record(f, base, 9, w, 2);
    f->meta.data_head = pos;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 1);
    check_record(&s, 0, 9, w, 2);
    assert_int_equal(f->meta.data_tail, pos);
}

/* The whole data area full of records (head - tail == data size), starting mid-area. */
static void test_full_buffer(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    uint64_t base = 128;
    start_at(f, base);
    uint64_t pos = base;
    for (uint64_t i = 0; i < 8; i++) {
        uint64_t w[3] = { i, i * 100, ~i };
        pos = put_record(f, pos, 9, w, 3);   /* 32 bytes each: 8 of them fill 256 */
    }
    assert_int_equal(pos - base, DATA_SIZE);
    f->meta.data_head = pos;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 8);
    for (uint64_t i = 0; i < 8; i++) {
        uint64_t w[3] = { i, i * 100, ~i };
        check_record(&s, i, 9, w, 3);
    }
    assert_int_equal(f->meta.data_tail, pos);
}

static uint64_t put_three(struct fixture *f, uint64_t base, uint64_t *ends)
{
    const uint64_t a[] = { 1 }, b[] = { 2, 2 }, c[] = { 3, 3, 3 };
    ends[0] = put_record(f, base, 9, a, 1);
    ends[1] = put_record(f, ends[0], 9, b, 2);
    ends[2] = put_record(f, ends[1], 9, c, 3);
    f->meta.data_head = ends[2];
    return ends[2];
}

static void test_keep_leaves_record(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    uint64_t base = DATA_SIZE - 24;   /* the second record wraps */
    start_at(f, base);
    uint64_t ends[3];
    put_three(f, base, ends);
    s.act_at = 1;
    s.action = RING_BUFFER_KEEP;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 1);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.rec[0].payload[0], 1);
    assert_int_equal(f->meta.data_tail, ends[0]);   /* the kept record is not released */
    /* the next drain starts with the kept record */
    seen_init(&s);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 2);
    const uint64_t b[] = { 2, 2 }, c[] = { 3, 3, 3 };
    check_record(&s, 0, 9, b, 2);
    check_record(&s, 1, 9, c, 3);
    assert_int_equal(f->meta.data_tail, ends[2]);
}

static void test_keep_first_record(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 64);
    uint64_t ends[3];
    put_three(f, 64, ends);
    s.act_at = 0;
    s.action = RING_BUFFER_KEEP;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(f->meta.data_tail, 64);
}

static void test_stop_consumes_record(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 0);
    uint64_t ends[3];
    put_three(f, 0, ends);
    s.act_at = 1;
    s.action = RING_BUFFER_STOP;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 2);
    assert_int_equal(s.calls, 2);
    assert_int_equal(f->meta.data_tail, ends[1]);   /* the stopping record is consumed */
    seen_init(&s);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 1);
    const uint64_t c[] = { 3, 3, 3 };
    check_record(&s, 0, 9, c, 3);
    assert_int_equal(f->meta.data_tail, ends[2]);
}

static void test_peek_does_not_consume(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    uint64_t base = DATA_SIZE - 8;   /* first record wraps */
    start_at(f, base);
    uint64_t ends[3];
    put_three(f, base, ends);
    assert_int_equal(ring_buffer_peek(&f->rb, record_cb, &s), 3);
    assert_int_equal(s.n, 3);
    assert_int_equal(f->meta.data_tail, base);
    /* peek again: the same records */
    seen_init(&s);
    assert_int_equal(ring_buffer_peek(&f->rb, record_cb, &s), 3);
    assert_int_equal(f->meta.data_tail, base);
    /* peek with KEEP stops there, still consuming nothing */
    seen_init(&s);
    s.act_at = 1;
    s.action = RING_BUFFER_KEEP;
    assert_int_equal(ring_buffer_peek(&f->rb, record_cb, &s), 1);
    assert_int_equal(f->meta.data_tail, base);
    /* the drain then sees all three */
    seen_init(&s);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 3);
    const uint64_t a[] = { 1 }, b[] = { 2, 2 }, c[] = { 3, 3, 3 };
    check_record(&s, 0, 9, a, 1);
    check_record(&s, 1, 9, b, 2);
    check_record(&s, 2, 9, c, 3);
    assert_int_equal(f->meta.data_tail, ends[2]);
}

static void test_corrupt_size_zero(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 32);
    const uint64_t a[] = { 1 };
    uint64_t pos = put_record(f, 32, 9, a, 1);
    struct perf_event_header bad = { .type = 9, .misc = 0, .size = 0 };
    put_bytes(f, pos, &bad, sizeof(bad));
    uint64_t head = pos + 64;
    f->meta.data_head = head;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), -1);
    assert_int_equal(s.calls, 1);   /* the good record before it was delivered, the bad one never */
    check_record(&s, 0, 9, a, 1);
    assert_int_equal(f->meta.data_tail, head);   /* skipped, so the next drain does not spin on it */
    seen_init(&s);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), 0);
}

static void test_corrupt_size_below_header(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 0);
    struct perf_event_header bad = { .type = 9, .misc = 0, .size = 4 };
    put_bytes(f, 0, &bad, sizeof(bad));
    f->meta.data_head = 16;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), -1);
    assert_int_equal(s.calls, 0);
    assert_int_equal(f->meta.data_tail, 16);
}

static void test_corrupt_size_larger_than_available(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    start_at(f, 200);
    struct perf_event_header bad = { .type = 9, .misc = 0, .size = 64 };
    put_bytes(f, 200, &bad, sizeof(bad));
    f->meta.data_head = 200 + 32;   /* only 32 bytes published */
    /* peek reports it and leaves everything in place */
    assert_int_equal(ring_buffer_peek(&f->rb, record_cb, &s), -1);
    assert_int_equal(s.calls, 0);
    assert_int_equal(f->meta.data_tail, 200);
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), -1);
    assert_int_equal(s.calls, 0);
    assert_int_equal(f->meta.data_tail, 232);
}

static void test_corrupt_positions(void **state)
{
    struct fixture *f = *state;
    struct seen s;
    seen_init(&s);
    /* fewer bytes than a header */
    start_at(f, 8);
    f->meta.data_head = 12;
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), -1);
    assert_int_equal(f->meta.data_tail, 12);
    /* more published than the buffer holds (head ran past tail by more than the data size) */
    start_at(f, 0);
    uint64_t pos = 0;
    for (int i = 0; i < 40; i++) {
        const uint64_t w[] = { (uint64_t)i };
        pos = put_record(f, pos, 9, w, 1);
    }
    f->meta.data_head = pos;   /* 640 > 256 */
    assert_int_equal(ring_buffer_drain(&f->rb, record_cb, &s), -1);
    assert_int_equal(s.calls, 0);
    assert_int_equal(f->meta.data_tail, pos);
}

static void test_unwrapped_buffer_is_empty(void **state)
{
    (void)state;
    struct ring_buffer rb;
    memset(&rb, 0, sizeof(rb));
    struct seen s;
    seen_init(&s);
    assert_int_equal(ring_buffer_drain(&rb, record_cb, &s), 0);
    assert_int_equal(ring_buffer_peek(&rb, record_cb, &s), 0);
    assert_int_equal(s.calls, 0);
}

/* Many rounds of writer/reader through the ring, records of varying sizes, some wrapping. */
/* Buffers sized to the locked memory perf grants (samples and markers share it): each buffer costs its
 * data pages plus a metadata page. */
static void test_pages_within_lock_budget(void **state)
{
    (void)state;
    /* unlimited, or room for all: what was wanted */
    assert_int_equal(ring_buffer_pages_within(2048, 4, SIZE_MAX), 2048);
    assert_int_equal(ring_buffer_pages_within(2048, 4, 4 * 2049), 2048);
    /* one page short of that: halved */
    assert_int_equal(ring_buffer_pages_within(2048, 4, 4 * 2049 - 1), 1024);
    /* 516 KiB per CPU on 2 CPUs plus an 8 MiB RLIMIT_MEMLOCK (4 KiB pages): 2306 pages for 4 buffers */
    size_t pages = ring_buffer_pages_within(2048, 4, 129 * 2 + 2048);
    assert_int_equal(pages, 512);
    assert_true(4 * (pages + 1) <= 129 * 2 + 2048);
    /* never below 8 pages, even when nothing fits (the mapping then says so) */
    assert_int_equal(ring_buffer_pages_within(2048, 4, 10), 8);
    assert_int_equal(ring_buffer_pages_within(2048, 0, 0), 2048);
}

static void test_many_rounds(void **state)
{
    struct fixture *f = *state;
    start_at(f, 0);
    uint64_t next_value = 0, expect_value = 0, pos = 0;
    for (int round = 0; round < 200; round++) {
        /* write while it fits */
        int written = 0;
        for (;;) {
            size_t n = (size_t)((next_value * 7) % 6);
            if (pos + 8 + 8 * n - f->meta.data_tail > DATA_SIZE || written == 1 + round % 5)
                break;
            uint64_t w[6];
            for (size_t k = 0; k < n; k++)
                w[k] = next_value * 1000 + k;
            pos = put_record(f, pos, (uint32_t)(next_value % 50), w, n);
            next_value++;
            written++;
        }
        f->meta.data_head = pos;
        struct seen s;
        seen_init(&s);
        long got = ring_buffer_drain(&f->rb, record_cb, &s);
        assert_int_equal(got, written);
        for (size_t i = 0; i < s.n; i++, expect_value++) {
            size_t n = (size_t)((expect_value * 7) % 6);
            uint64_t w[6];
            for (size_t k = 0; k < n; k++)
                w[k] = expect_value * 1000 + k;
            check_record(&s, i, (uint32_t)(expect_value % 50), w, n);
        }
        assert_int_equal(f->meta.data_tail, pos);
    }
    assert_int_equal(expect_value, next_value);
    assert_true(pos > 10 * DATA_SIZE);
}

/* perf -m style sizing: half a second of records per CPU, a power of two within the caps, never below the floor. */
static void test_pages_for_rate(void **state)
{
    (void)state;
    size_t dwarf = 65528 + 256, fp = 2 * 1024;
    assert_int_equal(ring_buffer_pages_for(999, dwarf, 2, 4096), RING_BUFFER_MAX_PAGES);    /* capped */
    assert_int_equal(ring_buffer_pages_for(99, dwarf, 2, 4096), 1024);     /* 3.3 MB: 794 pages, rounded up */
    assert_int_equal(ring_buffer_pages_for(99, fp, 2, 4096), 32);          /* the floor */
    assert_int_equal(ring_buffer_pages_for(999, dwarf, 64, 4096), 512);    /* 128 MiB over 64 CPUs */
    assert_int_equal(ring_buffer_pages_for(999, dwarf, 1024, 4096), 128);  /* room for 4 records at least */
    assert_int_equal(ring_buffer_pages_for(1, dwarf, 1, 4096), 128);
    for (unsigned rate = 1; rate < 100000; rate = rate * 3 + 1)
        for (size_t cpus = 1; cpus <= 4096; cpus *= 4) {
            size_t p = ring_buffer_pages_for(rate, dwarf, cpus, 4096);
            assert_true(p >= 32 && (p & (p - 1)) == 0 && p <= RING_BUFFER_MAX_PAGES);
            assert_true(p * 4096 >= 4 * dwarf);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_rejects_bad_size),
        cmocka_unit_test(test_unwrapped_buffer_is_empty),
        cmocka_unit_test(test_pages_within_lock_budget),
        cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_room, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_wraps_around_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_ending_at_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_straddles_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_leaves_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_first_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_consumes_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peek_does_not_consume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_size_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_size_below_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_size_larger_than_available, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_positions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_rounds, setup, teardown),
        cmocka_unit_test(test_pages_for_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
