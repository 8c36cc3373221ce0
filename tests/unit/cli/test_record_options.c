/* test_record_options.c: unit tests of cli/record_options (`taskspy record` option parsing): the defaults, every
 * option in short and long form, each invalid value (pid, duration, frequency, call graph, stack size, group-by,
 * await points, markers, format), unknown options, a missing value, -p together with a command, neither, the
 * format taken from the .svg/.folded/.txt extension or refused for another; and of cli/output_file: open in a
 * mkdtemp directory creates only a hidden temporary file, commit renames it into place with its content and the
 * mode a plain create gives, abort leaves nothing, an unwritable / nonexistent directory or a directory as the
 * path fails with a message and leaves nothing, a rename that fails on commit removes the temporary file. */
#include <setjmp.h>
#include <stdarg.h>
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
#include "cli/record_options.h"

/* ---- record options ---------------------------------------------------------------------------------------- */

struct parsed {
    struct record_options o;
    int rc;
    char err[256];
};

/* Parse a NULL-terminated list of arguments after "record". */
static struct parsed parse_list(char **args)
{
    static char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"record";
    for (; args[argc - 1]; argc++) {
        assert_true(argc < 63);
        argv[argc] = args[argc - 1];
    }
    argv[argc] = NULL;
    struct parsed p;
    memset(&p, 0, sizeof(p));
    p.rc = record_options_parse(&p.o, argc, argv, p.err, sizeof(p.err));
    return p;
}

#define PARSE(...) parse_list((char *[]){ __VA_ARGS__, NULL })

/* Parsing must fail with a message containing want. */
#define EXPECT_ERROR(want, ...)                                                                           \
    do {                                                                                                  \
        struct parsed p_ = PARSE(__VA_ARGS__);                                                            \
        if (p_.rc != -1 || !strstr(p_.err, (want)))                                                       \
            fail_msg("%s: rc %d err '%s', want -1 and '%s'", #__VA_ARGS__, p_.rc, p_.err, (want));      \
    } while (0)

static void test_defaults(void **state)
{
    (void)state;
    struct parsed p = PARSE("-p", "123", "-o", "out.svg");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.pid, 123);
    assert_null(p.o.argv);
    assert_true(p.o.duration == 0);
    assert_int_equal(p.o.frequency, 99);
    assert_string_equal(p.o.outputs.items[0].path, "out.svg");
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FLAMEGRAPH);
    assert_int_equal(p.o.call_graph, SAMPLER_CALL_GRAPH_DWARF);
    assert_int_equal(p.o.stack_size, 65528);
    assert_int_equal(p.o.group_by, GROUP_BY_ENTRY);
    assert_true(p.o.await_points);
    assert_string_equal(p.o.markers, "auto");
    assert_false(p.o.kernel);
    assert_null(p.o.title);
    assert_null(p.o.task_boundary);
}

static void test_every_option(void **state)
{
    (void)state;
    struct parsed p = PARSE("--pid", "77", "--duration", "2.5", "--frequency", "997", "--output", "x.data", "--format",
                            "folded", "--call-graph", "fp", "--stack-size", "100", "--group-by", "task",
                            "--await-points", "off", "--markers", "tokio,myrt", "--kernel", "--title", "My title",
                            "--task-boundary", "^rt::poll$");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.pid, 77);
    assert_true(p.o.duration == 2.5);
    assert_int_equal(p.o.frequency, 997);
    assert_string_equal(p.o.outputs.items[0].path, "x.data");
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);
    assert_int_equal(p.o.call_graph, SAMPLER_CALL_GRAPH_FP);
    assert_int_equal(p.o.stack_size, 104);   /* rounded up to a multiple of 8 */
    assert_int_equal(p.o.group_by, GROUP_BY_TASK);
    assert_false(p.o.await_points);
    assert_string_equal(p.o.markers, "tokio,myrt");
    assert_true(p.o.kernel);
    assert_string_equal(p.o.title, "My title");
    assert_string_equal(p.o.task_boundary, "^rt::poll$");

    /* short forms, "--opt=value" forms and the other values */
    p = PARSE("-p77", "-d", "0.5", "-F", "1", "-o", "y.txt", "-f", "flamegraph", "--call-graph=dwarf",
              "--group-by=none", "--await-points=on", "--markers=none", "--stack-size=8");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.pid, 77);
    assert_true(p.o.duration == 0.5);
    assert_int_equal(p.o.frequency, 1);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);   /* the extension tells; -f is for the others */
    assert_int_equal(p.o.call_graph, SAMPLER_CALL_GRAPH_DWARF);
    assert_int_equal(p.o.group_by, GROUP_BY_NONE);
    assert_true(p.o.await_points);
    assert_string_equal(p.o.markers, "none");
    assert_int_equal(p.o.stack_size, 8);
    p = PARSE("-p", "1", "-o", "z.svg", "--group-by", "entry", "-f", "svg", "--stack-size", "65528", "-F", "100000",
              "-p", "4194304");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.group_by, GROUP_BY_ENTRY);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FLAMEGRAPH);
    assert_int_equal(p.o.stack_size, 65528);
    assert_int_equal(p.o.frequency, 100000);
    assert_int_equal(p.o.pid, 4194304);   /* the last -p wins */
    p = PARSE("-p", "1", "-o", "z.svg", "--stack-size", "65521");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.stack_size, 65528);   /* rounded up, still within the maximum */
}

static void test_command(void **state)
{
    (void)state;
    struct parsed p = PARSE("-o", "x.folded", "--", "sleep", "1");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.pid, 0);
    assert_non_null(p.o.argv);
    assert_string_equal(p.o.argv[0], "sleep");
    assert_string_equal(p.o.argv[1], "1");
    assert_null(p.o.argv[2]);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);
    /* without "--": options stop at the command, whose own options stay its own */
    p = PARSE("-o", "x.txt", "./app", "-p", "5", "--kernel");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.pid, 0);
    assert_false(p.o.kernel);
    assert_string_equal(p.o.argv[0], "./app");
    assert_string_equal(p.o.argv[1], "-p");
    assert_string_equal(p.o.argv[3], "--kernel");
    assert_null(p.o.argv[4]);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);
}

static void test_invalid_values(void **state)
{
    (void)state;
    EXPECT_ERROR("invalid PID '0'", "-p", "0", "-o", "x.svg");
    EXPECT_ERROR("invalid PID '-3'", "-p", "-3", "-o", "x.svg");
    EXPECT_ERROR("invalid PID '1.5'", "-p", "1.5", "-o", "x.svg");
    EXPECT_ERROR("invalid PID 'abc'", "-p", "abc", "-o", "x.svg");
    EXPECT_ERROR("invalid PID '12x'", "-p", "12x", "-o", "x.svg");
    EXPECT_ERROR("invalid PID ''", "-p", "", "-o", "x.svg");
    EXPECT_ERROR("invalid PID '4194305'", "-p", "4194305", "-o", "x.svg");
    EXPECT_ERROR("invalid duration '0'", "-p", "1", "-d", "0", "-o", "x.svg");
    EXPECT_ERROR("invalid duration '-1'", "-p", "1", "-d", "-1", "-o", "x.svg");
    EXPECT_ERROR("invalid duration 'abc'", "-p", "1", "--duration", "abc", "-o", "x.svg");
    EXPECT_ERROR("invalid duration 'nan'", "-p", "1", "-d", "nan", "-o", "x.svg");
    EXPECT_ERROR("invalid duration 'inf'", "-p", "1", "-d", "inf", "-o", "x.svg");
    EXPECT_ERROR("invalid duration '5s'", "-p", "1", "-d", "5s", "-o", "x.svg");
    EXPECT_ERROR("invalid duration '1e9'", "-p", "1", "-d", "1e9", "-o", "x.svg");
    EXPECT_ERROR("invalid frequency '0'", "-p", "1", "-F", "0", "-o", "x.svg");
    EXPECT_ERROR("invalid frequency '100001'", "-p", "1", "-F", "100001", "-o", "x.svg");
    EXPECT_ERROR("invalid frequency '99.5'", "-p", "1", "-F", "99.5", "-o", "x.svg");
    EXPECT_ERROR("invalid frequency 'fast'", "-p", "1", "--frequency", "fast", "-o", "x.svg");
    EXPECT_ERROR("invalid --call-graph 'lbr'", "-p", "1", "--call-graph", "lbr", "-o", "x.svg");
    EXPECT_ERROR("invalid --call-graph 'DWARF'", "-p", "1", "--call-graph", "DWARF", "-o", "x.svg");
    EXPECT_ERROR("invalid --stack-size '7'", "-p", "1", "--stack-size", "7", "-o", "x.svg");
    EXPECT_ERROR("invalid --stack-size '65529'", "-p", "1", "--stack-size", "65529", "-o", "x.svg");
    EXPECT_ERROR("invalid --stack-size '100.5'", "-p", "1", "--stack-size", "100.5", "-o", "x.svg");
    EXPECT_ERROR("invalid --stack-size 'big'", "-p", "1", "--stack-size", "big", "-o", "x.svg");
    EXPECT_ERROR("invalid --group-by 'thread'", "-p", "1", "--group-by", "thread", "-o", "x.svg");
    EXPECT_ERROR("invalid --await-points 'yes'", "-p", "1", "--await-points", "yes", "-o", "x.svg");
    EXPECT_ERROR("invalid --markers ''", "-p", "1", "--markers", "", "-o", "x.svg");
    EXPECT_ERROR("unsupported format 'json'", "-p", "1", "-f", "json", "-o", "x.svg");
    EXPECT_ERROR("unsupported format 'perfetto'", "-p", "1", "--format", "perfetto", "-o", "x.svg");
}

static void test_unknown_and_missing(void **state)
{
    (void)state;
    EXPECT_ERROR("unknown option '--bogus'", "-p", "1", "--bogus", "-o", "x.svg");
    EXPECT_ERROR("unknown option '-z'", "-p", "1", "-z", "-o", "x.svg");
    EXPECT_ERROR("unknown option '-q'", "-q");
    EXPECT_ERROR("option '-o' needs a value", "-p", "1", "-o");
    EXPECT_ERROR("option '--pid' needs a value", "-o", "x.svg", "--pid");
    EXPECT_ERROR("option '--group-by' needs a value", "-p", "1", "-o", "x.svg", "--group-by");
    EXPECT_ERROR("option '-d' needs a value", "-p", "1", "-o", "x.svg", "-d");
}

static void test_target_and_output_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("either -p PID or a command", "-p", "5", "-o", "x.svg", "--", "ls");
    EXPECT_ERROR("either -p PID or a command", "-p", "5", "-o", "x.svg", "ls");
    EXPECT_ERROR("nothing to record", "-o", "x.svg");
    EXPECT_ERROR("nothing to record", "-o", "x.svg", "--");
    EXPECT_ERROR("no output file", "-p", "5");
    EXPECT_ERROR("no output file", "--", "ls");
}

static void test_format_from_extension(void **state)
{
    (void)state;
    struct parsed p = PARSE("-p", "1", "-o", "/tmp/dir.folded/graph.svg");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FLAMEGRAPH);
    p = PARSE("-p", "1", "-o", "a.svg.folded");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);
    p = PARSE("-p", "1", "-o", "stacks.txt");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);
    p = PARSE("-p", "1", "-o", "-", "-f", "folded");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_FOLDED);
    EXPECT_ERROR("cannot tell the format of 'x.png'", "-p", "1", "-o", "x.png");
    EXPECT_ERROR("cannot tell the format of 'svg'", "-p", "1", "-o", "svg");
    EXPECT_ERROR("cannot tell the format of 'x.svg.bak'", "-p", "1", "-o", "x.svg.bak");
    EXPECT_ERROR("cannot tell the format of '-'", "-p", "1", "-o", "-");
}

static void test_several_outputs(void **state)
{
    (void)state;
    struct parsed p = PARSE("-p", "1", "-o", "a.folded", "-o", "b.svg", "-o", "c.speedscope.json", "-o", "d.pb.gz",
                            "-o", "e.pprof", "-o", "f.data", "-f", "pprof", "-o", "-");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.n, 7);
    const enum output_format want[] = { FORMAT_FOLDED, FORMAT_FLAMEGRAPH, FORMAT_SPEEDSCOPE, FORMAT_PPROF,
                                        FORMAT_PPROF, FORMAT_PPROF, FORMAT_PPROF };
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(p.o.outputs.items[i].format, want[i]);
    assert_string_equal(p.o.outputs.items[5].path, "f.data");
    p = PARSE("-p", "1", "-o", "x.json", "--format", "speedscope");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_SPEEDSCOPE);
    p = PARSE("-p", "1", "-o", "a.trace.json", "-o", "b.json", "-f", "chrometrace");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.outputs.items[0].format, FORMAT_TRACE);
    assert_int_equal(p.o.outputs.items[1].format, FORMAT_TRACE);
    EXPECT_ERROR("cannot tell the format of 'b.data'", "-p", "1", "-o", "a.svg", "-o", "b.data");
    EXPECT_ERROR("only one output can go to standard output", "-p", "1", "-o", "-", "-o", "-", "-f", "folded");
    EXPECT_ERROR("too many outputs", "-p", "1", "-o", "1.svg", "-o", "2.svg", "-o", "3.svg", "-o", "4.svg", "-o",
                 "5.svg", "-o", "6.svg", "-o", "7.svg", "-o", "8.svg", "-o", "9.svg");
}

/* A parse that stops in the middle of a cluster of short options (here at -h) must not leave getopt state that
 * a later parse of another argv picks up. */
static void test_parse_twice_after_cluster(void **state)
{
    (void)state;
    FILE *saved = stdout;
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    stdout = sink;   /* the usage text goes to stdout */
    struct parsed p = PARSE("-hz");
    stdout = saved;
    fclose(sink);
    assert_int_equal(p.rc, 1);
    p = PARSE("-p", "5", "-o", "x.svg");
    if (p.rc != 0)
        print_error("second parse: rc %d err '%s' (stale getopt state from the first parse: reset with optind = 0)\n",
                    p.rc, p.err);
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.pid, 5);
}

/* ---- output_file ------------------------------------------------------------------------------------------ */

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
    (void)state;
    struct dir d;
    make_dir(&d);
    mode_t old_mask = umask(022);
    char path[512], names[1024], err[256] = "";
    snprintf(path, sizeof(path), "%s/out.folded", d.path);
    struct output_file o;
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), 0);
    assert_non_null(o.stream);
    /* only a hidden temporary file beside the destination */
    list_dir(&d, names, sizeof(names));
    assert_true(strncmp(names, ".out.folded.", 12) == 0);
    assert_null(strchr(names, '/'));
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
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), 0);
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
    assert_int_equal(output_file_open(&o, "rel.svg", err, sizeof(err)), 0);
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
    (void)state;
    struct dir d;
    make_dir(&d);
    char path[512], names[1024], err[256] = "";
    snprintf(path, sizeof(path), "%s/out.svg", d.path);
    struct output_file o;
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), 0);
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
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), 0);
    fputs("partial", o.stream);
    output_file_abort(&o);
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "out.svg");
    assert_string_equal(slurp(path), "old");
    remove_dir(&d);
}

static void test_output_open_failures(void **state)
{
    (void)state;
    struct dir d;
    make_dir(&d);
    char path[512], names[1024], err[256];
    struct output_file o;
    /* a directory that does not exist */
    snprintf(path, sizeof(path), "%s/missing/out.svg", d.path);
    err[0] = '\0';
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "No such file or directory"));
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "");
    /* a directory as the path */
    err[0] = '\0';
    assert_int_equal(output_file_open(&o, d.path, err, sizeof(err)), -1);
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
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot write"));
    list_dir(&d, names, sizeof(names));
    assert_string_equal(names, "file");
    /* a directory nobody can create files in, even root (/proc) */
    err[0] = '\0';
    assert_int_equal(output_file_open(&o, "/proc/taskspy-test-out.svg", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/proc/taskspy-test-out.svg"));
    /* a read-only directory (not for root, whom permissions do not stop) */
    if (geteuid() != 0) {
        struct dir ro;
        make_dir(&ro);
        assert_int_equal(chmod(ro.path, 0555), 0);
        snprintf(path, sizeof(path), "%s/out.svg", ro.path);
        err[0] = '\0';
        assert_int_equal(output_file_open(&o, path, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "Permission denied"));
        list_dir(&ro, names, sizeof(names));
        assert_string_equal(names, "");
        remove_dir(&ro);
    }
    remove_dir(&d);
}

/* The rename on commit fails (the destination became a directory meanwhile): an error, and no temporary file
 * left behind. */
static void test_output_commit_failure(void **state)
{
    (void)state;
    struct dir d;
    make_dir(&d);
    char path[512], names[1024], err[256] = "";
    snprintf(path, sizeof(path), "%s/out.svg", d.path);
    struct output_file o;
    assert_int_equal(output_file_open(&o, path, err, sizeof(err)), 0);
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
    (void)state;
    struct output_file o;
    char err[256] = "";
    assert_int_equal(output_file_open(&o, "-", err, sizeof(err)), 0);
    assert_ptr_equal(o.stream, stdout);
    assert_int_equal(output_file_commit(&o, err, sizeof(err)), 0);
    assert_int_equal(output_file_open(&o, "-", err, sizeof(err)), 0);
    output_file_abort(&o);   /* never closes stdout */
    assert_true(fflush(stdout) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_invalid_values),
        cmocka_unit_test(test_unknown_and_missing),
        cmocka_unit_test(test_target_and_output_errors),
        cmocka_unit_test(test_format_from_extension),
        cmocka_unit_test(test_several_outputs),
        cmocka_unit_test(test_parse_twice_after_cluster),
        cmocka_unit_test(test_output_commit),
        cmocka_unit_test(test_output_abort),
        cmocka_unit_test(test_output_open_failures),
        cmocka_unit_test(test_output_commit_failure),
        cmocka_unit_test(test_output_stdout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
