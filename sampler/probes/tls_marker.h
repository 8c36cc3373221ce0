/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_marker.h: the TLS task marker of an executable (README, "TLS task marker"): an initial-exec thread-local
 * uint64_t named taskspy_current_task that the program sets to the task it polls (0 outside a poll). Finds
 * the variable's STT_TLS symbol and the PT_TLS segment, and turns them into the variable's offset from the
 * thread pointer (x86-64 fs_base) in the executable's static TLS block, so the sampler can read it. */
#ifndef TASKSPY_TLS_MARKER_H
#define TASKSPY_TLS_MARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_MARKER_SYMBOL "taskspy_current_task"

struct tls_marker {
    char symbol[512];          /* the symbol found */
    uint64_t st_value;         /* its offset in the TLS template */
    uint64_t size;             /* its st_size */
    uint64_t tls_vaddr;        /* PT_TLS p_vaddr, p_memsz, p_align */
    uint64_t tls_memsz;
    uint64_t tls_align;
    int64_t tp_offset;         /* where it lives: thread pointer + tp_offset */
};


/* Look for the marker in the executable at path. Returns 1 with *out filled, 0 when the file has no such
 * thread-local (or no TLS segment), -1 when the file cannot be read as ELF (errno set). */
int tls_marker_find(const char *path, struct tls_marker *out);

#endif
