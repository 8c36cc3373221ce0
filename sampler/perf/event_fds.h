/* SPDX-License-Identifier: GPL-3.0-or-later */
/* event_fds.h: the perf events (and BPF links) a layer opened, kept to be enabled, disabled and closed
 * together. Closing happens from several threads at once: closing a uprobe event waits in the kernel for
 * the probe's unregistration (an SRCU grace period, tens of milliseconds), and concurrent closes share
 * grace periods, so hundreds of marker events close in about one wait instead of many seconds. */
#ifndef TASKSPY_EVENT_FDS_H
#define TASKSPY_EVENT_FDS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/vec.h"

struct event_fds {
    int *v;
    size_t n, cap;
};

/* Keep fd. Returns 0, or -1 (out of memory: fd is not kept, the caller still owns it). */
int event_fds_add(struct event_fds *f, int fd);
/* PERF_EVENT_IOC_ENABLE (on) or _DISABLE on v[from..n). Returns 0, or -1 with errno at the first failure. */
int event_fds_enable_from(const struct event_fds *f, size_t from, bool on);
/* Close them all (concurrently) and free the list. */
void event_fds_close(struct event_fds *f);

#endif
