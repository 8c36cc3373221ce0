/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_frames.c: reads back the frame names the flamegraph layer and other profilers write: the source
 * position a name carries, the inlined annotation, and the task or thread a root frame stands for. */
#include "flamegraph/export_internal.h"
#include "flamegraph/flamegraph.h"

#include <string.h>

/* Is s[0..len) "FILE:LINE" with a non-empty FILE and LINE a positive decimal? Sets file_len and line. */
static bool file_and_line(const char *s, size_t len, size_t *file_len, unsigned *line)
{
    size_t colon = len;
    while (colon > 0 && s[colon - 1] != ':')
        colon--;
    if (colon < 2 || colon == len || len - colon > 9)
        return false;
    unsigned v = 0;
    for (size_t i = colon; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v == 0)
        return false;
    *file_len = colon - 1;
    *line = v;
    return true;
}

/* The last occurrence of the 2-byte sep in s[0..len) (not at 0), or 0. */
static size_t last_separator(const char *s, size_t len, const char *sep)
{
    for (size_t i = len >= 2 ? len - 2 : 0; i > 0; i--)
        if (s[i] == sep[0] && s[i + 1] == sep[1])
            return i;
    return 0;
}

void export_parse_frame(const char *name, struct frame_parts *out)
{
    size_t len = strlen(name);
    memset(out, 0, sizeof(*out));
    out->function = name;
    if (len > 4 && memcmp(name + len - 4, "_[i]", 4) == 0) {
        out->inlined = true;
        len -= 4;
    }
    out->function_len = len;
    /* " @ FILE:LINE", and " (select!)" after it when the await is inside a macro (its function keeps no such
       suffix: the name of the function, and its position, are the await's) */
    size_t before_macro = await_point_macro_at(name, len);
    size_t at = last_separator(name, before_macro, " @");
    if (at && at + 3 < before_macro && name[at + 2] == ' ' &&
        file_and_line(name + at + 3, before_macro - at - 3, &out->file_len, &out->line)) {
        out->file = name + at + 3;
        out->function_len = at;
        return;
    }
    /* " [FILE:LINE]" and " (FILE:LINE)" */
    if (len < 4 || (name[len - 1] != ']' && name[len - 1] != ')'))
        return;
    size_t open = last_separator(name, len, name[len - 1] == ']' ? " [" : " (");
    if (open && file_and_line(name + open + 2, len - open - 3, &out->file_len, &out->line)) {
        out->file = name + open + 2;
        out->function_len = open;
    }
}

static bool is_task_id(const char *s, size_t len)
{
    size_t i = 0;
    bool hex = len > 2 && s[0] == '0' && s[1] == 'x';
    if (hex)
        i = 2;
    if (i == len)
        return false;
    for (; i < len; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

void export_parse_root(const char *name, struct root_parts *out)
{
    size_t len = strlen(name);
    memset(out, 0, sizeof(*out));
    if (strcmp(name, "[unknown task]") == 0 || strcmp(name, "[task entry unknown]") == 0) {
        out->task = name;
        out->task_len = len;
        return;
    }
    if (strncmp(name, "task: ", 6) == 0) {
        out->task = name + 6;
        out->task_len = len - 6;
        return;
    }
    const char *colon = strstr(name, ": ");
    if (strncmp(name, "task ", 5) == 0 && colon && is_task_id(name + 5, (size_t)(colon - name - 5))) {
        out->task_id = name + 5;
        out->task_id_len = (size_t)(colon - name - 5);
        out->task = colon + 2;
        out->task_len = len - (size_t)(colon + 2 - name);
        return;
    }
    out->thread = name;
    out->thread_len = len;
}
