/* SPDX-License-Identifier: GPL-3.0-or-later */
/* background_writer.c: a ring of buffers between the thread that formats output and one that writes it.
 * The caller fills one buffer while the writer thread writes those handed on before, oldest first; when
 * every buffer is handed on the caller waits for one to be written. The first failed write is kept (its
 * errno) and ends the writing: what follows is dropped, and the caller learns of it at the next call. The
 * threads' hand-off is base/handoff.h. */
#include "flamegraph/background_writer.h"

#include <errno.h>
#include <stdlib.h>

#include "base/handoff.h"

#define RING 4u

struct background_writer {
    FILE *out;
    char *buffers[RING];
    size_t lens[RING];
    size_t filling;                      /* the caller's buffer */
    int error;                           /* errno of a failed direct write (background_writer_write), 0 */
    struct handoff handoff;              /* the buffers to the writer thread */
};

static int write_all(FILE *out, const char *data, size_t len)
{
    if (len > 0 && fwrite_unlocked(data, 1, len, out) != len)
        return errno ? errno : EIO;
    return 0;
}

/* The writer thread's work: one buffer (none after a failed direct write). */
static int write_buffer(void *ctx, size_t slot)
{
    struct background_writer *w = ctx;
    return w->error ? w->error : write_all(w->out, w->buffers[slot], w->lens[slot]);
}

static void free_buffers(struct background_writer *w)
{
    for (size_t i = 0; i < RING; i++)
        free(w->buffers[i]);
    free(w);
}

struct background_writer *background_writer_open(FILE *out, size_t buffer_size)
{
    struct background_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->out = out;
    for (size_t i = 0; i < RING; i++) {
        if (!(w->buffers[i] = malloc(buffer_size))) {
            free_buffers(w);
            errno = ENOMEM;
            return NULL;
        }
    }
    (void)handoff_open(&w->handoff, RING, write_buffer, w);   /* without a thread: written as submitted */
    return w;
}

char *background_writer_buffer(struct background_writer *w)
{
    return w->buffers[w->filling];
}

char *background_writer_submit(struct background_writer *w, size_t len)
{
    w->lens[w->filling] = len;
    int error = handoff_submit(&w->handoff);
    if (!error)
        w->filling = handoff_slot(&w->handoff, &error);
    errno = error;
    return error ? NULL : w->buffers[w->filling];
}

int background_writer_write(struct background_writer *w, const char *data, size_t len)
{
    int error = handoff_drain(&w->handoff);
    if (!error && !(error = w->error))
        error = w->error = write_all(w->out, data, len);   /* the writer thread is idle: the stream is free */
    errno = error;
    return error ? -1 : 0;
}

int background_writer_close(struct background_writer *w)
{
    int error = handoff_close(&w->handoff);
    if (!error)
        error = w->error;
    free_buffers(w);
    errno = error;
    return error ? -1 : 0;
}
