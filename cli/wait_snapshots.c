/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_snapshots.c: record's snapshot thread (see wait_snapshots.h): a deadline every 1/HZ s on
 * CLOCK_MONOTONIC, a snapshot at each (deadlines that pass while one is being taken are counted missed and
 * skipped: the next snapshot's interval is the real time since the last), its CPU counted per thread. */
#include "cli/wait_snapshots.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/trace_collect.h"

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec t;
    return clock_gettime(clock, &t) == 0 ? (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec : 0;
}

int wait_snapshots_open(struct wait_snapshots *s, pid_t pid, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->pid = pid;
    char root[64] = "";
    if (pid)
        snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);     /* the target's files, containers too */
    const struct task_reader_options options = { .root = root, .no_details = true };
    if (!pid)
        return task_reader_open_file(&s->reader, path, &options, err, errlen);
    if (task_reader_open(&s->reader, pid, &options, err, errlen) != 0)
        return -1;
    struct task_snapshot warm;        /* indexes what the decoding needs now, not while recording */
    char ignored[256];
    task_reader_snapshot(s->reader, &warm, ignored, sizeof(ignored));
    return 0;
}

/* One deadline: attach first in launch mode, then one snapshot added to the wait profile. */
static void take_one(struct wait_snapshots *s)
{
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (s->attach_pid) {
        s->attach_tries++;
        if (task_reader_attach(s->reader, s->attach_pid, s->last_error, sizeof(s->last_error)) != 0) {
            s->target_gone = kill(s->pid, 0) != 0 && errno == ESRCH;
            return;
        }
        s->attach_pid = 0;
    }
    struct task_snapshot snap;
    if (task_reader_snapshot(s->reader, &snap, s->last_error, sizeof(s->last_error)) != 0) {
        s->failed_snapshots++;
        s->target_gone = kill(s->pid, 0) != 0 && errno == ESRCH;
    } else if (snap.target_gone) {
        s->target_gone = true;            /* a part: its tasks' ends are not known */
    } else {
        if (snapshot_waits_add(&s->waits, &snap) != 0)
            s->failed = true;
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        if (!s->taken++) {
            s->first_ns = snap.taken_ns;
            s->first_cpu_ns = cpu;
        }
    }
    s->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

static void *snapshot_main(void *arg)
{
    struct wait_snapshots *s = arg;
    uint64_t next = s->waits.start_ns;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        if (now < next) {
            struct timespec until = { .tv_sec = (time_t)(next / 1000000000u), .tv_nsec = (long)(next % 1000000000u) };
            pthread_cond_timedwait(&s->wake, &s->lock, &until);
            continue;
        }
        bool in_time = (!s->until_ns || now <= s->until_ns) && (!s->deadline_ns || now <= s->deadline_ns) &&
                       !(s->stop_requested && *s->stop_requested);
        pthread_mutex_unlock(&s->lock);
        if (!s->target_gone && !s->failed && in_time)
            take_one(s);
        uint64_t after = clock_ns(CLOCK_MONOTONIC);
        next += s->period_ns;
        if (after >= next) {
            uint64_t late = (after - next) / s->period_ns + 1;
            s->missed += late;
            next += late * s->period_ns;
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    if (snapshot_waits_finish(&s->waits) != 0)
        s->failed = true;
    return NULL;
}

int wait_snapshots_start(struct wait_snapshots *s, unsigned hz, uint64_t start_ns, pid_t launch_pid, bool keep_spans,
                         uint64_t deadline_ns, volatile sig_atomic_t *stop_requested)
{
    s->period_ns = 1000000000u / (hz ? hz : 1);
    s->deadline_ns = deadline_ns;
    s->stop_requested = stop_requested;
    s->attach_pid = launch_pid;
    if (launch_pid)
        s->pid = launch_pid;
    if (snapshot_waits_init(&s->waits, start_ns, s->period_ns, keep_spans, TRACE_MAX_EVENTS) != 0)
        return -1;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&s->wake, &attr) != 0 ? -1 : 0;
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return -1;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        pthread_cond_destroy(&s->wake);
        return -1;
    }
    if (pthread_create(&s->thread, NULL, snapshot_main, s) != 0) {
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->wake);
        return -1;
    }
    s->started = true;
    return 0;
}

void wait_snapshots_stop(struct wait_snapshots *s, uint64_t stop_ns)
{
    if (!s->started)
        return;
    pthread_mutex_lock(&s->lock);
    s->until_ns = stop_ns ? stop_ns : 1;
    s->stop = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    s->started = false;
}

void wait_snapshots_free(struct wait_snapshots *s)
{
    wait_snapshots_stop(s, 0);
    snapshot_waits_free(&s->waits);
    if (s->reader)
        task_reader_close(s->reader);
    s->reader = NULL;
}
