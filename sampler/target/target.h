/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target.h: the process being profiled: launching a command held back until its events are armed, checking
 * that a PID exists and can be profiled, listing its threads and their names, noticing when it exits. */
#ifndef TASKSPY_TARGET_H
#define TASKSPY_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target {
    pid_t pid;
    bool launched;              /* we started it (and reap it) */
    int go_fd;                  /* launch: write end of the pipe that lets the child exec */
    int exec_error_fd;          /* launch: read end that reports a failed exec (CLOEXEC) */
    int pidfd;                  /* readable when the process exits; -1 if unavailable */
    bool exited;
    int status;                 /* wait status when launched and reaped */
};

/* Fork a child that waits, then execs argv. Returns 0, or -1 with a message in err. */
int target_launch(struct target *t, char *const *argv, char *err, size_t errlen);
/* Let the launched child exec; report a failed exec. Returns 0, or -1 with a message in err. */
int target_release(struct target *t, const char *cmd, char *err, size_t errlen);
/* Check that pid is a live process we may look at. Returns 0, or -1 with a message in err. */
int target_attach(struct target *t, pid_t pid, char *err, size_t errlen);
/* Has the target exited? Reaps a launched child. */
bool target_poll_exit(struct target *t);
/* Ask a launched target that is still running to end (SIGTERM, then SIGKILL after grace_ms), and reap it. */
void target_terminate(struct target *t, int grace_ms);
void target_close(struct target *t);

/* Thread ids of pid from /proc/PID/task. Returns the count (<= max), or -1 with errno. */
int target_list_threads(pid_t pid, pid_t *tids, size_t max);
/* The thread's name from /proc/PID/task/TID/comm into buf; returns false if it is gone. */
bool target_thread_name(pid_t pid, pid_t tid, char *buf, size_t len);
/* The resolved path of the launched command (searched in search_path, the caller's PATH, like execvp; NULL:
 * a default), into buf; false if not found. */
bool target_resolve_command(const char *cmd, const char *search_path, char *buf, size_t len);
/* Describe a perf_event_open permission failure: what perf_event_paranoid / capabilities would allow. */
void target_permission_message(pid_t pid, int err_no, char *err, size_t errlen);

#endif
