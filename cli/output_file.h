/* output_file.h: an output that appears whole or not at all: written to a temporary file beside the
 * destination, renamed over it on commit, removed on abort (also by a signal handler via the path). */
#ifndef TASKSPY_OUTPUT_FILE_H
#define TASKSPY_OUTPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

struct output_file {
    char final_path[4096];
    char temp_path[4096];
    FILE *stream;
};

/* Create the temporary file now, so an unwritable destination fails before any work. "-" means stdout.
 * Returns 0, or -1 with a message in err. */
int output_file_open(struct output_file *o, const char *path, char *err, size_t errlen);
/* Flush, close and rename into place. Returns 0, or -1 with a message in err (the temp file is removed). */
int output_file_commit(struct output_file *o, char *err, size_t errlen);
/* Close and remove the temporary file. */
void output_file_abort(struct output_file *o);

#endif
