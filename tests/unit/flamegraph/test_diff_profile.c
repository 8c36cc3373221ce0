/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_diff_profile.c: unit tests of the diff merge (diff_profile_new): every stack of either profile with
 * its count in each (difffolded.pl's lines), stacks in one profile only, frames the after profile has never
 * seen, duplicate lines summed, --normalize's rounding down (and its exactness past 64-bit products), the
 * summary, and the differential SVG's colours (flamegraph.pl's scale) and tooltips. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flamegraph/flamegraph.h"
#include "flamegraph/svg_internal.h"

static struct profile *read_text(const char *text)
{
    struct profile *p = profile_new();
    assert_non_null(p);
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(in);
    char err[256];
    assert_int_equal(profile_read_folded(p, in, "t.folded", NULL, NULL, err, sizeof(err)), 0);
    fclose(in);
    return p;
}

/* The diff of two folded texts; before is freed here, after is the diff's. */
static struct diff_profile *diff_of(const char *before_text, const char *after_text, bool normalize)
{
    struct profile *before = read_text(before_text);
    struct diff_profile *d = diff_profile_new(before, read_text(after_text), normalize);
    profile_free(before);
    assert_non_null(d);
    return d;
}

/* What a writer of d writes, as a string (free it). */
static char *written(const struct diff_profile *d, bool svg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(svg ? diff_profile_write_svg(d, out, NULL) : diff_profile_write_folded(d, out), 0);
    assert_int_equal(fclose(out), 0);
    return buf;
}

static void assert_folded(const struct diff_profile *d, const char *expected)
{
    char *text = written(d, false);
    assert_string_equal(text, expected);
    free(text);
}

static void test_every_stack_of_either_with_both_counts(void **state)
{
    (void)state;
    struct diff_profile *d = diff_of("main;a;b 10\nmain;a;c 5\nmain;d 3\nmain;a 2\n",
                                     "main;a;b 20\nmain;a;c 5\nmain;e 4\nmain;a 1\n", false);
    /* main;d only before, main;e only after; main alone ends no stack in either: no line */
    assert_folded(d, "main;a 2 1\nmain;a;b 10 20\nmain;a;c 5 5\nmain;d 3 0\nmain;e 0 4\n");
    struct diff_summary s;
    diff_profile_summary(d, &s);
    assert_int_equal(s.stacks, 5);
    assert_int_equal(s.grew, 2);
    assert_int_equal(s.shrank, 2);
    assert_int_equal(s.only_before, 1);
    assert_int_equal(s.only_after, 1);
    assert_int_equal(s.before_total, 20);
    assert_int_equal(s.after_total, 30);
    diff_profile_free(d);
}

static void test_frames_only_before_knows_and_duplicates(void **state)
{
    (void)state;
    /* before's names are interned in another order than after's; a stack twice in a file is summed; a
     * stack only before whose prefix after has still gets its own line */
    struct diff_profile *d = diff_of("x;y;z 1\nq 4\nx;y;z 2\nx 7\n", "x 1\nx;w 2\n", false);
    assert_folded(d, "q 4 0\nx 7 1\nx;w 0 2\nx;y;z 3 0\n");
    diff_profile_free(d);
}

static void test_normalize_rounds_down(void **state)
{
    (void)state;
    /* before 20 samples, after 30: each before count x 30 / 20, rounded down (difffolded.pl's int()) */
    struct diff_profile *d = diff_of("main;a;b 10\nmain;a;c 5\nmain;d 3\nmain;a 2\n",
                                     "main;a;b 20\nmain;a;c 5\nmain;e 4\nmain;a 1\n", true);
    assert_folded(d, "main;a 3 1\nmain;a;b 15 20\nmain;a;c 7 5\nmain;d 4 0\nmain;e 0 4\n");
    struct diff_summary s;
    diff_profile_summary(d, &s);
    assert_int_equal(s.before_total, 29);
    assert_int_equal(s.shrank, 3);
    diff_profile_free(d);
    /* scaled down to 0, a stack only before still has its line */
    d = diff_of("a 1\nb 999\n", "b 10\n", true);
    assert_folded(d, "a 0 0\nb 9 10\n");
    diff_profile_free(d);
    /* equal totals: nothing scaled */
    d = diff_of("a 3\nb 7\n", "a 6\nb 4\n", true);
    assert_folded(d, "a 3 6\nb 7 4\n");
    diff_profile_free(d);
}

static void test_normalize_past_64_bit_products(void **state)
{
    (void)state;
    /* 2^40 x 3 x 2^40 overflows 64 bits: the quotient is still exact, rounded down */
    struct diff_profile *d = diff_of("a 1099511627776\nb 2199023255552\n", "a 1099511627775\n", true);
    /* totals 3 x 2^40 and 2^40 - 1: a = 2^40 x (2^40 - 1) / (3 x 2^40) = 366503875925 */
    assert_folded(d, "a 366503875925 1099511627775\nb 733007751850 0\n");
    diff_profile_free(d);
}

static void test_zero_total_refused(void **state)
{
    (void)state;
    struct profile *before = read_text("a 0\n"), *after = read_text("a 1\n");
    errno = 0;
    assert_null(diff_profile_new(before, after, false));    /* after is freed */
    assert_int_equal(errno, EINVAL);
    profile_free(before);
}

/* The fill (0xRRGGBB) and title of the frame whose title starts with "NAME (" in svg. */
static void frame_of(const char *svg, const char *name, char *title, size_t title_len, unsigned *fill)
{
    char key[128];
    snprintf(key, sizeof(key), "<title>%s (", name);
    const char *at = strstr(svg, key);
    assert_non_null(at);
    const char *end = strstr(at, "</title>");
    assert_non_null(end);
    size_t len = (size_t)(end - at) - 7;
    assert_true(len < title_len);
    memcpy(title, at + 7, len);
    title[len] = '\0';
    const char *f = strstr(end, "fill=\"#");
    assert_non_null(f);
    assert_int_equal(sscanf(f, "fill=\"#%6x\"", fill), 1);
}

static void test_svg_colours_and_tooltips(void **state)
{
    (void)state;
    struct diff_profile *d = diff_of("main;a;b 10\nmain;a;c 5\nmain;d 3\nmain;a 2\n",
                                     "main;a;b 20\nmain;a;c 5\nmain;e 4\nmain;a 1\n", false);
    char *svg = written(d, true);
    char title[256];
    unsigned fill = 0;
    /* the largest change of a stack (b: +10) is the deepest red */
    frame_of(svg, "b", title, sizeof(title), &fill);
    assert_string_equal(title, "b (20 samples, 66.67%; before 10, after 20; +33.33%)");
    assert_int_equal(fill, 0xff0000);
    /* e: +4 of 10: the other channels int(210 x 6 / 10) = 126 */
    frame_of(svg, "e", title, sizeof(title), &fill);
    assert_string_equal(title, "e (4 samples, 13.33%; before 0, after 4; +13.33%)");
    assert_int_equal(fill, 0xff7e7e);
    /* a: its own samples -1 (shrank), its frame 17 -> 26 samples: blue, int(210 x 9 / 10) = 189 */
    frame_of(svg, "a", title, sizeof(title), &fill);
    assert_string_equal(title, "a (26 samples, 86.67%; before 17, after 26; -3.33%)");
    assert_int_equal(fill, 0xbdbdff);
    /* unchanged, and frames with no samples of their own: white */
    frame_of(svg, "c", title, sizeof(title), &fill);
    assert_string_equal(title, "c (5 samples, 16.67%; before 5, after 5; 0.00%)");
    assert_int_equal(fill, 0xffffff);
    frame_of(svg, "main", title, sizeof(title), &fill);
    assert_int_equal(fill, 0xffffff);
    frame_of(svg, "all", title, sizeof(title), &fill);
    assert_string_equal(title, "all (30 samples, 100.00%; before 20, after 30)");
    /* d is in before only: no width in after, not drawn */
    assert_null(strstr(svg, "<title>d ("));
    free(svg);

    struct svg_options reversed;
    svg_options_init(&reversed);
    reversed.reverse = true;
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    errno = 0;
    assert_int_equal(diff_profile_write_svg(d, out, &reversed), -1);
    assert_int_equal(errno, EINVAL);
    fclose(out);
    diff_profile_free(d);
}

static void test_diff_colour_scale(void **state)
{
    (void)state;
    assert_int_equal(svg_diff_color(0, 5), 0xffffff);
    assert_int_equal(svg_diff_color(5, 5), 0xff0000);
    assert_int_equal(svg_diff_color(-5, 5), 0x0000ff);
    assert_int_equal(svg_diff_color(1, 3), 0xff8c8c);       /* int(210 x 2 / 3) = 140 */
    assert_int_equal(svg_diff_color(-2, 3), 0x4646ff);      /* int(210 x 1 / 3) = 70 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_stack_of_either_with_both_counts),
        cmocka_unit_test(test_frames_only_before_knows_and_duplicates),
        cmocka_unit_test(test_normalize_rounds_down),
        cmocka_unit_test(test_normalize_past_64_bit_products),
        cmocka_unit_test(test_zero_total_refused),
        cmocka_unit_test(test_svg_colours_and_tooltips),
        cmocka_unit_test(test_diff_colour_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
