/* SPDX-License-Identifier: GPL-3.0-or-later */
/* snapshot_loop.c: a snapshot every 1/HZ s on a thread of its own (tasks.h): record's snapshot wait profile and
 * taskspy top take theirs here. A deadline every period on CLOCK_MONOTONIC, a snapshot at each handed to the
 * caller's callback (deadlines that pass while one is being taken are counted missed and skipped), the
 * thread's CPU counted per snapshot. */
#include "tasks/tasks.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct task_snapshot_loop {
    struct task_reader *reader;
    pid_t pid;                       /* the target */
    pid_t attach_pid;                /* launch mode: the process to attach the reader to (0: attached) */
    struct task_snapshot_loop_options opt;
    uint64_t period_ns;
    uint64_t until_ns;               /* no snapshot after it (0: none yet), under lock */
    struct task_snapshot_loop_stats stats;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;                       /* under lock */
};

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec t;
    return clock_gettime(clock, &t) == 0 ? (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec : 0;
}

int task_snapshot_loop_open(struct task_snapshot_loop **out, pid_t pid, const char *path,
                            const struct task_reader_options *options, char *err, size_t errlen)
{
    *out = NULL;
    struct task_snapshot_loop *l = calloc(1, sizeof(*l));
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->pid = pid;
    char root[64] = "";
    if (pid)
        snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);     /* the target's files, containers too */
    struct task_reader_options o = options ? *options : (struct task_reader_options){ .no_details = true };
    if (!o.root)
        o.root = root;
    int rc = pid ? task_reader_open(&l->reader, pid, &o, err, errlen)
                 : task_reader_open_file(&l->reader, path, &o, err, errlen);
    if (rc != 0) {
        free(l);
        return -1;
    }
    if (pid) {
        struct task_snapshot warm;    /* indexes what the decoding needs now, not while the loop runs */
        char ignored[256];
        task_reader_snapshot(l->reader, &warm, ignored, sizeof(ignored));
    }
    *out = l;
    return 0;
}

struct task_reader *task_snapshot_loop_reader(struct task_snapshot_loop *l)
{
    return l->reader;
}

const struct task_snapshot_loop_stats *task_snapshot_loop_stats(const struct task_snapshot_loop *l)
{
    return &l->stats;
}

static bool target_gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

/* One deadline: attach first in launch mode, then one snapshot handed to the callback. */
static void take_one(struct task_snapshot_loop *l)
{
    struct task_snapshot_loop_stats *st = &l->stats;
    uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (l->attach_pid) {
        st->attach_tries++;
        if (task_reader_attach(l->reader, l->attach_pid, st->last_error, sizeof(st->last_error)) != 0) {
            st->target_gone = target_gone(l->pid);
            return;
        }
        l->attach_pid = 0;
    }
    struct task_snapshot snap;
    if (task_reader_snapshot(l->reader, &snap, st->last_error, sizeof(st->last_error)) != 0) {
        st->failed_snapshots++;
        st->target_gone = target_gone(l->pid);
    } else if (snap.target_gone) {
        st->target_gone = true;           /* a part: its tasks' ends are not known */
    } else {
        if (l->opt.on_snapshot && l->opt.on_snapshot(l->opt.ctx, &snap) != 0)
            st->failed = true;
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        if (!st->taken++) {
            st->first_ns = snap.taken_ns;
            st->first_cpu_ns = cpu;
        }
    }
    st->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

static void *loop_main(void *arg)
{
    struct task_snapshot_loop *l = arg;
    uint64_t next = l->opt.start_ns;
    pthread_mutex_lock(&l->lock);
    while (!l->stop) {
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        if (now < next) {
            struct timespec until = { .tv_sec = (time_t)(next / 1000000000u), .tv_nsec = (long)(next % 1000000000u) };
            pthread_cond_timedwait(&l->wake, &l->lock, &until);
            continue;
        }
        bool in_time = (!l->until_ns || now <= l->until_ns) && (!l->opt.deadline_ns || now <= l->opt.deadline_ns) &&
                       !(l->opt.stop_requested && *l->opt.stop_requested);
        pthread_mutex_unlock(&l->lock);
        if (!l->stats.target_gone && !l->stats.failed && in_time)
            take_one(l);
        uint64_t after = clock_ns(CLOCK_MONOTONIC);
        next += l->period_ns;
        if (after >= next) {
            uint64_t late = (after - next) / l->period_ns + 1;
            l->stats.missed += late;
            next += late * l->period_ns;
        }
        pthread_mutex_lock(&l->lock);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

int task_snapshot_loop_start(struct task_snapshot_loop *l, const struct task_snapshot_loop_options *options)
{
    l->opt = *options;
    l->period_ns = 1000000000u / (options->hz ? options->hz : 1);
    if (!l->opt.start_ns)
        l->opt.start_ns = clock_ns(CLOCK_MONOTONIC);
    l->attach_pid = options->launch_pid;
    if (options->launch_pid)
        l->pid = options->launch_pid;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&l->wake, &attr) != 0 ? -1 : 0;
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return -1;
    if (pthread_mutex_init(&l->lock, NULL) != 0) {
        pthread_cond_destroy(&l->wake);
        return -1;
    }
    if (pthread_create(&l->thread, NULL, loop_main, l) != 0) {
        pthread_mutex_destroy(&l->lock);
        pthread_cond_destroy(&l->wake);
        return -1;
    }
    l->started = true;
    return 0;
}

void task_snapshot_loop_stop(struct task_snapshot_loop *l, uint64_t stop_ns)
{
    if (!l || !l->started)
        return;
    if (!stop_ns)
        stop_ns = clock_ns(CLOCK_MONOTONIC);
    pthread_mutex_lock(&l->lock);
    l->until_ns = stop_ns;
    l->stop = true;
    pthread_cond_signal(&l->wake);
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->thread, NULL);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->wake);
    l->stats.stopped_ns = stop_ns;
    l->started = false;
}

void task_snapshot_loop_free(struct task_snapshot_loop *l)
{
    if (!l)
        return;
    task_snapshot_loop_stop(l, 0);
    if (l->reader)
        task_reader_close(l->reader);
    free(l);
}
