/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wait_collect.h: what `record --wait-output FILE` keeps and writes: the sampler's task events and wait stacks
 * handed to the wait profile (flamegraph/wait_profile.h) as they come, and at the end the wait profile
 * written whole through an output file (O_TMPFILE), or, when the recording gave nothing to make one from,
 * no file and one line saying why. */
#ifndef TASKSPY_WAIT_COLLECT_H
#define TASKSPY_WAIT_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/output_file.h"
#include "cli/output_formats.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/wait_profile.h"
#include "sampler/sampler.h"

struct wait_collect {
    const char *path;
    enum output_format format;       /* FORMAT_FOLDED or FORMAT_FLAMEGRAPH */
    struct output_file file;
    bool file_open;                  /* to be aborted unless written */
    struct wait_profile *profile;
    struct profile *result;          /* after wait_collect_finish */
    uint64_t events, stacks;         /* delivered by the sampler */
};

/* Create the output's temporary file now (an unwritable destination fails before any work). Returns 0, or -1
 * with a message in err. */
int wait_collect_open(struct wait_collect *c, const char *path, enum output_format format, char *err, size_t errlen);
/* Start the wait profile over the CPU profile's task stacks. Returns 0 or -1 (no memory). */
int wait_collect_start(struct wait_collect *c, struct task_stacks *stacks, const struct profile *names,
                       const struct wait_options *options);
int wait_collect_event(struct wait_collect *c, const struct sampler_task_event *e);
/* A registration stack, symbolized: frames outermost first without the registering function's own frame; key:
 * its id among the pprof export's registration stacks (WAIT_NO_KEY: none). */
int wait_collect_stack(struct wait_collect *c, const struct sampler_wait_stack *w, uint32_t thread_root,
                       const struct stack_frame *const *frames, size_t n, uint32_t key);
int wait_collect_round(struct wait_collect *c, uint64_t until_ns);
/* After task_stacks_finish: settle the waits up to stop_ns (ready_unless_registered: wait_profile_finish's rule for
 * runtimes that do not say when a task completed). Returns 0 or -1 (no memory). */
int wait_collect_finish(struct wait_collect *c, uint64_t stop_ns, bool ready_unless_registered);
/* Why there is no wait profile to write (note: the sampler's wait_note), or NULL when there is one. */
const char *wait_collect_nothing(const struct wait_collect *c, const char *note);
/* Write the wait profile into place (svg: the graph's options). Returns 0, or -1 with a message in err (nothing
 * left behind). */
int wait_collect_write(struct wait_collect *c, const struct svg_options *svg, char *err, size_t errlen);
/* Drop the output if not written, free everything. */
void wait_collect_free(struct wait_collect *c);

#endif
