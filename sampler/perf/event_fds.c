/* SPDX-License-Identifier: GPL-3.0-or-later */
/* event_fds.c: the event fd list of event_fds.h, with its concurrent close. */
#include "sampler/perf/event_fds.h"

#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/perf_event.h>

int event_fds_add(struct event_fds *f, int fd)
{
    int *slot = vec_push(f);
    if (!slot)
        return -1;
    *slot = fd;
    return 0;
}

int event_fds_enable_from(const struct event_fds *f, size_t from, bool on)
{
    for (size_t i = from; i < f->n; i++)
        if (ioctl(f->v[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) != 0)
            return -1;
    return 0;
}

struct close_slice {
    const int *fds;
    size_t n;
};

static void *close_slice(void *arg)
{
    const struct close_slice *c = arg;
    for (size_t i = 0; i < c->n; i++)
        close(c->fds[i]);
    return NULL;
}

void event_fds_close(struct event_fds *f)
{
    enum { MAX_CLOSERS = 32 };
    pthread_t threads[MAX_CLOSERS];
    struct close_slice slices[MAX_CLOSERS];
    size_t n = f->n, n_threads = n < MAX_CLOSERS ? n : MAX_CLOSERS, started = 0;
    for (size_t t = 0; t < n_threads; t++) {
        size_t from = n * t / n_threads, to = n * (t + 1) / n_threads;
        slices[t] = (struct close_slice){ f->v + from, to - from };
        if (pthread_create(&threads[t], NULL, close_slice, &slices[t]) != 0) {
            close_slice(&slices[t]);      /* no thread: close them here */
            continue;
        }
        started |= (size_t)1 << t;
    }
    for (size_t t = 0; t < n_threads; t++)
        if (started & ((size_t)1 << t))
            pthread_join(threads[t], NULL);
    vec_free(f);
}
