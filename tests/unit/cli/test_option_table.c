/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_option_table.c: unit tests of cli/option_table: every kind of option stores its value where the table
 * says (string, flag, real, whole, int, choice, on/off), bounds and malformed numbers are refused with the
 * option's own message or the default one, empty strings and failed checks are refused, a missing value and
 * unknown short and long options are named, -h/--help stops the parse, options end at the first operand or
 * are permuted past it by the table's choice, and the help lines are aligned, list the values where the
 * table says, and leave hidden options out. Also: `taskspy record`'s help names every option of SPEC
 * section 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/option_table.h"
#include "cli/record_options.h"

struct values {
    const char *name;
    bool verbose;
    double ratio;
    unsigned count;
    int pid;
    int colour;
    bool fancy;
    const char *secret;
};

static bool no_spaces(const char *arg)
{
    return !strchr(arg, ' ');
}

static const char *colour_list(void)
{
    return "red, blue";
}

static const struct option_choice colours[] = { { "red", 1 }, { "blue", 2 }, { NULL, 0 } };

#define AT(f) offsetof(struct values, f)
static const struct option_spec specs[] = {
    { .name = "name", .short_name = 'n', .arg = "NAME", .kind = OPTION_STRING, .offset = AT(name),
      .non_empty = true, .valid = no_spaces, .help = "a name" },
    { .name = "verbose", .short_name = 'v', .kind = OPTION_FLAG, .offset = AT(verbose), .help = "say more" },
    { .name = "ratio", .arg = "R", .kind = OPTION_REAL, .offset = AT(ratio), .min = 0.5, .max = 2,
      .bad_value = "ratio '%s' is not from 0.5 to 2", .help = "a ratio" },
    { .name = "count", .short_name = 'c', .arg = "N", .kind = OPTION_WHOLE, .offset = AT(count), .min = 1,
      .max = 10, .help = "how many" },
    { .name = "pid", .short_name = 'p', .arg = "PID", .kind = OPTION_INT, .offset = AT(pid), .min = 1,
      .max = 4194304, .help = "a process" },
    { .name = "colour", .arg = "C", .kind = OPTION_CHOICE, .offset = AT(colour), .choices = colours,
      .help = "a colour", .help_list = colour_list },
    { .name = "a-rather-long-option-name", .arg = "on|off", .kind = OPTION_ON_OFF, .offset = AT(fancy),
      .help = "fancy" },
    { .name = "secret", .arg = "S", .kind = OPTION_STRING, .offset = AT(secret) },   /* hidden: no help */
    { .name = "help", .short_name = 'h', .kind = OPTION_HELP, .help = "this help" },
};

struct parse {
    struct values v;
    enum option_parse_result rc;
    int operands;
    int argc;
    char err[256];
};

static struct parse parse_list(bool stop_at_operand, char **args)
{
    static char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"cmd";
    for (; args[argc - 1]; argc++) {
        assert_true(argc < 31);
        argv[argc] = args[argc - 1];
    }
    argv[argc] = NULL;
    struct option_table t = { .specs = specs, .n = sizeof(specs) / sizeof(specs[0]),
                              .stop_at_operand = stop_at_operand };
    struct parse p;
    memset(&p, 0, sizeof(p));
    p.v.ratio = 1;                   /* defaults stay where no option is given */
    p.argc = argc;
    p.operands = -1;
    p.rc = option_table_parse(&t, &p.v, argc, argv, &p.operands, p.err, sizeof(p.err));
    return p;
}

#define PARSE(...) parse_list(true, (char *[]){ __VA_ARGS__, NULL })
#define PARSE_PERMUTED(...) parse_list(false, (char *[]){ __VA_ARGS__, NULL })
#define EXPECT_ERROR(want, ...)                                                                              \
    do {                                                                                                     \
        struct parse p_ = PARSE(__VA_ARGS__);                                                                \
        if (p_.rc != OPTIONS_ERROR || strcmp(p_.err, (want)) != 0)                                           \
            fail_msg("%s: rc %d err '%s', want '%s'", #__VA_ARGS__, p_.rc, p_.err, (want));                 \
    } while (0)

static void test_every_kind_is_stored(void **state)
{
    (void)state;
    struct parse p = PARSE("-n", "x", "-v", "--ratio", "1.5", "-c", "10", "--pid=42", "--colour", "blue",
                           "--a-rather-long-option-name", "off", "--secret", "s");
    assert_int_equal(p.rc, OPTIONS_OK);
    assert_string_equal(p.v.name, "x");
    assert_true(p.v.verbose);
    assert_true(p.v.ratio == 1.5);
    assert_int_equal(p.v.count, 10);
    assert_int_equal(p.v.pid, 42);
    assert_int_equal(p.v.colour, 2);
    assert_false(p.v.fancy);
    assert_string_equal(p.v.secret, "s");
    assert_int_equal(p.operands, p.argc);
    p = PARSE("-vc3", "-p7", "--a-rather-long-option-name=on");
    assert_int_equal(p.rc, OPTIONS_OK);
    assert_true(p.v.verbose);
    assert_int_equal(p.v.count, 3);
    assert_int_equal(p.v.pid, 7);
    assert_true(p.v.fancy);
    assert_true(p.v.ratio == 1);     /* untouched default */
    assert_null(p.v.name);
}

static void test_refused_values(void **state)
{
    (void)state;
    EXPECT_ERROR("ratio '3' is not from 0.5 to 2", "--ratio", "3");
    EXPECT_ERROR("ratio 'nan' is not from 0.5 to 2", "--ratio", "nan");
    EXPECT_ERROR("ratio 'inf' is not from 0.5 to 2", "--ratio", "inf");
    EXPECT_ERROR("ratio '1x' is not from 0.5 to 2", "--ratio", "1x");
    EXPECT_ERROR("invalid --count '0'", "-c", "0");
    EXPECT_ERROR("invalid --count '11'", "-c", "11");
    EXPECT_ERROR("invalid --count '2.5'", "-c", "2.5");
    EXPECT_ERROR("invalid --count ''", "-c", "");
    EXPECT_ERROR("invalid --pid '-1'", "-p", "-1");
    EXPECT_ERROR("invalid --pid '4194305'", "-p", "4194305");
    EXPECT_ERROR("invalid --colour 'green'", "--colour", "green");
    EXPECT_ERROR("invalid --colour 'RED'", "--colour", "RED");
    EXPECT_ERROR("invalid --a-rather-long-option-name 'yes'", "--a-rather-long-option-name", "yes");
    EXPECT_ERROR("invalid --name ''", "--name", "");
    EXPECT_ERROR("invalid --name 'a b'", "--name", "a b");
}

static void test_unknown_and_missing(void **state)
{
    (void)state;
    EXPECT_ERROR("unknown option '-z'", "-v", "-z");
    EXPECT_ERROR("unknown option '-z'", "-vz");
    EXPECT_ERROR("unknown option '--bogus'", "--bogus");
    EXPECT_ERROR("option '--verbose' takes no value", "--verbose=1");
    EXPECT_ERROR("option '--secret' needs a value", "--secret");
    EXPECT_ERROR("option '-c' needs a value", "-c");
    EXPECT_ERROR("option '--ratio' needs a value", "--ratio");
}

static void test_help_stops_the_parse(void **state)
{
    (void)state;
    struct parse p = PARSE("-v", "--help", "--bogus");
    assert_int_equal(p.rc, OPTIONS_HELP);
    p = PARSE("-vh");
    assert_int_equal(p.rc, OPTIONS_HELP);
    p = PARSE("-v");                 /* and a parse after it starts afresh */
    assert_int_equal(p.rc, OPTIONS_OK);
}

static void test_operands(void **state)
{
    (void)state;
    /* options end at the first operand: what follows belongs to the command */
    struct parse p = PARSE("-v", "prog", "-c", "3");
    assert_int_equal(p.rc, OPTIONS_OK);
    assert_int_equal(p.operands, 2);
    assert_int_equal(p.v.count, 0);
    p = PARSE("-c", "3", "--", "-v");
    assert_int_equal(p.rc, OPTIONS_OK);
    assert_int_equal(p.operands, 4);
    assert_false(p.v.verbose);
    /* permuted: options after an operand are options too, the operands come last */
    p = PARSE_PERMUTED("in.folded", "-c", "3", "-v");
    assert_int_equal(p.rc, OPTIONS_OK);
    assert_int_equal(p.v.count, 3);
    assert_true(p.v.verbose);
    assert_int_equal(p.operands, 4);
}

static char *help_text(void)
{
    struct option_table t = { .specs = specs, .n = sizeof(specs) / sizeof(specs[0]) };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    option_table_help(&t, out);
    fclose(out);
    return text;
}

static void test_help_lines(void **state)
{
    (void)state;
    char *text = help_text();
    assert_string_equal(text,
                        "  -n, --name NAME          a name\n"
                        "  -v, --verbose            say more\n"
                        "      --ratio R            a ratio\n"
                        "  -c, --count N            how many\n"
                        "  -p, --pid PID            a process\n"
                        "      --colour C           a colour: red, blue\n"
                        "      --a-rather-long-option-name on|off  fancy\n"
                        "  -h, --help               this help\n");
    free(text);
}

/* SPEC section 1's options of `taskspy record`, each in the help made from the table. */
static void test_record_help_names_every_option(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    record_usage(out);
    fclose(out);
    static const char *const lines[] = {
        "-p, --pid PID", "-d, --duration SECS", "-F, --frequency HZ", "-o, --output FILE", "-f, --format FMT",
        "--call-graph MODE", "--stack-size BYTES", "--group-by KEY", "--await-points on|off", "--markers SPEC",
        "--kernel", "--title TEXT", "-h, --help",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        if (!strstr(text, lines[i]))
            fail_msg("'%s' is not in record's help:\n%s", lines[i], text);
    assert_true(strncmp(text, "usage: taskspy record ", 22) == 0);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_is_stored),
        cmocka_unit_test(test_refused_values),
        cmocka_unit_test(test_unknown_and_missing),
        cmocka_unit_test(test_help_stops_the_parse),
        cmocka_unit_test(test_operands),
        cmocka_unit_test(test_help_lines),
        cmocka_unit_test(test_record_help_names_every_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
