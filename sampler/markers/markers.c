/* markers.c: USDT poll markers of the target. Each object the target maps (or will exec) is scanned once
 * for stapsdt notes, and every location of a marker name is attached. Hits become marker hits (thread,
 * time, kind, arg0, probe address) for the task tracker, read in one pass per round. Three ways, the first
 * that works (TASKSPY_MARKER_RECORDS=bpf-event or =perf skips to the second or third):
 *   1. a BPF program per location on a uprobe_multi link filtered to the target, writing a slot in its
 *      CPU's region (sampler/markers/bpf_route.h): about perf stat's counting cost per hit;
 *   2. the same program on the location's uprobe event (kernels without uprobe_multi links);
 *   3. without BPF: the event writes a perf sample per hit into per-CPU ring buffers of markers' own.
 * Events are system-wide per CPU (filtered to the target's pid, so threads created later and libraries
 * dlopened later are covered), one tracefs uprobe event per location where tracefs is writable (one probe
 * consumer whatever the number of CPUs), else uprobe PMU events (TASKSPY_UPROBES=pmu forces them). Closing
 * links and events removes the uprobes and lowers the semaphores; tracefs definitions are removed on exit
 * and, after a SIGKILL, at the next start. */
#include "sampler/markers/markers.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "sampler/markers/bpf_route.h"
#include "sampler/perf/perf_records.h"
#include "sampler/perf/ring_buffer.h"
#include "sampler/probes/runtime_probes.h"
#include "base/u64_map.h"
#include "sampler/markers/uprobe_pmu.h"
#include "sampler/markers/uprobe_tracefs.h"
#include "sampler/probes/usdt_args.h"
#include "sampler/probes/usdt_notes.h"

/* Where one probe goes. */
struct probe_location {
    const char *provider, *name;
    uint64_t offset;                   /* file offset */
    uint64_t semaphore_offset;         /* 0 = none */
    bool retprobe;
};

#define MAX_OPTIONAL_SITES 8

struct marker_probe {
    char provider[64];
    char name[64];
    enum marker_kind kind;
    bool has_arg;
    struct usdt_arg arg0;
    struct uprobe_arg_plan plan;
    bool tracefs;
    struct uprobe_tracefs_event tracefs_event;
    bool bpf;                          /* hits through BPF (else perf samples) */
};

/* A CPU's marker ring buffer: every marker event opened on the CPU writes into it; the first one owns it. */
struct marker_buffer {
    int cpu;
    int fd;                            /* the owner; -1 until an event maps it */
    struct ring_buffer rb;
};

struct markers {
    pid_t pid;
    char root[64];
    struct marker_buffer *buffers;     /* one per CPU */
    size_t n_cpus;
    size_t buffer_pages;
    const char *spec;
    bool poll_times;                   /* runtime functions: also probe their returns */
    size_t runtime_functions;          /* runtime poll functions probed */
    struct uprobe_pmu pmu;
    bool have_pmu;
    struct marker_bpf *bpf;            /* hits through BPF slots (NULL: not set up yet, or unavailable) */
    int bpf_state;                     /* 0 untried, 1 ready, -1 unavailable (TASKSPY_MARKER_RECORDS=perf) */
    bool bpf_links;                    /* programs on uprobe_multi links (else on perf uprobe events) */
    struct uprobe_tracefs tracefs;
    int tracefs_state;                 /* 0 untried (or not mounted), 1 ready, -1 unavailable */
    bool prefer_tracefs;               /* tracefs events where possible (TASKSPY_UPROBES=pmu: never) */
    bool per_process;                  /* system-wide uprobes refused: follow the target process instead */
    struct marker_probe *probes;
    size_t n_probes, cap_probes;
    int *fds;                          /* perf events and uprobe_multi links: closed together, concurrently */
    size_t n_fds, cap_fds;
    struct u64_map probe_of_id;        /* event id -> probes[] */
    char **scanned;                    /* object paths already scanned */
    size_t n_scanned, cap_scanned;
    struct sampler_probe_stat *stats;
    size_t n_stats;
};

static enum marker_kind kind_of(enum usdt_marker m)
{
    switch (m) {
    case USDT_MARKER_POLL_START: return MARKER_POLL_START;
    case USDT_MARKER_POLL_END: return MARKER_POLL_END;
    case USDT_MARKER_SPAWN: return MARKER_SPAWN;
    case USDT_MARKER_TERMINATE: return MARKER_TERMINATE;
    case USDT_MARKER_PARK: return MARKER_PARK;
    case USDT_MARKER_UNPARK: return MARKER_UNPARK;
    default: return MARKER_KIND_COUNT;
    }
}

static bool needs_arg(enum marker_kind k)
{
    return k == MARKER_POLL_START || k == MARKER_POLL_END || k == MARKER_SPAWN || k == MARKER_TERMINATE;
}

int markers_open(struct markers **out, const char *spec, bool poll_times, pid_t pid, const char *root,
                 const int *cpus, size_t n_cpus, size_t buffer_pages, char *err, size_t errlen)
{
    *out = NULL;
    if (spec && strcmp(spec, "none") == 0)
        return 0;
    struct markers *m = calloc(1, sizeof(*m));
    if (!m || !(m->buffers = calloc(n_cpus ? n_cpus : 1, sizeof(*m->buffers))) ||
        u64_map_init(&m->probe_of_id, 64) != 0) {
        if (m)
            free(m->buffers);
        free(m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    m->pid = pid;
    m->spec = spec ? spec : "auto";
    m->poll_times = poll_times;
    snprintf(m->root, sizeof(m->root), "%s", root ? root : "");
    m->n_cpus = n_cpus;
    for (size_t c = 0; c < n_cpus; c++)
        m->buffers[c] = (struct marker_buffer){ .cpu = cpus[c], .fd = -1 };
    m->buffer_pages = buffer_pages;
    m->have_pmu = uprobe_pmu_info(&m->pmu) == 0;
    const char *uprobes = getenv("TASKSPY_UPROBES");
    m->prefer_tracefs = !(uprobes && strcmp(uprobes, "pmu") == 0);
    const char *records = getenv("TASKSPY_MARKER_RECORDS");
    m->bpf_state = records && strcmp(records, "perf") == 0 ? -1 : 0;
    m->bpf_links = !(records && strcmp(records, "bpf-event") == 0);
    *out = m;
    return 0;
}

static bool already_scanned(struct markers *m, const char *path)
{
    for (size_t i = 0; i < m->n_scanned; i++)
        if (strcmp(m->scanned[i], path) == 0)
            return true;
    if (m->n_scanned == m->cap_scanned) {
        size_t cap = m->cap_scanned ? m->cap_scanned * 2 : 32;
        char **v = realloc(m->scanned, cap * sizeof(*v));
        if (!v)
            return true;   /* cannot remember it: do not attach twice */
        m->scanned = v;
        m->cap_scanned = cap;
    }
    char *copy = strdup(path);
    if (!copy)
        return true;
    m->scanned[m->n_scanned++] = copy;
    return false;
}

static int remember_fd(struct markers *m, int fd)
{
    if (m->n_fds == m->cap_fds) {
        size_t cap = m->cap_fds ? m->cap_fds * 2 : 64;
        int *v = realloc(m->fds, cap * sizeof(*v));
        if (!v)
            return -1;
        m->fds = v;
        m->cap_fds = cap;
    }
    m->fds[m->n_fds++] = fd;
    return 0;
}

/* Open one probe location on one CPU. System-wide first (filtered by pid when decoding); when that is not
 * permitted, per process with inherit (covers the target's main thread and threads created afterwards). */
static int open_on_cpu(struct markers *m, struct marker_probe *p, const char *path, const struct probe_location *n,
                       int cpu)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        bool per_process = m->per_process || attempt == 1;
        int fd;
        if (p->tracefs) {
            fd = uprobe_tracefs_open(&p->tracefs_event, &p->plan, per_process ? m->pid : -1, cpu, per_process,
                                     false, -1);
        } else {
            struct uprobe_attach a = {
                .path = path, .offset = n->offset, .ref_ctr_offset = n->semaphore_offset,
                .tid = per_process ? m->pid : -1, .cpu = cpu, .plan = &p->plan, .inherit = per_process,
                .disabled = false, .group_fd = -1, .retprobe = n->retprobe,
            };
            fd = uprobe_event_open(&m->pmu, &a);
        }
        if (fd >= 0) {
            if (per_process && !m->per_process) {
                m->per_process = true;
                fprintf(stderr, "taskspy: system-wide uprobes not permitted; markers follow threads the target "
                                "creates from now on only\n");
            }
            return fd;
        }
        if ((errno != EACCES && errno != EPERM) || per_process)
            return -1;
    }
    return -1;
}

static void count_probe_stat(struct markers *m, const struct marker_probe *p)
{
    for (size_t i = 0; i < m->n_stats; i++)
        if (strcmp(m->stats[i].provider, p->provider) == 0 && strcmp(m->stats[i].name, p->name) == 0) {
            m->stats[i].locations++;
            return;
        }
    struct sampler_probe_stat *v = realloc(m->stats, (m->n_stats + 1) * sizeof(*v));
    if (!v)
        return;
    m->stats = v;
    struct sampler_probe_stat *st = &m->stats[m->n_stats++];
    memset(st, 0, sizeof(*st));
    snprintf(st->provider, sizeof(st->provider), "%s", p->provider);
    snprintf(st->name, sizeof(st->name), "%s", p->name);
    st->locations = 1;
}

/* Whether tracefs can take our uprobe events: found mounted, or (mount_if_needed) mounted now, in which case
 * a failure is reported once. Groups left by dead taskspy processes are removed when it first is ready. */
static bool tracefs_ready(struct markers *m, bool mount_if_needed)
{
    if (m->tracefs_state == 0) {
        char err[256];
        if (uprobe_tracefs_find(&m->tracefs) == 0) {
            m->tracefs_state = 1;
        } else if (mount_if_needed) {
            m->tracefs_state = uprobe_tracefs_init(&m->tracefs, err, sizeof(err)) == 0 ? 1 : -1;
            if (m->tracefs_state != 1)
                fprintf(stderr, "taskspy: %s\n", err);
        }
        if (m->tracefs_state == 1)
            uprobe_tracefs_remove_stale(&m->tracefs);
    }
    return m->tracefs_state == 1;
}

static int define_tracefs_event(struct markers *m, struct marker_probe *p, const char *path,
                                const struct probe_location *n, const struct usdt_arg *arg0, char *err,
                                size_t errlen)
{
    return uprobe_tracefs_create(&m->tracefs, path, n->offset, n->semaphore_offset, arg0, n->retprobe, n->name,
                                 &p->tracefs_event, &p->plan, err, errlen);
}

/* errno e of a failed BPF step: when it says BPF is not permitted, no location tries BPF again. */
static bool bpf_not_permitted(struct markers *m, int e)
{
    if (e != EPERM && e != EACCES)
        return false;
    m->bpf_state = -1;
    return true;
}

/* Whether hits can go through BPF: set up on first use; when it cannot be (no CAP_BPF / CAP_SYS_ADMIN, a
 * kernel without BPF mmapable arrays), markers write perf samples and the summary says why. */
static bool bpf_ready(struct markers *m)
{
    if (m->bpf_state == 0) {
        char err[256];
        m->bpf_state = marker_bpf_open(&m->bpf, m->pid, err, sizeof(err)) == 0 ? 1 : -1;
        /* Not permitted: uprobes are not either (both need CAP_SYS_ADMIN here), and attaching says so. */
        if (m->bpf_state != 1 && !bpf_not_permitted(m, errno))
            fprintf(stderr, "taskspy: markers write perf samples (%s)\n", err);
    }
    return m->bpf_state == 1;
}

/* Attach a location the cheapest BPF way: a uprobe_multi link of its own, filtered to the target by the
 * kernel. Returns 0, or -1 when links are not available (then events are used from now on). */
static int attach_via_bpf_link(struct markers *m, const char *path, const struct probe_location *n,
                               const struct usdt_arg *arg0, uint32_t location)
{
    char err[512];
    int link = marker_bpf_attach_uprobe(m->bpf, path, n->offset, n->semaphore_offset, n->retprobe, location, arg0,
                                        err, sizeof(err));
    if (link >= 0 && remember_fd(m, link) == 0)      /* closed with the events, concurrently */
        return 0;
    int saved = link >= 0 ? ENOMEM : errno;
    if (link >= 0) {
        close(link);
        snprintf(err, sizeof(err), "out of memory");
    }
    m->bpf_links = false;
    fprintf(stderr, "taskspy: %s (%s)\n",
            bpf_not_permitted(m, saved) ? "markers write perf samples" : "marker programs run on uprobe events", err);
    return -1;
}

/* Attach a location the BPF way: one event (on the first CPU: a tracefs or uprobe PMU event runs its program
 * on every hit of the probe, whichever CPU) with the location's program. Returns 0, or -1 when this location
 * needs perf samples instead (reported once). */
static int attach_via_bpf(struct markers *m, struct marker_probe *p, const char *path, const struct probe_location *n,
                          uint32_t location)
{
    int fd = open_on_cpu(m, p, path, n, m->n_cpus ? m->buffers[0].cpu : 0);
    if (fd < 0)
        return -1;
    char err[512];
    if (marker_bpf_attach_event(m->bpf, fd, location, p->has_arg ? &p->arg0 : NULL, err, sizeof(err)) != 0 ||
        remember_fd(m, fd) != 0) {
        int saved = errno;
        close(fd);
        fprintf(stderr, "taskspy: marker %s:%s in %s writes perf samples: %s\n", n->provider, n->name, path, err);
        bpf_not_permitted(m, saved);
        return -1;
    }
    return 0;
}

/* probes[m->n_probes] (p) is attached: keep it. */
static int probe_attached(struct markers *m, struct marker_probe *p, bool bpf)
{
    p->bpf = bpf;
    m->n_probes++;
    count_probe_stat(m, p);
    return 0;
}

static int attach_location(struct markers *m, const char *path, const struct probe_location *n,
                           enum marker_kind kind, const struct usdt_arg *arg0)
{
    if (m->n_probes == m->cap_probes) {
        size_t cap = m->cap_probes ? m->cap_probes * 2 : 16;
        struct marker_probe *v = realloc(m->probes, cap * sizeof(*v));
        if (!v)
            return -1;
        m->probes = v;
        m->cap_probes = cap;
    }
    struct marker_probe *p = &m->probes[m->n_probes];
    memset(p, 0, sizeof(*p));
    snprintf(p->provider, sizeof(p->provider), "%s", n->provider);
    snprintf(p->name, sizeof(p->name), "%s", n->name);
    p->kind = kind;
    p->has_arg = arg0 != NULL;
    if (arg0)
        p->arg0 = *arg0;
    if (m->bpf_links && bpf_ready(m) && attach_via_bpf_link(m, path, n, arg0, (uint32_t)m->n_probes) == 0)
        return probe_attached(m, p, true);
    /* One tracefs event per location when tracefs is at hand (one probe consumer however many CPUs); else,
     * or when tracefs cannot express the argument, uprobe PMU events. A heap memory operand only tracefs
     * can fetch: for it tracefs is mounted if need be. */
    char err[256];
    if (m->prefer_tracefs && uprobe_arg_plan_tracefs(arg0, &p->plan) == 0 && tracefs_ready(m, false))
        p->tracefs = define_tracefs_event(m, p, path, n, arg0, err, sizeof(err)) == 0;
    if (!p->tracefs) {
        if (uprobe_arg_plan_for(arg0, &p->plan) != 0)
            return -1;
        if (p->plan.method == UPROBE_ARG_TRACEFS) {
            if (!tracefs_ready(m, true))
                return -1;
            if (define_tracefs_event(m, p, path, n, arg0, err, sizeof(err)) != 0) {
                fprintf(stderr, "taskspy: marker %s:%s in %s: %s\n", n->provider, n->name, path, err);
                return -1;
            }
            p->tracefs = true;
        } else if (!m->have_pmu) {
            return -1;
        }
    }
    p->plan.sample_type |= PERF_SAMPLE_IP;
    size_t probe_index = m->n_probes;
    if (bpf_ready(m) && attach_via_bpf(m, p, path, n, (uint32_t)probe_index) == 0)
        return probe_attached(m, p, true);
    size_t opened = 0;
    for (size_t c = 0; c < m->n_cpus; c++) {
        int fd = open_on_cpu(m, p, path, n, m->buffers[c].cpu);
        if (fd < 0)
            continue;
        uint64_t id;
        if (remember_fd(m, fd) != 0) {
            close(fd);
            continue;
        }
        struct marker_buffer *b = &m->buffers[c];
        int routed;
        if (b->fd < 0) {
            if ((routed = ring_buffer_map_fitting(&b->rb, fd, m->buffer_pages)) == 0)
                b->fd = fd;
        } else {
            routed = ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, b->fd);
        }
        if (routed != 0 || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 ||
            u64_map_put(&m->probe_of_id, id, (uint32_t)probe_index) != 0) {
            fprintf(stderr, "taskspy: marker %s:%s: cannot route its records: %s\n", n->provider, n->name,
                    strerror(errno));
            continue;
        }
        opened++;
    }
    if (opened == 0) {
        fprintf(stderr, "taskspy: marker %s:%s in %s: cannot attach: %s\n", n->provider, n->name, path,
                strerror(errno));
        return -1;
    }
    return probe_attached(m, p, false);
}

static void attach_runtime_functions(struct markers *m, const struct elf_file *ef, const char *path)
{
    struct runtime_probe_list found;
    if (runtime_probes_find_with_debug(ef, path, m->root, &found) != 0)
        return;
    for (size_t i = 0; i < found.n; i++) {
        const struct runtime_probe *r = &found.v[i];
        struct usdt_arg id = { .kind = USDT_ARG_REG, .size = 8, .reg = r->id_register, .reg_bytes = 8 };
        struct probe_location entry = { r->runtime, "poll (function entry)", r->file_offset, 0, false };
        attach_location(m, path, &entry, MARKER_POLL_START, &id);
        if (m->poll_times) {
            struct probe_location ret = { r->runtime, "poll (return)", r->file_offset, 0, true };
            attach_location(m, path, &ret, MARKER_POLL_RETURN, NULL);
        }
    }
    m->runtime_functions += found.n;
    runtime_probes_free(&found);
}

void markers_scan_object(struct markers *m, const char *path)
{
    if (!m || !path || path[0] != '/' || already_scanned(m, path))
        return;
    char full[4200];
    snprintf(full, sizeof(full), "%s%s", m->root, path);
    struct elf_file ef;
    if (elf_file_open(&ef, full) != 0 && elf_file_open(&ef, path) != 0)
        return;
    struct usdt_note_list notes;
    if (usdt_notes_read(&ef, &notes) != 0) {
        elf_file_close(&ef);
        return;
    }
    size_t poll_markers = 0;
    /* First check every marker of the object can be decoded: a half-attached set (poll-start without
     * poll-end) would attribute wrongly, so an undecodable marker leaves the whole object out. */
    bool usable = true;
    for (size_t i = 0; i < notes.n && usable; i++) {
        const struct usdt_note *n = &notes.v[i];
        enum marker_kind k = kind_of(n->marker);
        if (k == MARKER_KIND_COUNT || !usdt_provider_selected(m->spec, n->provider) || !needs_arg(k))
            continue;
        struct usdt_arg a;
        struct uprobe_arg_plan plan;
        if (usdt_arg_parse(n->args, 0, &a) != USDT_ARG_OK || uprobe_arg_plan_for(&a, &plan) != 0) {
            fprintf(stderr, "taskspy: marker %s:%s in %s has an argument taskspy cannot decode ('%s'); "
                            "no markers from %s\n", n->provider, n->name, path, n->args, path);
            usable = false;
        }
    }
    /* Optional markers (spawn, terminate, park, unpark) only feed counts in the summary, but every location
     * costs an event per CPU and each event's teardown waits in the kernel: skip a kind with many sites
     * (tokio inlines spawn at every call site). */
    size_t sites[MARKER_KIND_COUNT] = { 0 };
    for (size_t i = 0; i < notes.n; i++) {
        enum marker_kind k = kind_of(notes.v[i].marker);
        if (k != MARKER_KIND_COUNT && usdt_provider_selected(m->spec, notes.v[i].provider))
            sites[k]++;
    }
    for (int k = 0; k < MARKER_KIND_COUNT; k++)
        if (k != MARKER_POLL_START && k != MARKER_POLL_END && sites[k] > MAX_OPTIONAL_SITES)
            fprintf(stderr, "taskspy: not attaching %zu %s markers in %s (optional; more than %d sites)\n",
                    sites[k], k == MARKER_SPAWN ? "task-spawn" : k == MARKER_TERMINATE ? "task-terminate" : "park",
                    path, MAX_OPTIONAL_SITES);
    for (size_t i = 0; i < notes.n && usable; i++) {
        const struct usdt_note *n = &notes.v[i];
        enum marker_kind k = kind_of(n->marker);
        if (k == MARKER_KIND_COUNT || !usdt_provider_selected(m->spec, n->provider))
            continue;
        if (k != MARKER_POLL_START && k != MARKER_POLL_END && sites[k] > MAX_OPTIONAL_SITES)
            continue;
        struct usdt_arg a;
        bool with_arg = needs_arg(k) && usdt_arg_parse(n->args, 0, &a) == USDT_ARG_OK;
        struct probe_location loc = { n->provider, n->name, n->pc_offset, n->semaphore_offset, false };
        if (attach_location(m, full, &loc, k, with_arg ? &a : NULL) == 0 && k == MARKER_POLL_START)
            poll_markers++;
    }
    /* No poll markers here: probe the poll functions of the runtimes taskspy knows (tokio's
     * Harness<T,S>::poll), the task's identity read from a register at entry. */
    if (usable && poll_markers == 0 && strcmp(m->spec, "auto") == 0)
        attach_runtime_functions(m, &ef, full);
    usdt_notes_free(&notes);
    elf_file_close(&ef);
}

void markers_enable(struct markers *m, bool on)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_fds; i++)
        ioctl(m->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

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
    const struct marker_probe *p = &m->probes[idx];
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
    if (rec->location >= r->m->n_probes)
        return;
    struct marker_hit hit = {
        .tid = rec->tid, .kind = r->m->probes[rec->location].kind, .time_ns = rec->time_ns, .arg0 = rec->arg0,
        .probe_addr = rec->ip,
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
        uint64_t lost = 0;
        marker_bpf_read(m->bpf, queue_bpf_record, &r, &lost);
        if (lost) {
            counts->lost += lost;
            task_tracker_lost(tasks);
        }
    }
    for (size_t c = 0; m && c < m->n_cpus; c++)
        if (m->buffers[c].fd >= 0)
            ring_buffer_drain(&m->buffers[c].rb, read_record, &r);
}

size_t markers_buffer_fds(const struct markers *m, int *fds, size_t max)
{
    size_t n = 0;
    if (m && m->bpf && n < max)
        fds[n++] = marker_bpf_wake_fd(m->bpf);
    for (size_t c = 0; m && c < m->n_cpus && n < max; c++)
        if (m->buffers[c].fd >= 0)
            fds[n++] = m->buffers[c].fd;
    return n;
}

size_t markers_poll_starts(const struct markers *m)
{
    size_t n = 0;
    for (size_t i = 0; m && i < m->n_probes; i++)
        n += m->probes[i].kind == MARKER_POLL_START;
    return n;
}

void markers_routes(const struct markers *m, size_t *via_bpf, size_t *via_perf)
{
    *via_bpf = *via_perf = 0;
    for (size_t i = 0; m && i < m->n_probes; i++)
        ++*(m->probes[i].bpf ? via_bpf : via_perf);
}

size_t markers_count(const struct markers *m)
{
    return m ? m->n_probes : 0;
}

void markers_stats(struct markers *m, struct sampler_probe_stat **probes, size_t *n)
{
    *probes = m ? m->stats : NULL;
    *n = m ? m->n_stats : 0;
}

struct close_slice {
    const int *fds;
    size_t n;
};

static void *close_fds(void *arg)
{
    const struct close_slice *c = arg;
    for (size_t i = 0; i < c->n; i++)
        close(c->fds[i]);
    return NULL;
}

/* Closing a uprobe event waits in the kernel for the probe's unregistration (an SRCU grace period, tens of
 * milliseconds), one close after another: hundreds of marker events would take many seconds. Concurrent
 * closes share grace periods, so close them from several threads at once. */
static void close_all(const int *fds, size_t n)
{
    enum { MAX_CLOSERS = 32 };
    pthread_t threads[MAX_CLOSERS];
    struct close_slice slices[MAX_CLOSERS];
    size_t n_threads = n < MAX_CLOSERS ? n : MAX_CLOSERS, started = 0;
    for (size_t t = 0; t < n_threads; t++) {
        size_t from = n * t / n_threads, to = n * (t + 1) / n_threads;
        slices[t] = (struct close_slice){ fds + from, to - from };
        if (pthread_create(&threads[t], NULL, close_fds, &slices[t]) != 0) {
            close_fds(&slices[t]);      /* no thread: close them here */
            continue;
        }
        started |= (size_t)1 << t;
    }
    for (size_t t = 0; t < n_threads; t++)
        if (started & ((size_t)1 << t))
            pthread_join(threads[t], NULL);
}

void markers_close(struct markers *m)
{
    if (!m)
        return;
    for (size_t c = 0; c < m->n_cpus; c++)
        if (m->buffers[c].fd >= 0)
            ring_buffer_unmap(&m->buffers[c].rb);
    free(m->buffers);
    close_all(m->fds, m->n_fds);
    marker_bpf_close(m->bpf);             /* after the links and events: nothing writes the slots any more */
    if (m->tracefs_state == 1) {
        size_t n = 0;
        struct uprobe_tracefs_event *evs = calloc(m->n_probes ? m->n_probes : 1, sizeof(*evs));
        for (size_t i = 0; evs && i < m->n_probes; i++)
            if (m->probes[i].tracefs)
                evs[n++] = m->probes[i].tracefs_event;
        uprobe_tracefs_cleanup(&m->tracefs, evs, n);
        free(evs);
    }
    for (size_t i = 0; i < m->n_scanned; i++)
        free(m->scanned[i]);
    free(m->scanned);
    free(m->fds);
    free(m->probes);
    free(m->stats);
    u64_map_free(&m->probe_of_id);
    free(m);
}
