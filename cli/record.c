/* record.c: `taskspy record`: wires sampler -> symbolize -> flamegraph. Each sample's addresses are
 * turned into prepared frames through a per-address cache (symbolized and named once), the stack is merged
 * into the profile by task or thread, and at the end the output is written whole and a summary printed. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/output_formats.h"
#include "cli/record_options.h"
#include "cli/status_line.h"
#include "flamegraph/flamegraph.h"
#include "sampler/sampler.h"
#include "base/u64_map.h"
#include "base/vec.h"
#include "symbolize/symbolize.h"

#define MAX_EXPANDED_FRAMES (SAMPLER_MAX_FRAMES * 8)
#define RETURN_ADDRESS_BIT (1ULL << 63)

/* The one piece of state a signal handler may touch. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct cached_address {
    uint32_t first;            /* into frame_pool, outermost first */
    uint32_t n;
};

struct record_sink {
    struct symbolizer *symbolizer;
    struct profile *profile;
    struct task_stacks *stacks;
    struct u64_map user_cache;     /* address (| RETURN_ADDRESS_BIT) -> cached[] */
    struct u64_map kernel_cache;
    struct cached_address *cached;
    uint32_t n_cached, cap_cached;
    struct stack_frame *frame_pool;
    uint32_t n_pool, cap_pool;
    VEC_OF(uint32_t) thread_roots; /* thread number -> frame id of its name (PROFILE_NO_FRAME: none) */
    bool failed;                   /* out of memory somewhere: the profile is incomplete */
    struct status_line status;     /* on a terminal: how the recording goes */
    const struct stack_frame *expanded[MAX_EXPANDED_FRAMES];
};

static int pool_reserve(struct record_sink *k, uint32_t extra)
{
    if (k->n_pool + extra <= k->cap_pool)
        return 0;
    uint32_t cap = k->cap_pool ? k->cap_pool : 4096;
    while (cap < k->n_pool + extra)
        cap *= 2;
    struct stack_frame *v = realloc(k->frame_pool, cap * sizeof(*v));
    if (!v)
        return -1;
    k->frame_pool = v;
    k->cap_pool = cap;
    return 0;
}

/* The prepared frames of one address (outermost first), resolved and named on first sight only. */
static const struct cached_address *frames_of(struct record_sink *k, uint64_t addr, bool return_address,
                                              bool kernel)
{
    struct u64_map *cache = kernel ? &k->kernel_cache : &k->user_cache;
    uint64_t key = kernel ? addr : (addr | (return_address ? RETURN_ADDRESS_BIT : 0));
    uint32_t idx;
    if (u64_map_get(cache, key, &idx))
        return &k->cached[idx];
    const struct sym_result *r = kernel ? symbolize_kernel(k->symbolizer, addr)
                                        : symbolize_user(k->symbolizer, addr, return_address);
    if (k->n_cached == k->cap_cached) {
        uint32_t cap = k->cap_cached ? k->cap_cached * 2 : 4096;
        struct cached_address *v = realloc(k->cached, cap * sizeof(*v));
        if (!v)
            return NULL;
        k->cached = v;
        k->cap_cached = cap;
    }
    uint32_t n = r && r->n ? (uint32_t)r->n : 1;
    if (pool_reserve(k, n) != 0)
        return NULL;
    struct cached_address *c = &k->cached[k->n_cached];
    c->first = k->n_pool;
    c->n = n;
    for (uint32_t i = 0; i < n; i++) {
        /* sym_result is innermost first; the cache keeps outermost first */
        const struct sym_frame *f = r && r->n ? &r->frames[r->n - 1 - i] : NULL;
        const char *name = f ? f->name : "[unknown]";
        char object_name[300];
        if ((!name || strcmp(name, "[unknown]") == 0) && r && r->object) {
            /* no symbol: name the object ("[libfoo.so]"; pseudo objects such as "[vdso]" as they are) */
            snprintf(object_name, sizeof(object_name), r->object[0] == '[' ? "%s" : "[%s]", r->object);
            name = object_name;
        }
        if (task_stacks_prepare(k->stacks, name, f ? f->file : NULL, f ? f->line : 0, kernel,
                                &k->frame_pool[k->n_pool + i]) != 0)
            return NULL;
    }
    k->n_pool += n;
    if (u64_map_put(cache, key, k->n_cached) != 0)
        return NULL;
    return &k->cached[k->n_cached++];
}

static void sink_mapping(void *ctx, const struct sampler_mapping *m)
{
    struct record_sink *k = ctx;
    if (m->executable && symbolizer_add_mapping(k->symbolizer, m->start, m->end, m->pgoff, m->path, m->root) != 0)
        k->failed = true;
}

/* The root frame of a thread named name ("[thread]" when NULL or empty), or PROFILE_NO_FRAME. */
static uint32_t thread_root(struct record_sink *k, const char *name)
{
    /* A root frame is the start of a folded line: no ';' in it, and no leading '#' (a comment there). */
    char clean[64];
    snprintf(clean, sizeof(clean), "%s", name && *name ? name : "[thread]");
    for (char *c = clean; *c; c++)
        if (*c == ';' || *c == '\n' || *c == '\r' || (c == clean && *c == '#'))
            *c = '_';
    return profile_intern(k->profile, clean, strlen(clean));
}

static void sink_thread_name(void *ctx, uint32_t thread, pid_t tid, const char *name)
{
    struct record_sink *k = ctx;
    uint32_t id = thread_root(k, name);
    if (id == PROFILE_NO_FRAME || thread == SAMPLER_NO_THREAD || vec_reserve(&k->thread_roots, (size_t)thread + 1)) {
        k->failed = true;
        return;
    }
    while (k->thread_roots.n <= thread)
        k->thread_roots.v[k->thread_roots.n++] = PROFILE_NO_FRAME;
    k->thread_roots.v[thread] = id;
}

static void sink_sample(void *ctx, const struct sampler_sample *s)
{
    struct record_sink *k = ctx;
    size_t n = 0;
    for (size_t i = s->n_user; i-- > 0;) {
        const struct cached_address *c = frames_of(k, s->user_ips[i], i > 0, false);
        if (!c) {
            k->failed = true;
            return;
        }
        for (uint32_t j = 0; j < c->n && n < MAX_EXPANDED_FRAMES; j++)
            k->expanded[n++] = &k->frame_pool[c->first + j];
    }
    for (size_t i = s->n_kernel; i-- > 0;) {
        const struct cached_address *c = frames_of(k, s->kernel_ips[i], false, true);
        if (!c) {
            k->failed = true;
            return;
        }
        for (uint32_t j = 0; j < c->n && n < MAX_EXPANDED_FRAMES; j++)
            k->expanded[n++] = &k->frame_pool[c->first + j];
    }
    uint32_t root = s->thread < k->thread_roots.n ? k->thread_roots.v[s->thread] : PROFILE_NO_FRAME;
    if (root == PROFILE_NO_FRAME && (root = thread_root(k, NULL)) == PROFILE_NO_FRAME) {
        k->failed = true;
        return;
    }
    uint32_t marker_function = PROFILE_NO_FRAME;
    if (s->task_state == SAMPLER_IN_TASK && s->poll_probe_addr) {
        const struct cached_address *c = frames_of(k, s->poll_probe_addr, false, false);
        if (c && c->n)
            marker_function = k->frame_pool[c->first + c->n - 1].function;
    }
    enum stack_task_state state = s->task_state == SAMPLER_IN_TASK       ? STACK_IN_TASK
                                  : s->task_state == SAMPLER_UNKNOWN_TASK ? STACK_UNKNOWN_TASK
                                                                          : STACK_NO_TASK;
    if (task_stacks_add(k->stacks, root, state, s->task_id, marker_function, k->expanded, n, 1) != 0)
        k->failed = true;
}

static void sink_progress(void *ctx, const struct sampler_progress *p)
{
    struct record_sink *k = ctx;
    status_line_show(&k->status, p);
}

/* A problem the sampler reports without stopping (ctx: the status line, erased first). */
static void print_warning(void *ctx, const char *message)
{
    status_line_clear(ctx);
    fprintf(stderr, "taskspy: %s\n", message);
}

static void command_line_of(const struct record_options *o, pid_t pid, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t at = 0;
    if (o->argv) {
        for (char **a = o->argv; *a && at + 1 < len; a++)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", a == o->argv ? "" : " ", *a);
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "re");
    if (f) {
        size_t n = fread(buf, 1, len - 1, f);
        fclose(f);
        while (n > 0 && buf[n - 1] == '\0')
            n--;
        for (size_t i = 0; i < n; i++)
            if (buf[i] == '\0')
                buf[i] = ' ';
        buf[n] = '\0';
    }
    if (!buf[0])
        snprintf(buf, len, "pid %d", (int)pid);
}

/* A task id as the graph shows it: addresses (a runtime's task header, without markers) in hex. */
static const char *task_id_text(uint64_t id, char *buf, size_t len)
{
    if (id > UINT32_MAX)
        snprintf(buf, len, "0x%" PRIx64, id);
    else
        snprintf(buf, len, "%" PRIu64, id);
    return buf;
}

static void print_summary(const struct record_options *o, const struct sampler_stats *st, pid_t pid,
                          uint64_t boundary_samples)
{
    fprintf(stderr,
            "taskspy: %" PRIu64 " samples, %" PRIu64 " lost, %u threads, pid %d, %.1f s at %u Hz (%s, %s)\n",
            st->samples, st->lost, st->threads, (int)pid, st->duration_s, o->frequency,
            st->event_name ? st->event_name : "?", o->call_graph == SAMPLER_CALL_GRAPH_DWARF ? "dwarf" : "fp");
    if (st->lost)
        fprintf(stderr, "taskspy: lost samples: %" PRIu64 " for want of ring-buffer room (PERF_RECORD_LOST; a larger "
                        "--mmap-pages helps), %" PRIu64 " dropped by the event (PERF_RECORD_LOST_SAMPLES)\n",
                st->lost_no_room, st->lost_by_event);
    if (st->dropped_samples)
        fprintf(stderr, "taskspy: %" PRIu64 " samples lost: processing fell behind by more than its memory bound "
                        "(the records copied out and waiting)\n", st->dropped_samples);
    if (st->processing_cpu_ns) {
        fprintf(stderr, "taskspy: processing: %" PRIu64 " samples and %" PRIu64 " marker records in %.3f CPU-s "
                        "(%.0f records per CPU-s", st->samples, st->marker_records, st->processing_cpu_ns / 1e9,
                (double)(st->samples + st->marker_records) * 1e9 / (double)st->processing_cpu_ns);
        if (st->marker_records)
            fprintf(stderr, "; markers %.3f CPU-s, %.0f ns per record", st->marker_cpu_ns / 1e9,
                    (double)st->marker_cpu_ns / (double)st->marker_records);
        fprintf(stderr, ")\n");
    }
    if (st->other_processes)
        fprintf(stderr, "taskspy: %" PRIu64 " samples of the target's child processes left out (only the target "
                        "process is profiled)\n", st->other_processes);
    if (st->unwind_truncated)
        fprintf(stderr, "taskspy: %" PRIu64 " stacks were truncated (deeper than the %u-byte copy or no unwind info)\n",
                st->unwind_truncated, o->stack_size);
    if (strcmp(o->markers, "none") == 0) {
        fprintf(stderr, "taskspy: markers: off (--markers none)\n");
        return;
    }
    if (st->n_probes == 0) {
        if (boundary_samples)
            fprintf(stderr, "taskspy: markers: none found; %" PRIu64 " samples put in tasks by the runtime's task "
                            "boundary frames (tokio's Harness<T,S>::poll), grouped by entry\n", boundary_samples);
        else
            fprintf(stderr, "taskspy: markers: none found, and no known runtime task boundary (tokio's "
                            "Harness<T,S>::poll) on any stack; stacks are rooted at thread names\n");
        return;
    }
    fprintf(stderr, "taskspy: markers:");
    for (size_t i = 0; i < st->n_probes; i++)
        fprintf(stderr, "%s %s:%s x %u", i ? "," : "", st->probes[i].provider, st->probes[i].name,
                st->probes[i].locations);
    if (!st->marker_locations_perf)
        fprintf(stderr, "; hits through BPF");
    else if (!st->marker_locations_bpf)
        fprintf(stderr, "; hits as perf samples");
    else
        fprintf(stderr, "; hits through BPF at %zu locations, as perf samples at %zu",
                st->marker_locations_bpf, st->marker_locations_perf);
    fprintf(stderr, "\n");
    fprintf(stderr, "taskspy: %" PRIu64 " polls, %" PRIu64 " tasks, %" PRIu64 " spawned, %" PRIu64
            " terminated, %" PRIu64 " lost marker records\n",
            st->polls, st->tasks_seen, st->spawns, st->terminates, st->lost_markers);
    if (st->lost_markers || st->unknown_task_samples)
        fprintf(stderr, "taskspy: lost marker records: %" PRIu64 " from full perf buffers, %" PRIu64 " overwritten "
                        "BPF slots; %" PRIu64 " samples counted as [unknown task] (until their thread's next poll)\n",
                st->lost_markers_perf, st->lost_markers_bpf, st->unknown_task_samples);
    if (st->late_markers)
        fprintf(stderr, "taskspy: %" PRIu64 " marker records were read after later samples of their thread had "
                        "been attributed\n", st->late_markers);
    if (st->throttled_markers)
        fprintf(stderr, "taskspy: the kernel throttled marker events %" PRIu64 " times (records dropped; raise "
                        "kernel.perf_event_max_sample_rate); those threads count as [unknown task] until "
                        "their next poll\n", st->throttled_markers);
    if (st->polls && !st->timed_polls)
        fprintf(stderr, "taskspy: poll entries only (no poll durations; --poll-times adds return probes)\n");
    char id[32];
    for (size_t i = 0; i < st->n_tasks && i < 5; i++) {
        if (st->timed_polls)
            fprintf(stderr, "taskspy:   task %s: %" PRIu64 " polls, %.1f ms total, longest %.2f ms\n",
                    task_id_text(st->tasks[i].task_id, id, sizeof(id)), st->tasks[i].polls,
                    st->tasks[i].total_poll_ns / 1e6, st->tasks[i].longest_poll_ns / 1e6);
        else
            fprintf(stderr, "taskspy:   task %s: %" PRIu64 " polls\n", task_id_text(st->tasks[i].task_id, id, sizeof(id)),
                    st->tasks[i].polls);
    }
    if (st->long_polls) {
        fprintf(stderr, "taskspy: %" PRIu64 " long polls (> 10 ms) blocked an executor thread:", st->long_polls);
        size_t shown = 0;
        for (size_t i = 0; i < st->n_tasks && shown < 5; i++)
            if (st->tasks[i].longest_poll_ns > 10000000ull) {
                fprintf(stderr, "%s task %s (%.1f ms)", shown ? "," : "",
                        task_id_text(st->tasks[i].task_id, id, sizeof(id)), st->tasks[i].longest_poll_ns / 1e6);
                shown++;
            }
        fprintf(stderr, "\n");
    }
}

static int write_output(const struct record_options *o, struct record_sink *k, struct output_set *outs,
                        const struct sampler_stats *st, pid_t pid, char *err, size_t errlen)
{
    char cmdline[1024], title[1100], header[1400];
    command_line_of(o, pid, cmdline, sizeof(cmdline));
    snprintf(title, sizeof(title), "%s", o->title ? o->title : cmdline);
    snprintf(header, sizeof(header),
             "%s (pid %d), %.1f s at %u Hz (%s), %" PRIu64 " samples, %" PRIu64 " lost%s", cmdline, (int)pid,
             st->duration_s, o->frequency, o->call_graph == SAMPLER_CALL_GRAPH_DWARF ? "dwarf" : "fp",
             st->samples, st->lost, st->target_exited ? ", target exited" : "");
    struct svg_options so;
    svg_options_init(&so);
    so.title = title;
    so.header = header;
    struct timespec now;
    uint64_t duration_ns = (uint64_t)(st->duration_s * 1e9);
    uint64_t now_ns = clock_gettime(CLOCK_REALTIME, &now) == 0 ? (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec : 0;
    struct export_info info = { .name = cmdline, .exporter = "taskspy 0.1", .period_ns = 1000000000u / o->frequency,
                                .duration_ns = duration_ns, .start_time_ns = now_ns > duration_ns ? now_ns - duration_ns : 0 };
    struct output_content content = { .profile = k->profile, .svg = &so, .info = &info };
    return output_set_write(outs, &o->outputs, &content, err, errlen);
}

static void sink_free(struct record_sink *k)
{
    task_stacks_free(k->stacks);
    profile_free(k->profile);
    if (k->symbolizer)
        symbolizer_free(k->symbolizer);
    u64_map_free(&k->user_cache);
    u64_map_free(&k->kernel_cache);
    vec_free(&k->thread_roots);
    free(k->cached);
    free(k->frame_pool);
    free(k);
}

int record_command(int argc, char **argv)
{
    struct record_options o;
    char err[1024] = "";
    int prc = record_options_parse(&o, argc, argv, err, sizeof(err));
    if (prc == 1)
        return 0;
    if (prc != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        fprintf(stderr, "Run 'taskspy record --help' for usage.\n");
        return 2;
    }
    struct output_set outs;
    if (output_set_open(&outs, &o.outputs, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        return 1;
    }
    struct record_sink *k = calloc(1, sizeof(*k));
    struct symbolizer_options so = { .kernel = o.kernel, .demangle = true };
    if (!k || !(k->profile = profile_new()) || !(k->symbolizer = symbolizer_new(&so)) ||
        u64_map_init(&k->user_cache, 4096) != 0 || u64_map_init(&k->kernel_cache, 256) != 0) {
        fprintf(stderr, "taskspy: out of memory\n");
        output_set_abort(&outs);
        if (k)
            sink_free(k);
        return 1;
    }
    status_line_init(&k->status, stderr);
    k->stacks = task_stacks_new(k->profile, o.group_by, o.await_points, o.task_boundary, err, sizeof(err));
    if (!k->stacks) {
        fprintf(stderr, "taskspy: %s\n", err);
        output_set_abort(&outs);
        sink_free(k);
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0 ||
        sigaction(SIGHUP, &sa, NULL) != 0) {
        fprintf(stderr, "taskspy: cannot install signal handlers: %s\n", strerror(errno));
        output_set_abort(&outs);
        sink_free(k);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sampler_config cfg = {
        .pid = o.pid, .argv = o.argv, .frequency = o.frequency, .call_graph = o.call_graph,
        .stack_size = o.stack_size, .mmap_pages = o.mmap_pages, .kernel = o.kernel, .duration = o.duration, .markers = o.markers,
        .poll_times = o.poll_times,
        .stop = &stop_requested,
        .search_path = getenv("PATH"), .marker_records = o.marker_records, .uprobe_events = o.uprobe_events,
        .on_warning = print_warning, .warning_ctx = &k->status,
    };
    struct sampler *s;
    if (sampler_open(&s, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        output_set_abort(&outs);
        sink_free(k);
        return 1;
    }
    /* Without poll markers, tasks of the runtimes taskspy knows are found by their boundary frames. */
    bool boundaries = strcmp(o.markers, "none") != 0 && sampler_poll_markers(s) == 0;
    task_stacks_use_runtime_boundaries(k->stacks, boundaries);
    struct sampler_sink sink = {
        .ctx = k, .on_mapping = sink_mapping, .on_thread_name = sink_thread_name, .on_sample = sink_sample,
        .on_progress = sink_progress,
    };
    int rc = sampler_run(s, &sink, err, sizeof(err));
    status_line_clear(&k->status);
    const struct sampler_stats *st = sampler_stats(s);
    pid_t pid = sampler_target_pid(s);
    int status = 0;
    if (rc != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        output_set_abort(&outs);
        status = 1;
    } else if (k->failed || task_stacks_finish(k->stacks) != 0) {
        fprintf(stderr, "taskspy: out of memory while recording; nothing written\n");
        output_set_abort(&outs);
        status = 1;
    } else {
        print_summary(&o, st, pid, task_stacks_boundary_samples(k->stacks));
        if (st->target_exited)
            fprintf(stderr, "taskspy: the target exited during the recording; writing what was gathered\n");
        if (st->samples == 0)
            fprintf(stderr, "taskspy: warning: no samples (the target used no CPU while recorded?)\n");
        if (write_output(&o, k, &outs, st, pid, err, sizeof(err)) != 0) {
            fprintf(stderr, "taskspy: %s\n", err);
            status = 1;
        } else {
            for (size_t i = 0; i < o.outputs.n; i++)
                if (strcmp(o.outputs.items[i].path, "-") != 0)
                    fprintf(stderr, "taskspy: wrote %s (%zu stacks)\n", o.outputs.items[i].path,
                            profile_distinct_stacks(k->profile));
        }
    }
    sampler_close(s);
    sink_free(k);
    return status;
}
