/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_memory.c: the target's memory read through a cache of whole pages (tasks_internal.h's memory_cache),
 * whatever the target is: a page is one read of it (one process_vm_readv of a live process). */
#include "tasks/tasks_internal.h"

#include <string.h>

#include "base/u64_map.h"
#include "base/vec.h"

int memory_cache_init(struct memory_cache *c, struct target_view *target)
{
    memset(c, 0, sizeof(*c));
    c->target = target;
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

/* whether page lies in a read-only mapping */
static bool read_only(const struct memory_cache *c, uint64_t page)
{
    const struct target_mapping *m = c->target ? target_maps_find(&c->target->maps, page) : NULL;
    return m && m->read_only;
}

bool memory_cache_read_now(struct memory_cache *c, uint64_t addr, void *buf, size_t len, uint64_t ahead)
{
    c->ahead.addr = 0;
    if (len == 0 || addr == 0 || addr + len < addr)
        return false;
    uint64_t page = ahead & ~(uint64_t)(MEMORY_PAGE - 1);
    if (page != 0 && read_only(c, page))
        page = 0;                     /* a lasting page is read where it is needed */
    bool page_read = false;
    if (!c->target->ops->read_with_page(c->target, addr, buf, len, page, c->ahead.bytes, &page_read))
        return false;
    if (page_read) {
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

/* the cached page at page (read now when not cached), or NULL when the cache cannot hold it */
static const struct memory_page *page_at(struct memory_cache *c, uint64_t page)
{
    if (c->last && c->last->addr == page)
        return c->last;
    c->last = NULL;                   /* (a page added below may move the others) */
    struct memory_pages *set = read_only(c, page) ? &c->lasting : &c->task;
    uint32_t index;
    if (!set->index.keys)
        return NULL;
    int rc = u64_map_index(&set->index, page, set, &index);
    if (rc < 0)
        return NULL;
    struct memory_page *p = &set->v[index];
    if (rc == 1) {
        p->addr = page;
        p->readable = view_read(c->target, page, p->bytes, MEMORY_PAGE);
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
            return view_read(c->target, addr, out, len);
        if (!p->readable)
            return false;
        memcpy(out, p->bytes + (addr - page), n);
        out += n;
        addr += n;
        len -= n;
    }
    return true;
}
