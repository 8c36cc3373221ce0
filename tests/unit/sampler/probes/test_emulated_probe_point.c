/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_emulated_probe_point.c: where a waker probe goes in a function (sampler/probes/emulated_probe_point.h),
 * on the code bytes of real functions and small made-up ones: tokio's clone_waker (its js after a mov, a
 * locked xadd on (%rdi) and a test), wake_by_ref (its je after sub, mov, two leas, a long nop and a test),
 * wake_by_val (a push at entry); the entry when a return comes first, when %rdi is written first (as a
 * destination, by an exchange, by a string store), and for an indirect jump (single-stepped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sampler/probes/emulated_probe_point.h"

#define AT(bytes) emulated_probe_point_in(bytes, sizeof(bytes))

static void test_tokio_waker_functions(void **state)
{
    (void)state;
    /* clone_waker: mov $0x40,%eax; lock xadd %rax,(%rdi); test %rax,%rax; js +11 */
    const uint8_t clone_waker[] = { 0xb8, 0x40, 0x00, 0x00, 0x00, 0xf0, 0x48, 0x0f, 0xc1, 0x07, 0x48, 0x85, 0xc0,
                                    0x78, 0x0b, 0x48, 0x8b, 0x05, 0xa2, 0x8a, 0x07, 0x00, 0x48, 0x89, 0xfa, 0xc3 };
    assert_int_equal(AT(clone_waker), 13);
    /* wake_by_ref: sub $0x18,%rsp; mov (%rdi),%rax; lea 0x8(%rsp),%rcx; lea 0x10(%rsp),%rdx;
     * data16 ... cs nopw 0x0(%rax,%rax,1); test $0x6,%al; je +0x1c */
    const uint8_t wake_by_ref[] = { 0x48, 0x83, 0xec, 0x18, 0x48, 0x8b, 0x07, 0x48, 0x8d, 0x4c, 0x24, 0x08, 0x48, 0x8d,
                                    0x54, 0x24, 0x10, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00,
                                    0x00, 0x00, 0x00, 0xa8, 0x06, 0x74, 0x1c };
    assert_int_equal(AT(wake_by_ref), 33);
    /* wake_by_val: push %rbx; mov %rdi,%rbx */
    const uint8_t wake_by_val[] = { 0x53, 0x48, 0x89, 0xfb };
    assert_int_equal(AT(wake_by_val), 0);
}

static void test_entry_kept(void **state)
{
    (void)state;
    const uint8_t ret_first[] = { 0xc3, 0x74, 0x00 };                              /* ret; je */
    assert_int_equal(AT(ret_first), 0);
    const uint8_t writes_rdi[] = { 0x48, 0x8b, 0x3f, 0x74, 0x00 };                /* mov (%rdi),%rdi; je */
    assert_int_equal(AT(writes_rdi), 0);
    const uint8_t writes_edi[] = { 0x31, 0xff, 0x74, 0x00 };                      /* xor %edi,%edi; je */
    assert_int_equal(AT(writes_edi), 0);
    const uint8_t exchanges_rdi[] = { 0x48, 0x87, 0x3e, 0x74, 0x00 };             /* xchg %rdi,(%rsi); je */
    assert_int_equal(AT(exchanges_rdi), 0);
    const uint8_t string_store[] = { 0xf3, 0x48, 0xab, 0x74, 0x00 };              /* rep stos; je */
    assert_int_equal(AT(string_store), 0);
    const uint8_t indirect[] = { 0x48, 0x89, 0xf8, 0xff, 0xe0 };                  /* mov %rdi,%rax; jmp *%rax */
    assert_int_equal(AT(indirect), 0);
    const uint8_t reads_rdi[] = { 0x48, 0x89, 0xf8, 0xeb, 0x00 };                 /* mov %rdi,%rax; jmp */
    assert_int_equal(AT(reads_rdi), 3);
    const uint8_t garbage[] = { 0x06 };                                           /* (bad) in 64-bit mode */
    assert_int_equal(AT(garbage), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokio_waker_functions),
        cmocka_unit_test(test_entry_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
