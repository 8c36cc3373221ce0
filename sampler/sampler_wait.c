/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler_wait.c: the sampler's side of the wait profile (SPEC section 3a, cfg->wait_profile). Task events
 * (poll start and end, wake, waker registered, terminate) come from the task tracker as it applies marker
 * hits, in time order per thread, and travel to the processing thread in the batch. Stacks at waker
 * registration: a perf event per registration site and CPU copies registers and user stack (dwarf; a
 * callchain with frame pointers) into the CPU's sample ring buffer, a BPF filter on it
 * (sampler/bpf/wait_filter_program.h) letting a sample through only at a budget. The events are those of one
 * tracefs uprobe event per site when tracefs is mounted: one probe consumer and one filter run per hit, the
 * sample written by the event of the CPU it ran on (measured on the saturated hyper fixture: the uprobe PMU's
 * event per CPU is a consumer of its own, and their two dispatches and filters per registration cost the
 * target as much as the three waker and poll programs together); else uprobe PMU events, one filter each.
 * With a tracefs event and the marker route's BPF slots, the markers hand the site's slot writes to it
 * (on_waker_site with slots): its program writes the registration's slot and then filters, the site's only
 * probe consumer (the slot route's own program and link beside it were a second dispatch per registration).
 * The reading thread sets those records apart (by event id) and queues them after the round's task events,
 * and the processing thread unwinds them like CPU samples. Each round ends with a QUEUED_WAIT_ROUND: everything up to its time is
 * delivered. In a program whose tasks come from poll markers, tokio's waker functions name tasks by header:
 * their events are joined to the marker tasks (sampler/markers/header_join.h) as the tracker applies them,
 * and their stacks go to the marker task their thread polled, like CPU samples. */
#include "sampler/sampler_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/bpf/bpf_sys.h"
#include "sampler/bpf/wait_filter_program.h"
#include "sampler/markers/header_join.h"
#include "sampler/markers/uprobe_pmu.h"
#include "sampler/markers/uprobe_tracefs.h"

/* User stack bytes copied per registration stack (dwarf), measured: clone_waker's stacks reach the thread's
 * start within 4 KB on the tokio fixture (18 frames) and within 8 KB on the hyper fixture (23 frames; 4 KB
 * cut them at 10, short of raw::poll). Twice that, for deeper handlers: a quarter of the CPU samples'
 * default, so each copy costs the target and the buffers a quarter as much. */
#define WAIT_STACK_BYTES 16384u
/* The budget: a task's stack again when its caller changes or after WAIT_STACK_INTERVAL_NS; at most
 * WAIT_STACKS_PER_WINDOW per WAIT_STACK_WINDOW_NS in all (300 per second: ~5 MB/s of stack copies into the
 * sample buffers, well under what they drain). Short windows: a window's stacks are taken in its first
 * moments, all at once, and 100-ms windows' 90 (with the first stacks) overflowed the buffers at the start
 * of a recording, when every task has none (tokio fixture, -F 99: up to 31 stacks lost; 0-1 in 10-ms ones),
 * and a task whose first stack is lost waits for the cap's leftovers. */
#define WAIT_STACK_INTERVAL_NS 50000000u
#define WAIT_STACK_WINDOW_NS 10000000u
#define WAIT_STACKS_PER_WINDOW 3u
/* Over that cap, tasks with no stack yet take their first, at most this many per window (600 per second,
 * spent only while tasks the recording has not seen register; why: wait_filter_program.c's emit_budget). */
#define WAIT_FIRST_STACKS_PER_WINDOW 6u

struct wait_stacks {
    int state;                         /* 0 untried, 1 ready, -1 unavailable */
    int tasks_fd, counters_fd;
    int *prog_fds;                     /* the filter for the event on s->cpus.v[c], loaded on first use; -1 */
    int any_cpu_prog_fd;               /* the filter of tracefs events (every CPU), loaded on first use; -1 */
    struct uprobe_tracefs tracefs;     /* found mounted (not mounted for this), unless use_tracefs is false */
    bool use_tracefs;
    VEC_OF(struct uprobe_tracefs_event) tracefs_events;   /* defined: removed at close */
    const struct wait_filter_counters *counters;   /* mapped from counters_fd */
    size_t counters_len;
    struct uprobe_pmu pmu;
    struct uprobe_arg_plan plan;       /* what each event records */
    struct sample_layout layout;       /* ... and how to decode it */
    struct u64_map ids;                /* event id -> 1 at a runtime-ids site (%rdi a header), else 0 */
    struct record_batch pending;       /* this round's stacks (reading thread) */
    uint64_t copied;                   /* stack records read */
    size_t sites;                      /* registration sites with stack events */
    struct header_join join;           /* runtime task headers -> marker tasks (reading thread) */
    uint64_t stray_runtime_stacks;     /* stacks at a runtime-ids site outside a marker poll (dropped) */
    char note[640];
};

static void wait_note(struct sampler *s, const char *fmt, const char *detail)
{
    struct wait_stacks *w = s->wait;
    if (!w->note[0])
        snprintf(w->note, sizeof(w->note), fmt, detail);
}

int sampler_wait_open(struct sampler *s)
{
    if (!s->cfg.wait_profile)
        return 0;
    struct wait_stacks *w = calloc(1, sizeof(*w));
    if (!w || u64_map_init(&w->ids, 64) != 0 || header_join_init(&w->join) != 0) {
        if (w)
            u64_map_free(&w->ids);
        free(w);
        return -1;
    }
    w->tasks_fd = w->counters_fd = w->any_cpu_prog_fd = -1;
    w->use_tracefs = s->cfg.uprobe_events != SAMPLER_UPROBES_PMU && uprobe_tracefs_find(&w->tracefs) == 0;
    if (w->use_tracefs)
        uprobe_tracefs_remove_stale(&w->tracefs);    /* definitions a killed taskspy left */
    s->wait = w;
    return 0;
}

/* The maps, the filter program and the events' layout, on the first registration site. */
static bool stacks_ready(struct sampler *s)
{
    struct wait_stacks *w = s->wait;
    if (w->state != 0)
        return w->state == 1;
    w->state = -1;
    if (uprobe_pmu_info(&w->pmu) != 0) {
        wait_note(s, "no waker-registration stacks: %s", "no uprobe PMU");
        return false;
    }
    long page = sysconf(_SC_PAGESIZE);
    w->counters_len = page > 0 ? (size_t)page : 4096;
    w->tasks_fd = bpf_sys_map_create(BPF_MAP_TYPE_LRU_HASH, 8, sizeof(struct wait_filter_task), 65536, 0);
    w->counters_fd = w->tasks_fd < 0 ? -1 : bpf_sys_map_create(BPF_MAP_TYPE_ARRAY, 4,
                                                                sizeof(struct wait_filter_counters), 1, BPF_F_MMAPABLE);
    void *counters = w->counters_fd < 0 ? MAP_FAILED
                                        : mmap(NULL, w->counters_len, PROT_READ, MAP_SHARED, w->counters_fd, 0);
    if (counters == MAP_FAILED) {
        wait_note(s, "no waker-registration stacks: cannot create BPF maps (%s)", strerror(errno));
        return false;
    }
    w->counters = counters;
    w->prog_fds = malloc(s->cpus.n * sizeof(*w->prog_fds));
    if (!w->prog_fds) {
        wait_note(s, "no waker-registration stacks: %s", "out of memory");
        return false;
    }
    for (size_t c = 0; c < s->cpus.n; c++)
        w->prog_fds[c] = -1;
    bool dwarf = s->cfg.call_graph == SAMPLER_CALL_GRAPH_DWARF;
    w->plan = (struct uprobe_arg_plan){
        .method = UPROBE_ARG_REGS,
        .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                       PERF_SAMPLE_REGS_USER | (dwarf ? PERF_SAMPLE_STACK_USER : PERF_SAMPLE_CALLCHAIN),
        .regs_mask = USER_REGS_MASK, .stack_size = dwarf ? WAIT_STACK_BYTES : 0,
    };
    w->layout = (struct sample_layout){ .sample_type = w->plan.sample_type, .regs_user_mask = USER_REGS_MASK };
    w->state = 1;
    return true;
}

/* One registration site's event on the CPU of s->cpus.v[c]: system-wide (the filter keeps the target's hits),
 * else following the target's threads. Returns the fd or -1. */
static int open_site_event(struct sampler *s, const char *path, uint64_t offset, size_t c)
{
    struct wait_stacks *w = s->wait;
    for (int per_process = 0; per_process < 2; per_process++) {
        struct uprobe_attach a = {
            .path = path, .offset = offset, .tid = per_process ? s->target.pid : -1, .cpu = s->cpus.v[c].cpu,
            .plan = &w->plan, .inherit = per_process, .disabled = false, .group_fd = -1,
        };
        struct perf_event_attr attr;
        if (uprobe_event_attr(&w->pmu, &a, &attr) != 0)
            return -1;
        attr.exclude_callchain_kernel = 1;
        attr.sample_max_stack = SAMPLER_MAX_FRAMES - 2;
        long fd = syscall(SYS_perf_event_open, &attr, a.tid, a.cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
            return (int)fd;
        if (errno != EACCES && errno != EPERM)
            return -1;
    }
    return -1;
}

static struct wait_filter_spec filter_spec(const struct sampler *s, uint32_t cpu)
{
    const struct wait_stacks *w = s->wait;
    return (struct wait_filter_spec){
        .tgid = (uint32_t)s->target.pid, .cpu = cpu, .tasks_fd = w->tasks_fd, .counters_fd = w->counters_fd,
        .interval_ns = WAIT_STACK_INTERVAL_NS, .window_ns = WAIT_STACK_WINDOW_NS,
        .max_per_window = WAIT_STACKS_PER_WINDOW, .max_first_per_window = WAIT_FIRST_STACKS_PER_WINDOW,
    };
}

/* Load a filter program (n instructions, -1: not built). Returns its fd, or -1 (noted unless quiet). */
static int load_filter(struct sampler *s, const struct bpf_insn *insns, int n, bool quiet)
{
    char log[4096] = "", why[512];
    int fd = n < 0 ? -1 : bpf_sys_prog_load_probe(insns, (size_t)n, false, log, sizeof(log));
    if (fd < 0 && !quiet) {
        bpf_sys_refusal(log, errno, why, sizeof(why));
        wait_note(s, "no waker-registration stacks: %s", why);
    }
    return fd;
}

/* The filter program of the uprobe PMU events on s->cpus.v[c], or with c SIZE_MAX of tracefs events on every
 * CPU (loaded once). Returns its fd, or -1 (noted). */
static int filter_program(struct sampler *s, size_t c)
{
    struct wait_stacks *w = s->wait;
    int *fd = c == SIZE_MAX ? &w->any_cpu_prog_fd : &w->prog_fds[c];
    if (*fd >= 0)
        return *fd;
    struct bpf_insn insns[WAIT_FILTER_PROGRAM_MAX];
    struct wait_filter_spec spec = filter_spec(s, c == SIZE_MAX ? WAIT_FILTER_ANY_CPU : (uint32_t)s->cpus.v[c].cpu);
    *fd = load_filter(s, insns, wait_filter_program(&spec, insns, WAIT_FILTER_PROGRAM_MAX), false);
    return *fd;
}

/* An event of the site is opened (fd): remember it (runtime_ids: as sampler_wait_site's). Returns 0, or -1
 * (noted; fd closed). */
static int keep_site_event(struct sampler *s, size_t c, int fd, bool runtime_ids)
{
    struct wait_stacks *w = s->wait;
    uint64_t id;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 || cpu_buffers_route(&s->cpus, c, fd) != 0 ||
        u64_map_put(&w->ids, id, runtime_ids) != 0 || event_fds_add(&s->events, fd) != 0) {
        wait_note(s, "waker-registration stacks incomplete: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return 0;
}

/* The site's stacks through one tracefs event: its perf event on every CPU, the filter on the first (the
 * program belongs to the tracefs event, run once per hit for all of them); with slots, a filter that writes
 * the marker slots of the site's hits too (the site's only probe consumer). Returns the events opened, 0
 * when none could be (then uprobe PMU events are tried, or with slots the markers attach the site). */
static size_t open_tracefs_site(struct sampler *s, const char *path, uint64_t offset, bool runtime_ids,
                                const struct bpf_marker_program_spec *slots)
{
    struct wait_stacks *w = s->wait;
    int prog = -1;
    if (slots) {
        struct bpf_insn insns[WAIT_FILTER_PROGRAM_MAX];
        struct wait_filter_spec spec = filter_spec(s, WAIT_FILTER_ANY_CPU);
        prog = load_filter(s, insns, wait_filter_slot_program(&spec, slots, insns, WAIT_FILTER_PROGRAM_MAX), true);
    } else {
        prog = filter_program(s, SIZE_MAX);
    }
    struct uprobe_tracefs_event *ev = prog < 0 ? NULL : vec_push(&w->tracefs_events);
    char err[512];
    size_t opened = 0;
    if (!ev || uprobe_tracefs_create(&w->tracefs, path, offset, 0, NULL, false, "waker_stack", ev, &w->plan, err,
                                     sizeof(err)) != 0) {
        if (ev)
            w->tracefs_events.n--;
        goto done;
    }
    bool filtered = false;
    for (size_t c = 0; c < s->cpus.n; c++) {
        if (s->cpus.v[c].fd < 0)
            continue;
        struct perf_event_attr attr;
        uprobe_tracefs_attr(ev, &w->plan, false, false, &attr);
        attr.exclude_callchain_kernel = 1;
        attr.sample_max_stack = SAMPLER_MAX_FRAMES - 2;
        long fd = syscall(SYS_perf_event_open, &attr, -1, s->cpus.v[c].cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
            continue;
        if (!filtered && ioctl((int)fd, PERF_EVENT_IOC_SET_BPF, prog) != 0) {
            close((int)fd);
            break;                       /* no filter: no events (a sample at every hit is not affordable) */
        }
        bool holds_filter = !filtered;
        filtered = true;
        if (keep_site_event(s, c, (int)fd, runtime_ids) == 0)
            opened++;
        else if (holds_filter)
            break;                       /* closed with its filter: the others would sample every hit */
    }
done:
    if (slots && prog >= 0)
        close(prog);                     /* the event holds it */
    return opened;
}

bool sampler_wait_site(void *ctx, const char *path, uint64_t offset, bool runtime_ids,
                       const struct bpf_marker_program_spec *slots)
{
    struct sampler *s = ctx;
    struct wait_stacks *w = s->wait;
    if (!w || !stacks_ready(s))
        return false;
    size_t opened = w->use_tracefs ? open_tracefs_site(s, path, offset, runtime_ids, slots) : 0;
    if (opened > 0) {
        w->sites++;
        return slots != NULL;
    }
    if (slots)
        return false;                    /* the markers attach the site, then tell it again */
    for (size_t c = 0; c < s->cpus.n; c++) {
        if (s->cpus.v[c].fd < 0)
            continue;
        int prog = filter_program(s, c);
        int fd = prog < 0 ? -1 : open_site_event(s, path, offset, c);
        if (fd < 0)
            continue;
        if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) != 0) {
            wait_note(s, "waker-registration stacks incomplete: %s", strerror(errno));
            close(fd);
            continue;
        }
        if (keep_site_event(s, c, fd, runtime_ids) == 0)
            opened++;
    }
    if (opened == 0)
        wait_note(s, "no waker-registration stacks: cannot open their uprobe events (%s)", strerror(errno));
    else
        w->sites++;
    return false;
}

/* A stack at a runtime-ids site (%rdi a header): its task is the marker task its thread polled at its time,
 * as for a CPU sample (at: the tracker's answer for the stack's thread and time; sets e->task_state,
 * e->task_id, e->probe_addr). Returns false outside a marker poll. */
static bool attribute_runtime_stack(const struct task_tracker_sample *at, struct queued_entry *e)
{
    e->task_state = at->state;
    e->task_id = at->task_id;
    e->probe_addr = at->probe_addr;
    return at->state == SAMPLER_IN_TASK;
}

bool sampler_wait_copy(struct sampler *s, const struct perf_event_header *rec)
{
    struct wait_stacks *w = s->wait;
    uint64_t id;
    uint32_t runtime_ids;
    if (!w || w->sites == 0 || rec->size < sizeof(*rec) + 8)
        return false;
    memcpy(&id, rec + 1, 8);
    if (!u64_map_get(&w->ids, id, &runtime_ids))
        return false;
    w->copied++;
    struct queued_entry e = { .kind = QUEUED_WAIT_STACK, .size = rec->size };
    struct decoded_sample d;
    bool decoded = perf_decode_sample(rec, &w->layout, &d) == 0;
    struct task_tracker_sample at = { .state = SAMPLER_NOT_IN_TASK };
    if (decoded) {   /* one query: the poll it is in (its return address, for the unwind) and its task */
        task_tracker_sample(&s->tasks, d.tid, d.time, 0, &at);
        e.ret_slot = at.ret_slot;
        e.ret_addr = at.ret_addr;
    }
    if (runtime_ids && (!decoded || !attribute_runtime_stack(&at, &e))) {
        w->stray_runtime_stacks++;
        return true;
    }
    if (record_batch_add(&w->pending, &e, rec) != 0)
        s->copy_failures++;
    return true;
}

/* A runtime waker function's event in a program whose tasks come from poll markers (kind MARKER_RUNTIME_...,
 * *task_id its header): joined to the marker task, the thread's poll as the tracker has applied it so far
 * being the event's. Sets *kind and *task_id to the plain event; false when it joins no task (dropped). */
static bool join_runtime_event(struct sampler *s, uint32_t tid, enum marker_kind *kind, uint64_t *task_id)
{
    struct header_join *j = &s->wait->join;
    if (*kind == MARKER_RUNTIME_WAKE) {
        *kind = MARKER_WAKE;
        return header_join_wake(j, *task_id, task_id);
    }
    enum sampler_task_state state;
    uint64_t polled, probe_addr;
    task_tracker_current(&s->tasks, tid, &state, &polled, &probe_addr);
    *kind = MARKER_WAKER_REGISTERED;
    int joined = header_join_registered(j, *task_id, state == SAMPLER_IN_TASK, polled, task_id);
    if (joined < 0)
        s->copy_failures++;
    return joined > 0;
}

void sampler_wait_queue_event(void *ctx, uint32_t tid, enum marker_kind kind, uint64_t task_id, uint64_t time_ns,
                              uint64_t ret_addr)
{
    struct sampler *s = ctx;
    enum sampler_task_event_kind k;
    if ((kind == MARKER_RUNTIME_WAKE || kind == MARKER_RUNTIME_WAKER_REGISTERED) &&
        !join_runtime_event(s, tid, &kind, &task_id))
        return;
    switch (kind) {
    case MARKER_POLL_START: k = SAMPLER_TASK_POLL_START; break;
    case MARKER_POLL_END: k = SAMPLER_TASK_POLL_END; break;
    case MARKER_WAKE: k = SAMPLER_TASK_WAKE; break;
    case MARKER_WAKER_REGISTERED: k = SAMPLER_TASK_WAKER_REGISTERED; break;
    case MARKER_TERMINATE: k = SAMPLER_TASK_TERMINATE; break;
    default: return;
    }
    struct queued_entry e = { .kind = QUEUED_TASK_EVENT, .task_state = (uint32_t)k, .aux = tid,
                              .task_id = task_id, .time_ns = time_ns,
                              .ret_addr = k == SAMPLER_TASK_WAKER_REGISTERED ? ret_addr : 0 };
    if (record_batch_add(&s->batch, &e, NULL) != 0)
        s->copy_failures++;
}

void sampler_wait_round_end(struct sampler *s, uint64_t until_ns)
{
    struct wait_stacks *w = s->wait;
    if (!w)
        return;
    /* the round's stacks after its task events (applied at the round's end), then the round's end */
    const uint8_t *at = w->pending.bytes.v;
    for (size_t off = 0; off + sizeof(struct queued_entry) <= w->pending.bytes.n;) {
        const struct queued_entry *e = (const struct queued_entry *)(at + off);
        if (record_batch_add(&s->batch, e, e + 1) != 0)
            s->copy_failures++;
        off += sizeof(*e) + ((e->size + 7u) & ~(size_t)7u);
    }
    w->pending.bytes.n = 0;
    struct queued_entry round = { .kind = QUEUED_WAIT_ROUND, .time_ns = until_ns };
    if (record_batch_add(&s->batch, &round, NULL) != 0)
        s->copy_failures++;
}

static uint32_t thread_number(struct sampler *s, pid_t tid)
{
    long thread = thread_names_find(&s->names, tid);
    return thread >= 0 ? (uint32_t)thread : SAMPLER_NO_THREAD;
}

/* A registration stack: unwound like a CPU sample, to the sink with its task (%rdi at the probe). */
static void deliver_stack(struct sampler *s, const struct queued_entry *e, const struct perf_event_header *rec)
{
    struct wait_stacks *w = s->wait;
    struct decoded_sample d;
    if (perf_decode_sample(rec, &w->layout, &d) != 0 || (pid_t)d.pid != s->target.pid || !d.regs)
        return;
    uint64_t regs[PERF_REG_X86_64_MAX];
    perf_unpack_regs(&d, w->layout.regs_user_mask, regs, PERF_REG_X86_64_MAX);
    size_t n_kernel = 0, n_chain_user = 0;
    if (d.callchain)
        perf_split_callchain(d.callchain, d.callchain_nr, s->kernel_ips, &n_kernel, s->chain_user, &n_chain_user,
                             SAMPLER_MAX_FRAMES);
    struct sampler_sample out;
    memset(&out, 0, sizeof(out));
    sampler_user_frames(s, &d, n_chain_user, e, &out);
    if (out.n_user == 0)
        return;
    /* %rdi, the registering task; at a runtime-ids site, the marker task the thread polled (set at the copy) */
    bool in_marker_poll = e->task_state == SAMPLER_IN_TASK;
    struct sampler_wait_stack ws = {
        .tid = (pid_t)d.tid, .thread = thread_number(s, (pid_t)d.tid),
        .task_id = in_marker_poll ? e->task_id : regs[PERF_REG_X86_DI],
        .poll_probe_addr = in_marker_poll ? e->probe_addr : 0,
        .time_ns = d.time, .user_ips = out.user_ips, .n_user = out.n_user, .truncated = out.truncated,
    };
    if (d.stack && d.stack_size >= 8)
        memcpy(&ws.call_site, d.stack, 8);     /* the word at %rsp, as the registration's slot read it */
    s->stats.wait_stacks++;
    if (s->sink && s->sink->on_wait_stack)
        s->sink->on_wait_stack(s->sink->ctx, &ws);
}

bool sampler_wait_process(struct sampler *s, const struct queued_entry *e, const void *data)
{
    const struct sampler_sink *sink = s->sink;
    if (e->kind == QUEUED_TASK_EVENT) {
        struct sampler_task_event ev = {
            .kind = (enum sampler_task_event_kind)e->task_state, .tid = e->aux,
            .thread = thread_number(s, (pid_t)e->aux), .task_id = e->task_id, .time_ns = e->time_ns,
            .call_site = e->ret_addr,
        };
        s->stats.task_events++;
        if (ev.kind == SAMPLER_TASK_WAKER_REGISTERED)
            s->stats.waker_registrations++;
        else if (ev.kind == SAMPLER_TASK_WAKE)
            s->stats.wakes++;
        if (sink && sink->on_task_event)
            sink->on_task_event(sink->ctx, &ev);
        return true;
    }
    if (e->kind == QUEUED_WAIT_STACK) {
        if (e->size >= sizeof(struct perf_event_header))
            deliver_stack(s, e, data);
        return true;
    }
    if (e->kind == QUEUED_WAIT_ROUND) {
        if (sink && sink->on_wait_round)
            sink->on_wait_round(sink->ctx, e->time_ns);
        return true;
    }
    return false;
}

void sampler_wait_finish(struct sampler *s)
{
    struct wait_stacks *w = s->wait;
    if (!w)
        return;
    s->stats.waker_locations = markers_waker_locations(s->markers);
    s->stats.unjoined_waker_events = w->join.unknown_wakes + w->join.unknown_registrations + w->stray_runtime_stacks;
    if (w->counters) {
        uint64_t taken = __atomic_load_n(&w->counters->taken, __ATOMIC_RELAXED);
        s->stats.wait_stacks_skipped = __atomic_load_n(&w->counters->skipped, __ATOMIC_RELAXED);
        s->stats.wait_stacks_lost = taken > w->copied ? taken - w->copied : 0;
    }
    if (markers_poll_starts(s->markers) == 0 && !s->tls)
        snprintf(w->note, sizeof(w->note), "no poll markers or runtime poll functions found: no waits to record");
    else if (s->stats.waker_locations == 0)
        snprintf(w->note, sizeof(w->note), "no waker functions (tokio's waker vtable, --waker-symbol) or task-wake "
                 "markers found: waits are not split and are filed at the task's root");
    s->stats.wait_note = w->note[0] ? w->note : NULL;
}

void sampler_wait_close(struct sampler *s)
{
    struct wait_stacks *w = s->wait;
    if (!w)
        return;
    if (w->counters)
        munmap((void *)w->counters, w->counters_len);
    for (size_t c = 0; w->prog_fds && c < s->cpus.n; c++)
        if (w->prog_fds[c] >= 0)
            close(w->prog_fds[c]);
    free(w->prog_fds);
    if (w->any_cpu_prog_fd >= 0)
        close(w->any_cpu_prog_fd);
    /* the tracefs definitions, now that their perf events are closed (sampler_close); one left by a kill is
       removed by the next taskspy (uprobe_tracefs_remove_stale), and inserts no probe meanwhile */
    for (size_t i = 0; i < w->tracefs_events.n; i++)
        uprobe_tracefs_remove(&w->tracefs, &w->tracefs_events.v[i]);
    vec_free(&w->tracefs_events);
    if (w->counters_fd >= 0)
        close(w->counters_fd);
    if (w->tasks_fd >= 0)
        close(w->tasks_fd);
    u64_map_free(&w->ids);
    header_join_free(&w->join);
    record_batch_free(&w->pending);
    free(w);
    s->wait = NULL;
}
