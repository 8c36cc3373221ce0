/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_text.c: the text dump of `taskspy tasks`:
 *
 *   tokio 1.24.2, pid 1234: 53 tasks read
 *   worker 0 tid 1235 tokio-runtime-w: polling task 17, 3 in its local queue
 *
 *   50 tasks idle
 *       my_app::park_sleep @ main.rs:17
 *       my_app::nap @ main.rs:13
 *       tokio::time::sleep::Sleep (deadline in 3598.1-3599.9 s)
 *
 * A group's lines: its count and state, its root where the first frame is not the root's own async fn, its
 * frames outermost first, its leaf future with the detail (task_group_detail); -v adds a line per task. */
#include "cli/task_dump.h"

#include <inttypes.h>
#include <string.h>

#define INDENT "    "

/* Text from the target (a thread's comm, names) with control characters shown as '?': one item, one line. */
static void put_text(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++)
        fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, out);
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

static void print_summary(FILE *out, pid_t pid, const struct task_snapshot *snap)
{
    put_text(out, snap->runtime && *snap->runtime ? snap->runtime : "runtime");
    fprintf(out, ", pid %d: %zu task%s read", (int)pid, snap->listed, plural(snap->listed));
    if (snap->list_truncated)
        fputs("; the walk of the task list stopped early (its bound, or a link that changed)", out);
    if (snap->target_gone)
        fputs("; the target exited during the dump", out);
    fputc('\n', out);
}

static void print_worker(FILE *out, const struct task_worker *w)
{
    if (w->index >= 0)
        fprintf(out, "worker %" PRId64 " tid %d ", w->index, (int)w->tid);
    else
        fprintf(out, "thread tid %d ", (int)w->tid);
    char name[sizeof(w->name) + 1];
    memcpy(name, w->name, sizeof(w->name));
    name[sizeof(w->name)] = '\0';
    put_text(out, name[0] ? name : "[thread]");
    if (w->index < 0)
        fputs(" (not a worker: the runtime's block_on)", out);
    if (w->current_task)
        fprintf(out, ": polling task %" PRIu64, w->current_task);
    else
        fputs(": not polling a task", out);
    if (w->local_queue >= 0)
        fprintf(out, ", %" PRId64 " in its local queue", w->local_queue);
    fputc('\n', out);
}

/* "my_app::nap @ main.rs:13", as the folded stacks name an await point (cli/task_stack_names.h). */
static void print_frame(FILE *out, const struct task_frame *f)
{
    fputs(INDENT, out);
    put_text(out, f->function && *f->function ? f->function : "[unknown]");
    if (f->file && *f->file && f->line) {
        fputs(" @ ", out);
        put_text(out, f->file);
        fprintf(out, ":%u", (unsigned)f->line);
    }
    fputc('\n', out);
}

/* The worker thread polling task id now, or NULL. */
static const struct task_worker *polled_by(const struct task_snapshot *snap, uint64_t id)
{
    for (size_t i = 0; i < snap->n_workers; i++)
        if (snap->workers[i].current_task == id)
            return &snap->workers[i];
    return NULL;
}

static void print_group(FILE *out, const struct task_snapshot *snap, const struct task_group *g, bool verbose)
{
    const struct task_info *t = g->tasks[0];
    fprintf(out, "%zu task%s %s%s\n", g->n, plural(g->n), task_state_name(t->state),
            t->unwakeable ? ", nothing can wake it" : "");
    bool root_is_first_frame = t->root && t->n_frames > 0 && t->frames[0].function &&
                               strcmp(t->root, t->frames[0].function) == 0;
    if (!root_is_first_frame) {
        fputs(INDENT, out);
        put_text(out, t->root && *t->root ? t->root : "[task entry unknown]");
        fputc('\n', out);
    }
    for (size_t i = 0; i < t->n_frames; i++)
        print_frame(out, &t->frames[i]);
    char detail_text[512];
    const char *detail = task_group_detail(g, detail_text, sizeof(detail_text));
    if (t->leaf || detail) {
        fputs(INDENT, out);
        put_text(out, t->leaf ? t->leaf : "");
        if (detail) {
            fputs(t->leaf ? " (" : "(", out);
            put_text(out, detail);
            fputc(')', out);
        }
        fputc('\n', out);
    }
    for (size_t i = 0; i < g->n; i++) {            /* a running task's native stack (a core's) */
        const struct task_info *task = g->tasks[i];
        if (!task->n_stack)
            continue;
        const struct task_worker *w = polled_by(snap, task->id);
        fprintf(out, "  task %" PRIu64 " on tid %d, its native stack:\n", task->id, w ? (int)w->tid : 0);
        for (size_t k = 0; k < task->n_stack; k++)
            print_frame(out, &task->stack[k]);
    }
    for (size_t i = 0; verbose && i < g->n; i++) {
        const struct task_info *task = g->tasks[i];
        fprintf(out, "  task %" PRIu64, task->id);
        const struct task_worker *w = task->state == TASK_RUNNING ? polled_by(snap, task->id) : NULL;
        if (w)
            fprintf(out, " on tid %d", (int)w->tid);
        if (task->detail) {
            fputs(": ", out);
            put_text(out, task->detail);
        }
        fputc('\n', out);
    }
}

int task_dump_text(FILE *out, pid_t pid, const struct task_snapshot *snap, const struct task_groups *groups,
                   bool verbose)
{
    print_summary(out, pid, snap);
    for (size_t i = 0; i < snap->n_workers; i++)
        print_worker(out, &snap->workers[i]);
    for (size_t i = 0; i < groups->n; i++) {
        fputc('\n', out);
        print_group(out, snap, &groups->v[i], verbose);
    }
    return ferror(out) ? -1 : 0;
}
