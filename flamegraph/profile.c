/* SPDX-License-Identifier: GPL-3.0-or-later */
/* profile.c: the aggregated profile: interned frame names and a prefix tree of stacks with counts.
 * Adding a stack walks the tree from the root, one hash lookup per frame keyed by (parent node, frame id);
 * memory grows with distinct frames and distinct stack prefixes, never with the number of samples. Batches
 * of names and of stacks (the folded reader's) are looked up together so their cache misses overlap; node
 * totals are derived when the nodes are read. */
#include "flamegraph/profile_internal.h"

#include "base/intern_table.h"
#include "base/vec.h"
#include "flamegraph/big_alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Name chunks double from ARENA_FIRST to ARENA_LAST bytes (header included): a small profile stays small, a
 * big one's names fill a few mappings of ARENA_LAST (big_alloc, filled in order). */
#define ARENA_FIRST (64u * 1024u)
#define ARENA_LAST (2u * 1024u * 1024u)
/* Chunks up to here come from malloc; bigger ones are big_alloc's mappings, whole multiples of 2 MiB (a 512 KiB
 * or 1 MiB chunk would take 2 MiB of address space): after this size the chunks are ARENA_LAST at once. */
#define ARENA_SMALL_MAX (256u * 1024u)
#define LAST_PATH_MAX 512u

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    size_t bytes;                   /* allocated, header included (for big_free) */
    char data[];
};

struct frame_entry {
    const char *name;
    uint32_t len;
    uint32_t hash;
};

/* A slot of the child table: the key (parent node, frame) and the child's node index + 1 (0 = empty). With
 * the key in the slot a lookup reads no node: one cache miss per frame of a stack, not two. */
struct child_slot {
    uint32_t parent;
    uint32_t frame;
    uint32_t node;
};

/* The node array faulted in by another thread ahead of the one adding stacks (profile_prefault): the lock is
 * held while the array moves or grows (nodes, cap_nodes) and while that thread faults part of it in. */
struct node_prefault {
    pthread_mutex_t lock;
    bool lock_made;
    size_t done;                    /* bytes from the array's start faulted in */
    _Atomic size_t filled;          /* bytes of it filled, as of the last batch added */
    bool unable;                    /* the kernel cannot: not tried again */
};

struct profile {
    /* interned names */
    struct arena_chunk *chunks;
    struct frame_entry *frames;
    size_t n_frames, cap_frames;
    uint32_t *frame_slots;          /* open addressing: frame id + 1, 0 = empty */
    size_t frame_slot_mask;
    /* the reader interns on one thread while another adds to the tree (profile_add_batch): keep the two
     * halves on different cache lines */
    char apart[64];
    /* stack tree */
    struct profile_node *nodes;
    size_t n_nodes, cap_nodes;
    struct child_slot *child_slots; /* open addressing over (parent, frame) */
    size_t child_slot_mask;
    size_t distinct_stacks;
    bool derived_stale;             /* totals (summed from self counts) are made when the nodes are read,
                                       not per stack added */
    size_t derived_nodes;           /* nodes whose totals the last derive set (the rest are as add_node
                                       made them: total 0) */
    /* the path of the stack added last: consecutive stacks share prefixes (sorted input, one thread's
     * samples), which then need no lookups */
    uint32_t last_frames[LAST_PATH_MAX];
    uint32_t last_nodes[LAST_PATH_MAX];
    size_t last_depth;
    uint32_t last_leaf;             /* node of the stack added last (PROFILE_NO_NODE: the add failed) */
    /* scratch of profile_add_batch, one entry per stack of a batch */
    uint32_t *batch_node, *batch_shared, *batch_active;
    uint64_t *batch_hash;
    size_t batch_cap;
    char apart_prefault[64];
    struct node_prefault prefault;
};

/* A name's hash in the name table: the one interner's (base/intern_table), which the folded reader also
 * computes while it looks for the end of each frame (profile_intern_batch takes those). */
static uint32_t hash_bytes(const char *s, size_t len)
{
    return (uint32_t)intern_hash_bytes(INTERN_HASH_SEED, s, len);
}

static uint64_t hash_pair(uint32_t parent, uint32_t frame)
{
    uint64_t x = ((uint64_t)parent << 32) | frame;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static char *arena_copy(struct profile *p, const char *s, size_t len)
{
    struct arena_chunk *c = p->chunks;
    if (!c || c->cap - c->used < len + 1) {
        size_t bytes = !c ? ARENA_FIRST : c->bytes * 2 <= ARENA_SMALL_MAX ? c->bytes * 2 : ARENA_LAST;
        if (len + 1 > bytes - sizeof(*c))
            bytes = sizeof(*c) + len + 1;
        struct arena_chunk *fresh = big_alloc(bytes, BIG_IN_ORDER);
        if (!fresh)
            return NULL;
        fresh->next = c;
        fresh->used = 0;
        fresh->cap = bytes - sizeof(*c);
        fresh->bytes = bytes;
        p->chunks = c = fresh;
    }
    char *dst = c->data + c->used;
    memcpy(dst, s, len);
    dst[len] = '\0';
    c->used += len + 1;
    return dst;
}

/* Make the node array hold cap nodes (more than it does), under the prefault lock: another thread may be
 * faulting it in. */
static int grow_nodes(struct profile *p, size_t cap)
{
    if (p->prefault.lock_made)
        pthread_mutex_lock(&p->prefault.lock);
    struct profile_node *v = big_realloc(p->nodes, p->cap_nodes * sizeof(*v), cap * sizeof(*v), BIG_IN_ORDER);
    if (v) {
        p->nodes = v;
        p->cap_nodes = cap;
    }
    if (p->prefault.lock_made)
        pthread_mutex_unlock(&p->prefault.lock);
    return v ? 0 : -1;
}

static int add_node(struct profile *p, uint32_t parent, uint32_t frame)
{
    if (p->n_nodes == p->cap_nodes && grow_nodes(p, p->cap_nodes ? p->cap_nodes * 2 : 1024) != 0)
        return -1;
    struct profile_node *n = &p->nodes[p->n_nodes];
    n->frame = frame;
    n->parent = parent;
    n->total = 0;
    n->self = 0;
    p->n_nodes++;
    p->derived_stale = true;
    return 0;
}

struct profile *profile_new(void)
{
    struct profile *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->prefault.lock_made = pthread_mutex_init(&p->prefault.lock, NULL) == 0;
    p->frame_slot_mask = 1023;
    p->frame_slots = big_alloc((p->frame_slot_mask + 1) * sizeof(uint32_t), BIG_ALL_OVER);
    p->child_slot_mask = 4095;
    p->child_slots = big_alloc((p->child_slot_mask + 1) * sizeof(*p->child_slots), BIG_ALL_OVER);
    if (!p->frame_slots || !p->child_slots || add_node(p, PROFILE_NO_NODE, PROFILE_NO_FRAME) != 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

void profile_free(struct profile *p)
{
    if (!p)
        return;
    while (p->chunks) {
        struct arena_chunk *next = p->chunks->next;
        big_free(p->chunks, p->chunks->bytes);
        p->chunks = next;
    }
    big_free(p->frames, p->cap_frames * sizeof(*p->frames));
    big_free(p->frame_slots, (p->frame_slot_mask + 1) * sizeof(*p->frame_slots));
    big_free(p->nodes, p->cap_nodes * sizeof(*p->nodes));
    big_free(p->child_slots, (p->child_slot_mask + 1) * sizeof(*p->child_slots));
    free(p->batch_node);
    free(p->batch_hash);
    free(p->batch_shared);
    free(p->batch_active);
    if (p->prefault.lock_made)
        pthread_mutex_destroy(&p->prefault.lock);
    free(p);
}

/* Rehash the names into a table of mask + 1 slots (bigger). */
static int grow_frame_slots(struct profile *p, size_t mask)
{
    uint32_t *slots = big_alloc((mask + 1) * sizeof(uint32_t), BIG_ALL_OVER);
    if (!slots)
        return -1;
    for (size_t id = 0; id < p->n_frames; id++) {
        size_t i = p->frames[id].hash & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint32_t)id + 1;
    }
    big_free(p->frame_slots, (p->frame_slot_mask + 1) * sizeof(*p->frame_slots));
    p->frame_slots = slots;
    p->frame_slot_mask = mask;
    return 0;
}

/* Look name up (its hash h), adding it when missing. */
static uint32_t intern_hashed(struct profile *p, const char *name, size_t len, uint32_t h)
{
    size_t i = h & p->frame_slot_mask;
    for (uint32_t slot; (slot = p->frame_slots[i]) != 0; i = (i + 1) & p->frame_slot_mask) {
        const struct frame_entry *e = &p->frames[slot - 1];
        if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0)
            return slot - 1;
    }
    if (p->n_frames >= PROFILE_NO_FRAME - 1)
        return PROFILE_NO_FRAME;
    if (p->n_frames == p->cap_frames) {
        size_t cap = p->cap_frames ? p->cap_frames * 2 : 256;
        struct frame_entry *v = big_realloc(p->frames, p->cap_frames * sizeof(*v), cap * sizeof(*v), BIG_IN_ORDER);
        if (!v)
            return PROFILE_NO_FRAME;
        p->frames = v;
        p->cap_frames = cap;
    }
    char *copy = arena_copy(p, name, len);
    if (!copy)
        return PROFILE_NO_FRAME;
    uint32_t id = (uint32_t)p->n_frames++;
    p->frames[id] = (struct frame_entry){ copy, (uint32_t)len, h };
    p->frame_slots[i] = id + 1;
    if (p->n_frames * 2 > p->frame_slot_mask && grow_frame_slots(p, p->frame_slot_mask * 2 + 1) != 0)
        return PROFILE_NO_FRAME;
    return id;
}

/* The name table again after profile_trim: rebuilt from the names' stored hashes. */
static int restore_frame_slots(struct profile *p)
{
    return p->frame_slots || grow_frame_slots(p, p->frame_slot_mask) == 0 ? 0 : -1;
}

uint32_t profile_intern(struct profile *p, const char *name, size_t len)
{
    if (len > UINT32_MAX / 2 || restore_frame_slots(p) != 0)
        return PROFILE_NO_FRAME;
    return intern_hashed(p, name, len, hash_bytes(name, len));
}

/* Three passes that only prefetch (the slot, then the entry it names, then that entry's text), so the
 * lookups of the whole batch wait for memory together; then the plain lookups, which find all of it in
 * cache. The prefetch passes change nothing: a name added by an earlier lookup of the batch is found. */
int profile_intern_batch(struct profile *p, const char *const *names, const uint32_t *lens,
                         const uint32_t *hashes, size_t n, uint32_t *ids)
{
    if (restore_frame_slots(p) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > UINT32_MAX / 2)
            return -1;
        ids[i] = hashes ? hashes[i] : hash_bytes(names[i], lens[i]);
        __builtin_prefetch(&p->frame_slots[ids[i] & p->frame_slot_mask]);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t slot = p->frame_slots[ids[i] & p->frame_slot_mask];
        if (slot)
            __builtin_prefetch(&p->frames[slot - 1]);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t slot = p->frame_slots[ids[i] & p->frame_slot_mask];
        if (slot)
            __builtin_prefetch(p->frames[slot - 1].name);
    }
    for (size_t i = 0; i < n; i++) {
        ids[i] = intern_hashed(p, names[i], lens[i], ids[i]);
        if (ids[i] == PROFILE_NO_FRAME)
            return -1;
    }
    return 0;
}

const char *profile_frame_name(const struct profile *p, uint32_t frame)
{
    return frame < p->n_frames ? p->frames[frame].name : "";
}

size_t profile_frame_count(const struct profile *p)
{
    return p->n_frames;
}

/* Rehash into a table of mask + 1 slots (bigger). Slots are written in random order, so each key's slot is
 * prefetched REHASH_AHEAD keys before it is written. */
#define REHASH_AHEAD 16u

struct rehash_pending {
    struct child_slot slot;
    uint64_t hash;
};

static void rehash_put(struct child_slot *slots, size_t mask, const struct rehash_pending *r)
{
    size_t i = r->hash & mask;
    while (slots[i].node)
        i = (i + 1) & mask;
    slots[i] = r->slot;
}

static int grow_child_slots(struct profile *p, size_t mask)
{
    struct child_slot *slots = big_alloc((mask + 1) * sizeof(*slots), BIG_ALL_OVER);
    if (!slots)
        return -1;
    struct rehash_pending ring[REHASH_AHEAD];
    size_t head = 0, queued = 0;
    for (size_t from = 0; from <= p->child_slot_mask; from++) {
        struct child_slot old = p->child_slots[from];
        if (!old.node)
            continue;
        if (queued == REHASH_AHEAD) {
            rehash_put(slots, mask, &ring[head]);
            head = (head + 1) % REHASH_AHEAD;
            queued--;
        }
        uint64_t h = hash_pair(old.parent, old.frame);
        __builtin_prefetch(&slots[h & mask], 1);
        ring[(head + queued++) % REHASH_AHEAD] = (struct rehash_pending){ old, h };
    }
    for (; queued > 0; queued--, head = (head + 1) % REHASH_AHEAD)
        rehash_put(slots, mask, &ring[head]);
    big_free(p->child_slots, (p->child_slot_mask + 1) * sizeof(*p->child_slots));
    p->child_slots = slots;
    p->child_slot_mask = mask;
    return 0;
}

/* The child table again after profile_trim: every node but the root put back under its key. */
static int restore_child_slots(struct profile *p)
{
    if (p->child_slots)
        return 0;
    size_t mask = p->child_slot_mask;
    struct child_slot *slots = big_alloc((mask + 1) * sizeof(*slots), BIG_ALL_OVER);
    if (!slots)
        return -1;
    for (size_t v = 1; v < p->n_nodes; v++) {
        const struct profile_node *n = &p->nodes[v];
        size_t i = hash_pair(n->parent, n->frame) & mask;
        while (slots[i].node)
            i = (i + 1) & mask;
        slots[i] = (struct child_slot){ n->parent, n->frame, (uint32_t)v + 1 };
    }
    p->child_slots = slots;
    return 0;
}

void profile_trim(struct profile *p)
{
    big_free(p->child_slots, (p->child_slot_mask + 1) * sizeof(*p->child_slots));
    p->child_slots = NULL;
    big_free(p->frame_slots, (p->frame_slot_mask + 1) * sizeof(*p->frame_slots));
    p->frame_slots = NULL;
}

int profile_reserve(struct profile *p, size_t nodes, size_t names)
{
    if (nodes > PROFILE_NO_NODE - 1 || names > PROFILE_NO_FRAME - 1 || restore_child_slots(p) != 0 ||
        restore_frame_slots(p) != 0)
        return -1;
    size_t mask = p->child_slot_mask;
    while (nodes * 4 > mask * 3)
        mask = mask * 2 + 1;
    if (mask != p->child_slot_mask && grow_child_slots(p, mask) != 0)
        return -1;
    mask = p->frame_slot_mask;
    while (names * 2 > mask)
        mask = mask * 2 + 1;
    if (mask != p->frame_slot_mask && grow_frame_slots(p, mask) != 0)
        return -1;
    if (names > p->cap_frames) {
        struct frame_entry *v = big_realloc(p->frames, p->cap_frames * sizeof(*v), names * sizeof(*v), BIG_IN_ORDER);
        if (!v)
            return -1;
        p->frames = v;
        p->cap_frames = names;
    }
    if (nodes > p->cap_nodes && grow_nodes(p, nodes) != 0)
        return -1;
    return 0;
}

/* The child of parent for frame (h = hash_pair(parent, frame)), created when missing. Returns the node index
 * or PROFILE_NO_NODE. */
static uint32_t child_of_hashed(struct profile *p, uint32_t parent, uint32_t frame, uint64_t h)
{
    size_t i = h & p->child_slot_mask;
    for (struct child_slot slot; (slot = p->child_slots[i]).node != 0; i = (i + 1) & p->child_slot_mask) {
        if (slot.parent == parent && slot.frame == frame)
            return slot.node - 1;
    }
    if (p->n_nodes >= PROFILE_NO_NODE - 1 || add_node(p, parent, frame) != 0)
        return PROFILE_NO_NODE;
    uint32_t idx = (uint32_t)p->n_nodes - 1;
    p->child_slots[i] = (struct child_slot){ parent, frame, idx + 1 };
    if (p->n_nodes * 4 > p->child_slot_mask * 3 && grow_child_slots(p, p->child_slot_mask * 2 + 1) != 0)
        return PROFILE_NO_NODE;
    return idx;
}

int reserve_parallel(size_t *cap, size_t need, const struct parallel_array *arrays, size_t n)
{
    if (need <= *cap)
        return 0;
    size_t new_cap = *cap;
    for (size_t i = 0; i < n; i++) {
        new_cap = *cap;
        if (vec_reserve_raw(arrays[i].v, &new_cap, arrays[i].elem_size, need) != 0)
            return -1;
    }
    *cap = new_cap;
    return 0;
}

static int reserve_batch(struct profile *p, size_t n)
{
    const struct parallel_array bufs[] = {
        PARALLEL_ARRAY(p->batch_node), PARALLEL_ARRAY(p->batch_shared), PARALLEL_ARRAY(p->batch_active),
        PARALLEL_ARRAY(p->batch_hash),
    };
    return reserve_parallel(&p->batch_cap, n, bufs, sizeof(bufs) / sizeof(bufs[0]));
}

/* The stacks' paths are found one depth at a time across the batch: per depth one pass hashes each stack's
 * (node, next frame) and prefetches its slot, and one does the plain lookups (creating what is missing),
 * so the cache misses of all the stacks overlap. A stack's prefix shared with the stack before it is not
 * looked up again. */
#define ADD_AHEAD 24u

/* A lookup's first slot and the cache line after it: a probe runs on past the first line's end in about
 * half the lookups (12-byte slots, 2-5 probed at two-thirds load). Prefetching past the table's end is
 * harmless (a prefetch never faults). */
static void prefetch_slots(const struct profile *p, uint64_t hash)
{
    const char *slot = (const char *)&p->child_slots[hash & p->child_slot_mask];
    __builtin_prefetch(slot);
    __builtin_prefetch(slot + 64);
}

int profile_add_batch(struct profile *p, const uint32_t *frames, const uint32_t *start, const uint32_t *len,
                      const uint64_t *count, size_t n, size_t known_frames)
{
    if (n == 0)
        return 0;
    p->last_leaf = PROFILE_NO_NODE;
    if (restore_child_slots(p) != 0 || reserve_batch(p, n) != 0) {
        p->last_depth = 0;
        return -1;
    }
    uint32_t *node = p->batch_node, *shared = p->batch_shared, *active = p->batch_active;
    uint64_t *hash = p->batch_hash;
    size_t n_active = 0;
    for (size_t k = 0; k < n; k++) {
        const uint32_t *f = frames + start[k];
        for (size_t d = 0; d < len[k]; d++) {
            if (f[d] >= known_frames) {
                p->last_depth = 0;
                return -1;
            }
        }
        size_t s = 0;
        if (k == 0) {
            while (s < len[0] && s < p->last_depth && f[s] == p->last_frames[s])
                s++;
        } else {
            const uint32_t *g = frames + start[k - 1];
            size_t limit = len[k] < len[k - 1] ? len[k] : len[k - 1];
            while (s < limit && f[s] == g[s])
                s++;
        }
        shared[k] = (uint32_t)s;
        node[k] = 0;
        if (len[k] > 0)
            active[n_active++] = (uint32_t)k;
    }
    for (size_t d = 0; n_active > 0; d++) {
        for (size_t a = 0; a < n_active; a++) {
            uint32_t k = active[a];
            if (d >= shared[k]) {
                hash[k] = hash_pair(node[k], frames[start[k] + d]);
                if (a < ADD_AHEAD)
                    prefetch_slots(p, hash[k]);
            }
        }
        size_t kept = 0;
        for (size_t a = 0; a < n_active; a++) {
            uint32_t k = active[a];
            if (a + ADD_AHEAD < n_active) {
                uint32_t ahead = active[a + ADD_AHEAD];
                if (d >= shared[ahead])
                    prefetch_slots(p, hash[ahead]);
            }
            uint32_t frame = frames[start[k] + d];
            uint32_t v;
            if (d < shared[k])
                v = k > 0 ? node[k - 1] : p->last_nodes[d];
            else
                v = child_of_hashed(p, node[k], frame, hash[k]);
            if (v == PROFILE_NO_NODE) {
                p->last_depth = 0;
                return -1;
            }
            node[k] = v;
            if (k == n - 1 && d < LAST_PATH_MAX) {
                p->last_frames[d] = frame;
                p->last_nodes[d] = v;
            }
            if (d + 1 < len[k])
                active[kept++] = k;
        }
        n_active = kept;
    }
    p->last_depth = len[n - 1] < LAST_PATH_MAX ? len[n - 1] : LAST_PATH_MAX;
    p->last_leaf = len[n - 1] ? node[n - 1] : 0;
    for (size_t k = 0; k < n; k++) {
        struct profile_node *leaf = &p->nodes[len[k] ? node[k] : 0];
        if (leaf->self == 0 && len[k] > 0)
            p->distinct_stacks++;
        leaf->self += count[k];
    }
    p->derived_stale = true;
    atomic_store_explicit(&p->prefault.filled, p->n_nodes * sizeof(*p->nodes), memory_order_relaxed);
    return 0;
}

int profile_prefault(struct profile *p, size_t ahead, size_t step)
{
    if (!p->prefault.lock_made)
        return 0;
    size_t filled = atomic_load_explicit(&p->prefault.filled, memory_order_relaxed);
    int rc = 0;
    pthread_mutex_lock(&p->prefault.lock);
    size_t bytes = p->cap_nodes * sizeof(*p->nodes);
    size_t from = p->prefault.done > filled ? p->prefault.done : filled;
    size_t to = ahead < bytes - filled ? filled + ahead : bytes;
    if (!p->prefault.unable && from < to) {
        size_t len = to - from < step ? to - from : step;
        rc = big_populate(p->nodes, bytes, from, len);
        if (rc > 0)
            p->prefault.done = from + len;
        else if (rc < 0)
            p->prefault.unable = true;
    }
    pthread_mutex_unlock(&p->prefault.lock);
    return rc > 0;
}

/* One stack is a batch of one. */
int profile_add_ids(struct profile *p, const uint32_t *frames, size_t n, uint64_t count)
{
    if (n > UINT32_MAX) {
        p->last_depth = 0;
        return -1;
    }
    uint32_t start = 0, len = (uint32_t)n;
    return profile_add_batch(p, frames, &start, &len, &count, 1, p->n_frames);
}

/* Sum totals from self counts: children always come after their parent in the node array, so one pass from
 * the last node to the first adds each finished subtree into its parent. A node starts with total 0
 * (add_node), so only the nodes an earlier pass summed need clearing first: the usual single derive is one
 * pass over the nodes, not two. Totals are a cache of the tree, so this is allowed on a const profile. */
static void refresh_derived(const struct profile *cp)
{
    struct profile *p = (struct profile *)cp;
    if (!p->derived_stale)
        return;
    struct profile_node *nodes = p->nodes;
    for (size_t i = 0; i < p->derived_nodes; i++)
        nodes[i].total = 0;
    for (size_t i = p->n_nodes; i-- > 1;) {
        nodes[i].total += nodes[i].self;
        nodes[nodes[i].parent].total += nodes[i].total;
    }
    nodes[0].total += nodes[0].self;
    p->derived_nodes = p->n_nodes;
    p->derived_stale = false;
}

int profile_add(struct profile *p, const char *const *names, size_t n, uint64_t count)
{
    uint32_t stack_ids[512];
    uint32_t *ids = n <= 512 ? stack_ids : malloc(n * sizeof(*ids));
    if (!ids)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        ids[i] = profile_intern(p, names[i], strlen(names[i]));
        if (ids[i] == PROFILE_NO_FRAME)
            rc = -1;
    }
    if (rc == 0)
        rc = profile_add_ids(p, ids, n, count);
    if (ids != stack_ids)
        free(ids);
    return rc;
}

uint32_t profile_last_leaf(const struct profile *p)
{
    return p->last_leaf;
}

const struct profile_node *profile_nodes(const struct profile *p, size_t *n)
{
    refresh_derived(p);
    *n = p->n_nodes;
    return p->nodes;
}

uint64_t profile_total(const struct profile *p)
{
    refresh_derived(p);
    return p->nodes[0].total;
}

size_t profile_distinct_stacks(const struct profile *p)
{
    return p->distinct_stacks;
}
