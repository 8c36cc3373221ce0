/* SPDX-License-Identifier: GPL-3.0-or-later */
/* top_cmd.c: `taskspy top -p PID [-i SECS] [-F HZ] [--tasks] [--sort KEY] [-b [-n FRAMES] [--json]]` (SPEC
 * section 3c): a live view of every task. The wiring: tasks/'s snapshot loop (10 snapshots a second) and the
 * sampler (each sample's task read from tokio's CONTEXT, no probe: the TLS route alone) feed tasks/'s live view
 * (task_top), whose frames are printed every -i seconds (batch, cli/top_print.c) or drawn (cli/top_screen.c).
 * Ends after -n frames, on q, on Ctrl-C (SIGINT, SIGTERM, SIGHUP) or when the target exits: exit 0. A target
 * whose tasks cannot be read is one line and exit 1; without CPU sampling (perf events refused) the view runs
 * and says why its CPU column is empty. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/task_native_stacks.h"
#include "cli/top_samples.h"
#include "cli/top_view.h"
#include "sampler/sampler.h"
#include "tasks/tasks.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#define SNAPSHOT_HZ 10                /* the view's task snapshots a second */
#define TOP_STACK_BYTES 8192u         /* user stack copied per sample: enough for a sample's innermost frames */
#define SAMPLER_WARNING_BYTES 512
#define TOP_MMAP_THRESHOLD (256 * 1024)   /* malloc serves bigger buffers from their own mappings */

/* The one piece of state a signal handler may touch. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct top_args {
    pid_t pid;
    bool batch;
    unsigned frames;                  /* -n: 0 until stopped */
    double interval;                  /* -i */
    unsigned frequency;               /* -F */
    bool json;
    bool tasks;                       /* --tasks: a row per task */
    int sort;                         /* enum top_sort */
};

#define AT(field) offsetof(struct top_args, field)

static const struct option_choice sort_choices[] = {
    { "cpu", TOP_SORT_CPU }, { "count", TOP_SORT_COUNT }, { "wait", TOP_SORT_WAIT }, { "id", TOP_SORT_ID }, { NULL, 0 },
};

static const struct option_spec top_specs[] = {
    { .name = "pid", .short_name = 'p', .arg = "PID", .kind = OPTION_INT, .offset = AT(pid), .min = 1,
      .max = 4194304, .bad_value = "invalid PID '%s'", .help = "the process whose tasks to show" },
    { .name = "interval", .short_name = 'i', .arg = "SECS", .kind = OPTION_REAL, .offset = AT(interval), .min = 0.1,
      .max = 3600, .bad_value = "invalid interval '%s' (0.1 to 3600 seconds)",
      .help = "seconds between frames (default 1)" },
    { .name = "frequency", .short_name = 'F', .arg = "HZ", .kind = OPTION_WHOLE, .offset = AT(frequency), .min = 1,
      .max = 999, .bad_value = "invalid frequency '%s' (1 to 999)",
      .help = "CPU samples per second of CPU time, per thread (default 99)" },
    { .name = "batch", .short_name = 'b', .kind = OPTION_FLAG, .offset = AT(batch),
      .help = "print each frame instead of the full-screen view (as top -b)" },
    { .name = "frames", .short_name = 'n', .arg = "FRAMES", .kind = OPTION_WHOLE, .offset = AT(frames), .min = 1,
      .max = 1000000, .bad_value = "invalid number of frames '%s'", .help = "with -b: stop after FRAMES frames" },
    { .name = "json", .kind = OPTION_FLAG, .offset = AT(json),
      .help = "with -b: each frame as one JSON object on one line" },
    { .name = "tasks", .kind = OPTION_FLAG, .offset = AT(tasks),
      .help = "a row per task (default: a row per await point, as taskspy tasks\ngroups them)" },
    { .name = "sort", .arg = "KEY", .kind = OPTION_CHOICE, .offset = AT(sort), .choices = sort_choices,
      .bad_value = "invalid sort key '%s' (" TOP_SORT_NAMES ")", .help = "the rows' order: cpu (default), count, wait\n"
                                                                       "(time at the await point), id" },
    { .name = "help", .short_name = 'h', .kind = OPTION_HELP, .help = "this help" },
};

static const struct option_table top_table = { .specs = top_specs, .n = sizeof(top_specs) / sizeof(top_specs[0]) };

static const struct option_command top_command_spec = {
    .name = "top",
    .usage = "usage: taskspy top -p PID [-i SECS] [-F HZ] [--tasks] [--sort KEY]\n"
             "       taskspy top -p PID -b [-n FRAMES] [--json] [-i SECS] [-F HZ] [--tasks] [--sort KEY]\n"
             "A live view of every task of a running tokio program, read from outside (nothing rebuilt, nothing\n"
             "attached but perf sampling): a header (runtime, tasks by state, workers, queues, CPU), a row per\n"
             "await point or per task (states, CPU share, busy / scheduled / idle shares, time at the await,\n"
             "leaf, warnings) and the warnings: lost waker, blocking, starved, leak, boxed, large.\n"
             "Keys: c n w i sort by CPU, count, wait, id; t rows per task or per await point; / filter;\n"
             "Enter a row's tree and hottest frames; q quit.\n"
             "\n",
    .table = &top_table,
};

/* ---- the sampler's side: each sample's task and innermost frame of its own (cli/top_samples.c) -------------- */

static void sink_warning(void *ctx, const char *message)
{
    char *warning = ctx;
    snprintf(warning, SAMPLER_WARNING_BYTES, "%s", message);
}

/* ---- one `taskspy top` -------------------------------------------------------------------------------------- */

struct top_run {
    struct top_args a;
    struct top_session session;
    struct task_native_stacks *stacks;
    struct task_snapshot_loop *loop;
    struct top_samples *samples;
    char warning[SAMPLER_WARNING_BYTES];  /* the sampler's last warning (shown in the header's note) */
    struct sampler *sampler;
    pthread_t sampler_thread;
    bool sampler_running;
    volatile sig_atomic_t sampler_done;
    char sampler_err[512];
    char note[640];
};

static void *sampler_main(void *arg)
{
    struct top_run *r = arg;
    const struct sampler_sink sink = { .ctx = r->samples, .on_mapping = top_samples_mapping,
                                       .on_sample = top_samples_sample };
    if (sampler_run(r->sampler, &sink, r->sampler_err, sizeof(r->sampler_err)) != 0)
        snprintf(r->note, sizeof(r->note), "sampling stopped: %s", r->sampler_err);
    r->sampler_done = 1;
    return NULL;
}

/* Sampling: perf events on every thread of the target, tasks from tokio's CONTEXT (the TLS route; no probe is
   attached). Without it the view runs without CPU shares, and says why. */
static void start_sampling(struct top_run *r)
{
    char err[512];
    /* the program's file as the task reader found it in the target's mappings */
    r->samples = top_samples_new(r->session.model, task_reader_program(task_snapshot_loop_reader(r->loop)));
    if (!r->samples) {
        snprintf(r->note, sizeof(r->note), "out of memory");
        return;
    }
    struct sampler_config cfg = {
        .pid = r->a.pid, .frequency = r->a.frequency, .call_graph = SAMPLER_CALL_GRAPH_DWARF,
        .stack_size = TOP_STACK_BYTES, .markers = "tls", .stop = &stop_requested, .long_running = true,
        .on_warning = sink_warning, .warning_ctx = r->warning,
    };
    if (sampler_open(&r->sampler, &cfg, err, sizeof(err)) != 0) {
        snprintf(r->note, sizeof(r->note), "%s", err);
        r->sampler = NULL;
        return;
    }
    if (!sampler_tls_route(r->sampler)) {
        snprintf(r->note, sizeof(r->note), "samples cannot tell their task (%s)",
                 r->warning[0] ? r->warning : "tokio's CONTEXT.current_task_id not readable at samples");
        sampler_close(r->sampler);
        r->sampler = NULL;
        return;
    }
    if (pthread_create(&r->sampler_thread, NULL, sampler_main, r) != 0) {
        snprintf(r->note, sizeof(r->note), "cannot start the sampling thread");
        sampler_close(r->sampler);
        r->sampler = NULL;
        return;
    }
    r->sampler_running = true;
    r->session.frequency = r->a.frequency;
}

struct snapshot_ctx {
    struct task_top *model;
    struct task_snapshot_loop *loop;
};

static int on_snapshot(void *ctx, const struct task_snapshot *snap)
{
    struct top_run *r = ctx;
    return task_top_add_snapshot(r->session.model, snap, task_snapshot_loop_reader(r->loop));
}

static bool target_gone(struct top_session *s)
{
    struct top_run *r = (struct top_run *)((char *)s - offsetof(struct top_run, session));
    return (kill(s->pid, 0) != 0 && errno == ESRCH) || task_snapshot_loop_stats(r->loop)->target_gone ||
           (r->sampler && r->sampler_done && sampler_stats(r->sampler)->target_exited);
}

static int parse_args(struct top_args *a, int argc, char **argv)
{
    *a = (struct top_args){ .interval = 1, .frequency = 99, .sort = TOP_SORT_CPU };
    int operands = argc;
    enum option_parse_result rc = option_command_parse(&top_command_spec, a, argc, argv, &operands);
    if (rc == OPTIONS_HELP)
        return -1;
    if (rc != OPTIONS_OK)
        return EXIT_USAGE;
    if (operands < argc) {
        char err[300];
        snprintf(err, sizeof(err), "unexpected argument '%s': give the process as -p PID", argv[operands]);
        return option_command_usage_error(&top_command_spec, err);
    }
    if (!a->pid)
        return option_command_usage_error(&top_command_spec, "no process: give -p PID");
    if (!a->batch && (a->frames || a->json))
        return option_command_usage_error(&top_command_spec, a->json ? "--json prints frames: give it with -b"
                                                                     : "-n counts printed frames: give it with -b");
    return 0;
}

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Batch mode: a frame every interval until -n frames, a stop signal or the target's exit (its last frame printed,
   saying so). */
static int run_batch(struct top_run *r)
{
    struct top_session *s = &r->session;
    uint64_t start = monotonic_ns(), period = (uint64_t)(s->interval_s * 1e9);
    for (unsigned n = 1; !stop_requested; n++) {
        bool gone = false;
        while (!stop_requested && !(gone = s->target_gone(s)) && monotonic_ns() < start + n * period) {
            struct timespec nap = { 0, 20000000 };
            nanosleep(&nap, NULL);
        }
        if (stop_requested)
            break;
        if (gone)
            task_top_target_gone(s->model);
        struct task_top_frame f;
        if (task_top_frame(s->model, s->rows, &f) != 0) {
            fprintf(stderr, "taskspy: out of memory\n");
            return EXIT_RUNTIME;
        }
        size_t shown = top_arrange_rows(s, f.rows, f.n_rows);
        if ((r->a.json ? top_print_json : top_print_text)(stdout, s, &f, shown) != 0 || fflush(stdout) != 0) {
            if (errno != EPIPE)
                fprintf(stderr, "taskspy: cannot write to standard output: %s\n", strerror(errno));
            return EXIT_RUNTIME;
        }
        if (gone) {
            fprintf(stderr, "taskspy: process %d exited\n", (int)s->pid);
            break;
        }
        if (r->a.frames && n >= r->a.frames)
            break;
    }
    return 0;
}

static void finish(struct top_run *r)
{
    stop_requested = 1;
    if (r->sampler_running)
        pthread_join(r->sampler_thread, NULL);
    if (r->sampler)
        sampler_close(r->sampler);
    task_snapshot_loop_free(r->loop);     /* (stops its thread first) */
    task_top_free(r->session.model);
    task_native_stacks_close(r->stacks);
    top_samples_free(r->samples);
}

int top_command(int argc, char **argv)
{
    struct top_run *r = calloc(1, sizeof(*r));
    if (!r) {
        fprintf(stderr, "taskspy: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = parse_args(&r->a, argc, argv);
    if (rc != 0) {
        free(r);
        return rc < 0 ? 0 : rc;
    }
    /* The samples' symbol state is renewed once a minute (cli/top_samples.c), and with it buffers of megabytes (an
       object's decompressed debug sections). malloc's default would serve those from the heap once the first was
       freed (its mmap threshold rises to the largest chunk freed), where each renewal leaves holes the next does
       not fit in: a fixed threshold keeps them mapped, and given back whole when freed. (A tuning only: where it is
       refused, as under AddressSanitizer's allocator, the view works the same.) */
    (void)mallopt(M_MMAP_THRESHOLD, TOP_MMAP_THRESHOLD);
    char root[64], err[1024];
    snprintf(root, sizeof(root), "/proc/%d", (int)r->a.pid);
    struct stat st;
    if (stat(root, &st) != 0) {
        fprintf(stderr, "taskspy: no such process: %d\n", (int)r->a.pid);
        free(r);
        return EXIT_RUNTIME;
    }
    if (!r->a.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        fprintf(stderr, "taskspy: top: the full-screen view needs a terminal (for scripts: taskspy top -b)\n");
        free(r);
        return EXIT_RUNTIME;
    }
    catch_stop_signals();
    snprintf(root, sizeof(root), "/proc/%d/root", (int)r->a.pid);
    if (task_native_stacks_open(&r->stacks, r->a.pid, root, err, sizeof(err)) != 0)
        r->stacks = NULL;          /* (a blocking task's place is then not shown) */
    const struct task_reader_options options = { .root = root, .worker_stack = r->stacks ? task_native_stack : NULL,
                                                 .worker_stack_ctx = r->stacks };
    struct top_session *s = &r->session;
    *s = (struct top_session){ .pid = r->a.pid, .interval_s = r->a.interval,
                               .rows = r->a.tasks ? TASK_TOP_TASKS : TASK_TOP_GROUPS, .sort = (enum top_sort)r->a.sort,
                               .stop = &stop_requested, .target_gone = target_gone };
    if (task_snapshot_loop_open(&r->loop, r->a.pid, NULL, &options, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        finish(r);
        free(r);
        return EXIT_RUNTIME;
    }
    s->model = task_top_new(&(struct task_top_options){ .sample_hz = r->a.frequency });
    if (!s->model) {
        fprintf(stderr, "taskspy: out of memory\n");
        finish(r);
        free(r);
        return EXIT_RUNTIME;
    }
    start_sampling(r);
    if (!r->sampler_running) {
        task_top_free(s->model);   /* (no CPU shares: a model that says so) */
        s->model = task_top_new(&(struct task_top_options){ .sample_hz = 0 });
        s->sampling_note = r->note;
        if (r->a.batch)
            fprintf(stderr, "taskspy: no CPU shares: %s\n", r->note);
    }
    struct task_snapshot_loop_options lo = { .hz = SNAPSHOT_HZ, .stop_requested = &stop_requested,
                                             .on_snapshot = on_snapshot, .ctx = r };
    int status = 0;
    if (!s->model || task_snapshot_loop_start(r->loop, &lo) != 0) {
        fprintf(stderr, "taskspy: cannot start the snapshot thread (out of memory)\n");
        status = EXIT_RUNTIME;
    } else if (r->a.batch) {
        status = run_batch(r);
    } else if (top_screen_run(s, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        status = EXIT_RUNTIME;
    }
    if (!r->a.batch && status == 0 && s->target_gone(s))
        fprintf(stderr, "taskspy: process %d exited\n", (int)s->pid);
    finish(r);
    free(r);
    return status;
}
