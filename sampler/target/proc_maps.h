/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc_maps.h: the target's address space as a sorted list of file mappings, built from /proc/PID/maps
 * and kept current from PERF_RECORD_MMAP2 records. Answers "which mapping holds this address". */
#ifndef TASKSPY_PROC_MAPS_H
#define TASKSPY_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
    uint64_t start, end, pgoff;
    uint64_t inode;
    bool readable, executable;
    bool deleted;              /* the file was deleted (or replaced) since it was mapped */
    char *path;                /* owned; "" for anonymous, "[stack]" etc. for special mappings */
};

struct proc_maps {
    struct proc_map *v;        /* sorted by start, non-overlapping */
    size_t n, cap;
    unsigned generation;       /* bumped on every change, so caches keyed on it can notice */
};

/* Parse one line of /proc/PID/maps. The path (without a trailing " (deleted)") is copied into pathbuf.
 * Returns 0, or -1 for a malformed line. */
int proc_maps_parse_line(const char *line, struct proc_map *out, char *pathbuf, size_t pathbuf_size);
/* Replace the contents with /proc/PID/maps. A mapping of a deleted file gets the path
 * /proc/PID/map_files/START-END, through which the mapped file can still be opened. Returns 0, or -1 with
 * errno set. */
int proc_maps_load(struct proc_maps *m, pid_t pid);
/* Insert a mapping (copying its path), removing or trimming whatever it overlaps. Returns 0 or -1. */
int proc_maps_insert(struct proc_maps *m, const struct proc_map *map);
const struct proc_map *proc_maps_find(const struct proc_maps *m, uint64_t addr);
void proc_maps_free(struct proc_maps *m);

#endif
