/* SPDX-License-Identifier: GPL-3.0-or-later */
/* marker_hits.c: reading marker hits from the BPF slots and the per-CPU marker buffers and queueing them
 * for the task tracker (records after the round's cut-off stay for the next read). */
#include "sampler/markers/markers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sampler/perf/perf_records.h"

/* A marker event's sample: 1 and *hit filled when it is a hit in the target, 0 when it fired in another
 * process (system-wide events) or is not ours, -1 when malformed. *time_ns is set whenever it parses. */
static int decode_hit(const struct markers *m, const struct perf_event_header *rec, struct marker_hit *hit,
                      uint64_t *time_ns)
{
    uint64_t id;
    uint32_t idx;
    if (rec->size < sizeof(*rec) + 8)
        return -1;
    memcpy(&id, rec + 1, 8);
    if (!u64_map_get(&m->probe_of_id, id, &idx))
        return 0;
    const struct marker_probe *p = &m->probes.v[idx];
    struct uprobe_sample s;
    if (uprobe_sample_parse(&p->plan, rec + 1, rec->size - sizeof(*rec), &s) != 0)
        return -1;
    *time_ns = s.time;
    if ((pid_t)s.pid != m->pid)
        return 0;
    uint64_t arg0 = 0;
    if (p->has_arg && uprobe_arg_decode(&p->arg0, &p->plan, &s, &arg0) != 0)
        return -1;
    hit->tid = s.tid;
    hit->time_ns = s.time;
    hit->kind = p->kind;
    hit->arg0 = arg0;
    hit->probe_addr = s.ip;
    return 1;
}

struct read_pass {
    struct markers *m;
    uint64_t until_ns;
    struct task_tracker *tasks;
    struct markers_read_counts *counts;
};

static enum ring_buffer_next read_record(void *ctx, const struct perf_event_header *rec)
{
    struct read_pass *r = ctx;
    if (rec->type == PERF_RECORD_SAMPLE) {
        struct marker_hit hit;
        uint64_t time_ns = 0;
        if (rec->size > r->m->largest_record)
            r->m->largest_record = rec->size;
        int rc = decode_hit(r->m, rec, &hit, &time_ns);
        if (time_ns > r->until_ns)
            return RING_BUFFER_KEEP;       /* samples up to its time may not have been read yet */
        if (rc == 1) {
            task_tracker_queue(r->tasks, &hit);
            r->counts->records++;
        }
    } else if (rec->type == PERF_RECORD_LOST) {
        uint64_t lost;
        if (perf_decode_lost(rec, &lost) == 0) {
            r->counts->lost += lost;
            task_tracker_lost(r->tasks);
        }
    } else if (rec->type == PERF_RECORD_THROTTLE) {
        /* The kernel dropped records (more hits per tick than kernel.perf_event_max_sample_rate allows):
         * which thread's is unknown. */
        r->counts->throttled++;
        task_tracker_lost(r->tasks);
    }
    return RING_BUFFER_CONTINUE;
}

/* A hit from a BPF slot. */
static void queue_bpf_record(void *ctx, const struct bpf_slot *rec)
{
    struct read_pass *r = ctx;
    if (rec->location >= r->m->probes.n || rec->time_ns < r->m->bpf_from_ns || rec->time_ns > r->m->bpf_until_ns)
        return;                        /* (a hit before the recording began or after it ended) */
    struct marker_hit hit = {
        .tid = rec->tid, .kind = r->m->probes.v[rec->location].kind, .time_ns = rec->time_ns, .arg0 = rec->arg0,
        .probe_addr = rec->ip, .ret_addr = rec->ret_addr, .ret_slot = rec->ret_slot,
    };
    task_tracker_queue(r->tasks, &hit);
    r->counts->records++;
}

void markers_read(struct markers *m, uint64_t until_ns, struct task_tracker *tasks,
                  struct markers_read_counts *counts)
{
    struct read_pass r = { m, until_ns, tasks, counts };
    if (m && m->bpf) {
        /* Every record at hand, also those after until_ns: the tracker keeps a thread's later hits queued
         * for the next round. */
        struct bpf_slots_loss loss;
        marker_bpf_read(m->bpf, queue_bpf_record, &r, &loss);
        uint64_t lost = loss.lapped + loss.unfinished + loss.torn;
        counts->lost_bpf_lapped += loss.lapped;
        counts->lost_bpf_unfinished += loss.unfinished;
        if (loss.max_backlog > counts->bpf_backlog)
            counts->bpf_backlog = loss.max_backlog;
        if (lost) {
            counts->lost += lost;
            counts->lost_bpf += lost;
            task_tracker_lost(tasks);
        }
    }
    if (m) {
        /* A full buffer drops records, but the kernel writes their PERF_RECORD_LOST only with its next record,
         * which may come in a later read, after the samples of this one are attributed. A buffer without room
         * for a marker record when read may have dropped some: a loss now, of an unknown thread. */
        size_t room = cpu_buffers_least_room(&m->buffers);
        cpu_buffers_drain(&m->buffers, read_record, &r);
        if (room < m->largest_record)
            task_tracker_lost(tasks);
    }
}
