/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tasks_stub.c: TEMPORARY, branch taskscli only: a stand-in for tasks/ (being written on main) so that
 * `taskspy tasks` and its unit tests build and link. The reader always fails with a line saying so; nothing
 * is made up. Delete this file when merging with the real tasks/. */
#include "tasks/tasks.h"

#include <stdio.h>

const char *task_state_name(enum task_state s)
{
    switch (s) {
    case TASK_IDLE:
        return "idle";
    case TASK_SCHEDULED:
        return "scheduled";
    case TASK_RUNNING:
        return "running";
    case TASK_COMPLETE:
        return "complete";
    case TASK_CHANGING:
        return "changing";
    }
    return "unknown";
}

int task_reader_open(struct task_reader **out, pid_t pid, const struct task_reader_options *options, char *err,
                     size_t errlen)
{
    (void)options;
    *out = NULL;
    snprintf(err, errlen, "cannot read the tasks of process %d: this build has no task reader (tasks_stub.c)",
             (int)pid);
    return -1;
}

int task_reader_snapshot(struct task_reader *r, struct task_snapshot *snap, char *err, size_t errlen)
{
    (void)r;
    (void)snap;
    snprintf(err, errlen, "this build has no task reader (tasks_stub.c)");
    return -1;
}

void task_reader_close(struct task_reader *r)
{
    (void)r;
}
