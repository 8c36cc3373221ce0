/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_proc_maps.c: unit tests of sampler/proc_maps: parsing /proc/PID/maps lines (file, anonymous, "[stack]",
 * " (deleted)", paths with spaces, a too-small path buffer, malformed lines), proc_maps_insert overlap handling
 * (split in two, trim either side with pgoff kept consistent, replace several, exact replace, empty range) checked
 * also against a page-by-page reference model over random inserts, proc_maps_find at boundaries, and
 * proc_maps_load(getpid()) finding this test's own code in an executable mapping of the test binary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampler/target/proc_maps.h"

/* ---- parsing ------------------------------------------------------------------------------------------- */

static void test_parse_file_mapping(void **state)
{
    (void)state;
    struct proc_map m;
    char path[256];
    assert_int_equal(proc_maps_parse_line("55d4c0a00000-55d4c0a21000 r-xp 00002000 fd:01 1234567                    "
                                          "/usr/bin/cat\n",
                                          &m, path, sizeof(path)),
                     0);
    assert_int_equal(m.start, 0x55d4c0a00000ull);
    assert_int_equal(m.end, 0x55d4c0a21000ull);
    assert_int_equal(m.pgoff, 0x2000);
    assert_int_equal(m.inode, 1234567);
    assert_true(m.readable);
    assert_true(m.executable);
    assert_ptr_equal(m.path, path);
    assert_string_equal(m.path, "/usr/bin/cat");

    /* no trailing newline, upper-case hex, 64-bit addresses, not executable */
    assert_int_equal(proc_maps_parse_line("7FFFF7FC1000-7FFFF7FC5000 r--p 0000A000 103:02 99 /lib/ld.so", &m, path,
                                          sizeof(path)),
                     0);
    assert_int_equal(m.start, 0x7ffff7fc1000ull);
    assert_int_equal(m.pgoff, 0xa000);
    assert_true(m.readable);
    assert_false(m.executable);
    assert_string_equal(m.path, "/lib/ld.so");

    /* execute-only */
    assert_int_equal(proc_maps_parse_line("1000-2000 --xp 00000000 00:00 0 /x\n", &m, path, sizeof(path)), 0);
    assert_false(m.readable);
    assert_true(m.executable);
}

static void test_parse_special_mappings(void **state)
{
    (void)state;
    struct proc_map m;
    char path[256];
    /* anonymous: the kernel ends the line after the inode (sometimes with a space) */
    assert_int_equal(proc_maps_parse_line("7f0000000000-7f0000021000 rw-p 00000000 00:00 0\n", &m, path, sizeof(path)),
                     0);
    assert_string_equal(m.path, "");
    assert_int_equal(m.inode, 0);
    assert_false(m.executable);
    assert_int_equal(proc_maps_parse_line("7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n", &m, path,
                                          sizeof(path)),
                     0);
    assert_string_equal(m.path, "");
    assert_int_equal(proc_maps_parse_line("7ffd1c2f0000-7ffd1c311000 rw-p 00000000 00:00 0                          "
                                          "[stack]\n",
                                          &m, path, sizeof(path)),
                     0);
    assert_string_equal(m.path, "[stack]");
    assert_int_equal(m.end - m.start, 0x21000);
    assert_int_equal(proc_maps_parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  "
                                          "[vsyscall]\n",
                                          &m, path, sizeof(path)),
                     0);
    assert_int_equal(m.start, 0xffffffffff600000ull);
    assert_string_equal(m.path, "[vsyscall]");
    assert_true(m.executable);
}

static void test_parse_deleted_and_spaces(void **state)
{
    (void)state;
    struct proc_map m;
    char path[256];
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42     /tmp/app (deleted)\n", &m, path,
                                          sizeof(path)),
                     0);
    assert_string_equal(m.path, "/tmp/app");
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42     /home/u/my lib/lib x.so\n", &m,
                                          path, sizeof(path)),
                     0);
    assert_string_equal(m.path, "/home/u/my lib/lib x.so");
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42 /home/u/my lib.so (deleted)\n", &m,
                                          path, sizeof(path)),
                     0);
    assert_string_equal(m.path, "/home/u/my lib.so");
    /* "(deleted)" not as the suffix stays */
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42 /a (deleted)/b\n", &m, path,
                                          sizeof(path)),
                     0);
    assert_string_equal(m.path, "/a (deleted)/b");
    /* memfd names */
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 00:01 7 /memfd:jit (deleted)\n", &m, path,
                                          sizeof(path)),
                     0);
    assert_string_equal(m.path, "/memfd:jit");
}

static void test_parse_small_path_buffer(void **state)
{
    (void)state;
    struct proc_map m;
    char *path = malloc(8);   /* heap, exactly sized: ASan catches a write past it */
    assert_non_null(path);
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42 /usr/lib/libverylong.so\n", &m,
                                          path, 8),
                     0);
    assert_string_equal(m.path, "/usr/li");
    free(path);
    char one[1];
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42 /x\n", &m, one, 1), 0);
    assert_string_equal(one, "");
    assert_int_equal(proc_maps_parse_line("400000-401000 r-xp 00000000 08:01 42 /x\n", &m, one, 0), -1);
}

static void test_parse_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "\n",
        "garbage\n",
        "400000-401000\n",
        "400000-401000 r-xp\n",
        "400000-401000 r-xp 00000000\n",
        "400000-401000 r-xp 00000000 08:01\n",
        "400000 r-xp 00000000 08:01 42 /x\n",
        "401000-400000 r-xp 00000000 08:01 42 /x\n",   /* end before start */
        "400000-401000 r-x 00000000 08:01 42 /x\n",    /* 3-character permissions */
        "400000-401000 r-xps 00000000 08:01 42 /x\n",  /* 5-character permissions */
        "400000-401000 r-xp zz 08:01 42 /x\n",
        "400000-401000 r-xp 00000000 0801 42 /x\n",
        "400000-401000 r-xp 00000000 08:01 inode /x\n",
        "zz-401000 r-xp 00000000 08:01 42 /x\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct proc_map m;
        char path[64];
        if (proc_maps_parse_line(bad[i], &m, path, sizeof(path)) != -1)
            fail_msg("accepted malformed line '%s'", bad[i]);
    }
}

/* ---- insert / find -------------------------------------------------------------------------------------- */

static int insert(struct proc_maps *m, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", path);
    struct proc_map pm = { .start = start, .end = end, .pgoff = pgoff, .inode = 1, .readable = true,
                           .executable = true, .path = buf };
    int rc = proc_maps_insert(m, &pm);
    memset(buf, 'X', sizeof(buf) - 1);   /* the list must hold its own copy */
    return rc;
}

static void expect_map(const struct proc_maps *m, size_t i, uint64_t start, uint64_t end, uint64_t pgoff,
                       const char *path)
{
    assert_true(i < m->n);
    if (m->v[i].start != start || m->v[i].end != end || m->v[i].pgoff != pgoff || strcmp(m->v[i].path, path) != 0)
        fail_msg("map %zu: %#llx-%#llx pgoff %#llx '%s', want %#llx-%#llx pgoff %#llx '%s'", i,
                 (unsigned long long)m->v[i].start, (unsigned long long)m->v[i].end,
                 (unsigned long long)m->v[i].pgoff, m->v[i].path, (unsigned long long)start,
                 (unsigned long long)end, (unsigned long long)pgoff, path);
}

static void test_insert_sorted(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    assert_int_equal(insert(&m, 0x5000, 0x6000, 0, "c"), 0);
    assert_int_equal(insert(&m, 0x1000, 0x2000, 0, "a"), 0);
    assert_int_equal(insert(&m, 0x3000, 0x4000, 0, "b"), 0);
    assert_int_equal(m.n, 3);
    expect_map(&m, 0, 0x1000, 0x2000, 0, "a");
    expect_map(&m, 1, 0x3000, 0x4000, 0, "b");
    expect_map(&m, 2, 0x5000, 0x6000, 0, "c");
    /* adjacent, not overlapping: nothing trimmed */
    assert_int_equal(insert(&m, 0x2000, 0x3000, 0, "ab"), 0);
    assert_int_equal(m.n, 4);
    expect_map(&m, 0, 0x1000, 0x2000, 0, "a");
    expect_map(&m, 1, 0x2000, 0x3000, 0, "ab");
    expect_map(&m, 2, 0x3000, 0x4000, 0, "b");
    proc_maps_free(&m);
    assert_int_equal(m.n, 0);
    assert_null(m.v);
}

static void test_insert_splits_in_two(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    assert_int_equal(insert(&m, 0x1000, 0x5000, 0x10000, "old"), 0);
    assert_int_equal(insert(&m, 0x9000, 0xa000, 0, "other"), 0);
    unsigned gen = m.generation;
    assert_int_equal(insert(&m, 0x2000, 0x3000, 0, "new"), 0);
    assert_true(m.generation != gen);
    assert_int_equal(m.n, 4);
    expect_map(&m, 0, 0x1000, 0x2000, 0x10000, "old");
    expect_map(&m, 1, 0x2000, 0x3000, 0, "new");
    expect_map(&m, 2, 0x3000, 0x5000, 0x12000, "old");   /* the tail's file offset moves with its start */
    expect_map(&m, 3, 0x9000, 0xa000, 0, "other");
    /* the two halves own separate path copies (freeing both must not double free: ASan) */
    assert_ptr_not_equal(m.v[0].path, m.v[2].path);
    proc_maps_free(&m);
}

static void test_insert_trims(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    /* trim the end of the old mapping */
    assert_int_equal(insert(&m, 0x1000, 0x3000, 0x100000, "old"), 0);
    assert_int_equal(insert(&m, 0x2000, 0x4000, 0, "new"), 0);
    assert_int_equal(m.n, 2);
    expect_map(&m, 0, 0x1000, 0x2000, 0x100000, "old");
    expect_map(&m, 1, 0x2000, 0x4000, 0, "new");
    proc_maps_free(&m);

    /* trim the start of the old mapping */
    assert_int_equal(insert(&m, 0x2000, 0x4000, 0x100000, "old"), 0);
    assert_int_equal(insert(&m, 0x1000, 0x3000, 0, "new"), 0);
    assert_int_equal(m.n, 2);
    expect_map(&m, 0, 0x1000, 0x3000, 0, "new");
    expect_map(&m, 1, 0x3000, 0x4000, 0x101000, "old");
    proc_maps_free(&m);
}

static void test_insert_replaces_several(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    assert_int_equal(insert(&m, 0x1000, 0x2000, 0, "a"), 0);
    assert_int_equal(insert(&m, 0x2000, 0x3000, 0, "b"), 0);
    assert_int_equal(insert(&m, 0x3000, 0x4000, 0, "c"), 0);
    assert_int_equal(insert(&m, 0x5000, 0x6000, 0, "d"), 0);
    assert_int_equal(insert(&m, 0x0, 0x800, 0, "z"), 0);
    /* covers a, b, c exactly */
    assert_int_equal(insert(&m, 0x1000, 0x4000, 0x7000, "e"), 0);
    assert_int_equal(m.n, 3);
    expect_map(&m, 0, 0x0, 0x800, 0, "z");
    expect_map(&m, 1, 0x1000, 0x4000, 0x7000, "e");
    expect_map(&m, 2, 0x5000, 0x6000, 0, "d");
    /* covers part of z, all of e, part of d */
    assert_int_equal(insert(&m, 0x400, 0x5800, 0, "f"), 0);
    assert_int_equal(m.n, 3);
    expect_map(&m, 0, 0x0, 0x400, 0, "z");
    expect_map(&m, 1, 0x400, 0x5800, 0, "f");
    expect_map(&m, 2, 0x5800, 0x6000, 0x800, "d");
    /* the same range again: replaced, not duplicated */
    assert_int_equal(insert(&m, 0x400, 0x5800, 0x42, "g"), 0);
    assert_int_equal(m.n, 3);
    expect_map(&m, 1, 0x400, 0x5800, 0x42, "g");
    /* everything */
    assert_int_equal(insert(&m, 0, 0x10000, 0, "all"), 0);
    assert_int_equal(m.n, 1);
    expect_map(&m, 0, 0, 0x10000, 0, "all");
    /* an empty or inverted range changes nothing */
    unsigned gen = m.generation;
    assert_int_equal(insert(&m, 0x3000, 0x3000, 0, "empty"), 0);
    assert_int_equal(insert(&m, 0x4000, 0x3000, 0, "inverted"), 0);
    assert_int_equal(m.n, 1);
    expect_map(&m, 0, 0, 0x10000, 0, "all");
    assert_int_equal(m.generation, gen);
    /* a NULL path is stored as "" */
    struct proc_map anon = { .start = 0x20000, .end = 0x21000, .path = NULL };
    assert_int_equal(proc_maps_insert(&m, &anon), 0);
    assert_string_equal(m.v[1].path, "");
    proc_maps_free(&m);
}

static void test_find_boundaries(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    assert_null(proc_maps_find(&m, 0x1000));   /* empty */
    assert_int_equal(insert(&m, 0x1000, 0x2000, 0, "a"), 0);
    assert_int_equal(insert(&m, 0x2000, 0x3000, 0, "b"), 0);
    assert_int_equal(insert(&m, 0x5000, 0x6000, 0, "c"), 0);
    assert_null(proc_maps_find(&m, 0));
    assert_null(proc_maps_find(&m, 0xfff));
    assert_string_equal(proc_maps_find(&m, 0x1000)->path, "a");
    assert_string_equal(proc_maps_find(&m, 0x1fff)->path, "a");
    assert_string_equal(proc_maps_find(&m, 0x2000)->path, "b");
    assert_string_equal(proc_maps_find(&m, 0x2fff)->path, "b");
    assert_null(proc_maps_find(&m, 0x3000));
    assert_null(proc_maps_find(&m, 0x4fff));
    assert_string_equal(proc_maps_find(&m, 0x5000)->path, "c");
    assert_string_equal(proc_maps_find(&m, 0x5fff)->path, "c");
    assert_null(proc_maps_find(&m, 0x6000));
    assert_null(proc_maps_find(&m, UINT64_MAX));
    proc_maps_free(&m);
}

/* Random inserts against a page-by-page model: after each, every page maps to the last mapping inserted over it,
 * with the file offset that mapping gives that page, and the list stays sorted and non-overlapping. */
#define PAGES 96
#define PAGE 0x1000ull

static void test_insert_random_against_model(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    int owner[PAGES];
    uint64_t owner_pgoff[PAGES];
    for (int i = 0; i < PAGES; i++)
        owner[i] = -1;
    srand(12345);
    for (int step = 0; step < 2000; step++) {
        int a = rand() % PAGES, len = 1 + rand() % (step % 7 == 0 ? PAGES : 8);
        int b = a + len > PAGES ? PAGES : a + len;
        uint64_t pgoff = (uint64_t)(rand() % 1000) * PAGE;
        char name[16];
        snprintf(name, sizeof(name), "m%d", step);
        assert_int_equal(insert(&m, (uint64_t)a * PAGE, (uint64_t)b * PAGE, pgoff, name), 0);
        for (int p = a; p < b; p++) {
            owner[p] = step;
            owner_pgoff[p] = pgoff + (uint64_t)(p - a) * PAGE;
        }
        for (size_t i = 1; i < m.n; i++)
            assert_true(m.v[i - 1].end <= m.v[i].start);
        for (size_t i = 0; i < m.n; i++)
            assert_true(m.v[i].start < m.v[i].end);
        for (int p = 0; p < PAGES; p++) {
            uint64_t addr = (uint64_t)p * PAGE + (uint64_t)(p * 37 % 4096);
            const struct proc_map *f = proc_maps_find(&m, addr);
            if (owner[p] < 0) {
                assert_null(f);
                continue;
            }
            assert_non_null(f);
            char want[16];
            snprintf(want, sizeof(want), "m%d", owner[p]);
            assert_string_equal(f->path, want);
            assert_int_equal(f->pgoff + ((uint64_t)p * PAGE - f->start), owner_pgoff[p]);
        }
    }
    proc_maps_free(&m);
}

/* ---- loading a live process ------------------------------------------------------------------------------- */

static int marker_function(int x)
{
    return x * 3 + 1;
}

static void test_load_self(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    assert_int_equal(proc_maps_load(&m, getpid()), 0);
    assert_true(m.n > 3);
    for (size_t i = 1; i < m.n; i++)
        assert_true(m.v[i - 1].end <= m.v[i].start);
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    assert_true(len > 0);
    exe[len] = '\0';
    int (*volatile fn)(int) = marker_function;
    assert_int_equal(fn(1), 4);
    uint64_t code = (uint64_t)(uintptr_t)fn;
    const struct proc_map *f = proc_maps_find(&m, code);
    assert_non_null(f);
    assert_true(f->executable);
    assert_true(f->readable);
    assert_string_equal(f->path, exe);
    assert_true(f->inode != 0);
    /* a stack variable is in a non-executable mapping */
    int local = 0;
    const struct proc_map *s = proc_maps_find(&m, (uint64_t)(uintptr_t)&local);
    assert_non_null(s);
    assert_false(s->executable);
    /* loading again replaces the contents (not appended: still sorted and non-overlapping) */
    unsigned gen = m.generation;
    assert_int_equal(proc_maps_load(&m, getpid()), 0);
    assert_true(m.n > 3);
    for (size_t i = 1; i < m.n; i++)
        assert_true(m.v[i - 1].end <= m.v[i].start);
    assert_true(m.generation != gen);
    f = proc_maps_find(&m, code);
    assert_non_null(f);
    assert_string_equal(f->path, exe);
    proc_maps_free(&m);
}

static void test_load_missing_process(void **state)
{
    (void)state;
    struct proc_maps m = { 0 };
    assert_int_equal(proc_maps_load(&m, 0x7ffffff0), -1);
    assert_int_equal(m.n, 0);
    proc_maps_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_file_mapping),
        cmocka_unit_test(test_parse_special_mappings),
        cmocka_unit_test(test_parse_deleted_and_spaces),
        cmocka_unit_test(test_parse_small_path_buffer),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_insert_sorted),
        cmocka_unit_test(test_insert_splits_in_two),
        cmocka_unit_test(test_insert_trims),
        cmocka_unit_test(test_insert_replaces_several),
        cmocka_unit_test(test_find_boundaries),
        cmocka_unit_test(test_insert_random_against_model),
        cmocka_unit_test(test_load_self),
        cmocka_unit_test(test_load_missing_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
