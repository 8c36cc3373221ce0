/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_folded_reader.c: unit tests of profile_read_folded: well-formed folded stacks and prefix merging,
 * the formats of other tools (count first, CRLF, comments), malformed lines reported by line number, and
 * inputs of many read chunks (read on two threads, from a stream or a file) giving the same profile as the
 * stacks added one by one, and a big file (read through a mapping) read as its bytes from a stream are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flamegraph/flamegraph.h"
#include "tests/unit/flamegraph/folded_text.h"

/* Read text into a fresh profile; warnings go to *warnings (caller frees). */
struct read_result {
    struct profile *p;
    int rc;
    struct folded_read_report report;
    char err[256];
    char *warnings;
};

/* The reader's warnings, one a line, as the cli prints them. */
static void warn_to_stream(void *ctx, const char *message)
{
    fprintf(ctx, "%s\n", message);
}

static struct read_result read_text(const char *text, size_t len)
{
    struct read_result r = { 0 };
    r.p = profile_new();
    assert_non_null(r.p);
    FILE *in = fmemopen((void *)text, len, "r");
    assert_non_null(in);
    size_t warn_len = 0;
    FILE *warn = open_memstream(&r.warnings, &warn_len);
    assert_non_null(warn);
    const struct folded_warnings warnings = { .warn = warn_to_stream, .ctx = warn };
    r.rc = profile_read_folded(r.p, in, "t.folded", &warnings, &r.report, r.err, sizeof(r.err));
    fclose(warn);
    fclose(in);
    return r;
}

static void result_free(struct read_result *r)
{
    profile_free(r->p);
    free(r->warnings);
}

/* The node reached from the root by the ';'-separated path, or NULL. */
static const struct profile_node *find_path(const struct profile *p, const char *path)
{
    size_t n = 0;
    const struct profile_node *nodes = profile_nodes(p, &n);
    uint32_t at = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *save = NULL, *name = strtok_r(buf, ";", &save); name; name = strtok_r(NULL, ";", &save)) {
        uint32_t c = child_named(p, at, name);
        if (c == PROFILE_NO_NODE)
            return NULL;
        at = c;
    }
    return &nodes[at];
}

static void test_merges_equal_prefixes(void **state)
{
    (void)state;
    const char text[] = "main;foo;bar 3\nmain;foo;baz 2\nmain;foo;bar 4\nmain 1\n";
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.lines, 4);
    assert_int_equal(r.report.stacks, 4);
    assert_int_equal(r.report.skipped, 0);
    assert_int_equal(profile_total(r.p), 10);
    assert_int_equal(profile_distinct_stacks(r.p), 3);
    const struct profile_node *main_node = find_path(r.p, "main");
    assert_non_null(main_node);
    assert_int_equal(main_node->total, 10);
    assert_int_equal(main_node->self, 1);
    assert_int_equal(find_path(r.p, "main;foo")->total, 9);
    assert_int_equal(find_path(r.p, "main;foo;bar")->total, 7);
    assert_int_equal(find_path(r.p, "main;foo;baz")->self, 2);
    size_t n = 0;
    profile_nodes(r.p, &n);
    assert_int_equal(n, 5);                       /* root, main, foo, bar, baz */
    assert_string_equal(r.warnings, "");
    result_free(&r);
}

static void test_crlf_comments_blank_and_spaces_in_names(void **state)
{
    (void)state;
    const char text[] = "# perf header\r\n\r\ntask: app::serve;handle @ lib.rs:42 5\r\n"
                        "tokio-runtime-worker;poll_[k]\t2\r\n   \nlast;line 1";
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.stacks, 3);
    assert_int_equal(r.report.skipped, 0);
    assert_int_equal(find_path(r.p, "task: app::serve;handle @ lib.rs:42")->total, 5);
    assert_int_equal(find_path(r.p, "tokio-runtime-worker;poll_[k]")->total, 2);
    assert_int_equal(find_path(r.p, "last;line")->total, 1);
    result_free(&r);
}

static void test_count_first_and_whole_decimal(void **state)
{
    (void)state;
    const char text[] = "  7 main;foo\nmain;bar 3.0\n";
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(find_path(r.p, "main;foo")->total, 7);
    assert_int_equal(find_path(r.p, "main;bar")->total, 3);
    result_free(&r);
}

static void test_malformed_lines_reported_and_skipped(void **state)
{
    (void)state;
    const char text[] = "ok;one 1\n"       /* 1 */
                        "no_count\n"       /* 2 */
                        "neg;count -5\n"   /* 3 */
                        "word;count abc\n" /* 4 */
                        "a;;b 2\n"         /* 5 */
                        ";lead 2\n"        /* 6 */
                        "trail; 2\n"       /* 7 */
                        "half;count 1.5\n" /* 8 */
                        "big 99999999999999999999999\n" /* 9 */
                        "ok;two 2\n";      /* 10 */
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.lines, 10);
    assert_int_equal(r.report.stacks, 2);
    assert_int_equal(r.report.skipped, 8);
    assert_int_equal(profile_total(r.p), 3);
    assert_non_null(strstr(r.warnings, "t.folded:2: no count"));
    assert_non_null(strstr(r.warnings, "t.folded:3: negative count"));
    assert_non_null(strstr(r.warnings, "t.folded:4: count is not a number"));
    assert_non_null(strstr(r.warnings, "t.folded:5: empty frame name"));
    assert_non_null(strstr(r.warnings, "t.folded:6: empty frame name"));
    assert_non_null(strstr(r.warnings, "t.folded:7: empty frame name"));
    assert_non_null(strstr(r.warnings, "t.folded:8: count is not a whole number"));
    assert_non_null(strstr(r.warnings, "t.folded:9: count too large"));
    assert_null(strstr(r.warnings, "t.folded:1:"));
    assert_null(strstr(r.warnings, "t.folded:10:"));
    result_free(&r);
}

static void test_nul_byte_line_skipped(void **state)
{
    (void)state;
    const char text[] = "a;b\0c 1\nd 2\n";
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.skipped, 1);
    assert_non_null(strstr(r.warnings, "t.folded:1: NUL byte"));
    assert_int_equal(profile_total(r.p), 2);
    result_free(&r);
}

static void test_huge_line_skipped_with_line_number(void **state)
{
    (void)state;
    size_t huge = 9u << 20;                      /* over the 8 MiB line limit */
    char *text = malloc(huge + 64);
    assert_non_null(text);
    size_t len = (size_t)sprintf(text, "first 1\n");
    memset(text + len, 'x', huge);
    len += huge;
    len += (size_t)sprintf(text + len, " 5\nafter;huge 3\n");
    struct read_result r = read_text(text, len);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.lines, 3);
    assert_int_equal(r.report.skipped, 1);
    assert_non_null(strstr(r.warnings, "t.folded:2: line longer than"));
    assert_int_equal(find_path(r.p, "after;huge")->total, 3);
    assert_int_equal(profile_total(r.p), 4);
    result_free(&r);
    free(text);
}

static void test_long_line_under_limit_accepted(void **state)
{
    (void)state;
    /* 2000 frames of 200 bytes: 400 KB, more than the reader's first buffer */
    size_t frames = 2000, frame_len = 200;
    char *text = malloc(frames * (frame_len + 1) + 16);
    assert_non_null(text);
    size_t len = 0;
    for (size_t i = 0; i < frames; i++) {
        len += (size_t)sprintf(text + len, "%s%05zu", i ? ";" : "", i);
        memset(text + len, 'f', frame_len - 5);
        len += frame_len - 5;
    }
    len += (size_t)sprintf(text + len, " 9\n");
    struct read_result r = read_text(text, len);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.skipped, 0);
    assert_int_equal(profile_total(r.p), 9);
    size_t n = 0;
    profile_nodes(r.p, &n);
    assert_int_equal(n, frames + 1);
    result_free(&r);
    free(text);
}

static void test_no_valid_line_is_an_error(void **state)
{
    (void)state;
    const char text[] = "garbage\nmore garbage\n";
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, -1);
    assert_non_null(strstr(r.err, "t.folded: no valid folded stack lines"));
    assert_int_equal(r.report.skipped, 2);
    result_free(&r);

    struct read_result empty = read_text("", 0);
    assert_int_equal(empty.rc, -1);
    assert_int_equal(empty.report.lines, 0);
    result_free(&empty);
}

static void test_read_error_is_fatal(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    FILE *in = fopen("/dev/null", "w");         /* reading a write-only stream fails */
    assert_non_null(in);
    char err[256] = "";
    struct folded_read_report report;
    assert_int_equal(profile_read_folded(p, in, "wo", NULL, &report, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "wo: read error"));
    fclose(in);
    profile_free(p);
}

/* Consecutive lines share byte prefixes that end inside a frame, at a ';' or at the end of the stack: only
 * whole frames followed by ';' in both lines may be reused. */
static void test_shared_prefixes_between_lines(void **state)
{
    (void)state;
    const char text[] = "a;bc;d 1\na;bc;e 2\na;bd 4\na;b 8\nab;c 16\nab 32\na;;x 1\na;bc;d 64\n";
    struct read_result r = read_text(text, sizeof(text) - 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.skipped, 1);
    assert_int_equal(find_path(r.p, "a;bc;d")->total, 65);
    assert_int_equal(find_path(r.p, "a;bc;e")->total, 2);
    assert_int_equal(find_path(r.p, "a;bc")->total, 67);
    assert_int_equal(find_path(r.p, "a;bd")->total, 4);
    assert_int_equal(find_path(r.p, "a;b")->total, 8);
    assert_int_equal(find_path(r.p, "a")->total, 79);
    assert_int_equal(find_path(r.p, "ab;c")->total, 16);
    assert_int_equal(find_path(r.p, "ab")->total, 48);
    assert_int_equal(profile_frame_count(r.p), 8);      /* a bc d e bd b ab c */
    result_free(&r);
}

static void test_merges_into_existing_profile(void **state)
{
    (void)state;
    struct read_result r = read_text("a;b 1\n", 6);
    assert_int_equal(r.rc, 0);
    FILE *in = fmemopen((void *)"a;b 2\na;c 4\n", 12, "r");
    char err[128];
    assert_int_equal(profile_read_folded(r.p, in, "second", NULL, NULL, err, sizeof(err)), 0);
    fclose(in);
    assert_int_equal(find_path(r.p, "a;b")->total, 3);
    assert_int_equal(find_path(r.p, "a")->total, 7);
    result_free(&r);
}

/* Folded text of many random stacks (well over one read chunk), some lines malformed or with count 0;
 * expected holds the same stacks added one by one with profile_add. */
static char *many_stacks(size_t lines, struct profile *expected, size_t *len)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    assert_non_null(out);
    uint32_t x = 12345;
    const char *names[40];
    char frames[40][32];
    for (size_t i = 0; i < lines; i++) {
        size_t depth = 0;
        x = x * 1103515245u + 12345u;
        size_t n = 1 + (x >> 16) % 30;
        for (size_t d = 0; d < n; d++) {
            x = x * 1103515245u + 12345u;
            /* few roots, more names deeper: shared prefixes and a tree of many nodes */
            snprintf(frames[d], sizeof(frames[d]), "f%u_%u", (unsigned)d, (unsigned)((x >> 16) % (d < 3 ? 3 : 200)));
            names[depth++] = frames[d];
        }
        unsigned count = (unsigned)(x >> 8) % 5;        /* 0: names interned, nothing counted */
        for (size_t d = 0; d < depth; d++)
            fprintf(out, "%s%s", d ? ";" : "", names[d]);
        fprintf(out, " %u\n", count);
        if (i % 97 == 0)
            fputs("bad;line\n", out);                  /* no count: skipped */
        if (count > 0)
            assert_int_equal(profile_add(expected, names, depth, count), 0);
    }
    assert_int_equal(fclose(out), 0);
    return text;
}

static void test_many_chunks_match_stacks_added_one_by_one(void **state)
{
    (void)state;
    struct profile *expected = profile_new();
    assert_non_null(expected);
    size_t len = 0;
    char *text = many_stacks(40000, expected, &len);
    assert_true(len > 4 * 512 * 1024);                  /* many read chunks: the tree is built on a thread */
    char *want = folded_text(expected);

    struct read_result r = read_text(text, len);        /* a memory stream */
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.report.skipped, (40000 + 96) / 97);
    assert_int_equal(profile_total(r.p), profile_total(expected));
    assert_int_equal(profile_distinct_stacks(r.p), profile_distinct_stacks(expected));
    char *got = folded_text(r.p);
    assert_string_equal(got, want);
    free(got);
    result_free(&r);

    FILE *file = tmpfile();                             /* a file: its size guesses the tables' size */
    assert_non_null(file);
    assert_int_equal(fwrite(text, 1, len, file), len);
    rewind(file);
    struct profile *p = profile_new();
    assert_non_null(p);
    char err[128];
    assert_int_equal(profile_read_folded(p, file, "file", NULL, NULL, err, sizeof(err)), 0);
    fclose(file);
    got = folded_text(p);
    assert_string_equal(got, want);
    assert_non_null(find_path(p, "f0_0"));
    free(got);
    profile_free(p);

    free(want);
    free(text);
    profile_free(expected);
}

/* What the reader says of its mapping: each call's start and length. */
struct mapping_calls {
    const void *start[4];
    size_t len[4];
    size_t n;
};

/* Where the warnings go and the mapping calls are kept. */
struct mapping_ctx {
    FILE *warn;
    struct mapping_calls *calls;
};

static void record_mapping(void *ctx, const void *start, size_t len)
{
    struct mapping_ctx *c = ctx;
    if (c->calls->n < 4) {
        c->calls->start[c->calls->n] = start;
        c->calls->len[c->calls->n] = len;
    }
    c->calls->n++;
}

static void warn_to_ctx_stream(void *ctx, const char *message)
{
    struct mapping_ctx *c = ctx;
    fprintf(c->warn, "%s\n", message);
}

/* A profile read from file with its warnings dropped and its mapping calls in *calls. */
static struct profile *read_file_quietly(FILE *file, struct mapping_calls *calls, struct folded_read_report *report)
{
    struct profile *p = profile_new();
    assert_non_null(p);
    struct mapping_ctx ctx = { fopen("/dev/null", "w"), calls };
    assert_non_null(ctx.warn);
    const struct folded_warnings warnings = { .warn = warn_to_ctx_stream, .ctx = &ctx, .mapped = record_mapping };
    calls->n = 0;
    char err[256];
    assert_int_equal(profile_read_folded(p, file, "t.folded", &warnings, report, err, sizeof(err)), 0);
    fclose(ctx.warn);
    return p;
}

/* A file of many chunks with every kind of line (CRLF, comments, count first, malformed, a line over the limit,
 * the last one without its '\n'), read through a mapping, gives what its bytes give read from a memory stream:
 * the same profile, report and warnings. The reader says where the mapping is, then that it is gone. A file
 * already read from is read on from there (as a stream). */
static void test_mapped_file_reads_as_a_stream(void **state)
{
    (void)state;
    struct profile *expected = profile_new();
    assert_non_null(expected);
    size_t stacks_len = 0;
    char *stacks = many_stacks(6000, expected, &stacks_len);   /* under 100 malformed: each is reported */
    size_t huge = 9u << 20;                             /* over the line limit */
    size_t cap = stacks_len + huge + 4096;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t len = (size_t)snprintf(text, cap, "# a comment\r\nmain;crlf 3\r\n7 main;count;first\nno count\n");
    memcpy(text + len, stacks, stacks_len);
    len += stacks_len;
    memset(text + len, 'x', huge);
    len += huge;
    len += (size_t)snprintf(text + len, cap - len, " 2\nmain;;empty 1\nmain;last;unended 5");
    free(stacks);

    struct read_result want = read_text(text, len);
    assert_int_equal(want.rc, 0);
    char *want_folded = folded_text(want.p);

    FILE *file = tmpfile();
    assert_non_null(file);
    assert_int_equal(fwrite(text, 1, len, file), len);
    rewind(file);
    struct read_result got = { .p = profile_new() };
    assert_non_null(got.p);
    size_t warn_len = 0;
    FILE *warn = open_memstream(&got.warnings, &warn_len);
    assert_non_null(warn);
    struct mapping_calls calls = { 0 };
    struct mapping_ctx ctx = { warn, &calls };
    const struct folded_warnings warnings = { .warn = warn_to_ctx_stream, .ctx = &ctx, .mapped = record_mapping };
    got.rc = profile_read_folded(got.p, file, "t.folded", &warnings, &got.report, got.err, sizeof(got.err));
    fclose(warn);
    assert_int_equal(got.rc, 0);
    assert_int_equal(calls.n, 2);                       /* mapped, then unmapped */
    assert_non_null(calls.start[0]);
    assert_int_equal(calls.len[0], len);
    assert_null(calls.start[1]);
    assert_int_equal(calls.len[1], 0);
    assert_int_equal(got.report.lines, want.report.lines);
    assert_int_equal(got.report.stacks, want.report.stacks);
    assert_int_equal(got.report.skipped, want.report.skipped);
    assert_string_equal(got.warnings, want.warnings);
    assert_non_null(strstr(got.warnings, "line longer than"));
    char *got_folded = folded_text(got.p);
    assert_string_equal(got_folded, want_folded);
    assert_non_null(find_path(got.p, "main;last;unended"));
    free(got_folded);
    result_free(&got);

    /* a file read from already: the rest only, as a stream */
    rewind(file);
    char first[64];
    assert_non_null(fgets(first, sizeof(first), file));    /* "# a comment" */
    struct folded_read_report report;
    struct profile *rest = read_file_quietly(file, &calls, &report);
    assert_int_equal(calls.n, 0);                       /* read as a stream */
    assert_int_equal(report.lines, want.report.lines - 1);
    assert_int_equal(profile_total(rest), profile_total(want.p));
    profile_free(rest);
    fclose(file);

    free(want_folded);
    result_free(&want);
    free(text);
    profile_free(expected);
}

/* Chunks of lines without a stack (comments, malformed lines) before the stacks of a mapped file: each chunk is
 * passed (an empty one once made the reader loop forever). */
static void test_mapped_chunks_without_stacks(void **state)
{
    (void)state;
    FILE *file = tmpfile();
    assert_non_null(file);
    for (int i = 0; i < 40000; i++)
        fprintf(file, i % 2 ? "# comment %d\n" : "malformed %d x\n", i);
    fputs("main;after 4\n", file);
    assert_true(ftell(file) > 2 * 256 * 1024);
    rewind(file);
    struct mapping_calls calls = { 0 };
    struct folded_read_report report;
    struct profile *p = read_file_quietly(file, &calls, &report);
    fclose(file);
    assert_int_equal(calls.n, 2);
    assert_int_equal(report.stacks, 1);
    assert_int_equal(report.skipped, 20000);
    assert_int_equal(profile_total(p), 4);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merges_equal_prefixes),
        cmocka_unit_test(test_crlf_comments_blank_and_spaces_in_names),
        cmocka_unit_test(test_count_first_and_whole_decimal),
        cmocka_unit_test(test_malformed_lines_reported_and_skipped),
        cmocka_unit_test(test_nul_byte_line_skipped),
        cmocka_unit_test(test_huge_line_skipped_with_line_number),
        cmocka_unit_test(test_long_line_under_limit_accepted),
        cmocka_unit_test(test_no_valid_line_is_an_error),
        cmocka_unit_test(test_read_error_is_fatal),
        cmocka_unit_test(test_shared_prefixes_between_lines),
        cmocka_unit_test(test_merges_into_existing_profile),
        cmocka_unit_test(test_many_chunks_match_stacks_added_one_by_one),
        cmocka_unit_test(test_mapped_file_reads_as_a_stream),
        cmocka_unit_test(test_mapped_chunks_without_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
