/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_groups.h: the tasks of one snapshot grouped by identical async backtrace, as `taskspy tasks` prints
 * them (like Go's goroutine dump): a group's key is its state, whether nothing can wake it, its root, its
 * frames (function, file, line) and its leaf future; the leaf's detail (a deadline, say) differs from task
 * to task and is not part of the key. Groups come largest first, ties by their smallest task id; a group's
 * tasks by id. */
#ifndef TASKSPY_TASK_GROUPS_H
#define TASKSPY_TASK_GROUPS_H

#include <stddef.h>

#include "tasks/tasks.h"

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
 * else the first task's with "; others differ". Returns buf, or NULL when no task of the group has one. */
const char *task_group_detail(const struct task_group *group, char *buf, size_t len);

#endif
