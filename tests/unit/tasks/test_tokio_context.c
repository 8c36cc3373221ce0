/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_tokio_context.c: what tasks/tokio_layout.c finds of tokio in the DWARF of the tokio fixture built against
 * Debian's tokio 1.24 (build/fixtures/tokio_plain) and the crate registry's current tokio (build/fixtures/
 * tokio_current): CONTEXT.current_task_id, found once for the sampler (tokio_task_id_place_find) and the task
 * reader (the layout) alike, the same place for both, with 1.24's Option discriminant and the current tokio's niche;
 * tokio's task id counter (NEXT_ID) for the spawned count; 1.24's current_thread::CURRENT for a current-thread
 * runtime's scheduler; the root future's size, and the Box tokio 1.41 and later put a large one in (the fixture's
 * big_state, 20,000 bytes held across an await: boxed by the current tokio, inline in 1.24's). A program without
 * tokio has no CONTEXT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tasks/tasks_internal.h"

static const char *const DEBIAN = "build/fixtures/tokio_plain";
static const char *const CURRENT = "build/fixtures/tokio_current";

static void check_place(const char *path, bool tagged)
{
    struct tokio_task_id_place place;
    assert_int_equal(tokio_task_id_place_find(path, &place), 1);
    assert_true(place.found);
    assert_non_null(strstr(place.symbol, "5tokio7runtime7context7CONTEXT"));
    assert_int_equal(place.id_size, 8);
    assert_int_equal(place.has_tag, tagged);
    if (tagged)
        assert_int_equal(place.some_value, 1);
    /* the reader's layout decodes the same place */
    struct tokio_layout l;
    char err[512];
    assert_int_equal(tokio_layout_find(&l, path, err, sizeof(err)), 0);
    assert_int_equal(l.task_id.id_size, 8);
    assert_int_equal(l.context_tp_offset + (int64_t)l.task_id.id_offset, place.id_tp_offset);
    assert_int_equal(l.task_id.has_tag, tagged);
    if (tagged)
        assert_int_equal(l.context_tp_offset + (int64_t)l.task_id.tag_offset, place.tag_tp_offset);
    assert_true(l.next_id != 0);                   /* tokio::runtime::task::id::Id::next::NEXT_ID */
    tokio_layout_free(&l);
}

static void test_context_debian(void **state)
{
    (void)state;
    check_place(DEBIAN, true);            /* tokio 1.24: Option<Id> with a discriminant of its own */
}

static void test_context_current(void **state)
{
    (void)state;
    check_place(CURRENT, false);          /* 1.41 on: Id holds a NonZeroU64, the Option a niche */
}

static void test_no_tokio(void **state)
{
    (void)state;
    struct tokio_task_id_place place;
    assert_int_equal(tokio_task_id_place_find("build/fixtures/executor", &place), 0);
    assert_string_equal(place.symbol, "");
    assert_int_equal(tokio_task_id_place_find("build/no-such-file", &place), -1);
}

/* The plan of the root future named root among the program's raw::poll<T, S> copies. */
static bool plan_named(struct tokio_layout *l, struct string_pool *pool, const char *path, const char *root,
                       struct task_plan *out)
{
    struct elf_file ef;
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    bool found = false;
    if (elf_file_open(&ef, path) != 0 || !elf_symbols_begin(&it, &ef, ".symtab"))
        return false;
    while (!found && elf_symbols_next(&it, &sym))
        found = sym.type == STT_FUNC && strstr(sym.name, "3raw4poll") && task_plan_find(l, pool, sym.value, out) &&
                strcmp(out->root, root) == 0;
    elf_file_close(&ef);
    return found;
}

static void test_root_sizes(void **state)
{
    (void)state;
    struct tokio_layout l;
    struct string_pool pool = { 0 };
    struct task_plan plan;
    char err[512];
    assert_int_equal(tokio_layout_find(&l, CURRENT, err, sizeof(err)), 0);
    assert_true(plan_named(&l, &pool, CURRENT, "tokio_fixture::trees::big_state", &plan));
    assert_int_equal(plan.future_size, 8);                  /* Pin<Box<F>> */
    assert_true(plan.boxed_size > 20000 && plan.boxed_size < 21000);
    assert_true(plan_named(&l, &pool, CURRENT, "tokio_fixture::parked::park_oneshot", &plan));
    assert_int_equal(plan.boxed_size, 0);
    assert_true(plan.future_size > 0 && plan.future_size < 1024);
    tokio_layout_free(&l);
    assert_int_equal(tokio_layout_find(&l, DEBIAN, err, sizeof(err)), 0);
    assert_true(l.current_tp_offset != 0);                  /* 1.24's current_thread::CURRENT */
    assert_true(plan_named(&l, &pool, DEBIAN, "tokio_fixture::trees::big_state", &plan));
    assert_int_equal(plan.boxed_size, 0);                   /* 1.24 boxes only in debug builds */
    assert_true(plan.future_size > 20000 && plan.future_size < 21000);
    tokio_layout_free(&l);
    string_pool_free(&pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_debian),
        cmocka_unit_test(test_context_current),
        cmocka_unit_test(test_no_tokio),
        cmocka_unit_test(test_root_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
