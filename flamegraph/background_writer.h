/* SPDX-License-Identifier: GPL-3.0-or-later */
/* background_writer.h: output formatted into buffers and written to a stream by a second thread, in order,
 * so formatting the next buffer overlaps the write of the last (the kernel's copy into the page cache).
 * Internal to flamegraph/. */
#ifndef TASKSPY_BACKGROUND_WRITER_H
#define TASKSPY_BACKGROUND_WRITER_H

#include <stddef.h>
#include <stdio.h>

struct background_writer;

/* From here until background_writer_close the stream is the writer's: the caller must not touch it. Buffers
 * are buffer_size bytes. Returns NULL (errno) when out of memory; without a thread (none could be made) the
 * buffers are written on the caller's thread. */
struct background_writer *background_writer_open(FILE *out, size_t buffer_size);
/* The buffer to fill: buffer_size bytes. */
char *background_writer_buffer(struct background_writer *w);
/* Write the first len bytes of the buffer being filled (after all handed on before); returns the next buffer
 * to fill, NULL (errno) when a write failed. */
char *background_writer_submit(struct background_writer *w, size_t len);
/* Write len bytes of data, which need not fit a buffer, after all handed on before. Returns 0 or -1 (errno). */
int background_writer_write(struct background_writer *w, const char *data, size_t len);
/* Write what was handed on, end the thread, free w. Returns 0, or -1 (errno) when a write failed. */
int background_writer_close(struct background_writer *w);

#endif
