/* SPDX-License-Identifier: GPL-3.0-or-later */
/* big_alloc.c: big zeroed arrays. From 512 KiB up they are anonymous mappings (a multiple of 2 MiB, which the
 * kernel places on a huge page boundary); those touched all over (hash tables) from 2 MiB up are advised
 * MADV_HUGEPAGE: filling one takes a fault per 2 MiB rather than per 4 KiB page, and its random lookups miss
 * the TLB far less. Arrays filled in order keep small pages: a huge page is zeroed whole at its first touch,
 * and memory the system has not used for a while (a VM's free pages given back to its host) costs several
 * times more to touch the first time in huge pages than in small ones, which the low-order free lists serve.
 * Smaller arrays, and all of them under AddressSanitizer (which checks heap bounds only), come from malloc. */
#include "flamegraph/big_alloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23          /* Linux 5.14; older headers lack it */
#endif

#define BIG_HUGE_PAGE (2u << 20)
/* From here a mapping's faults cost less than malloc's copying and zeroing as an array grows. */
#define BIG_MAPPED_MIN (512u << 10)
/* From here a table touched all over gets huge pages: smaller, a huge page would be zeroed for a part of it. */
#define BIG_HUGE_MIN BIG_HUGE_PAGE

#if defined(__SANITIZE_ADDRESS__)
#define BIG_USE_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_USE_MALLOC 1
#endif
#endif
#ifndef BIG_USE_MALLOC
#define BIG_USE_MALLOC 0
#endif

static bool mapped(size_t bytes)
{
    return !BIG_USE_MALLOC && bytes >= BIG_MAPPED_MIN;
}

static size_t map_length(size_t bytes)
{
    return (bytes + BIG_HUGE_PAGE - 1) & ~(size_t)(BIG_HUGE_PAGE - 1);
}

/* Huge pages are advice: where the kernel has none (or THP is off) the mapping works with small pages, so
 * a failed madvise changes nothing but speed. */
static void advise_huge(void *ptr, size_t bytes, enum big_touch touch)
{
    if (touch != BIG_ALL_OVER || bytes < BIG_HUGE_MIN)
        return;
    if (madvise(ptr, map_length(bytes), MADV_HUGEPAGE) != 0)
        return;
}

void *big_alloc(size_t bytes, enum big_touch touch)
{
    if (!mapped(bytes))
        return calloc(1, bytes ? bytes : 1);
    size_t len = map_length(bytes);
    void *ptr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr == MAP_FAILED)
        return NULL;
    advise_huge(ptr, bytes, touch);
    return ptr;
}

void *big_realloc(void *ptr, size_t old_bytes, size_t new_bytes, enum big_touch touch)
{
    if (!ptr)
        return big_alloc(new_bytes, touch);
    if (!mapped(old_bytes) && !mapped(new_bytes)) {
        char *grown = realloc(ptr, new_bytes ? new_bytes : 1);
        if (grown && new_bytes > old_bytes)
            memset(grown + old_bytes, 0, new_bytes - old_bytes);
        return grown;
    }
    if (mapped(old_bytes) && mapped(new_bytes)) {
        size_t old_len = map_length(old_bytes), new_len = map_length(new_bytes);
        if (old_len == new_len)
            return ptr;
        void *moved = mremap(ptr, old_len, new_len, MREMAP_MAYMOVE);
        if (moved == MAP_FAILED)
            return NULL;
        advise_huge(moved, new_bytes, touch);
        return moved;
    }
    /* crossing the threshold: copy */
    void *fresh = big_alloc(new_bytes, touch);
    if (!fresh)
        return NULL;
    memcpy(fresh, ptr, old_bytes < new_bytes ? old_bytes : new_bytes);
    big_free(ptr, old_bytes);
    return fresh;
}

void big_free(void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    if (!mapped(bytes)) {
        free(ptr);
        return;
    }
    /* munmap fails only for arguments that are not a mapping made here (a bug); the mapping then stays */
    if (munmap(ptr, map_length(bytes)) != 0)
        return;
}

int big_populate(void *ptr, size_t bytes, size_t offset, size_t len)
{
    if (!ptr || !mapped(bytes) || offset >= map_length(bytes))
        return 0;
    long page_size = sysconf(_SC_PAGESIZE);    /* the mapping starts on a page: whole pages from there */
    size_t page = page_size > 0 ? (size_t)page_size : 4096;
    size_t from = offset & ~(page - 1), to = offset + len;
    if (to > map_length(bytes))
        to = map_length(bytes);
    to = (to + page - 1) & ~(page - 1);
    if (to <= from)
        return 0;
    return madvise((char *)ptr + from, to - from, MADV_POPULATE_WRITE) == 0 ? 1 : -1;
}
