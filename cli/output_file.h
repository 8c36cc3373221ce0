/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output_file.h: an output that appears whole or not at all (SPEC section 6). It is written to an unnamed
 * file (O_TMPFILE) in the destination's directory and linked into place on commit, so that even kill -9
 * leaves nothing behind; where the filesystem has no O_TMPFILE, to a hidden temporary file beside the
 * destination that is renamed into place on commit and removed on abort. An existing destination that is not
 * a regular file (/dev/null, a FIFO) is written as it is. */
#ifndef TASKSPY_OUTPUT_FILE_H
#define TASKSPY_OUTPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct output_file {
    char final_path[4096];
    char temp_path[4096];        /* the named fallback's temporary file, or "" */
    bool unnamed;                /* written through O_TMPFILE: nothing to remove on abort */
    bool direct;                 /* an existing device or FIFO (/dev/null): written as it is, never replaced */
    FILE *stream;
};

/* Create the temporary file now, so an unwritable destination fails before any work. "-" means stdout.
 * Returns 0, or -1 with a message in err. */
int output_file_open(struct output_file *o, const char *path, char *err, size_t errlen);
/* The same without trying O_TMPFILE: the fallback for filesystems that lack it (also for tests). */
int output_file_open_named(struct output_file *o, const char *path, char *err, size_t errlen);
/* Flush, close and put into place. Returns 0, or -1 with a message in err (nothing is left behind). */
int output_file_commit(struct output_file *o, char *err, size_t errlen);
/* Close and drop the temporary file. */
void output_file_abort(struct output_file *o);

#endif
