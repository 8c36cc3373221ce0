/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_thread_names.c: the tid -> name table: threads numbered in the order first seen, renaming keeps the
 * number, names cut to the kernel's 15 characters, unseen tids not found, many threads still found. */
#include "sampler/target/thread_names.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static void test_numbered_as_first_seen(void **state)
{
    (void)state;
    struct thread_names t;
    assert_int_equal(thread_names_init(&t), 0);
    bool added;
    const struct thread_name *a = thread_names_set(&t, 100, "main", &added);
    assert_non_null(a);
    assert_true(added);
    assert_int_equal(a - t.v, 0);
    const struct thread_name *b = thread_names_set(&t, 7, "worker", &added);
    assert_true(added);
    assert_int_equal(b - t.v, 1);
    assert_int_equal(thread_names_find(&t, 100), 0);
    assert_int_equal(thread_names_find(&t, 7), 1);
    assert_int_equal(thread_names_find(&t, 8), -1);
    assert_null(thread_names_get(&t, 8));
    /* renamed (exec, prctl): same number, new name */
    const struct thread_name *c = thread_names_set(&t, 100, "renamed", &added);
    assert_false(added);
    assert_int_equal(c - t.v, 0);
    assert_string_equal(thread_names_get(&t, 100), "renamed");
    assert_int_equal(t.n, 2);
    thread_names_free(&t);
}

static void test_long_names_cut(void **state)
{
    (void)state;
    struct thread_names t;
    assert_int_equal(thread_names_init(&t), 0);
    bool added;
    thread_names_set(&t, 1, "a-thread-name-longer-than-comm", &added);
    assert_string_equal(thread_names_get(&t, 1), "a-thread-name-l");
    thread_names_free(&t);
}

static void test_many_threads(void **state)
{
    (void)state;
    struct thread_names t;
    assert_int_equal(thread_names_init(&t), 0);
    bool added;
    char name[32];
    for (int tid = 1; tid <= 5000; tid++) {
        snprintf(name, sizeof(name), "t%d", tid);
        assert_non_null(thread_names_set(&t, tid * 3, name, &added));
    }
    for (int tid = 1; tid <= 5000; tid += 7) {
        snprintf(name, sizeof(name), "t%d", tid);
        assert_int_equal(thread_names_find(&t, tid * 3), tid - 1);
        assert_string_equal(thread_names_get(&t, tid * 3), name);
    }
    thread_names_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbered_as_first_seen),
        cmocka_unit_test(test_long_names_cut),
        cmocka_unit_test(test_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
