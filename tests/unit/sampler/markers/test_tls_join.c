/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_tls_join.c: unit tests of how --markers reaches the TLS marker route (sampler/markers/tls_join):
 * "auto" asks for the marker and every probe, "tls" for the marker alone (no probes), a list keeps its
 * providers for the probes and takes the marker only when it names tls, "none" asks for nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sampler/markers/tls_join.h"

static void expect_split(const char *spec, bool tls, const char *probes)
{
    bool got_tls = !tls;
    char got[64];
    tls_join_split_spec(spec, &got_tls, got, sizeof(got));
    assert_int_equal(got_tls, tls);
    assert_string_equal(got, probes);
}

static void test_split_spec(void **state)
{
    (void)state;
    expect_split("auto", true, "auto");
    expect_split(NULL, true, "auto");
    expect_split("tls", true, "none");
    expect_split("none", false, "none");
    expect_split("taskspy_demo", false, "taskspy_demo");
    expect_split("tls,taskspy_demo", true, "taskspy_demo");
    expect_split("a,tls,b", true, "a,b");
    expect_split("tlsx,b", false, "tlsx,b");     /* only the whole word */
    expect_split("a,,b,", false, "a,b");
    expect_split("probes", false, "auto");       /* the probe route alone: every marker, no TLS */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
