/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_demangle.c: symbol demangling as the symbolize layer shows names: real Rust legacy and v0 symbols
 * (taken from a binary rustc 1.95 built, checked against c++filt), C++ with parameter types, symbol
 * versions and PLT suffixes, and Rust hash stripping. */
#include "symbolize/symbolize.h"
#include "symbolize/symbolize_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void expect_demangled(const char *mangled, const char *want)
{
    char *got = symbolize_demangle(mangled);
    if (!got)
        fail_msg("%s: not demangled, want %s", mangled, want);
    if (strcmp(got, want) != 0) {
        fail_msg("%s: got \"%s\", want \"%s\"", mangled, got, want);
    }
    free(got);
}

static void test_rust_legacy(void **state)
{
    (void)state;
    expect_demangled("_ZN1a6worker3run17ha397b6dc317c94e7E", "a::worker::run");
    expect_demangled("_ZN1a6worker10S$LT$T$GT$3get17he395c5d5317a86c2E", "a::worker::S<T>::get");
    /* An async fn's state machine: the closure suffix stays for the flamegraph layer. */
    expect_demangled("_ZN1a4main28_$u7b$$u7b$closure$u7d$$u7d$17h900858b1192043efE", "a::main::{{closure}}");
    /* '.' inside the name (generic arguments) and an LLVM suffix after the hash. */
    expect_demangled("_ZN4core3ptr64drop_in_place$LT$a..worker..run..$u7b$$u7b$closure$u7d$$u7d$$GT$"
                     "17h3347b412a60d0d99E",
                     "core::ptr::drop_in_place<a::worker::run::{{closure}}>");
    expect_demangled("_ZN1a6worker3run17ha397b6dc317c94e7E.llvm.123", "a::worker::run");
}

static void test_rust_v0(void **state)
{
    (void)state;
    expect_demangled("_RNvNtCs6xxl1lAjzDf_1a6worker3run", "a::worker::run");
    expect_demangled("_RNCNvCs6xxl1lAjzDf_1a4main0B3_", "a::main::{closure#0}");
    expect_demangled("_RNvMNtCs6xxl1lAjzDf_1a6workerINtB2_1SmE3getB4_", "<a::worker::S<u32>>::get");
    expect_demangled("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeNCNvNtCs6xxl1lAjzDf_1a6worker3run0EBM_",
                     "core::ptr::drop_in_place::<a::worker::run::{closure#0}>");
}

static void test_cplusplus(void **state)
{
    (void)state;
    expect_demangled("_ZN3foo3barEv", "foo::bar()");
    expect_demangled("_ZNSt6vectorIiSaIiEE9push_backERKi",
                     "std::vector<int, std::allocator<int> >::push_back(int const&)");
    expect_demangled("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const");
}

static void test_not_mangled(void **state)
{
    (void)state;
    assert_null(symbolize_demangle("main"));
    assert_null(symbolize_demangle("getpid"));
    assert_null(symbolize_demangle("_Z"));
    assert_null(symbolize_demangle("_Rgarbage"));
    assert_null(symbolize_demangle(""));
    assert_null(symbolize_demangle(NULL));
}

static void expect_stripped(const char *in, const char *want)
{
    char buf[256];
    strcpy(buf, in);
    symbolize_strip_rust_hash(buf);
    assert_string_equal(buf, want);
}

static void test_strip_rust_hash(void **state)
{
    (void)state;
    expect_stripped("a::worker::run::ha397b6dc317c94e7", "a::worker::run");
    expect_stripped("core::ptr::drop_in_place<a::b>::h3347b412a60d0d99", "core::ptr::drop_in_place<a::b>");
    expect_stripped("a::worker::run::hz397b6dc317c94e7", "a::worker::run::hz397b6dc317c94e7");   /* not hex */
    expect_stripped("a::worker::run::ha397b6dc317c94e", "a::worker::run::ha397b6dc317c94e");     /* 15 digits */
    expect_stripped("ha397b6dc317c94e7", "ha397b6dc317c94e7");
    expect_stripped("::ha397b6dc317c94e7", "::ha397b6dc317c94e7");
    expect_stripped("a::b", "a::b");
    expect_stripped("", "");
}

static void expect_display(const char *raw, bool demangle, const char *want)
{
    char *got = symbolize_display_name(raw, demangle);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_display_name(void **state)
{
    (void)state;
    expect_display("getpid@GLIBC_2.2.5", true, "getpid");
    expect_display("memcpy@@GLIBC_2.14", true, "memcpy");
    expect_display("puts@plt", true, "puts@plt");
    expect_display("_ZN3foo3barEv@plt", true, "foo::bar()@plt");
    expect_display("_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4", true,
                   "std::vector<int, std::allocator<int> >::push_back(int const&)");
    expect_display("_ZN1a6worker3run17ha397b6dc317c94e7E", true, "a::worker::run");
    expect_display("_ZN1a6worker3run17ha397b6dc317c94e7E", false, "_ZN1a6worker3run17ha397b6dc317c94e7E");
    expect_display("@weird", true, "@weird");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rust_legacy),
        cmocka_unit_test(test_rust_v0),
        cmocka_unit_test(test_cplusplus),
        cmocka_unit_test(test_not_mangled),
        cmocka_unit_test(test_strip_rust_hash),
        cmocka_unit_test(test_display_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
