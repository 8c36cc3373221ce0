/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record.c: `taskspy record`: wires sampler -> symbolize -> flamegraph. Each sample's addresses are
 * symbolized (symbolize caches by address) and each distinct result is named once, the stack is merged
 * into the profile by task or thread, and at the end the output is written whole and a summary printed
 * (cli/record_summary.c). While recording, the sink's callbacks are journaled (cli/sink_journal.h) and
 * replayed into it when the journal is full and after the recording, so that loading the target's symbols
 * does not compete with the target for CPU while it is measured. record_command runs its steps in order
 * until one ends the command. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/address_stacks.h"
#include "cli/commands.h"
#include "cli/debug_info.h"
#include "cli/output_formats.h"
#include "cli/version.h"
#include "cli/record_options.h"
#include "cli/record_summary.h"
#include "cli/sink_journal.h"
#include "cli/status_line.h"
#include "cli/target_command_line.h"
#include "cli/trace_collect.h"
#include "cli/wait_collect.h"
#include "cli/snapshot_waits.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/sample_frames.h"
#include "sampler/sampler.h"
#include "tasks/tasks.h"
#include "base/u64_map.h"
#include "base/vec.h"
#include "symbolize/symbolize.h"

/* The one piece of state a signal handler may touch. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Where a task's polls began, for naming a task no sample named (name_unsampled_tasks). */
struct task_first_poll {
    uint64_t task_id;
    uint64_t start_addr;
    bool differ;               /* its polls began in different functions: polls of several tasks under one id (the
                                  probes' ids joined to tokio's by samples: a worker's own id, 1 or 2 in tokio
                                  1.54, is met in several tasks' polls); not named */
};

struct record_sink {
    struct symbolizer *symbolizer;
    struct profile *profile;
    struct task_stacks *stacks;
    struct sample_frames frames;   /* each sample's addresses as named frames (flamegraph/sample_frames.h) */
    bool failed;                   /* out of memory somewhere: the profile is incomplete */
    struct status_line status;     /* on a terminal: how the recording goes */
    struct debug_info debug;       /* separate debug files (debuginfod), and the objects without symbols */
    struct u64_map first_poll_by_task;                /* task id -> index in first_polls */
    VEC_OF(struct task_first_poll) first_polls;
    struct task_root_namer *namer;   /* names tasks by the raw::poll<T, S> that polled them, opened on first use */
    bool namer_failed;               /* (its opening failed: not tried again) */
    pid_t namer_pid;
    const char *namer_dwarf;         /* the file to read the DWARF from: the executable's debug file, or NULL */
    bool want_trace;               /* an -o is a Chrome trace: keep polls and samples with their times */
    struct trace_collect trace;
    struct address_stacks *addresses;  /* an -o is pprof: the stacks as addresses too, or NULL */
    bool want_wait;                /* --wait-output: a wait profile */
    bool from_snapshots;           /* ... made from task snapshots (else from task events and wait stacks) */
    struct task_snapshot_loop *snapshots;   /* snapshot mode: every 1/HZ s a snapshot added to snapshot_waits */
    struct snapshot_waits snapshot_waits;
    bool snapshot_waits_ready;      /* (initialized) */
    bool snapshots_failed;          /* out of memory in the snapshot wait profile: it is not whole */
    bool keep_doubtful_waits;      /* the runtime says when tasks complete (wait_profile_finish's rule) */
    struct wait_collect wait;
    uint64_t provisional_kept;     /* samples still with the TLS marker's own id (no probes' id learnt for it) */
};

static void sink_mapping(void *ctx, const struct sampler_mapping *m)
{
    struct record_sink *k = ctx;
    if (m->executable && symbolizer_add_mapping(k->symbolizer, m->start, m->end, m->pgoff, m->path, m->root) != 0)
        k->failed = true;
}

static void sink_thread_name(void *ctx, uint32_t thread, pid_t tid, const char *name)
{
    struct record_sink *k = ctx;
    uint32_t id = thread == SAMPLER_NO_THREAD ? PROFILE_NO_FRAME : sample_frames_name_thread(&k->frames, thread, name);
    if (id == PROFILE_NO_FRAME) {
        k->failed = true;
        return;
    }
    if (k->want_trace && trace_collect_thread(&k->trace, thread, (uint32_t)tid, id) != 0)
        k->failed = true;
}

/* The root future's name of the tasks the raw::poll<T, S> holding start_addr polls (the namer opened on first
   use: the target's DWARF), NULL when it cannot be told. The trace's polls are named so when no sample told their
   task's root (trace_collect.name_poll). */
static const char *root_of_poll(void *ctx, uint64_t start_addr)
{
    struct record_sink *k = ctx;
    char err[512];
    if (!k->namer && (k->namer_failed || !k->namer_pid ||
                      task_root_namer_open(&k->namer, k->namer_pid, k->namer_dwarf, err, sizeof(err)) != 0)) {
        k->namer_failed = true;    /* (the target gone, no DWARF: such tasks stay [task entry unknown]) */
        return NULL;
    }
    return task_root_namer_name(k->namer, start_addr);
}

static void sink_poll(void *ctx, const struct sampler_poll *p)
{
    struct record_sink *k = ctx;
    if (trace_collect_poll(&k->trace, p) != 0)
        k->failed = true;
    uint32_t index = 0;
    int rc = p->start_addr && (k->first_poll_by_task.keys || u64_map_init(&k->first_poll_by_task, 1024) == 0)
                 ? u64_map_index(&k->first_poll_by_task, p->task_id, &k->first_polls, &index)
                 : -1;
    if (rc == 1)
        k->first_polls.v[index] = (struct task_first_poll){ p->task_id, p->start_addr, false };
    else if (rc == 0 && k->first_polls.v[index].start_addr != p->start_addr)
        k->first_polls.v[index].differ = true;
}


static void sink_sample(void *ctx, const struct sampler_sample *s)
{
    struct record_sink *k = ctx;
    /* (in no task too: a poll frame on the stack of a sample whose TLS marker read 0 is counted; found first:
       expanding takes pointers into the frames that finding it may move) */
    uint32_t marker_function = s->task_state != SAMPLER_UNKNOWN_TASK
                                   ? sample_frames_function_at(&k->frames, s->poll_probe_addr) : PROFILE_NO_FRAME;
    size_t n = 0;
    const struct stack_frame *const *frames = sample_frames_expand(&k->frames, s->user_ips, s->n_user, s->kernel_ips,
                                                                    s->n_kernel, &n);
    uint32_t root = sample_frames_thread_root(&k->frames, s->thread);
    if (!frames || root == PROFILE_NO_FRAME) {
        k->failed = true;
        return;
    }
    k->provisional_kept += s->task_id_provisional;
    enum stack_task_state state = s->task_state == SAMPLER_IN_TASK       ? STACK_IN_TASK
                                  : s->task_state == SAMPLER_UNKNOWN_TASK ? STACK_UNKNOWN_TASK
                                                                          : STACK_NO_TASK;
    if (task_stacks_add(k->stacks, root, state, s->task_id, marker_function, frames, n, 1) != 0)
        k->failed = true;
    else if (k->addresses && address_stacks_add(k->addresses, s, root, task_stacks_last_node(k->stacks)) != 0)
        k->failed = true;
    else if (k->want_trace && trace_collect_sample(&k->trace, (uint32_t)s->tid, s->time_ns,
                                                   task_stacks_last_node(k->stacks), s->task_id) != 0)
        k->failed = true;
}

/* ---- the wait profile (--wait-output): task events, wait stacks, rounds -------------------------------- */

static void sink_task_event(void *ctx, const struct sampler_task_event *e)
{
    struct record_sink *k = ctx;
    if (wait_collect_event(&k->wait, e) != 0)
        k->failed = true;
}

/* A waker-registration stack, symbolized like a sample's (the same address cache and frame pool), without its
 * innermost address: the registering function itself (the waker machinery). With a pprof output its return
 * addresses above the waker machinery are kept too, as the key of the stack in the wait profile. */
static void sink_wait_stack(void *ctx, const struct sampler_wait_stack *w)
{
    struct record_sink *k = ctx;
    struct sample_frames *f = &k->frames;
    size_t n = 0, first_kept = w->n_user;   /* user_ips index of the innermost address kept for pprof */
    size_t starts[SAMPLER_MAX_FRAMES];      /* each address's first frame, by user_ips index */
    /* in a poll marker's poll (tokio's clone_waker in a marker program): cut below its marker frame */
    task_stacks_saw_marker(k->stacks, sample_frames_function_at(f, w->poll_probe_addr));
    for (size_t i = w->n_user; i-- > 1;) {
        const struct sample_address *c = sample_frames_of(f, w->user_ips[i], true, false);
        if (!c) {
            k->failed = true;
            return;
        }
        if (i < SAMPLER_MAX_FRAMES)
            starts[i] = n;
        for (uint32_t j = 0; j < c->n && n < SAMPLE_FRAMES_MAX; j++)
            f->expanded_at[n++] = c->first + j;
    }
    for (size_t i = 0; i < n; i++)      /* the pool no longer moves for this stack */
        f->expanded[i] = &f->pool.v[f->expanded_at[i]];
    uint32_t root = sample_frames_thread_root(f, w->thread);
    uint32_t key = WAIT_NO_KEY;
    if (k->addresses && w->n_user > 1) {
        size_t kept = wait_profile_kept_frames(f->expanded, n);
        for (size_t i = w->n_user; i-- > 1 && i < SAMPLER_MAX_FRAMES && starts[i] < kept;)
            first_kept = i;
        if ((key = address_stacks_wait_key(k->addresses, w, first_kept)) == WAIT_NO_KEY) {
            k->failed = true;
            return;
        }
    }
    if (root == PROFILE_NO_FRAME || wait_collect_stack(&k->wait, w, root, f->expanded, n, key) != 0)
        k->failed = true;
}

/* A wait settled: onto the trace's task tracks. */
static void sink_wait_interval(void *ctx, const struct wait_interval *iv)
{
    struct record_sink *k = ctx;
    if (trace_collect_wait(&k->trace, iv) != 0)
        k->failed = true;
}

static void sink_wait_round(void *ctx, uint64_t until_ns)
{
    struct record_sink *k = ctx;
    if (wait_collect_round(&k->wait, until_ns) != 0)
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
    if (!o->argv) {
        target_command_line(pid, buf, len);
        return;
    }
    for (char **a = o->argv; *a && at + 1 < len; a++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", a == o->argv ? "" : " ", *a);
}

static int write_output(const struct record_options *o, struct record_sink *k, struct output_set *outs,
                        const struct sampler_stats *st, pid_t pid, uint64_t start_ns,
                        struct trace_report *trace_report, char *err, size_t errlen)
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
    struct export_info info = { .name = cmdline, .exporter = "taskspy " TASKSPY_VERSION, .period_ns = 1000000000u / o->frequency,
                                .duration_ns = duration_ns, .start_time_ns = now_ns > duration_ns ? now_ns - duration_ns : 0,
                                .wait = k->want_wait };
    struct output_content content = { .profile = k->profile, .svg = &so, .info = &info,
                                      .addresses = k->addresses ? k->addresses->profile : NULL };
    struct trace_events trace;
    if (k->want_trace) {
        k->trace.name_poll = root_of_poll;
        k->trace.name_poll_ctx = k;
        if (trace_collect_finish(&k->trace, k->stacks, k->profile, (uint32_t)pid, start_ns, k->keep_doubtful_waits,
                                 &trace) != 0) {
            snprintf(err, errlen, "out of memory while preparing the trace; nothing written");
            output_set_abort(outs);
            return -1;
        }
        content.trace = &trace;
        content.trace_report = trace_report;
    }
    return output_set_write(outs, &o->outputs, &content, err, errlen);
}

static void print_trace_written(const char *path, const struct trace_collect *c, const struct trace_report *r)
{
    fprintf(stderr, "taskspy: wrote %s (%" PRIu64 " polls, %zu samples", path, r->polls, c->samples.n);
    if (r->wait_spans)
        fprintf(stderr, ", %" PRIu64 " wait spans", r->wait_spans);
    if (r->clipped || r->dropped)
        fprintf(stderr, "; %" PRIu64 " polls overlapping an earlier one on their thread clipped, %" PRIu64
                        " inside one left out", r->clipped, r->dropped);
    if (r->contradicted)
        fprintf(stderr, "; %" PRIu64 " polls a wait of their task overlaps left out (records between their start "
                        "and end lost)", r->contradicted);
    if (c->left_out)
        fprintf(stderr, "; the cap of %u events was reached: %" PRIu64 " later polls, samples and waits left out",
                TRACE_MAX_EVENTS, c->left_out);
    fprintf(stderr, ")\n");
}

static void sink_free(struct record_sink *k)
{
    task_stacks_free(k->stacks);
    profile_free(k->profile);
    if (k->symbolizer)
        symbolizer_free(k->symbolizer);
    debug_info_free(&k->debug);
    sample_frames_free(&k->frames);
    trace_collect_free(&k->trace);
    if (k->addresses)
        address_stacks_free(k->addresses);
    free(k->addresses);
    wait_collect_free(&k->wait);
    task_snapshot_loop_free(k->snapshots);
    if (k->snapshot_waits_ready)
        snapshot_waits_free(&k->snapshot_waits);
    u64_map_free(&k->first_poll_by_task);
    vec_free(&k->first_polls);
    task_root_namer_close(k->namer);
    free(k);
}

/* One `taskspy record`: what its steps share. */
struct recording {
    int argc;
    char **argv;
    struct record_options o;
    struct output_set outs;
    bool outs_open;                /* outs are to be aborted unless written */
    struct record_sink *k;
    struct sampler *s;
    uint64_t start_ns;             /* CLOCK_MONOTONIC when recording began: the trace's origin */
    uint64_t replay_cpu_ns;        /* this thread's CPU replaying the journal after the recording */
    uint64_t provisional_renamed;  /* samples the journal gave the probes' id learnt after them */
    char err[1024];
};

/* Every task named by its root future (SPEC 3b), also those no sample caught: a task whose entry no sample told is
   named by the tokio raw::poll<T, S> its polls went through (tasks/'s task_root_namer), as taskspy tasks names it.
   Its polls and waits in the trace, its held-back samples, are then under "task: ROOT", not [task entry unknown]. */
static void name_unsampled_tasks(struct recording *r)
{
    struct record_sink *k = r->k;
    k->namer_pid = sampler_target_pid(r->s);
    k->namer_dwarf = sampler_stats(r->s)->tls_debug_file;
    for (size_t i = 0; i < k->first_polls.n; i++) {
        const struct task_first_poll *f = &k->first_polls.v[i];
        if (f->differ || task_stacks_entry_known(k->stacks, f->task_id))
            continue;
        const char *root = root_of_poll(k, f->start_addr);
        if (root && task_stacks_name_task(k->stacks, f->task_id, root) != 0)
            k->failed = true;
    }
}

/* Each step returns CARRY_ON, or the exit status when the command ends there. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, CARRY_ON = -1 };

static int fail(struct recording *r, int status)
{
    fprintf(stderr, "taskspy: %s\n", r->err);
    return status;
}

static int parse_options(struct recording *r)
{
    int rc = record_options_parse(&r->o, r->argc, r->argv, r->err, sizeof(r->err));
    if (rc == 1)
        return 0;                  /* --help was printed */
    if (rc != 0) {
        fail(r, EXIT_USAGE);
        fprintf(stderr, "Run 'taskspy record --help' for usage.\n");
        return EXIT_USAGE;
    }
    return CARRY_ON;
}

/* Before any work, so that an unwritable destination fails at once. */
static int open_outputs(struct recording *r)
{
    if (output_set_open(&r->outs, &r->o.outputs, r->err, sizeof(r->err)) != 0)
        return fail(r, EXIT_RUNTIME);
    r->outs_open = true;
    return CARRY_ON;
}

/* A pprof output shows addresses: keep the stacks as addresses too (cli/address_stacks.h). */
static int keep_addresses_for_pprof(struct recording *r)
{
    bool want = false;
    for (size_t i = 0; i < r->o.outputs.n; i++)
        want |= r->o.outputs.items[i].format == FORMAT_PPROF;
    if (!want)
        return CARRY_ON;
    struct record_sink *k = r->k;
    if (!(k->addresses = malloc(sizeof(*k->addresses))) ||
        address_stacks_init(k->addresses, k->symbolizer, k->profile) != 0) {
        free(k->addresses);
        k->addresses = NULL;
        fprintf(stderr, "taskspy: out of memory\n");
        return EXIT_RUNTIME;
    }
    return CARRY_ON;
}

/* The objects without symbols that samples have frames in, counted for the summary's debug-file lines. */
static uint32_t object_counter(void *ctx, const char *object)
{
    return debug_info_object(ctx, object);
}

static void object_sample(void *ctx)
{
    debug_info_sample(ctx);
}

static void object_saw(void *ctx, uint32_t counter)
{
    debug_info_saw(ctx, counter);
}

static int make_sink(struct recording *r)
{
    struct record_sink *k = r->k = calloc(1, sizeof(*k));
    if (k)
        status_line_init(&k->status, stderr);
    if (!k || debug_info_init(&k->debug, &k->status) != 0 || !(k->profile = profile_new()) ||
        !(k->symbolizer = symbolizer_new(&(struct symbolizer_options){
              .kernel = r->o.kernel, .demangle = true, .debug_files = k->debug.files }))) {
        fprintf(stderr, "taskspy: out of memory\n");
        return EXIT_RUNTIME;
    }
    trace_collect_init(&k->trace, TRACE_MAX_EVENTS);
    for (size_t i = 0; i < r->o.outputs.n; i++)
        k->want_trace |= r->o.outputs.items[i].format == FORMAT_TRACE;
    k->stacks = task_stacks_new(k->profile, r->o.group_by, r->o.await_points, r->o.task_boundary, r->err,
                                sizeof(r->err));
    if (!k->stacks)
        return fail(r, EXIT_USAGE);
    const struct sample_frames_objects objects = { .counter = object_counter, .sample = object_sample,
                                                   .saw = object_saw, .ctx = &k->debug };
    const struct sample_symbols symbols = sample_symbols_of(k->symbolizer);
    sample_frames_init(&k->frames, &symbols, k->stacks, k->profile, &objects);
    return keep_addresses_for_pprof(r);
}

/* Ctrl-C, SIGTERM and SIGHUP end the recording and still write the output. */
static int catch_stop_signals(struct recording *r)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0 ||
        sigaction(SIGHUP, &sa, NULL) != 0) {
        snprintf(r->err, sizeof(r->err), "cannot install signal handlers: %s", strerror(errno));
        return fail(r, EXIT_RUNTIME);
    }
    signal(SIGPIPE, SIG_IGN);
    return CARRY_ON;
}

static int open_sampler(struct recording *r)
{
    const struct record_options *o = &r->o;
    struct sampler_config cfg = {
        .pid = o->pid, .argv = o->argv, .frequency = o->frequency, .call_graph = o->call_graph,
        .stack_size = o->stack_size, .mmap_pages = o->mmap_pages, .kernel = o->kernel, .duration = o->duration, .markers = o->markers,
        .poll_times = o->poll_times || r->k->want_trace,     /* a trace shows polls: their durations */
        .stop = &stop_requested,
        .search_path = getenv("PATH"), .marker_records = o->marker_records, .uprobe_events = o->uprobe_events,
        .marker_slot_bits = o->marker_slot_bits,
        .on_warning = print_warning, .warning_ctx = &r->k->status,
        .wait_profile = r->k->want_wait && !r->k->from_snapshots, .waker_symbol = o->waker_symbol, .debug_files = r->k->debug.files,
    };
    int rc = sampler_open(&r->s, &cfg, r->err, sizeof(r->err));
    status_line_clear(&r->k->status);   /* a debug file's download, shown while opening */
    if (rc != 0)
        return fail(r, EXIT_RUNTIME);
    /* Without poll markers, tasks of the runtimes taskspy knows are found by their boundary frames (a TLS
     * marker says itself which samples are in no task). */
    bool boundaries = strcmp(o->markers, "none") != 0 && sampler_poll_markers(r->s) == 0 && !sampler_tls_route(r->s);
    task_stacks_use_runtime_boundaries(r->k->stacks, boundaries);
    task_stacks_ids_from_thread_local(r->k->stacks, sampler_tls_route(r->s));
    return CARRY_ON;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec
                                                           : 0;
}

/* Snapshot mode: each snapshot added to the snapshot wait profile, on the loop's thread. */
static int add_snapshot(void *ctx, const struct task_snapshot *snap)
{
    return snapshot_waits_add(ctx, snap);
}

/* The snapshot loop from the recording's start (launch mode: attached once the command runs), until its duration,
 * a stop signal or the target's exit. Returns 0, or -1 when out of memory. */
static int start_snapshots(struct recording *r)
{
    struct record_sink *k = r->k;
    uint64_t period_ns = 1000000000u / r->o.wait_frequency;
    if (snapshot_waits_init(&k->snapshot_waits, r->start_ns, period_ns, k->want_trace, TRACE_MAX_EVENTS) != 0)
        return -1;
    k->snapshot_waits_ready = true;
    struct task_snapshot_loop_options lo = {
        .hz = r->o.wait_frequency, .start_ns = r->start_ns, .launch_pid = r->o.argv ? sampler_target_pid(r->s) : 0,
        .deadline_ns = r->o.duration > 0 ? r->start_ns + (uint64_t)(r->o.duration * 1e9) : 0,
        .stop_requested = &stop_requested, .on_snapshot = add_snapshot, .ctx = &k->snapshot_waits,
    };
    return task_snapshot_loop_start(k->snapshots, &lo);
}

/* sink_journal_name_tasks' callback (ctx: the sampler, stopped) */
static bool task_named_later(void *ctx, uint64_t task_id, uint64_t *named)
{
    return sampler_task_named_later(ctx, task_id, named);
}

static int run_sampler(struct recording *r)
{
    bool events = r->k->want_wait && !r->k->from_snapshots;
    struct sampler_sink sink = {
        .ctx = r->k, .on_mapping = sink_mapping, .on_thread_name = sink_thread_name, .on_sample = sink_sample,
        .on_progress = sink_progress, .on_poll = r->k->want_trace ? sink_poll : NULL,
        .on_task_event = events ? sink_task_event : NULL,
        .on_wait_stack = events ? sink_wait_stack : NULL,
        .on_wait_round = events ? sink_wait_round : NULL,
    };
    struct sink_journal journal;
    sink_journal_init(&journal, &sink, 0);
    sink_journal_hold_provisional(&journal);   /* a task the probes name later: its samples wait for the name */
    struct sampler_sink journaled = sink_journal_sink(&journal);
    struct timespec start;     /* the clock of sample and poll times; the events are enabled just after */
    r->start_ns = clock_gettime(CLOCK_MONOTONIC, &start) == 0
                      ? (uint64_t)start.tv_sec * 1000000000u + (uint64_t)start.tv_nsec : 0;
    /* snapshot mode: the snapshot thread from now on (launch mode: attached once the command runs) */
    if (r->k->from_snapshots && start_snapshots(r) != 0) {
        sink_journal_free(&journal);
        fprintf(stderr, "taskspy: cannot start the snapshot thread (out of memory)\n");
        return EXIT_RUNTIME;
    }
    int rc = sampler_run(r->s, &journaled, r->err, sizeof(r->err));
    if (r->k->from_snapshots) {
        task_snapshot_loop_stop(r->k->snapshots, r->start_ns + (uint64_t)(sampler_stats(r->s)->duration_s * 1e9));
        if (snapshot_waits_finish(&r->k->snapshot_waits) != 0)
            r->k->snapshots_failed = true;
    }
    status_line_clear(&r->k->status);
    /* what the journal holds since its last replay, symbolized now that the target is no longer measured; its
       samples of a task the probes had not named yet take the name learnt after them (one task, one name) */
    if (rc == 0) {
        uint64_t cpu0 = thread_cpu_ns();
        sink_journal_name_tasks(&journal, task_named_later, r->s);
        sink_journal_replay(&journal);
        r->provisional_renamed = journal.renamed;
        r->replay_cpu_ns = thread_cpu_ns() - cpu0;
        status_line_clear(&r->k->status);   /* a debug file's download, shown while symbolizing */
        debug_info_settle(&r->k->debug, r->k->symbolizer);   /* the target's root is still held by the journal */
    }
    if (journal.failed)
        r->k->failed = true;
    sink_journal_free(&journal);
    if (rc != 0)
        return fail(r, EXIT_RUNTIME);
    name_unsampled_tasks(r);
    if (r->k->failed || task_stacks_finish(r->k->stacks) != 0 ||
        (r->k->addresses && address_profile_finish(r->k->addresses->profile, r->k->stacks) != 0)) {
        fprintf(stderr, "taskspy: out of memory while recording; nothing written\n");
        return EXIT_RUNTIME;
    }
    return CARRY_ON;
}

static int report_and_write(struct recording *r)
{
    const struct sampler_stats *st = sampler_stats(r->s);
    pid_t pid = sampler_target_pid(r->s);
    struct record_provisional_ids ids = { .renamed = r->provisional_renamed, .kept = r->k->provisional_kept };
    record_summary_print(stderr, &r->o, st, pid, task_stacks_boundary_samples(r->k->stacks), r->replay_cpu_ns, &ids);
    struct task_boundary_counts below_boundary;
    task_stacks_boundary_counts(r->k->stacks, &below_boundary);
    record_summary_print_unset_marker(stderr, st, &below_boundary, r->k->profile);
    debug_info_print(stderr, &r->k->debug);
    const struct sample_frames *f = &r->k->frames;
    if (f->unmapped_frames)   /* perf shows them as [unknown] too; the address tells a garbage one apart */
        fprintf(stderr, "taskspy: %" PRIu64 " user frames at addresses in no mapping taskspy knew of, shown as "
                "[unknown]; the first at 0x%" PRIx64 "%s%s\n", f->unmapped_frames, f->first_unmapped,
                f->first_unmapped_near[0] ? ", " : "", f->first_unmapped_near);
    if (st->target_exited)
        fprintf(stderr, "taskspy: the target exited during the recording; writing what was gathered\n");
    if (st->samples == 0)
        fprintf(stderr, "taskspy: warning: no samples (the target used no CPU while recorded?)\n");
    struct trace_report trace_report = { 0 };
    if (write_output(&r->o, r->k, &r->outs, st, pid, r->start_ns, &trace_report, r->err, sizeof(r->err)) != 0)
        return fail(r, EXIT_RUNTIME);
    r->outs_open = false;
    for (size_t i = 0; i < r->o.outputs.n; i++) {
        const struct output_request *out = &r->o.outputs.items[i];
        if (strcmp(out->path, "-") == 0)
            continue;
        if (out->format == FORMAT_TRACE)
            print_trace_written(out->path, &r->k->trace, &trace_report);
        else
            fprintf(stderr, "taskspy: wrote %s (%zu stacks)\n", out->path, profile_distinct_stacks(r->k->profile));
    }
    return CARRY_ON;
}

/* ---- the wait profile's steps (--wait-output) ------------------------------------------------------------ */

/* Its file is created before any work, as the -o outputs are. */
static int open_wait_output(struct recording *r)
{
    if (!r->o.wait_output)
        return CARRY_ON;
    r->k->want_wait = true;
    if (wait_collect_open(&r->k->wait, r->o.wait_output, r->o.wait_format, r->err, sizeof(r->err)) != 0)
        return fail(r, EXIT_RUNTIME);
    return CARRY_ON;
}

/* Snapshot mode where taskspy can read the target's task backtraces (SPEC section 3a), else the waker events,
 * said in one line; --wait-mode decides when given (--waker-symbol names a probe: events). Decided before the
 * sampler opens, which attaches the waker probes of the event mode. */
static int choose_wait_route(struct recording *r)
{
    struct record_sink *k = r->k;
    struct record_options *o = &r->o;
    if (!o->wait_frequency)
        o->wait_frequency = WAIT_FREQUENCY_DEFAULT;
    if (!k->want_wait || o->wait_mode == WAIT_MODE_EVENTS || (o->waker_symbol && o->wait_mode == WAIT_MODE_AUTO))
        return CARRY_ON;
    char path[4096] = "", why[512];
    if ((o->pid && kill(o->pid, 0) != 0 && errno == ESRCH) ||
        (o->argv && !sampler_command_path(o->argv[0], getenv("PATH"), path, sizeof(path))))
        return CARRY_ON;           /* no such target: opening the sampler says so */
    if (task_snapshot_loop_open(&k->snapshots, o->pid, path, NULL, why, sizeof(why)) == 0) {
        k->from_snapshots = true;
        return CARRY_ON;
    }
    if (o->wait_mode == WAIT_MODE_SNAPSHOTS) {
        snprintf(r->err, sizeof(r->err), "--wait-mode snapshots: cannot read the tasks' backtraces: %s", why);
        return fail(r, EXIT_RUNTIME);
    }
    fprintf(stderr, "taskspy: waits: from waker events: task backtraces cannot be read (%s)\n", why);
    return CARRY_ON;
}

static int start_wait_profile(struct recording *r)
{
    if (!r->k->want_wait || r->k->from_snapshots)
        return CARRY_ON;
    struct wait_options wo = { .start_ns = 0, .on_interval = r->k->want_trace ? sink_wait_interval : NULL,
                               .interval_ctx = r->k };
    if (wait_collect_start(&r->k->wait, r->k->stacks, r->k->profile, &wo) != 0) {
        fprintf(stderr, "taskspy: out of memory\n");
        return EXIT_RUNTIME;
    }
    return CARRY_ON;
}

static int add_wait_site(void *ctx, const struct wait_site_time *t)
{
    return address_stacks_add_wait(ctx, t);
}

/* Snapshot mode's settling: its stacks added to the pprof output, its runs of one state to the trace (their
 * roots named in the CPU profile, as the trace's other roots are). */
static int settle_snapshot_waits(struct recording *r)
{
    struct record_sink *k = r->k;
    const struct snapshot_waits *w = &k->snapshot_waits;
    uint64_t stopped_ns = task_snapshot_loop_stats(k->snapshots)->stopped_ns;
    int rc = k->snapshots_failed || task_snapshot_loop_stats(k->snapshots)->failed ? -1 : 0;
    if (rc == 0 && k->addresses)
        rc = address_stacks_add_named_waits(k->addresses, k->profile, w->profile);
    for (size_t i = 0; rc == 0 && k->want_trace && i < w->spans.n; i++) {
        const struct snapshot_span *span = &w->spans.v[i];
        const char *root = profile_frame_name(w->profile, span->root);
        uint64_t end_ns = span->end_ns < stopped_ns ? span->end_ns : stopped_ns;
        if (span->start_ns >= end_ns)
            continue;                  /* (a snapshot under way at the stop) */
        struct wait_interval iv = {
            .task_id = span->task_id, .start_ns = span->start_ns, .end_ns = end_ns,
            .woken_ns = span->runnable ? span->start_ns : end_ns,
            .site = span->site != PROFILE_NO_FRAME ? profile_frame_name(w->profile, span->site) : NULL,
        };
        uint32_t root_frame = profile_intern(k->profile, root, strlen(root));
        rc = root_frame == PROFILE_NO_FRAME ? -1 : trace_collect_rooted_wait(&k->trace, &iv, root_frame);
    }
    if (rc != 0) {
        fprintf(stderr, "taskspy: out of memory while settling the waits; nothing written\n");
        return EXIT_RUNTIME;
    }
    return CARRY_ON;
}

/* After the recording, before any output: the waits settled up to the recording's end (and added to the
 * stacks as addresses, for the pprof output). */
static int settle_waits(struct recording *r)
{
    struct record_sink *k = r->k;
    if (!k->want_wait)
        return CARRY_ON;
    if (k->from_snapshots)
        return settle_snapshot_waits(r);
    const struct sampler_stats *st = sampler_stats(r->s);
    uint64_t stop_ns = r->start_ns + (uint64_t)(st->duration_s * 1e9);
    /* A runtime that reports waker registrations but not task completion (tokio without markers): the wait
     * profile takes a poll that registered no waker and was not woken again as the task's last. */
    k->keep_doubtful_waits = !st->task_completion_unknown;
    if (wait_collect_finish(&k->wait, stop_ns, !k->keep_doubtful_waits) != 0 || k->failed ||
        (k->addresses && wait_profile_each_site(k->wait.profile, add_wait_site, k->addresses) != 0)) {
        fprintf(stderr, "taskspy: out of memory while settling the waits; nothing written\n");
        return EXIT_RUNTIME;
    }
    return CARRY_ON;
}

/* Snapshot mode: its summary and its file's header line; false when there is no wait profile (said in a line). */
static bool snapshot_summary(struct recording *r, const char *cmdline, char *header, size_t len)
{
    const struct task_snapshot_loop_stats *s = task_snapshot_loop_stats(r->k->snapshots);
    if (!s->taken) {
        fprintf(stderr, "taskspy: no wait profile: no snapshot of the tasks was taken (%s); %s not written\n",
                s->last_error[0] ? s->last_error : "the recording ended first", r->o.wait_output);
        return false;
    }
    struct snapshot_waits *w = &r->k->snapshot_waits;
    record_summary_print_snapshot_waits(stderr, s, w, r->o.wait_frequency);
    snprintf(header, len, "%s (pid %d), %.1f s, %" PRIu64 " snapshots at %u Hz of %" PRIu64 " tasks: %.1f s suspended, "
             "%.1f s runnable, %.1f s running", cmdline, (int)sampler_target_pid(r->s),
             sampler_stats(r->s)->duration_s, s->taken, r->o.wait_frequency, w->tasks_seen, w->suspended_ns / 1e9,
             w->runnable_ns / 1e9, w->running_ns / 1e9);
    r->k->wait.result = w->profile;      /* written and freed by wait_collect from now on */
    w->profile = NULL;
    return true;
}

/* Event mode: its summary and its file's header line; false when there is no wait profile (said in a line). */
static bool event_summary(struct recording *r, const char *cmdline, char *header, size_t len)
{
    struct record_sink *k = r->k;
    const struct sampler_stats *st = sampler_stats(r->s);
    const char *nothing = wait_collect_nothing(&k->wait, st->wait_note);
    if (nothing) {
        fprintf(stderr, "taskspy: no wait profile: %s; %s not written\n", nothing, r->o.wait_output);
        return false;
    }
    record_summary_print_waits(stderr, wait_profile_summary(k->wait.profile), k->profile, st);
    const struct wait_summary *ws = wait_profile_summary(k->wait.profile);
    snprintf(header, len, "%s (pid %d), %.1f s, %zu tasks waited %.1f s suspended, %.1f s runnable",
             cmdline, (int)sampler_target_pid(r->s), st->duration_s, ws->n_tasks, ws->suspended_ns / 1e9,
             ws->runnable_ns / 1e9);
    return true;
}

/* After the CPU profile: the waits' summary and their file, or one line saying why there is none (the CPU
 * profile stands either way). */
static int write_wait_output(struct recording *r)
{
    struct record_sink *k = r->k;
    if (!k->want_wait)
        return 0;
    char cmdline[1024], header[1400];
    command_line_of(&r->o, sampler_target_pid(r->s), cmdline, sizeof(cmdline));
    if (!(k->from_snapshots ? snapshot_summary : event_summary)(r, cmdline, header, sizeof(header)))
        return 0;
    struct svg_options so;
    svg_options_init(&so);
    so.title = "Wait time";
    so.subtitle = r->o.title ? r->o.title : NULL;
    so.header = header;
    so.colors = "wait";
    so.count_name = "ms";
    so.count_divisor = 1000;       /* counts are microseconds */
    if (wait_collect_write(&k->wait, &so, r->err, sizeof(r->err)) != 0)
        return fail(r, EXIT_RUNTIME);
    fprintf(stderr, "taskspy: wrote %s (%zu stacks, wall time in microseconds)\n", r->o.wait_output,
            profile_distinct_stacks(k->wait.result));
    return 0;
}

static void finish(struct recording *r)
{
    if (r->outs_open)
        output_set_abort(&r->outs);
    if (r->s)
        sampler_close(r->s);
    if (r->k)
        sink_free(r->k);
}

int record_command(int argc, char **argv)
{
    static int (*const steps[])(struct recording *) = {
        parse_options, open_outputs, make_sink, open_wait_output, choose_wait_route, catch_stop_signals, open_sampler,
        start_wait_profile, run_sampler, settle_waits, report_and_write, write_wait_output,
    };
    struct recording r = { .argc = argc, .argv = argv };
    int status = CARRY_ON;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && status == CARRY_ON; i++)
        status = steps[i](&r);
    finish(&r);
    return status;
}
