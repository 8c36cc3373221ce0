/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_text.h: a test helper shared by the flamegraph unit tests: a profile's folded output as a string
 * (profile_write_folded into a memory stream). Include after <cmocka.h>. */
#ifndef TASKSPY_TEST_FOLDED_TEXT_H
#define TASKSPY_TEST_FOLDED_TEXT_H

#include <stdio.h>
#include <stdlib.h>

#include "flamegraph/flamegraph.h"

/* The folded text of p; free() it. */
static char *folded_text(const struct profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(profile_write_folded(p, out), 0);
    assert_int_equal(fclose(out), 0);
    return buf;
}

#endif
