/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_text.h: test helpers shared by the flamegraph unit tests: a profile's folded output as a string
 * (profile_write_folded into a memory stream), a node's child by name. Include after <cmocka.h>. */
#ifndef TASKSPY_TEST_FOLDED_TEXT_H
#define TASKSPY_TEST_FOLDED_TEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The child of node at named name, or PROFILE_NO_NODE; a second child of that name fails the test. (Nodes
 * have no child links: the children are the nodes that name at their parent, each after it.) */
static inline uint32_t child_named(const struct profile *p, uint32_t at, const char *name)
{
    size_t count;
    const struct profile_node *nodes = profile_nodes(p, &count);
    uint32_t found = PROFILE_NO_NODE;
    for (uint32_t c = 1; c < count; c++) {
        if (nodes[c].parent == at && strcmp(profile_frame_name(p, nodes[c].frame), name) == 0) {
            assert_int_equal(found, PROFILE_NO_NODE);
            assert_true(c > at);
            found = c;
        }
    }
    return found;
}

#endif
