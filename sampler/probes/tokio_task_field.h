/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tokio_task_field.h: where tokio keeps the id of the task a thread polls, inside its CONTEXT thread-local
 * (tokio::runtime::context::Context::current_task_id: Cell<Option<task::Id>>, tokio 1.24 and later), read
 * from the executable's DWARF (libdw): the field's offset within the thread-local's storage, and the
 * Option's discriminant when it has one (a niche-encoded Option has none: its 0 is None). */
#ifndef TASKSPY_TOKIO_TASK_FIELD_H
#define TASKSPY_TOKIO_TASK_FIELD_H

#include <stdbool.h>
#include <stdint.h>

struct tokio_task_field {
    bool has_tag;              /* the Option has a discriminant of its own */
    uint32_t tag_offset;       /* from the start of the thread-local's storage */
    uint32_t tag_size;         /* 1, 2, 4 or 8 bytes */
    uint64_t some_value;       /* the discriminant's value for Some */
    uint32_t id_offset;        /* the id (8 bytes) */
};

/* Find the field for the thread-local storage symbol (the CONTEXT symbol tls_marker_find_tokio_context
 * found) in the DWARF of the file at path. Returns 1 found, 0 when the DWARF does not describe it (none,
 * or another layout), -1 when the file cannot be read. */
int tokio_task_field_find(const char *path, const char *symbol, struct tokio_task_field *out);

#endif
