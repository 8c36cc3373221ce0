/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_u64_map.c: the u64 -> u32 map and its find-or-append into an array (u64_map_index): keys found again
 * across growth (moved a few at a time), new elements zeroed, and every failure (array, map, index range) leaving both as they were. */
#include "base/u64_map.h"
#include "base/vec.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The map's tables come from calloc: this test's calloc fails while calloc_fails is set (the one way to make
 * a map insert fail). Left out under AddressSanitizer, whose own calloc must pair with its free. */
#ifndef __SANITIZE_ADDRESS__
#define CAN_FAIL_CALLOC 1
static bool calloc_fails;
extern void *__libc_calloc(size_t n, size_t size);
void *calloc(size_t n, size_t size)
{
    return calloc_fails ? NULL : __libc_calloc(n, size);
}
#endif

struct entry {
    uint64_t key;
    uint32_t seen;
};

static void test_put_get_across_growth(void **state)
{
    (void)state;
    struct u64_map m;
    assert_int_equal(u64_map_init(&m, 4), 0);
    for (uint64_t k = 0; k < 5000; k++)
        assert_int_equal(u64_map_put(&m, k * 0x9e3779b97f4a7c15ULL, (uint32_t)(k * 3)), 0);
    assert_int_equal(m.count, 5000);
    assert_int_equal(u64_map_put(&m, 7 * 0x9e3779b97f4a7c15ULL, 1), 0);   /* overwrite: no new key */
    assert_int_equal(m.count, 5000);
    for (uint64_t k = 0; k < 5000; k++) {
        uint32_t v;
        assert_true(u64_map_get(&m, k * 0x9e3779b97f4a7c15ULL, &v));
        assert_int_equal(v, k == 7 ? 1 : k * 3);
    }
    uint32_t v;
    assert_false(u64_map_get(&m, 5001 * 0x9e3779b97f4a7c15ULL, &v));
    u64_map_free(&m);
}

/* Growing moves the keys a few at each later insert: right after the growth most keys are still in the old
 * table, every key is found all along, a key overwritten before it moved keeps its newer value, and the old
 * table is gone before the new one is half full. */
static void test_growth_moves_keys_a_few_at_a_time(void **state)
{
    (void)state;
    struct u64_map m;
    assert_int_equal(u64_map_init(&m, 4), 0);
    uint64_t key = 0;
    while ((m.count + 1) * 2 <= m.mask + 1) {
        key++;
        assert_int_equal(u64_map_put(&m, key * 0x9e3779b97f4a7c15ULL, (uint32_t)key), 0);
    }
    size_t mask = m.mask, before = m.count;
    assert_null(m.old_values);
    key++;
    assert_int_equal(u64_map_put(&m, key * 0x9e3779b97f4a7c15ULL, (uint32_t)key), 0);   /* grows */
    assert_int_equal(m.mask, 2 * mask + 1);
    assert_non_null(m.old_values);
    assert_true(m.moved <= 4);
    assert_int_equal(m.count, before + 1);
    assert_int_equal(u64_map_put(&m, 1 * 0x9e3779b97f4a7c15ULL, 777), 0);   /* an old key, overwritten */
    assert_int_equal(m.count, before + 1);
    for (uint64_t k = 1; k <= key; k++) {
        uint32_t v;
        assert_true(u64_map_get(&m, k * 0x9e3779b97f4a7c15ULL, &v));
        assert_int_equal(v, k == 1 ? 777 : k);
    }
    while (m.old_values) {
        assert_true((m.count + 1) * 2 <= m.mask + 1);                  /* done before the next growth */
        key++;
        assert_int_equal(u64_map_put(&m, key * 0x9e3779b97f4a7c15ULL, (uint32_t)key), 0);
    }
    assert_int_equal(m.mask, 2 * mask + 1);
    for (uint64_t k = 1; k <= key; k++) {
        uint32_t v;
        assert_true(u64_map_get(&m, k * 0x9e3779b97f4a7c15ULL, &v));
        assert_int_equal(v, k == 1 ? 777 : k);
    }
    assert_int_equal(m.count, key);
    u64_map_free(&m);
}

static void test_index_appends_once(void **state)
{
    (void)state;
    struct u64_map m;
    VEC_OF(struct entry) arr = { 0 };
    assert_int_equal(u64_map_init(&m, 4), 0);
    for (int round = 0; round < 3; round++) {
        for (uint64_t k = 0; k < 1000; k++) {
            uint64_t key = k << 20 | 5;
            uint32_t index = UINT32_MAX;
            int rc = u64_map_index(&m, key, &arr, &index);
            assert_int_equal(rc, round == 0 ? 1 : 0);
            assert_int_equal(index, k);
            if (rc == 1) {
                assert_int_equal(arr.v[index].key, 0);      /* a new element comes zeroed */
                assert_int_equal(arr.v[index].seen, 0);
                arr.v[index].key = key;
            }
            arr.v[index].seen++;
        }
        assert_int_equal(arr.n, 1000);
    }
    for (size_t i = 0; i < arr.n; i++) {
        assert_int_equal(arr.v[i].key, i << 20 | 5);
        assert_int_equal(arr.v[i].seen, 3);
    }
    u64_map_free(&m);
    vec_free(&arr);
}

/* The array cannot grow (its size overflows) or is full (UINT32_MAX elements): no key goes in. */
static void test_index_array_failure_leaves_map(void **state)
{
    (void)state;
    struct u64_map m;
    assert_int_equal(u64_map_init(&m, 4), 0);
    void *data = NULL;
    size_t n = 0, cap = 0;
    uint32_t index = 77;
    assert_int_equal(u64_map_index_raw(&m, 42, &data, &n, &cap, SIZE_MAX / 4, &index), -1);
    assert_null(data);
    assert_int_equal(n, 0);
    assert_int_equal(cap, 0);
    assert_int_equal(m.count, 0);
    assert_false(u64_map_get(&m, 42, &index));

    uint64_t one;
    void *full = &one;                   /* never touched: the count is refused first */
    size_t full_n = UINT32_MAX, full_cap = UINT32_MAX;
    assert_int_equal(u64_map_index_raw(&m, 43, &full, &full_n, &full_cap, sizeof(one), &index), -1);
    assert_int_equal(full_n, UINT32_MAX);
    assert_int_equal(m.count, 0);
    assert_false(u64_map_get(&m, 43, &index));
    u64_map_free(&m);
}

/* The map cannot grow for a new key: put and index fail with map and array as they were, and the same key
 * goes in once memory is back. */
static void test_map_failure_leaves_both(void **state)
{
    (void)state;
#ifdef CAN_FAIL_CALLOC
    struct u64_map m;
    VEC_OF(struct entry) arr = { 0 };
    assert_int_equal(u64_map_init(&m, 8), 0);
    uint32_t index;
    /* fill the map to the point where one more key makes it grow */
    uint64_t key = 0;
    while ((m.count + 1) * 2 <= m.mask + 1) {
        assert_int_equal(u64_map_index(&m, ++key, &arr, &index), 1);
        arr.v[index].key = key;
    }
    size_t count = m.count, n = arr.n, mask = m.mask;
    calloc_fails = true;
    int put_rc = u64_map_put(&m, 1000, 1);
    int index_rc = u64_map_index(&m, 1001, &arr, &index);
    int overwrite_rc = u64_map_put(&m, 1, 5);           /* a key already in needs no room */
    calloc_fails = false;
    assert_int_equal(put_rc, -1);
    assert_int_equal(index_rc, -1);
    assert_int_equal(overwrite_rc, 0);
    assert_int_equal(m.count, count);
    assert_int_equal(m.mask, mask);
    assert_int_equal(arr.n, n);
    assert_false(u64_map_get(&m, 1000, &index));
    assert_false(u64_map_get(&m, 1001, &index));
    for (uint64_t k = 1; k <= key; k++) {
        assert_true(u64_map_get(&m, k, &index));
        assert_int_equal(index, k == 1 ? 5 : k - 1);
    }
    assert_int_equal(u64_map_put(&m, 1, 0), 0);
    assert_int_equal(u64_map_index(&m, 1001, &arr, &index), 1);
    assert_int_equal(index, n);
    assert_int_equal(arr.n, n + 1);
    assert_true(m.mask > mask);
    u64_map_free(&m);
    vec_free(&arr);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_across_growth),
        cmocka_unit_test(test_growth_moves_keys_a_few_at_a_time),
        cmocka_unit_test(test_index_appends_once),
        cmocka_unit_test(test_index_array_failure_leaves_map),
        cmocka_unit_test(test_map_failure_leaves_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
