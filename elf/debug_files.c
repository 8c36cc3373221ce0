/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debug_files.c: the debug-file lookup's results, one per build id, shared by every reader of one target's
 * debug information (the symbolizer's names and lines, the sampler's runtime symbols and tokio's DWARF types):
 * the local places are looked up once per build id, and debuginfod asked at most once, by the first caller
 * that may wait for it. A caller that may not wait (the sampler's reading thread) never blocks on a download:
 * it gets what is known now. A server that gave no answer is not asked again for that object: it costs its
 * timeout once. */
#include "elf/elf_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

struct debug_files_entry {
    uint8_t build_id[64];
    size_t build_id_len;
    char object[256];                  /* the first path it was looked up for, as the target names it */
    char root[256];                    /* and the root it was looked up through: the local places' paths begin
                                          with it (another caller may see the same files through another) */
    bool fetching;                     /* a caller waits for debuginfod's answer now */
    struct debug_file_result result;
};

struct debug_files {
    struct debug_file_settings settings;
    struct debuginfod_session session; /* the default fetch (settings.fetch NULL) */
    pthread_mutex_t lock;              /* the entries and their results */
    pthread_cond_t answered;           /* a fetch ended */
    pthread_mutex_t fetch_lock;        /* one download at a time (one libdebuginfod client) */
    VEC_OF(struct debug_files_entry *) entries;
};

struct debug_files *debug_files_new(const struct debug_file_settings *settings)
{
    struct debug_files *df = calloc(1, sizeof(*df));
    if (!df)
        return NULL;
    if (settings)
        df->settings = *settings;
    df->session.wait_limit_s = df->settings.wait_limit_s;
    df->session.on_progress = df->settings.on_progress;
    df->session.progress_ctx = df->settings.progress_ctx;
    if (!df->settings.fetch) {
        df->settings.fetch = debuginfod_session_fetch;
        df->settings.fetch_ctx = &df->session;
    }
    bool lock = pthread_mutex_init(&df->lock, NULL) == 0;
    bool fetch_lock = lock && pthread_mutex_init(&df->fetch_lock, NULL) == 0;
    if (fetch_lock && pthread_cond_init(&df->answered, NULL) == 0)
        return df;
    if (fetch_lock)
        pthread_mutex_destroy(&df->fetch_lock);
    if (lock)
        pthread_mutex_destroy(&df->lock);
    free(df);
    return NULL;
}

void debug_files_free(struct debug_files *df)
{
    if (!df)
        return;
    for (size_t i = 0; i < df->entries.n; i++)
        free(df->entries.v[i]);
    vec_free(&df->entries);
    debuginfod_session_end(&df->session);
    pthread_cond_destroy(&df->answered);
    pthread_mutex_destroy(&df->fetch_lock);
    pthread_mutex_destroy(&df->lock);
    free(df);
}

bool debug_files_ask_debuginfod(const struct debug_files *df)
{
    return df->settings.debuginfod;
}

/* The entry of ef's build id, made (its local places looked up) on first sight. Called with df->lock held. NULL
 * when out of memory or the build id is too long to keep. */
static struct debug_files_entry *entry_of(struct debug_files *df, const struct elf_file *ef, const char *root,
                                          const char *path)
{
    for (size_t i = 0; i < df->entries.n; i++) {
        struct debug_files_entry *e = df->entries.v[i];
        if (e->build_id_len == ef->build_id_len && memcmp(e->build_id, ef->build_id, ef->build_id_len) == 0)
            return e;
    }
    if (ef->build_id_len > sizeof(((struct debug_files_entry *)0)->build_id))
        return NULL;
    struct debug_files_entry *e = calloc(1, sizeof(*e));
    struct debug_files_entry **slot = e ? vec_push(&df->entries) : NULL;
    if (!slot) {
        free(e);
        return NULL;
    }
    *slot = e;
    memcpy(e->build_id, ef->build_id, ef->build_id_len);
    e->build_id_len = ef->build_id_len;
    snprintf(e->object, sizeof(e->object), "%s", path);
    snprintf(e->root, sizeof(e->root), "%s", root);
    debug_file_find_local(ef, root, path, &e->result);
    e->result.debuginfod = df->settings.debuginfod ? DEBUGINFOD_NOT_ASKED : DEBUGINFOD_OFF;
    return e;
}

/* Asks the servers for e's debug file (df->lock not held: other callers go on meanwhile) and checks that what
 * came is the debug file of ef. Fills *result's debuginfod fields, and its path when one was taken. */
static void fetch(struct debug_files *df, const struct debug_files_entry *e, const struct elf_file *ef,
                  const char *object_path, struct debug_file_result *result)
{
    char *fetched = NULL;
    if (pthread_mutex_lock(&df->fetch_lock) != 0) {
        result->debuginfod = DEBUGINFOD_NO_ANSWER;
        result->debuginfod_error = EDEADLK;
        return;
    }
    int rc = df->settings.fetch(df->settings.fetch_ctx, e->build_id, e->build_id_len, e->object, &fetched);
    pthread_mutex_unlock(&df->fetch_lock);
    if (rc == 0 && fetched && debug_file_matches(fetched, object_path, ef)) {
        snprintf(result->path, sizeof(result->path), "%s", fetched);
        result->source = DEBUG_FILE_DEBUGINFOD;
        result->debuginfod = DEBUGINFOD_FOUND;
    } else if (rc == 0) {
        result->refused = true;                /* what came was another build's */
        result->debuginfod = DEBUGINFOD_NOT_FOUND;
    } else if (rc == -ENOENT) {
        result->debuginfod = DEBUGINFOD_NOT_FOUND;
    } else {
        result->debuginfod = DEBUGINFOD_NO_ANSWER;
        result->debuginfod_error = -rc;
    }
    free(fetched);
}

/* A local place's path (path, under the root from) as seen through the root to. */
static void rebase(char *path, size_t size, const char *from, const char *to)
{
    size_t n = strlen(from);
    if (!path[0] || strcmp(from, to) == 0 || strncmp(path, from, n) != 0)
        return;
    char rest[DEBUG_FILE_PATH_MAX];
    snprintf(rest, sizeof(rest), "%s", path + n);
    snprintf(path, size, "%s%s", to, rest);
}

bool debug_files_resolve(struct debug_files *df, const struct elf_file *ef, const char *root, const char *path,
                         bool may_fetch, struct debug_file_result *out)
{
    if (!root)
        root = "";
    bool locked = pthread_mutex_lock(&df->lock) == 0;
    struct debug_files_entry *e = locked ? entry_of(df, ef, root, path) : NULL;
    if (!e) {                                  /* not kept: the local places alone */
        if (locked)
            pthread_mutex_unlock(&df->lock);
        debug_file_find_local(ef, root, path, out);
        out->debuginfod = DEBUGINFOD_NOT_ASKED;
        return out->path[0] != '\0';
    }
    bool ask = may_fetch && !e->result.path[0] && df->settings.debuginfod;
    while (ask && e->fetching)                 /* another caller's download: its answer is this one's */
        pthread_cond_wait(&df->answered, &df->lock);
    if (ask && e->result.debuginfod == DEBUGINFOD_NOT_ASKED) {
        e->fetching = true;
        struct debug_file_result *answer = malloc(sizeof(*answer));
        char object_path[DEBUG_FILE_PATH_MAX];
        snprintf(object_path, sizeof(object_path), "%s%s", root, path);
        if (answer)
            *answer = e->result;
        pthread_mutex_unlock(&df->lock);
        if (answer)
            fetch(df, e, ef, object_path, answer);
        pthread_mutex_lock(&df->lock);
        if (answer) {
            e->result = *answer;
        } else {
            e->result.debuginfod = DEBUGINFOD_NO_ANSWER;
            e->result.debuginfod_error = ENOMEM;
        }
        free(answer);
        e->fetching = false;
        pthread_cond_broadcast(&df->answered);
    }
    *out = e->result;
    pthread_mutex_unlock(&df->lock);
    if (out->source != DEBUG_FILE_DEBUGINFOD)   /* debuginfod's cache is this side's file system */
        rebase(out->path, sizeof(out->path), e->root, root);
    rebase(out->build_id_path, sizeof(out->build_id_path), e->root, root);
    return out->path[0] != '\0';
}

void debug_files_stats(struct debug_files *df, struct debug_files_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!df || pthread_mutex_lock(&df->lock) != 0)
        return;
    for (size_t i = 0; i < df->entries.n; i++) {
        const struct debug_files_entry *e = df->entries.v[i];
        switch (e->result.debuginfod) {
        case DEBUGINFOD_FOUND: out->found++; break;
        case DEBUGINFOD_NOT_FOUND: out->not_found++; break;
        case DEBUGINFOD_NO_ANSWER:
            if (!out->no_answer++) {
                out->first_error = e->result.debuginfod_error;
                snprintf(out->first_failed, sizeof(out->first_failed), "%s", e->object);
            }
            break;
        default: continue;
        }
        out->asked++;
    }
    pthread_mutex_unlock(&df->lock);
}
