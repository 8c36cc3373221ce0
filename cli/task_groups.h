/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_groups.h: the tasks of one snapshot grouped by identical async backtrace, as `taskspy tasks` prints
 * them (like Go's goroutine dump): a group's key is its state, whether nothing can wake it, its root, its
 * tree (every node's frame: function, file, line, macro; its leaf future; its place in the tree); the leaves'
 * details (a deadline, say) differ from task to task and are not part of the key. Groups come largest first,
 * ties by their smallest task id; a group's tasks by id. Also the view of a task's tree every output draws. */
#ifndef TASKSPY_TASK_GROUPS_H
#define TASKSPY_TASK_GROUPS_H

#include <stddef.h>

#include "tasks/tasks.h"

/* A task's tree as the outputs draw it: its nodes, or, for a task with frames and no nodes (made by hand), its
 * frames and leaf as a chain (own: allocated then). */
struct task_tree {
    const struct task_node *nodes;
    size_t n;
    struct task_node *own;
};
/* Returns 0, or -1 when out of memory (tree empty). */
int task_tree_of(const struct task_info *t, struct task_tree *tree);
void task_tree_free(struct task_tree *tree);
/* Node index's frame, leaf, detail of t (index < its tree's nodes; for a chain: its frames, then its leaf). */
const char *task_node_detail(const struct task_info *t, size_t index);

struct task_group {
    const struct task_info *const *tasks;   /* its tasks, by id (into task_groups.order) */
    size_t n;
};

struct task_groups {
    const struct task_info **order;         /* every task of the snapshot, by key: the groups point into it */
    struct task_group *v;
    size_t n;
};

/* Group the n tasks (which must outlive the groups). Returns 0, or -1 when out of memory (g is then empty). */
int task_groups_build(struct task_groups *g, const struct task_info *tasks, size_t n);
void task_groups_free(struct task_groups *g);

/* The detail a group's leaf line shows, written into buf: the detail when all its tasks have the same one; a
 * range when they all read "TEXT NUMBER UNIT" with the same TEXT and UNIT ("deadline in 3598.1-3599.9 s");
 * else the first task's with "; others differ". Returns buf, or NULL when no task of the group has one.
 * task_group_detail: of the first pending path's leaf; task_group_node_detail: of node index of the group's
 * tree (its tasks' trees have one shape). */
const char *task_group_detail(const struct task_group *group, char *buf, size_t len);
const char *task_group_node_detail(const struct task_group *group, size_t index, char *buf, size_t len);

#endif
