/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc_exe.h: a process's executable as /proc names it: the link /proc/PID/exe (which opens the file the
 * process runs, also when its path is gone or lies in another mount namespace) and the path it points at
 * (the one the process's own mappings name). */
#ifndef TASKSPY_PROC_EXE_H
#define TASKSPY_PROC_EXE_H

#include <stddef.h>
#include <sys/types.h>

/* link gets "/proc/PID/exe" (link_len >= 32 is room enough), path the link's target, NUL-terminated ("" when
 * it cannot be read). Returns 0, or -1 with errno set (no such process, no permission, or a path longer than
 * path_len - 1). */
int proc_exe_path(pid_t pid, char *link, size_t link_len, char *path, size_t path_len);

#endif
