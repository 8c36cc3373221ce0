/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_stack_names.c: the frame names of a task's stack (see task_stack_names.h), made safe for folded
 * lines: no ';' (it separates frames) and no line break inside a name. */
#include "cli/task_stack_names.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/vec.h"

#define NAME_MAX_LEN 4096

static void sanitize(char *name)
{
    for (char *c = name; *c; c++)
        if (*c == ';')
            *c = ':';
        else if (*c == '\n' || *c == '\r')
            *c = ' ';
}

/* Intern the formatted name and push its id; 0 or -1. */
__attribute__((format(printf, 3, 4))) static int push_name(struct profile *p, struct task_stack_ids *ids,
                                                           const char *format, ...)
{
    char name[NAME_MAX_LEN];
    va_list args;
    va_start(args, format);
    vsnprintf(name, sizeof(name), format, args);
    va_end(args);
    sanitize(name);
    uint32_t id = profile_intern(p, name, strlen(name));
    uint32_t *slot = id == PROFILE_NO_FRAME ? NULL : vec_push(ids);
    if (!slot)
        return -1;
    *slot = id;
    return 0;
}

/* The frame names of node n of a task's tree: its frame (an await point's name, flamegraph.h), its leaf. */
static int push_node(struct profile *p, struct task_stack_ids *ids, const struct task_node *n)
{
    int rc = 0;
    const struct task_frame *f = &n->frame;
    if (f->function) {
        char name[NAME_MAX_LEN];
        await_point_name(name, sizeof(name), *f->function ? f->function : "[unknown]", f->file, f->line, f->macro,
                         f->macro_line);
        rc = push_name(p, ids, "%s", name);
    }
    if (rc == 0 && n->leaf && *n->leaf)
        rc = push_name(p, ids, "%s", n->leaf);
    return rc;
}

/* The stack of the path from tree's root to its node leaf, into *ids. */
static int path_ids(struct profile *p, const struct task_info *t, const struct task_tree *tree, size_t leaf,
                    const char *state_frame, struct task_stack_ids *ids)
{
    ids->n = 0;
    int rc = t->root && *t->root ? push_name(p, ids, "task: %s", t->root) : push_name(p, ids, "[task entry unknown]");
    uint32_t path[256];
    size_t depth = 0;
    for (uint32_t at = (uint32_t)leaf; at != TASK_NO_NODE && depth < sizeof(path) / sizeof(path[0]);
         at = tree->nodes[at].parent)
        path[depth++] = at;
    while (rc == 0 && depth > 0)
        rc = push_node(p, ids, &tree->nodes[path[--depth]]);
    if (rc == 0 && state_frame)
        rc = push_name(p, ids, "%s", state_frame);
    return rc;
}

/* the first leaf of tree: its first pending path's end */
static size_t first_leaf(const struct task_tree *tree)
{
    size_t i = 0;
    while (i + 1 < tree->n && tree->nodes[i].n_children > 0)
        i++;
    return i;
}

int task_stack_ids(struct profile *p, const struct task_info *t, const char *state_frame,
                   struct task_stack_ids *ids)
{
    struct task_tree tree;
    if (task_tree_of(t, &tree) != 0)
        return -1;
    int rc;
    if (tree.n == 0) {
        ids->n = 0;
        rc = t->root && *t->root ? push_name(p, ids, "task: %s", t->root) : push_name(p, ids, "[task entry unknown]");
        if (rc == 0 && state_frame)
            rc = push_name(p, ids, "%s", state_frame);
    } else {
        rc = path_ids(p, t, &tree, first_leaf(&tree), state_frame, ids);
    }
    task_tree_free(&tree);
    return rc;
}

size_t task_stack_paths(const struct task_info *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_nodes; i++)
        n += t->nodes[i].n_children == 0;
    return n ? n : 1;
}

int task_stack_add(struct profile *p, const struct task_info *t, const char *state_frame, uint64_t count,
                   struct task_stack_ids *ids)
{
    size_t paths = task_stack_paths(t);
    if (paths > 1) {
        struct task_tree tree = { .nodes = t->nodes, .n = t->n_nodes };
        uint64_t base = count / paths, extra = count % paths;
        size_t k = 0, first = first_leaf(&tree);
        for (size_t i = 0; i < tree.n; i++) {
            if (tree.nodes[i].n_children > 0)
                continue;
            uint64_t share = base + (k++ < extra ? 1 : 0);
            if (i == first || share == 0)
                continue;
            if (path_ids(p, t, &tree, i, state_frame, ids) != 0 || profile_add_ids(p, ids->v, ids->n, share) != 0)
                return -1;
        }
        count = base + (extra ? 1 : 0);          /* the first path's share */
    }
    if (task_stack_ids(p, t, state_frame, ids) != 0)
        return -1;
    return profile_add_ids(p, ids->v, ids->n, count);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

#define MAX_PER_TASK 27720       /* lcm(1..12) */

int task_stack_add_snapshot(struct profile *p, const struct task_snapshot *snap, uint64_t *per_task)
{
    struct task_stack_ids ids = { 0 };
    uint64_t scale = 1;
    for (size_t i = 0; i < snap->n_tasks; i++) {
        uint64_t n = task_stack_paths(&snap->tasks[i]);
        uint64_t lcm = scale / gcd(scale, n) * n;
        scale = lcm <= MAX_PER_TASK ? lcm : MAX_PER_TASK;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < snap->n_tasks; i++) {
        char state[32];
        snprintf(state, sizeof(state), "[%s]", task_state_name(snap->tasks[i].state));
        rc = task_stack_add(p, &snap->tasks[i], state, scale, &ids);
    }
    vec_free(&ids);
    if (per_task)
        *per_task = scale;
    return rc;
}
