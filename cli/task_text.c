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
 *   2 tasks idle
 *       my_app::handle @ server.rs:338 (select!)
 *       ├─ my_app::read_request @ server.rs:90
 *       │  tokio::net::tcp::stream::TcpStream (fd 11)
 *       └─ tokio::sync::notify::Notified (waiting for a Notify)
 *
 * A group's lines: its count and state, its root where the tree's first frame is not the root's own async fn,
 * its tree: a chain of awaits one line each, outermost first, and where a frame waits for several futures at
 * once each branch drawn below it; a frame's leaf future on the line after it, with the detail
 * (task_group_node_detail). A running task's worker stack, innermost first. -v adds a line per task. */
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

/* "my_app::nap @ main.rs:13", as the folded stacks name an await point (cli/task_stack_names.h); an await
   inside a macro says which ("(select!)"), and where its line is the macro's own, that too. */
static void print_frame(FILE *out, const char *prefix, const struct task_frame *f)
{
    fputs(prefix, out);
    put_text(out, f->function && *f->function ? f->function : "[unknown]");
    if (f->file && *f->file && f->line) {
        fputs(" @ ", out);
        put_text(out, f->file);
        fprintf(out, ":%u", (unsigned)f->line);
    }
    if (f->macro) {
        fputs(" (", out);
        put_text(out, f->macro);
        fputs(f->macro_line ? ": the macro's own line, the program's not in the DWARF)" : ")", out);
    }
    fputc('\n', out);
}

static void print_leaf(FILE *out, const char *prefix, const char *leaf, const char *detail)
{
    fputs(prefix, out);
    put_text(out, leaf ? leaf : "");
    if (detail) {
        fputs(leaf ? " (" : "(", out);
        put_text(out, detail);
        fputc(')', out);
    }
    fputc('\n', out);
}

#define MAX_PREFIX 512

/* Node i of tree and its subtree: first is the prefix of its first line, rest of the lines after it (and of its
   chain's next node); several children are drawn as branches below it. */
static void print_node(FILE *out, const struct task_group *g, const struct task_tree *tree, size_t i,
                       const char *first, const char *rest)
{
    const struct task_node *n = &tree->nodes[i];
    char detail_text[512];
    bool printed = false;
    if (n->frame.function) {
        print_frame(out, first, &n->frame);
        printed = true;
    }
    const char *detail = task_group_node_detail(g, i, detail_text, sizeof(detail_text));
    if (n->leaf || detail) {
        print_leaf(out, printed ? rest : first, n->leaf, detail);
        printed = true;
    }
    if (n->n_children == 1) {
        print_node(out, g, tree, i + 1, printed ? rest : first, rest);
        return;
    }
    /* (a node that printed nothing, the root gathering several, draws its branches from its own prefix) */
    const char *base = printed ? rest : first;
    char child_first[MAX_PREFIX], child_rest[MAX_PREFIX];
    size_t child = i + 1;
    for (uint32_t k = 0; k < n->n_children && child < tree->n; k++) {
        bool last = k + 1 == n->n_children;
        if (strlen(base) + 8 < MAX_PREFIX) {
            snprintf(child_first, sizeof(child_first), "%s%s", base, last ? "└─ " : "├─ ");
            snprintf(child_rest, sizeof(child_rest), "%s%s", base, last ? "   " : "│  ");
        } else {      /* (deeper than a line can show: the prefix stops growing) */
            snprintf(child_first, sizeof(child_first), "%s", base);
            snprintf(child_rest, sizeof(child_rest), "%s", base);
        }
        print_node(out, g, tree, child, child_first, child_rest);
        child += tree->nodes[child].subtree;
    }
}

/* A running task's stack, innermost first: "    at FUNCTION (FILE:LINE)" */
static void print_stack(FILE *out, const struct task_info *t)
{
    for (size_t i = 0; i < t->n_stack; i++) {
        const struct task_frame *f = &t->stack[i];
        fputs(INDENT "at ", out);
        put_text(out, f->function && *f->function ? f->function : "[unknown]");
        if (f->file && *f->file) {
            fputs(" (", out);
            put_text(out, f->file);
            if (f->line)
                fprintf(out, ":%u", (unsigned)f->line);
            fputc(')', out);
        }
        fputc('\n', out);
    }
}

/* The worker thread polling task id now, or NULL. */
static const struct task_worker *polled_by(const struct task_snapshot *snap, uint64_t id)
{
    for (size_t i = 0; i < snap->n_workers; i++)
        if (snap->workers[i].current_task == id)
            return &snap->workers[i];
    return NULL;
}

static int print_group(FILE *out, const struct task_snapshot *snap, const struct task_group *g, bool verbose)
{
    const struct task_info *t = g->tasks[0];
    struct task_tree tree;
    if (task_tree_of(t, &tree) != 0)
        return -1;
    fprintf(out, "%zu task%s %s%s\n", g->n, plural(g->n), task_state_name(t->state),
            t->unwakeable ? ", nothing can wake it" : "");
    bool root_is_first_frame = t->root && tree.n > 0 && tree.nodes[0].frame.function &&
                               strcmp(t->root, tree.nodes[0].frame.function) == 0;
    if (!root_is_first_frame) {
        fputs(INDENT, out);
        put_text(out, t->root && *t->root ? t->root : "[task entry unknown]");
        fputc('\n', out);
    }
    if (tree.n > 0)
        print_node(out, g, &tree, 0, INDENT, INDENT);
    if (t->tree_truncated)
        fputs(INDENT "(the walk stopped at its bound: branches may be missing)\n", out);
    task_tree_free(&tree);
    if (g->n == 1 && !verbose)
        print_stack(out, t);
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
        print_stack(out, task);
    }
    return 0;
}

int task_dump_tree(FILE *out, const struct task_group *g, const char *indent)
{
    struct task_tree tree;
    if (g->n == 0 || task_tree_of(g->tasks[0], &tree) != 0)
        return -1;
    if (tree.n > 0)
        print_node(out, g, &tree, 0, indent, indent);
    task_tree_free(&tree);
    return ferror(out) ? -1 : 0;
}

int task_dump_text(FILE *out, pid_t pid, const struct task_snapshot *snap, const struct task_groups *groups,
                   bool verbose)
{
    print_summary(out, pid, snap);
    for (size_t i = 0; i < snap->n_workers; i++)
        print_worker(out, &snap->workers[i]);
    for (size_t i = 0; i < groups->n; i++) {
        fputc('\n', out);
        if (print_group(out, snap, &groups->v[i], verbose) != 0)
            return -1;
    }
    return ferror(out) ? -1 : 0;
}
