/* SPDX-License-Identifier: GPL-3.0-or-later */
/* future_leaves.c: the leaf futures taskspy names, by their type's qualified name, and what can be read of
 * them: tokio's Sleep (time left to its deadline), a JoinHandle (the id of the task it waits for), a JoinSet
 * (the ids of the tasks in it, read along its lists: idle and notified entries, each a JoinHandle), channel
 * receivers, semaphore acquires (Mutex, Semaphore, RwLock), Notify; sockets are weak leaves (an I/O object
 * met inside a connection struct: taken only when no suspended async fn is found), with their fd. */
#include "tasks/tasks_internal.h"

#include <dwarf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FIND_DEPTH 10
#define MAX_JOIN_SET 4096          /* entries of a JoinSet's lists walked */
#define JOIN_SET_IDS 8             /* ids a JoinSet's detail names */

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

/* Where an integer field is: wrapper structs (Nanoseconds(u32) and the like) entered down to the integer. */
static bool int_field(Dwarf_Die *type, uint64_t offset, uint64_t *at, size_t *size)
{
    Dwarf_Die t = *type;
    for (int i = 0; i < 6 && dwarf_tag(&t) == DW_TAG_structure_type; i++) {
        struct dwarf_member m;
        if (!dwarf_member_at(&t, 0, &m))
            return false;
        offset += m.offset;
        t = m.type;
    }
    int64_t bytes = dwarf_type_size(&t);
    if (bytes < 1 || bytes > 8)
        return false;
    *at = offset;
    *size = (size_t)bytes;
    return true;
}

static bool read_int(elf_memory_reader read, void *rctx, uint64_t addr, size_t size, int64_t *out)
{
    int64_t v = 0;
    if (!read(rctx, addr, &v, size))
        return false;
    if (size < 8 && (v >> (size * 8 - 1)) & 1)
        v = (int64_t)((uint64_t)v | (UINT64_MAX << (size * 8)));   /* sign-extend (tv_sec is signed) */
    *out = v;
    return true;
}

bool type_pointer_inside(Dwarf_Die *type, uint64_t *offset, Dwarf_Die *target)
{
    Dwarf_Die t = *type;
    uint64_t at = *offset;
    for (int depth = 0; depth < 10; depth++) {
        if (dwarf_tag(&t) == DW_TAG_pointer_type) {
            if (!dwarf_type_of(&t, target))
                return false;
            *offset = at;
            return true;
        }
        struct dwarf_member m;
        if (dwarf_has_variants(&t)) {        /* Option<NonNull<T>>: a niche, the pointer is Some's */
            struct dwarf_member inner;
            if (!dwarf_variant_named(&t, "Some", &m) || !dwarf_member(&m.type, "__0", &inner))
                return false;
            at += m.offset + inner.offset;
            t = inner.type;
            continue;
        }
        int tag = dwarf_tag(&t);
        if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
            return false;
        /* the one member of a wrapper; a union's value, an UnsafeCell's, a NonNull's pointer, an Arc's ptr */
        if (!(dwarf_member_count(&t) == 1 && dwarf_member_at(&t, 0, &m)) && !dwarf_member(&t, "value", &m) &&
            !dwarf_member(&t, "pointer", &m) && !dwarf_member(&t, "p", &m) && !dwarf_member(&t, "ptr", &m))
            return false;
        at += m.offset;
        t = m.type;
    }
    return false;
}

enum leaf_kind { SLEEP, JOIN, JOIN_SET, PLAIN, SOCKET };

struct leaf_rule {
    const char *prefix;        /* of the type's qualified name */
    enum leaf_kind kind;
    const char *what;          /* detail for PLAIN */
};

static const struct leaf_rule rules[] = {
    { "tokio::time::sleep::Sleep", SLEEP, NULL },
    { "tokio::runtime::task::join::JoinHandle<", JOIN, NULL },
    { "tokio::task::join_set::JoinSet<", JOIN_SET, NULL },
    { "tokio::sync::oneshot::Receiver<", PLAIN, "oneshot channel: no value sent yet" },
    { "tokio::sync::batch_semaphore::Acquire", PLAIN, "waiting for a semaphore permit (Mutex, RwLock, Semaphore)" },
    { "tokio::sync::notify::Notified", PLAIN, "waiting for a Notify" },
    { "tokio::sync::mpsc::chan::Rx<", PLAIN, "mpsc channel: no message yet" },
    { "tokio::net::tcp::stream::TcpStream", SOCKET, NULL },
    { "tokio::net::tcp::listener::TcpListener", SOCKET, NULL },
    { "tokio::net::udp::UdpSocket", SOCKET, NULL },
    { "tokio::net::unix::stream::UnixStream", SOCKET, NULL },
};

/* A JoinSet's lists (tokio's util::idle_notified_set): JoinSet { inner: IdleNotifiedSet { lists: Arc<Mutex<
   ListsInner { notified: LinkedList, idle: LinkedList }>> } }, each list's head an entry ListEntry { pointers:
   Pointers { .. next .. }, value: .. JoinHandle { raw: RawTask { ptr } } }. offset[0]: the Arc's pointer in the
   JoinSet; [1], [2]: the notified and idle lists' heads in what it points to (ArcInner); [3]: an entry's next;
   [4]: its JoinHandle's task header. */
static bool find_join_set(Dwarf_Die *type, struct leaf_plan *out)
{
    struct dwarf_member lists, data, notified, idle, head, next, value, raw;
    Dwarf_Die inner, entry, any;
    uint64_t arc = 0, at;
    if (!find_member(type, "lists", 0, &lists) || !type_pointer_inside(&lists.type, &arc, &inner) ||
        !dwarf_member(&inner, "data", &data) || !find_member(&data.type, "notified", 0, &notified) ||
        !find_member(&data.type, "idle", 0, &idle) || !find_member(&notified.type, "head", 0, &head))
        return false;
    out->offset[0] = lists.offset + arc;
    at = 0;
    if (!type_pointer_inside(&head.type, &at, &entry))
        return false;
    out->offset[1] = data.offset + notified.offset + head.offset + at;
    out->offset[2] = data.offset + idle.offset + head.offset + at;     /* (the same LinkedList type) */
    if (!find_member(&entry, "next", 0, &next) || !find_member(&entry, "value", 0, &value) ||
        !find_member(&value.type, "raw", 0, &raw))
        return false;
    at = 0;
    if (!type_pointer_inside(&next.type, &at, &any))
        return false;
    out->offset[3] = next.offset + at;
    at = 0;
    if (!type_pointer_inside(&raw.type, &at, &any))
        return false;
    out->offset[4] = value.offset + raw.offset + at;
    return true;
}

/* Sleep: the deadline (a std Instant on CLOCK_MONOTONIC: tv_sec, tv_nsec); JoinHandle: raw.ptr, the awaited
   task's header; a socket: the file descriptor inside (std's OwnedFd { fd }) */
static bool find_fields(enum leaf_kind kind, Dwarf_Die *type, struct leaf_plan *out)
{
    struct dwarf_member deadline, sec, nsec, raw, fd;
    const char *failed;
    switch (kind) {
    case JOIN_SET:
        return find_join_set(type, out);
    case SLEEP:
        return find_member(type, "deadline", 0, &deadline) && find_member(&deadline.type, "tv_sec", 0, &sec) &&
               find_member(&deadline.type, "tv_nsec", 0, &nsec) &&
               int_field(&sec.type, deadline.offset + sec.offset, &out->offset[0], &out->size[0]) &&
               int_field(&nsec.type, deadline.offset + nsec.offset, &out->offset[1], &out->size[1]);
    case JOIN:
        if (!dwarf_member_path(type, "raw.ptr.pointer", &raw, &failed) && !find_member(type, "ptr", 0, &raw))
            return false;
        out->offset[0] = raw.offset;
        out->size[0] = 8;
        return true;
    case SOCKET:
        return find_member(type, "fd", 0, &fd) && int_field(&fd.type, fd.offset, &out->offset[0], &out->size[0]);
    case PLAIN:
        return true;
    }
    return false;
}

void future_leaf_plan(const char *qualified, Dwarf_Die *type, struct leaf_plan *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; qualified && i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (strncmp(qualified, rules[i].prefix, strlen(rules[i].prefix)) != 0)
            continue;
        out->strength = rules[i].kind == SOCKET ? LEAF_WEAK : LEAF_STRONG;
        out->rule = (int)i;
        out->fields_found = find_fields(rules[i].kind, type, out);
        return;
    }
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* "waits for tasks 41, 42, 43": the ids of the tasks a JoinSet at addr holds, read along its two lists */
static const char *join_set_detail(const struct tokio_layout *l, struct string_pool *pool, elf_memory_reader read,
                                   void *rctx, const struct leaf_plan *plan, uint64_t addr)
{
    uint64_t inner, ids[JOIN_SET_IDS];
    size_t n = 0, all = 0, steps = 0;
    if (!read(rctx, addr + plan->offset[0], &inner, 8) || !inner)
        return NULL;
    for (int list = 1; list <= 2; list++) {
        uint64_t entry;
        if (!read(rctx, inner + plan->offset[list], &entry, 8))
            return NULL;
        while (entry && steps++ < MAX_JOIN_SET) {
            uint64_t header;
            struct task_header h;
            if (!read(rctx, entry + plan->offset[4], &header, 8) || !tokio_read_header(l, read, rctx, header, &h))
                return NULL;
            if (n < JOIN_SET_IDS)
                ids[n++] = h.id;
            all++;
            if (!read(rctx, entry + plan->offset[3], &entry, 8))
                return NULL;
        }
    }
    if (steps > MAX_JOIN_SET)
        return NULL;         /* (a cycle, or a list changing under the walk) */
    qsort(ids, n, sizeof(ids[0]), by_value);
    char text[64 + JOIN_SET_IDS * 22];
    int at = all == 0   ? snprintf(text, sizeof(text), "no tasks")
             : all == 1 ? snprintf(text, sizeof(text), "waits for task")
             : all == n ? snprintf(text, sizeof(text), "waits for tasks")
                        : snprintf(text, sizeof(text), "waits for %zu tasks:", all);
    for (size_t i = 0; i < n && at > 0 && (size_t)at < sizeof(text); i++)
        at += snprintf(text + at, sizeof(text) - (size_t)at, "%s %llu", i ? "," : "", (unsigned long long)ids[i]);
    if (all > n && at > 0 && (size_t)at < sizeof(text))
        snprintf(text + at, sizeof(text) - (size_t)at, ", ...");
    return string_pool_intern(pool, text);
}

const char *future_leaf_detail(const struct tokio_layout *l, struct string_pool *pool, elf_memory_reader read,
                               void *rctx, const struct leaf_plan *plan, uint64_t addr)
{
    if (plan->strength == LEAF_NONE || !plan->fields_found)
        return NULL;
    const struct leaf_rule *r = &rules[plan->rule];
    char text[64];
    int64_t a, b;
    uint64_t header;
    struct task_header h;
    struct timespec now;
    switch (r->kind) {
    case SLEEP:
        if (!read_int(read, rctx, addr + plan->offset[0], plan->size[0], &a) ||
            !read_int(read, rctx, addr + plan->offset[1], plan->size[1], &b) || (now = l->now).tv_sec < 0)
            return NULL;
        double left = (double)(a - now.tv_sec) + (double)(b - now.tv_nsec) / 1e9;
        bool seconds = left >= 1.0 || left <= -1.0;
        /* one decimal, formatted as integers (printf's %f, once per sleeping task, was 5% of a dump's CPU) */
        long long tenths = llround((seconds ? left : left * 1e3) * 10);
        snprintf(text, sizeof(text), "deadline in %s%lld.%lld %s", tenths < 0 ? "-" : "", llabs(tenths) / 10,
                 llabs(tenths) % 10, seconds ? "s" : "ms");
        return string_pool_intern(pool, text);
    case JOIN:
        if (!read(rctx, addr + plan->offset[0], &header, 8) || !tokio_read_header(l, read, rctx, header, &h))
            return NULL;
        snprintf(text, sizeof(text), "waits for task %llu", (unsigned long long)h.id);
        return string_pool_intern(pool, text);
    case JOIN_SET:
        return join_set_detail(l, pool, read, rctx, plan, addr);
    case PLAIN:
        return string_pool_intern(pool, r->what);
    case SOCKET:
        if (!read_int(read, rctx, addr + plan->offset[0], plan->size[0], &a) || a < 0)
            return NULL;
        snprintf(text, sizeof(text), "fd %lld", (long long)a);
        return string_pool_intern(pool, text);
    }
    return NULL;
}
