/* SPDX-License-Identifier: GPL-3.0-or-later */
/* top_samples.h: the sampler's side of `taskspy top` (cli/top_cmd.c): each CPU sample told to the view's model
 * with its task and its innermost frame of the program's own (in its executable, outside Rust's standard
 * library), and the symbol state that names those frames, renewed once a minute so that a view's memory stays
 * bounded however long it runs (what is hot is read again; the names already given stay). Called from the
 * sampling thread alone. */
#ifndef TASKSPY_TOP_SAMPLES_H
#define TASKSPY_TOP_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "sampler/sampler.h"
#include "tasks/tasks.h"

struct top_samples;

/* NULL when out of memory. model: the view's model, told each sample. executable: the target's executable as the
 * target names it (/proc/PID/exe), whose code is the program's own: frames in other objects (libc, the loader, the
 * vDSO, linked libraries) are passed over, never symbolized; NULL: every object's frames count. */
struct top_samples *top_samples_new(struct task_top *model, const char *executable);
void top_samples_free(struct top_samples *k);

/* The sampler's callbacks (struct sampler_sink's on_mapping and on_sample, ctx the top_samples). */
void top_samples_mapping(void *ctx, const struct sampler_mapping *m);
void top_samples_sample(void *ctx, const struct sampler_sample *s);

/* The sample's innermost frame of the program's own (in its executable, outside Rust's standard library) among
 * its first addresses (a name that lives as long as k), NULL when there is none or out of memory: what
 * top_samples_sample tells the model with. */
const char *top_samples_frame(struct top_samples *k, const struct sampler_sample *s);
/* How many times the symbol state was renewed so far. */
unsigned top_samples_renewals(const struct top_samples *k);

#endif
