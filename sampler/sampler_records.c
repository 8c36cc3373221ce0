/* sampler_records.c: what the ring buffers deliver: samples (unwound and attributed to the task their
 * thread polls), mappings, thread names, lost counts; and the round that reads marker records before the
 * samples of the same time span. */
#include "sampler/sampler_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sampler_name_thread(struct sampler *s, pid_t tid, const char *name)
{
    bool added;
    const struct thread_name *entry = thread_names_set(&s->names, tid, name, &added);
    if (!entry)
        return;
    if (added)
        s->stats.threads++;
    if (s->sink && s->sink->on_thread_name)
        s->sink->on_thread_name(s->sink->ctx, (uint32_t)(entry - s->names.v), tid, entry->name);
}

void sampler_emit_mapping(struct sampler *s, const struct proc_map *m)
{
    /* files, and the vDSO (named "[vdso]" in frames it has no symbols for); not [stack], [heap] etc. */
    if (!s->sink || !s->sink->on_mapping || !m->path[0] || (m->path[0] == '[' && strcmp(m->path, "[vdso]") != 0))
        return;
    bool map_file = strncmp(m->path, "/proc/", 6) == 0 && strstr(m->path, "/map_files/");
    struct sampler_mapping out = {
        .start = m->start, .end = m->end, .pgoff = m->pgoff, .path = m->path,
        .root = map_file ? "" : s->root,     /* a deleted file, opened through /proc/PID/map_files */
        .executable = m->executable,
    };
    s->sink->on_mapping(s->sink->ctx, &out);
}

static void reload_maps(struct sampler *s)
{
    uint64_t t = now_ns();
    if (t - s->last_maps_reload_ns < 100000000ull)
        return;
    s->last_maps_reload_ns = t;
    if (proc_maps_load(&s->maps, s->target.pid) != 0)
        return;
    for (size_t i = 0; i < s->maps.n; i++) {
        sampler_emit_mapping(s, &s->maps.v[i]);
        if (s->markers && s->maps.v[i].executable && s->maps.v[i].path[0] == '/')
            markers_scan_object(s->markers, s->maps.v[i].path);
    }
}

/* The user frames of a sample: unwound from its copied stack (dwarf), or its callchain's user part (fp).
 * An address outside every known mapping means code mapped since the last mmap record: reload the maps. */
static void user_frames(struct sampler *s, const struct decoded_sample *d, size_t n_chain_user,
                        struct sampler_sample *out)
{
    if (s->cfg.call_graph == SAMPLER_CALL_GRAPH_FP) {
        out->user_ips = s->chain_user;
        out->n_user = n_chain_user;
        out->truncated = n_chain_user >= SAMPLER_MAX_FRAMES - 2;
        if (n_chain_user > 0 && !proc_maps_find(&s->maps, s->chain_user[0]))
            reload_maps(s);
        return;
    }
    out->user_ips = s->user_ips;
    if (d->regs_abi == PERF_SAMPLE_REGS_ABI_NONE || !d->regs)
        return;
    perf_unpack_regs(d, s->layout.regs_user_mask, s->regs, PERF_REG_X86_64_MAX);
    if (!proc_maps_find(&s->maps, s->regs[PERF_REG_X86_IP]))
        reload_maps(s);
    bool truncated = false;
    out->n_user = unwinder_unwind(s->unwinder, s->regs, d->stack, d->stack ? d->stack_size : 0, s->user_ips,
                                  SAMPLER_MAX_FRAMES, &truncated);
    out->truncated = truncated;
}

static void handle_sample(struct sampler *s, const struct decoded_sample *d)
{
    if ((pid_t)d->pid != s->target.pid) {
        /* inherited events follow forked children too: they are not threads of the target */
        s->stats.other_processes++;
        return;
    }
    struct sampler_sample out;
    memset(&out, 0, sizeof(out));
    out.pid = (pid_t)d->pid;
    out.tid = (pid_t)d->tid;
    out.time_ns = d->time;
    size_t n_kernel = 0, n_chain_user = 0;
    if (d->callchain)
        perf_split_callchain(d->callchain, d->callchain_nr, s->kernel_ips, &n_kernel, s->chain_user,
                             &n_chain_user, SAMPLER_MAX_FRAMES);
    if (s->cfg.kernel) {
        out.kernel_ips = s->kernel_ips;
        out.n_kernel = n_kernel;
    }
    user_frames(s, d, n_chain_user, &out);
    if (out.n_user == 0 && out.n_kernel == 0)
        return;     /* a kernel thread, or kernel-only time with kernel frames not asked for */
    if (out.truncated)
        s->stats.unwind_truncated++;
    task_tracker_at(&s->tasks, d->tid, d->time, out.n_user ? out.user_ips[0] : 0, &out.task_state, &out.task_id,
                    &out.poll_probe_addr);
    if (out.task_state == SAMPLER_UNKNOWN_TASK)
        s->stats.unknown_task_samples++;
    long thread = thread_names_find(&s->names, out.tid);
    char name[THREAD_NAME_LEN + 8];
    if (thread < 0 && target_thread_name(s->target.pid, out.tid, name, sizeof(name))) {
        sampler_name_thread(s, out.tid, name);
        thread = thread_names_find(&s->names, out.tid);
    }
    out.thread = thread >= 0 ? (uint32_t)thread : SAMPLER_NO_THREAD;
    s->stats.samples++;
    if (s->sink && s->sink->on_sample)
        s->sink->on_sample(s->sink->ctx, &out);
}

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

/* A mapping the target made: known from now on, told to the sink, scanned for markers. */
static void handle_mmap2(struct sampler *s, const struct perf_event_header *rec)
{
    struct decoded_mmap2 m;
    if (perf_decode_mmap2(rec, &m) != 0 || (pid_t)m.pid != s->target.pid)
        return;
    struct proc_map pm = {
        .start = m.addr, .end = m.addr + m.len, .pgoff = m.pgoff, .readable = (m.prot & 1) != 0,
        .executable = (m.prot & 4) != 0, .path = (char *)m.filename,
    };
    if (strcmp(pm.path, "//anon") == 0)
        pm.path = (char *)"";
    if (proc_maps_insert(&s->maps, &pm) != 0)
        return;
    const struct proc_map *inserted = proc_maps_find(&s->maps, m.addr);
    if (!inserted)
        return;
    sampler_emit_mapping(s, inserted);
    if (s->markers && inserted->executable && inserted->path[0] == '/')
        markers_scan_object(s->markers, inserted->path);
}

/* A new thread of the target: named after /proc, else after its parent. */
static void handle_fork(struct sampler *s, const struct perf_event_header *rec)
{
    struct decoded_task t;
    if (perf_decode_task(rec, &t) != 0 || (pid_t)t.pid != s->target.pid || t.tid == t.ptid)
        return;
    const char *parent = thread_names_get(&s->names, (pid_t)t.ptid);
    char name[THREAD_NAME_LEN];
    snprintf(name, sizeof(name), "%s", parent ? parent : "");
    if (!target_thread_name(s->target.pid, (pid_t)t.tid, name, sizeof(name)) && !parent)
        snprintf(name, sizeof(name), "[thread]");
    sampler_name_thread(s, (pid_t)t.tid, name);
}

static enum ring_buffer_next handle_record(void *ctx, const struct perf_event_header *rec)
{
    struct sampler *s = ctx;
    if (record_time(rec) > s->round_end_ns)
        return RING_BUFFER_KEEP;   /* markers up to its time may not have been read yet */
    switch (rec->type) {
    case PERF_RECORD_SAMPLE: {           /* only the sampling events write here (markers: sampler/markers/) */
        struct decoded_sample d;
        if (perf_decode_sample(rec, &s->layout, &d) == 0)
            handle_sample(s, &d);
        break;
    }
    case PERF_RECORD_MMAP2:
        handle_mmap2(s, rec);
        break;
    case PERF_RECORD_COMM: {
        struct decoded_comm c;
        if (perf_decode_comm(rec, &c) == 0 && (pid_t)c.pid == s->target.pid)
            sampler_name_thread(s, (pid_t)c.tid, c.comm);
        break;
    }
    case PERF_RECORD_FORK:
        handle_fork(s, rec);
        break;
    case PERF_RECORD_LOST: {
        uint64_t lost;
        if (perf_decode_lost(rec, &lost) == 0) {
            s->stats.lost += lost;
            s->stats.lost_no_room += lost;
        }
        break;
    }
    case PERF_RECORD_LOST_SAMPLES: {
        uint64_t lost;
        if (perf_decode_lost_samples(rec, &lost) == 0) {
            s->stats.lost += lost;
            s->stats.lost_by_event += lost;
        }
        break;
    }
    default:
        break;
    }
    return RING_BUFFER_CONTINUE;
}

/* Peek pass: learn thread names first (a thread's name record may be in another CPU's buffer than its
 * samples, and a short-lived thread is gone from /proc by the time its samples are read). */
static enum ring_buffer_next peek_record(void *ctx, const struct perf_event_header *rec)
{
    struct sampler *s = ctx;
    if (record_time(rec) > s->round_end_ns)
        return RING_BUFFER_KEEP;
    if (rec->type == PERF_RECORD_COMM || rec->type == PERF_RECORD_FORK)
        return handle_record(ctx, rec);      /* naming twice (again in the drain pass) is harmless */
    return RING_BUFFER_CONTINUE;
}

/* One round: learn thread names, take every marker record up to the cut-off from the marker buffers, then
 * consume every sample up to it, so each sample sees all markers before it whichever CPU they came
 * through. The cut-off is a little in the past so records stamped before it but still being written are
 * not missed. */
void sampler_read_round(struct sampler *s, bool final)
{
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    s->round_end_ns = final ? UINT64_MAX : now_ns() - 2000000ull;
    cpu_buffers_peek(&s->cpus, peek_record, s);
    uint64_t cpu1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), cpu2 = cpu1;
    if (s->markers) {
        struct markers_read_counts got = { 0 };
        markers_read(s->markers, s->round_end_ns, &s->tasks, &got);
        s->stats.marker_records += got.records;
        s->stats.lost_markers += got.lost;
        s->stats.lost_markers_bpf += got.lost_bpf;
        s->stats.lost_markers_perf += got.lost - got.lost_bpf;
        s->stats.throttled_markers += got.throttled;
        /* every loss that read found happened before now: a poll-start after it makes a task known again */
        task_tracker_loss_seen_by(&s->tasks, now_ns());
        task_tracker_round_begin(&s->tasks);
        cpu2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    cpu_buffers_drain(&s->cpus, handle_record, s);
    uint64_t cpu3 = clock_ns(CLOCK_THREAD_CPUTIME_ID), cpu4 = cpu3;
    if (s->markers) {
        task_tracker_round_end(&s->tasks, s->round_end_ns);
        cpu4 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    s->stats.marker_cpu_ns += (cpu2 - cpu1) + (cpu4 - cpu3);
    s->stats.processing_cpu_ns += cpu4 - cpu0;
}
