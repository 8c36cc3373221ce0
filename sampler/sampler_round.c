/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_round.c: the reading thread's round: copy every record up to the round's cut-off out of the sample
 * ring buffers at once, the marker records of the same time span first, so each sample is attributed (the
 * task its thread polled at its time) as it is copied; then hand the batch to the processing thread
 * (sampler_records.c), which does the slow work. Thread names learnt here (threads attached while recording)
 * and progress reports travel in the batch too, so the sink hears everything from one thread, in order. */
#include "sampler/sampler_internal.h"

#include <string.h>

/* The time of a record: samples carry it after IDENTIFIER, IP and TID; other records in their sample_id
 * trailer (TID, TIME, IDENTIFIER at the end). 0 when absent. */
static uint64_t record_time(const struct perf_event_header *rec)
{
    uint64_t t = 0;
    if (rec->type == PERF_RECORD_SAMPLE) {
        if (rec->size >= sizeof(*rec) + 32)
            memcpy(&t, (const uint8_t *)(rec + 1) + 24, 8);
    } else if (rec->size >= sizeof(*rec) + 24) {
        memcpy(&t, (const uint8_t *)rec + rec->size - 16, 8);
    }
    return t;
}

static void add_entry(struct sampler *s, const struct queued_entry *e, const void *data)
{
    if (record_batch_add(&s->batch, e, data) != 0)
        s->copy_failures++;
}

/* The sampled user instruction: the user registers' ip (dwarf), or the callchain's first user entry (fp). */
static uint64_t sampled_user_ip(const struct sampler *s, const struct decoded_sample *d)
{
    if (d->regs && d->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
        uint64_t regs[PERF_REG_X86_64_MAX];
        perf_unpack_regs(d, s->layout.regs_user_mask, regs, PERF_REG_X86_64_MAX);
        return regs[PERF_REG_X86_IP];
    }
    bool user = false;
    for (uint64_t i = 0; d->callchain && i < d->callchain_nr; i++) {
        if (d->callchain[i] >= (uint64_t)PERF_CONTEXT_MAX)
            user = d->callchain[i] == (uint64_t)PERF_CONTEXT_USER;
        else if (user)
            return d->callchain[i];
    }
    return 0;
}

/* A sample's entry: the task its thread polled at its time (or the TLS marker read with the sample). */
static void attribute_sample(struct sampler *s, const struct decoded_sample *d, struct queued_entry *e)
{
    struct task_tracker_sample at;
    task_tracker_sample(&s->tasks, d->tid, d->time, sampled_user_ip(s, d), &at);
    enum sampler_task_state state = at.state;
    e->task_id = at.task_id;
    e->probe_addr = at.probe_addr;
    e->ret_slot = at.ret_slot;
    e->ret_addr = at.ret_addr;
    e->last_hit_addr = at.last_hit_addr;
    e->trap_addr = d->ip >= KERNEL_ADDRESSES_START ? at.trap_addr : 0;   /* taken in the kernel: in the trap */
    bool provisional;
    sampler_tls_sample(s, d->tid, d->time, &state, &e->task_id, &e->probe_addr, &provisional);   /* the TLS marker
                                                                                                 decides */
    e->task_state = state;
    e->aux = provisional ? QUEUED_TASK_PROVISIONAL : 0;
}

/* Queue a sample, attributed. Its user stack copy (dwarf, the record's last field) holds only dyn_size valid
 * bytes of the size the event reserves (the kernel stops copying at the first unreadable page, often the
 * top of a thread's stack): the queued record is the same sample with the stack cut to those bytes, so
 * neither the copy nor the queue carries the rest. */
static void add_sample(struct sampler *s, const struct perf_event_header *rec, struct queued_entry *e)
{
    struct decoded_sample d;
    if (perf_decode_sample(rec, &s->layout, &d) != 0) {
        add_entry(s, e, rec);
        return;
    }
    attribute_sample(s, &d, e);
    const uint8_t *start = (const uint8_t *)rec, *end = start + rec->size;
    uint64_t reserved = 0, kept = (d.stack_size + 7u) & ~(uint64_t)7u;
    if (d.stack)
        memcpy(&reserved, d.stack - 8, 8);
    if (!d.stack || kept >= reserved || d.stack + reserved + 8 != end) {
        add_entry(s, e, rec);
        return;
    }
    struct perf_event_header header = *rec;
    uint64_t dyn_size = d.stack_size;
    size_t before = (size_t)(d.stack - 8 - start) - sizeof(header);   /* the fields between header and size */
    header.size = (uint16_t)(sizeof(header) + before + 8 + kept + 8);
    e->size = header.size;
    struct batch_piece pieces[] = {
        { &header, sizeof(header) }, { start + sizeof(header), before }, { &kept, 8 }, { d.stack, kept },
        { &dyn_size, 8 },
    };
    if (record_batch_add_pieces(&s->batch, e, pieces, sizeof(pieces) / sizeof(pieces[0])) != 0)
        s->copy_failures++;
}

/* Markers in an object the target maps from now on (the processing thread learns the mapping itself). */
static void scan_mapping(struct sampler *s, const struct perf_event_header *rec)
{
    struct decoded_mmap2 m;
    if (perf_decode_mmap2(rec, &m) != 0 || (pid_t)m.pid != s->target.pid || !(m.prot & 4) || m.filename[0] != '/')
        return;
    if (s->markers)
        markers_scan_object(s->markers, m.filename, false);   /* the reading thread never waits for a download */
    sampler_tls_mapping(s, m.filename, m.addr, m.addr + m.len, m.pgoff);
}

/* A thread of the target our events see (born under one, which it inherited, or named in one's records): no
 * event of its own is needed. */
static void note_thread(struct sampler *s, const struct perf_event_header *rec)
{
    struct decoded_task t;
    struct decoded_comm c;
    if (rec->type == PERF_RECORD_FORK && perf_decode_task(rec, &t) == 0 && (pid_t)t.pid == s->target.pid &&
        t.tid != t.ptid)
        u64_map_put(&s->born, t.tid, 1);
    else if (rec->type == PERF_RECORD_COMM && perf_decode_comm(rec, &c) == 0 && (pid_t)c.pid == s->target.pid)
        u64_map_put(&s->born, c.tid, 1);
}

static enum ring_buffer_next copy_record(void *ctx, const struct perf_event_header *rec)
{
    struct sampler *s = ctx;
    if (record_time(rec) > s->round_end_ns)
        return RING_BUFFER_KEEP;   /* markers up to its time may not have been read yet */
    struct queued_entry e = { .kind = QUEUED_RECORD, .size = rec->size };
    uint64_t lost;
    switch (rec->type) {
    case PERF_RECORD_SAMPLE:
        if (sampler_wait_copy(s, rec))
            return RING_BUFFER_CONTINUE;     /* a waker-registration stack: queued after the round's events */
        add_sample(s, rec, &e);
        return RING_BUFFER_CONTINUE;
    case PERF_RECORD_MMAP2:
        scan_mapping(s, rec);
        break;
    case PERF_RECORD_FORK:
    case PERF_RECORD_COMM:
        note_thread(s, rec);
        break;
    case PERF_RECORD_LOST:
        if (perf_decode_lost(rec, &lost) == 0) {
            s->stats.lost += lost;
            s->stats.lost_no_room += lost;
        }
        return RING_BUFFER_CONTINUE;
    case PERF_RECORD_LOST_SAMPLES:
        if (perf_decode_lost_samples(rec, &lost) == 0) {
            s->stats.lost += lost;
            s->stats.lost_by_event += lost;
        }
        return RING_BUFFER_CONTINUE;
    default:
        break;
    }
    add_entry(s, &e, rec);
    return RING_BUFFER_CONTINUE;
}

/* Peek pass: thread names first (a thread's name record may be in another CPU's buffer than its samples, and a
 * short-lived thread is gone from /proc by the time its samples are processed). */
static enum ring_buffer_next peek_record(void *ctx, const struct perf_event_header *rec)
{
    struct sampler *s = ctx;
    if (record_time(rec) > s->round_end_ns)
        return RING_BUFFER_KEEP;
    if (rec->type == PERF_RECORD_COMM || rec->type == PERF_RECORD_FORK)
        return copy_record(ctx, rec);      /* naming twice (again in the drain pass) is harmless */
    return RING_BUFFER_CONTINUE;
}

void sampler_name_thread_later(struct sampler *s, pid_t tid, const char *name)
{
    if (!s->processing) {
        sampler_name_thread(s, tid, name);
        return;
    }
    struct queued_entry e = { .kind = QUEUED_THREAD_NAME, .size = (uint32_t)strlen(name) + 1,
                              .task_id = (uint64_t)tid };
    add_entry(s, &e, name);
}

void sampler_relay_warning(void *ctx, const char *message)
{
    struct sampler *s = ctx;
    if (!s->processing) {
        if (s->cfg.on_warning)
            s->cfg.on_warning(s->cfg.warning_ctx, message);
        return;
    }
    struct queued_entry e = { .kind = QUEUED_WARNING, .size = (uint32_t)strlen(message) + 1 };
    add_entry(s, &e, message);
}

void sampler_queue_poll(void *ctx, const struct sampler_poll *p)
{
    struct sampler *s = ctx;
    struct queued_entry e = { .kind = QUEUED_POLL, .size = (uint32_t)sizeof(*p) };
    struct sampler_poll named = *p;
    if (s->tls)
        named.task_id = tls_join_task_of_probe_id(s->tls, p->task_id, p->start_addr);   /* the samples' ids */
    add_entry(s, &e, &named);
}

void sampler_queue_progress(struct sampler *s, uint64_t t)
{
    struct queued_entry e = { .kind = QUEUED_PROGRESS, .time_ns = t, .polls = s->tasks.polls,
                              .tasks_seen = s->tls ? tls_join_tasks_seen(s->tls) : s->tasks.tasks.n,
                              .lost = s->stats.lost };
    add_entry(s, &e, NULL);
    sampler_hand_over(s, false);
}

void sampler_hand_over(struct sampler *s, bool wait)
{
    if (!s->batch.bytes.n)
        return;
    if (s->processing) {
        /* The processing thread holds the queue's lock only briefly, but on a loaded machine it can be
         * preempted holding it, and the reading thread (a real-time one when it may: sampler.c) must not wait
         * for it while the BPF slot regions fill: it keeps the batch and offers it again, with the next
         * round's records, after its next round. */
        if (!wait && s->batch.bytes.n < SAMPLER_BATCH_KEEP_MAX_BYTES && record_queue_offer(&s->queue, &s->batch) == 1)
            return;
        if (s->batch.bytes.n)
            record_queue_push(&s->queue, &s->batch);
    } else {
        sampler_process_batch(s, &s->batch);    /* no processing thread (it could not start): here */
        record_batch_free(&s->batch);
    }
}

/* One round: learn thread names, take every marker record up to the cut-off from the marker buffers, then
 * copy every sample up to it, attributed, so each sample sees all markers before it whichever CPU they came
 * through. The cut-off is a little in the past so records stamped before it but still being written are
 * not missed. */
void sampler_read_round(struct sampler *s, bool final)
{
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), began = now_ns();
    uint64_t gap = s->last_round_ns && began > s->last_round_ns ? began - s->last_round_ns : 0;
    if (gap > s->stats.reader_longest_gap_ns) {
        s->stats.reader_longest_gap_ns = gap;
        s->stats.reader_longest_gap_at_ns = began > s->start_ns ? began - s->start_ns : 0;
    }
    s->last_round_ns = began;
    s->round_end_ns = final ? UINT64_MAX : began - 2000000ull;
    cpu_buffers_peek(&s->cpus, peek_record, s);
    uint64_t cpu1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), cpu2 = cpu1;
    if (s->markers) {
        struct markers_read_counts got = { 0 };
        markers_read(s->markers, s->round_end_ns, &s->tasks, &got);
        s->stats.marker_records += got.records;
        s->stats.lost_markers += got.lost;
        s->stats.lost_markers_bpf += got.lost_bpf;
        s->stats.lost_markers_perf += got.lost - got.lost_bpf;
        s->stats.lost_markers_lapped += got.lost_bpf_lapped;
        s->stats.lost_markers_unfinished += got.lost_bpf_unfinished;
        if (got.bpf_backlog > s->stats.bpf_backlog)
            s->stats.bpf_backlog = got.bpf_backlog;
        if (got.lost > s->stats.worst_loss) {
            s->stats.worst_loss = got.lost;
            s->stats.worst_loss_at_ns = began > s->start_ns ? began - s->start_ns : 0;
            s->stats.worst_loss_gap_ns = gap;
        }
        s->stats.throttled_markers += got.throttled;
        /* every loss that read found happened before now: a poll-start after it makes a task known again */
        task_tracker_loss_seen_by(&s->tasks, now_ns());
        task_tracker_round_begin(&s->tasks);
        cpu2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    cpu_buffers_drain_in_time_order(&s->cpus, record_time, copy_record, s);
    uint64_t cpu3 = clock_ns(CLOCK_THREAD_CPUTIME_ID), cpu4 = cpu3;
    if (s->markers) {
        task_tracker_round_end(&s->tasks, s->round_end_ns);
        cpu4 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    sampler_wait_round_end(s, s->round_end_ns);
    sampler_hand_over(s, final);
    s->stats.marker_cpu_ns += (cpu2 - cpu1) + (cpu4 - cpu3);
    s->stats.processing_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    uint64_t took = now_ns() - began;
    if (took > s->stats.reader_longest_round_ns)
        s->stats.reader_longest_round_ns = took;
}
