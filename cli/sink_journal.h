/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sink_journal.h: deferred delivery of a sampler sink's callbacks, as perf record defers symbolization to perf
 * report. The journal stands in for a sink while recording: each callback that feeds the profile (mappings,
 * thread names, samples, polls, task events, wait stacks, wait rounds) is appended, with copies of its address
 * arrays and strings, to one growable byte buffer, and replayed in the same order into the real sink later:
 * when the buffer reaches its budget (so memory stays bounded and a long recording symbolizes early, once) and
 * at the end; samples whose task is named only later may be held back until the end (a bounded few).
 * on_progress goes to the real sink at once. Callbacks come from one thread at a time (the sampler's rule), so
 * the journal takes no lock. */
#ifndef TASKSPY_CLI_SINK_JOURNAL_H
#define TASKSPY_CLI_SINK_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "sampler/sampler.h"

/* The default budget. At 999 Hz on 2 busy CPUs a dwarf sample of about 30 frames takes about 330 bytes here
 * (its fields and 8 bytes per address): 4 MB hold about 12,000 samples, 6 s of recording (60 s at 99 Hz).
 * A recording that short is symbolized only after it ends; a longer one replays every few seconds and stays
 * within 4 MB. Larger would defer longer but shows as growth: taskspy's whole peak RSS is 26-44 MB on a
 * small target, and bench row 5 wants the same peak after 60 s as after 10 s (4 MB: 1.16 where it was 1.07,
 * the 60 s run peaking with a full journal; 16 MB would make it about 1.4). The 60 s run's peak also holds
 * the symbols and DWARF its first replay loaded while sampling went on, which the 10 s run loads only after:
 * 1.24 on 2026-11-30, flat (1.01) from 20 s to 60 s. */
#define SINK_JOURNAL_BUDGET (4u << 20)

/* The most bytes of samples held back for a name (sink_journal_hold_provisional): about 1,500 dwarf samples. */
#define SINK_JOURNAL_HELD_BUDGET (512u << 10)

struct sink_journal {
    struct sampler_sink target;        /* where the callbacks are replayed */
    size_t budget;                     /* the most bytes held: an entry that does not fit replays first */
    VEC_OF(unsigned char) bytes;       /* the entries, each 8-byte aligned */
    int root_fd;                       /* the mappings' root held open (O_PATH), or -1 */
    char root_from[64];                /* the root it was opened from ("/proc/PID/root") */
    char root_as[32];                  /* the root journaled instead: "/proc/self/fd/N" */
    uint64_t replays;                  /* replays so far (the budget's and the final one) */
    uint64_t entries;                  /* entries journaled so far */
    bool failed;                       /* out of memory: an entry was not kept */
    /* sink_journal_name_tasks' callback and its context, or NULL */
    bool (*named_later)(void *ctx, uint64_t task_id, uint64_t *named);
    void *named_ctx;
    uint64_t renamed;                  /* replayed samples whose provisional task_id named_later replaced */
    bool hold_provisional;             /* sink_journal_hold_provisional's */
    VEC_OF(unsigned char) held;        /* entries of the samples held back, as in bytes */
    uint64_t held_over;                /* provisional samples replayed unnamed: no room left to hold them */
};

/* A journal in front of target (copied; its ctx and callbacks stay the caller's). budget 0: the default. */
void sink_journal_init(struct sink_journal *j, const struct sampler_sink *target, size_t budget);
/* The sink to hand the sampler: it journals into j. */
struct sampler_sink sink_journal_sink(struct sink_journal *j);
/* From now on a replayed sample whose task_id is provisional (sampler_sample's task_id_provisional) takes the id
 * named_later gives it, where it gives one (then no longer provisional; counted in renamed): set once sampling
 * has stopped, sampler_task_named_later through the caller's context. */
void sink_journal_name_tasks(struct sink_journal *j, bool (*named_later)(void *ctx, uint64_t task_id, uint64_t *named),
                             void *ctx);
/* From now on a replay before sink_journal_name_tasks (the budget's, while sampling goes on) holds back the
 * samples whose task_id is provisional, up to SINK_JOURNAL_HELD_BUDGET bytes (past it they are replayed as they
 * are, counted in held_over): their task may be named only later in the recording. The first replay after
 * sink_journal_name_tasks delivers them first, named where they can be, then the journal. They arrive after
 * the entries replayed while they were held (a sample's addresses are read against the mappings known then). */
void sink_journal_hold_provisional(struct sink_journal *j);
/* Deliver every journaled callback to the target in order and empty the journal. */
void sink_journal_replay(struct sink_journal *j);
/* Release the buffer and the root; j is then unusable until init. */
void sink_journal_free(struct sink_journal *j);

#endif
