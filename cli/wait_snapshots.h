/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_snapshots.h: record's snapshot thread (SPEC section 3a, snapshot mode): one task reader (tasks/tasks.h)
 * opened before the recording, then every 1/HZ s a snapshot of every task's async backtrace, added to the
 * snapshot wait profile (cli/snapshot_waits.h). Nothing is attached to the target: its memory is read with
 * process_vm_readv. The thread's own CPU, the snapshots taken, missed (a deadline passed while the previous
 * one was being taken) and failed are counted for the summary. In launch mode the reader is opened on the
 * command's file and attached once the process runs it; until its runtime exists, snapshots fail and are
 * tried again at the next deadline. */
#ifndef TASKSPY_WAIT_SNAPSHOTS_H
#define TASKSPY_WAIT_SNAPSHOTS_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/snapshot_waits.h"
#include "tasks/tasks.h"

struct wait_snapshots {
    struct task_reader *reader;
    pid_t pid;                     /* the target */
    pid_t attach_pid;              /* launch mode: the process to attach the reader to (0: attached) */
    uint64_t period_ns;
    uint64_t until_ns;             /* no snapshot after it (0: none yet), under lock */
    uint64_t deadline_ns;          /* the recording's end when it has a duration (0: none): no snapshot after it */
    volatile sig_atomic_t *stop_requested;   /* the recording stops when it is set (SIGINT): no snapshot after */
    struct snapshot_waits waits;   /* read it once wait_snapshots_stop has returned */
    /* the thread */
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;                     /* under lock */
    bool failed;                   /* out of memory: the wait profile is not whole */
    /* counts */
    uint64_t taken, missed, failed_snapshots, attach_tries;
    uint64_t cpu_ns;               /* the thread's CPU in snapshots and adding them (not in sleeping) */
    uint64_t first_cpu_ns;         /* of which the first snapshot's (it indexes the DWARF it needs) */
    uint64_t first_ns;             /* when the first snapshot was taken (CLOCK_MONOTONIC), 0: none */
    char last_error[256];          /* why the last attach or snapshot failed */
    bool target_gone;
};

/* Open the task reader before the recording: on process pid (attach mode), or on the command's executable
 * file path (launch mode, pid 0; attached to the process once it runs). Attach mode takes one snapshot now,
 * so that the DWARF the decoding needs is indexed before the recording. Returns 0, or -1 with one line in err
 * (the reader cannot read this program's tasks: no tokio, no DWARF types). */
int wait_snapshots_open(struct wait_snapshots *s, pid_t pid, const char *path, char *err, size_t errlen);
/* Start the thread: snapshots from start_ns (CLOCK_MONOTONIC) every 1/hz s; launch_pid: the launched process
 * (0 in attach mode). keep_spans: keep each task's runs for a trace. The recording ends at deadline_ns (0: no
 * duration), when *stop_requested is set (may be NULL) or when the target exits, whichever is first: no snapshot
 * is taken after that, even before wait_snapshots_stop (the recording's last round and its processing may take
 * seconds on a loaded machine, and snapshots then counted time the recording did not have). Returns 0, or -1
 * (no memory, no thread). */
int wait_snapshots_start(struct wait_snapshots *s, unsigned hz, uint64_t start_ns, pid_t launch_pid, bool keep_spans,
                         uint64_t deadline_ns, volatile sig_atomic_t *stop_requested);
/* The recording stopped at stop_ns: no snapshot after it (one under way finishes); stop the thread and wait
 * for it. Its wait profile is then complete (snapshot_waits_finish done). */
void wait_snapshots_stop(struct wait_snapshots *s, uint64_t stop_ns);
void wait_snapshots_free(struct wait_snapshots *s);

#endif
