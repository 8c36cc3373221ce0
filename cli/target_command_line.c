/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_command_line.c: a process's command line read from /proc/PID/cmdline (NUL-separated arguments). */
#include "cli/target_command_line.h"

#include <stdio.h>

void target_command_line(pid_t pid, char *buf, size_t len)
{
    buf[0] = '\0';
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "re");
    if (f) {
        size_t n = fread(buf, 1, len - 1, f);
        fclose(f);
        while (n > 0 && buf[n - 1] == '\0')
            n--;
        for (size_t i = 0; i < n; i++)
            if (buf[i] == '\0')
                buf[i] = ' ';
        buf[n] = '\0';
    }
    if (!buf[0])
        snprintf(buf, len, "pid %d", (int)pid);
}
