/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_dump.h: what `taskspy tasks` prints from one snapshot (SPEC section 3b): the text dump (a line for
 * the runtime and the tasks read, one per worker thread, then the tasks grouped by identical backtrace,
 * largest group first, as Go's goroutine dump does) and the JSON object. */
#ifndef TASKSPY_TASK_DUMP_H
#define TASKSPY_TASK_DUMP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "tasks/tasks.h"

/* The text dump; verbose: every task's id (and its own detail) under its group. Returns 0, or -1 when
 * writing failed. */
int task_dump_text(FILE *out, pid_t pid, const struct task_snapshot *snap, const struct task_groups *groups,
                   bool verbose);

/* The tree of group g's tasks (its first task's, with the group's details) as the text dump draws it, each line
 * after indent (taskspy top's detail view). Returns 0, or -1 when writing (or memory) failed. */
int task_dump_tree(FILE *out, const struct task_group *g, const char *indent);

/* One JSON object: {"schema": 2, "pid", "runtime", "listed", "truncated", "target_exited", "workers": [{"tid",
 * "name", "index", "task", "local_queue"}], "tasks": [{"id", "state", "unwakeable", "root", "frames":
 * [{"function", "file", "line"}], "leaf", "detail", "tree": {"function", "file", "line", "macro", "macro_line",
 * "leaf", "detail", "children": [...]}, "tree_truncated", and running: "stack": [{"function", "file",
 * "line"}]}]}, tasks in the order read, frames outermost first (the tree's first pending path), the stack
 * innermost first, null for what is not known. Returns 0, or -1 when writing (or memory) failed. */
int task_dump_json(FILE *out, pid_t pid, const struct task_snapshot *snap);

#endif
