/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_examples.h: snapshots made by hand for the unit tests of what is made of one (tasks/'s grouping, the cli's
 * dump): sleepers that differ only in their leaf's detail, receivers at two await lines, running tasks, a task
 * nothing can wake, and the workers of a runtime with two workers and a block_on thread. */
#ifndef TASKSPY_TEST_TASK_EXAMPLES_H
#define TASKSPY_TEST_TASK_EXAMPLES_H

#include "tasks/tasks.h"

/* The sleepers of the example: park_sleep -> nap -> Sleep. */
static struct task_frame sleeper_frames[] = {
    { .function = "my_app::park_sleep", .file = "main.rs", .line = 17 },
    { .function = "my_app::nap", .file = "main.rs", .line = 13 },
};
/* A receiver whose await line differs from a second one: a different backtrace. */
static struct task_frame receiver_frames[] = { { .function = "my_app::consume", .file = "main.rs", .line = 40 } };
static struct task_frame receiver_frames_41[] = { { .function = "my_app::consume", .file = "main.rs", .line = 41 } };

#define SLEEPER(task_id, text)                                                                                \
    { .id = (task_id), .header = 0x1000 + (task_id), .state = TASK_IDLE, .root = "my_app::park_sleep",      \
      .frames = sleeper_frames, .n_frames = 2, .leaf = "tokio::time::sleep::Sleep", .detail = (text) }

static struct task_info mixed_tasks[] = {
    { .id = 9, .header = 0x2009, .state = TASK_IDLE, .root = "my_app::consume", .frames = receiver_frames,
      .n_frames = 1, .leaf = "tokio::sync::mpsc::Receiver", .detail = NULL },
    SLEEPER(5, "deadline in 3599.9 s"),
    { .id = 2, .header = 0x2002, .state = TASK_RUNNING, .root = "my_app::spin" },
    SLEEPER(3, "deadline in 3598.1 s"),
    { .id = 8, .header = 0x2008, .state = TASK_IDLE, .root = "my_app::consume", .frames = receiver_frames_41,
      .n_frames = 1, .leaf = "tokio::sync::mpsc::Receiver", .detail = NULL },
    SLEEPER(4, "deadline in 3599.2 s"),
    { .id = 7, .header = 0x2007, .state = TASK_IDLE, .unwakeable = true, .root = "my_app::stuck",
      .leaf = "my_app::Never" },
    { .id = 1, .header = 0x2001, .state = TASK_RUNNING, .root = "my_app::spin" },
};
#define N_MIXED (sizeof(mixed_tasks) / sizeof(mixed_tasks[0]))

static struct task_worker mixed_workers[] = {
    { .tid = 1235, .name = "tokio-runtime-w", .index = 0, .current_task = 2, .local_queue = 3 },
    { .tid = 1236, .name = "tokio-runtime-w", .index = 1, .current_task = 1, .local_queue = 0 },
    { .tid = 1234, .name = "my_app", .index = -1, .current_task = 0, .local_queue = -1 },
};

static inline struct task_snapshot mixed_snapshot(void)
{
    return (struct task_snapshot){ .runtime = "tokio 1.24.2", .workers = mixed_workers, .n_workers = 3,
                                   .tasks = mixed_tasks, .n_tasks = N_MIXED, .listed = N_MIXED };
}

#endif
