/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_output_file.c: unit tests of cli/output_file, each run twice: through O_TMPFILE (output_file_open on
 * /tmp, which has it) and through the named fallback (output_file_open_named). Open in a mkdtemp directory
 * creates no name (O_TMPFILE) or only a hidden temporary file (fallback); commit puts the file into place with
 * its content and the mode a plain create gives, also over an existing file; abort leaves nothing and an
 * existing destination untouched; an unwritable / nonexistent directory or a directory as the path fails with
 * a message and leaves nothing; a commit that cannot put the file into place leaves no temporary file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/output_file.h"

typedef int (*open_fn)(struct output_file *o, const char *path, char *err, size_t errlen);
static open_fn open_unnamed = output_file_open;
static open_fn open_named = output_file_open_named;

static bool uses_tmpfile(void **state)
{
    return *state == &open_unnamed;
}

static int open_output(void **state, struct output_file *o, const char *path, char *err, size_t errlen)
{
    return (*(open_fn *)*state)(o, path, err, errlen);
}

struct dir {
    char path[256];
};

static void make_dir(struct dir *d)
{
    snprintf(d->path, sizeof(d->path), "/tmp/taskspy-test-XXXXXX");
    assert_non_null(mkdtemp(d->path));
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Names in the directory, sorted, joined by '/'. */
static void list_dir(const struct dir *d, char *out, size_t len)
{
    DIR *dir = opendir(d->path);
    assert_non_null(dir);
    char names[16][256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        assert_true(n < 16);
        snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof(names[0]), name_cmp);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strncat(out, i ? "/" : "", len - strlen(out) - 1);
        strncat(out, names[i], len - strlen(out) - 1);
    }
}

static void remove_dir(const struct dir *d)
{
    DIR *dir = opendir(d->path);
    if (dir) {
        for (struct dirent *e; (e = readdir(dir));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[600];
            snprintf(p, sizeof(p), "%s/%s", d->path, e->d_name);
            if (unlink(p) != 0)
                rmdir(p);
        }
        closedir(dir);
    }
    chmod(d->path, 0700);
    rmdir(d->path);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_output_commit(void **state)
{
    struct dir d;
    make_dir(&d);
    mode_t old_mask = umask(022);
    char path[512], names[1024], err[256] = "";
    snprintf(path, sizeof(path), "%s/out.folded", d.path);
    struct output_file o;
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), 0);
    assert_non_null(o.stream);
    /* nothing under a name yet (O_TMPFILE), or only a hidden temporary file beside the destination */
    list_dir(&d, names, sizeof(names));
    if (uses_tmpfile(state))
        assert_string_equal(names, "");
    else
        assert_true(strncmp(names, ".out.folded.", 12) == 0 && !strchr(names, '/'));
    assert_int_equal(o.unnamed, uses_tmpfile(state));
    assert_int_equal(access(path, F_OK), -1);
    fputs("a;b 1\n", o.stream);
    fputs("a;c 2\n", o.stream);
    assert_int_equal(output_file_commit(&o, err, sizeof(err)), 0);
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "out.folded");
    assert_string_equal(slurp(path), "a;b 1\na;c 2\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);   /* 0666 & ~umask, not mkstemp's 0600 */

    /* committing over an existing file replaces it whole */
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), 0);
    assert_string_equal(slurp(path), "a;b 1\na;c 2\n");   /* untouched until commit */
    fputs("new 3\n", o.stream);
    assert_int_equal(output_file_commit(&o, err, sizeof(err)), 0);
    assert_string_equal(slurp(path), "new 3\n");
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "out.folded");

    /* a relative path (no directory part) */
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(d.path), 0);
    assert_int_equal(open_output(state, &o, "rel.svg", err, sizeof(err)), 0);
    fputs("<svg/>", o.stream);
    assert_int_equal(output_file_commit(&o, err, sizeof(err)), 0);
    assert_int_equal(chdir(cwd), 0);
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "out.folded/rel.svg");
    umask(old_mask);
    remove_dir(&d);
}

static void test_output_abort(void **state)
{
    struct dir d;
    make_dir(&d);
    char path[512], names[1024], err[256] = "";
    snprintf(path, sizeof(path), "%s/out.svg", d.path);
    struct output_file o;
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), 0);
    fputs("partial", o.stream);
    output_file_abort(&o);
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "");
    output_file_abort(&o);   /* twice is harmless */
    /* an existing destination survives an abort */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), 0);
    fputs("partial", o.stream);
    output_file_abort(&o);
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "out.svg");
    assert_string_equal(slurp(path), "old");
    remove_dir(&d);
}

static void test_output_open_failures(void **state)
{
    struct dir d;
    make_dir(&d);
    char path[512], names[1024], err[256];
    struct output_file o;
    /* a directory that does not exist */
    snprintf(path, sizeof(path), "%s/missing/out.svg", d.path);
    err[0] = '\0';
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "No such file or directory"));
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "");
    /* a directory as the path */
    err[0] = '\0';
    assert_int_equal(open_output(state, &o, d.path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "directory"));
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "");
    /* a regular file as a directory */
    snprintf(path, sizeof(path), "%s/file", d.path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/file/out.svg", d.path);
    err[0] = '\0';
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot write"));
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "file");
    /* a directory nobody can create files in, even root (/proc) */
    err[0] = '\0';
    assert_int_equal(open_output(state, &o, "/proc/taskspy-test-out.svg", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/proc/taskspy-test-out.svg"));
    /* a read-only directory (not for root, whom permissions do not stop) */
    if (geteuid() != 0) {
        struct dir ro;
        make_dir(&ro);
        assert_int_equal(chmod(ro.path, 0555), 0);
        snprintf(path, sizeof(path), "%s/out.svg", ro.path);
        err[0] = '\0';
        assert_int_equal(open_output(state, &o, path, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "Permission denied"));
        list_dir(&ro, names, sizeof(names));
        assert_string_equal(names, "");
        remove_dir(&ro);
    }
    remove_dir(&d);
}

/* Putting the file into place on commit fails (the destination became a directory meanwhile): an error, and no temporary file
 * left behind. */
static void test_output_commit_failure(void **state)
{
    struct dir d;
    make_dir(&d);
    char path[512], names[1024], err[256] = "";
    snprintf(path, sizeof(path), "%s/out.svg", d.path);
    struct output_file o;
    assert_int_equal(open_output(state, &o, path, err, sizeof(err)), 0);
    fputs("data", o.stream);
    assert_int_equal(mkdir(path, 0700), 0);
    char sub[600];
    snprintf(sub, sizeof(sub), "%s/keep", path);
    FILE *f = fopen(sub, "w");   /* a non-empty directory: rename cannot replace it */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(output_file_commit(&o, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "out.svg");   /* just the directory */
    unlink(sub);
    rmdir(path);
    remove_dir(&d);
}

static void test_output_stdout(void **state)
{
    struct output_file o;
    char err[256] = "";
    assert_int_equal(open_output(state, &o, "-", err, sizeof(err)), 0);
    assert_ptr_equal(o.stream, stdout);
    assert_int_equal(output_file_commit(&o, err, sizeof(err)), 0);
    assert_int_equal(open_output(state, &o, "-", err, sizeof(err)), 0);
    output_file_abort(&o);   /* never closes stdout */
    assert_true(fflush(stdout) == 0);
}

#define BOTH(test) cmocka_unit_test_prestate(test, &open_unnamed), cmocka_unit_test_prestate(test, &open_named)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_output_commit),
        BOTH(test_output_abort),
        BOTH(test_output_open_failures),
        BOTH(test_output_commit_failure),
        BOTH(test_output_stdout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
