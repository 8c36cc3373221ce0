/* SPDX-License-Identifier: GPL-3.0-or-later */
/* await_names.c: how an await point is named in every profile (SPEC section 3): "NAME @ FILE:LINE", the source
 * position the frame is suspended at or polling, and " (MACRO)" after it when that await is written inside a
 * macro (tokio's select!, join!): FILE:LINE is then where the macro was invoked, the program's line; " (MACRO,
 * its own line)" when FILE:LINE had to stay the macro's own source (the program's line could not be told). The
 * CPU profile's await-point frames (task_stacks.c), `taskspy tasks -o` and the snapshot wait profile
 * (cli/task_stack_names.c) write such names; the SVG's palette and the exports read them back. */
#include "flamegraph/flamegraph.h"

#include <stdio.h>
#include <string.h>

#define OWN_LINE ", its own line"

int await_point_name(char *buf, size_t len, const char *function, const char *file, unsigned line,
                     const char *macro, bool macro_line)
{
    char suffix[128] = "";
    if (macro)
        snprintf(suffix, sizeof(suffix), " (%s%s)", macro, macro_line ? OWN_LINE : "");
    return file && *file && line ? snprintf(buf, len, "%s @ %s:%u%s", function, file, line, suffix)
                                 : snprintf(buf, len, "%s%s", function, suffix);
}

size_t await_point_macro_at(const char *name, size_t len)
{
    if (len < 4 || name[len - 1] != ')')
        return len;
    size_t open = len - 1;
    while (open > 0 && !(name[open] == '(' && name[open - 1] == ' '))
        open--;
    if (open == 0)
        return len;
    /* "(select!)", "(select!, its own line)", "(macro)", "(macro, its own line)" */
    const char *inner = name + open + 1;
    size_t inner_len = len - 1 - (open + 1), own = strlen(OWN_LINE);
    if (inner_len > own && memcmp(inner + inner_len - own, OWN_LINE, own) == 0)
        inner_len -= own;
    bool is_macro = (inner_len > 1 && inner[inner_len - 1] == '!') ||
                    (inner_len == 5 && memcmp(inner, "macro", 5) == 0);
    for (size_t i = 0; is_macro && i < inner_len; i++)
        if (inner[i] == ' ' || inner[i] == '(' || inner[i] == ')')
            is_macro = false;
    return is_macro ? open - 1 : len;
}
