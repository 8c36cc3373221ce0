/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tasks_cmd.c: `taskspy tasks -p PID [--json] [-v] [-o FILE]` and `taskspy tasks --core CORE [--exe PROGRAM]
 * ...` (SPEC section 3b): one snapshot of every task's async backtrace, read from the target's memory (tasks/),
 * nothing stopped, or from a core dump (its running tasks with their worker's native stack, cli/task_native_stacks.h);
 * printed on stdout as text grouped by backtrace (cli/task_dump.h) or as JSON; -o also writes "where all the
 * tasks are" as folded stacks or an SVG flame graph, one count per task (cli/task_stack_names.h), whole or not
 * at all (cli/output_file). Exit status: 0 done (also when the target exited mid-dump, or a core left out some
 * of what was read: what was read, and a line on stderr), 1 runtime error, 2 usage error; every error is one
 * "taskspy: ..." line on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/output_file.h"
#include "cli/output_formats.h"
#include "cli/target_command_line.h"
#include "cli/task_dump.h"
#include "cli/task_native_stacks.h"
#include "cli/task_stack_names.h"
#include "cli/version.h"
#include "flamegraph/flamegraph.h"
#include "tasks/tasks.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

_Static_assert(sizeof(pid_t) == sizeof(int), "pid_t stored as int");

struct tasks_args {
    pid_t pid;
    const char *core;                /* --core FILE, or NULL */
    const char *exe;                 /* --exe PROGRAM, or NULL */
    bool json;
    bool verbose;
    const char *output;              /* -o FILE, or NULL */
    enum output_format format;       /* of output: FORMAT_FOLDED or FORMAT_FLAMEGRAPH */
};

#define AT(field) offsetof(struct tasks_args, field)

static const struct option_spec tasks_specs[] = {
    { .name = "pid", .short_name = 'p', .arg = "PID", .kind = OPTION_INT, .offset = AT(pid), .min = 1,
      .max = 4194304, .bad_value = "invalid PID '%s'", .help = "the process whose tasks to read" },
    { .name = "core", .arg = "CORE", .kind = OPTION_STRING, .offset = AT(core), .non_empty = true,
      .help = "read the tasks from a core dump instead (gcore, a crash's core)" },
    { .name = "exe", .arg = "PROGRAM", .kind = OPTION_STRING, .offset = AT(exe), .non_empty = true,
      .help = "the core's program, when the file the core names is not\n"
              "there (it must be the same build)" },
    { .name = "json", .kind = OPTION_FLAG, .offset = AT(json), .help = "print one JSON object instead of text" },
    { .name = "verbose", .short_name = 'v', .kind = OPTION_FLAG, .offset = AT(verbose),
      .help = "list every task with its id under its backtrace" },
    { .name = "output", .short_name = 'o', .arg = "FILE", .kind = OPTION_STRING, .offset = AT(output),
      .non_empty = true, .help = "also write where the tasks are, one count per task (split among the\n"
                                 "branches a task waits on at once): FILE.folded (or .txt) folded stacks,\n"
                                 "FILE.svg flame graph" },
    { .name = "help", .short_name = 'h', .kind = OPTION_HELP, .help = "this help" },
};

static const struct option_table tasks_table = {
    .specs = tasks_specs, .n = sizeof(tasks_specs) / sizeof(tasks_specs[0]),
};

static void usage(FILE *out)
{
    fputs("usage: taskspy tasks -p PID [--json] [-v] [-o FILE]\n"
          "       taskspy tasks --core CORE [--exe PROGRAM] [--json] [-v] [-o FILE]\n"
          "Print every task's async backtrace in a running tokio program, read from its memory without stopping\n"
          "it, or in a core dump of one: the worker threads, then the tasks grouped by identical backtrace,\n"
          "largest group first.\n"
          "\n",
          out);
    option_table_help(&tasks_table, out);
}

static int usage_error(const char *message)
{
    fprintf(stderr, "taskspy: tasks: %s (see 'taskspy tasks --help')\n", message);
    return EXIT_USAGE;
}

/* Returns 0, or an exit status (EXIT_USAGE; or -1 meaning --help was printed, exit 0). */
static int parse_args(int argc, char **argv, struct tasks_args *a)
{
    memset(a, 0, sizeof(*a));
    char err[512];
    int operands = argc;
    enum option_parse_result rc = option_table_parse(&tasks_table, a, argc, argv, &operands, err, sizeof(err));
    if (rc == OPTIONS_HELP) {
        usage(stdout);
        return -1;
    }
    if (rc != OPTIONS_OK)
        return usage_error(err);
    if (operands < argc) {
        snprintf(err, sizeof(err), "unexpected argument '%s': give the process as -p PID or the core as --core CORE",
                 argv[operands]);
        return usage_error(err);
    }
    if (a->pid && a->core)
        return usage_error("give either -p PID or --core CORE, not both");
    if (!a->pid && !a->core)
        return usage_error("no process: give -p PID (or --core CORE)");
    if (a->exe && !a->core)
        return usage_error("--exe names a core's program: give it with --core CORE");
    if (a->output && (output_format_of_path(a->output, &a->format) != 0 ||
                      (a->format != FORMAT_FOLDED && a->format != FORMAT_FLAMEGRAPH))) {
        snprintf(err, sizeof(err), "cannot write the tasks as '%s': name a .folded, .txt or .svg file", a->output);
        return usage_error(err);
    }
    return 0;
}

/* The stderr lines when the snapshot is not whole: the output still shows what was read. */
static void report_partial(pid_t pid, const struct task_snapshot *snap)
{
    if (snap->unsaved_pages)
        fprintf(stderr, "taskspy: the core did not save %zu page%s the dump read (the first at 0x%" PRIx64 ", %s%s): "
                        "what lay there is not shown\n", snap->unsaved_pages, snap->unsaved_pages == 1 ? "" : "s",
                snap->first_unsaved, snap->first_unsaved_in ? "in " : "", snap->first_unsaved_in ? snap->first_unsaved_in
                                                                      : "anonymous memory: a heap or a stack");
    if (snap->unusable_files)
        fprintf(stderr, "taskspy: %zu file%s the core names %s not on this machine or of another build (the first: "
                        "%s): what the core left out of them is not read\n", snap->unusable_files,
                snap->unusable_files == 1 ? "" : "s", snap->unusable_files == 1 ? "is" : "are", snap->first_unusable);
    if (snap->program_unchecked)
        fprintf(stderr, "taskspy: the core holds no build id of %s: its file is taken as it is\n", snap->program);
    if (snap->time_unknown)
        fprintf(stderr, "taskspy: when the core was dumped is not known (its file dates from before this boot): "
                        "no deadline is shown\n");
    if (snap->target_gone)
        fprintf(stderr, "taskspy: process %d exited during the dump: showing the %zu tasks read\n", (int)pid,
                snap->listed);
    else if (snap->list_truncated)
        fprintf(stderr, "taskspy: the walk of the task list stopped early (its bound, or a link that changed): "
                        "showing the %zu tasks read\n", snap->listed);
}

static int print_dump(const struct tasks_args *a, struct task_reader *reader, const struct task_snapshot *snap)
{
    int rc;
    if (a->json) {
        for (size_t i = 0; i < snap->n_tasks; i++)      /* every running task's worker stack */
            task_reader_stack(reader, &snap->tasks[i]);
        rc = task_dump_json(stdout, snap->pid, snap);
    } else {
        struct task_groups groups;
        if (task_groups_build(&groups, snap->tasks, snap->n_tasks) != 0) {
            fprintf(stderr, "taskspy: out of memory\n");
            return -1;
        }
        for (size_t i = 0; i < groups.n; i++)          /* the stacks the text shows: a group of one's, or -v's */
            for (size_t k = 0; k < groups.v[i].n && (a->verbose || groups.v[i].n == 1); k++)
                task_reader_stack(reader, (struct task_info *)groups.v[i].tasks[k]);
        rc = task_dump_text(stdout, snap->pid, snap, &groups, a->verbose);
        task_groups_free(&groups);
    }
    if (rc == 0 && fflush(stdout) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "taskspy: cannot write to standard output: %s\n", strerror(errno));
    return rc;
}

/* The -o file, its temporary file already open in out: the snapshot's tasks as folded stacks or an SVG. */
static int write_file(const struct tasks_args *a, const struct task_snapshot *snap, struct output_file *out)
{
    struct profile *p = profile_new();
    uint64_t per_task = 1;
    if (!p || task_stack_add_snapshot(p, snap, &per_task) != 0) {
        fprintf(stderr, "taskspy: out of memory; %s not written\n", a->output);
        profile_free(p);
        return -1;
    }
    profile_trim(p);
    char cmdline[1024], title[1100], header[1400], err[512];
    if (a->core)
        snprintf(cmdline, sizeof(cmdline), "%s (core %s)", snap->program ? snap->program : "", a->core);
    else
        target_command_line(snap->pid, cmdline, sizeof(cmdline));
    snprintf(title, sizeof(title), "taskspy tasks: %d %s", (int)snap->pid, cmdline);
    snprintf(header, sizeof(header), "%s (pid %d), %s, %zu tasks read%s%s", cmdline, (int)snap->pid,
             snap->runtime ? snap->runtime : "runtime", snap->listed,
             snap->list_truncated ? ", walk stopped early" : "", snap->target_gone ? ", target exited" : "");
    struct svg_options so;
    svg_options_init(&so);
    so.title = title;
    so.header = header;
    so.count_name = "tasks";
    so.count_divisor = per_task > 1 ? (unsigned)per_task : 0;   /* a task's share of each branch, in tasks */
    struct export_info info = { .name = cmdline, .exporter = "taskspy " TASKSPY_VERSION };
    struct output_content content = { .profile = p, .svg = &so, .info = &info };
    int rc = -1;
    if (output_write(a->format, &content, out->stream) != 0)
        fprintf(stderr, "taskspy: cannot write %s: %s\n", a->output, strerror(errno));
    else if (output_file_commit(out, err, sizeof(err)) != 0)
        fprintf(stderr, "taskspy: %s\n", err);
    else
        rc = 0;
    if (rc == 0 && per_task > 1)
        fprintf(stderr, "taskspy: wrote %s (%zu tasks, %zu distinct stacks; each task counts %llu, split evenly "
                        "among the branches it waits on at once)\n", a->output, snap->n_tasks,
                profile_distinct_stacks(p), (unsigned long long)per_task);
    else if (rc == 0)
        fprintf(stderr, "taskspy: wrote %s (%zu tasks, %zu distinct stacks)\n", a->output, snap->n_tasks,
                profile_distinct_stacks(p));
    profile_free(p);
    return rc;
}

int tasks_command(int argc, char **argv)
{
    struct tasks_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc != 0)
        return rc < 0 ? 0 : rc;

    char root[64], err[1024];
    snprintf(root, sizeof(root), "/proc/%d", (int)args.pid);
    struct stat st;
    if (!args.core && stat(root, &st) != 0) {
        fprintf(stderr, "taskspy: no such process: %d\n", (int)args.pid);
        return EXIT_RUNTIME;
    }
    /* Create the output first, so an unwritable destination fails before any work. */
    struct output_file out;
    if (args.output && output_file_open(&out, args.output, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
        return EXIT_RUNTIME;
    }
    snprintf(root, sizeof(root), "/proc/%d/root", (int)args.pid);     /* the target's files, containers too */
    /* a running task's worker stack (a live one's without it: no stack shown; a core's needs it) */
    struct task_native_stacks *stacks = NULL;
    if (args.core)
        stacks = task_native_stacks_for_core();
    else if (task_native_stacks_open(&stacks, args.pid, root, err, sizeof(err)) != 0)
        stacks = NULL;
    const struct task_reader_options options = { .root = root, .worker_stack = stacks ? task_native_stack : NULL,
                                                 .worker_stack_ctx = stacks };
    struct task_reader *reader = NULL;
    struct task_snapshot snap;
    int status = EXIT_RUNTIME;
    if (args.core && !stacks)
        snprintf(err, sizeof(err), "out of memory");
    else if (args.core)
        rc = task_reader_open_core(&reader, args.core, args.exe, &options, err, sizeof(err));
    else
        rc = task_reader_open(&reader, args.pid, &options, err, sizeof(err));
    if ((args.core && !stacks) || rc != 0 || task_reader_snapshot(reader, &snap, err, sizeof(err)) != 0) {
        fprintf(stderr, "taskspy: %s\n", err);
    } else if (print_dump(&args, reader, &snap) == 0 && (!args.output || write_file(&args, &snap, &out) == 0)) {
        report_partial(snap.pid, &snap);
        status = 0;
    }
    if (args.output && status != 0)
        output_file_abort(&out);
    if (reader)
        task_reader_close(reader);
    task_native_stacks_close(stacks);
    return status;
}
