/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json_out.h: JSON values as the commands' JSON outputs write them (cli/json_out.c). */
#ifndef TASKSPY_JSON_OUT_H
#define TASKSPY_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "tasks/tasks.h"

/* text as a JSON string (NULL: null): any byte, control characters escaped, what is not UTF-8 as U+FFFD */
void json_put_string(FILE *out, const char *text);
/* a number, or null when it is the value meaning "not known" */
void json_put_signed(FILE *out, int64_t value, int64_t unknown);
void json_put_unsigned(FILE *out, uint64_t value, uint64_t unknown);
/* a frame's fields, as tasks --json and top --json write them: "function": ..., "file": ..., "line": ... */
void json_put_frame_fields(FILE *out, const struct task_frame *frame);

#endif
