/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_internal.h: the folded writer's line writer, shared by the one-count folded file
 * (profile_write_folded) and the two-count differential one (diff_profile_write_folded): one line per chosen
 * node, "root;...;leaf COUNTS", whole lines sorted bytewise. Not part of the layer's public interface. */
#ifndef TASKSPY_FOLDED_INTERNAL_H
#define TASKSPY_FOLDED_INTERNAL_H

#include "flamegraph/flamegraph.h"

/* The most bytes a line's counts take ("18446744073709551615 18446744073709551615" and room to spare). */
#define FOLDED_COUNTS_MAX 64

/* What the line of node ends with after its stack and a space: writes the counts into buf (FOLDED_COUNTS_MAX
 * bytes) and returns their length, or returns 0 for a node that has no line. Called twice per node. */
typedef size_t (*folded_counts_fn)(const void *ctx, uint32_t node, char *buf);

/* Write the lines of every node (but the root) that counts gives a line, sorted. Returns 0 or -1 (errno). */
int folded_write_lines(const struct profile *p, FILE *out, folded_counts_fn counts, const void *ctx);

#endif
