/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_debug_file.c: the one separate-debug-file lookup (elf_debug_file_find): a matching debug file is
 * found by build-id and by .gnu_debuglink under a root prefix, and a stale one (another build's, with the
 * wrong build-id or the wrong CRC) is refused. */
#include "elf/elf_file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

/* Builds DIR/root/lib/NAME from a one-function source; version changes the code (and so the build-id). */
static void build_library(const char *dir, const char *name, int version)
{
    run("mkdir -p '%s/root/lib' && cd '%s' && printf 'int f(int x) { return x * %d; }\\n' > v%d.c && "
        "cc -g -O0 -shared -fPIC -Wl,--build-id -o 'root/lib/%s' v%d.c",
        dir, dir, version + 2, version, name, version);
}

/* elf_debug_file_find on ROOT + /lib/NAME; returns the found path (malloc'd) or NULL. */
static char *find(const char *dir, const char *name)
{
    char root[512], full[700], path[128];
    snprintf(root, sizeof(root), "%s/root", dir);
    snprintf(path, sizeof(path), "/lib/%s", name);
    snprintf(full, sizeof(full), "%s%s", root, path);
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, full), 0);
    char *found = elf_debug_file_find(&ef, root, path);
    elf_file_close(&ef);
    return found;
}

static void assert_found(const char *dir, const char *name, const char *expected_tail)
{
    char *found = find(dir, name);
    if (!found)
        fail_msg("no debug file found for %s", name);
    size_t n = strlen(found), m = strlen(expected_tail);
    if (n < m || strcmp(found + n - m, expected_tail) != 0)
        fail_msg("found %s, expected ...%s", found, expected_tail);
    free(found);
}

static void make_dir(char *dir)
{
    assert_non_null(mkdtemp(dir));
}

/* By build-id: the debug file of this build is found; another build's file at that path is refused. */
static void test_build_id(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-debug-file-XXXXXX";
    make_dir(dir);
    build_library(dir, "libbid.so", 1);
    build_library(dir, "libother.so", 2);
    const char *place = "id=$(readelf -n root/lib/libbid.so | sed -n 's/.*Build ID: *//p') && "
                        "d=root/usr/lib/debug/.build-id/$(echo $id | cut -c1-2) && mkdir -p $d && "
                        "f=$d/$(echo $id | cut -c3-).debug";
    run("cd '%s' && %s && objcopy --only-keep-debug root/lib/libbid.so $f", dir, place);
    assert_found(dir, "libbid.so", ".debug");
    /* stale: the other build's debug file where this build-id's should be */
    run("cd '%s' && %s && objcopy --only-keep-debug root/lib/libother.so $f", dir, place);
    assert_null(find(dir, "libbid.so"));
    run("rm -r '%s'", dir);
}

/* By .gnu_debuglink (the object has no build-id): the CRC decides. */
static void test_debuglink_crc(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-debug-file-XXXXXX";
    make_dir(dir);
    build_library(dir, "liblink.so", 1);
    run("cd '%s/root/lib' && objcopy --remove-section=.note.gnu.build-id liblink.so && "
        "objcopy --only-keep-debug liblink.so liblink.debug && strip --strip-debug liblink.so && "
        "objcopy --add-gnu-debuglink=liblink.debug liblink.so && mkdir -p ../usr/lib/debug/lib .debug",
        dir);
    /* beside the object */
    assert_found(dir, "liblink.so", "/root/lib/liblink.debug");
    /* in .debug/ beside it, then under ROOT/usr/lib/debug/DIR/ */
    run("cd '%s/root/lib' && mv liblink.debug .debug/", dir);
    assert_found(dir, "liblink.so", "/root/lib/.debug/liblink.debug");
    run("cd '%s/root/lib' && mv .debug/liblink.debug ../usr/lib/debug/lib/", dir);
    assert_found(dir, "liblink.so", "/root/usr/lib/debug/lib/liblink.debug");
    /* stale: the same name, another build's contents (wrong CRC) */
    run("cd '%s' && printf 'int f(int x) { return x * 9; }\\n' > v9.c && cc -g -O0 -shared -fPIC -Wl,--build-id=none "
        "-o other.so v9.c && objcopy --only-keep-debug other.so root/usr/lib/debug/lib/liblink.debug",
        dir);
    assert_null(find(dir, "liblink.so"));
    run("rm -r '%s'", dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_id),
        cmocka_unit_test(test_debuglink_crc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
