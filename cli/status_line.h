/* SPDX-License-Identifier: GPL-3.0-or-later */
/* status_line.h: the one-line status `taskspy record` shows on a terminal while recording (elapsed / duration,
 * samples, lost, polls, tasks) or while it downloads a debug file from debuginfod, rewritten in place on stderr
 * and erased before anything else is printed.
 * When stderr is not a terminal it shows nothing at all. */
#ifndef TASKSPY_STATUS_LINE_H
#define TASKSPY_STATUS_LINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sampler/sampler.h"

struct status_line {
    FILE *out;
    bool enabled;              /* out is a terminal */
    bool shown;                /* a status is on screen now */
};

/* Show the status on out only when out is a terminal. */
void status_line_init(struct status_line *sl, FILE *out);
/* Replace the status with p's figures. */
void status_line_show(struct status_line *sl, const struct sampler_progress *p);
/* Replace the status with a debuginfod download's: object (a path; its base name is shown), bytes so far and in
 * all (0: not known yet). */
void status_line_show_download(struct status_line *sl, const char *object, uint64_t bytes, uint64_t total);
/* Erase the status (if shown), so the next line starts at the left margin on an empty line. */
void status_line_clear(struct status_line *sl);

#endif
