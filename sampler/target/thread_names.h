/* SPDX-License-Identifier: GPL-3.0-or-later */
/* thread_names.h: the name (comm) of every thread of the target seen so far, by tid, in the order they were
 * first seen. */
#ifndef TASKSPY_THREAD_NAMES_H
#define TASKSPY_THREAD_NAMES_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/u64_map.h"
#include "base/vec.h"

#define THREAD_NAME_LEN 16                  /* the kernel's TASK_COMM_LEN */

struct thread_name {
    pid_t tid;
    char name[THREAD_NAME_LEN];
};

struct thread_names {
    struct u64_map index;                   /* tid -> v[] */
    struct thread_name *v;
    size_t n, cap;
};

int thread_names_init(struct thread_names *t);
void thread_names_free(struct thread_names *t);
/* Name (or rename) tid; *added tells whether tid is new. Returns its entry, v[its index] (the name truncated to
 * THREAD_NAME_LEN - 1 bytes), or NULL when out of memory. */
const struct thread_name *thread_names_set(struct thread_names *t, pid_t tid, const char *name, bool *added);
/* tid's index in v (threads are numbered 0, 1, ... as first seen), or -1 when unseen. */
long thread_names_find(const struct thread_names *t, pid_t tid);
/* tid's name, or NULL when unseen. */
const char *thread_names_get(const struct thread_names *t, pid_t tid);

#endif
