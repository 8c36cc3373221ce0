/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_perf_records.c: libFuzzer target for the perf ring-buffer walker and record decoders. The input
 * after its first byte is laid out circularly in a synthetic ring buffer (size: the next power of two,
 * start: chosen by byte 0, so records may wrap around its end), data_head = data_tail + its length; each
 * record is peeked, then drained, and handed to perf_decode_sample (several sample layouts), mmap2, comm,
 * fork/exit and lost decoders. Asserts every decoded pointer stays inside the record. */
#include "sampler/perf/perf_records.h"
#include "sampler/perf/ring_buffer.h"

#include <asm/perf_regs.h>
#include <stdlib.h>
#include <string.h>

static const struct sample_layout layouts[] = {
    /* cpu-clock sampling with frame-pointer / DWARF call graphs, as sampler.c asks */
    {PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN, 0},
    {PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
         PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 0x1ff00ffull},
    /* uprobe markers: registers only, or raw tracefs data */
    {PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER, 1ull << PERF_REG_X86_DI},
    {PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW, 0},
    /* everything decodable at once */
    {PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
         PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
         PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, ~0ull},
};

static void inside(const struct perf_event_header *rec, const void *p, uint64_t len)
{
    const uint8_t *b = (const uint8_t *)rec, *e = b + rec->size, *q = p;
    if (q < b || q > e || len > (uint64_t)(e - q))
        abort();
}

static void decode(const struct perf_event_header *rec)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof(h));               /* the walker promises h.size bytes at rec */
    if (h.size < sizeof(h))
        abort();
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        struct decoded_sample s;
        if (perf_decode_sample(rec, &layouts[i], &s) != 0)
            continue;
        if (s.callchain) {
            inside(rec, s.callchain, s.callchain_nr * 8);
            uint64_t k[64], u[64];
            size_t nk, nu;
            perf_split_callchain(s.callchain, s.callchain_nr, k, &nk, u, &nu, 64);
            if (nk > 64 || nu > 64)
                abort();
        }
        if (s.raw)
            inside(rec, s.raw, s.raw_size);
        if (s.regs) {
            inside(rec, s.regs, (uint64_t)s.n_regs * 8);
            uint64_t regs[PERF_REG_X86_64_MAX];
            perf_unpack_regs(&s, layouts[i].regs_user_mask, regs, PERF_REG_X86_64_MAX);
        }
        if (s.stack)
            inside(rec, s.stack, s.stack_size);
    }
    struct decoded_mmap2 m;
    if (perf_decode_mmap2(rec, &m) == 0)
        inside(rec, m.filename, strlen(m.filename) + 1);
    struct decoded_comm c;
    if (perf_decode_comm(rec, &c) == 0)
        inside(rec, c.comm, strlen(c.comm) + 1);
    struct decoded_task t;
    (void)perf_decode_task(rec, &t);
    uint64_t v;
    (void)perf_decode_lost(rec, &v);
    (void)perf_record_trailer_id(rec, &v);
}

struct walk_ctx {
    long seen;
    int stop_after;
};

static enum ring_buffer_next on_record(void *ctx, const struct perf_event_header *rec)
{
    struct walk_ctx *w = ctx;
    decode(rec);
    w->seen++;
    if (w->stop_after >= 0 && w->seen == w->stop_after)
        return RING_BUFFER_KEEP;
    return RING_BUFFER_CONTINUE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t ctl = data[0];
    data++;
    size--;
    size_t cap = 64;
    while (cap < size)
        cap *= 2;
    /* one allocation of exactly the data area, so a read past it is caught */
    uint8_t *area = malloc(cap);
    struct perf_event_mmap_page *meta = calloc(1, sizeof(*meta));
    if (!area || !meta) {
        free(area);
        free(meta);
        return 0;
    }
    memset(area, 0xa5, cap);
    /* bytes 0-5 of ctl: start position in 8-byte steps; records may then wrap */
    uint64_t start = ((uint64_t)(ctl & 0x3f) * 8) & (cap - 1);
    for (size_t i = 0; i < size; i++)
        area[(start + i) & (cap - 1)] = data[i];
    uint64_t base = (ctl & 0x40) ? 1ull << 48 : 0;    /* tail far from zero (a multiple of cap): counters never reset */
    meta->data_tail = base + start;
    meta->data_head = base + start + size;

    struct ring_buffer rb;
    if (ring_buffer_wrap(&rb, meta, area, cap) != 0)
        abort();
    struct walk_ctx w = {0, -1};
    long peeked = ring_buffer_peek(&rb, on_record, &w);
    if (meta->data_tail != base + start)
        abort();                                  /* peek must not consume */
    w = (struct walk_ctx){0, (ctl & 0x80) ? 1 : -1};
    long drained = ring_buffer_drain(&rb, on_record, &w);
    if (drained >= 0 && peeked >= 0 && (ctl & 0x80) == 0 && drained != peeked)
        abort();
    if (meta->data_tail < base + start || meta->data_tail > base + start + size)
        abort();
    /* what KEEP left behind is walked again by the next drain */
    w = (struct walk_ctx){0, -1};
    (void)ring_buffer_drain(&rb, on_record, &w);
    if (meta->data_tail != meta->data_head)
        abort();
    ring_buffer_unmap(&rb);
    free(area);
    free(meta);
    return 0;
}
