/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_records.c: the processing thread: it takes the batches of records the reading thread copied out of
 * the ring buffers (sampler_round.c) and does the slow work in their order: samples unwound and handed to the
 * sink with the task the reader attributed them to, mappings, thread names, progress. Every sink callback
 * during the recording comes from this thread. */
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

/* Code mapped since the last mmap record (or before recording, unseen): read /proc/PID/maps again. (Markers in
 * new objects are the reading thread's: it scans what mmap records map.) */
static void reload_maps(struct sampler *s)
{
    uint64_t t = now_ns();
    if (t - s->last_maps_reload_ns < 100000000ull)
        return;
    s->last_maps_reload_ns = t;
    if (proc_maps_load(&s->maps, s->target.pid) != 0)
        return;
    for (size_t i = 0; i < s->maps.n; i++)
        sampler_emit_mapping(s, &s->maps.v[i]);
}

/* The user frames of a sample: unwound from its copied stack (dwarf), or its callchain's user part (fp).
 * An address outside every known mapping means code mapped since the last mmap record: reload the maps. */
/* The "[uprobes]" mapping holding addr (return probes' trampoline, out-of-line single steps), or NULL; the maps
 * are read again when addr is in no known mapping. */
static const struct proc_map *uprobes_page(struct sampler *s, uint64_t addr)
{
    const struct proc_map *m = proc_maps_find(&s->maps, addr);
    if (!m) {
        reload_maps(s);
        m = proc_maps_find(&s->maps, addr);
    }
    return m && strcmp(m->path, "[uprobes]") == 0 ? m : NULL;
}

/* The kernel's slots in that page are 128 bytes; the first is the return probes' trampoline. */
#define UPROBES_SLOT_BYTES 128u

/* The instruction a sampled ip stands for: in the trampoline, the poll function has returned to ret_addr;
 * in another slot, a probed instruction (the thread's last hit, at last_hit_addr) is being single-stepped
 * out of line, ip's place in the slot telling how far; at or one past a probe whose trap the sample was taken
 * in, that probe's instruction, taken as not run yet (unwound from one past it, a probed function's first
 * push would be taken as run and its caller read from the wrong slot; the other state, that push emulated,
 * is tried too: sampler_user_frames); elsewhere, itself. *returned (if not NULL): ip is in the trampoline and
 * ret_addr known. */
static uint64_t real_ip(struct sampler *s, uint64_t ip, const struct queued_entry *e, bool *returned)
{
    if (returned)
        *returned = false;
    if (e->trap_addr)   /* set only when this ip is at or one past it (task_tracker_sample) */
        return e->trap_addr;
    const struct proc_map *page = uprobes_page(s, ip);
    if (!page)
        return ip;
    uint64_t in_slot = (ip - page->start) % UPROBES_SLOT_BYTES;
    if (ip - page->start < UPROBES_SLOT_BYTES) {
        if (returned)
            *returned = e->ret_addr != 0;
        return e->ret_addr ? e->ret_addr : ip;
    }
    return e->last_hit_addr ? e->last_hit_addr + in_slot : ip;
}

/* Whether addr is in a return probe's trampoline (the first slot of the "[uprobes]" page). */
static bool in_trampoline(struct sampler *s, uint64_t addr)
{
    const struct proc_map *page = uprobes_page(s, addr);
    return page && addr - page->start < UPROBES_SLOT_BYTES;
}

/* A stack cut at a return probe's trampoline with no return address to put back: another tracer's return
 * probes are on the poll functions, whose entries read that address only once told (the wait profile's
 * events, whose cost per hit SPEC 7 holds). The first such stack tells them, once: the polls begun from then
 * on unwind whole. */
static void ask_return_reads(struct sampler *s)
{
    s->cut_at_trampoline = true;
    if (s->return_reads_asked)
        return;
    s->return_reads_asked = true;
    uint64_t now = now_ns();
    if (markers_read_return_addresses(s->markers) == 0)
        s->stats.return_reads_at_s = now > s->start_ns ? (double)(now - s->start_ns) / 1e9 : 0;
}

/* The unwind's state moved bytes up the stack: the stack pointer, and the copy, which starts at it. */
static void skip_stack(uint64_t *regs, uint8_t **stack, size_t *stack_len, size_t bytes)
{
    regs[PERF_REG_X86_SP] += bytes;
    *stack += bytes;
    *stack_len -= bytes;
}

void sampler_user_frames(struct sampler *s, const struct decoded_sample *d, size_t n_chain_user,
                         const struct queued_entry *e, struct sampler_sample *out)
{
    s->cut_at_trampoline = false;
    if (s->cfg.call_graph == SAMPLER_CALL_GRAPH_FP) {
        out->user_ips = s->chain_user;
        out->n_user = n_chain_user;
        out->truncated = n_chain_user >= SAMPLER_MAX_FRAMES - 2;
        /* the sampled instruction; further up, the trampoline stands where the poll's caller's return was */
        for (size_t i = 0; i < n_chain_user; i++)
            if (i == 0 || (e->ret_addr && uprobes_page(s, s->chain_user[i])))
                s->chain_user[i] = i == 0 ? real_ip(s, s->chain_user[0], e, NULL) : e->ret_addr;
        return;
    }
    out->user_ips = s->user_ips;
    if (d->regs_abi == PERF_SAMPLE_REGS_ABI_NONE || !d->regs)
        return;
    perf_unpack_regs(d, s->layout.regs_user_mask, s->regs, PERF_REG_X86_64_MAX);
    bool returned;
    s->regs[PERF_REG_X86_IP] = real_ip(s, s->regs[PERF_REG_X86_IP], e, &returned);
    uint8_t *stack = (uint8_t *)d->stack;    /* the batch's memory, the processing thread's own by now */
    size_t stack_len = d->stack ? d->stack_size : 0;
    /* In the trampoline the poll has returned: its caller goes on at ret_addr with the stack pointer a word
     * above ret_slot. The trampoline's own pushes are below that (the kernel's syscall-based one pushes three
     * registers before its syscall, where most such samples are taken): unwound from there, the caller's
     * frame would be read three words off. */
    uint64_t sampled_sp = s->regs[PERF_REG_X86_SP];
    if (returned && e->ret_slot + 8 > sampled_sp && e->ret_slot + 8 - sampled_sp <= stack_len)
        skip_stack(s->regs, &stack, &stack_len, (size_t)(e->ret_slot + 8 - sampled_sp));
    /* Inside the poll, its return probe's trampoline replaced the caller's return address on the stack: put
     * it back in the copy so the unwind goes on. */
    uint64_t sp = s->regs[PERF_REG_X86_SP], word;
    if (e->ret_addr && stack && stack_len >= 8 && e->ret_slot >= sp && e->ret_slot - sp <= stack_len - 8) {
        memcpy(&word, stack + (e->ret_slot - sp), 8);
        if (uprobes_page(s, word))
            memcpy(stack + (e->ret_slot - sp), &e->ret_addr, 8);
    }
    bool truncated = false;
    out->n_user = unwinder_unwind(s->unwinder, s->regs, stack, stack_len, s->user_ips, SAMPLER_MAX_FRAMES,
                                  &truncated);
    out->truncated = truncated;
    if (truncated && !e->ret_addr && out->n_user > 0 && in_trampoline(s, s->user_ips[out->n_user - 1]))
        ask_return_reads(s);
    /* In a probe's trap the user state is before the probed instruction until the kernel has emulated it and
     * after it from then on, while ip stays at or one past the probe (measured on tokio's wake_by_val, whose
     * probe is its first push: samples in the kernel's push emulation had the push done, ip at the probe).
     * When the first reading does not unwind to the end, the push is taken as done: the stack pointer one word
     * up is the one before it, where the probe's own rules apply. The reading that unwinds further is kept. */
    if (truncated && e->trap_addr && stack && stack_len > 8) {
        skip_stack(s->regs, &stack, &stack_len, 8);
        bool other_truncated = false;
        size_t n = unwinder_unwind(s->unwinder, s->regs, stack, stack_len, s->other_user_ips, SAMPLER_MAX_FRAMES,
                                   &other_truncated);
        if (!other_truncated || n > out->n_user) {
            memcpy(s->user_ips, s->other_user_ips, n * sizeof(*s->user_ips));
            out->n_user = n;
            out->truncated = other_truncated;
        }
    }
}

static void handle_sample(struct sampler *s, const struct decoded_sample *d, const struct queued_entry *e)
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
    sampler_user_frames(s, d, n_chain_user, e, &out);
    if (out.n_user == 0 && out.n_kernel == 0)
        return;     /* a kernel thread, or kernel-only time with kernel frames not asked for */
    if (out.truncated) {
        s->stats.unwind_truncated++;
        s->stats.trampoline_cuts += s->cut_at_trampoline;
    }
    out.task_state = (enum sampler_task_state)e->task_state;
    out.task_id = e->task_id;
    out.task_id_provisional = (e->aux & QUEUED_TASK_PROVISIONAL) != 0;
    out.poll_probe_addr = e->probe_addr;
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

/* A mapping the target made: known from now on, told to the sink. */
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
    if (inserted)
        sampler_emit_mapping(s, inserted);
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

static void handle_record(struct sampler *s, const struct queued_entry *e, const struct perf_event_header *rec)
{
    switch (rec->type) {
    case PERF_RECORD_SAMPLE: {           /* only the sampling events write here (markers: sampler/markers/) */
        struct decoded_sample d;
        if (perf_decode_sample(rec, &s->layout, &d) == 0)
            handle_sample(s, &d, e);
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
    default:
        break;
    }
}

static void report_progress(struct sampler *s, const struct queued_entry *e)
{
    if (!s->sink || !s->sink->on_progress)
        return;
    struct sampler_progress p = {
        .elapsed_s = (double)(e->time_ns - s->start_ns) / 1e9, .duration_s = s->cfg.duration,
        .samples = s->stats.samples, .lost = e->lost + record_queue_dropped(&s->queue), .polls = e->polls,
        .tasks_seen = e->tasks_seen, .counts_polls = s->markers != NULL,
    };
    s->sink->on_progress(s->sink->ctx, &p);
}

/* A poll the task tracker saw end, to the sink with its thread's number. */
static void forward_poll(struct sampler *s, const void *data)
{
    struct sampler_poll p;
    memcpy(&p, data, sizeof(p));
    long thread = thread_names_find(&s->names, (pid_t)p.tid);
    p.thread = thread >= 0 ? (uint32_t)thread : SAMPLER_NO_THREAD;
    if (s->sink && s->sink->on_poll)
        s->sink->on_poll(s->sink->ctx, &p);
}

void sampler_process_batch(struct sampler *s, const struct record_batch *b)
{
    for (size_t at = 0; at + sizeof(struct queued_entry) <= b->bytes.n;) {
        const struct queued_entry *e = (const struct queued_entry *)(b->bytes.v + at);
        const void *data = e + 1;
        if (e->kind == QUEUED_RECORD && e->size >= sizeof(struct perf_event_header))
            handle_record(s, e, data);
        else if (e->kind == QUEUED_PROGRESS)
            report_progress(s, e);
        else if (e->kind == QUEUED_POLL && e->size == sizeof(struct sampler_poll))
            forward_poll(s, data);
        else if (e->kind == QUEUED_WARNING && e->size > 0 && s->cfg.on_warning)
            s->cfg.on_warning(s->cfg.warning_ctx, data);
        else if (e->kind == QUEUED_THREAD_NAME && e->size > 0)
            sampler_name_thread(s, (pid_t)e->task_id, data);
        else
            sampler_wait_process(s, e, data);
        at += sizeof(*e) + ((e->size + 7u) & ~(size_t)7u);
    }
}

static void *process_batches(void *arg)
{
    struct sampler *s = arg;
    struct record_batch b = { 0 };
    while (record_queue_pop(&s->queue, &b)) {
        sampler_process_batch(s, &b);
        record_queue_recycle(&s->queue, &b);
    }
    s->processor_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

int sampler_start_processing(struct sampler *s)
{
    if (pthread_create(&s->processor, NULL, process_batches, s) != 0)
        return -1;
    s->processing = true;
    return 0;
}

void sampler_stop_processing(struct sampler *s)
{
    record_queue_close(&s->queue);
    if (!s->processing)
        return;
    pthread_join(s->processor, NULL);
    s->processing = false;
    s->stats.dropped_samples = record_queue_dropped(&s->queue);
    s->stats.processing_cpu_ns += s->processor_cpu_ns;
}
