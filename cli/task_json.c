/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_json.c: `taskspy tasks --json`: the snapshot as one JSON object (SPEC section 3b, schema 2), a line per
 * worker and per task: each task's first pending path (`frames`), its tree (`tree`, nested) and, running, its
 * worker's stack (`stack`, innermost first). Strings come from the target (thread names may hold any byte, a comm cut in the middle of a
 * UTF-8 sequence): each is written as a valid JSON string (RFC 8259), control characters escaped, bytes that
 * are not UTF-8 as U+FFFD. */
#include "cli/json_out.h"
#include "cli/task_dump.h"

#include <inttypes.h>
#include <string.h>

static void put_worker(FILE *out, const struct task_worker *w)
{
    char name[sizeof(w->name) + 1];
    memcpy(name, w->name, sizeof(w->name));
    name[sizeof(w->name)] = '\0';
    fprintf(out, "{\"tid\": %d, \"name\": ", (int)w->tid);
    json_put_string(out, name);
    fputs(", \"index\": ", out);
    json_put_signed(out, w->index, -1);
    fputs(", \"task\": ", out);
    json_put_unsigned(out, w->current_task, 0);
    fputs(", \"local_queue\": ", out);
    json_put_signed(out, w->local_queue, -1);
    fputc('}', out);
}

/* [{"function", "file", "line"}, ...] */
static void put_frames(FILE *out, const struct task_frame *frames, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {" : "{", out);
        json_put_frame_fields(out, &frames[i]);
        fputc('}', out);
    }
    fputc(']', out);
}

/* node i of tree and its children, nested */
static void put_node(FILE *out, const struct task_tree *tree, size_t i, int depth)
{
    const struct task_node *n = &tree->nodes[i];
    fputc('{', out);
    json_put_frame_fields(out, &n->frame);
    fputs(", \"macro\": ", out);
    json_put_string(out, n->frame.macro);
    fprintf(out, ", \"macro_line\": %s, \"leaf\": ", n->frame.macro_line ? "true" : "false");
    json_put_string(out, n->leaf);
    fputs(", \"detail\": ", out);
    json_put_string(out, n->detail);
    fputs(", \"children\": [", out);
    size_t child = i + 1;
    for (uint32_t k = 0; k < n->n_children && child < tree->n; k++) {
        if (k)
            fputs(", ", out);
        put_node(out, tree, child, depth + 1);
        child += tree->nodes[child].subtree;
    }
    fputs("]}", out);
}

static int put_task(FILE *out, const struct task_info *t)
{
    fprintf(out, "{\"id\": %" PRIu64 ", \"state\": ", t->id);
    json_put_string(out, task_state_name(t->state));
    fprintf(out, ", \"unwakeable\": %s, \"root\": ", t->unwakeable ? "true" : "false");
    json_put_string(out, t->root);
    fputs(", \"frames\": ", out);
    put_frames(out, t->frames, t->n_frames);
    fputs(", \"leaf\": ", out);
    json_put_string(out, t->leaf);
    fputs(", \"detail\": ", out);
    json_put_string(out, t->detail);
    struct task_tree tree;
    if (task_tree_of(t, &tree) != 0)
        return -1;
    fputs(", \"tree\": ", out);
    if (tree.n)
        put_node(out, &tree, 0, 0);
    else
        fputs("null", out);
    task_tree_free(&tree);
    fprintf(out, ", \"tree_truncated\": %s", t->tree_truncated ? "true" : "false");
    if (t->state == TASK_RUNNING) {    /* its worker's native stack, innermost first (empty: not read) */
        fputs(", \"stack\": ", out);
        put_frames(out, t->stack, t->n_stack);
    }
    fputc('}', out);
    return 0;
}

int task_dump_json(FILE *out, pid_t pid, const struct task_snapshot *snap)
{
    fprintf(out, "{\"schema\": 2, \"pid\": %d, \"runtime\": ", (int)pid);
    json_put_string(out, snap->runtime);
    fprintf(out, ", \"listed\": %zu, \"truncated\": %s, \"target_exited\": %s,\n \"workers\": [", snap->listed,
            snap->list_truncated ? "true" : "false", snap->target_gone ? "true" : "false");
    for (size_t i = 0; i < snap->n_workers; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        put_worker(out, &snap->workers[i]);
    }
    fputs(snap->n_workers ? "\n ],\n \"tasks\": [" : "],\n \"tasks\": [", out);
    for (size_t i = 0; i < snap->n_tasks; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        if (put_task(out, &snap->tasks[i]) != 0)
            return -1;
    }
    fputs(snap->n_tasks ? "\n ]}\n" : "]}\n", out);
    return ferror(out) ? -1 : 0;
}
