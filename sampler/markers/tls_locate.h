/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_locate.h: the TLS marker route's first step (sampler/markers/tls_join.h): where the target's task id
 * thread-local is, as the sample program needs it (its offset from the thread pointer, an Option's tag), and
 * what else about the executable the route needs to know. */
#ifndef TASKSPY_TLS_LOCATE_H
#define TASKSPY_TLS_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/bpf/sample_program.h"
#include "sampler/markers/tls_join.h"

struct tls_location {
    bool tokio;                        /* tokio's CONTEXT.current_task_id: tokio's ids, not the probes' */
    bool place_later;                  /* in a library the target will load: its place predicted, to be
                                          confirmed once it has (the program reads it from a place map) */
    size_t poll_wrappers;              /* poll-start USDT marker locations in the executable */
    uint64_t poll_marker_offset;       /* the file offset of the last of them */
};

/* Look for the task id thread-local of target t. Fills spec's marker fields (tp_offset, the tag), st's symbol,
 * offset and debug file, and *loc. Returns 1 found, 0 none, or -1 with a reason in err (out of a BPF
 * program's reach, a library's dynamic TLS block, the target's memory unreadable). */
int tls_locate(const struct tls_join_target *t, struct bpf_sample_program_spec *spec, struct tls_join_stats *st,
               struct tls_location *loc, char *err, size_t errlen);

#endif
