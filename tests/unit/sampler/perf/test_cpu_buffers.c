/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_cpu_buffers.c: unit tests of cpu_buffers_drain_in_time_order over synthetic per-CPU buffers
 * (ring_buffer_wrap on zeroed memory): two CPUs' records come out as one stream in time order (a mapping
 * recorded through one CPU before the samples of the other), a record kept ends only its own buffer's walk and
 * stays for the next drain, a record that wraps around its buffer's end stays intact while the other buffer's
 * records are walked, an unmapped buffer is skipped, and each buffer's data_tail ends after what was taken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sampler/perf/cpu_buffers.h"

#define DATA_SIZE 256u
#define N_CPUS 3

struct cpu_memory {
    struct perf_event_mmap_page meta;
    _Alignas(8) uint8_t data[DATA_SIZE];
    uint64_t head;                       /* where the next record goes */
};

struct fixture {
    struct cpu_memory mem[N_CPUS];
    struct cpu_buffers buffers;
};

/* What the walk saw: each record's time (its first payload word) and a check word (its second). */
struct walk {
    uint64_t times[32], checks[32];
    size_t n;
    uint64_t keep_after;                 /* records later than this are kept */
};

static uint64_t time_of(const struct perf_event_header *rec)
{
    uint64_t t;
    memcpy(&t, rec + 1, 8);
    return t;
}

static enum ring_buffer_next take(void *ctx, const struct perf_event_header *rec)
{
    struct walk *w = ctx;
    uint64_t t = time_of(rec);
    if (t > w->keep_after)
        return RING_BUFFER_KEEP;
    assert_true(w->n < 32);
    w->times[w->n] = t;
    memcpy(&w->checks[w->n], (const uint8_t *)(rec + 1) + 8, 8);
    w->n++;
    return RING_BUFFER_CONTINUE;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f || cpu_buffers_init(&f->buffers, NULL, N_CPUS, 1) != 0) {
        free(f);
        return -1;
    }
    for (size_t i = 0; i < N_CPUS - 1; i++) {   /* the last CPU's buffer stays unmapped */
        if (ring_buffer_wrap(&f->buffers.v[i].rb, &f->mem[i].meta, f->mem[i].data, DATA_SIZE) != 0)
            return -1;
        f->buffers.v[i].fd = 100 + (int)i;       /* mapped, as far as the set knows */
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    for (size_t i = 0; i < N_CPUS; i++)
        f->buffers.v[i].fd = -1;                 /* wrapped memory: nothing to unmap */
    for (size_t i = 0; i < N_CPUS - 1; i++)
        ring_buffer_unmap(&f->buffers.v[i].rb);
    cpu_buffers_free(&f->buffers);
    free(f);
    return 0;
}

/* Append a record of time t (payload: t, check, then pad words of filler) to CPU cpu's buffer and publish it. */
static void put(struct fixture *f, size_t cpu, uint64_t t, uint64_t check, size_t pad)
{
    struct cpu_memory *m = &f->mem[cpu];
    uint64_t words[16] = { t, check };
    for (size_t i = 0; i < pad; i++)
        words[2 + i] = check ^ (i + 1);
    struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = (uint16_t)(8 + 8 * (2 + pad)) };
    uint8_t bytes[8 + sizeof(words)];
    memcpy(bytes, &h, 8);
    memcpy(bytes + 8, words, 8 * (2 + pad));
    for (size_t i = 0; i < h.size; i++)
        m->data[(m->head + i) & (DATA_SIZE - 1)] = bytes[i];
    m->head += h.size;
    m->meta.data_head = m->head;
}

static void test_two_cpus_in_time_order(void **state)
{
    struct fixture *f = *state;
    put(f, 0, 10, 0xa, 0);     /* CPU 0: samples of a thread started after the loader's mappings */
    put(f, 0, 40, 0xb, 0);
    put(f, 0, 50, 0xc, 0);
    put(f, 1, 5, 0x1, 0);      /* CPU 1: the loader's mappings, earlier */
    put(f, 1, 20, 0x2, 0);
    put(f, 1, 45, 0x3, 0);
    struct walk w = { .keep_after = UINT64_MAX };
    cpu_buffers_drain_in_time_order(&f->buffers, time_of, take, &w);
    uint64_t want[] = { 5, 10, 20, 40, 45, 50 }, checks[] = { 0x1, 0xa, 0x2, 0xb, 0x3, 0xc };
    assert_int_equal(w.n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(w.times[i], want[i]);
        assert_int_equal(w.checks[i], checks[i]);
    }
    assert_int_equal(f->mem[0].meta.data_tail, f->mem[0].head);
    assert_int_equal(f->mem[1].meta.data_tail, f->mem[1].head);
}

static void test_kept_record_stays(void **state)
{
    struct fixture *f = *state;
    put(f, 0, 10, 0xa, 0);
    put(f, 0, 30, 0xb, 0);
    put(f, 1, 20, 0x1, 0);
    put(f, 1, 25, 0x2, 0);
    struct walk w = { .keep_after = 22 };
    cpu_buffers_drain_in_time_order(&f->buffers, time_of, take, &w);
    assert_int_equal(w.n, 2);
    assert_int_equal(w.times[0], 10);
    assert_int_equal(w.times[1], 20);
    assert_int_equal(f->mem[0].meta.data_tail, 24);   /* after the first 24-byte record of each */
    assert_int_equal(f->mem[1].meta.data_tail, 24);
    /* the next drain starts with them */
    put(f, 1, 26, 0x3, 0);
    struct walk again = { .keep_after = UINT64_MAX };
    cpu_buffers_drain_in_time_order(&f->buffers, time_of, take, &again);
    assert_int_equal(again.n, 3);
    assert_int_equal(again.times[0], 25);
    assert_int_equal(again.times[1], 26);
    assert_int_equal(again.times[2], 30);
}

static void test_wrapped_record_stays_intact(void **state)
{
    struct fixture *f = *state;
    /* CPU 0 starts near its end, so its second record (88 bytes) wraps; CPU 1's records come between */
    f->mem[0].head = f->mem[0].meta.data_head = f->mem[0].meta.data_tail = DATA_SIZE - 48;
    put(f, 0, 10, 0xa, 0);
    put(f, 0, 40, 0xbeef, 8);
    put(f, 1, 20, 0x1, 0);
    put(f, 1, 30, 0x2, 0);
    struct walk w = { .keep_after = UINT64_MAX };
    cpu_buffers_drain_in_time_order(&f->buffers, time_of, take, &w);
    assert_int_equal(w.n, 4);
    assert_int_equal(w.times[3], 40);
    assert_int_equal(w.checks[3], 0xbeef);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_cpus_in_time_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_record_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapped_record_stays_intact, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
