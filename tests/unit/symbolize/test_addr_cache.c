/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_addr_cache.c: symbolize's one address cache (an internal piece of symbolize/, tested here beside
 * the layer's own tests): the three kinds of one address are three entries, an entry only hits for the
 * mapping generation it was resolved in, and a stale entry is replaced in place. */
#include "symbolize/symbolize_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void test_kinds_are_distinct(void **state)
{
    (void)state;
    struct addr_cache c = { 0 };
    struct sym_result results[3] = { 0 };
    enum addr_kind kinds[3] = { ADDR_USER, ADDR_USER_RETURN, ADDR_KERNEL };
    for (uint64_t a = 0x400000; a < 0x400000 + 3000 * 8; a += 8)
        for (int k = 0; k < 3; k++)
            assert_int_equal(addr_cache_put(&c, a, kinds[k], 0, &results[k]), 0);
    for (uint64_t a = 0x400000; a < 0x400000 + 3000 * 8; a += 8)
        for (int k = 0; k < 3; k++)
            assert_ptr_equal(addr_cache_get(&c, a, kinds[k], 0), &results[k]);
    assert_null(addr_cache_get(&c, 0x400004, ADDR_USER_RETURN, 0));
    addr_cache_free(&c);
    assert_null(addr_cache_get(&c, 0x400000, ADDR_USER, 0));
}

static void test_generation_decides(void **state)
{
    (void)state;
    struct addr_cache c = { 0 };
    struct sym_result a = { 0 }, b = { 0 };
    assert_int_equal(addr_cache_put(&c, 0x7f0000001000, ADDR_USER_RETURN, 4, &a), 0);
    assert_ptr_equal(addr_cache_get(&c, 0x7f0000001000, ADDR_USER_RETURN, 4), &a);
    assert_null(addr_cache_get(&c, 0x7f0000001000, ADDR_USER_RETURN, 5));   /* the mapping was replaced */
    assert_int_equal(addr_cache_put(&c, 0x7f0000001000, ADDR_USER_RETURN, 5, &b), 0);
    assert_ptr_equal(addr_cache_get(&c, 0x7f0000001000, ADDR_USER_RETURN, 5), &b);
    assert_null(addr_cache_get(&c, 0x7f0000001000, ADDR_USER_RETURN, 4));
    assert_int_equal(c.entries.n, 1);                                        /* replaced in place */
    addr_cache_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_are_distinct),
        cmocka_unit_test(test_generation_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
