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

int task_stack_ids(struct profile *p, const struct task_info *t, const char *state_frame,
                   struct task_stack_ids *ids)
{
    ids->n = 0;
    int rc = t->root && *t->root ? push_name(p, ids, "task: %s", t->root)
                                 : push_name(p, ids, "[task entry unknown]");
    for (size_t i = 0; rc == 0 && i < t->n_frames; i++) {
        const struct task_frame *f = &t->frames[i];
        const char *function = f->function && *f->function ? f->function : "[unknown]";
        rc = f->file && *f->file && f->line ? push_name(p, ids, "%s @ %s:%u", function, f->file, (unsigned)f->line)
                                            : push_name(p, ids, "%s", function);
    }
    if (rc == 0 && t->leaf && *t->leaf)
        rc = push_name(p, ids, "%s", t->leaf);
    if (rc == 0 && state_frame)
        rc = push_name(p, ids, "%s", state_frame);
    return rc;
}

int task_stack_add_snapshot(struct profile *p, const struct task_snapshot *snap)
{
    struct task_stack_ids ids = { 0 };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < snap->n_tasks; i++) {
        char state[32];
        snprintf(state, sizeof(state), "[%s]", task_state_name(snap->tasks[i].state));
        rc = task_stack_ids(p, &snap->tasks[i], state, &ids) == 0 ? profile_add_ids(p, ids.v, ids.n, 1) : -1;
    }
    vec_free(&ids);
    return rc;
}
