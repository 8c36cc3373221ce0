/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shell_run.h: for unit tests that build their inputs with the system's tools (cc, objcopy, strip): run one
 * shell command made from a format, failing the test (with the command) when it fails. Include after
 * <cmocka.h>. */
#ifndef TASKSPY_TESTS_SHELL_RUN_H
#define TASKSPY_TESTS_SHELL_RUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((format(printf, 1, 2)))
static void run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof(cmd));
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("command failed (%d): %s", rc, cmd);
}

#endif
