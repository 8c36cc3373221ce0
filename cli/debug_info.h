/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debug_info.h: `taskspy record`'s side of separate debug files. It fills the settings of elf/'s shared debug-file
 * lookup (the one place that reads DEBUGINFOD_URLS: debuginfod servers are asked when it names one), shows a
 * download on the status line, counts the samples with frames in objects that had no symbols, and prints the
 * summary's lines about them: each such object's share of samples, where its debug file was looked for and what
 * would fix it, and one line on what debuginfod answered. */
#ifndef TASKSPY_DEBUG_INFO_H
#define TASKSPY_DEBUG_INFO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/vec.h"
#include "cli/status_line.h"
#include "elf/elf_file.h"
#include "symbolize/symbolize.h"

#define DEBUG_INFO_NO_OBJECT UINT32_MAX

struct unsymbolized_object {
    const char *object;                /* sym_result.object (interned by the symbolizer) */
    uint64_t samples;                  /* samples with a frame in it */
    uint64_t last_sample;              /* the sample that counted last (each counts once) */
};

struct debug_info {
    struct debug_files *files;         /* the shared lookup: for the symbolizer and the sampler */
    VEC_OF(struct unsymbolized_object) objects;
    uint64_t samples;                  /* samples counted (the current one's number) */
    char *lines;                       /* the summary's lines, settled (malloc'd), or NULL */
};

/* Reads DEBUGINFOD_URLS and makes the lookup; downloads show on status. Returns 0, or -1 when out of memory. */
int debug_info_init(struct debug_info *d, struct status_line *status);
void debug_info_free(struct debug_info *d);
/* The counter of an unsymbolized object (sym_result.object), made on first use; DEBUG_INFO_NO_OBJECT when out of
 * memory (it is not counted then). */
uint32_t debug_info_object(struct debug_info *d, const char *object);
/* A sample begins; then each of its frames in an unsymbolized object (index from debug_info_object, or
 * DEBUG_INFO_NO_OBJECT) is told, and counts once for the sample. */
static inline void debug_info_sample(struct debug_info *d)
{
    d->samples++;
}
static inline void debug_info_saw(struct debug_info *d, uint32_t index)
{
    if (index < d->objects.n && d->objects.v[index].last_sample != d->samples) {
        d->objects.v[index].last_sample = d->samples;
        d->objects.v[index].samples++;
    }
}
/* Settle the summary's lines once every sample is symbolized, while the target's files can still be read through
 * the roots the symbolizer was given (its Debian package is looked up there): one per unsymbolized object with
 * samples (the most first), then what debuginfod answered. */
void debug_info_settle(struct debug_info *d, struct symbolizer *s);
/* Print the settled lines. */
void debug_info_print(FILE *out, const struct debug_info *d);
/* One object's line: r as the symbolizer reports it, percent of the samples, package: the Debian package that
 * installed it, or NULL. Paths are shown as the target sees them (without r->root). */
void debug_info_print_object(FILE *out, const struct sym_object_report *r, double percent, const char *package);
/* The line on debuginfod's answers (none when it was not asked). */
void debug_info_print_debuginfod(FILE *out, const struct debug_files_stats *st);

#endif
