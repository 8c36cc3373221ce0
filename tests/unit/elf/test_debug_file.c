/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_debug_file.c: the one separate-debug-file lookup (elf_debug_file_find, debug_file_find): a matching debug
 * file is found by build-id and by .gnu_debuglink under a root prefix, and a stale one (another build's, with the
 * wrong build-id or the wrong CRC) is refused. Its order and shared results, without a server: a stand-in fetch
 * (the settings' hook; libdebuginfod otherwise) counts the questions. The build-id place wins, then the debug
 * link; debuginfod is asked only when both fail, only by a caller that may wait, only when the settings enable
 * it, once per build id, its failure kept; what it sends is checked like a local file (another build's is
 * refused); a result found through one root is given through another; what was tried is reported either way. */
#include "elf/elf_file.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/shell_run.h"

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

/* The stand-in server: what it answers and how often it was asked. */
struct server {
    int answer;                  /* 0: send file; else a negative errno */
    char file[512];
    int asked;
    char last_object[256];
};

static int fake_fetch(void *ctx, const uint8_t *build_id, size_t len, const char *object, char **path)
{
    struct server *srv = ctx;
    assert_true(len > 0 && build_id != NULL);
    srv->asked++;
    snprintf(srv->last_object, sizeof(srv->last_object), "%s", object);
    if (srv->answer != 0)
        return srv->answer;
    *path = strdup(srv->file);
    return *path ? 0 : -ENOMEM;
}

/* DIR/root/lib/libx.so stripped, with a build id and a debug link to libx.debug, kept in DIR/keep/ (in none of the
 * places); DIR/other.debug is another build's debug file. */
static void make_objects(char *dir)
{
    make_dir(dir);
    run("cd '%s' && mkdir -p root/lib keep && printf 'int f(int x) { return x * 3; }\\n' > a.c && "
        "printf 'int f(int x) { return x * 7; }\\n' > b.c && "
        "cc -g -O0 -shared -fPIC -Wl,--build-id -o root/lib/libx.so a.c && "
        "cc -g -O0 -shared -fPIC -Wl,--build-id -o other.so b.c && objcopy --only-keep-debug other.so other.debug && "
        "objcopy --only-keep-debug root/lib/libx.so keep/libx.debug && strip --strip-all root/lib/libx.so && "
        "cd root/lib && objcopy --add-gnu-debuglink=../../keep/libx.debug libx.so",
        dir);
}

/* Where the build-id place of libx.so is, under DIR/root. */
static void build_id_place(const char *dir, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "cd '%s' && id=$(readelf -n root/lib/libx.so | sed -n 's/.*Build ID: *//p') && "
             "echo root/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char rel[400] = "";
    assert_non_null(fgets(rel, sizeof(rel), p));
    assert_int_equal(pclose(p), 0);
    rel[strcspn(rel, "\n")] = '\0';
    snprintf(out, len, "%s/%s", dir, rel);
}

/* debug_file_find for DIR/ROOT_NAME + /lib/libx.so. */
static bool lookup(struct debug_files *df, const char *dir, const char *root_name, bool fetch,
                 struct debug_file_result *out)
{
    char root[512], full[700];
    snprintf(root, sizeof(root), "%s/%s", dir, root_name);
    snprintf(full, sizeof(full), "%s/lib/libx.so", root);
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, full), 0);
    bool found = debug_file_find(df, &ef, root, "/lib/libx.so", fetch, out);
    elf_file_close(&ef);
    return found;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static struct debug_files *new_lookup(struct server *srv, bool debuginfod)
{
    struct debug_file_settings settings = { .debuginfod = debuginfod, .fetch = fake_fetch, .fetch_ctx = srv };
    struct debug_files *df = debug_files_new(&settings);
    assert_non_null(df);
    return df;
}

/* The local places come first: debuginfod is not asked when either has the file. */
static void test_local_places_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-debug-files-XXXXXX";
    make_objects(dir);
    struct debug_file_result *r = malloc(sizeof(*r));
    assert_non_null(r);
    struct server srv = { .answer = -ECONNREFUSED };

    /* the debug link: the file beside the object */
    run("cp '%s/keep/libx.debug' '%s/root/lib/'", dir, dir);
    struct debug_files *df = new_lookup(&srv, true);
    assert_true(lookup(df, dir, "root", true, r));
    assert_int_equal(r->source, DEBUG_FILE_DEBUGLINK);
    assert_true(ends_with(r->path, "/root/lib/libx.debug"));
    assert_string_equal(r->debuglink, "libx.debug");
    assert_int_equal(r->debuginfod, DEBUGINFOD_NOT_ASKED);
    assert_int_equal(srv.asked, 0);
    debug_files_free(df);

    /* the build-id place wins over the debug link */
    char place[700];
    build_id_place(dir, place, sizeof(place));
    run("mkdir -p \"$(dirname '%s')\" && cp '%s/keep/libx.debug' '%s'", place, dir, place);
    df = new_lookup(&srv, true);
    assert_true(lookup(df, dir, "root", true, r));
    assert_int_equal(r->source, DEBUG_FILE_BUILD_ID);
    assert_string_equal(r->path, place);
    assert_string_equal(r->build_id_path, place);
    assert_int_equal(srv.asked, 0);
    debug_files_free(df);

    /* another build's file at the build-id place: refused, and the debug link's taken */
    run("cp '%s/other.debug' '%s'", dir, place);
    df = new_lookup(&srv, true);
    assert_true(lookup(df, dir, "root", true, r));
    assert_int_equal(r->source, DEBUG_FILE_DEBUGLINK);
    assert_true(r->refused);
    assert_int_equal(srv.asked, 0);
    debug_files_free(df);
    free(r);
    run("rm -r '%s'", dir);
}

/* Neither local place: debuginfod, asked once per build id by a caller that may wait, what it sends checked. */
static void test_debuginfod_last_and_once(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-debug-files-XXXXXX";
    make_objects(dir);
    struct debug_file_result *r = malloc(sizeof(*r));
    assert_non_null(r);
    struct server srv = { .answer = 0 };
    snprintf(srv.file, sizeof(srv.file), "%s/keep/libx.debug", dir);

    /* the settings say no server: not asked, and reported so */
    struct debug_files *df = new_lookup(&srv, false);
    assert_false(lookup(df, dir, "root", true, r));
    assert_int_equal(r->debuginfod, DEBUGINFOD_OFF);
    assert_true(r->build_id_path[0] != '\0');
    assert_string_equal(r->debuglink, "libx.debug");
    assert_int_equal(srv.asked, 0);
    debug_files_free(df);

    df = new_lookup(&srv, true);
    /* a caller that may not wait (the sampler's reading thread) is told what is known: nothing yet */
    assert_false(lookup(df, dir, "root", false, r));
    assert_int_equal(r->debuginfod, DEBUGINFOD_NOT_ASKED);
    assert_int_equal(srv.asked, 0);
    /* one that may wait asks; later callers share the answer, also through another root */
    assert_true(lookup(df, dir, "root", true, r));
    assert_int_equal(r->source, DEBUG_FILE_DEBUGINFOD);
    assert_int_equal(r->debuginfod, DEBUGINFOD_FOUND);
    assert_string_equal(r->path, srv.file);
    assert_string_equal(srv.last_object, "/lib/libx.so");
    run("ln -s root '%s/alias'", dir);
    assert_true(lookup(df, dir, "alias", true, r));
    assert_string_equal(r->path, srv.file);
    assert_true(ends_with(r->build_id_path, ".debug") && strstr(r->build_id_path, "/alias/usr/lib/debug/.build-id/"));
    assert_true(lookup(df, dir, "root", false, r));
    assert_int_equal(srv.asked, 1);
    struct debug_files_stats st;
    debug_files_stats(df, &st);
    assert_int_equal(st.asked, 1);
    assert_int_equal(st.found, 1);
    debug_files_free(df);

    /* what the server sends is checked: another build's file is refused */
    snprintf(srv.file, sizeof(srv.file), "%s/other.debug", dir);
    df = new_lookup(&srv, true);
    assert_false(lookup(df, dir, "root", true, r));
    assert_int_equal(r->debuginfod, DEBUGINFOD_NOT_FOUND);
    assert_true(r->refused);
    debug_files_free(df);

    /* a server that does not have it */
    srv.answer = -ENOENT;
    df = new_lookup(&srv, true);
    assert_false(lookup(df, dir, "root", true, r));
    assert_int_equal(r->debuginfod, DEBUGINFOD_NOT_FOUND);
    debug_files_free(df);
    free(r);
    run("rm -r '%s'", dir);
}

/* A server that gives no answer is asked once for the object: its failure is kept and counted. */
static void test_no_answer_kept(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-debug-files-XXXXXX";
    make_objects(dir);
    struct debug_file_result *r = malloc(sizeof(*r));
    assert_non_null(r);
    struct server srv = { .answer = -ETIME };
    struct debug_files *df = new_lookup(&srv, true);
    for (int i = 0; i < 3; i++) {
        assert_false(lookup(df, dir, "root", true, r));
        assert_int_equal(r->debuginfod, DEBUGINFOD_NO_ANSWER);
        assert_int_equal(r->debuginfod_error, ETIME);
    }
    assert_int_equal(srv.asked, 1);
    struct debug_files_stats st;
    debug_files_stats(df, &st);
    assert_int_equal(st.asked, 1);
    assert_int_equal(st.no_answer, 1);
    assert_int_equal(st.first_error, ETIME);
    assert_string_equal(st.first_failed, "/lib/libx.so");
    debug_files_free(df);

    /* no shared results (NULL): the local places alone, nothing asked */
    assert_false(lookup(NULL, dir, "root", true, r));
    assert_int_equal(r->debuginfod, DEBUGINFOD_OFF);
    assert_int_equal(srv.asked, 1);
    free(r);
    run("rm -r '%s'", dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_id),
        cmocka_unit_test(test_debuglink_crc),
        cmocka_unit_test(test_local_places_first),
        cmocka_unit_test(test_debuginfod_last_and_once),
        cmocka_unit_test(test_no_answer_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
