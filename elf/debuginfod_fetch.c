/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debuginfod_fetch.c: the debug-file lookup's last place, a debuginfod server, through elfutils' libdebuginfod
 * (as perf, gdb and valgrind use it). Whether to ask at all is the cli's decision (struct debug_file_settings);
 * which servers, where the downloads are cached and how long to wait, libdebuginfod itself reads from its
 * environment (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, ...) in debuginfod_begin and in each
 * query: that is its documented interface, the same for every tool that uses it, and the one place below the
 * cli where the environment is read. Its own progress display is replaced by the settings' callback.
 * libdebuginfod is loaded (dlopen) on the first fetch, as elfutils' own libdwfl does: linked in, it and the
 * libraries it needs (curl, TLS, Kerberos, LDAP: 30 objects) cost every run of taskspy ~6 ms of start-up CPU. */
#include "elf/elf_internal.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_MONOTONIC, &t) == 0 ? (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec : 0;
}

/* libdebuginfod's progress callback, about once a second and on every read: a is the bytes so far once a server
 * sends the file, b its size (0 before that, while a counts the waits; -1 when the server does not say).
 * While no server sends (b 0), the query is cancelled once wait_limit_s have passed since it began: libdebuginfod
 * alone would wait for a connection as long as curl does (300 s) and retry twice. (A cancelled query is
 * remembered by libdebuginfod as "not there" for a while, as a server's "not found" is.) */
static int on_progress(debuginfod_client *client, long a, long b)
{
    void *(*get_user_data)(const debuginfod_client *) =
        (void *(*)(const debuginfod_client *))dlsym(RTLD_DEFAULT, "debuginfod_get_user_data");
    struct debuginfod_session *s = get_user_data ? get_user_data(client) : NULL;
    if (!s)
        return 0;
    if (b == 0 && s->wait_limit_s && now_ns() - s->began_ns > (uint64_t)s->wait_limit_s * 1000000000u) {
        s->gave_up = true;
        return 1;
    }
    if (s->on_progress)
        s->on_progress(s->progress_ctx, s->object, b == 0 || a < 0 ? 0 : (uint64_t)a, b > 0 ? (uint64_t)b : 0);
    return 0;
}

/* libdebuginfod's functions from the loaded library (RTLD_GLOBAL: on_progress finds its own by name); false
   when the library or one of them is missing */
static bool load_library(struct debuginfod_library *lib)
{
    if (!dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_GLOBAL))
        return false;
    lib->begin = (debuginfod_client * (*)(void)) dlsym(RTLD_DEFAULT, "debuginfod_begin");
    lib->end = (void (*)(debuginfod_client *))dlsym(RTLD_DEFAULT, "debuginfod_end");
    lib->set_user_data = (void (*)(debuginfod_client *, void *))dlsym(RTLD_DEFAULT, "debuginfod_set_user_data");
    lib->set_progressfn =
        (void (*)(debuginfod_client *, debuginfod_progressfn_t))dlsym(RTLD_DEFAULT, "debuginfod_set_progressfn");
    lib->find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int, char **))dlsym(
        RTLD_DEFAULT, "debuginfod_find_debuginfo");
    return lib->begin && lib->end && lib->set_user_data && lib->set_progressfn && lib->find_debuginfo &&
           dlsym(RTLD_DEFAULT, "debuginfod_get_user_data");
}

int debuginfod_session_fetch(void *ctx, const uint8_t *build_id, size_t len, const char *object, char **path)
{
    struct debuginfod_session *s = ctx;
    *path = NULL;
    if (!s->begun) {
        s->begun = true;
        s->client = load_library(&s->lib) ? s->lib.begin() : NULL;
        if (s->client) {
            s->lib.set_user_data(s->client, s);
            s->lib.set_progressfn(s->client, on_progress);
        }
    }
    if (!s->client)
        return -ENOSYS;
    s->object = object;
    s->began_ns = now_ns();
    s->gave_up = false;
    int fd = s->lib.find_debuginfo(s->client, build_id, (int)len, path);
    s->object = NULL;
    if (fd < 0 || s->gave_up) {
        if (fd >= 0)
            (void)close(fd);
        free(*path);
        *path = NULL;
        return s->gave_up ? -ETIME : fd;
    }
    (void)close(fd);           /* read-only, and the file is opened again by its path: nothing to lose */
    return *path ? 0 : -ENOENT;
}

void debuginfod_session_end(struct debuginfod_session *s)
{
    if (s->client)
        s->lib.end(s->client);
    s->client = NULL;
    s->begun = false;
}
