/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_groups.c: grouping a snapshot's tasks by identical async backtrace (tasks.h; sort by key, cut the runs, sort
 * the runs by size), the detail line a group shows, and the view of a task's tree the outputs draw. */
#include "tasks/tasks.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strcmp with NULL (no text) before any text. */
static int compare_text(const char *a, const char *b)
{
    if (a == b)
        return 0;
    if (!a || !b)
        return a ? 1 : -1;
    return strcmp(a, b);
}

static int compare_number(unsigned long long a, unsigned long long b)
{
    return (a > b) - (a < b);
}

static int compare_frame(const struct task_frame *a, const struct task_frame *b)
{
    int c = compare_text(a->function, b->function);
    if (c == 0)
        c = compare_text(a->file, b->file);
    if (c == 0)
        c = compare_number(a->line, b->line);
    if (c == 0)
        c = compare_text(a->macro, b->macro);
    return c ? c : compare_number(a->macro_line, b->macro_line);
}

int task_node_compare(const struct task_node *a, const struct task_node *b)
{
    int c = compare_number(a->n_children, b->n_children);
    if (c == 0)
        c = compare_number(a->subtree, b->subtree);
    if (c == 0)
        c = compare_text(a->leaf, b->leaf);
    return c ? c : compare_frame(&a->frame, &b->frame);
}

/* The group key: state, unwakeable, root, the tree (or, for a task without one, its frames and leaf), not the
   details. */
static int compare_key(const struct task_info *a, const struct task_info *b)
{
    int c = compare_number(a->state, b->state);
    if (c == 0)
        c = compare_number(a->unwakeable, b->unwakeable);
    if (c == 0)
        c = compare_text(a->root, b->root);
    if (c == 0)
        c = compare_number(a->n_nodes, b->n_nodes);
    if (c == 0 && a->n_nodes)          /* (a tree: its first path and leaf are its own) */
        for (size_t i = 0; c == 0 && i < a->n_nodes; i++) {
            const struct task_node *x = &a->nodes[i], *y = &b->nodes[i];
            /* (the same strings of one reader are one pointer: tasks of one group pass here, sorting 10,000
               tasks compares them ~150,000 times) */
            if (x->frame.function == y->frame.function && x->frame.file == y->frame.file &&
                x->frame.line == y->frame.line && x->frame.macro == y->frame.macro &&
                x->frame.macro_line == y->frame.macro_line && x->leaf == y->leaf &&
                x->n_children == y->n_children && x->subtree == y->subtree)
                continue;
            c = task_node_compare(x, y);
        }
    else if (c == 0) {
        c = compare_number(a->n_frames, b->n_frames);
        for (size_t i = 0; c == 0 && i < a->n_frames; i++)
            c = compare_frame(&a->frames[i], &b->frames[i]);
        if (c == 0)
            c = compare_text(a->leaf, b->leaf);
    }
    return c ? c : compare_number(a->tree_truncated, b->tree_truncated);
}

int task_tree_of(const struct task_info *t, struct task_tree *tree)
{
    memset(tree, 0, sizeof(*tree));
    if (t->n_nodes) {
        tree->nodes = t->nodes;
        tree->n = t->n_nodes;
        return 0;
    }
    bool leaf_node = t->leaf || t->detail;
    size_t n = t->n_frames + (leaf_node && t->n_frames == 0 ? 1 : 0);
    if (n == 0)
        return 0;
    tree->own = calloc(n, sizeof(*tree->own));
    if (!tree->own)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct task_node *node = &tree->own[i];
        if (i < t->n_frames) {
            node->frame = t->frames[i];
            if (!node->frame.function)
                node->frame.function = "";     /* a frame whose function is not known: "[unknown]" */
        }
        node->parent = i == 0 ? TASK_NO_NODE : (uint32_t)(i - 1);
        node->n_children = i + 1 < n;
        node->subtree = (uint32_t)(n - i);
    }
    tree->own[n - 1].leaf = t->leaf;
    tree->own[n - 1].detail = t->detail;
    tree->nodes = tree->own;
    tree->n = n;
    return 0;
}

void task_tree_free(struct task_tree *tree)
{
    free(tree->own);
    memset(tree, 0, sizeof(*tree));
}

const char *task_node_detail(const struct task_info *t, size_t index)
{
    if (t->n_nodes)
        return index < t->n_nodes ? t->nodes[index].detail : NULL;
    size_t last = t->n_frames ? t->n_frames - 1 : 0;
    return index == last ? t->detail : NULL;
}

static int compare_tasks(const void *x, const void *y)
{
    const struct task_info *a = *(const struct task_info *const *)x, *b = *(const struct task_info *const *)y;
    int c = compare_key(a, b);
    if (c == 0)
        c = compare_number(a->id, b->id);
    return c ? c : compare_number(a->header, b->header);
}

/* Largest first, then by the smallest task id (a group's first), then by key: the same order every run. */
static int compare_groups(const void *x, const void *y)
{
    const struct task_group *a = x, *b = y;
    int c = compare_number(b->n, a->n);
    if (c == 0)
        c = compare_number(a->tasks[0]->id, b->tasks[0]->id);
    return c ? c : compare_key(a->tasks[0], b->tasks[0]);
}

int task_groups_build(struct task_groups *g, const struct task_info *tasks, size_t n)
{
    memset(g, 0, sizeof(*g));
    if (n == 0)
        return 0;
    g->order = malloc(n * sizeof(*g->order));
    g->v = malloc(n * sizeof(*g->v));
    if (!g->order || !g->v) {
        task_groups_free(g);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        g->order[i] = &tasks[i];
    qsort(g->order, n, sizeof(*g->order), compare_tasks);
    for (size_t start = 0, i = 1; i <= n; i++)
        if (i == n || compare_key(g->order[start], g->order[i]) != 0) {
            g->v[g->n++] = (struct task_group){ .tasks = &g->order[start], .n = i - start };
            start = i;
        }
    qsort(g->v, g->n, sizeof(*g->v), compare_groups);
    return 0;
}

void task_groups_free(struct task_groups *g)
{
    free(g->order);
    free(g->v);
    memset(g, 0, sizeof(*g));
}

/* A detail of the form "TEXT NUMBER UNIT": TEXT empty or ending in a space, UNIT a space and then letters and
 * spaces only ("deadline in 3599.2 s", "2.1 ms"; not "task 42": an id is no measure to give a range of). */
struct measure {
    const char *text;
    size_t number_at, unit_at;       /* offsets of the number and of the unit in text */
    double value;
};

static bool is_unit_char(char c)
{
    return isalpha((unsigned char)c) || c == ' ' || (unsigned char)c >= 0x80;   /* "µs" too */
}

static bool parse_measure(const char *text, struct measure *m)
{
    size_t len = strlen(text), unit = len, number;
    while (unit > 0 && is_unit_char(text[unit - 1]))
        unit--;
    if (unit == len || text[unit] != ' ' || strspn(text + unit, " ") == len - unit)
        return false;
    for (number = unit; number > 0 && (isdigit((unsigned char)text[number - 1]) || text[number - 1] == '.');)
        number--;
    if (number == unit || !isdigit((unsigned char)text[number]) || !isdigit((unsigned char)text[unit - 1]))
        return false;
    if (number > 0 && text[number - 1] == '-')
        number--;
    if (number > 0 && text[number - 1] != ' ')
        return false;
    char digits[64], *end;
    if (unit - number >= sizeof(digits))
        return false;
    memcpy(digits, text + number, unit - number);
    digits[unit - number] = '\0';
    m->value = strtod(digits, &end);
    if (*end != '\0')
        return false;
    m->text = text;
    m->number_at = number;
    m->unit_at = unit;
    return true;
}

/* The same TEXT and UNIT around the number. */
static bool same_frame(const struct measure *a, const struct measure *b)
{
    return a->number_at == b->number_at && strncmp(a->text, b->text, a->number_at) == 0 &&
           strcmp(a->text + a->unit_at, b->text + b->unit_at) == 0;
}

/* The detail of the group's task k: of its node index, or of its first path's leaf (index SIZE_MAX) */
static inline const char *detail_at(const struct task_group *group, size_t k, size_t index)
{
    const struct task_info *t = group->tasks[k];
    return index == SIZE_MAX ? t->detail : task_node_detail(t, index);
}

/* "TEXT LOW-HIGH UNIT" into buf when every task's detail is a measure around the same TEXT and UNIT. */
static bool detail_range(const struct task_group *group, size_t index, char *buf, size_t len)
{
    struct measure low = { 0 }, high = { 0 }, m;
    for (size_t i = 0; i < group->n; i++) {
        const char *detail = detail_at(group, i, index);
        if (!detail || !parse_measure(detail, &m) || (i > 0 && !same_frame(&low, &m)))
            return false;
        if (i == 0 || m.value < low.value)
            low = m;
        if (i == 0 || m.value > high.value)
            high = m;
    }
    snprintf(buf, len, "%.*s%.*s%s%.*s%s", (int)low.number_at, low.text, (int)(low.unit_at - low.number_at),
             low.text + low.number_at, low.value < 0 ? " to " : "-", (int)(high.unit_at - high.number_at),
             high.text + high.number_at, low.text + low.unit_at);
    return true;
}

static const char *group_detail(const struct task_group *group, size_t index, char *buf, size_t len)
{
    const char *first = NULL, *of_first = detail_at(group, 0, index);
    bool all_same = true;
    for (size_t i = 0; i < group->n; i++) {
        const char *detail = detail_at(group, i, index);
        if (!first)
            first = detail;
        if (detail != of_first && compare_text(detail, of_first) != 0)
            all_same = false;
    }
    if (!first)
        return NULL;
    if (all_same)
        snprintf(buf, len, "%s", first);
    else if (!detail_range(group, index, buf, len))
        snprintf(buf, len, "%s; others differ", first);
    return buf;
}

const char *task_group_detail(const struct task_group *group, char *buf, size_t len)
{
    return group_detail(group, SIZE_MAX, buf, len);
}

const char *task_group_node_detail(const struct task_group *group, size_t index, char *buf, size_t len)
{
    return group_detail(group, index, buf, len);
}
