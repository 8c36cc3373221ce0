/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_debug_info.c: the summary's word on objects without symbols (cli/debug_info.c): one line each with its
 * share, what was tried (the build-id place, the debug link, debuginfod's answer or DEBUGINFOD_URLS unset) and the
 * fix (a Debian package's -dbgsym, a server, the build-id place), paths as the target sees them; the one line on
 * debuginfod; samples counted once per object per sample; and the Debian package of a file from dpkg's lists
 * (cli/debian_package.c), merged-/usr aliases included. */
#include "cli/debian_package.h"
#include "cli/debug_info.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What print_object writes for r. */
static char *line_of(const struct sym_object_report *r, double percent, const char *package)
{
    char *text = NULL;
    size_t size;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    debug_info_print_object(out, r, percent, package);
    assert_int_equal(fclose(out), 0);
    return text;
}

static void test_object_lines(void **state)
{
    (void)state;
    static struct debug_file_result tried;
    memset(&tried, 0, sizeof(tried));
    snprintf(tried.build_id_path, sizeof(tried.build_id_path), "/proc/self/fd/7/usr/lib/debug/.build-id/ab/cdef.debug");
    snprintf(tried.debuglink, sizeof(tried.debuglink), "app.debug");
    tried.debuginfod = DEBUGINFOD_OFF;
    struct sym_object_report r = { .path = "/srv/app", .root = "/proc/self/fd/7", .build_id = "abcdef",
                                   .debug_file = &tried };
    char *text = line_of(&r, 87.25, NULL);
    assert_string_equal(text, "taskspy: no symbols for /srv/app (87.2% of samples; its frames show as [app]): tried "
                              "/usr/lib/debug/.build-id/ab/cdef.debug, .gnu_debuglink app.debug (beside it, .debug/, "
                              "/usr/lib/debug), debuginfod (DEBUGINFOD_URLS unset); set DEBUGINFOD_URLS to a "
                              "debuginfod server that has its debug file, or put the file at "
                              "/usr/lib/debug/.build-id/ab/cdef.debug\n");
    free(text);

    /* a Debian file whose server gave no answer, a stale debug file refused, exported symbols */
    tried.debuginfod = DEBUGINFOD_NO_ANSWER;
    tried.debuginfod_error = ECONNREFUSED;
    tried.refused = true;
    r.dynamic_symbols = true;
    r.path = "/usr/lib/x86_64-linux-gnu/libz.so.1";
    text = line_of(&r, 3, "zlib1g");
    assert_string_equal(text, "taskspy: no symbols for /usr/lib/x86_64-linux-gnu/libz.so.1 (3.0% of samples; its "
                              "frames show as [libz.so.1] or by its exported symbols): tried "
                              "/usr/lib/debug/.build-id/ab/cdef.debug, .gnu_debuglink app.debug (beside it, .debug/, "
                              "/usr/lib/debug), debuginfod (no answer: Connection refused); a debug file of another "
                              "build was refused; install zlib1g-dbgsym from Debian's debug archive\n");
    free(text);

    /* no build id, no debug link: not asked */
    memset(&tried, 0, sizeof(tried));
    tried.debuginfod = DEBUGINFOD_NOT_ASKED;
    r.dynamic_symbols = false;
    r.path = "/opt/tool";
    text = line_of(&r, 0.5, NULL);
    assert_string_equal(text, "taskspy: no symbols for /opt/tool (0.5% of samples; its frames show as [tool]): tried "
                              "no build id, no .gnu_debuglink, debuginfod (not asked: no build id)\n");
    free(text);

    /* found, but without symbols: the file is named (debuginfod's cache is this side's) */
    snprintf(tried.path, sizeof(tried.path), "/root/.cache/debuginfod_client/ab/debuginfo");
    tried.source = DEBUG_FILE_DEBUGINFOD;
    tried.debuginfod = DEBUGINFOD_FOUND;
    text = line_of(&r, 10, NULL);
    assert_string_equal(text, "taskspy: no symbols for /opt/tool (10.0% of samples; its frames show as [tool]): its "
                              "debug file /root/.cache/debuginfod_client/ab/debuginfo has none\n");
    free(text);
}

static void test_debuginfod_line(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    struct debug_files_stats st = { 0 };
    debug_info_print_debuginfod(out, &st);          /* not asked: no line */
    st = (struct debug_files_stats){ .asked = 3, .found = 1, .not_found = 1, .no_answer = 1, .first_error = ETIME };
    snprintf(st.first_failed, sizeof(st.first_failed), "/srv/app");
    debug_info_print_debuginfod(out, &st);
    assert_int_equal(fclose(out), 0);
    assert_string_equal(text, "taskspy: debuginfod: asked for the debug files of 3 objects: 1 fetched, 1 not on the "
                              "servers, 1 without an answer (timed out for /srv/app; each asked once, their frames "
                              "have no names)\n");
    free(text);
}

/* Each object counts a sample once, however many of its frames the sample has. */
static void test_counting(void **state)
{
    (void)state;
    struct debug_info d = { 0 };
    static const char app[] = "app", lib[] = "lib.so";
    uint32_t a = debug_info_object(&d, app), b = debug_info_object(&d, lib);
    assert_int_equal(debug_info_object(&d, app), a);
    debug_info_sample(&d);
    debug_info_saw(&d, a);
    debug_info_saw(&d, a);
    debug_info_saw(&d, DEBUG_INFO_NO_OBJECT);
    debug_info_sample(&d);
    debug_info_saw(&d, b);
    debug_info_saw(&d, a);
    assert_int_equal(d.samples, 2);
    assert_int_equal(d.objects.v[a].samples, 2);
    assert_int_equal(d.objects.v[b].samples, 1);
    debug_info_free(&d);
}

static void test_debian_package(void **state)
{
    (void)state;
    char root[] = "/tmp/taskspy-dpkg-XXXXXX", dir[600], list[700];
    assert_non_null(mkdtemp(root));
    snprintf(dir, sizeof(dir), "mkdir -p %s/var/lib/dpkg/info", root);
    assert_int_equal(system(dir), 0);
    snprintf(list, sizeof(list), "%s/var/lib/dpkg/info/libfoo1:amd64.list", root);
    FILE *f = fopen(list, "w");
    assert_non_null(f);
    fputs("/.\n/lib\n/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu/libfoo.so.1\n/usr/share/doc/libfoo1\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(list, sizeof(list), "%s/var/lib/dpkg/info/bar.list", root);
    f = fopen(list, "w");
    assert_non_null(f);
    fputs("/usr/bin/bar\n", f);
    assert_int_equal(fclose(f), 0);
    char package[64];
    assert_true(debian_package_of(root, "/lib/x86_64-linux-gnu/libfoo.so.1", package, sizeof(package)));
    assert_string_equal(package, "libfoo1");
    assert_true(debian_package_of(root, "/usr/lib/x86_64-linux-gnu/libfoo.so.1", package, sizeof(package)));
    assert_string_equal(package, "libfoo1");
    assert_true(debian_package_of(root, "/bin/bar", package, sizeof(package)));
    assert_string_equal(package, "bar");
    assert_false(debian_package_of(root, "/usr/lib/x86_64-linux-gnu/libfoo.so", package, sizeof(package)));
    assert_false(debian_package_of(root, "/usr/share/doc", package, sizeof(package)));
    assert_false(debian_package_of("/nonexistent-root", "/bin/bar", package, sizeof(package)));
    snprintf(dir, sizeof(dir), "rm -r %s", root);
    assert_int_equal(system(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_lines),
        cmocka_unit_test(test_debuginfod_line),
        cmocka_unit_test(test_counting),
        cmocka_unit_test(test_debian_package),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
