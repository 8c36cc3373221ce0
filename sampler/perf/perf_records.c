/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perf_records.c: bounds-checked decoding of perf_event ring-buffer records. */
#include "sampler/perf/perf_records.h"

#include <string.h>

struct cursor {
    const uint8_t *p, *end;
};

static bool take_u64(struct cursor *c, uint64_t *v)
{
    if ((size_t)(c->end - c->p) < 8)
        return false;
    memcpy(v, c->p, 8);
    c->p += 8;
    return true;
}

static bool take_ptr(struct cursor *c, uint64_t bytes, const uint8_t **out)
{
    if ((uint64_t)(c->end - c->p) < bytes)
        return false;
    *out = c->p;
    c->p += bytes;
    return true;
}

int perf_decode_sample(const struct perf_event_header *rec, const struct sample_layout *layout,
                       struct decoded_sample *out)
{
    memset(out, 0, sizeof(*out));
    if (rec->type != PERF_RECORD_SAMPLE || rec->size < sizeof(*rec))
        return -1;
    struct cursor c = { (const uint8_t *)(rec + 1), (const uint8_t *)rec + rec->size };
    uint64_t t = layout->sample_type, v;
    if (t & PERF_SAMPLE_IDENTIFIER && !take_u64(&c, &out->id))
        return -1;
    if (t & PERF_SAMPLE_IP && !take_u64(&c, &out->ip))
        return -1;
    if (t & PERF_SAMPLE_TID) {
        if (!take_u64(&c, &v))
            return -1;
        out->pid = (uint32_t)v;
        out->tid = (uint32_t)(v >> 32);
    }
    if (t & PERF_SAMPLE_TIME && !take_u64(&c, &out->time))
        return -1;
    if (t & PERF_SAMPLE_ADDR && !take_u64(&c, &v))
        return -1;
    if (t & PERF_SAMPLE_ID && !take_u64(&c, &v))
        return -1;
    if (t & PERF_SAMPLE_STREAM_ID && !take_u64(&c, &v))
        return -1;
    if (t & PERF_SAMPLE_CPU && !take_u64(&c, &v))
        return -1;
    if (t & PERF_SAMPLE_PERIOD && !take_u64(&c, &v))
        return -1;
    if (t & PERF_SAMPLE_READ)
        return -1;  /* never requested */
    if (t & PERF_SAMPLE_CALLCHAIN) {
        const uint8_t *p;
        if (!take_u64(&c, &out->callchain_nr) || out->callchain_nr > 65536 ||
            !take_ptr(&c, out->callchain_nr * 8, &p))
            return -1;
        out->callchain = (const uint64_t *)p;
    }
    if (t & PERF_SAMPLE_RAW) {
        uint32_t size;
        if ((size_t)(c.end - c.p) < 4)
            return -1;
        memcpy(&size, c.p, 4);
        c.p += 4;
        if (!take_ptr(&c, size, &out->raw))
            return -1;
        out->raw_size = size;
    }
    if (t & PERF_SAMPLE_BRANCH_STACK)
        return -1;  /* never requested */
    if (t & PERF_SAMPLE_REGS_USER) {
        if (!take_u64(&c, &out->regs_abi))
            return -1;
        if (out->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
            const uint8_t *p;
            uint32_t n = (uint32_t)__builtin_popcountll(layout->regs_user_mask);
            if (!take_ptr(&c, (uint64_t)n * 8, &p))
                return -1;
            out->regs = (const uint64_t *)p;
            out->n_regs = n;
        }
    }
    if (t & PERF_SAMPLE_STACK_USER) {
        uint64_t size;
        if (!take_u64(&c, &size))
            return -1;
        if (size) {
            const uint8_t *p;
            uint64_t dyn;
            if (!take_ptr(&c, size, &p) || !take_u64(&c, &dyn))
                return -1;
            out->stack = p;
            out->stack_size = dyn < size ? dyn : size;
        }
    }
    return 0;
}

void perf_unpack_regs(const struct decoded_sample *s, uint64_t mask, uint64_t *regs, size_t n)
{
    memset(regs, 0, n * sizeof(*regs));
    uint32_t at = 0;
    for (size_t bit = 0; bit < 64 && at < s->n_regs; bit++) {
        if (!(mask & (1ULL << bit)))
            continue;
        uint64_t v;
        memcpy(&v, &s->regs[at++], 8);
        if (bit < n)
            regs[bit] = v;
    }
}

bool perf_split_callchain(const uint64_t *chain, uint64_t nr, uint64_t *kernel, size_t *n_kernel,
                          uint64_t *user, size_t *n_user, size_t max)
{
    *n_kernel = *n_user = 0;
    int ctx = 0; /* 1 kernel, 2 user, 0 other (hypervisor, guest) */
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t ip;
        memcpy(&ip, &chain[i], 8);
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
            if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
                ctx = 1;
            else if (ip == (uint64_t)PERF_CONTEXT_USER)
                ctx = 2;
            else
                ctx = 0;
            continue;
        }
        if (ctx == 1 && *n_kernel < max)
            kernel[(*n_kernel)++] = ip;
        else if (ctx == 2 && *n_user < max)
            user[(*n_user)++] = ip;
    }
    return true;
}

bool perf_record_trailer_id(const struct perf_event_header *rec, uint64_t *id)
{
    if (rec->size < sizeof(*rec) + 8)
        return false;
    memcpy(id, (const uint8_t *)rec + rec->size - 8, 8);
    return true;
}

/* Copy a NUL-terminated string field that must end inside [p, end). */
static const char *string_in(const uint8_t *p, const uint8_t *end)
{
    const void *nul = memchr(p, '\0', (size_t)(end - p));
    return nul ? (const char *)p : NULL;
}

int perf_decode_mmap2(const struct perf_event_header *rec, struct decoded_mmap2 *out)
{
    /* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation (or build id), prot, flags, filename */
    const size_t fixed = 4 + 4 + 8 * 3 + 4 + 4 + 8 + 8 + 4 + 4;
    if (rec->type != PERF_RECORD_MMAP2 || rec->size < sizeof(*rec) + fixed + 1)
        return -1;
    const uint8_t *p = (const uint8_t *)(rec + 1), *end = (const uint8_t *)rec + rec->size;
    memcpy(&out->pid, p, 4);
    memcpy(&out->tid, p + 4, 4);
    memcpy(&out->addr, p + 8, 8);
    memcpy(&out->len, p + 16, 8);
    memcpy(&out->pgoff, p + 24, 8);
    memcpy(&out->prot, p + 32 + 4 + 4 + 8 + 8, 4);
    out->filename = string_in(p + fixed, end);
    return out->filename ? 0 : -1;
}

int perf_decode_comm(const struct perf_event_header *rec, struct decoded_comm *out)
{
    if (rec->type != PERF_RECORD_COMM || rec->size < sizeof(*rec) + 8 + 1)
        return -1;
    const uint8_t *p = (const uint8_t *)(rec + 1), *end = (const uint8_t *)rec + rec->size;
    memcpy(&out->pid, p, 4);
    memcpy(&out->tid, p + 4, 4);
    out->comm = string_in(p + 8, end);
    out->exec = (rec->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
    return out->comm ? 0 : -1;
}

int perf_decode_task(const struct perf_event_header *rec, struct decoded_task *out)
{
    if ((rec->type != PERF_RECORD_FORK && rec->type != PERF_RECORD_EXIT) || rec->size < sizeof(*rec) + 24)
        return -1;
    const uint8_t *p = (const uint8_t *)(rec + 1);
    memcpy(&out->pid, p, 4);
    memcpy(&out->ppid, p + 4, 4);
    memcpy(&out->tid, p + 8, 4);
    memcpy(&out->ptid, p + 12, 4);
    memcpy(&out->time, p + 16, 8);
    return 0;
}

int perf_decode_lost(const struct perf_event_header *rec, uint64_t *lost)
{
    if (rec->type != PERF_RECORD_LOST || rec->size < sizeof(*rec) + 16)
        return -1;
    memcpy(lost, (const uint8_t *)(rec + 1) + 8, 8);
    return 0;
}

int perf_decode_lost_samples(const struct perf_event_header *rec, uint64_t *lost)
{
    if (rec->type != PERF_RECORD_LOST_SAMPLES || rec->size < sizeof(*rec) + 8)
        return -1;
    memcpy(lost, rec + 1, 8);
    return 0;
}
