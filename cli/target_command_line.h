/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_command_line.h: a running process's command line as titles and headers name it. */
#ifndef TASKSPY_TARGET_COMMAND_LINE_H
#define TASKSPY_TARGET_COMMAND_LINE_H

#include <stddef.h>
#include <sys/types.h>

/* pid's command line from /proc/PID/cmdline, its arguments joined by spaces (cut to fit len), or "pid PID"
 * when it cannot be read or is empty (a kernel thread, a process gone). */
void target_command_line(pid_t pid, char *buf, size_t len);

#endif
