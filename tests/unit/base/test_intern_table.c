/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_intern_table.c: the one interner index (base/intern_table) and the string pool on it: equal items
 * give the same pointer through growth, distinct ones stay distinct, colliding hashes are told apart by
 * the equality callback, and nothing is found in an empty table. */
#include "base/intern_table.h"
#include "base/string_pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_string_pool_through_growth(void **state)
{
    (void)state;
    struct string_pool pool = { 0 };
    static const char *first[5000];
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "name_%d", i);
        first[i] = string_pool_intern(&pool, name);
        assert_non_null(first[i]);
        assert_string_equal(first[i], name);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "name_%d", i);
        assert_ptr_equal(string_pool_intern(&pool, name), first[i]);
    }
    /* a prefix given by length is its own string */
    const char *prefix = string_pool_intern_len(&pool, "name_12345", 6);
    assert_string_equal(prefix, "name_1");
    assert_ptr_equal(prefix, first[1]);
    assert_ptr_not_equal(string_pool_intern(&pool, "name_"), first[0]);
    assert_string_equal(string_pool_intern(&pool, ""), "");
    string_pool_free(&pool);
}

static bool same_int(const void *item, const void *key)
{
    return *(const int *)item == *(const int *)key;
}

static void test_colliding_hashes(void **state)
{
    (void)state;
    struct intern_table t = { 0 };
    static int items[3000];
    int key = 7;
    assert_null(intern_table_find(&t, 42, same_int, &key));
    for (int i = 0; i < 3000; i++) {
        items[i] = i;
        uint64_t hash = (uint64_t)(i % 3);   /* three hashes for all: long probe runs */
        assert_null(intern_table_find(&t, hash, same_int, &items[i]));
        assert_int_equal(intern_table_add(&t, hash, &items[i]), 0);
    }
    for (int i = 0; i < 3000; i++) {
        int copy = i;
        assert_ptr_equal(intern_table_find(&t, (uint64_t)(i % 3), same_int, &copy), &items[i]);
        assert_null(intern_table_find(&t, (uint64_t)(i % 3) + 3, same_int, &copy));
    }
    assert_int_equal(t.n_used, 3000);
    intern_table_free(&t);
    assert_null(intern_table_find(&t, 0, same_int, &key));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_pool_through_growth),
        cmocka_unit_test(test_colliding_hashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
