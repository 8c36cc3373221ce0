/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_internal.h: what the files of elf/ share among themselves only. */
#ifndef TASKSPY_ELF_INTERNAL_H
#define TASKSPY_ELF_INTERNAL_H

#include "elf/elf_file.h"

/* Does [off, off + len) lie inside total bytes (without overflow)? */
static inline bool elf_range_ok(size_t total, uint64_t off, uint64_t len)
{
    return off <= total && len <= total - off;
}

/* Set ef->build_id from the GNU build-id note (PT_NOTE segments first, then SHT_NOTE sections). */
void elf_notes_find_build_id(struct elf_file *ef);

/* ---- debug_file.c: the local places of a separate debug file ------------------------------------- */
/* The build-id place, then the debug link's: out gets what was found and where it looked (its debuginfod
 * fields left as they are). */
void debug_file_find_local(const struct elf_file *ef, const char *root, const char *path,
                           struct debug_file_result *out);
/* Is candidate the debug file of ef (opened from object_path: not the object itself, the same build)? */
bool debug_file_matches(const char *candidate, const char *object_path, const struct elf_file *ef);

/* ---- debug_files.c: the shared results ----------------------------------------------------------- */
/* debug_file_find for an object with a build id: its shared result, the local places looked up once, then
 * debuginfod asked once (when enabled and fetch). */
bool debug_files_resolve(struct debug_files *df, const struct elf_file *ef, const char *root, const char *path,
                         bool fetch, struct debug_file_result *out);
/* Whether df asks debuginfod servers. */
bool debug_files_ask_debuginfod(const struct debug_files *df);

/* ---- debuginfod_fetch.c: libdebuginfod ----------------------------------------------------------- */
struct debuginfod_client;
/* libdebuginfod's functions, loaded on the first fetch */
struct debuginfod_library {
    struct debuginfod_client *(*begin)(void);
    void (*end)(struct debuginfod_client *);
    void (*set_user_data)(struct debuginfod_client *, void *);
    void (*set_progressfn)(struct debuginfod_client *, int (*)(struct debuginfod_client *, long, long));
    int (*find_debuginfo)(struct debuginfod_client *, const unsigned char *, int, char **);
};
struct debuginfod_session {
    struct debuginfod_library lib;
    struct debuginfod_client *client;  /* begun on the first fetch */
    bool begun;                        /* debuginfod_begin was called (client NULL: it failed) */
    unsigned wait_limit_s;             /* debug_file_settings.wait_limit_s */
    debug_file_progress_fn on_progress;
    void *progress_ctx;
    const char *object;                /* the object being fetched, for on_progress */
    uint64_t began_ns;                 /* when its query began (CLOCK_MONOTONIC) */
    bool gave_up;                      /* no server answered within wait_limit_s: the query was cancelled */
};
/* A debug_file_fetch_fn over libdebuginfod; ctx is a struct debuginfod_session. */
int debuginfod_session_fetch(void *ctx, const uint8_t *build_id, size_t len, const char *object, char **path);
void debuginfod_session_end(struct debuginfod_session *s);

#endif
