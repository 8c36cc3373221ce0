/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_future_trees.c: unit tests of the tree decoding (tasks/future_decode.c) over real DWARF, on both tokio
 * versions: the --trees tasks of the tokio fixture built against Debian's tokio 1.24 (build/fixtures/tokio_plain)
 * and the crate registry's current tokio (build/fixtures/tokio_current). Each test lays a task out in memory as
 * the program would (its header's stage Running, its async fn's state machine in a Suspend variant, the futures it
 * awaits in the states the test wants) from the DWARF's own layout, and decodes it: tokio's select! with a branch
 * finished and disabled and one disabled by its precondition (select!'s mask read, a Returned async fn left out),
 * join! with a branch Done (MaybeDone::Done left out), join_all's boxed slice, a FuturesUnordered's list through raw
 * pointers; every await at the program's line (the fixture's TREE: comment), the macro named. The fixtures are
 * built before this test (the GNUmakefile orders it after them); without them it fails, saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dwarf.h>

#include "base/vec.h"
#include "symbolize/symbolize.h"
#include "tasks/tasks_internal.h"

#define BASE 0x10000000ull
#define IMAGE 65536u
#define SCRATCH 40000u               /* where the test puts what the task points to outside itself */
#define TREES_RS "tests/fixtures/tokio/src/trees.rs"

struct fixture {
    const char *path;
    struct tokio_layout layout;
    struct string_pool pool;
    struct type_cache types;
    VEC_OF(struct task_plan) plans;
    uint8_t image[IMAGE];
    size_t scratch;                  /* next free byte of the scratch area */
};

static bool read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct fixture *f = ctx;
    if (addr < BASE || addr - BASE > IMAGE || len > IMAGE - (addr - BASE))
        return false;
    memcpy(buf, f->image + (addr - BASE), len);
    return true;
}

static int open_fixture(void **state, const char *path)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char err[512];
    if (!f)
        return -1;
    f->path = path;
    if (tokio_layout_find(&f->layout, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "test_future_trees: %s: %s (build it: make %s)\n", path, err, path);
        free(f);
        return -1;
    }
    struct elf_file ef;
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    if (elf_file_open(&ef, path) != 0 || !elf_symbols_begin(&it, &ef, ".symtab"))
        return -1;
    while (elf_symbols_next(&it, &sym)) {
        struct task_plan plan;
        struct task_plan *p;
        if (sym.type == STT_FUNC && strstr(sym.name, "3raw4poll") &&
            task_plan_find(&f->layout, &f->pool, sym.value, &plan) && (p = vec_push(&f->plans)))
            *p = plan;
    }
    elf_file_close(&ef);
    *state = f;
    return 0;
}

static int open_debian(void **state)
{
    return open_fixture(state, "build/fixtures/tokio_plain");
}

static int open_current(void **state)
{
    return open_fixture(state, "build/fixtures/tokio_current");
}

static int close_fixture(void **state)
{
    struct fixture *f = *state;
    type_cache_free(&f->types);
    string_pool_free(&f->pool);
    vec_free(&f->plans);
    tokio_layout_free(&f->layout);
    free(f);
    return 0;
}

/* the line of the fixture's "// TREE:name" comment */
static uint32_t tree_line(const char *name)
{
    FILE *src = fopen(TREES_RS, "re");
    assert_non_null(src);
    char line[512], mark[128];
    snprintf(mark, sizeof(mark), "// TREE:%s\n", name);
    uint32_t at = 0, found = 0;
    while (fgets(line, sizeof(line), src)) {
        at++;
        const char *m = strstr(line, "// TREE:");
        if (m && strcmp(m, mark) == 0)
            found = at;
    }
    fclose(src);
    assert_true(found > 0);
    return found;
}

static const struct task_plan *plan_of(struct fixture *f, const char *root)
{
    for (size_t i = 0; i < f->plans.n; i++)
        if (strcmp(f->plans.v[i].root, root) == 0)
            return &f->plans.v[i];
    fail_msg("%s: no task of %s (built without the --trees mode's futures feature?)", f->path, root);
    return NULL;
}

static void put64(struct fixture *f, uint64_t at, uint64_t value)
{
    assert_true(at >= BASE && at + 8 <= BASE + IMAGE);
    memcpy(f->image + (at - BASE), &value, 8);
}

/* room for size bytes in the scratch area: its address */
static uint64_t scratch(struct fixture *f, size_t size)
{
    uint64_t at = BASE + SCRATCH + f->scratch;
    f->scratch += (size + 127) & ~(size_t)127;
    assert_true(SCRATCH + f->scratch <= IMAGE);
    return at;
}

/* The enum at `at` of type made to hold the variant whose type is named variant ("Suspend0", "Running", "Done"):
   its discriminant written; the variant's member (offset from at, type) returned. */
static struct dwarf_member set_variant(struct fixture *f, Dwarf_Die *type, uint64_t at, const char *variant)
{
    struct dwarf_member v, discr;
    bool has_value;
    uint64_t value;
    for (size_t i = 0; dwarf_variant_at(type, i, &v); i++) {
        const char *n = dwarf_diename(&v.type), *member = dwarf_diename(&v.die);
        if (!n || strcmp(n, variant) != 0)
            continue;
        if (dwarf_variant_discr(type, member, &discr, &has_value, &value) && has_value) {
            int64_t size = dwarf_type_size(&discr.type);
            assert_true(size >= 1 && size <= 8);
            memcpy(f->image + (at + discr.offset - BASE), &value, (size_t)size);
        }
        return v;
    }
    fail_msg("no variant %s in %s", variant, dwarf_diename(type));
    return v;
}

static struct dwarf_member member(Dwarf_Die *type, const char *name)
{
    struct dwarf_member m;
    if (!dwarf_member(type, name, &m))
        fail_msg("no member %s in %s", name, dwarf_diename(type));
    return m;
}

/* the first member of type whose name is one of a or b */
static struct dwarf_member member_either(Dwarf_Die *type, const char *a, const char *b)
{
    struct dwarf_member m;
    if (!dwarf_member(type, a, &m) && !dwarf_member(type, b, &m))
        fail_msg("no member %s or %s in %s", a, b, dwarf_diename(type));
    return m;
}

/* The task of root's type at BASE, its stage Running: the root future's address and type. */
static uint64_t task_of(struct fixture *f, const struct task_plan *plan, Dwarf_Die *future)
{
    memset(f->image, 0, IMAGE);
    f->scratch = 0;
    Dwarf_Die stage = plan->stage;
    uint64_t at = BASE + plan->stage_offset;
    struct dwarf_member running = set_variant(f, &stage, at, "Running");
    struct dwarf_member field = member(&running.type, "__0");
    *future = field.type;
    return at + running.offset + field.offset;
}

/* Put a pointer to target at the pointer member m of a value at at; where m points to a pointer (1.24's select!
   holds &mut &mut), through a slot in the scratch area. */
static void point(struct fixture *f, uint64_t at, struct dwarf_member m, uint64_t target)
{
    Dwarf_Die to;
    assert_true(dwarf_type_of(&m.type, &to));
    if (dwarf_tag(&to) == DW_TAG_pointer_type) {
        uint64_t slot = scratch(f, 8);
        put64(f, slot, target);
        target = slot;
    }
    put64(f, at + m.offset, target);
}

static struct decoded_future decode(struct fixture *f, const struct task_plan *plan)
{
    struct decode_limits limits = { 64, 1u << 20, false, NULL };
    struct decoded_future out;
    assert_true(future_decode(&f->layout, &f->pool, &f->types, &limits, read_image, f, BASE, plan, &out));
    return out;
}

static void expect_frame(const struct task_node *n, const char *function, const char *file, uint32_t line,
                         const char *macro)
{
    if (!n->frame.function || strcmp(n->frame.function, function) != 0)
        fail_msg("frame %s, want %s", n->frame.function ? n->frame.function : "(none)", function);
    if (file) {
        assert_non_null(n->frame.file);
        assert_string_equal(n->frame.file, file);
        assert_int_equal(n->frame.line, line);
    }
    if (macro) {
        assert_non_null(n->frame.macro);
        assert_string_equal(n->frame.macro, macro);
        assert_false(n->frame.macro_line);
    } else {
        assert_null(n->frame.macro);
    }
}

/* the children of node 0, as function names ("(leaf)" for a node without one) */
static size_t children(const struct decoded_future *d, const char **names, size_t max)
{
    size_t n = 0, child = 1;
    for (uint32_t k = 0; k < d->nodes[0].n_children && n < max; k++) {
        names[n++] = d->nodes[child].frame.function ? d->nodes[child].frame.function : "(leaf)";
        child += d->nodes[child].subtree;
    }
    return n;
}

/* tokio's select! over finished_none (Returned, its bit set), never_polled (its precondition false: its bit set),
   a channel's recv, a Notify, a nap (all three Unresumed here) */
static void test_select(void **state)
{
    struct fixture *f = *state;
    const struct task_plan *plan = plan_of(f, "tokio_fixture::trees::select_wait");
    Dwarf_Die env;
    uint64_t at = task_of(f, plan, &env);
    struct dwarf_member suspend = set_variant(f, &env, at, "Suspend0");
    uint64_t vars = at + suspend.offset;
    struct dwarf_member disabled = member(&suspend.type, "disabled"), futures = member(&suspend.type, "futures");
    struct dwarf_member awaitee = member(&suspend.type, "__awaitee"), closure;
    assert_true(dwarf_member_at(&awaitee.type, 0, &closure));        /* PollFn { f } */
    uint64_t closure_at = vars + awaitee.offset + closure.offset;
    point(f, closure_at, member_either(&closure.type, "_ref__disabled", "disabled"), vars + disabled.offset);
    point(f, closure_at, member_either(&closure.type, "_ref__futures", "futures"), vars + futures.offset);
    static const char *const states[] = { "Returned", "Unresumed", "Unresumed", "Unresumed", "Unresumed" };
    for (size_t i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "__%zu", i);
        struct dwarf_member branch = member(&futures.type, name);
        set_variant(f, &branch.type, vars + futures.offset + branch.offset, states[i]);
    }
    f->image[vars + disabled.offset - BASE] = 0x3;   /* finished_none done, never_polled's precondition false */
    struct decoded_future d = decode(f, plan);
    expect_frame(&d.nodes[0], "tokio_fixture::trees::select_wait", "trees.rs", tree_line("select_wait"), "select!");
    const char *names[8];
    assert_int_equal(children(&d, names, 8), 3);
    assert_non_null(strstr(names[0], "::recv"));
    assert_string_equal(names[1], "tokio_fixture::trees::wait_notify");
    assert_string_equal(names[2], "tokio_fixture::trees::nap");
    assert_string_equal(d.nodes[d.n_nodes - 1].leaf, "(not polled yet)");
    assert_int_equal(d.n_frames, 2);                  /* the first pending path: select_wait, recv */
    assert_ptr_equal(d.frames[0].function, d.nodes[0].frame.function);
    free(d.nodes);
    /* the mask says which branches are left out: with never_polled's bit clear it is a branch (not polled yet);
       finished_none, Returned, stays out whatever the mask */
    f->image[vars + disabled.offset - BASE] = 0x0;
    d = decode(f, plan);
    assert_int_equal(children(&d, names, 8), 4);
    assert_string_equal(names[0], "tokio_fixture::trees::never_polled");
    free(d.nodes);
}

/* tokio's join! over ready_now (Done), nap, wait_oneshot, wait_notify (in the future's state, Unresumed) */
static void test_join(void **state)
{
    struct fixture *f = *state;
    const struct task_plan *plan = plan_of(f, "tokio_fixture::trees::join_wait");
    Dwarf_Die env;
    uint64_t at = task_of(f, plan, &env);
    struct dwarf_member suspend = set_variant(f, &env, at, "Suspend0");
    uint64_t vars = at + suspend.offset;
    struct dwarf_member awaitee = member(&suspend.type, "__awaitee"), closure;
    assert_true(dwarf_member_at(&awaitee.type, 0, &closure));
    uint64_t closure_at = vars + awaitee.offset + closure.offset;
    struct dwarf_member futures_ref = member_either(&closure.type, "futures", "_ref__futures");
    Dwarf_Die tuple;
    assert_true(dwarf_type_of(&futures_ref.type, &tuple));
    while (dwarf_tag(&tuple) == DW_TAG_pointer_type)
        assert_true(dwarf_type_of(&tuple, &tuple));
    uint64_t tuple_at = scratch(f, (size_t)dwarf_type_size(&tuple));
    point(f, closure_at, futures_ref, tuple_at);
    for (size_t i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "__%zu", i);
        struct dwarf_member branch = member(&tuple, name);
        uint64_t branch_at = tuple_at + branch.offset;
        if (i == 0) {
            set_variant(f, &branch.type, branch_at, "Done");
            continue;
        }
        struct dwarf_member fut = set_variant(f, &branch.type, branch_at, "Future");
        struct dwarf_member inner = member_either(&fut.type, "__0", "future");   /* (tokio 1.54: Future { future }) */
        set_variant(f, &inner.type, branch_at + fut.offset + inner.offset, "Unresumed");
    }
    struct decoded_future d = decode(f, plan);
    expect_frame(&d.nodes[0], "tokio_fixture::trees::join_wait", "trees.rs", tree_line("join_wait"), "join!");
    const char *names[8];
    assert_int_equal(children(&d, names, 8), 3);
    assert_string_equal(names[0], "tokio_fixture::trees::nap");
    assert_string_equal(names[1], "tokio_fixture::trees::wait_oneshot");
    assert_string_equal(names[2], "tokio_fixture::trees::wait_notify");
    free(d.nodes);
}

/* join_all of three maybe_nap futures in its boxed slice of MaybeDone: the first Done, two pending */
static void test_join_all(void **state)
{
    struct fixture *f = *state;
    const struct task_plan *plan = plan_of(f, "tokio_fixture::trees::with_futures::join_all_wait");
    Dwarf_Die env;
    uint64_t at = task_of(f, plan, &env);
    struct dwarf_member suspend = set_variant(f, &env, at, "Suspend0");
    uint64_t vars = at + suspend.offset;
    struct dwarf_member awaitee = member(&suspend.type, "__awaitee");     /* JoinAll { kind } */
    struct dwarf_member kind = member(&awaitee.type, "kind");
    uint64_t kind_at = vars + awaitee.offset + kind.offset;
    struct dwarf_member small = set_variant(f, &kind.type, kind_at, "Small");
    struct dwarf_member elems = member(&small.type, "elems"), box, data, length;
    assert_true(dwarf_member_at(&elems.type, 0, &box));                  /* Pin { pointer: Box<[T]> } */
    data = member(&box.type, "data_ptr");
    length = member(&box.type, "length");
    Dwarf_Die element;
    assert_true(dwarf_type_of(&data.type, &element));
    size_t size = (size_t)dwarf_type_size(&element);
    uint64_t array = scratch(f, 3 * size), box_at = kind_at + small.offset + elems.offset + box.offset;
    put64(f, box_at + data.offset, array);
    put64(f, box_at + length.offset, 3);
    for (size_t i = 0; i < 3; i++) {
        if (i == 0) {
            set_variant(f, &element, array, "Done");
            continue;
        }
        struct dwarf_member fut = set_variant(f, &element, array + i * size, "Future");
        struct dwarf_member inner = member(&fut.type, "__0");
        set_variant(f, &inner.type, array + i * size + fut.offset + inner.offset, "Unresumed");
    }
    struct decoded_future d = decode(f, plan);
    expect_frame(&d.nodes[0], "tokio_fixture::trees::with_futures::join_all_wait", "trees.rs",
                 tree_line("join_all_wait"), NULL);
    const char *names[8];
    assert_int_equal(children(&d, names, 8), 2);
    assert_string_equal(names[0], "tokio_fixture::trees::with_futures::maybe_nap");
    assert_string_equal(names[1], "tokio_fixture::trees::with_futures::maybe_nap");
    free(d.nodes);
}

/* a FuturesUnordered's three tasks, reached from head_all along next_all (raw pointers), each holding Some(future);
   a list that loops back on itself ends at the visited set */
static void test_futures_unordered(void **state)
{
    struct fixture *f = *state;
    const struct task_plan *plan = plan_of(f, "tokio_fixture::trees::with_futures::unordered_wait");
    Dwarf_Die env;
    uint64_t at = task_of(f, plan, &env);
    struct dwarf_member suspend = set_variant(f, &env, at, "Suspend0");
    uint64_t vars = at + suspend.offset;
    struct dwarf_member awaitee = member(&suspend.type, "__awaitee");     /* Next { stream: &mut FuturesUnordered } */
    struct dwarf_member stream = member(&awaitee.type, "stream");
    Dwarf_Die set;
    assert_true(dwarf_type_of(&stream.type, &set));
    uint64_t set_at = scratch(f, (size_t)dwarf_type_size(&set));
    put64(f, vars + awaitee.offset + stream.offset, set_at);
    struct dwarf_member head = member(&set, "head_all");
    Dwarf_Die task;
    uint64_t head_at = 0, next_at = 0;
    assert_true(type_pointer_inside(&head.type, &head_at, &task));
    dwarf_type_strip(&task);
    struct dwarf_member future = member(&task, "future"), next = member(&task, "next_all");
    assert_true(type_pointer_inside(&next.type, &next_at, &(Dwarf_Die){ 0 }));
    uint64_t tasks[3];
    for (size_t i = 0; i < 3; i++)
        tasks[i] = scratch(f, (size_t)dwarf_type_size(&task));
    put64(f, set_at + head.offset + head_at, tasks[0]);
    for (size_t i = 0; i < 3; i++) {
        put64(f, tasks[i] + next.offset + next_at, i < 2 ? tasks[i + 1] : tasks[0]);   /* (a loop at the end) */
        struct dwarf_member cell;                                       /* UnsafeCell<Option<F>> */
        assert_true(dwarf_member_at(&future.type, 0, &cell));
        uint64_t option_at = tasks[i] + future.offset + cell.offset;
        struct dwarf_member some = set_variant(f, &cell.type, option_at, "Some");
        struct dwarf_member inner = member(&some.type, "__0");
        set_variant(f, &inner.type, option_at + some.offset + inner.offset, "Unresumed");
    }
    struct decoded_future d = decode(f, plan);
    expect_frame(&d.nodes[0], "tokio_fixture::trees::with_futures::unordered_wait", "trees.rs",
                 tree_line("unordered_wait"), NULL);
    const char *names[8];
    assert_int_equal(children(&d, names, 8), 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(names[i], "tokio_fixture::trees::with_futures::maybe_nap");
    free(d.nodes);
}

struct line_seen {
    uint32_t line, found;
};

static void see_line(void *ctx, Dwarf_Die *type, const char *file, uint32_t line)
{
    struct line_seen *seen = ctx;
    (void)type;
    if (strstr(file, "trees.rs") && line == seen->line)
        seen->found++;
}

/* The __awaitee locals the program's lines come from: select_wait's, at its select!'s invocation line, beside
   the Suspend variant at the macro's own source. */
static void test_awaitee_lines(void **state)
{
    struct fixture *f = *state;
    const struct task_plan *plan = plan_of(f, "tokio_fixture::trees::select_wait");
    Dwarf_Die env = plan->future;
    struct dwarf_member suspend;
    const char *path = NULL;
    for (size_t i = 0; dwarf_variant_at(&env, i, &suspend); i++) {
        const char *n = dwarf_diename(&suspend.type);
        if (n && strcmp(n, "Suspend0") == 0)
            path = dwarf_decl_path(&suspend.die);
    }
    assert_non_null(path);
    assert_string_equal(symbolize_macro_of(path), "select!");     /* rustc's position: tokio's select.rs */
    struct line_seen seen = { tree_line("select_wait"), 0 };
    assert_true(dwarf_async_fn_awaitees(f->layout.dwarf, &env, see_line, &seen) >= 1);
    assert_int_equal(seen.found, 1);
}

int main(void)
{
    const struct CMUnitTest debian[] = {
        cmocka_unit_test(test_select), cmocka_unit_test(test_join), cmocka_unit_test(test_join_all),
        cmocka_unit_test(test_futures_unordered), cmocka_unit_test(test_awaitee_lines),
    };
    const struct CMUnitTest current[] = {
        cmocka_unit_test(test_select), cmocka_unit_test(test_join), cmocka_unit_test(test_join_all),
        cmocka_unit_test(test_futures_unordered), cmocka_unit_test(test_awaitee_lines),
    };
    int failed = cmocka_run_group_tests_name("tokio 1.24 (Debian): build/fixtures/tokio_plain", debian, open_debian,
                                             close_fixture);
    failed += cmocka_run_group_tests_name("current tokio: build/fixtures/tokio_current", current, open_current,
                                          close_fixture);
    return failed;
}
