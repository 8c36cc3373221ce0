/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_profile.c: unit tests of flamegraph/profile.c and folded_writer.c: name interning (same name -> same id,
 * len-bounded names, thousands of names across table growth), profile_add_ids totals and self counts across
 * shared prefixes, invalid ids rejected without counting, distinct stack counts, profile_write_folded output
 * exactly (one "a;b;c N" line per stack with self samples, a parent stack with its own self count, sorted as
 * `LC_ALL=C sort` sorts the whole lines), and 10,000 random stacks whose folded output round-trips: each line's
 * count equals what was added (reference map in the test), the sum is preserved, lines are in C-sort order;
 * the batch entry points (profile_intern_batch, profile_add_batch, profile_reserve) agree with the one by
 * one ones; after profile_trim names and stacks are found again (the tables rebuilt); profile_prefault faults
 * in the node array's pages that the next nodes fill, as far ahead as asked and no further, and a thread doing
 * it while another adds stacks (and the node array grows and moves) changes nothing in the tree. */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "flamegraph/flamegraph.h"
#include "tests/unit/flamegraph/folded_text.h"
#include "flamegraph/profile_internal.h"

static void expect_folded(const struct profile *p, const char *want)
{
    char *got = folded_text(p);
    assert_string_equal(got, want);
    free(got);
}

/* The node for a path of names from the root, or NULL. */
static const struct profile_node *node_at(const struct profile *p, const char *const *names, size_t n)
{
    size_t count;
    const struct profile_node *nodes = profile_nodes(p, &count);
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = child_named(p, at, names[i]);
        if (c == PROFILE_NO_NODE)
            return NULL;
        assert_true(c < count);
        at = c;
    }
    return &nodes[at];
}

#define NODE(p, ...) node_at((p), (const char *const[]){ __VA_ARGS__ }, sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static void test_intern(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_frame_count(p), 0);
    uint32_t a = profile_intern(p, "main", 4);
    uint32_t b = profile_intern(p, "worker", 6);
    assert_int_not_equal(a, PROFILE_NO_FRAME);
    assert_int_not_equal(a, b);
    assert_int_equal(profile_intern(p, "main", 4), a);
    assert_int_equal(profile_frame_count(p), 2);
    /* len bounds the name: "mainly" cut at 4 is "main"; the stored copy is NUL-terminated */
    assert_int_equal(profile_intern(p, "mainly", 4), a);
    char not_terminated[3] = { 'x', 'y', 'z' };
    uint32_t xy = profile_intern(p, not_terminated, 2);
    assert_string_equal(profile_frame_name(p, xy), "xy");
    assert_int_not_equal(profile_intern(p, not_terminated, 3), xy);
    assert_string_equal(profile_frame_name(p, profile_intern(p, not_terminated, 3)), "xyz");
    /* prefixes and case are different names */
    assert_int_not_equal(profile_intern(p, "mai", 3), a);
    assert_int_not_equal(profile_intern(p, "Main", 4), a);
    /* the empty name is a name */
    uint32_t e = profile_intern(p, "", 0);
    assert_int_not_equal(e, PROFILE_NO_FRAME);
    assert_int_equal(profile_intern(p, "", 0), e);
    assert_string_equal(profile_frame_name(p, e), "");
    assert_string_equal(profile_frame_name(p, a), "main");
    assert_string_equal(profile_frame_name(p, b), "worker");
    /* an unknown id has an empty name, not garbage */
    assert_string_equal(profile_frame_name(p, 100000), "");
    assert_string_equal(profile_frame_name(p, PROFILE_NO_FRAME), "");
    /* the caller's buffer is copied */
    char buf[16] = "transient";
    uint32_t t = profile_intern(p, buf, strlen(buf));
    memset(buf, 'Q', sizeof(buf) - 1);
    assert_string_equal(profile_frame_name(p, t), "transient");
    profile_free(p);
}

/* Many names: the hash table and the name arena grow; every id stays stable and every name intact. */
static void test_intern_many(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    enum { N = 20000 };
    uint32_t *ids = malloc(N * sizeof(*ids));
    assert_non_null(ids);
    char name[64];
    for (int i = 0; i < N; i++) {
        int len = snprintf(name, sizeof(name), "crate::module%d::function_%x", i % 97, (unsigned)i);
        ids[i] = profile_intern(p, name, (size_t)len);
        assert_int_equal(ids[i], (uint32_t)i);   /* ids are dense, in order of first sight */
    }
    assert_int_equal(profile_frame_count(p), N);
    for (int i = N; i-- > 0;) {
        int len = snprintf(name, sizeof(name), "crate::module%d::function_%x", i % 97, (unsigned)i);
        assert_int_equal(profile_intern(p, name, (size_t)len), ids[i]);
        assert_string_equal(profile_frame_name(p, ids[i]), name);
    }
    /* a name longer than an arena chunk */
    size_t big = 200000;
    char *long_name = malloc(big);
    assert_non_null(long_name);
    for (size_t i = 0; i < big; i++)
        long_name[i] = (char)('a' + i % 26);
    uint32_t l = profile_intern(p, long_name, big);
    assert_int_equal(profile_intern(p, long_name, big), l);
    assert_int_equal(strlen(profile_frame_name(p, l)), big);
    assert_memory_equal(profile_frame_name(p, l), long_name, big);
    assert_string_equal(profile_frame_name(p, ids[5]), "crate::module5::function_5");
    free(long_name);
    free(ids);
    profile_free(p);
}

static void test_totals_and_self(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    uint32_t a = profile_intern(p, "a", 1), b = profile_intern(p, "b", 1), c = profile_intern(p, "c", 1),
             d = profile_intern(p, "d", 1);
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ a, b, c }, 3, 3), 0);
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ a, b }, 2, 2), 0);
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ a, d }, 2, 5), 0);
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ a, b, c }, 3, 1), 0);
    /* the same frame at another depth is another node */
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ b, a }, 2, 7), 0);
    assert_int_equal(profile_total(p), 18);
    assert_int_equal(profile_distinct_stacks(p), 4);

    size_t n;
    const struct profile_node *nodes = profile_nodes(p, &n);
    assert_int_equal(n, 1 + 4 + 2);   /* root, a, a;b, a;b;c, a;d, b, b;a */
    assert_int_equal(nodes[0].frame, PROFILE_NO_FRAME);
    assert_int_equal(nodes[0].parent, PROFILE_NO_NODE);
    assert_int_equal(nodes[0].total, 18);
    assert_int_equal(nodes[0].self, 0);
    const struct profile_node *x;
    assert_non_null(x = NODE(p, "a"));
    assert_int_equal(x->total, 11);
    assert_int_equal(x->self, 0);
    assert_non_null(x = NODE(p, "a", "b"));
    assert_int_equal(x->total, 6);
    assert_int_equal(x->self, 2);
    assert_non_null(x = NODE(p, "a", "b", "c"));
    assert_int_equal(x->total, 4);
    assert_int_equal(x->self, 4);
    for (size_t i = 1; i < n; i++)      /* a leaf: no node names it its parent */
        assert_int_not_equal(nodes[i].parent, (uint32_t)(x - nodes));
    assert_non_null(x = NODE(p, "a", "d"));
    assert_int_equal(x->total, 5);
    assert_int_equal(x->self, 5);
    assert_non_null(x = NODE(p, "b"));
    assert_int_equal(x->total, 7);
    assert_int_equal(x->self, 0);
    assert_non_null(x = NODE(p, "b", "a"));
    assert_int_equal(x->total, 7);
    assert_int_equal(x->self, 7);
    assert_null(NODE(p, "c"));
    assert_null(NODE(p, "a", "c"));

    /* an id never interned: rejected, nothing counted, no node left half-made that shows up in output */
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ a, b, 999 }, 3, 100), -1);
    assert_int_equal(profile_add_ids(p, (const uint32_t[]){ a, PROFILE_NO_FRAME }, 2, 100), -1);
    assert_int_equal(profile_total(p), 18);
    assert_int_equal(profile_distinct_stacks(p), 4);
    assert_int_equal(NODE(p, "a", "b")->total, 6);
    expect_folded(p, "a;b 2\na;b;c 4\na;d 5\nb;a 7\n");
    profile_free(p);
}

static void test_add_by_name(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_add(p, (const char *const[]){ "main", "run", "work" }, 3, 10), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "main", "run" }, 2, 1), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "main", "run", "work" }, 3, 5), 0);
    assert_int_equal(profile_frame_count(p), 3);
    assert_int_equal(profile_total(p), 16);
    assert_int_equal(profile_distinct_stacks(p), 2);
    assert_int_equal(NODE(p, "main", "run", "work")->self, 15);
    /* a deep stack (more than the 512 ids profile_add keeps on its stack) */
    enum { DEEP = 1500 };
    char **names = malloc(DEEP * sizeof(*names));
    assert_non_null(names);
    for (int i = 0; i < DEEP; i++) {
        names[i] = malloc(16);
        assert_non_null(names[i]);
        snprintf(names[i], 16, "f%d", i % 10);
    }
    assert_int_equal(profile_add(p, (const char *const *)names, DEEP, 2), 0);
    assert_int_equal(profile_total(p), 18);
    assert_int_equal(profile_distinct_stacks(p), 3);
    char *out = folded_text(p);
    const char *deep_line = strstr(out, "f0;f1;f2;");
    assert_non_null(deep_line);
    size_t semis = 0;
    const char *q = deep_line;
    for (; *q && *q != '\n'; q++)
        semis += *q == ';';
    assert_int_equal(semis, DEEP - 1);
    assert_memory_equal(q - 4, "f9 2\n", 5);   /* ...;f9 2 */
    free(out);
    for (int i = 0; i < DEEP; i++)
        free(names[i]);
    free(names);
    profile_free(p);
}

static void test_folded_exact(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    expect_folded(p, "");   /* nothing added: nothing written */
    assert_int_equal(profile_add(p, (const char *const[]){ "worker", "main", "compute" }, 3, 30), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "worker", "main" }, 2, 4), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "Worker", "x" }, 2, 1), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "task: app::handler", "app::handler @ main.rs:42" }, 2, 9),
                     0);
    assert_int_equal(profile_add(p, (const char *const[]){ "task: app::handler", "app::handler @ main.rs:40" }, 2, 2),
                     0);
    assert_int_equal(profile_add(p, (const char *const[]){ "worker", "main", "compute", "memcpy_[k]" }, 4, 1), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "\xc3\xa9t\xc3\xa9" }, 1, 6), 0);   /* UTF-8 after ASCII */
    assert_int_equal(profile_add(p, (const char *const[]){ "worker", "mainloop" }, 2, 8), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "[unknown task]", "f" }, 2, 3), 0);
    expect_folded(p, "Worker;x 1\n"
                     "[unknown task];f 3\n"
                     "task: app::handler;app::handler @ main.rs:40 2\n"
                     "task: app::handler;app::handler @ main.rs:42 9\n"
                     "worker;main 4\n"
                     "worker;main;compute 30\n"
                     "worker;main;compute;memcpy_[k] 1\n"
                     "worker;mainloop 8\n"
                     "\xc3\xa9t\xc3\xa9 6\n");
    /* counts accumulate; output is the same shape */
    assert_int_equal(profile_add(p, (const char *const[]){ "worker", "main" }, 2, 6), 0);
    char *out = folded_text(p);
    assert_non_null(strstr(out, "\nworker;main 10\n"));
    free(out);
    profile_free(p);
}

/* `LC_ALL=C sort` compares whole lines, count included: a stack whose leaf is the prefix of a sibling's name up to
 * a space sorts by what follows the space ("f (x)" has '(' where "f" has its count's first digit). Checked against
 * sort(1) itself where it is available. */
static void test_folded_sorted_as_c_sort(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_add(p, (const char *const[]){ "a", "f" }, 2, 3), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "a", "f (x)" }, 2, 1), 0);
    assert_int_equal(profile_add(p, (const char *const[]){ "a", "f;g" }, 2, 1), 0);   /* two frames after all */
    char *out = folded_text(p);
    FILE *sorted = popen("printf 'a;f 3\\na;f (x) 1\\na;f;g 1\\n' | LC_ALL=C sort", "r");
    if (sorted) {
        char want[256] = "";
        size_t got = fread(want, 1, sizeof(want) - 1, sorted);
        want[got] = '\0';
        if (pclose(sorted) == 0 && got > 0)
            assert_string_equal(want, "a;f (x) 1\na;f 3\na;f;g 1\n");
    }
    profile_free(p);
    bool ok = strcmp(out, "a;f (x) 1\na;f 3\na;f;g 1\n") == 0;
    if (!ok)
        print_error("folded output:\n%swant (as LC_ALL=C sort orders the lines):\na;f (x) 1\na;f 3\na;f;g 1\n", out);
    free(out);
    assert_true(ok);
}

/* ---- 10,000 random stacks round-trip ------------------------------------------------------------------- */

struct ref_entry {
    char *text;
    uint64_t count;
};

static int ref_cmp(const void *a, const void *b)
{
    return strcmp(((const struct ref_entry *)a)->text, ((const struct ref_entry *)b)->text);
}

static void test_random_round_trip(void **state)
{
    (void)state;
    static const char *const names[] = { "main", "std::rt::lang_start", "tokio::runtime::park", "app::handler",
                                         "app::db::query", "memcpy", "Vec<T>::push", "hash", "a", "b", "c",
                                         "poll", "read_[k]", "task: app::handler" };
    enum { N_NAMES = sizeof(names) / sizeof(names[0]), STACKS = 10000, MAX_DEPTH = 12 };
    struct profile *p = profile_new();
    assert_non_null(p);
    uint32_t ids[N_NAMES];
    for (size_t i = 0; i < N_NAMES; i++)
        ids[i] = profile_intern(p, names[i], strlen(names[i]));
    /* reference: a simple unsorted array of (text, count), linear search */
    struct ref_entry *ref = calloc(STACKS, sizeof(*ref));
    assert_non_null(ref);
    size_t n_ref = 0;
    uint64_t sum = 0;
    srand(4242);
    for (int s = 0; s < STACKS; s++) {
        /* few distinct shapes, so stacks repeat and share prefixes: small depth and a skewed name choice */
        size_t depth = 1 + (size_t)(rand() % MAX_DEPTH);
        uint32_t stack[MAX_DEPTH];
        char text[MAX_DEPTH * 32] = "";
        size_t tl = 0;
        for (size_t i = 0; i < depth; i++) {
            size_t k = (size_t)(rand() % 4 == 0 ? rand() % N_NAMES : rand() % 3);
            stack[i] = ids[k];
            tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "%s%s", i ? ";" : "", names[k]);
        }
        uint64_t count = 1 + (uint64_t)(rand() % 1000);
        assert_int_equal(profile_add_ids(p, stack, depth, count), 0);
        sum += count;
        size_t j = 0;
        while (j < n_ref && strcmp(ref[j].text, text) != 0)
            j++;
        if (j == n_ref) {
            ref[n_ref].text = strdup(text);
            assert_non_null(ref[n_ref].text);
            n_ref++;
        }
        ref[j].count += count;
    }
    assert_int_equal(profile_total(p), sum);
    assert_int_equal(profile_distinct_stacks(p), n_ref);
    assert_true(n_ref < STACKS);   /* some stacks repeated */
    qsort(ref, n_ref, sizeof(*ref), ref_cmp);

    char *out = folded_text(p);
    /* parse the output back: every line "TEXT COUNT", in the reference's order, with its count */
    size_t line_no = 0;
    uint64_t out_sum = 0;
    char *save = NULL;
    const char *prev = NULL;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), line_no++) {
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        *sp = '\0';
        char *end;
        uint64_t c = strtoull(sp + 1, &end, 10);
        assert_true(*end == '\0' && c > 0);
        assert_true(line_no < n_ref);
        if (strcmp(line, ref[line_no].text) != 0)
            fail_msg("line %zu: '%s', want '%s'", line_no, line, ref[line_no].text);
        assert_int_equal(c, ref[line_no].count);
        if (prev)
            assert_true(strcmp(prev, line) < 0);
        prev = line;
        out_sum += c;
    }
    assert_int_equal(line_no, n_ref);
    assert_int_equal(out_sum, sum);

    /* reading the folded text back into a fresh profile gives the same output */
    char *again = folded_text(p);
    struct profile *q = profile_new();
    assert_non_null(q);
    FILE *in = fmemopen(again, strlen(again), "r");
    assert_non_null(in);
    struct folded_read_report report;
    char err[256];
    assert_int_equal(profile_read_folded(q, in, "round-trip", NULL, &report, err, sizeof(err)), 0);
    fclose(in);
    assert_int_equal(report.stacks, n_ref);
    assert_int_equal(report.skipped, 0);
    assert_int_equal(profile_total(q), sum);
    char *third = folded_text(q);
    assert_string_equal(third, again);
    free(third);
    free(again);
    profile_free(q);

    free(out);
    for (size_t i = 0; i < n_ref; i++)
        free(ref[i].text);
    free(ref);
    profile_free(p);
}

/* Many distinct nodes: the child table grows; totals stay right. */
static void test_many_nodes(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    uint32_t ids[64];
    char name[16];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof(name), "n%02d", i);
        ids[i] = profile_intern(p, name, strlen(name));
    }
    /* 64 * 64 * 4 = 16384 leaves under 64 * 64 + 64 inner nodes */
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++)
            for (int c = 0; c < 4; c++)
                assert_int_equal(profile_add_ids(p, (const uint32_t[]){ ids[a], ids[b], ids[c] }, 3, 1), 0);
    size_t n;
    profile_nodes(p, &n);
    assert_int_equal(n, 1 + 64 + 64 * 64 + 64 * 64 * 4);
    assert_int_equal(profile_total(p), 16384);
    assert_int_equal(profile_distinct_stacks(p), 16384);
    assert_int_equal(NODE(p, "n05")->total, 256);
    assert_int_equal(NODE(p, "n05", "n63")->total, 4);
    assert_int_equal(NODE(p, "n05", "n63", "n03")->self, 1);
    /* adding them all again finds the same nodes, also after profile_trim dropped the lookup tables (and
     * again after a second trim) */
    profile_trim(p);
    profile_trim(p);
    assert_int_equal(NODE(p, "n05", "n63")->total, 4);
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof(name), "n%02d", i);
        assert_int_equal(profile_intern(p, name, strlen(name)), ids[i]);
    }
    profile_trim(p);
    for (int a = 0; a < 64; a++)
        for (int b = 0; b < 64; b++)
            for (int c = 0; c < 4; c++)
                assert_int_equal(profile_add_ids(p, (const uint32_t[]){ ids[a], ids[b], ids[c] }, 3, 2), 0);
    profile_nodes(p, &n);
    assert_int_equal(n, 1 + 64 + 64 * 64 + 64 * 64 * 4);
    assert_int_equal(profile_total(p), 16384 * 3);
    assert_int_equal(NODE(p, "n05", "n63", "n03")->self, 3);
    profile_free(p);
}

/* profile_intern_batch and profile_add_batch give what profile_intern and profile_add_ids give one by one:
 * same ids, same tree, same counts, across batches that share prefixes with the batch before. */
static void test_batches_match_one_by_one(void **state)
{
    (void)state;
    static const char *const names[] = { "main", "run", "poll", "read", "write", "main", "x", "run" };
    const size_t n_names = sizeof(names) / sizeof(names[0]);
    uint32_t lens[8], batch_ids[8];
    struct profile *one = profile_new(), *batch = profile_new();
    assert_non_null(one);
    assert_non_null(batch);
    for (size_t i = 0; i < n_names; i++)
        lens[i] = (uint32_t)strlen(names[i]);
    assert_int_equal(profile_intern_batch(batch, names, lens, NULL, n_names, batch_ids), 0);
    for (size_t i = 0; i < n_names; i++)
        assert_int_equal(batch_ids[i], profile_intern(one, names[i], lens[i]));
    assert_int_equal(batch_ids[5], batch_ids[0]);         /* the same name twice in one batch: one id */
    assert_int_equal(profile_frame_count(batch), 6);

    /* stacks of ids 0..5: main run poll read write x */
    static const uint32_t frames[] = { 0, 1, 2,   0, 1, 2, 3,   0, 1,   0, 1, 2,   4,   0, 5, 1, 2, 3 };
    static const uint32_t start[] = { 0, 3, 7, 9, 12, 13 };
    static const uint32_t len[] = { 3, 4, 2, 3, 1, 5 };
    static const uint64_t count[] = { 1, 2, 4, 8, 16, 32 };
    for (size_t k = 0; k < 6; k++)
        assert_int_equal(profile_add_ids(one, frames + start[k], len[k], count[k]), 0);
    assert_int_equal(profile_add_batch(batch, frames, start, len, count, 3, 6), 0);   /* two batches */
    assert_int_equal(profile_add_batch(batch, frames, start + 3, len + 3, count + 3, 3, 6), 0);
    assert_int_equal(profile_total(batch), 63);
    assert_int_equal(profile_distinct_stacks(batch), profile_distinct_stacks(one));
    char *want = folded_text(one);
    expect_folded(batch, want);
    free(want);
    assert_int_equal(NODE(batch, "main", "run", "poll")->total, 1 + 2 + 8);
    assert_int_equal(NODE(batch, "main", "run", "poll")->self, 1 + 8);
    assert_int_equal(NODE(batch, "main", "x", "run", "poll", "read")->total, 32);

    /* an id not interned yet is refused, nothing counted */
    static const uint32_t bad[] = { 0, 6 };
    static const uint32_t bad_start[] = { 0 }, bad_len[] = { 2 };
    assert_int_equal(profile_add_batch(batch, bad, bad_start, bad_len, count, 1, 6), -1);
    assert_int_equal(profile_total(batch), 63);
    /* room made ahead changes nothing but the tables' sizes */
    assert_int_equal(profile_reserve(batch, 100000, 10000), 0);
    assert_int_equal(NODE(batch, "main", "run", "poll", "read")->total, 2);
    assert_int_equal(profile_add_ids(batch, frames + start[1], len[1], 1), 0);
    assert_int_equal(NODE(batch, "main", "run", "poll", "read")->total, 3);
    profile_free(one);
    profile_free(batch);
}

/* Big arrays are mappings except under AddressSanitizer (flamegraph/big_alloc.c), where there is nothing to
 * fault in ahead. */
#if defined(__SANITIZE_ADDRESS__)
#define ARRAYS_MAPPED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARRAYS_MAPPED 0
#endif
#endif
#ifndef ARRAYS_MAPPED
#define ARRAYS_MAPPED 1
#endif

/* Whether the page holding byte at of the array is in memory. */
static bool resident(const void *array, size_t at)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t addr = ((uintptr_t)array + at) & ~(uintptr_t)(page - 1);
    unsigned char in = 0;
    assert_int_equal(mincore((void *)addr, page, &in), 0);
    return in & 1;
}

/* As many steps as the distance ahead holds, the pages up to there in memory, none past it. */
static void test_prefault_ahead(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_reserve(p, 400000, 1000), 0);      /* 9.6 MB of nodes: a mapping */
    uint32_t id = profile_intern(p, "main", 4);
    assert_int_equal(profile_add_ids(p, &id, 1, 1), 0);          /* two nodes filled */
    size_t n;
    const struct profile_node *nodes = profile_nodes(p, &n);
    /* whole multiples of 2 MB, so that the checks hold with transparent huge pages for all memory too */
    const size_t ahead = 4u << 20, step = 1u << 20;
    int steps = 0;
    while (steps < 100 && profile_prefault(p, ahead, step) == 1)
        steps++;
    if (!ARRAYS_MAPPED) {
        assert_int_equal(steps, 0);
        profile_free(p);
        return;
    }
    assert_int_equal(steps, 4);
    for (size_t at = 0; at < ahead; at += 4096)
        assert_true(resident(nodes, at));
    assert_false(resident(nodes, ahead + (64u << 10)));
    /* once the nodes fill further, it goes on from where it was */
    for (uint32_t i = 0; i < 60000; i++) {
        char name[16];
        snprintf(name, sizeof(name), "f%u", i);
        uint32_t stack[2] = { id, profile_intern(p, name, strlen(name)) };
        assert_int_equal(profile_add_ids(p, stack, 2, 1), 0);
    }
    nodes = profile_nodes(p, &n);
    assert_int_equal(n, 60002);
    assert_int_equal(profile_prefault(p, ahead, step), 1);
    assert_true(n * sizeof(*nodes) < ahead);
    assert_true(resident(nodes, ahead + step - 4096));
    assert_false(resident(nodes, 8u << 20));
    profile_free(p);
}

struct prefaulter {
    struct profile *p;
    atomic_bool stop;
    atomic_size_t done;
};

static void *prefault_loop(void *arg)
{
    struct prefaulter *f = arg;
    while (!atomic_load(&f->stop))
        atomic_fetch_add(&f->done, (size_t)profile_prefault(f->p, 2u << 20, 64u << 10));
    return NULL;
}

/* Stacks added while another thread faults in ahead (through the node array's growth: it is made to start
 * small) make the same tree as without. */
static void test_prefault_while_adding(void **state)
{
    (void)state;
    struct profile *quiet = profile_new(), *busy = profile_new();
    assert_non_null(quiet);
    assert_non_null(busy);
    struct prefaulter f = { .p = busy };
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, prefault_loop, &f), 0);
    srand(7);
    for (int i = 0; i < 300000; i++) {
        uint32_t stack[6];
        size_t depth = 1 + (size_t)(rand() % 6);
        for (size_t d = 0; d < depth; d++) {
            char name[16];
            snprintf(name, sizeof(name), "g%d", rand() % 40);
            stack[d] = profile_intern(busy, name, strlen(name));
            assert_int_equal(profile_intern(quiet, name, strlen(name)), stack[d]);
        }
        assert_int_equal(profile_add_ids(busy, stack, depth, 1), 0);
        assert_int_equal(profile_add_ids(quiet, stack, depth, 1), 0);
    }
    /* it has faulted something in by now, or does once it runs: the array has room past its last node
     * (waited for, not assumed to have been scheduled during the adds) */
    for (int tries = 0; ARRAYS_MAPPED && tries < 100000 && atomic_load(&f.done) == 0; tries++)
        nanosleep(&(struct timespec){ 0, 100000 }, NULL);
    atomic_store(&f.stop, true);
    assert_int_equal(pthread_join(thread, NULL), 0);
    if (ARRAYS_MAPPED)
        assert_true(atomic_load(&f.done) > 0);
    size_t n_quiet, n_busy;
    profile_nodes(quiet, &n_quiet);
    profile_nodes(busy, &n_busy);
    assert_true(n_busy > 100000);                /* grown from 1024 nodes, moved more than once */
    assert_int_equal(n_busy, n_quiet);
    char *want = folded_text(quiet);
    expect_folded(busy, want);
    free(want);
    profile_free(quiet);
    profile_free(busy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern),
        cmocka_unit_test(test_intern_many),
        cmocka_unit_test(test_totals_and_self),
        cmocka_unit_test(test_add_by_name),
        cmocka_unit_test(test_folded_exact),
        cmocka_unit_test(test_folded_sorted_as_c_sort),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_many_nodes),
        cmocka_unit_test(test_batches_match_one_by_one),
        cmocka_unit_test(test_prefault_ahead),
        cmocka_unit_test(test_prefault_while_adding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
