/* sampler.c: the recording loop. One sampling event per (thread, CPU) of the target with inherit=1, so the
 * threads it creates are followed; all events of a CPU write into one ring buffer per CPU (as perf record
 * does; the kernel refuses to map inherited per-task buffers). Marker uprobes write into marker buffers of
 * their own (markers.c). A thread migrates between CPUs, so each round first takes the marker records of
 * every CPU up to the round's cut-off time, then consumes samples up to that time: each sample sees all
 * markers before it. */
#include "sampler/sampler.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <asm/perf_regs.h>
#include <linux/perf_event.h>

#include "sampler/markers/markers.h"
#include "sampler/perf/perf_records.h"
#include "sampler/target/proc_maps.h"
#include "sampler/perf/ring_buffer.h"
#include "sampler/target/target.h"
#include "sampler/markers/task_tracker.h"
#include "base/u64_map.h"
#include "sampler/unwind/unwind.h"

#define MAX_THREADS 65536
#define THREAD_NAME_LEN 16
#define TOTAL_BUFFER_BYTES (64u << 20)

/* All general-purpose registers: what DWARF CFI may refer to, and what marker arguments live in. */
#define USER_REGS_MASK ((1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_CX) | \
                        (1ULL << PERF_REG_X86_DX) | (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) | \
                        (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) | \
                        (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R9) | (1ULL << PERF_REG_X86_R10) | \
                        (1ULL << PERF_REG_X86_R11) | (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) | \
                        (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15))

struct cpu_buffer {
    int cpu;
    int fd;                              /* the event that owns the buffer; -1 until the first opens */
    struct ring_buffer rb;
};

struct thread_name {
    char name[THREAD_NAME_LEN];
};

struct sampler {
    struct sampler_config cfg;
    struct target target;
    char root[64];                       /* "/proc/PID/root" */
    struct proc_maps maps;
    struct unwinder *unwinder;
    struct task_tracker tasks;
    struct markers *markers;
    struct sample_layout layout;
    struct perf_event_attr attr;         /* of the sampling events */
    struct cpu_buffer *cpus;
    size_t n_cpus;
    int *fds;                            /* every sampling event, for enable/disable/close */
    size_t n_fds, cap_fds;
    size_t buffer_pages;
    struct u64_map attached;             /* tids with their own sampling event */
    struct u64_map thread_names;         /* tid -> names[] */
    struct thread_name *names;
    uint32_t n_names, cap_names;
    const struct sampler_sink *sink;
    struct sampler_stats stats;
    uint64_t start_ns;
    uint64_t last_maps_reload_ns;
    uint64_t round_end_ns;               /* records after this time wait for the next round */
    bool stopping;
    char *err;                           /* where the run loop reports a fatal error */
    size_t errlen;
    /* per-sample scratch */
    uint64_t regs[PERF_REG_X86_64_MAX];
    uint64_t user_ips[SAMPLER_MAX_FRAMES];
    uint64_t kernel_ips[SAMPLER_MAX_FRAMES];
    uint64_t chain_user[SAMPLER_MAX_FRAMES];
};

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
    return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

/* ---- thread names ------------------------------------------------------------------------------- */

static void set_thread_name(struct sampler *s, pid_t tid, const char *name)
{
    uint32_t idx;
    if (!u64_map_get(&s->thread_names, (uint64_t)tid, &idx)) {
        if (s->n_names == s->cap_names) {
            uint32_t cap = s->cap_names ? s->cap_names * 2 : 64;
            struct thread_name *v = realloc(s->names, cap * sizeof(*v));
            if (!v)
                return;
            s->names = v;
            s->cap_names = cap;
        }
        idx = s->n_names;
        if (u64_map_put(&s->thread_names, (uint64_t)tid, idx) != 0)
            return;
        s->n_names++;
        s->stats.threads++;
    }
    snprintf(s->names[idx].name, THREAD_NAME_LEN, "%s", name);
    if (s->sink && s->sink->on_thread_name)
        s->sink->on_thread_name(s->sink->ctx, tid, s->names[idx].name);
}

static const char *thread_name(const struct sampler *s, pid_t tid)
{
    uint32_t idx;
    return u64_map_get(&s->thread_names, (uint64_t)tid, &idx) ? s->names[idx].name : NULL;
}

/* ---- events --------------------------------------------------------------------------------------- */

/* kernel.perf_event_max_stack bounds callchain depth; asking for more is EINVAL. */
static unsigned max_kernel_stack(void)
{
    unsigned v = 127;
    FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
    if (f) {
        if (fscanf(f, "%u", &v) != 1)
            v = 127;
        fclose(f);
    }
    return v < SAMPLER_MAX_FRAMES - 2 ? v : SAMPLER_MAX_FRAMES - 2;
}

static void init_sampling_attr(struct sampler *s, bool hardware, bool exclude_kernel)
{
    struct perf_event_attr *a = &s->attr;
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
    a->config = hardware ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
    a->freq = 1;
    a->sample_freq = s->cfg.frequency;
    a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    bool dwarf = s->cfg.call_graph == SAMPLER_CALL_GRAPH_DWARF;
    if (!dwarf || s->cfg.kernel)
        a->sample_type |= PERF_SAMPLE_CALLCHAIN;
    if (dwarf) {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = USER_REGS_MASK;
        a->sample_stack_user = s->cfg.stack_size;
        a->exclude_callchain_user = 1;
    }
    a->exclude_callchain_kernel = !s->cfg.kernel;
    a->sample_max_stack = (uint16_t)max_kernel_stack();
    a->exclude_kernel = exclude_kernel;
    a->exclude_hv = 1;
    a->exclude_guest = 1;
    a->inherit = 1;
    a->disabled = 1;
    a->enable_on_exec = s->target.launched;
    a->mmap = 1;
    a->mmap2 = 1;
    a->mmap_data = 1;
    a->comm = 1;
    a->comm_exec = 1;
    a->task = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1;
    s->layout.sample_type = a->sample_type;
    s->layout.regs_user_mask = a->sample_regs_user;
}

static int remember_fd(struct sampler *s, int fd)
{
    if (s->n_fds == s->cap_fds) {
        size_t cap = s->cap_fds ? s->cap_fds * 2 : 64;
        int *v = realloc(s->fds, cap * sizeof(*v));
        if (!v)
            return -1;
        s->fds = v;
        s->cap_fds = cap;
    }
    s->fds[s->n_fds++] = fd;
    return 0;
}

/* Open the sampling events of one thread, one per CPU, each writing into its CPU's buffer (mapping the
 * buffer with the first event of that CPU). Returns 0, or -1 with errno (ESRCH: the thread is gone). */
static int open_thread_events(struct sampler *s, pid_t tid)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    s->attr.wakeup_watermark = (uint32_t)(s->buffer_pages * page / 4);
    size_t opened = 0;
    for (size_t c = 0; c < s->n_cpus; c++) {
        struct cpu_buffer *cb = &s->cpus[c];
        int fd = (int)perf_event_open(&s->attr, tid, cb->cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            if (errno == ENODEV)
                continue;       /* CPU offline */
            return -1;
        }
        int rc = 0;
        if (cb->fd < 0) {
            if ((rc = ring_buffer_map_fitting(&cb->rb, fd, s->buffer_pages)) == 0)
                cb->fd = fd;
        } else {
            rc = ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, cb->fd);
        }
        if (rc != 0 || remember_fd(s, fd) != 0) {
            int e = errno;
            if (cb->fd == fd) {
                ring_buffer_unmap(&cb->rb);
                cb->fd = -1;
            }
            close(fd);
            errno = e;
            return -1;
        }
        opened++;
    }
    if (opened == 0) {
        errno = ENODEV;
        return -1;
    }
    return u64_map_put(&s->attached, (uint64_t)tid, 0);
}

/* Open the first event, choosing the event (cycles, else cpu-clock) and whether kernel samples are allowed. */
static int open_first_event(struct sampler *s, pid_t tid, char *err, size_t errlen)
{
    const bool try_hw[2] = { true, false };
    int last_errno = 0;
    for (int h = 0; h < 2; h++) {
        for (int excl = 0; excl < 2; excl++) {
            if (excl && s->cfg.kernel)
                break;          /* kernel frames were asked for: excluding the kernel is no answer */
            init_sampling_attr(s, try_hw[h], excl);
            if (open_thread_events(s, tid) == 0) {
                s->stats.event_name = try_hw[h] ? "cycles" : "cpu-clock";
                return 0;
            }
            last_errno = errno;
            if (errno == ESRCH) {
                snprintf(err, errlen, "no such process: %d", (int)s->target.pid);
                return -1;
            }
            if (errno != EACCES && errno != EPERM)
                break;          /* not a permission problem: try the next event type */
        }
    }
    if (last_errno == EACCES || last_errno == EPERM)
        target_permission_message(s->target.pid, last_errno, err, errlen);
    else
        snprintf(err, errlen, "perf_event_open failed for process %d: %s", (int)s->target.pid,
                 strerror(last_errno));
    return -1;
}

/* Attach to threads of the target that have no event of their own and were not born under one. */
static int attach_new_threads(struct sampler *s, bool first, char *err, size_t errlen)
{
    pid_t *tids = malloc(MAX_THREADS * sizeof(*tids));
    if (!tids) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = target_list_threads(s->target.pid, tids, MAX_THREADS);
    if (n < 0) {
        free(tids);
        if (first) {
            snprintf(err, errlen, "no such process: %d", (int)s->target.pid);
            return -1;
        }
        return 0;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        uint32_t idx;
        if (u64_map_get(&s->attached, (uint64_t)tids[i], &idx) ||
            u64_map_get(&s->thread_names, (uint64_t)tids[i], &idx))
            continue;           /* has an event, or a FORK record showed it inherited one */
        char name[THREAD_NAME_LEN + 8];
        if (!target_thread_name(s->target.pid, tids[i], name, sizeof(name)))
            continue;           /* gone already */
        size_t fds_before = s->n_fds;
        int ok = (s->n_fds == 0) ? open_first_event(s, tids[i], err, errlen) : open_thread_events(s, tids[i]);
        if (ok < 0) {
            if (s->n_fds == 0) {
                rc = -1;
                break;
            }
            if (errno == ESRCH)
                continue;
            snprintf(err, errlen, "perf_event_open failed for thread %d: %s", (int)tids[i], strerror(errno));
            rc = -1;
            break;
        }
        set_thread_name(s, tids[i], name);
        for (size_t f = fds_before; !first && f < s->n_fds; f++)
            if (ioctl(s->fds[f], PERF_EVENT_IOC_ENABLE, 0) != 0) {
                snprintf(err, errlen, "cannot enable the event of thread %d: %s", (int)tids[i], strerror(errno));
                rc = -1;
                break;
            }
        if (rc != 0)
            break;
    }
    free(tids);
    return rc;
}

static size_t choose_buffer_pages(size_t n_cpus)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t want = TOTAL_BUFFER_BYTES / (n_cpus ? n_cpus : 1) / page;
    size_t pages = 32;
    while (pages * 2 <= want && pages < 2048)
        pages *= 2;
    return pages;
}

static void emit_mapping(struct sampler *s, const struct proc_map *m)
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
        emit_mapping(s, &s->maps.v[i]);
        if (s->markers && s->maps.v[i].executable && s->maps.v[i].path[0] == '/')
            markers_scan_object(s->markers, s->maps.v[i].path);
    }
}

int sampler_open(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    struct sampler *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->cfg = *cfg;
    s->target.go_fd = s->target.exec_error_fd = s->target.pidfd = -1;
    if (u64_map_init(&s->attached, 64) != 0 ||
        u64_map_init(&s->thread_names, 64) != 0 || task_tracker_init(&s->tasks) != 0) {
        snprintf(err, errlen, "out of memory");
        sampler_close(s);
        return -1;
    }
    int rc;
    if (cfg->pid > 0) {
        rc = target_attach(&s->target, cfg->pid, err, errlen);
    } else {
        rc = target_launch(&s->target, cfg->argv, err, errlen);
    }
    if (rc != 0) {
        sampler_close(s);
        return -1;
    }
    snprintf(s->root, sizeof(s->root), "/proc/%d/root", (int)s->target.pid);
    long n_cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (n_cpus < 1)
        n_cpus = 1;
    s->cpus = calloc((size_t)n_cpus, sizeof(*s->cpus));
    if (!s->cpus) {
        snprintf(err, errlen, "out of memory");
        sampler_close(s);
        return -1;
    }
    for (long c = 0; c < n_cpus; c++) {
        s->cpus[c].cpu = (int)c;
        s->cpus[c].fd = -1;
    }
    s->n_cpus = (size_t)n_cpus;
    /* Two buffers per CPU (samples, markers) within the locked memory perf grants a process without
     * CAP_IPC_LOCK: sized up front, so the marker buffers are not left without room. */
    s->buffer_pages = ring_buffer_pages_within(choose_buffer_pages(s->n_cpus), 2 * s->n_cpus,
                                               ring_buffer_lock_budget());
    s->unwinder = unwinder_new(&s->maps, s->root);
    if (!s->unwinder) {
        snprintf(err, errlen, "cannot set up the unwinder");
        sampler_close(s);
        return -1;
    }
    if (s->target.launched) {
        if (open_first_event(s, s->target.pid, err, errlen) != 0) {
            sampler_close(s);
            return -1;
        }
        char name[THREAD_NAME_LEN];
        const char *base = strrchr(cfg->argv[0], '/');
        snprintf(name, sizeof(name), "%s", base ? base + 1 : cfg->argv[0]);
        set_thread_name(s, s->target.pid, name);
    } else {
        if (attach_new_threads(s, true, err, errlen) != 0) {
            sampler_close(s);
            return -1;
        }
        if (proc_maps_load(&s->maps, s->target.pid) != 0) {
            snprintf(err, errlen, "cannot read /proc/%d/maps: %s", (int)s->target.pid, strerror(errno));
            sampler_close(s);
            return -1;
        }
    }
    int cpu_ids[1024];
    size_t n_buffers = 0;
    for (size_t c = 0; c < s->n_cpus && n_buffers < 1024; c++)
        if (s->cpus[c].fd >= 0)
            cpu_ids[n_buffers++] = s->cpus[c].cpu;
    if (markers_open(&s->markers, cfg->markers, cfg->poll_times, s->target.pid, s->root, cpu_ids, n_buffers,
                     s->buffer_pages, err, errlen) != 0) {
        sampler_close(s);
        return -1;
    }
    if (s->markers) {
        if (s->target.launched) {
            char exe[4096];
            if (target_resolve_command(cfg->argv[0], exe, sizeof(exe)))
                markers_scan_object(s->markers, exe);
        } else {
            for (size_t i = 0; i < s->maps.n; i++)
                if (s->maps.v[i].executable && s->maps.v[i].path[0] == '/')
                    markers_scan_object(s->markers, s->maps.v[i].path);
        }
    }
    *out = s;
    return 0;
}

/* ---- record handling ------------------------------------------------------------------------------ */

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
    if (s->cfg.call_graph == SAMPLER_CALL_GRAPH_DWARF) {
        if (d->regs_abi != PERF_SAMPLE_REGS_ABI_NONE && d->regs) {
            perf_unpack_regs(d, s->layout.regs_user_mask, s->regs, PERF_REG_X86_64_MAX);
            if (!proc_maps_find(&s->maps, s->regs[PERF_REG_X86_IP]))
                reload_maps(s);      /* code mapped since the last mmap record we read */
            bool truncated = false;
            out.n_user = unwinder_unwind(s->unwinder, s->regs, d->stack, d->stack ? d->stack_size : 0,
                                         s->user_ips, SAMPLER_MAX_FRAMES, &truncated);
            out.truncated = truncated;
        }
        out.user_ips = s->user_ips;
    } else {
        out.user_ips = s->chain_user;
        out.n_user = n_chain_user;
        out.truncated = n_chain_user >= SAMPLER_MAX_FRAMES - 2;
        if (n_chain_user > 0 && !proc_maps_find(&s->maps, s->chain_user[0]))
            reload_maps(s);
    }
    if (out.n_user == 0 && out.n_kernel == 0)
        return;     /* a kernel thread, or kernel-only time with kernel frames not asked for */
    if (out.truncated)
        s->stats.unwind_truncated++;
    task_tracker_at(&s->tasks, d->tid, d->time, &out.task_state, &out.task_id, &out.poll_probe_addr);
    if (!thread_name(s, out.tid)) {
        char name[THREAD_NAME_LEN + 8];
        if (target_thread_name(s->target.pid, out.tid, name, sizeof(name)))
            set_thread_name(s, out.tid, name);
    }
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

static enum ring_buffer_next handle_record(void *ctx, const struct perf_event_header *rec)
{
    struct sampler *s = ctx;
    if (record_time(rec) > s->round_end_ns)
        return RING_BUFFER_KEEP;   /* markers up to its time may not have been read yet */
    switch (rec->type) {
    case PERF_RECORD_SAMPLE: {           /* only the sampling events write here (markers: markers.c) */
        struct decoded_sample d;
        if (perf_decode_sample(rec, &s->layout, &d) == 0)
            handle_sample(s, &d);
        return RING_BUFFER_CONTINUE;
    }
    case PERF_RECORD_MMAP2: {
        struct decoded_mmap2 m;
        if (perf_decode_mmap2(rec, &m) != 0 || (pid_t)m.pid != s->target.pid)
            return 0;
        struct proc_map pm = {
            .start = m.addr, .end = m.addr + m.len, .pgoff = m.pgoff, .readable = (m.prot & 1) != 0,
            .executable = (m.prot & 4) != 0, .path = (char *)m.filename,
        };
        if (strcmp(pm.path, "//anon") == 0)
            pm.path = (char *)"";
        if (proc_maps_insert(&s->maps, &pm) == 0) {
            const struct proc_map *inserted = proc_maps_find(&s->maps, m.addr);
            if (inserted) {
                emit_mapping(s, inserted);
                if (s->markers && inserted->executable && inserted->path[0] == '/')
                    markers_scan_object(s->markers, inserted->path);
            }
        }
        return RING_BUFFER_CONTINUE;
    }
    case PERF_RECORD_COMM: {
        struct decoded_comm c;
        if (perf_decode_comm(rec, &c) == 0 && (pid_t)c.pid == s->target.pid)
            set_thread_name(s, (pid_t)c.tid, c.comm);
        return RING_BUFFER_CONTINUE;
    }
    case PERF_RECORD_FORK: {
        struct decoded_task t;
        if (perf_decode_task(rec, &t) == 0 && (pid_t)t.pid == s->target.pid && t.tid != t.ptid) {
            const char *parent = thread_name(s, (pid_t)t.ptid);
            char name[THREAD_NAME_LEN];
            snprintf(name, sizeof(name), "%s", parent ? parent : "");
            if (!target_thread_name(s->target.pid, (pid_t)t.tid, name, sizeof(name)) && !parent)
                snprintf(name, sizeof(name), "[thread]");
            set_thread_name(s, (pid_t)t.tid, name);
        }
        return RING_BUFFER_CONTINUE;
    }
    case PERF_RECORD_EXIT:
        return RING_BUFFER_CONTINUE;
    case PERF_RECORD_LOST: {
        uint64_t lost;
        if (perf_decode_lost(rec, &lost) == 0)
            s->stats.lost += lost;
        return RING_BUFFER_CONTINUE;
    }
    default:
        return RING_BUFFER_CONTINUE;
    }
}

static enum ring_buffer_next handle_record(void *ctx, const struct perf_event_header *rec);

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
static void drain_all(struct sampler *s, bool final)
{
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    s->round_end_ns = final ? UINT64_MAX : now_ns() - 2000000ull;
    for (size_t c = 0; c < s->n_cpus; c++)
        if (s->cpus[c].fd >= 0)
            ring_buffer_peek(&s->cpus[c].rb, peek_record, s);
    uint64_t cpu1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), cpu2 = cpu1;
    if (s->markers) {
        struct markers_read_counts got = { 0 };
        markers_read(s->markers, s->round_end_ns, &s->tasks, &got);
        s->stats.marker_records += got.records;
        s->stats.lost_markers += got.lost;
        s->stats.throttled_markers += got.throttled;
        task_tracker_round_begin(&s->tasks);
        cpu2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    for (size_t c = 0; c < s->n_cpus; c++)
        if (s->cpus[c].fd >= 0)
            ring_buffer_drain(&s->cpus[c].rb, handle_record, s);
    uint64_t cpu3 = clock_ns(CLOCK_THREAD_CPUTIME_ID), cpu4 = cpu3;
    if (s->markers) {
        task_tracker_round_end(&s->tasks, s->round_end_ns);
        cpu4 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    s->stats.marker_cpu_ns += (cpu2 - cpu1) + (cpu4 - cpu3);
    s->stats.processing_cpu_ns += cpu4 - cpu0;
}

static void enable_all(struct sampler *s, unsigned long request)
{
    for (size_t i = 0; i < s->n_fds; i++)
        ioctl(s->fds[i], request, 0);
    if (s->markers)
        markers_enable(s->markers, request == PERF_EVENT_IOC_ENABLE);
}

int sampler_run(struct sampler *s, const struct sampler_sink *sink, char *err, size_t errlen)
{
    s->sink = sink;
    s->err = err;
    s->errlen = errlen;
    /* Announce what is already known. */
    for (uint32_t i = 0; i < s->n_names; i++) {
        uint64_t *keys = s->thread_names.keys;
        for (size_t j = 0; j <= s->thread_names.mask; j++)
            if (s->thread_names.values[j] == i + 1 && sink->on_thread_name)
                sink->on_thread_name(sink->ctx, (pid_t)keys[j], s->names[i].name);
    }
    for (size_t i = 0; i < s->maps.n; i++)
        emit_mapping(s, &s->maps.v[i]);
    s->start_ns = now_ns();
    if (s->target.launched) {
        if (target_release(&s->target, s->cfg.argv[0], err, errlen) != 0)
            return -1;
    } else {
        enable_all(s, PERF_EVENT_IOC_ENABLE);
        /* Threads born between listing and enabling: catch them now. */
        if (attach_new_threads(s, false, err, errlen) != 0)
            return -1;
    }
    uint64_t deadline = s->cfg.duration > 0 ? s->start_ns + (uint64_t)(s->cfg.duration * 1e9) : UINT64_MAX;
    uint64_t next_rescan = s->start_ns + 200000000ull;
    size_t max_fds = 2 * s->n_cpus + 2;   /* samples, markers (per CPU, and the BPF ring), target */
    struct pollfd *pfds = calloc(max_fds, sizeof(*pfds));
    int *marker_fds = calloc(s->n_cpus + 1, sizeof(*marker_fds));
    if (!pfds || !marker_fds) {
        free(pfds);
        free(marker_fds);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (;;) {
        size_t n = 0;
        for (size_t c = 0; c < s->n_cpus; c++)
            if (s->cpus[c].fd >= 0)
                pfds[n++] = (struct pollfd){ .fd = s->cpus[c].fd, .events = POLLIN };
        size_t n_marker_fds = markers_buffer_fds(s->markers, marker_fds, s->n_cpus + 1);
        for (size_t i = 0; i < n_marker_fds; i++)
            pfds[n++] = (struct pollfd){ .fd = marker_fds[i], .events = POLLIN };
        if (s->target.pidfd >= 0)
            pfds[n++] = (struct pollfd){ .fd = s->target.pidfd, .events = POLLIN };
        uint64_t t = now_ns();
        int timeout_ms = 100;
        if (deadline != UINT64_MAX && deadline > t && (deadline - t) / 1000000 < (uint64_t)timeout_ms)
            timeout_ms = (int)((deadline - t) / 1000000) + 1;
        if (poll(pfds, n, timeout_ms) < 0 && errno != EINTR) {
            snprintf(err, errlen, "poll failed: %s", strerror(errno));
            rc = -1;
            break;
        }
        drain_all(s, false);
        t = now_ns();
        if (s->cfg.stop && *s->cfg.stop)
            break;
        if (t >= deadline)
            break;
        if (target_poll_exit(&s->target)) {
            s->stats.target_exited = true;
            s->stats.target_status = s->target.status;
            break;
        }
        if (!s->target.launched && t >= next_rescan) {
            next_rescan = t + 1000000000ull;
            if (attach_new_threads(s, false, err, errlen) != 0) {
                rc = -1;
                break;
            }
        }
    }
    free(pfds);
    free(marker_fds);
    enable_all(s, PERF_EVENT_IOC_DISABLE);
    drain_all(s, true);
    s->stats.duration_s = (double)(now_ns() - s->start_ns) / 1e9;
    if (!s->stats.target_exited && s->target.launched) {
        target_terminate(&s->target, 1000);
    }
    task_tracker_sort(&s->tasks);
    s->stats.polls = s->tasks.polls;
    s->stats.timed_polls = s->tasks.timed_polls;
    s->stats.spawns = s->tasks.spawns;
    s->stats.terminates = s->tasks.terminates;
    s->stats.long_polls = s->tasks.long_polls;
    s->stats.tasks = s->tasks.tasks;
    s->stats.n_tasks = s->tasks.n_tasks;
    s->stats.tasks_seen = s->tasks.n_tasks;
    if (s->markers) {
        markers_stats(s->markers, &s->stats.probes, &s->stats.n_probes);
        markers_routes(s->markers, &s->stats.marker_locations_bpf, &s->stats.marker_locations_perf);
    }
    return rc;
}

const struct sampler_stats *sampler_stats(const struct sampler *s)
{
    return &s->stats;
}

size_t sampler_poll_markers(const struct sampler *s)
{
    return markers_poll_starts(s->markers);
}

pid_t sampler_target_pid(const struct sampler *s)
{
    return s->target.pid;
}

void sampler_close(struct sampler *s)
{
    if (!s)
        return;
    if (s->markers)
        markers_close(s->markers);
    for (size_t c = 0; c < s->n_cpus; c++)
        if (s->cpus[c].fd >= 0)
            ring_buffer_unmap(&s->cpus[c].rb);
    for (size_t i = 0; i < s->n_fds; i++)
        close(s->fds[i]);
    free(s->fds);
    free(s->cpus);
    if (s->target.launched && !s->target.exited && s->target.go_fd < 0)
        target_terminate(&s->target, 1000);
    target_close(&s->target);
    if (s->unwinder)
        unwinder_free(s->unwinder);
    proc_maps_free(&s->maps);
    task_tracker_free(&s->tasks);
    u64_map_free(&s->attached);
    u64_map_free(&s->thread_names);
    free(s->names);
    free(s);
}
