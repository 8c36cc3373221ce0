/* SPDX-License-Identifier: GPL-3.0-or-later */
/* runtime_rules.h: classifying frames by the async runtimes' boundary rules (see runtime_rules.c).
 * Internal to the flamegraph layer. */
#ifndef TASKSPY_RUNTIME_RULES_H
#define TASKSPY_RUNTIME_RULES_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

enum runtime_frame_kind {
    RUNTIME_BOUNDARY = 1,      /* polls one task */
    RUNTIME_GLUE = 2,          /* inlined between a boundary and the task's future */
    RUNTIME_WORKER_LOOP = 4,   /* a worker loop: a boundary above it is not a task */
    RUNTIME_ENTRY_AFTER = 8,   /* the task's own future starts right after (the innermost of) these */
    RUNTIME_ENTRY_RULE = 16,   /* on a boundary: its rule names an ENTRY_AFTER frame */
    RUNTIME_AFTER_FUTURE = 32, /* called by an ENTRY_AFTER frame once the future is done (dropping it) */
    RUNTIME_WAKER = 64,        /* waker machinery: cloning or registering a task's waker (cut from wait stacks) */
    RUNTIME_ID_GUARD = 128,    /* called by an ENTRY_AFTER frame before the future: setting the task's id */
};

#define RUNTIME_RULES_MAX 32

struct runtime_rules {
    regex_t regex[RUNTIME_RULES_MAX];
    uint8_t kind[RUNTIME_RULES_MAX];
    size_t n;
};

/* Compile the built-in rules plus the user's --task-boundary (or NULL). Returns 0, or -1 with err. */
int runtime_rules_compile(struct runtime_rules *r, const char *user_boundary, char *err, size_t errlen);
/* RUNTIME_* flags of a function name (0 for an ordinary frame). */
uint8_t runtime_rules_classify(const struct runtime_rules *r, const char *function);
void runtime_rules_free(struct runtime_rules *r);

#endif
