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
#include "sampler/markers/markers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <pthread.h>

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
void markers_enable(struct markers *m, bool on)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_fds; i++)
        ioctl(m->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
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
