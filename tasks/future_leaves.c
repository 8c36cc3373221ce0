/* SPDX-License-Identifier: GPL-3.0-or-later */
/* future_leaves.c: the leaf futures taskspy names, by their type's qualified name, and what can be read of
 * them: tokio's Sleep (time left to its deadline), a JoinHandle (the id of the task it waits for), channel
 * receivers, semaphore acquires (Mutex, Semaphore, RwLock), Notify; sockets are weak leaves (an I/O object
 * met inside a connection struct: taken only when no suspended async fn is found), with their fd. */
#include "tasks/tasks_internal.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_FIND_DEPTH 10

/* the member named name anywhere inline inside type (no pointers): its offset and type */
static bool find_member(Dwarf_Die *type, const char *name, int depth, struct dwarf_member *out)
{
    if (dwarf_member(type, name, out))
        return true;
    struct dwarf_member some;
    if (dwarf_has_variants(type)) {
        /* which variant holds it depends on the value: only an Option's Some is entered (a live socket's
           PollEvented holds Some(io)); the reader of the result checks what it reads */
        if (depth >= MAX_FIND_DEPTH || !dwarf_variant_named(type, "Some", &some) ||
            !find_member(&some.type, name, depth + 1, out))
            return false;
        out->offset += some.offset;
        return true;
    }
    struct dwarf_member m;
    struct dwarf_member_cursor members = { 0 };
    while (depth < MAX_FIND_DEPTH && dwarf_member_next(type, &members, &m)) {
        int tag = dwarf_tag(&m.type);
        if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type) && find_member(&m.type, name, depth + 1, out)) {
            out->offset += m.offset;
            return true;
        }
    }
    return false;
}

static bool read_int(elf_memory_reader read, void *rctx, Dwarf_Die *type, uint64_t addr, int64_t *out)
{
    Dwarf_Die t = *type;
    for (int i = 0; i < 6 && dwarf_tag(&t) == DW_TAG_structure_type; i++) {   /* Nanoseconds(u32) and the like */
        struct dwarf_member m;
        if (!dwarf_member_at(&t, 0, &m))
            return false;
        addr += m.offset;
        t = m.type;
    }
    int64_t size = dwarf_type_size(&t);
    int64_t v = 0;
    if (size < 1 || size > 8 || !read(rctx, addr, &v, (size_t)size))
        return false;
    if (size < 8 && (v >> (size * 8 - 1)) & 1)
        v = (int64_t)((uint64_t)v | (UINT64_MAX << (size * 8)));   /* sign-extend (tv_sec is signed) */
    *out = v;
    return true;
}

/* Sleep: the deadline (a std Instant on CLOCK_MONOTONIC, tv_sec and tv_nsec) against now */
static const char *sleep_detail(struct string_pool *pool, elf_memory_reader read, void *rctx, Dwarf_Die *type,
                                uint64_t addr)
{
    struct dwarf_member deadline, sec, nsec;
    int64_t s, ns;
    if (!find_member(type, "deadline", 0, &deadline) || !find_member(&deadline.type, "tv_sec", 0, &sec) ||
        !find_member(&deadline.type, "tv_nsec", 0, &nsec) ||
        !read_int(read, rctx, &sec.type, addr + deadline.offset + sec.offset, &s) ||
        !read_int(read, rctx, &nsec.type, addr + deadline.offset + nsec.offset, &ns))
        return NULL;
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        return NULL;
    double left = (double)(s - now.tv_sec) + (double)(ns - now.tv_nsec) / 1e9;
    char text[64];
    if (left >= 1.0 || left <= -1.0)
        snprintf(text, sizeof(text), "deadline in %.1f s", left);
    else
        snprintf(text, sizeof(text), "deadline in %.1f ms", left * 1e3);
    return string_pool_intern(pool, text);
}

/* JoinHandle: raw.ptr is the awaited task's header; its id through that task's vtable */
static const char *join_detail(const struct tokio_layout *l, struct string_pool *pool, elf_memory_reader read,
                               void *rctx, Dwarf_Die *type, uint64_t addr)
{
    struct dwarf_member raw;
    uint64_t header;
    struct task_header h;
    const char *failed;
    if ((!dwarf_member_path(type, "raw.ptr.pointer", &raw, &failed) && !find_member(type, "ptr", 0, &raw)) ||
        !read(rctx, addr + raw.offset, &header, 8) || !tokio_read_header(l, read, rctx, header, &h))
        return NULL;
    char text[64];
    snprintf(text, sizeof(text), "waits for task %llu", (unsigned long long)h.id);
    return string_pool_intern(pool, text);
}

/* a socket: the file descriptor inside (std's OwnedFd { fd }) */
static const char *fd_detail(struct string_pool *pool, elf_memory_reader read, void *rctx, Dwarf_Die *type,
                             uint64_t addr)
{
    struct dwarf_member fd;
    int64_t v;
    if (!find_member(type, "fd", 0, &fd) || !read_int(read, rctx, &fd.type, addr + fd.offset, &v) || v < 0)
        return NULL;
    char text[64];
    snprintf(text, sizeof(text), "fd %lld", (long long)v);
    return string_pool_intern(pool, text);
}

enum leaf_kind { SLEEP, JOIN, PLAIN, SOCKET };

struct leaf_rule {
    const char *prefix;        /* of the type's qualified name */
    enum leaf_kind kind;
    const char *what;          /* detail for PLAIN */
};

static const struct leaf_rule rules[] = {
    { "tokio::time::sleep::Sleep", SLEEP, NULL },
    { "tokio::runtime::task::join::JoinHandle<", JOIN, NULL },
    { "tokio::sync::oneshot::Receiver<", PLAIN, "oneshot channel: no value sent yet" },
    { "tokio::sync::batch_semaphore::Acquire", PLAIN, "waiting for a semaphore permit (Mutex, RwLock, Semaphore)" },
    { "tokio::sync::notify::Notified", PLAIN, "waiting for a Notify" },
    { "tokio::sync::mpsc::chan::Rx<", PLAIN, "mpsc channel: no message yet" },
    { "tokio::net::tcp::stream::TcpStream", SOCKET, NULL },
    { "tokio::net::tcp::listener::TcpListener", SOCKET, NULL },
    { "tokio::net::udp::UdpSocket", SOCKET, NULL },
    { "tokio::net::unix::stream::UnixStream", SOCKET, NULL },
};

enum leaf_strength future_leaf(const struct tokio_layout *l, struct string_pool *pool, elf_memory_reader read,
                               void *rctx, const char *qualified, Dwarf_Die *type, uint64_t addr, const char **detail)
{
    if (detail)
        *detail = NULL;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        const struct leaf_rule *r = &rules[i];
        if (strncmp(qualified, r->prefix, strlen(r->prefix)) != 0)
            continue;
        enum leaf_strength strength = r->kind == SOCKET ? LEAF_WEAK : LEAF_STRONG;
        if (!detail)
            return strength;
        switch (r->kind) {
        case SLEEP:
            *detail = sleep_detail(pool, read, rctx, type, addr);
            break;
        case JOIN:
            *detail = join_detail(l, pool, read, rctx, type, addr);
            break;
        case PLAIN:
            *detail = string_pool_intern(pool, r->what);
            break;
        case SOCKET:
            *detail = fd_detail(pool, read, rctx, type, addr);
            break;
        }
        return strength;
    }
    return LEAF_NONE;
}
