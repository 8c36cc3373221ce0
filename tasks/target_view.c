/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_view.c: what the task reader reads, whatever it is (a live process, target_live.c; a core file,
 * target_core.c): its memory through the implementation's read, and its mappings, sorted, for the load bias
 * of its objects and for which pages never change. */
#include "tasks/tasks_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/vec.h"

bool view_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct target_view *t = ctx;
    if (len == 0)
        return true;
    if (addr == 0 || addr + len < addr)
        return false;
    return t->ops->read(t, addr, buf, len);
}

void view_close(struct target_view *t)
{
    if (t)
        t->ops->close(t);
}

const struct target_mapping *target_maps_find(const struct target_maps *m, uint64_t addr)
{
    if (!m)
        return NULL;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->v[lo].start <= addr ? &m->v[lo] : NULL;
}

void target_maps_free(struct target_maps *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    vec_free(m);
}

bool target_maps_bias(const struct target_maps *m, const char *path, const struct elf_file *ef, uint64_t *bias)
{
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].path && strcmp(m->v[i].path, path) == 0 &&
            elf_file_load_bias(ef, m->v[i].start, m->v[i].offset, false, page > 0 ? (uint64_t)page : 4096, bias))
            return true;
    return false;
}
