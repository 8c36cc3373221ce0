/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_vec.c: the growable-array helper: push, reserve, overflow refused without touching the array, shrink to fit. */
#include "base/vec.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct pair {
    int a, b;
};

static void test_push_grows_and_zeroes(void **state)
{
    (void)state;
    VEC_OF(struct pair) arr = {0};
    for (int i = 0; i < 1000; i++) {
        struct pair *p = vec_push(&arr);
        assert_non_null(p);
        assert_int_equal(p->a, 0);
        assert_int_equal(p->b, 0);
        p->a = i;
    }
    assert_int_equal(arr.n, 1000);
    assert_true(arr.cap >= 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(arr.v[i].a, i);
    vec_free(&arr);
    assert_null(arr.v);
    assert_int_equal(arr.n, 0);
    assert_int_equal(arr.cap, 0);
}

static void test_reserve_keeps_contents(void **state)
{
    (void)state;
    VEC_OF(uint64_t) arr = {0};
    assert_int_equal(vec_reserve(&arr, 3), 0);
    assert_true(arr.cap >= 3);
    arr.v[arr.n++] = 7;
    assert_int_equal(vec_reserve(&arr, 100), 0);
    assert_int_equal(arr.v[0], 7);
    size_t cap = arr.cap;
    assert_int_equal(vec_reserve(&arr, 5), 0);   /* already room: nothing changes */
    assert_int_equal(arr.cap, cap);
    vec_free(&arr);
}

static void test_overflow_is_an_error(void **state)
{
    (void)state;
    VEC_OF(uint64_t) arr = {0};
    assert_non_null(vec_push(&arr));
    uint64_t *before = arr.v;
    size_t cap = arr.cap;
    assert_int_equal(vec_reserve(&arr, SIZE_MAX / 4), -1);
    assert_int_equal(vec_reserve(&arr, SIZE_MAX), -1);
    assert_ptr_equal(arr.v, before);
    assert_int_equal(arr.cap, cap);
    assert_int_equal(arr.n, 1);
    vec_free(&arr);
}

static void test_shrink_to_fit(void **state)
{
    (void)state;
    VEC_OF(struct pair) arr = {0};
    for (int i = 0; i < 1000; i++) {
        struct pair *p = vec_push(&arr);
        assert_non_null(p);
        p->a = i;
    }
    assert_int_equal(arr.cap, 1024);
    vec_shrink(&arr);
    assert_int_equal(arr.n, 1000);
    assert_int_equal(arr.cap, 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(arr.v[i].a, i);
    assert_non_null(vec_push(&arr));        /* grows again from there */
    assert_int_equal(arr.n, 1001);
    assert_true(arr.cap >= 1001);
    vec_free(&arr);
    vec_shrink(&arr);                        /* an empty array stays empty */
    assert_null(arr.v);
    assert_int_equal(arr.cap, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_grows_and_zeroes),
        cmocka_unit_test(test_reserve_keeps_contents),
        cmocka_unit_test(test_overflow_is_an_error),
        cmocka_unit_test(test_shrink_to_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
