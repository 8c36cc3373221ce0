/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_proc_exe.c: base/proc_exe on this test's own process (the link and the path it points at, the file
 * this program runs), on a process that does not exist (-1, ENOENT, an empty path) and with a path buffer
 * too small for the path (-1, ENAMETOOLONG, never a path cut short). */
#include "base/proc_exe.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void test_own_process(void **state)
{
    (void)state;
    char link[64], path[4096], expect_link[64];
    assert_int_equal(proc_exe_path(getpid(), link, sizeof(link), path, sizeof(path)), 0);
    snprintf(expect_link, sizeof(expect_link), "/proc/%d/exe", (int)getpid());
    assert_string_equal(link, expect_link);
    char *real = realpath("/proc/self/exe", NULL);
    assert_non_null(real);
    assert_string_equal(path, real);
    free(real);
    struct stat a, b;          /* the link opens the file the path names */
    assert_int_equal(stat(link, &a), 0);
    assert_int_equal(stat(path, &b), 0);
    assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

static void test_no_process(void **state)
{
    (void)state;
    char link[64], path[64] = "x";
    errno = 0;
    assert_int_equal(proc_exe_path(0x7ffffff0, link, sizeof(link), path, sizeof(path)), -1);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(path, "");
}

static void test_path_too_long_for_buffer(void **state)
{
    (void)state;
    char link[64], path[4];
    errno = 0;
    assert_int_equal(proc_exe_path(getpid(), link, sizeof(link), path, sizeof(path)), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_string_equal(path, "");
    char small_link[8];
    char full[4096];
    assert_int_equal(proc_exe_path(getpid(), small_link, sizeof(small_link), full, sizeof(full)), -1);
    assert_int_equal(errno, ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_process),
        cmocka_unit_test(test_no_process),
        cmocka_unit_test(test_path_too_long_for_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
