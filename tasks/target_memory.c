/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_memory.c: another process's memory, read with process_vm_readv (no stop, no ptrace attach), and its
 * mappings from /proc/PID/maps, for the load bias of its objects. */
#include "tasks/tasks_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/u64_map.h"
#include "base/vec.h"

bool target_memory_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    pid_t pid = *(const pid_t *)ctx;
    if (len == 0)
        return true;
    if (addr == 0 || addr + len < addr)
        return false;
    struct iovec local = { buf, len };
    struct iovec remote = { (void *)(uintptr_t)addr, len };
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)len;
}

static bool read_only(const struct target_maps *maps, uint64_t page);

int memory_cache_init(struct memory_cache *c, pid_t pid, const struct target_maps *maps)
{
    memset(c, 0, sizeof(*c));
    c->pid = pid;
    c->maps = maps;
    if (u64_map_init(&c->task.index, 64) != 0 || u64_map_init(&c->lasting.index, 16) != 0) {
        memory_cache_free(c);
        return -1;
    }
    return 0;
}

void memory_cache_reset(struct memory_cache *c)
{
    c->last = NULL;
    if (c->task.index.count > 0) {
        u64_map_clear(&c->task.index);
        c->task.n = 0;
    }
    uint32_t index;
    if (c->ahead.addr && c->task.index.keys && u64_map_index(&c->task.index, c->ahead.addr, &c->task, &index) == 1)
        c->task.v[index] = c->ahead;
    c->ahead.addr = 0;
}

bool memory_cache_read_now(struct memory_cache *c, uint64_t addr, void *buf, size_t len, uint64_t ahead)
{
    c->ahead.addr = 0;
    if (len == 0 || addr == 0 || addr + len < addr)
        return false;
    uint64_t page = ahead & ~(uint64_t)(MEMORY_PAGE - 1);
    struct iovec local[2] = { { buf, len }, { c->ahead.bytes, MEMORY_PAGE } };
    struct iovec remote[2] = { { (void *)(uintptr_t)addr, len }, { (void *)(uintptr_t)page, MEMORY_PAGE } };
    bool read_ahead = page != 0 && !read_only(c->maps, page);   /* a lasting page is read where it is needed */
    ssize_t n = process_vm_readv(c->pid, local, read_ahead ? 2 : 1, remote, read_ahead ? 2 : 1, 0);
    if (n < (ssize_t)len)
        return false;
    if (read_ahead && n == (ssize_t)(len + MEMORY_PAGE)) {
        c->ahead.addr = page;
        c->ahead.readable = true;
    }
    return true;
}

void memory_cache_free(struct memory_cache *c)
{
    c->last = NULL;
    u64_map_free(&c->task.index);
    vec_free(&c->task);
    u64_map_free(&c->lasting.index);
    vec_free(&c->lasting);
}

/* whether page lies in a read-only mapping */
static bool read_only(const struct target_maps *maps, uint64_t page)
{
    if (!maps)
        return false;
    size_t lo = 0, hi = maps->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (maps->v[mid].end <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < maps->n && maps->v[lo].start <= page && maps->v[lo].read_only;
}

/* the cached page at page (read now when not cached), or NULL when the cache cannot hold it */
static const struct memory_page *page_at(struct memory_cache *c, uint64_t page)
{
    if (c->last && c->last->addr == page)
        return c->last;
    c->last = NULL;                   /* (a page added below may move the others) */
    struct memory_pages *set = read_only(c->maps, page) ? &c->lasting : &c->task;
    uint32_t index;
    if (!set->index.keys)
        return NULL;
    int rc = u64_map_index(&set->index, page, set, &index);
    if (rc < 0)
        return NULL;
    struct memory_page *p = &set->v[index];
    if (rc == 1) {
        p->addr = page;
        p->readable = target_memory_read(&c->pid, page, p->bytes, MEMORY_PAGE);
    }
    c->last = p;
    return p;
}

bool memory_cache_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    struct memory_cache *c = ctx;
    if (addr == 0 || addr + len < addr)
        return false;
    uint8_t *out = buf;
    while (len > 0) {
        uint64_t page = addr & ~(uint64_t)(MEMORY_PAGE - 1);
        size_t in_page = (size_t)(page + MEMORY_PAGE - addr);
        size_t n = len < in_page ? len : in_page;
        const struct memory_page *p = page_at(c, page);
        if (!p)
            return target_memory_read(&c->pid, addr, out, len);
        if (!p->readable)
            return false;
        memcpy(out, p->bytes + (addr - page), n);
        out += n;
        addr += n;
        len -= n;
    }
    return true;
}

int target_maps_load(pid_t pid, struct target_maps *out)
{
    memset(out, 0, sizeof(*out));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[4096 + 256];
    int rc = 0;
    while (fgets(line, sizeof(line), f)) {
        uint64_t start, end, offset;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &offset,
                   &name_at) < 4)
            continue;
        struct target_mapping *m = vec_push(out);
        if (!m) {
            rc = -1;
            break;
        }
        *m = (struct target_mapping){ start, end, offset, false, NULL };
        char *name = line + name_at;
        name[strcspn(name, "\n")] = '\0';
        if (name_at > 0 && name[0] == '/' && !(m->path = strdup(name))) {
            rc = -1;
            break;
        }
        /* a file's readable, unwritable pages: its code and relocated read-only data (vtables) do not change; an
           anonymous mapping without write permission may be a malloc arena's reserve, made writable as it grows */
        m->read_only = m->path && perms[0] == 'r' && perms[1] != 'w';
    }
    fclose(f);
    if (rc != 0)
        target_maps_free(out);
    return rc;
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
