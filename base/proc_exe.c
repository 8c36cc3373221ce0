/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc_exe.c: /proc/PID/exe and the path it points at (proc_exe.h). */
#include "base/proc_exe.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int proc_exe_path(pid_t pid, char *link, size_t link_len, char *path, size_t path_len)
{
    if (path_len)
        path[0] = '\0';
    int len = snprintf(link, link_len, "/proc/%d/exe", (int)pid);
    if (len < 0 || (size_t)len >= link_len || path_len < 2) {
        errno = ENAMETOOLONG;
        return -1;
    }
    ssize_t n = readlink(link, path, path_len - 1);
    if (n < 0)
        return -1;
    if ((size_t)n >= path_len - 1) {         /* (readlink cuts a longer path short, silently) */
        path[0] = '\0';
        errno = ENAMETOOLONG;
        return -1;
    }
    path[n] = '\0';
    return 0;
}
