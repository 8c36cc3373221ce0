/* SPDX-License-Identifier: GPL-3.0-or-later */
/* marker_attach.c: attaching one probe location, the first route that works: a BPF program on a
 * uprobe_multi link, a BPF program on the location's uprobe event, or uprobe events (tracefs, else the
 * uprobe PMU) writing perf samples into the per-CPU marker buffers. */
#include "sampler/markers/markers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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
                markers_warn(m, "system-wide uprobes not permitted; markers follow threads the target "
                                "creates from now on only");
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
    for (size_t i = 0; i < m->stats.n; i++)
        if (strcmp(m->stats.v[i].provider, p->provider) == 0 && strcmp(m->stats.v[i].name, p->name) == 0) {
            m->stats.v[i].locations++;
            return;
        }
    struct sampler_probe_stat *st = vec_push(&m->stats);
    if (!st)
        return;
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
                markers_warn(m, "%s", err);
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
        m->bpf_state = marker_bpf_open(&m->bpf, m->pid, m->slot_bits, err, sizeof(err)) == 0 ? 1 : -1;
        /* Not permitted: uprobes are not either (both need CAP_SYS_ADMIN here), and attaching says so. */
        if (m->bpf_state != 1 && !bpf_not_permitted(m, errno))
            markers_warn(m, "markers write perf samples (%s)", err);
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
                                        n->return_read, err, sizeof(err));
    if (link >= 0 && event_fds_add(&m->events, link) == 0)      /* closed with the events, concurrently */
        return 0;
    int saved = link >= 0 ? ENOMEM : errno;
    if (link >= 0) {
        close(link);
        snprintf(err, sizeof(err), "out of memory");
    }
    m->bpf_links = false;
    markers_warn(m, "%s (%s)",
                 bpf_not_permitted(m, saved) ? "markers write perf samples" : "marker programs run on uprobe events", err);
    return -1;
}

/* Attach a location the BPF way: one event (on the first CPU: a tracefs or uprobe PMU event runs its program
 * on every hit of the probe, whichever CPU) with the location's program. Returns 0, or -1 when this location
 * needs perf samples instead (reported once). */
static int attach_via_bpf(struct markers *m, struct marker_probe *p, const char *path, const struct probe_location *n,
                          uint32_t location)
{
    int fd = open_on_cpu(m, p, path, n, m->buffers.n ? m->buffers.v[0].cpu : 0);
    if (fd < 0)
        return -1;
    char err[512];
    if (marker_bpf_attach_event(m->bpf, fd, location, p->has_arg ? &p->arg0 : NULL, n->return_read, err,
                                sizeof(err)) != 0 ||
        event_fds_add(&m->events, fd) != 0) {
        int saved = errno;
        close(fd);
        markers_warn(m, "marker %s:%s in %s writes perf samples: %s", n->provider, n->name, path, err);
        bpf_not_permitted(m, saved);
        return -1;
    }
    return 0;
}

/* probes.v[probes.n] (p) is attached: keep it (n: its location). */
static int probe_attached(struct markers *m, struct marker_probe *p, bool bpf, const struct probe_location *n)
{
    p->bpf = bpf;
    if (bpf && n->return_read == BPF_RETURN_WHEN_FLAGGED)
        __atomic_fetch_add(&m->flagged_reads, 1, __ATOMIC_RELAXED);
    m->registration_probes |= p->kind == MARKER_WAKER_REGISTERED || p->kind == MARKER_RUNTIME_WAKER_REGISTERED;
    m->terminate_probes |= p->kind == MARKER_TERMINATE;
    m->probes.n++;
    count_probe_stat(m, p);
    return 0;
}

/* The next probe, not counted until attached: probes.v[probes.n], or NULL when out of memory. */
static struct marker_probe *new_probe(struct markers *m, const struct probe_location *n, enum marker_kind kind,
                                      const struct usdt_arg *arg0)
{
    if (vec_reserve(&m->probes, m->probes.n + 1) != 0)
        return NULL;
    struct marker_probe *p = &m->probes.v[m->probes.n];
    memset(p, 0, sizeof(*p));
    snprintf(p->provider, sizeof(p->provider), "%s", n->provider);
    snprintf(p->name, sizeof(p->name), "%s", n->name);
    p->kind = kind;
    p->has_arg = arg0 != NULL;
    if (arg0)
        p->arg0 = *arg0;
    return p;
}

/* Choose the location's uprobe event: one tracefs event when tracefs is at hand (one probe consumer however
 * many CPUs); else, or when tracefs cannot express the argument, uprobe PMU events. A heap memory operand
 * only tracefs can fetch: for it tracefs is mounted if need be. Returns 0, or -1 when there is no way. */
static int choose_uprobe_event(struct markers *m, struct marker_probe *p, const char *path,
                               const struct probe_location *n, const struct usdt_arg *arg0)
{
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
                markers_warn(m, "marker %s:%s in %s: %s", n->provider, n->name, path, err);
                return -1;
            }
            p->tracefs = true;
        } else if (!m->have_pmu) {
            return -1;
        }
    }
    p->plan.sample_type |= PERF_SAMPLE_IP;
    return 0;
}

/* Attach a location the perf way: its event on every CPU, each writing a perf sample per hit into the CPU's
 * marker buffer. Returns 0, or -1 when no CPU's event could be opened (reported). */
static int attach_perf_samples(struct markers *m, struct marker_probe *p, const char *path,
                               const struct probe_location *n, uint32_t probe_index)
{
    size_t opened = 0;
    for (size_t c = 0; c < m->buffers.n; c++) {
        int fd = open_on_cpu(m, p, path, n, m->buffers.v[c].cpu);
        if (fd < 0)
            continue;
        if (event_fds_add(&m->events, fd) != 0) {
            close(fd);
            continue;
        }
        uint64_t id;
        if (cpu_buffers_route(&m->buffers, c, fd) != 0 || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 ||
            u64_map_put(&m->probe_of_id, id, probe_index) != 0) {
            markers_warn(m, "marker %s:%s: cannot route its records: %s", n->provider, n->name, strerror(errno));
            continue;
        }
        opened++;
    }
    if (opened == 0) {
        markers_warn(m, "marker %s:%s in %s: cannot attach: %s", n->provider, n->name, path, strerror(errno));
        return -1;
    }
    return 0;
}

int attach_location(struct markers *m, const char *path, const struct probe_location *n, enum marker_kind kind,
                    const struct usdt_arg *arg0)
{
    struct marker_probe *p = new_probe(m, n, kind, arg0);
    if (!p)
        return -1;
    uint32_t probe_index = (uint32_t)m->probes.n;
    if (m->bpf_links && bpf_ready(m) && attach_via_bpf_link(m, path, n, arg0, probe_index) == 0)
        return probe_attached(m, p, true, n);
    if (choose_uprobe_event(m, p, path, n, arg0) != 0)
        return -1;
    if (bpf_ready(m) && attach_via_bpf(m, p, path, n, probe_index) == 0)
        return probe_attached(m, p, true, n);
    if (attach_perf_samples(m, p, path, n, probe_index) != 0)
        return -1;
    return probe_attached(m, p, false, n);
}

int offer_registration(struct markers *m, const char *path, const struct probe_location *n, enum marker_kind kind,
                       const struct usdt_arg *arg0, bool runtime_ids)
{
    if (!m->on_waker_site || !bpf_ready(m))
        return -1;
    struct marker_probe *p = new_probe(m, n, kind, arg0);
    if (!p)
        return -1;
    struct bpf_marker_program_spec slots;
    marker_bpf_program_spec(m->bpf, (uint32_t)m->probes.n, arg0, n->return_read, &slots);
    if (!m->on_waker_site(m->warning_ctx, path, n->offset, runtime_ids, &slots))
        return -1;
    return probe_attached(m, p, true, n);
}
