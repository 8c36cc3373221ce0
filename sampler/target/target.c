/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target.c: launching or attaching to the profiled process and reading its threads from /proc. */
#include "sampler/target/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -1 : (int)fd;
#else
    (void)pid;
    return -1;
#endif
}

int target_launch(struct target *t, char *const *argv, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    t->go_fd = t->exec_error_fd = t->pidfd = -1;
    int go[2], report[2];
    if (pipe2(go, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        close(go[0]);
        close(go[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(errno));
        close(go[0]);
        close(go[1]);
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (pid == 0) {
        close(go[1]);
        close(report[0]);
        char byte;
        ssize_t n;
        do
            n = read(go[0], &byte, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
            _exit(127);   /* the profiler gave up before arming: do not run the command */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execvp(argv[0], argv);
        int e = errno;
        if (write(report[1], &e, sizeof(e)) != (ssize_t)sizeof(e))
            _exit(126);
        _exit(127);
    }
    close(go[0]);
    close(report[1]);
    t->pid = pid;
    t->launched = true;
    t->go_fd = go[1];
    t->exec_error_fd = report[0];
    t->pidfd = open_pidfd(pid);
    return 0;
}

int target_release(struct target *t, const char *cmd, char *err, size_t errlen)
{
    char byte = 'g';
    if (write(t->go_fd, &byte, 1) != 1) {
        snprintf(err, errlen, "cannot start '%s': %s", cmd, strerror(errno));
        return -1;
    }
    close(t->go_fd);
    t->go_fd = -1;
    int e = 0;
    ssize_t n;
    do
        n = read(t->exec_error_fd, &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    close(t->exec_error_fd);
    t->exec_error_fd = -1;
    if (n == (ssize_t)sizeof(e)) {
        snprintf(err, errlen, "cannot run '%s': %s", cmd, strerror(e));
        int status;
        while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
            ;
        t->exited = true;
        return -1;
    }
    return 0;
}

int target_attach(struct target *t, pid_t pid, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    t->go_fd = t->exec_error_fd = t->pidfd = -1;
    t->pid = pid;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    struct stat st;
    if (pid <= 0 || stat(path, &st) != 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
        snprintf(err, errlen, "no such process: %d", (int)pid);
        return -1;
    }
    /* A thread id that is not a process (a thread of another process) is not a target of its own. */
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            int tgid;
            if (sscanf(line, "Tgid: %d", &tgid) == 1) {
                if (tgid != pid) {
                    fclose(f);
                    snprintf(err, errlen, "%d is a thread of process %d: profile -p %d", (int)pid, tgid, tgid);
                    return -1;
                }
                break;
            }
        }
        fclose(f);
    }
    t->pidfd = open_pidfd(pid);
    return 0;
}

bool target_poll_exit(struct target *t)
{
    if (t->exited)
        return true;
    if (t->launched) {
        int status;
        pid_t r = waitpid(t->pid, &status, WNOHANG);
        if (r == t->pid) {
            t->exited = true;
            t->status = status;
        } else if (r < 0 && errno == ECHILD) {
            t->exited = true;
        }
        return t->exited;
    }
    if (kill(t->pid, 0) != 0 && errno == ESRCH) {
        t->exited = true;
        return true;
    }
    /* A zombie still answers kill(): look at its state. */
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        t->exited = true;
        return true;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    if (close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X'))
        t->exited = true;
    return t->exited;
}

void target_terminate(struct target *t, int grace_ms)
{
    if (!t->launched || t->exited)
        return;
    if (kill(t->pid, SIGTERM) != 0)
        return;
    for (int waited = 0; waited < grace_ms; waited += 10) {
        if (target_poll_exit(t))
            return;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (kill(t->pid, SIGKILL) == 0) {
        int status;
        while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
            ;
        t->status = status;
    }
    t->exited = true;
}

void target_close(struct target *t)
{
    if (t->go_fd >= 0)
        close(t->go_fd);       /* a child still waiting exits without running the command */
    if (t->exec_error_fd >= 0)
        close(t->exec_error_fd);
    if (t->pidfd >= 0)
        close(t->pidfd);
    if (t->launched && !t->exited) {
        int status;
        if (waitpid(t->pid, &status, WNOHANG) == 0 && t->go_fd >= 0)
            while (waitpid(t->pid, &status, 0) < 0 && errno == EINTR)
                ;
    }
    t->go_fd = t->exec_error_fd = t->pidfd = -1;
}

int target_list_threads(pid_t pid, pid_t *tids, size_t max)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end == '\0' && tid > 0)
            tids[n++] = (pid_t)tid;
    }
    closedir(d);
    return (int)n;
}

bool target_thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

bool target_resolve_command(const char *cmd, const char *search_path, char *buf, size_t len)
{
    if (strchr(cmd, '/')) {
        if (!realpath(cmd, buf) || access(buf, X_OK) != 0)
            return false;
        return strlen(buf) < len;
    }
    const char *path = search_path ? search_path : "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t seg = strcspn(path, ":");
        char candidate[4096];
        if (seg + strlen(cmd) + 2 < sizeof(candidate)) {
            snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)seg, seg ? path : ".", cmd);
            char resolved[4096];
            if (access(candidate, X_OK) == 0 && realpath(candidate, resolved) && strlen(resolved) < len) {
                strcpy(buf, resolved);
                return true;
            }
        }
        path += seg;
        if (*path == ':')
            path++;
    }
    return false;
}

void target_permission_message(pid_t pid, int err_no, char *err, size_t errlen)
{
    int paranoid = -9;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
    if (f) {
        if (fscanf(f, "%d", &paranoid) != 1)
            paranoid = -9;
        fclose(f);
    }
    char level[32] = "unknown";
    if (paranoid != -9)
        snprintf(level, sizeof(level), "%d", paranoid);
    snprintf(err, errlen,
             "no permission to profile process %d (%s): kernel.perf_event_paranoid is %s; run as root or "
             "with CAP_PERFMON (or CAP_SYS_ADMIN) and CAP_SYS_PTRACE, or as the process's owner with "
             "kernel.perf_event_paranoid <= 1 (<= 2 without --kernel)",
             (int)pid, strerror(err_no), level);
}
