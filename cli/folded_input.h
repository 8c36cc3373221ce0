/* SPDX-License-Identifier: GPL-3.0-or-later */
/* folded_input.h: reading a folded-stack file given on the command line (or stdin) into a profile, with the
 * reader's warnings and errors printed as "taskspy: ..." lines: what `taskspy flamegraph` and `taskspy diff`
 * read their inputs with. */
#ifndef TASKSPY_FOLDED_INPUT_H
#define TASKSPY_FOLDED_INPUT_H

#include <stdbool.h>

#include "flamegraph/flamegraph.h"

enum folded_input_result { FOLDED_INPUT_OK, FOLDED_INPUT_EMPTY, FOLDED_INPUT_FAILED };

/* Read path (NULL or "-": stdin) into p. Malformed lines are reported and skipped. An empty regular file is
 * FOLDED_INPUT_EMPTY, nothing printed (the caller says what that means for it); FOLDED_INPUT_FAILED when the
 * file cannot be opened or read or holds no valid line (the reason printed). */
enum folded_input_result folded_input_read(struct profile *p, const char *path);
/* The name messages use for path: the path, or "<stdin>". */
const char *folded_input_name(const char *path);

#endif
