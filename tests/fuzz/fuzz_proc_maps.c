/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_proc_maps.c: libFuzzer target for /proc/PID/maps handling: proc_maps_parse_line on each input line,
 * proc_maps_insert of every parsed mapping, proc_maps_find at each mapping's edges and at addresses read
 * from the input. Asserts the list stays sorted and non-overlapping, that the newest mapping wins over its
 * range, and that find agrees with a linear scan. */
#include "sampler/target/proc_maps.h"

#include <stdlib.h>
#include <string.h>

static void check_sorted(const struct proc_maps *m)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].start >= m->v[i].end || !m->v[i].path)
            abort();
        if (i > 0 && m->v[i - 1].end > m->v[i].start)
            abort();
    }
}

static void check_find(const struct proc_maps *m, uint64_t addr)
{
    const struct proc_map *want = NULL;
    for (size_t i = 0; i < m->n && !want; i++)
        if (m->v[i].start <= addr && addr < m->v[i].end)
            want = &m->v[i];
    if (proc_maps_find(m, addr) != want)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    /* a small path buffer for short inputs exercises truncation; real size otherwise */
    size_t pathsz = size % 3 == 0 ? 16 : 4096;
    char *path = malloc(pathsz);
    struct proc_maps m;
    memset(&m, 0, sizeof(m));
    for (char *line = text; path && line;) {
        char *nl = strchr(line, '\n');
        char *next = nl ? nl + 1 : NULL;
        if (nl)
            *nl = '\0';
        struct proc_map pm;
        if (proc_maps_parse_line(line, &pm, path, pathsz) == 0) {
            if (pm.end < pm.start || strlen(pm.path) >= pathsz || pm.path != path)
                abort();
            unsigned gen = m.generation;
            if (proc_maps_insert(&m, &pm) != 0)
                break;
            check_sorted(&m);
            if (pm.end > pm.start) {
                if (m.generation == gen)
                    abort();
                const struct proc_map *f = proc_maps_find(&m, pm.start);
                const struct proc_map *l = proc_maps_find(&m, pm.end - 1);
                if (!f || f != l || f->start != pm.start || f->end != pm.end || f->pgoff != pm.pgoff ||
                    strcmp(f->path, pm.path) != 0)
                    abort();                      /* the newest mapping owns its whole range */
                check_find(&m, pm.start - 1);
                check_find(&m, pm.end);
            }
        }
        line = next;
    }
    for (size_t i = 0; i + 8 <= size; i += 8) {
        uint64_t a;
        memcpy(&a, data + i, 8);
        check_find(&m, a);
    }
    for (size_t i = 0; i < m.n; i++) {
        check_find(&m, m.v[i].start);
        check_find(&m, m.v[i].end - 1);
        check_find(&m, m.v[i].end);
    }
    proc_maps_free(&m);
    free(path);
    free(text);
    return 0;
}
