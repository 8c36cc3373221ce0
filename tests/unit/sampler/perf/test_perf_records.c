/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_perf_records.c: unit tests of sampler/perf_records: PERF_RECORD_SAMPLE byte images decoded field by
 * field (IDENTIFIER|IP|TID|TIME|CALLCHAIN|REGS_USER|STACK_USER, RAW, the skipped ADDR/ID/STREAM_ID/CPU/PERIOD
 * fields, no user regs, empty stack, dyn_size clamping), every truncation of a record rejected without reading
 * past it (each copy is a heap block of exactly the record's size, so ASan reports an over-read),
 * perf_split_callchain with context markers, perf_unpack_regs bit-to-PERF_REG_X86_* mapping, the MMAP2 / COMM /
 * FORK / EXIT / LOST decoders (a filename or comm without its NUL inside the record is rejected) and
 * perf_record_trailer_id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <asm/perf_regs.h>

#include "sampler/perf/perf_records.h"

/* ---- a record builder ------------------------------------------------------------------------------ */

struct image {
    _Alignas(8) uint8_t b[4096];
    size_t n;
};

static void img_start(struct image *im, uint32_t type, uint16_t misc)
{
    memset(im, 0, sizeof(*im));
    struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };
    memcpy(im->b, &h, sizeof(h));
    im->n = sizeof(h);
}

static void img_bytes(struct image *im, const void *p, size_t len)
{
    assert_true(im->n + len <= sizeof(im->b));
    memcpy(im->b + im->n, p, len);
    im->n += len;
}

static void img_u64(struct image *im, uint64_t v)
{
    img_bytes(im, &v, 8);
}

static void img_u32(struct image *im, uint32_t v)
{
    img_bytes(im, &v, 4);
}

static void img_pad8(struct image *im)
{
    while (im->n % 8)
        im->b[im->n++] = 0;
}

/* Set the header's size to the bytes written. */
static const struct perf_event_header *img_finish(struct image *im)
{
    struct perf_event_header *h = (struct perf_event_header *)im->b;
    h->size = (uint16_t)im->n;
    return h;
}

/* A heap copy of the first len bytes of a record, with the header's size set to len. */
static struct perf_event_header *truncated_copy(const struct image *im, size_t len)
{
    struct perf_event_header *r = malloc(len);
    assert_non_null(r);
    memcpy(r, im->b, len);
    r->size = (uint16_t)len;
    return r;
}

/* ---- the full sample layout -------------------------------------------------------------------------- */

#define FULL_TYPE                                                                                           \
    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |  \
     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define REGS_MASK                                                                                           \
    ((1ull << PERF_REG_X86_BX) | (1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) |                     \
     (1ull << PERF_REG_X86_IP) | (1ull << PERF_REG_X86_R15))

static const uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, 0xffffffff81000020ull,
                                  (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000 };
static const uint64_t regs_vals[] = { 0xb0b0, 0x7ffc0010, 0x7ffc0000, 0x401000, 0xf15f15 }; /* BX BP SP IP R15 */

/* id 0xabc, ip 0x401000, pid 100, tid 101, time 5e9, the chain, regs, 32 bytes of stack with dyn_size dyn. */
static void build_full(struct image *im, uint64_t dyn)
{
    img_start(im, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
    img_u64(im, 0xabc);
    img_u64(im, 0x401000);
    img_u32(im, 100);
    img_u32(im, 101);
    img_u64(im, 5000000000ull);
    img_u64(im, sizeof(chain) / sizeof(chain[0]));
    img_bytes(im, chain, sizeof(chain));
    img_u64(im, PERF_SAMPLE_REGS_ABI_64);
    img_bytes(im, regs_vals, sizeof(regs_vals));
    img_u64(im, 32);
    for (int i = 0; i < 32; i++) {
        uint8_t c = (uint8_t)(0x40 + i);
        img_bytes(im, &c, 1);
    }
    img_u64(im, dyn);
    img_finish(im);
}

static void test_decode_full_sample(void **state)
{
    (void)state;
    struct image im;
    build_full(&im, 24);
    const struct perf_event_header *rec = (const struct perf_event_header *)im.b;
    struct sample_layout layout = { FULL_TYPE, REGS_MASK };
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample(rec, &layout, &d), 0);
    assert_int_equal(d.id, 0xabc);
    assert_int_equal(d.ip, 0x401000);
    assert_int_equal(d.pid, 100);
    assert_int_equal(d.tid, 101);
    assert_int_equal(d.time, 5000000000ull);
    assert_int_equal(d.callchain_nr, 7);
    assert_ptr_equal(d.callchain, (const uint64_t *)(im.b + 8 + 32 + 8));
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(d.callchain[i], chain[i]);
    assert_int_equal(d.regs_abi, PERF_SAMPLE_REGS_ABI_64);
    assert_int_equal(d.n_regs, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(d.regs[i], regs_vals[i]);
    assert_non_null(d.stack);
    assert_int_equal(d.stack_size, 24);
    for (int i = 0; i < 32; i++)
        assert_int_equal(d.stack[i], 0x40 + i);
    assert_null(d.raw);
    assert_int_equal(d.raw_size, 0);
}

/* dyn_size larger than the copied size is clamped to it. */
static void test_stack_dyn_size_clamped(void **state)
{
    (void)state;
    struct image im;
    build_full(&im, 4096);
    struct sample_layout layout = { FULL_TYPE, REGS_MASK };
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &layout, &d), 0);
    assert_int_equal(d.stack_size, 32);
}

/* Every strict prefix of the record is malformed: -1, and nothing read past the (exactly sized) copy. */
static void test_truncated_full_sample(void **state)
{
    (void)state;
    struct image im;
    build_full(&im, 24);
    struct sample_layout layout = { FULL_TYPE, REGS_MASK };
    for (size_t len = sizeof(struct perf_event_header); len < im.n; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        struct decoded_sample d;
        if (perf_decode_sample(r, &layout, &d) != -1)
            fail_msg("a %zu-byte prefix of a %zu-byte sample was accepted", len, im.n);
        free(r);
    }
    struct perf_event_header *r = truncated_copy(&im, im.n);
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample(r, &layout, &d), 0);
    free(r);
}

/* A kernel thread: regs ABI NONE (no regs follow) and a zero-size stack (no dyn_size follows). */
static void test_sample_without_user_regs(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
    img_u64(&im, 7);
    img_u64(&im, 0xffffffff81234567ull);
    img_u32(&im, 0);
    img_u32(&im, 0);
    img_u64(&im, 42);
    img_u64(&im, 2);
    img_u64(&im, (uint64_t)PERF_CONTEXT_KERNEL);
    img_u64(&im, 0xffffffff81234567ull);
    img_u64(&im, PERF_SAMPLE_REGS_ABI_NONE);
    img_u64(&im, 0);
    img_finish(&im);
    struct sample_layout layout = { FULL_TYPE, REGS_MASK };
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &layout, &d), 0);
    assert_int_equal(d.id, 7);
    assert_int_equal(d.time, 42);
    assert_int_equal(d.callchain_nr, 2);
    assert_int_equal(d.regs_abi, PERF_SAMPLE_REGS_ABI_NONE);
    assert_null(d.regs);
    assert_int_equal(d.n_regs, 0);
    assert_null(d.stack);
    assert_int_equal(d.stack_size, 0);
    for (size_t len = 8; len < im.n; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_sample(r, &layout, &d), -1);
        free(r);
    }
}

/* ADDR, ID, STREAM_ID, CPU and PERIOD are skipped in the kernel's order, so what follows lines up. */
static void test_skipped_fields(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_SAMPLE, 0);
    img_u64(&im, 0x11);        /* IDENTIFIER */
    img_u64(&im, 0x22);        /* IP */
    img_u32(&im, 3);           /* TID: pid */
    img_u32(&im, 4);           /*      tid */
    img_u64(&im, 0x55);        /* TIME */
    img_u64(&im, 0xadd7);      /* ADDR */
    img_u64(&im, 0x1d);        /* ID */
    img_u64(&im, 0x5d);        /* STREAM_ID */
    img_u64(&im, 0xc0);        /* CPU + res */
    img_u64(&im, 0x9e);        /* PERIOD */
    img_u64(&im, 1);           /* CALLCHAIN nr */
    img_u64(&im, 0x77);
    img_finish(&im);
    struct sample_layout layout = {
        PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
            PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
        0,
    };
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &layout, &d), 0);
    assert_int_equal(d.id, 0x11);
    assert_int_equal(d.ip, 0x22);
    assert_int_equal(d.pid, 3);
    assert_int_equal(d.tid, 4);
    assert_int_equal(d.time, 0x55);
    assert_int_equal(d.callchain_nr, 1);
    assert_int_equal(d.callchain[0], 0x77);
}

/* PERF_SAMPLE_RAW: u32 size then the bytes (the kernel pads the whole to 8). */
static void test_raw_sample(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_SAMPLE, 0);
    img_u64(&im, 0x99);
    img_u32(&im, 10);
    img_u32(&im, 11);
    img_u64(&im, 1234);
    img_u32(&im, 12);
    img_bytes(&im, "raw-payload!", 12);
    img_pad8(&im);
    img_finish(&im);
    struct sample_layout layout = { PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW, 0 };
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &layout, &d), 0);
    assert_int_equal(d.id, 0x99);
    assert_int_equal(d.pid, 10);
    assert_int_equal(d.tid, 11);
    assert_int_equal(d.time, 1234);
    assert_int_equal(d.raw_size, 12);
    assert_memory_equal(d.raw, "raw-payload!", 12);
    /* every prefix that cuts the size or the payload is rejected */
    for (size_t len = 8; len < 8 + 24 + 4 + 12; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_sample(r, &layout, &d), -1);
        free(r);
    }
    /* a raw size larger than the record */
    struct image big = im;
    uint32_t huge = 4000;
    memcpy(big.b + 8 + 24, &huge, 4);
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)big.b, &layout, &d), -1);
}

static void test_bad_samples(void **state)
{
    (void)state;
    struct image im;
    build_full(&im, 8);
    struct sample_layout layout = { FULL_TYPE, REGS_MASK };
    struct decoded_sample d;
    /* not a sample record */
    struct image other = im;
    ((struct perf_event_header *)other.b)->type = PERF_RECORD_MMAP2;
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)other.b, &layout, &d), -1);
    /* a callchain longer than the record */
    struct image longer = im;
    uint64_t nr = 1000;
    memcpy(longer.b + 8 + 32, &nr, 8);
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)longer.b, &layout, &d), -1);
    /* an absurd callchain length whose byte size wraps to 8 (nr * 8 overflows) */
    nr = (1ull << 61) + 1;
    memcpy(longer.b + 8 + 32, &nr, 8);
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)longer.b, &layout, &d), -1);
    /* a stack size larger than the record */
    struct image stack = im;
    uint64_t size = 0x10000;
    size_t at = 8 + 32 + 8 + sizeof(chain) + 8 + sizeof(regs_vals);
    memcpy(stack.b + at, &size, 8);
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)stack.b, &layout, &d), -1);
    /* more regs in the mask than the record holds */
    struct sample_layout more_regs = { FULL_TYPE, REGS_MASK | (1ull << PERF_REG_X86_R8) | (1ull << PERF_REG_X86_R9) |
                                                      (1ull << PERF_REG_X86_R10) | (1ull << PERF_REG_X86_R11) |
                                                      (1ull << PERF_REG_X86_R12) | (1ull << PERF_REG_X86_R13) };
    struct image shortregs;
    img_start(&shortregs, PERF_RECORD_SAMPLE, 0);
    img_u64(&shortregs, 1);
    img_u64(&shortregs, 2);
    img_u64(&shortregs, 3);
    img_u64(&shortregs, 4);
    img_u64(&shortregs, 0);                        /* empty callchain */
    img_u64(&shortregs, PERF_SAMPLE_REGS_ABI_64);
    img_bytes(&shortregs, regs_vals, sizeof(regs_vals));
    img_u64(&shortregs, 0);
    img_finish(&shortregs);
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)shortregs.b, &layout, &d), 0);
    struct perf_event_header *r = truncated_copy(&shortregs, shortregs.n);
    assert_int_equal(perf_decode_sample(r, &more_regs, &d), -1);
    free(r);
    /* fields taskspy never asks for are refused rather than misparsed */
    struct sample_layout read = { PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_READ, 0 };
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &read, &d), -1);
    struct sample_layout branch = { PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_BRANCH_STACK, 0 };
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &branch, &d), -1);
}

/* ---- callchains and registers ------------------------------------------------------------------------- */

static void test_split_callchain(void **state)
{
    (void)state;
    uint64_t k[8], u[8];
    size_t nk = 99, nu = 99;
    assert_true(perf_split_callchain(chain, 7, k, &nk, u, &nu, 8));
    assert_int_equal(nk, 2);
    assert_int_equal(k[0], 0xffffffff81000010ull);
    assert_int_equal(k[1], 0xffffffff81000020ull);
    assert_int_equal(nu, 3);
    assert_int_equal(u[0], 0x401000);
    assert_int_equal(u[1], 0x402000);
    assert_int_equal(u[2], 0x403000);

    /* max bounds each part */
    assert_true(perf_split_callchain(chain, 7, k, &nk, u, &nu, 2));
    assert_int_equal(nk, 2);
    assert_int_equal(nu, 2);
    assert_int_equal(u[1], 0x402000);
    assert_true(perf_split_callchain(chain, 7, k, &nk, u, &nu, 1));
    assert_int_equal(nk, 1);
    assert_int_equal(nu, 1);
    assert_int_equal(k[0], 0xffffffff81000010ull);
    assert_int_equal(u[0], 0x401000);

    /* user only; addresses under other contexts (guest, hypervisor) and before any marker are dropped */
    const uint64_t mixed[] = { 0x1, (uint64_t)PERF_CONTEXT_USER, 0x10, (uint64_t)PERF_CONTEXT_GUEST, 0x20,
                               (uint64_t)PERF_CONTEXT_HV, 0x30, (uint64_t)PERF_CONTEXT_USER, 0x40 };
    assert_true(perf_split_callchain(mixed, 9, k, &nk, u, &nu, 8));
    assert_int_equal(nk, 0);
    assert_int_equal(nu, 2);
    assert_int_equal(u[0], 0x10);
    assert_int_equal(u[1], 0x40);

    /* empty */
    assert_true(perf_split_callchain(chain, 0, k, &nk, u, &nu, 8));
    assert_int_equal(nk, 0);
    assert_int_equal(nu, 0);

    /* unaligned storage (a record copied at an odd offset) is read correctly */
    _Alignas(8) uint8_t raw[8 * 4 + 1];
    const uint64_t c2[] = { (uint64_t)PERF_CONTEXT_USER, 0xaaa, 0xbbb, 0xccc };
    memcpy(raw + 1, c2, sizeof(c2));
    assert_true(perf_split_callchain((const uint64_t *)(void *)(raw + 1), 4, k, &nk, u, &nu, 8));
    assert_int_equal(nu, 3);
    assert_int_equal(u[2], 0xccc);
}

static void test_unpack_regs(void **state)
{
    (void)state;
    struct image im;
    build_full(&im, 8);
    struct sample_layout layout = { FULL_TYPE, REGS_MASK };
    struct decoded_sample d;
    assert_int_equal(perf_decode_sample((const struct perf_event_header *)im.b, &layout, &d), 0);
    uint64_t regs[PERF_REG_X86_64_MAX];
    memset(regs, 0xff, sizeof(regs));
    perf_unpack_regs(&d, REGS_MASK, regs, PERF_REG_X86_64_MAX);
    for (int r = 0; r < PERF_REG_X86_64_MAX; r++) {
        uint64_t want = 0;
        switch (r) {
        case PERF_REG_X86_BX: want = 0xb0b0; break;
        case PERF_REG_X86_BP: want = 0x7ffc0010; break;
        case PERF_REG_X86_SP: want = 0x7ffc0000; break;
        case PERF_REG_X86_IP: want = 0x401000; break;
        case PERF_REG_X86_R15: want = 0xf15f15; break;
        default: break;
        }
        if (regs[r] != want)
            fail_msg("reg %d: %#llx, want %#llx", r, (unsigned long long)regs[r], (unsigned long long)want);
    }
    /* a smaller output array: registers past n are dropped, nothing written past it (ASan) */
    uint64_t *small = malloc(9 * sizeof(uint64_t));
    assert_non_null(small);
    perf_unpack_regs(&d, REGS_MASK, small, 9);
    assert_int_equal(small[PERF_REG_X86_BX], 0xb0b0);
    assert_int_equal(small[PERF_REG_X86_IP], 0x401000);
    assert_int_equal(small[PERF_REG_X86_AX], 0);
    free(small);
    /* no regs (kernel thread): all zero */
    struct decoded_sample none;
    memset(&none, 0, sizeof(none));
    memset(regs, 0xff, sizeof(regs));
    perf_unpack_regs(&none, REGS_MASK, regs, PERF_REG_X86_64_MAX);
    for (int r = 0; r < PERF_REG_X86_64_MAX; r++)
        assert_int_equal(regs[r], 0);
}

/* ---- other records ------------------------------------------------------------------------------------ */

/* MMAP2 with a sample_id trailer (TID, TIME, IDENTIFIER). */
static void build_mmap2(struct image *im, const char *filename, bool nul)
{
    img_start(im, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
    img_u32(im, 4242);                 /* pid */
    img_u32(im, 4243);                 /* tid */
    img_u64(im, 0x7f0000001000ull);    /* addr */
    img_u64(im, 0x23000);              /* len */
    img_u64(im, 0x2000);               /* pgoff */
    img_u32(im, 8);                    /* maj */
    img_u32(im, 1);                    /* min */
    img_u64(im, 123456);               /* ino */
    img_u64(im, 7);                    /* ino_generation */
    img_u32(im, 5);                    /* prot: PROT_READ | PROT_EXEC */
    img_u32(im, 2);                    /* flags: MAP_PRIVATE */
    img_bytes(im, filename, strlen(filename) + (nul ? 1 : 0));
    if (nul)
        img_pad8(im);
}

static void test_decode_mmap2(void **state)
{
    (void)state;
    struct image im;
    build_mmap2(&im, "/usr/lib/x86_64-linux-gnu/libc.so.6", true);
    img_u32(&im, 4242);
    img_u32(&im, 4243);
    img_u64(&im, 999);
    img_u64(&im, 0x1d1d);
    img_finish(&im);
    struct decoded_mmap2 m;
    const struct perf_event_header *rec = (const struct perf_event_header *)im.b;
    assert_int_equal(perf_decode_mmap2(rec, &m), 0);
    assert_int_equal(m.pid, 4242);
    assert_int_equal(m.tid, 4243);
    assert_int_equal(m.addr, 0x7f0000001000ull);
    assert_int_equal(m.len, 0x23000);
    assert_int_equal(m.pgoff, 0x2000);
    assert_int_equal(m.prot, 5);
    assert_string_equal(m.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    uint64_t id = 0;
    assert_true(perf_record_trailer_id(rec, &id));
    assert_int_equal(id, 0x1d1d);
    /* wrong type */
    struct image other = im;
    ((struct perf_event_header *)other.b)->type = PERF_RECORD_COMM;
    assert_int_equal(perf_decode_mmap2((const struct perf_event_header *)other.b, &m), -1);
    /* every prefix that cuts the filename's NUL (or the fixed part) is rejected */
    size_t name_end = 8 + 64 + strlen("/usr/lib/x86_64-linux-gnu/libc.so.6") + 1;
    for (size_t len = 8; len < name_end; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_mmap2(r, &m), -1);
        free(r);
    }
    struct perf_event_header *r = truncated_copy(&im, name_end);
    assert_int_equal(perf_decode_mmap2(r, &m), 0);
    assert_string_equal(m.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    free(r);
}

/* A filename that fills the record without a NUL: rejected, even if a NUL follows just past the record. */
static void test_mmap2_filename_without_nul(void **state)
{
    (void)state;
    struct image im;
    build_mmap2(&im, "/tmp/abcdefg", false);   /* 12 bytes, no NUL: the record is 8 + 64 + 12 = 84 bytes */
    img_finish(&im);
    im.b[im.n] = '\0';                           /* in the buffer, but outside the record */
    struct decoded_mmap2 m;
    assert_int_equal(perf_decode_mmap2((const struct perf_event_header *)im.b, &m), -1);
    struct perf_event_header *r = truncated_copy(&im, im.n);
    assert_int_equal(perf_decode_mmap2(r, &m), -1);
    free(r);
    /* an empty filename (just the NUL) is fine */
    struct image empty;
    build_mmap2(&empty, "", true);
    img_finish(&empty);
    assert_int_equal(perf_decode_mmap2((const struct perf_event_header *)empty.b, &m), 0);
    assert_string_equal(m.filename, "");
}

static void test_decode_comm(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
    img_u32(&im, 77);
    img_u32(&im, 78);
    img_bytes(&im, "tokio-runtime-w", 16);
    img_u32(&im, 77);
    img_u32(&im, 78);
    img_u64(&im, 555);
    img_u64(&im, 0xc0c0);
    img_finish(&im);
    struct decoded_comm c;
    const struct perf_event_header *rec = (const struct perf_event_header *)im.b;
    assert_int_equal(perf_decode_comm(rec, &c), 0);
    assert_int_equal(c.pid, 77);
    assert_int_equal(c.tid, 78);
    assert_string_equal(c.comm, "tokio-runtime-w");
    assert_true(c.exec);
    uint64_t id;
    assert_true(perf_record_trailer_id(rec, &id));
    assert_int_equal(id, 0xc0c0);
    /* not an exec */
    ((struct perf_event_header *)im.b)->misc = 0;
    assert_int_equal(perf_decode_comm(rec, &c), 0);
    assert_false(c.exec);
    /* cut before the NUL */
    for (size_t len = 8; len < 8 + 8 + 16; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_comm(r, &c), -1);
        free(r);
    }
    /* comm without NUL */
    struct image bad;
    img_start(&bad, PERF_RECORD_COMM, 0);
    img_u32(&bad, 1);
    img_u32(&bad, 1);
    img_bytes(&bad, "abcdefgh", 8);
    img_finish(&bad);
    bad.b[bad.n] = '\0';
    assert_int_equal(perf_decode_comm((const struct perf_event_header *)bad.b, &c), -1);
    /* wrong type */
    ((struct perf_event_header *)bad.b)->type = PERF_RECORD_EXIT;
    assert_int_equal(perf_decode_comm((const struct perf_event_header *)bad.b, &c), -1);
}

static void test_decode_fork_exit(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_FORK, 0);
    img_u32(&im, 10);      /* pid */
    img_u32(&im, 1);       /* ppid */
    img_u32(&im, 12);      /* tid */
    img_u32(&im, 10);      /* ptid */
    img_u64(&im, 987654321);
    img_finish(&im);
    struct decoded_task t;
    assert_int_equal(perf_decode_task((const struct perf_event_header *)im.b, &t), 0);
    assert_int_equal(t.pid, 10);
    assert_int_equal(t.ppid, 1);
    assert_int_equal(t.tid, 12);
    assert_int_equal(t.ptid, 10);
    assert_int_equal(t.time, 987654321);
    ((struct perf_event_header *)im.b)->type = PERF_RECORD_EXIT;
    memset(&t, 0, sizeof(t));
    assert_int_equal(perf_decode_task((const struct perf_event_header *)im.b, &t), 0);
    assert_int_equal(t.tid, 12);
    assert_int_equal(t.time, 987654321);
    ((struct perf_event_header *)im.b)->type = PERF_RECORD_COMM;
    assert_int_equal(perf_decode_task((const struct perf_event_header *)im.b, &t), -1);
    ((struct perf_event_header *)im.b)->type = PERF_RECORD_FORK;
    for (size_t len = 8; len < im.n; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_task(r, &t), -1);
        free(r);
    }
}

static void test_decode_lost(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_LOST, 0);
    img_u64(&im, 0x1d);    /* id */
    img_u64(&im, 31);      /* lost */
    img_finish(&im);
    uint64_t lost = 0;
    assert_int_equal(perf_decode_lost((const struct perf_event_header *)im.b, &lost), 0);
    assert_int_equal(lost, 31);
    for (size_t len = 8; len < im.n; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_lost(r, &lost), -1);
        free(r);
    }
    ((struct perf_event_header *)im.b)->type = PERF_RECORD_SAMPLE;
    assert_int_equal(perf_decode_lost((const struct perf_event_header *)im.b, &lost), -1);
}

static void test_decode_lost_samples(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_LOST_SAMPLES, 0);
    img_u64(&im, 17);      /* lost */
    img_u64(&im, 0x1d);    /* sample_id trailer: id */
    img_finish(&im);
    uint64_t lost = 0;
    assert_int_equal(perf_decode_lost_samples((const struct perf_event_header *)im.b, &lost), 0);
    assert_int_equal(lost, 17);
    for (size_t len = 8; len < 16; len++) {
        struct perf_event_header *r = truncated_copy(&im, len);
        assert_int_equal(perf_decode_lost_samples(r, &lost), -1);
        free(r);
    }
    ((struct perf_event_header *)im.b)->type = PERF_RECORD_LOST;
    assert_int_equal(perf_decode_lost_samples((const struct perf_event_header *)im.b, &lost), -1);
}

static void test_trailer_id(void **state)
{
    (void)state;
    struct image im;
    img_start(&im, PERF_RECORD_EXIT, 0);
    img_finish(&im);
    uint64_t id = 5;
    assert_false(perf_record_trailer_id((const struct perf_event_header *)im.b, &id));   /* header only */
    img_u64(&im, 0x12345678abcdull);
    img_finish(&im);
    assert_true(perf_record_trailer_id((const struct perf_event_header *)im.b, &id));
    assert_int_equal(id, 0x12345678abcdull);
    img_u64(&im, 0x42);
    img_finish(&im);
    struct perf_event_header *r = truncated_copy(&im, im.n);
    assert_true(perf_record_trailer_id(r, &id));
    assert_int_equal(id, 0x42);   /* the last u64, read inside the record */
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_full_sample),
        cmocka_unit_test(test_stack_dyn_size_clamped),
        cmocka_unit_test(test_truncated_full_sample),
        cmocka_unit_test(test_sample_without_user_regs),
        cmocka_unit_test(test_skipped_fields),
        cmocka_unit_test(test_raw_sample),
        cmocka_unit_test(test_bad_samples),
        cmocka_unit_test(test_split_callchain),
        cmocka_unit_test(test_unpack_regs),
        cmocka_unit_test(test_decode_mmap2),
        cmocka_unit_test(test_mmap2_filename_without_nul),
        cmocka_unit_test(test_decode_comm),
        cmocka_unit_test(test_decode_fork_exit),
        cmocka_unit_test(test_decode_lost),
        cmocka_unit_test(test_decode_lost_samples),
        cmocka_unit_test(test_trailer_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
