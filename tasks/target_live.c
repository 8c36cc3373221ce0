/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_live.c: a running process as the task reader's target, nothing stopped: its memory read with
 * process_vm_readv (no ptrace attach), its mappings from /proc/PID/maps, its threads and their thread pointers
 * through glibc's libthread_db (thread_pointers.c), their names from /proc (once per thread). */
#include "tasks/tasks_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/proc_exe.h"
#include "base/vec.h"

struct thread_name {
    pid_t tid;
    char name[16];
};

struct live_target {
    struct target_view base;
    char root[64];
    char program[4096];               /* readlink of /proc/PID/exe */
    char program_file[64];            /* /proc/PID/exe */
    struct thread_lister *lister;
    struct {
        struct thread_name *v;
        size_t n, cap;
    } names;                          /* the threads' names, read once per thread */
};

static bool live_read(struct target_view *t, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = { buf, len };
    struct iovec remote = { (void *)(uintptr_t)addr, len };
    ssize_t n = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)len;
}

static bool live_read_with_page(struct target_view *t, uint64_t addr, void *buf, size_t len, uint64_t page,
                                void *page_buf, bool *page_read)
{
    struct iovec local[2] = { { buf, len }, { page_buf, MEMORY_PAGE } };
    struct iovec remote[2] = { { (void *)(uintptr_t)addr, len }, { (void *)(uintptr_t)page, MEMORY_PAGE } };
    int n_iov = page ? 2 : 1;
    ssize_t n = process_vm_readv(t->pid, local, n_iov, remote, n_iov, 0);
    *page_read = page && n == (ssize_t)(len + MEMORY_PAGE);
    return n >= (ssize_t)len;
}

/* a thread's name, read from /proc once per thread (tokio names its workers before they run it) */
/* /proc/PID/task/TID/schedstat's time on a CPU (ns; the kernel updates a waiting thread's run-queue wait only once
   it runs again, so that one is not read), and the state in its stat (after the comm's closing parenthesis) */
static bool live_thread_sched(struct target_view *t, pid_t tid, uint64_t *cpu_ns, char *state)
{
    char path[64], line[512];
    unsigned long long cpu;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)t->pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool read = fscanf(f, "%llu", &cpu) == 1;
    fclose(f);
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)t->pid, (int)tid);
    if (!read || !(f = fopen(path, "re")))
        return false;
    read = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    const char *end = read ? strrchr(line, ')') : NULL;
    if (!end || end[1] != ' ' || !end[2])
        return false;
    *cpu_ns = cpu;
    *state = end[2];
    return true;
}

static void live_thread_name(struct target_view *t, pid_t tid, char name[16])
{
    struct live_target *lt = (struct live_target *)t;
    for (size_t i = 0; i < lt->names.n; i++)
        if (lt->names.v[i].tid == tid) {
            memcpy(name, lt->names.v[i].name, 16);
            return;
        }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)lt->base.pid, (int)tid);
    FILE *f = fopen(path, "re");
    name[0] = '\0';
    if (!f)
        return;
    bool read = fgets(name, 16, f) != NULL;
    fclose(f);
    if (!read)
        return;
    name[strcspn(name, "\n")] = '\0';
    struct thread_name *kept = vec_push(&lt->names);
    if (kept) {
        kept->tid = tid;
        memcpy(kept->name, name, 16);
    }
}

static int live_threads(struct target_view *t, elf_memory_reader read, void *rctx, struct target_threads *out, char *err,
                        size_t errlen)
{
    struct live_target *lt = (struct live_target *)t;
    struct thread_pointer_list list;
    memset(out, 0, sizeof(*out));
    if (thread_lister_list(lt->lister, read, rctx, &list, err, errlen) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < list.n && rc == 0; i++) {
        struct target_thread *th = vec_push(out);
        if (!th) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        th->tid = list.v[i].tid;
        th->fsbase = list.v[i].fsbase;
    }
    vec_free(&list);
    if (rc != 0)
        vec_free(out);
    return rc;
}

static bool live_gone(struct target_view *t)
{
    return kill(t->pid, 0) != 0 && errno == ESRCH;
}

static bool live_now(struct target_view *t, struct timespec *out)
{
    (void)t;
    return clock_gettime(CLOCK_MONOTONIC, out) == 0;
}

static void live_close(struct target_view *t)
{
    struct live_target *lt = (struct live_target *)t;
    thread_lister_close(lt->lister);
    target_maps_free(&t->maps);
    vec_free(&lt->names);
    free(lt);
}

static const struct target_view_ops live_ops = {
    .read = live_read,
    .read_with_page = live_read_with_page,
    .threads = live_threads,
    .thread_name = live_thread_name,
    .thread_sched = live_thread_sched,
    .gone = live_gone,
    .now = live_now,
    .close = live_close,
};

int target_maps_load(pid_t pid, struct target_maps *out)
{
    memset(out, 0, sizeof(*out));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[4096 + 256];
    int rc = 0;
    while (fgets(line, sizeof(line), f)) {
        uint64_t start, end, offset;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &offset,
                   &name_at) < 4)
            continue;
        struct target_mapping *m = vec_push(out);
        if (!m) {
            rc = -1;
            break;
        }
        *m = (struct target_mapping){ start, end, offset, false, perms[2] == 'x', NULL };
        char *name = line + name_at;
        name[strcspn(name, "\n")] = '\0';
        if (name_at > 0 && name[0] == '/' && !(m->path = strdup(name))) {
            rc = -1;
            break;
        }
        /* a file's readable, unwritable pages: its code and relocated read-only data (vtables) do not change; an
           anonymous mapping without write permission may be a malloc arena's reserve, made writable as it grows */
        m->read_only = m->path && perms[0] == 'r' && perms[1] != 'w';
    }
    fclose(f);
    if (rc != 0)
        target_maps_free(out);
    return rc;
}

int view_open_live(struct target_view **out, pid_t pid, const char *root, char *err, size_t errlen)
{
    *out = NULL;
    struct live_target *lt = calloc(1, sizeof(*lt));
    if (!lt) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    lt->base = (struct target_view){ .ops = &live_ops, .pid = pid, .program = lt->program,
                                .program_file = lt->program_file };
    snprintf(lt->root, sizeof(lt->root), "%s", root ? root : "");
    if (proc_exe_path(pid, lt->program_file, sizeof(lt->program_file), lt->program, sizeof(lt->program)) != 0) {
        snprintf(err, errlen, "cannot read process %d's executable (%s)", (int)pid, strerror(errno));
        free(lt);
        return -1;
    }
    if (target_maps_load(pid, &lt->base.maps) != 0) {
        snprintf(err, errlen, "cannot read /proc/%d/maps", (int)pid);
        free(lt);
        return -1;
    }
    if (thread_lister_open(&lt->lister, pid, lt->root, &lt->base.maps, NULL, NULL, err, errlen) != 0) {
        target_maps_free(&lt->base.maps);
        free(lt);
        return -1;
    }
    *out = &lt->base;
    return 0;
}
