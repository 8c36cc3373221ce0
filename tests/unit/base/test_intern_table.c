/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_intern_table.c: the one interner index (base/intern_table) and the string pool on it: equal items
 * give the same pointer through growth, distinct ones stay distinct, colliding hashes are told apart by
 * the equality callback, and nothing is found in an empty table; intern_hash_span finds the stop byte and
 * gives intern_hash_bytes' hash of what precedes it, wherever the stop falls in a word. */
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

/* Every length 0..40 and every stop position (none, first byte, inside and at the end of each 8-byte word):
 * the span ends at the first stop byte and hashes as intern_hash_bytes hashes that span; distinct spans
 * hash apart (length and content count). */
static void test_hash_span(void **state)
{
    (void)state;
    char text[64];
    for (size_t len = 0; len <= 40; len++) {
        for (size_t stop = 0; stop <= len; stop++) {       /* stop == len: no stop byte */
            for (size_t i = 0; i < len; i++)
                text[i] = (char)('a' + (i * 7 + len) % 26);
            if (stop < len) {
                text[stop] = ';';
                if (stop + 3 < len)
                    text[stop + 3] = ';';                  /* a later one is not the end */
            }
            size_t span = 99;
            uint64_t h = intern_hash_span(INTERN_HASH_SEED, text, len, ';', &span);
            assert_int_equal(span, stop);
            assert_true(h == intern_hash_bytes(INTERN_HASH_SEED, text, stop));
        }
    }
    assert_true(intern_hash_bytes(INTERN_HASH_SEED, "ab", 2) != intern_hash_bytes(INTERN_HASH_SEED, "ab\0", 3));
    assert_true(intern_hash_bytes(INTERN_HASH_SEED, "abcdefgh1", 9) !=
                intern_hash_bytes(INTERN_HASH_SEED, "abcdefgh2", 9));
    assert_true(intern_hash_bytes(1, "x", 1) != intern_hash_bytes(2, "x", 1));
    /* bytes above 0x7f next to the stop (the word test's borrow must not flag them) */
    const char high[] = "\xc3\xa9;\xff\x80;;";
    size_t span = 0;
    intern_hash_span(INTERN_HASH_SEED, high, sizeof(high) - 1, ';', &span);
    assert_int_equal(span, 2);
    intern_hash_span(INTERN_HASH_SEED, high + 3, sizeof(high) - 4, ';', &span);
    assert_int_equal(span, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_pool_through_growth),
        cmocka_unit_test(test_colliding_hashes),
        cmocka_unit_test(test_hash_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
