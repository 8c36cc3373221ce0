/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_record_options.c: unit tests of cli/record_options (`taskspy record` option parsing): the defaults, every
 * option in short and long form, each invalid value (pid, duration, frequency, call graph, stack size, group-by,
 * await points, markers, format), unknown options, a missing value, -p together with a command, neither, the
 * format taken from the .svg/.folded/.txt extension or refused for another, --wait-output's .folded/.svg and
 * --waker-symbol, --wait-mode and --wait-frequency. (cli/output_file's tests moved to
 * test_output_file.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

/* --wait-output: .folded or .svg from the extension, nothing else; --waker-symbol only with it. */
static void test_wait_output(void **state)
{
    (void)state;
    struct parsed p = PARSE("-p", "5", "-o", "x.svg", "--wait-output", "w.folded", "--waker-symbol", "reg_waker");
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.o.wait_output, "w.folded");
    assert_int_equal(p.o.wait_format, FORMAT_FOLDED);
    assert_string_equal(p.o.waker_symbol, "reg_waker");
    p = PARSE("-p", "5", "-o", "x.folded", "--wait-output", "wait.svg");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.wait_format, FORMAT_FLAMEGRAPH);
    assert_null(p.o.waker_symbol);
    p = PARSE("-p", "5", "-o", "x.folded");
    assert_int_equal(p.rc, 0);
    assert_null(p.o.wait_output);
    EXPECT_ERROR("invalid --wait-output 'w.txt' (a .folded or .svg file)", "-p", "5", "-o", "x.svg", "--wait-output", "w.txt");
    EXPECT_ERROR("invalid --wait-output 'w.pb.gz'", "-p", "5", "-o", "x.svg", "--wait-output", "w.pb.gz");
    EXPECT_ERROR("invalid --wait-output '.svg'", "-p", "5", "-o", "x.svg", "--wait-output", ".svg");
    EXPECT_ERROR("invalid --wait-output '-'", "-p", "5", "-o", "x.svg", "--wait-output", "-");
    EXPECT_ERROR("--waker-symbol is for the wait profile", "-p", "5", "-o", "x.svg", "--waker-symbol", "f");
    EXPECT_ERROR("invalid --waker-symbol ''", "-p", "5", "-o", "x.svg", "--wait-output", "w.svg", "--waker-symbol", "");
}

/* --wait-mode snapshots|events (default: chosen at run time) and --wait-frequency HZ (0 when not given: the
 * default), only with --wait-output; --waker-symbol is the event mode's, --wait-frequency the snapshots'. */
static void test_wait_mode(void **state)
{
    (void)state;
    struct parsed p = PARSE("-p", "5", "-o", "x.svg", "--wait-output", "w.folded");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.wait_mode, WAIT_MODE_AUTO);
    assert_int_equal(p.o.wait_frequency, 0);
    p = PARSE("-p", "5", "-o", "x.svg", "--wait-output", "w.folded", "--wait-mode", "snapshots", "--wait-frequency", "97");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.wait_mode, WAIT_MODE_SNAPSHOTS);
    assert_int_equal(p.o.wait_frequency, 97);
    p = PARSE("-p", "5", "-o", "x.svg", "--wait-output", "w.folded", "--wait-mode=events", "--waker-symbol", "f");
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.o.wait_mode, WAIT_MODE_EVENTS);
    EXPECT_ERROR("invalid --wait-mode 'traps' (snapshots or events)", "-p", "5", "-o", "x.svg", "--wait-output",
                 "w.svg", "--wait-mode", "traps");
    EXPECT_ERROR("invalid --wait-frequency '0' (1 to 1000 Hz)", "-p", "5", "-o", "x.svg", "--wait-output", "w.svg",
                 "--wait-frequency", "0");
    EXPECT_ERROR("invalid --wait-frequency '1001'", "-p", "5", "-o", "x.svg", "--wait-output", "w.svg",
                 "--wait-frequency", "1001");
    EXPECT_ERROR("--wait-mode and --wait-frequency are for the wait profile", "-p", "5", "-o", "x.svg",
                 "--wait-mode", "events");
    EXPECT_ERROR("--wait-mode and --wait-frequency are for the wait profile", "-p", "5", "-o", "x.svg",
                 "--wait-frequency", "10");
    EXPECT_ERROR("--waker-symbol names a probe for --wait-mode events", "-p", "5", "-o", "x.svg", "--wait-output",
                 "w.svg", "--wait-mode", "snapshots", "--waker-symbol", "f");
    EXPECT_ERROR("--wait-frequency is the snapshot rate", "-p", "5", "-o", "x.svg", "--wait-output", "w.svg",
                 "--wait-mode", "events", "--wait-frequency", "10");
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
        cmocka_unit_test(test_wait_output),
        cmocka_unit_test(test_wait_mode),
        cmocka_unit_test(test_several_outputs),
        cmocka_unit_test(test_parse_twice_after_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
