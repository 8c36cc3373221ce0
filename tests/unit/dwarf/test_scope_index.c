/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_scope_index.c: the scope index's walk (dwarf/dwarf_scopes.c), which reads each DIE's entry once and
 * tells where an entry ends from its attributes' forms, against libdw's own dwarf_siblingof: for every DIE of
 * every unit, the next sibling the index gives (a subtree skipped by a jump) is the one libdw finds, and the
 * last child is the last. Over this test program itself (gcc's DWARF 5: the library's code it links, glibc's
 * and cmocka's types, inlines and lexical blocks) and a program built here four ways, DWARF 4 and 5, -O0 and
 * -O2. (The Rust units rustc writes are compared the same way end to end: tasks.t's dumps read them.) Units
 * indexed since a mark are forgotten, and walked again when asked. */
#include "dwarf/dwarf_internal.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

struct totals {
    size_t dies, jumps;
};

/* every DIE below die: the index's next sibling is libdw's */
static void compare_children(struct dwarf_scope_index *x, Dwarf_Die *die, struct totals *t, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(die, &child) != 0)
        return;
    for (;;) {
        t->dies++;
        if (dwarf_haschildren(&child) > 0) {
            t->jumps++;
            compare_children(x, &child, t, depth + 1);
        }
        Dwarf_Die by_libdw = child, by_index = child;
        int libdw_rc = dwarf_siblingof(&child, &by_libdw);
        int index_rc = dwarf_scopes_next_sibling(x, &child, &by_index);
        assert_int_equal(index_rc, libdw_rc);
        if (libdw_rc != 0)
            return;
        assert_int_equal(dwarf_dieoffset(&by_index), dwarf_dieoffset(&by_libdw));
        child = by_libdw;
    }
}

/* path's DWARF (its descriptor in *fd) */
static Dwarf *open_dwarf(const char *path, int *fd)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(*fd >= 0);
    Dwarf *dw = dwarf_begin(*fd, DWARF_C_READ);
    assert_non_null(dw);
    return dw;
}

/* Every unit of dw compared in order, the index x answering; mark_after_first (when given) set to x's mark after
 * the first unit. Returns how many units. */
static size_t compare_units(Dwarf *dw, struct dwarf_scope_index *x, struct totals *t, uint64_t *mark_after_first)
{
    Dwarf_Off off = 0, next;
    size_t header, units = 0;
    while (dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
        Dwarf_Die unit;
        assert_non_null(dwarf_offdie(dw, off + header, &unit));
        size_t jumps_before = t->jumps;
        compare_children(x, &unit, t, 0);
        /* the index answered (a walk that failed would leave the unit to libdw, and the comparison moot) */
        uint32_t index;
        if (t->jumps > jumps_before) {
            assert_true(u64_map_get(&x->by_unit, dwarf_dieoffset(&unit), &index));
            assert_true(x->units.v[index].v.n > 0);
        }
        if (units++ == 0 && mark_after_first)
            *mark_after_first = dwarf_scope_index_mark(x);
        off = next;
    }
    return units;
}

static struct totals compare_file(const char *path)
{
    int fd;
    Dwarf *dw = open_dwarf(path, &fd);
    struct dwarf_scope_index x;
    memset(&x, 0, sizeof(x));
    struct totals t = { 0, 0 };
    compare_units(dw, &x, &t, NULL);
    dwarf_scope_index_free(&x);
    dwarf_end(dw);
    close(fd);
    return t;
}

static void test_this_program(void **state)
{
    (void)state;
    struct totals t = compare_file("/proc/self/exe");
    assert_true(t.dies > 1000);
    assert_true(t.jumps > 200);
}

static const char program[] =
    "struct inner { int a; struct { char c[3]; } nested; };\n"
    "static inline int twice(int x) { { int y = x * 2; return y; } }\n"
    "union u { long l; double d; };\n"
    "enum e { ONE = 1, TWO };\n"
    "int main(int argc, char **argv) { struct inner i = { argc, { \"ab\" } }; union u v = { .l = argc };\n"
    "  for (int k = 0; k < argc; k++) { int z = twice(k); i.a += z + argv[k][0]; }\n"
    "  return i.a + (int)v.l + TWO; }\n";

static void test_dwarf_versions(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-scopes-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char src[512];
    snprintf(src, sizeof(src), "%s/p.c", dir);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    fputs(program, f);
    assert_int_equal(fclose(f), 0);
    const char *flags[] = { "-gdwarf-4 -O0", "-gdwarf-4 -O2", "-gdwarf-5 -O0", "-gdwarf-5 -O2 -fno-inline-small-functions" };
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        char bin[600], cc[2048];
        snprintf(bin, sizeof(bin), "%s/p%zu", dir, i);
        snprintf(cc, sizeof(cc), "cc %s -o '%s' '%s'", flags[i], bin, src);
        assert_int_equal(system(cc), 0);
        struct totals t = compare_file(bin);
        assert_true(t.dies > 10);
        assert_true(t.jumps > 3);
    }
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        char bin[600];
        snprintf(bin, sizeof(bin), "%s/p%zu", dir, i);
        assert_int_equal(unlink(bin), 0);
    }
    assert_int_equal(unlink(src), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* A mark, more units indexed, forget_since: the units indexed since the mark are dropped (none of their scopes
 * kept), the one before it kept; a later question walks a dropped unit again, and its answers are still libdw's. */
static void test_forget_since(void **state)
{
    (void)state;
    int fd;
    Dwarf *dw = open_dwarf("/proc/self/exe", &fd);
    struct dwarf_scope_index x;
    memset(&x, 0, sizeof(x));
    struct totals t = { 0, 0 };
    uint64_t mark = 0;
    for (int pass = 0; pass < 2; pass++) {
        compare_units(dw, &x, &t, pass == 0 ? &mark : NULL);     /* (pass 0: the mark after the first unit) */
        assert_true(x.units.n > 2);
        dwarf_scope_index_forget_since(&x, mark);
        assert_true(x.units.v[0].walked && x.units.v[0].v.n > 0);
        for (size_t i = 1; i < x.units.n; i++)
            assert_true(!x.units.v[i].walked && x.units.v[i].v.n == 0 && x.units.v[i].v.v == NULL);
        mark = dwarf_scope_index_mark(&x);             /* pass 2: every unit but the first walked again, dropped */
    }
    assert_true(t.jumps > 400);
    dwarf_scope_index_free(&x);
    dwarf_end(dw);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_this_program),
        cmocka_unit_test(test_dwarf_versions),
        cmocka_unit_test(test_forget_since),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
