/* SPDX-License-Identifier: GPL-3.0-or-later */
/* background_writer.c: a ring of buffers between the thread that formats output and one that writes it.
 * The caller fills one buffer while the writer thread writes those handed on before, oldest first; when
 * every buffer is handed on the caller waits for one to be written. The first failed write is kept (its
 * errno) and ends the writing: what follows is dropped, and the caller learns of it at the next call. */
#include "flamegraph/background_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define RING 4u

struct background_writer {
    FILE *out;
    size_t buffer_size;
    char *buffers[RING];
    size_t lens[RING];
    size_t filling;                      /* the caller's buffer; the queued ones come just before it */
    size_t queued;
    int error;                           /* errno of the first failed write, 0 */
    bool threaded, closing;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more;                 /* a buffer was queued, or closing */
    pthread_cond_t room;                 /* a buffer was written */
};

static int write_all(FILE *out, const char *data, size_t len)
{
    if (len > 0 && fwrite_unlocked(data, 1, len, out) != len)
        return errno ? errno : EIO;
    return 0;
}

static void *writer_thread(void *arg)
{
    struct background_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->queued == 0 && !w->closing)
            pthread_cond_wait(&w->more, &w->lock);
        if (w->queued == 0)
            break;
        size_t i = (w->filling + RING - w->queued) % RING;
        bool failed = w->error != 0;
        pthread_mutex_unlock(&w->lock);
        int error = failed ? 0 : write_all(w->out, w->buffers[i], w->lens[i]);
        pthread_mutex_lock(&w->lock);
        if (error && !w->error)
            w->error = error;
        w->queued--;
        pthread_cond_signal(&w->room);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
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
    w->buffer_size = buffer_size;
    for (size_t i = 0; i < RING; i++) {
        if (!(w->buffers[i] = malloc(buffer_size))) {
            free_buffers(w);
            errno = ENOMEM;
            return NULL;
        }
    }
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return w;
    if (pthread_cond_init(&w->more, NULL) != 0)
        goto no_more;
    if (pthread_cond_init(&w->room, NULL) != 0)
        goto no_room;
    if (pthread_create(&w->thread, NULL, writer_thread, w) != 0)
        goto no_thread;
    w->threaded = true;
    return w;
no_thread:
    pthread_cond_destroy(&w->room);
no_room:
    pthread_cond_destroy(&w->more);
no_more:
    pthread_mutex_destroy(&w->lock);
    return w;
}

char *background_writer_buffer(struct background_writer *w)
{
    return w->buffers[w->filling];
}

/* Wait until the writer thread has written everything queued. Returns its error (0: none). */
static int drain(struct background_writer *w)
{
    if (!w->threaded)
        return w->error;
    pthread_mutex_lock(&w->lock);
    while (w->queued > 0)
        pthread_cond_wait(&w->room, &w->lock);
    int error = w->error;
    pthread_mutex_unlock(&w->lock);
    return error;
}

char *background_writer_submit(struct background_writer *w, size_t len)
{
    if (!w->threaded) {
        if (!w->error)
            w->error = write_all(w->out, w->buffers[w->filling], len);
        errno = w->error;
        return w->error ? NULL : w->buffers[w->filling];
    }
    pthread_mutex_lock(&w->lock);
    w->lens[w->filling] = len;
    w->queued++;
    w->filling = (w->filling + 1) % RING;
    pthread_cond_signal(&w->more);
    while (w->queued == RING)            /* the next buffer is still to be written */
        pthread_cond_wait(&w->room, &w->lock);
    int error = w->error;
    pthread_mutex_unlock(&w->lock);
    errno = error;
    return error ? NULL : w->buffers[w->filling];
}

int background_writer_write(struct background_writer *w, const char *data, size_t len)
{
    int error = drain(w);
    if (!error)
        error = w->error = write_all(w->out, data, len);   /* the writer thread is idle: the stream is free */
    errno = error;
    return error ? -1 : 0;
}

int background_writer_close(struct background_writer *w)
{
    int error = 0;
    if (w->threaded) {
        pthread_mutex_lock(&w->lock);
        w->closing = true;
        pthread_cond_signal(&w->more);
        pthread_mutex_unlock(&w->lock);
        if (pthread_join(w->thread, NULL) != 0)
            error = EINVAL;
        pthread_cond_destroy(&w->more);
        pthread_cond_destroy(&w->room);
        pthread_mutex_destroy(&w->lock);
    }
    if (!error)
        error = w->error;
    free_buffers(w);
    errno = error;
    return error ? -1 : 0;
}
