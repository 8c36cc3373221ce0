/* SPDX-License-Identifier: GPL-3.0-or-later */
/* macro_source.c: which macro a source file defines, for await points written inside one. rustc describes an
 * await inside a macro at the macro's own source (tokio's macros/select.rs, futures-util's select_mod.rs), and
 * the code of the closure such a macro builds (tokio's select! and join! poll their branches in one) there too:
 * the user cannot act on a line in them. Those who show await points (the CPU profile's `NAME @ FILE:LINE`, the
 * task dump) name the macro instead, at the program's own line where it can be told. */
#include "symbolize/symbolize.h"

#include <string.h>

struct macro_source {
    const char *crate;         /* in a directory whose name starts so ("tokio" matches tokio-1.54.1 and tokio) */
    const char *file;          /* the file below the crate's directory */
    const char *name;
};

static const struct macro_source macro_sources[] = {
    { "tokio", "/src/macros/select.rs", "select!" },
    { "tokio", "/src/macros/join.rs", "join!" },
    { "tokio", "/src/macros/try_join.rs", "try_join!" },
    { "futures-util", "/src/async_await/select_mod.rs", "select!" },
    { "futures-util", "/src/async_await/join_mod.rs", "join!" },
    { "futures-util", "/src/async_await/stream_select_mod.rs", "stream_select!" },
};

const char *symbolize_macro_of(const char *path)
{
    if (!path)
        return NULL;
    size_t len = strlen(path);
    for (size_t i = 0; i < sizeof(macro_sources) / sizeof(macro_sources[0]); i++) {
        const struct macro_source *m = &macro_sources[i];
        size_t fl = strlen(m->file);
        if (len <= fl || strcmp(path + len - fl, m->file) != 0)
            continue;
        /* the crate's directory: the path component before the file's own */
        size_t dir_end = len - fl, dir = dir_end;
        while (dir > 0 && path[dir - 1] != '/')
            dir--;
        if (strncmp(path + dir, m->crate, strlen(m->crate)) == 0)
            return m->name;
    }
    return NULL;
}
