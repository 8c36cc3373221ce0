/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_svg.c: unit tests of the SVG flame graph writer: XML escaping and UTF-8 sanitising, label
 * truncation, frame classification and stable colours, layout (prefix merging, sibling order, minwidth),
 * inverted and reversed graphs, options and the embedded script. */
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

static char *escaped(const char *s, size_t len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    assert_non_null(out);
    svg_write_escaped(out, s, len);
    fclose(out);
    char *into = malloc(SVG_ESCAPE_MAX * len + 1);      /* the buffer form writes the same bytes */
    assert_non_null(into);
    assert_int_equal(svg_escape_into(into, s, len), n);
    assert_memory_equal(into, buf, n);
    free(into);
    return buf;
}

static void test_escapes_xml_specials(void **state)
{
    (void)state;
    char *e = escaped("a<b>&\"c'd", 9);
    assert_string_equal(e, "a&lt;b&gt;&amp;&quot;c&apos;d");
    free(e);
}

static void test_sanitises_utf8_and_controls(void **state)
{
    (void)state;
    char *e = escaped("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x94\xa5", 14);  /* valid: unchanged */
    assert_string_equal(e, "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x94\xa5");
    free(e);
    e = escaped("a\xff" "b", 3);                             /* invalid byte */
    assert_string_equal(e, "a\xef\xbf\xbd" "b");
    free(e);
    e = escaped("x\x01y\tz", 5);                             /* control: replaced; tab kept */
    assert_string_equal(e, "x\xef\xbf\xbdy\tz");
    free(e);
    e = escaped("end\xc3", 4);                               /* truncated sequence */
    assert_string_equal(e, "end\xef\xbf\xbd");
    free(e);
    e = escaped("\xed\xa0\x80", 3);                          /* surrogate: each byte replaced */
    assert_string_equal(e, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    free(e);
    e = escaped("\xc0\xaf", 2);                              /* overlong '/' */
    assert_string_equal(e, "\xef\xbf\xbd\xef\xbf\xbd");
    free(e);
}

static void test_label_truncation(void **state)
{
    (void)state;
    bool cut = true;
    assert_int_equal(svg_label_bytes("abcdef", 6, 6, &cut), 6);
    assert_false(cut);
    assert_int_equal(svg_label_bytes("abcdef", 6, 10, &cut), 6);
    assert_false(cut);
    assert_int_equal(svg_label_bytes("abcdef", 6, 5, &cut), 3);   /* "abc.." */
    assert_true(cut);
    assert_int_equal(svg_label_bytes("abcdef", 6, 3, &cut), 1);   /* "a.." */
    assert_true(cut);
    assert_int_equal(svg_label_bytes("abcdef", 6, 2, &cut), 0);   /* nothing fits */
    /* five 2-byte characters in 4 places: 2 characters (4 bytes) and "..", never half a character */
    assert_int_equal(svg_label_bytes("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 4, &cut), 4);
    assert_true(cut);
    assert_int_equal(svg_label_bytes("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 5, &cut), 10);
    assert_false(cut);
}

#define CLASSIFY(name, depth) svg_classify(name, strlen(name), depth)

static void test_classifies_frames(void **state)
{
    (void)state;
    assert_int_equal(CLASSIFY("task: app::serve", 1), SVG_FRAME_TASK_ROOT);
    assert_int_equal(CLASSIFY("task 123: app::serve", 1), SVG_FRAME_TASK_ROOT);
    assert_int_equal(CLASSIFY("task x: app", 1), SVG_FRAME_THREAD_ROOT);
    assert_int_equal(CLASSIFY("tokio-runtime-worker", 1), SVG_FRAME_THREAD_ROOT);
    assert_int_equal(CLASSIFY("task: app::serve", 2), SVG_FRAME_ORDINARY);   /* only roots are task roots */
    assert_int_equal(CLASSIFY("app::handle @ lib.rs:42", 2), SVG_FRAME_AWAIT);
    assert_int_equal(CLASSIFY("a @ b @ main.rs:7", 3), SVG_FRAME_AWAIT);
    assert_int_equal(CLASSIFY("app::handle @ lib.rs:", 2), SVG_FRAME_ORDINARY);
    assert_int_equal(CLASSIFY("app::handle @ :12", 2), SVG_FRAME_ORDINARY);
    assert_int_equal(CLASSIFY("user@host:12", 2), SVG_FRAME_ORDINARY);
    assert_int_equal(CLASSIFY("do_syscall_64_[k]", 5), SVG_FRAME_KERNEL);
    assert_int_equal(CLASSIFY("Interpreter_[j]", 5), SVG_FRAME_JIT);
    assert_int_equal(CLASSIFY("inlined_[i]", 5), SVG_FRAME_INLINE);
    assert_int_equal(CLASSIFY("try_to_wake_up_[w]", 5), SVG_FRAME_WAKER);
    assert_int_equal(CLASSIFY("odd_[x]", 5), SVG_FRAME_ORDINARY);
    assert_int_equal(CLASSIFY("memcpy", 5), SVG_FRAME_ORDINARY);
    assert_int_equal(CLASSIFY("all", 0), SVG_FRAME_ALL);
    assert_int_equal(CLASSIFY("[suspended]", 4), SVG_FRAME_SUSPENDED);
    assert_int_equal(CLASSIFY("[runnable]", 4), SVG_FRAME_RUNNABLE);
    assert_int_equal(CLASSIFY("[runnable]x", 4), SVG_FRAME_ORDINARY);
}

static void test_colours_stable_per_name_and_distinct_per_kind(void **state)
{
    (void)state;
    const char *name = "app::handler::parse";
    uint32_t c1 = svg_frame_color("taskspy", SVG_FRAME_ORDINARY, name, strlen(name));
    uint32_t c2 = svg_frame_color("taskspy", SVG_FRAME_ORDINARY, name, strlen(name));
    assert_int_equal(c1, c2);
    uint32_t task = svg_frame_color("taskspy", SVG_FRAME_TASK_ROOT, name, strlen(name));
    uint32_t await = svg_frame_color("taskspy", SVG_FRAME_AWAIT, name, strlen(name));
    uint32_t kernel = svg_frame_color("taskspy", SVG_FRAME_KERNEL, name, strlen(name));
    uint32_t thread = svg_frame_color("taskspy", SVG_FRAME_THREAD_ROOT, name, strlen(name));
    assert_int_not_equal(c1, task);
    assert_int_not_equal(c1, await);
    assert_int_not_equal(c1, kernel);
    assert_int_not_equal(task, await);
    assert_int_not_equal(thread, task);
    /* hot palette: blue component small; task roots: blue dominant; await: green/blue over red */
    assert_true((c1 & 0xff) <= 55);
    assert_true((task & 0xff) > (task >> 16 & 0xff));
    assert_true((await >> 8 & 0xff) > (await >> 16 & 0xff));
    /* a classic palette colours every kind alike */
    assert_int_equal(svg_frame_color("mem", SVG_FRAME_TASK_ROOT, name, strlen(name)),
                     svg_frame_color("mem", SVG_FRAME_ORDINARY, name, strlen(name)));
    assert_true(svg_palette_known("hot"));
    assert_false(svg_palette_known("rainbow"));
}

static struct profile *profile_of(const char *folded)
{
    struct profile *p = profile_new();
    assert_non_null(p);
    FILE *in = fmemopen((void *)folded, strlen(folded), "r");
    char err[128];
    assert_int_equal(profile_read_folded(p, in, "t", NULL, NULL, err, sizeof(err)), 0);
    fclose(in);
    return p;
}

static char *render(const struct profile *p, const struct svg_options *o)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    assert_non_null(out);
    assert_int_equal(profile_write_svg(p, out, o), 0);
    fclose(out);
    return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *at = hay; (at = strstr(at, needle)) != NULL; at += strlen(needle))
        n++;
    return n;
}

/* The value of attribute attr in the first element after the text marker. */
static double attr_after(const char *svg, const char *marker, const char *attr)
{
    const char *at = strstr(svg, marker);
    assert_non_null(at);
    char key[32];
    snprintf(key, sizeof(key), " %s=\"", attr);
    const char *v = strstr(at, key);
    assert_non_null(v);
    return strtod(v + strlen(key), NULL);
}

static void test_layout_merges_prefixes_and_sorts_siblings(void **state)
{
    (void)state;
    struct profile *p = profile_of("main;zeta 2\nmain;alpha 1\nmain;alpha;x 1\nother 4\n");
    struct svg_options o;
    svg_options_init(&o);
    char *svg = render(p, &o);
    assert_int_equal(count_of(svg, "<title>main (4 samples, 50.00%)</title>"), 1);
    assert_int_equal(count_of(svg, "<title>all (8 samples, 100.00%)</title>"), 1);
    assert_int_equal(count_of(svg, "<g data-s="), 6);            /* all, main, alpha, x, zeta, other */
    /* alpha sorts before zeta: it starts at the parent's left edge */
    assert_non_null(strstr(svg, "<g data-s=\"0\" data-n=\"2\" data-d=\"2\"><title>alpha "));
    assert_non_null(strstr(svg, "<g data-s=\"2\" data-n=\"2\" data-d=\"2\"><title>zeta "));
    assert_non_null(strstr(svg, "<g data-s=\"4\" data-n=\"4\" data-d=\"1\"><title>other "));
    assert_true(attr_after(svg, "<title>zeta", "x") > attr_after(svg, "<title>alpha", "x"));
    /* flame: deeper frames are higher up */
    assert_true(attr_after(svg, "<title>x (", "y") < attr_after(svg, "<title>alpha", "y"));
    free(svg);
    o.inverted = true;                                           /* icicle: deeper frames lower */
    svg = render(p, &o);
    assert_true(attr_after(svg, "<title>x (", "y") > attr_after(svg, "<title>alpha", "y"));
    free(svg);
    profile_free(p);
}

/* flamegraph.pl strips "_[k]", "_[j]", "_[i]", "_[w]" at the end of a name from titles and labels: they
 * only pick the colour. Other brackets stay. */
static void test_annotations_colour_but_are_not_shown(void **state)
{
    (void)state;
    assert_int_equal(svg_shown_length("read_[k]", 8), 4);
    assert_int_equal(svg_shown_length("a_[j]", 5), 1);
    assert_int_equal(svg_shown_length("_[i]", 4), 0);
    assert_int_equal(svg_shown_length("x_[w]", 5), 1);
    assert_int_equal(svg_shown_length("x_[q]", 5), 5);
    assert_int_equal(svg_shown_length("x_[k]y", 6), 6);
    assert_int_equal(svg_shown_length("[k]", 3), 3);
    struct profile *p = profile_of("main;work;do_idle_[k] 3\nmain;work;jitted_[j] 1\nmain;[unknown] 1\n");
    struct svg_options o;
    svg_options_init(&o);
    char *svg = render(p, &o);
    assert_non_null(strstr(svg, "<title>do_idle (3 samples, 60.00%)</title>"));
    assert_non_null(strstr(svg, "<title>jitted (1 samples, 20.00%)</title>"));
    assert_non_null(strstr(svg, "<title>[unknown] (1 samples"));
    assert_null(strstr(svg, "_[k]"));
    assert_null(strstr(svg, "_[j]"));
    assert_non_null(strstr(svg, ">do_idle</text>"));
    /* the kernel frame still has the kernel colour of the full name */
    char fill[64];
    snprintf(fill, sizeof(fill), "fill=\"#%06x\"",
             svg_frame_color("taskspy", SVG_FRAME_KERNEL, "do_idle_[k]", strlen("do_idle_[k]")));
    const char *title = strstr(svg, "<title>do_idle (");
    assert_non_null(title);
    const char *rect_end = strstr(title, "/>");
    const char *found = strstr(title, fill);
    assert_true(found && found < rect_end);
    free(svg);
    profile_free(p);
}

static void test_hostile_names_escaped_everywhere(void **state)
{
    (void)state;
    struct profile *p = profile_of("task: a<&>\"';b]]>c 3\n");
    struct svg_options o;
    svg_options_init(&o);
    o.title = "t<&>";
    o.subtitle = "s\"'";
    o.header = "h<script>";
    o.count_name = "x\"<y";
    char *svg = render(p, &o);
    assert_null(strstr(svg, "a<&>"));
    assert_null(strstr(svg, "h<script>"));
    assert_null(strstr(svg, "x\"<y"));
    assert_non_null(strstr(svg, "<title>task: a&lt;&amp;&gt;&quot;&apos; (3 x&quot;&lt;y, 100.00%)</title>"));
    assert_non_null(strstr(svg, ">t&lt;&amp;&gt;</text>"));
    assert_non_null(strstr(svg, ">s&quot;&apos;</text>"));
    assert_non_null(strstr(svg, ">h&lt;script&gt;</text>"));
    assert_non_null(strstr(svg, "data-countname=\"x&quot;&lt;y\""));
    assert_non_null(strstr(svg, "b]]&gt;c"));
    /* "]]>" only closes the style and script CDATA sections */
    assert_int_equal(count_of(svg, "]]>"), 2);
    free(svg);
    profile_free(p);
}

static void test_very_long_name_escaped_whole(void **state)
{
    (void)state;
    /* a name far longer than the writer's buffer: title and label still whole and escaped */
    size_t n = 100000;
    char *text = malloc(n + 32), *want = malloc(4 * n + 32);
    assert_non_null(text);
    assert_non_null(want);
    strcpy(text, "root;");
    memset(text + 5, '<', n);
    strcpy(text + 5 + n, " 1\n");
    strcpy(want, ">");
    for (size_t i = 0; i < n; i++)
        memcpy(want + 1 + 4 * i, "&lt;", 4);
    strcpy(want + 1 + 4 * n, " (1 samples, 100.00%)</title>");
    struct profile *p = profile_of(text);
    struct svg_options o;
    svg_options_init(&o);
    o.width = 1000000;                                   /* wide enough for the whole name as a label */
    char *svg = render(p, &o);
    assert_non_null(strstr(svg, want));
    strcpy(want + 1 + 4 * n, "</text>");
    assert_non_null(strstr(svg, want));
    free(svg);
    free(want);
    free(text);
    profile_free(p);
}

static void test_labels_truncated_to_fit(void **state)
{
    (void)state;
    /* a 30-sample frame of 1000 in 1180 px is 35.4 px wide: (35.4 - 3) / 7.08 = 4 characters */
    struct profile *p = profile_of("a_very_long_function_name 30\nrest 970\n");
    struct svg_options o;
    svg_options_init(&o);
    char *svg = render(p, &o);
    const char *g = strstr(svg, "<title>a_very_long_function_name");
    assert_non_null(g);
    assert_non_null(strstr(g, ">a_..</text>"));
    assert_non_null(strstr(svg, ">rest</text>"));
    free(svg);
    profile_free(p);
}

static void test_minwidth_leaves_out_narrow_frames(void **state)
{
    (void)state;
    /* 1 sample of 100000 is 0.0118 px: left out by default, but counted in its parent */
    struct profile *p = profile_of("root;big 99999\nroot;tiny;deeper 1\n");
    struct svg_options o;
    svg_options_init(&o);
    char *svg = render(p, &o);
    assert_null(strstr(svg, "<title>tiny"));
    assert_null(strstr(svg, "<title>deeper"));
    assert_non_null(strstr(svg, "<title>root (100000 samples, 100.00%)</title>"));
    free(svg);
    o.min_width = 0;
    svg = render(p, &o);
    assert_non_null(strstr(svg, "<title>tiny (1 samples"));
    assert_non_null(strstr(svg, "<title>deeper (1 samples"));
    free(svg);
    profile_free(p);
}

static void test_reverse_merges_leaf_first(void **state)
{
    (void)state;
    struct profile *p = profile_of("a;leaf 2\nb;leaf 3\nc 1\n");
    struct svg_options o;
    svg_options_init(&o);
    o.reverse = true;
    char *svg = render(p, &o);
    assert_non_null(strstr(svg, "<g data-s=\"0\" data-n=\"1\" data-d=\"1\"><title>c (1 samples"));
    assert_non_null(strstr(svg, "data-d=\"1\"><title>leaf (5 samples"));
    assert_non_null(strstr(svg, "data-d=\"2\"><title>a (2 samples"));
    assert_non_null(strstr(svg, "data-d=\"2\"><title>b (3 samples"));
    free(svg);
    profile_free(p);
}

static void test_options_shape_the_image(void **state)
{
    (void)state;
    struct profile *p = profile_of("a;b;c 1\n");
    struct svg_options o;
    svg_options_init(&o);
    o.width = 800;
    o.frame_height = 20;
    o.colors = "blue";
    char *svg = render(p, &o);
    assert_non_null(strstr(svg, "width=\"800\""));
    /* 4 rows of 20 px + 36 px top + 34 px bottom */
    assert_non_null(strstr(svg, "height=\"150\""));
    assert_non_null(strstr(svg, "height=\"19.0\""));
    assert_null(strstr(svg, "id=\"subtitle\""));
    assert_null(strstr(svg, "id=\"header\""));
    assert_non_null(strstr(svg, "<script type=\"text/ecmascript\">"));
    assert_non_null(strstr(svg, "Reset Zoom"));
    free(svg);

    o.width = 5;                                                   /* invalid options are refused */
    errno = 0;
    assert_int_equal(profile_write_svg(p, stdout, &o), -1);
    assert_int_equal(errno, EINVAL);
    o.width = 800;
    o.colors = "rainbow";
    assert_int_equal(profile_write_svg(p, stdout, &o), -1);
    profile_free(p);
}

/* The wait graph: counts in microseconds shown as ms, [runnable] / [suspended] in hues of their own. */
static void test_wait_graph_ms_and_palette(void **state)
{
    (void)state;
    struct profile *p = profile_of("task: a;a @ m.rs:3;[suspended] 1234567\ntask: a;a @ m.rs:3;[runnable] 5\n");
    struct svg_options o;
    svg_options_init(&o);
    o.colors = "wait";
    o.count_name = "ms";
    o.count_divisor = 1000;
    o.min_width = 0;                /* the 5 us frame is far narrower than a pixel */
    char *svg = render(p, &o);
    assert_non_null(strstr(svg, "<title>[suspended] (1234.567 ms, 100.00%)</title>"));
    assert_non_null(strstr(svg, "<title>[runnable] (0.005 ms, 0.00%)</title>"));
    assert_non_null(strstr(svg, "<title>all (1234.572 ms, 100.00%)</title>"));
    free(svg);
    profile_free(p);
    const char *name = "x";
    uint32_t io = svg_frame_color("wait", SVG_FRAME_AWAIT, name, 1);
    uint32_t runnable = svg_frame_color("wait", SVG_FRAME_RUNNABLE, name, 1);
    uint32_t suspended = svg_frame_color("wait", SVG_FRAME_SUSPENDED, name, 1);
    assert_int_equal(io, svg_frame_color("io", SVG_FRAME_ORDINARY, name, 1));   /* flamegraph.pl's io colours */
    assert_true((runnable >> 16) >= 200 && (runnable & 0xff) <= 130);              /* red */
    assert_true((suspended >> 16) == ((suspended >> 8) & 0xff));                    /* grey */
    assert_int_not_equal(io, runnable);
    assert_int_not_equal(io, suspended);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes_xml_specials),
        cmocka_unit_test(test_sanitises_utf8_and_controls),
        cmocka_unit_test(test_label_truncation),
        cmocka_unit_test(test_classifies_frames),
        cmocka_unit_test(test_colours_stable_per_name_and_distinct_per_kind),
        cmocka_unit_test(test_layout_merges_prefixes_and_sorts_siblings),
        cmocka_unit_test(test_annotations_colour_but_are_not_shown),
        cmocka_unit_test(test_hostile_names_escaped_everywhere),
        cmocka_unit_test(test_labels_truncated_to_fit),
        cmocka_unit_test(test_very_long_name_escaped_whole),
        cmocka_unit_test(test_minwidth_leaves_out_narrow_frames),
        cmocka_unit_test(test_reverse_merges_leaf_first),
        cmocka_unit_test(test_options_shape_the_image),
        cmocka_unit_test(test_wait_graph_ms_and_palette),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
