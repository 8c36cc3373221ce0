/* SPDX-License-Identifier: GPL-3.0-or-later */
/* markers.c: USDT poll markers of the target. Each object the target maps (or will exec) is scanned once
 * for stapsdt notes, and every location of a marker name is attached (marker_discovery.c). Hits become
 * marker hits (thread, time, kind, arg0, probe address) for the task tracker, read in one pass per round
 * (marker_hits.c). Three ways, the first that works (marker_attach.c; the debugging setting
 * SAMPLER_MARKER_RECORDS_BPF_EVENT or _PERF skips to the second or third):
 *   1. a BPF program per location on a uprobe_multi link filtered to the target, writing a slot in its
 *      CPU's region (sampler/markers/bpf_route.h): about perf stat's counting cost per hit;
 *   2. the same program on the location's uprobe event (kernels without uprobe_multi links);
 *   3. without BPF: the event writes a perf sample per hit into per-CPU ring buffers of markers' own.
 * Events are system-wide per CPU (filtered to the target's pid, so threads created later and libraries
 * dlopened later are covered), one tracefs uprobe event per location where tracefs is writable (one probe
 * consumer whatever the number of CPUs), else uprobe PMU events (SAMPLER_UPROBES_PMU forces them). Closing
 * links and events removes the uprobes and lowers the semaphores; tracefs definitions are removed on exit
 * and, after a SIGKILL, at the next start. This file: opening, the questions the sampler asks, closing. */
#include "sampler/markers/markers_internal.h"
#include "sampler/sampler_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int markers_open(struct markers **out, const struct markers_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    if (cfg->spec && strcmp(cfg->spec, "none") == 0)
        return 0;
    struct markers *m = calloc(1, sizeof(*m));
    if (!m || cpu_buffers_init(&m->buffers, cfg->cpus, cfg->n_cpus, cfg->buffer_pages) != 0 ||
        u64_map_init(&m->probe_of_id, 64) != 0) {
        markers_close(m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    m->pid = cfg->pid;
    m->bpf_until_ns = UINT64_MAX;   /* (a launched command: from its exec on, enable or not) */
    m->spec = cfg->spec ? cfg->spec : "auto";
    m->poll_times = cfg->poll_times;
    m->wait_profile = cfg->wait_profile;
    m->waker_symbol = cfg->waker_symbol;
    m->on_waker_site = cfg->on_waker_site;
    snprintf(m->root, sizeof(m->root), "%s", cfg->root ? cfg->root : "");
    m->debug_files = cfg->debug_files;
    m->have_pmu = uprobe_pmu_info(&m->pmu) == 0;
    m->prefer_tracefs = cfg->uprobes != SAMPLER_UPROBES_PMU;
    m->bpf_state = cfg->records == SAMPLER_MARKER_RECORDS_PERF ? -1 : 0;
    m->bpf_links = cfg->records != SAMPLER_MARKER_RECORDS_BPF_EVENT;
    m->slot_bits = cfg->slot_bits;
    m->on_warning = cfg->on_warning;
    m->warning_ctx = cfg->warning_ctx;
    *out = m;
    return 0;
}

void markers_warn(const struct markers *m, const char *fmt, ...)
{
    if (!m->on_warning)
        return;
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    m->on_warning(m->warning_ctx, message);
}

void markers_enable(struct markers *m, bool on)
{
    if (!m)
        return;
    uint64_t now = now_ns();           /* (the sampler's clock: 0 when it cannot be read) */
    if (on) {
        m->bpf_from_ns = now;
        m->bpf_until_ns = UINT64_MAX;
    } else if (now) {
        m->bpf_until_ns = now;
    }
    event_fds_enable_from(&m->events, 0, on);
    if (on && m->bpf)
        marker_bpf_skip_overrun(m->bpf);   /* the recording starts: earlier overruns are no loss of it */
}

size_t markers_buffer_fds(const struct markers *m, int *fds, size_t max)
{
    if (!m)
        return 0;
    size_t n = 0;
    if (m->bpf && n < max)
        fds[n++] = marker_bpf_wake_fd(m->bpf);
    return n + cpu_buffers_mapped(&m->buffers, fds + n, NULL, max - n);
}

size_t markers_poll_starts(const struct markers *m)
{
    size_t n = 0;
    for (size_t i = 0; m && i < m->probes.n; i++)
        n += m->probes.v[i].kind == MARKER_POLL_START;
    return n;
}

int markers_read_return_addresses(struct markers *m)
{
    if (!m || !m->bpf || __atomic_load_n(&m->flagged_reads, __ATOMIC_RELAXED) == 0)
        return -1;
    return marker_bpf_read_returns(m->bpf);
}

uint64_t markers_bpf_region_slots(const struct markers *m)
{
    return m && m->bpf ? marker_bpf_region_slots(m->bpf) : 0;
}

void markers_routes(const struct markers *m, size_t *via_bpf, size_t *via_perf)
{
    *via_bpf = *via_perf = 0;
    for (size_t i = 0; m && i < m->probes.n; i++)
        ++*(m->probes.v[i].bpf ? via_bpf : via_perf);
}

size_t markers_count(const struct markers *m)
{
    return m ? m->probes.n : 0;
}

size_t markers_waker_locations(const struct markers *m)
{
    return m ? m->waker_locations : 0;
}

void markers_stats(struct markers *m, struct sampler_probe_stat **probes, size_t *n)
{
    *probes = m ? m->stats.v : NULL;
    *n = m ? m->stats.n : 0;
}

bool markers_completion_unknown(const struct markers *m)
{
    return m && m->registration_probes && !m->terminate_probes;
}

/* The tracefs definitions of the attached probes, removed once their events are closed. */
static void remove_tracefs_events(struct markers *m)
{
    if (m->tracefs_state != 1)
        return;
    VEC_OF(struct uprobe_tracefs_event) evs = { 0 };
    if (vec_reserve(&evs, m->probes.n ? m->probes.n : 1) == 0)
        for (size_t i = 0; i < m->probes.n; i++)
            if (m->probes.v[i].tracefs)
                evs.v[evs.n++] = m->probes.v[i].tracefs_event;
    uprobe_tracefs_cleanup(&m->tracefs, evs.v, evs.n);
    vec_free(&evs);
}

void markers_close(struct markers *m)
{
    if (!m)
        return;
    cpu_buffers_free(&m->buffers);
    event_fds_close(&m->events);
    marker_bpf_close(m->bpf);             /* after the links and events: nothing writes the slots any more */
    remove_tracefs_events(m);
    for (size_t i = 0; i < m->scanned.n; i++)
        free(m->scanned.v[i]);
    vec_free(&m->scanned);
    vec_free(&m->probes);
    vec_free(&m->stats);
    u64_map_free(&m->probe_of_id);
    free(m);
}
