/* sampler.c: the recording loop. One sampling event per (thread, CPU) of the target with inherit=1, so the
 * threads it creates are followed; all events of a CPU write into one ring buffer per CPU (as perf record
 * does; the kernel refuses to map inherited per-task buffers). Marker uprobes write into marker buffers of
 * their own (markers.c). A thread migrates between CPUs, so each round first takes the marker records of
 * every CPU up to the round's cut-off time, then consumes samples up to that time: each sample sees all
 * markers before it. */
#include "sampler/sampler_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t choose_buffer_pages(size_t n_cpus)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t want = TOTAL_BUFFER_BYTES / (n_cpus ? n_cpus : 1) / page;
    size_t pages = 32;
    while (pages * 2 <= want && pages < 2048)
        pages *= 2;
    return pages;
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
