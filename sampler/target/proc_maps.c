/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc_maps.c: parsing /proc/PID/maps lines and keeping a sorted, non-overlapping mapping list. */
#include "sampler/target/proc_maps.h"

#include "base/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int proc_maps_parse_line(const char *line, struct proc_map *out, char *pathbuf, size_t pathbuf_size)
{
    unsigned long long start, end, pgoff, inode;
    char perms[8];
    unsigned dev_major, dev_minor;
    int consumed = 0;
    if (pathbuf_size == 0)
        return -1;
    if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &pgoff, &dev_major, &dev_minor,
               &inode, &consumed) != 7 || end < start || strlen(perms) != 4)
        return -1;
    const char *p = line + consumed;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t len = strcspn(p, "\n");
    static const char deleted[] = " (deleted)";
    out->deleted = false;
    if (len >= sizeof(deleted) - 1 && memcmp(p + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0) {
        len -= sizeof(deleted) - 1;
        out->deleted = true;
    }
    if (len >= pathbuf_size)
        len = pathbuf_size - 1;
    memcpy(pathbuf, p, len);
    pathbuf[len] = '\0';
    out->start = start;
    out->end = end;
    out->pgoff = pgoff;
    out->inode = inode;
    out->readable = perms[0] == 'r';
    out->executable = perms[2] == 'x';
    out->path = pathbuf;
    return 0;
}

int proc_maps_insert(struct proc_maps *m, const struct proc_map *map)
{
    if (map->end <= map->start)
        return 0;
    if (m->n > SIZE_MAX - 2 || vec_reserve(m, m->n + 2) != 0)
        return -1;
    char *path = strdup(map->path ? map->path : "");
    if (!path)
        return -1;
    /* Trim or drop every existing mapping that overlaps [start, end). */
    for (size_t i = 0; i < m->n;) {
        struct proc_map *o = &m->v[i];
        if (o->end <= map->start || o->start >= map->end) {
            i++;
            continue;
        }
        if (o->start < map->start && o->end > map->end) {
            /* The new one splits o in two: keep the tail as a new entry. */
            struct proc_map tail = *o;
            tail.path = strdup(o->path);
            if (!tail.path) {
                free(path);
                return -1;
            }
            tail.pgoff += map->end - o->start;
            tail.start = map->end;
            o->end = map->start;
            memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof(*o));
            m->v[i + 1] = tail;
            m->n++;
            i += 2;
        } else if (o->start < map->start) {
            o->end = map->start;
            i++;
        } else if (o->end > map->end) {
            o->pgoff += map->end - o->start;
            o->start = map->end;
            i++;
        } else {
            free(o->path);
            memmove(o, o + 1, (m->n - i - 1) * sizeof(*o));
            m->n--;
        }
    }
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].start < map->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&m->v[lo + 1], &m->v[lo], (m->n - lo) * sizeof(*m->v));
    m->v[lo] = *map;
    m->v[lo].path = path;
    m->n++;
    m->generation++;
    return 0;
}

const struct proc_map *proc_maps_find(const struct proc_maps *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n && m->v[lo].start <= addr && addr < m->v[lo].end)
        return &m->v[lo];
    return NULL;
}

void proc_maps_free(struct proc_maps *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    memset(m, 0, sizeof(*m));
}

int proc_maps_load(struct proc_maps *m, pid_t pid)
{
    char fname[64];
    snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(fname, "re");
    if (!f)
        return -1;
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    m->n = 0;
    char *line = NULL;
    size_t cap = 0;
    char path[4096];
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        struct proc_map pm;
        if (proc_maps_parse_line(line, &pm, path, sizeof(path)) != 0)
            continue;
        if (pm.deleted && path[0] == '/')
            snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, pm.start, pm.end);
        if (proc_maps_insert(m, &pm) != 0) {
            rc = -1;
            break;
        }
    }
    int e = errno;
    free(line);
    fclose(f);
    errno = e;
    m->generation++;
    return rc;
}
