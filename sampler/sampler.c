/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sampler.c: opening, the recording loop, closing. One sampling event per (thread, CPU) of the target with
 * inherit=1, so the threads it creates are followed; all events of a CPU write into one ring buffer per CPU
 * (as perf record does; the kernel refuses to map inherited per-task buffers; sampler_events.c). Marker
 * uprobes write into marker buffers of their own (sampler/markers/). A thread migrates between CPUs, so each
 * round first takes the marker records of every CPU up to the round's cut-off time, then consumes samples up
 * to that time: each sample sees all markers before it. The reading thread only copies records out and
 * attributes samples (sampler_round.c); a processing thread unwinds them and feeds the sink
 * (sampler_records.c), so a slow unwind never leaves the kernel's buffers full. */
#include "sampler/sampler_internal.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc_exe.h"
#include "sampler/bpf/bpf_slots.h"

_Static_assert(SAMPLER_MARKER_SLOT_BITS_MIN == BPF_SLOTS_MIN_BITS && SAMPLER_MARKER_SLOT_BITS_MAX == BPF_SLOTS_MAX_BITS,
               "the sampler's slot bits are the BPF slot regions'");

/* ---- opening ------------------------------------------------------------------------------------ */

static struct sampler *sampler_new(const struct sampler_config *cfg)
{
    struct sampler *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cfg = *cfg;
    s->stats.return_reads_at_s = -1;
    s->target.go_fd = s->target.exec_error_fd = s->target.pidfd = -1;
    if (u64_map_init(&s->attached, 64) != 0 || u64_map_init(&s->born, 64) != 0 || thread_names_init(&s->names) != 0 ||
        task_tracker_init(&s->tasks) != 0 || record_queue_init(&s->queue, SAMPLER_QUEUE_MAX_BYTES) != 0) {
        sampler_close(s);
        return NULL;
    }
    if (cfg->long_running)
        record_queue_keep_spares_under(&s->queue, SAMPLER_LONG_RUNNING_SPARE_MAX_BYTES);
    return s;
}

static int open_target(struct sampler *s, char *err, size_t errlen)
{
    int rc = s->cfg.pid > 0 ? target_attach(&s->target, s->cfg.pid, err, errlen)
                            : target_launch(&s->target, s->cfg.argv, err, errlen);
    snprintf(s->root, sizeof(s->root), "/proc/%d/root", (int)s->target.pid);
    return rc;
}

/* The largest sample record: header, identifier, ip, tid, time, then the user registers and stack (dwarf) or
 * the callchain (fp, and kernel frames in either mode). */
static size_t sample_record_bytes(const struct sampler_config *cfg)
{
    size_t bytes = 8 + 4 * 8;
    if (cfg->call_graph == SAMPLER_CALL_GRAPH_DWARF)
        bytes += 8 + (size_t)__builtin_popcountll(USER_REGS_MASK) * 8 + 8 + cfg->stack_size + 8;
    if (cfg->call_graph == SAMPLER_CALL_GRAPH_FP || cfg->kernel)
        bytes += 8 + SAMPLER_MAX_FRAMES * 8;
    return bytes;
}

static size_t choose_buffer_pages(const struct sampler_config *cfg, size_t n_cpus)
{
    if (cfg->mmap_pages)
        return cfg->mmap_pages;
    return ring_buffer_pages_for(cfg->frequency, sample_record_bytes(cfg), n_cpus, (size_t)sysconf(_SC_PAGESIZE));
}

/* The per-CPU sample buffers (not mapped yet) and the unwinder. */
static int set_up_buffers(struct sampler *s, char *err, size_t errlen)
{
    long n_cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (n_cpus < 1)
        n_cpus = 1;
    /* Two buffers per CPU (samples, markers) within the locked memory perf grants a process without
     * CAP_IPC_LOCK: sized up front, so the marker buffers are not left without room. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE), record = sample_record_bytes(&s->cfg);
    if (s->cfg.mmap_pages && s->cfg.mmap_pages * page < 2 * record) {
        /* the kernel drops a record larger than the buffer without a trace: refuse instead */
        size_t least = 1;
        while (least * page < 2 * record)
            least *= 2;
        snprintf(err, errlen, "--mmap-pages %zu is too small for two samples of %zu bytes: at least %zu", s->cfg.mmap_pages,
                 record, least);
        return -1;
    }
    size_t wanted = choose_buffer_pages(&s->cfg, (size_t)n_cpus);
    size_t pages = ring_buffer_pages_within(wanted, 2 * (size_t)n_cpus, ring_buffer_lock_budget());
    if (pages < wanted && s->cfg.mmap_pages && s->cfg.on_warning) {
        char msg[160];
        snprintf(msg, sizeof(msg), "--mmap-pages %zu is more locked memory than perf allows; using %zu pages",
                 wanted, pages);
        s->cfg.on_warning(s->cfg.warning_ctx, msg);
    }
    if (cpu_buffers_init(&s->cpus, NULL, (size_t)n_cpus, pages) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->unwinder = unwinder_new(&s->maps, s->root);
    if (!s->unwinder) {
        snprintf(err, errlen, "cannot set up the unwinder");
        return -1;
    }
    return 0;
}

/* The sampling events: of the launched command (held before exec), or of every thread of the process. */
static int open_events(struct sampler *s, char *err, size_t errlen)
{
    if (s->target.launched) {
        if (sampler_open_first_event(s, s->target.pid, err, errlen) != 0)
            return -1;
        char name[THREAD_NAME_LEN];
        const char *base = strrchr(s->cfg.argv[0], '/');
        snprintf(name, sizeof(name), "%s", base ? base + 1 : s->cfg.argv[0]);
        sampler_name_thread(s, s->target.pid, name);
        return 0;
    }
    if (sampler_attach_new_threads(s, true, err, errlen) != 0)
        return -1;
    if (proc_maps_load(&s->maps, s->target.pid) != 0) {
        snprintf(err, errlen, "cannot read /proc/%d/maps: %s", (int)s->target.pid, strerror(errno));
        return -1;
    }
    return 0;
}

/* The marker layer, on the CPUs that have sample buffers, and the objects known so far scanned for
 * markers: the command about to be exec'd, or what the process maps. */
static int open_markers(struct sampler *s, char *err, size_t errlen)
{
    int cpu_ids[1024];
    struct markers_config mc = {
        .spec = s->probe_spec, .poll_times = s->cfg.poll_times, .pid = s->target.pid, .root = s->root,
        .cpus = cpu_ids, .n_cpus = cpu_buffers_mapped(&s->cpus, NULL, cpu_ids, 1024), .buffer_pages = s->cpus.pages,
        .records = s->cfg.marker_records, .slot_bits = s->cfg.marker_slot_bits, .uprobes = s->cfg.uprobe_events, .on_warning = sampler_relay_warning,
        .warning_ctx = s, .wait_profile = s->cfg.wait_profile, .waker_symbol = s->cfg.waker_symbol,
        .on_waker_site = s->cfg.wait_profile ? sampler_wait_site : NULL, .debug_files = s->cfg.debug_files,
    };
    if (markers_open(&s->markers, &mc, err, errlen) != 0)
        return -1;
    if (!s->markers)
        return 0;
    if (s->target.launched) {
        char exe[4096];
        if (target_resolve_command(s->cfg.argv[0], s->cfg.search_path, exe, sizeof(exe)))
            markers_scan_object(s->markers, exe, true);
        return 0;
    }
    /* the executable's debug file may be downloaded now, before the recording; the libraries' when symbolized */
    char link[64], exe[4096];
    (void)proc_exe_path(s->target.pid, link, sizeof(link), exe, sizeof(exe));   /* ("" if gone: no object is it) */
    for (size_t i = 0; i < s->maps.n; i++)
        if (s->maps.v[i].executable && s->maps.v[i].path[0] == '/')
            markers_scan_object(s->markers, s->maps.v[i].path, strcmp(s->maps.v[i].path, exe) == 0);
    return 0;
}

/* The TLS route learns where the executable is mapped (later mappings come as records). */
static void tell_tls_known_maps(struct sampler *s)
{
    for (size_t i = 0; i < s->maps.n; i++)
        if (s->maps.v[i].executable)
            sampler_tls_mapping(s, s->maps.v[i].path, s->maps.v[i].start, s->maps.v[i].end, s->maps.v[i].pgoff);
}

int sampler_open(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    struct sampler *s = sampler_new(cfg);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (open_target(s, err, errlen) != 0 || set_up_buffers(s, err, errlen) != 0) {
        sampler_close(s);
        return -1;
    }
    sampler_tls_open(s);       /* before the events: each gets the TLS program as it opens */
    if (sampler_wait_open(s) != 0) {
        snprintf(err, errlen, "out of memory");
        sampler_close(s);
        return -1;
    }
    if (open_events(s, err, errlen) != 0 || open_markers(s, err, errlen) != 0) {
        sampler_close(s);
        return -1;
    }
    tell_tls_known_maps(s);
    *out = s;
    return 0;
}

/* ---- recording ---------------------------------------------------------------------------------- */

/* Tell the sink what is already known: thread names and mappings found while opening. */
static void announce_known(struct sampler *s)
{
    for (size_t i = 0; i < s->names.n && s->sink->on_thread_name; i++)
        s->sink->on_thread_name(s->sink->ctx, (uint32_t)i, s->names.v[i].tid, s->names.v[i].name);
    for (size_t i = 0; i < s->maps.n; i++)
        sampler_emit_mapping(s, &s->maps.v[i]);
}

/* Let the launched command exec (its events enable on exec), or enable the events of the running process. */
static int start_recording(struct sampler *s, char *err, size_t errlen)
{
    s->start_ns = now_ns();
    s->next_progress_ns = s->start_ns + SAMPLER_PROGRESS_INTERVAL_NS;
    if (s->target.launched)
        return target_release(&s->target, s->cfg.argv[0], err, errlen);
    sampler_enable(s, true);
    /* Threads born between listing and enabling: catch them now. */
    return sampler_attach_new_threads(s, false, err, errlen);
}

/* Wait until a buffer has records, the target exits or the poll interval (at most 100 ms, less before the
 * deadline) passes. Returns 0, or -1 with a message in err. */
static int wait_for_records(struct sampler *s, struct pollfd *pfds, int *fds, size_t max_fds, uint64_t deadline,
                            char *err, size_t errlen)
{
    size_t n_fds = cpu_buffers_mapped(&s->cpus, fds, NULL, max_fds - 1);
    n_fds += markers_buffer_fds(s->markers, fds + n_fds, max_fds - 1 - n_fds);
    if (s->target.pidfd >= 0)
        fds[n_fds++] = s->target.pidfd;
    for (size_t i = 0; i < n_fds; i++)
        pfds[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
    uint64_t t = now_ns();
    int timeout_ms = 100;
    if (deadline != UINT64_MAX && deadline > t && (deadline - t) / 1000000 < (uint64_t)timeout_ms)
        timeout_ms = (int)((deadline - t) / 1000000) + 1;
    if (poll(pfds, n_fds, timeout_ms) < 0 && errno != EINTR) {
        snprintf(err, errlen, "poll failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* How the recording goes, to the sink (through the processing thread), every SAMPLER_PROGRESS_INTERVAL_NS. */
static void report_progress(struct sampler *s, uint64_t t)
{
    if (t < s->next_progress_ns || !s->sink->on_progress)
        return;
    s->next_progress_ns = t + SAMPLER_PROGRESS_INTERVAL_NS;
    sampler_queue_progress(s, t);
}

/* Whether the recording is over: stop asked for, the deadline passed, or the target exited. */
static bool recording_done(struct sampler *s, uint64_t t, uint64_t deadline)
{
    if ((s->cfg.stop && *s->cfg.stop) || t >= deadline)
        return true;
    if (!target_poll_exit(&s->target))
        return false;
    s->stats.target_exited = true;
    s->stats.target_status = s->target.status;
    return true;
}

/* The reading thread as a real-time one (SCHED_FIFO, the lowest priority) while it records, when the process
 * may (root, CAP_SYS_NICE): on a loaded machine a normal thread that the doorbell wakes can wait 100-300 ms
 * for a CPU (measured beside a CI run whose Chromium runs at nice -8: poll returned 120-325 ms after it was
 * called with a 100 ms timeout, the thread having run 0.2 ms in between), longer than a BPF slot region lasts
 * at saturation. It sleeps in poll between rounds and never waits on the processing thread
 * (sampler_hand_over), which stays a normal thread (started before), as does any thread or process started
 * from this one (SCHED_RESET_ON_FORK). */
static void reader_realtime(struct sampler *s, bool on)
{
    struct sched_param param = { .sched_priority = on ? 1 : 0 };
    if (on && s->processing)      /* (without a processing thread this one unwinds too: no real-time work) */
        s->stats.reader_realtime = sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0;
    else if (s->stats.reader_realtime && sched_setscheduler(0, SCHED_OTHER, &param) != 0 && s->cfg.on_warning)
        s->cfg.on_warning(s->cfg.warning_ctx, "cannot make the reading thread a normal one again");
}

/* Read rounds of records until the recording is over; a running process's new threads are attached about
 * every second (those born under an event inherit it). Returns 0, or -1 with a message in err. */
static int record_rounds(struct sampler *s, char *err, size_t errlen)
{
    uint64_t deadline = s->cfg.duration > 0 ? s->start_ns + (uint64_t)(s->cfg.duration * 1e9) : UINT64_MAX;
    uint64_t next_rescan = s->start_ns + 200000000ull;
    size_t max_fds = 2 * s->cpus.n + 2;   /* samples, markers (per CPU, and the BPF ring), target */
    struct pollfd *pfds = calloc(max_fds, sizeof(*pfds));
    int *fds = calloc(max_fds, sizeof(*fds));
    if (!pfds || !fds) {
        free(pfds);
        free(fds);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    while (rc == 0) {
        if ((rc = wait_for_records(s, pfds, fds, max_fds, deadline, err, errlen)) != 0)
            break;
        sampler_read_round(s, false);
        uint64_t t = now_ns();
        if (recording_done(s, t, deadline))
            break;
        report_progress(s, t);
        if (!s->target.launched && t >= next_rescan) {
            next_rescan = t + 1000000000ull;
            rc = sampler_attach_new_threads(s, false, err, errlen);
        }
    }
    free(pfds);
    free(fds);
    return rc;
}

/* Disable the events, read what is left, end a launched command still running, and fill the statistics. */
static void finish_recording(struct sampler *s)
{
    /* the recording's duration ends here, where the events stop: not after the last round and the processing
       thread's drain, which on a loaded machine took 1-2 s more (a 3-s recording then said 4.8 s, and a wait
       profile measured against it fell short by as much) */
    s->stats.duration_s = (double)(now_ns() - s->start_ns) / 1e9;
    sampler_enable(s, false);
    sampler_read_round(s, true);
    sampler_stop_processing(s);
    s->stats.dropped_samples += s->copy_failures;
    if (!s->stats.target_exited && s->target.launched)
        target_terminate(&s->target, 1000);
    task_tracker_sort(&s->tasks);
    s->stats.polls = s->tasks.polls;
    s->stats.timed_polls = s->tasks.timed_polls;
    s->stats.spawns = s->tasks.spawns;
    s->stats.terminates = s->tasks.terminates;
    s->stats.long_polls = s->tasks.long_polls;
    s->stats.late_markers = s->tasks.late_hits;
    s->stats.tasks = s->tasks.tasks.v;
    s->stats.n_tasks = s->tasks.tasks.n;
    sampler_tls_stats(s);
    sampler_wait_finish(s);
    s->stats.tasks_seen = s->tasks.tasks.n;
    if (s->markers) {
        markers_stats(s->markers, &s->stats.probes, &s->stats.n_probes);
        markers_routes(s->markers, &s->stats.marker_locations_bpf, &s->stats.marker_locations_perf);
        s->stats.bpf_region_slots = markers_bpf_region_slots(s->markers);
        s->stats.task_completion_unknown = markers_completion_unknown(s->markers);
    }
}

int sampler_run(struct sampler *s, const struct sampler_sink *sink, char *err, size_t errlen)
{
    s->sink = sink;
    s->tasks.on_poll = sink->on_poll ? sampler_queue_poll : NULL;
    s->tasks.poll_ctx = s;
    s->tasks.on_task_event = s->wait && (sink->on_task_event || sink->on_wait_stack) ? sampler_wait_queue_event : NULL;
    announce_known(s);
    if (start_recording(s, err, errlen) != 0)
        return -1;
    /* From here the sink hears from the processing thread; without it (it could not start), from this one. */
    sampler_start_processing(s);
    reader_realtime(s, true);
    int rc = record_rounds(s, err, errlen);
    finish_recording(s);
    reader_realtime(s, false);    /* symbolizing and writing the output are no real-time work */
    return rc;
}

/* ---- questions and closing ---------------------------------------------------------------------- */

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

bool sampler_command_path(const char *cmd, const char *search_path, char *buf, size_t len)
{
    return target_resolve_command(cmd, search_path, buf, len);
}

void sampler_close(struct sampler *s)
{
    if (!s)
        return;
    sampler_stop_processing(s);     /* (already stopped when sampler_run ran) */
    if (s->markers)
        markers_close(s->markers);
    tls_join_close(s->tls);
    cpu_buffers_free(&s->cpus);
    event_fds_close(&s->events);
    sampler_wait_close(s);          /* after its events are closed: it removes their tracefs definitions */
    if (s->target.launched && !s->target.exited && s->target.go_fd < 0)
        target_terminate(&s->target, 1000);
    target_close(&s->target);
    if (s->unwinder)
        unwinder_free(s->unwinder);
    proc_maps_free(&s->maps);
    task_tracker_free(&s->tasks);
    u64_map_free(&s->attached);
    u64_map_free(&s->born);
    record_batch_free(&s->batch);
    record_queue_free(&s->queue);
    thread_names_free(&s->names);
    free(s);
}
