/* profile.c: the aggregated profile: interned frame names and a prefix tree of stacks with counts.
 * Adding a stack walks the tree from the root, one hash lookup per frame keyed by (parent node, frame id);
 * memory grows with distinct frames and distinct stack prefixes, never with the number of samples. */
#include "flamegraph/flamegraph.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64u * 1024u)
#define LAST_PATH_MAX 512u

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
};

struct frame_entry {
    const char *name;
    uint32_t len;
    uint32_t hash;
};

struct profile {
    /* interned names */
    struct arena_chunk *chunks;
    struct frame_entry *frames;
    size_t n_frames, cap_frames;
    uint32_t *frame_slots;          /* open addressing: frame id + 1, 0 = empty */
    size_t frame_slot_mask;
    /* stack tree */
    struct profile_node *nodes;
    size_t n_nodes, cap_nodes;
    uint32_t *child_slots;          /* open addressing over (parent, frame): node index + 1, 0 = empty */
    size_t child_slot_mask;
    size_t distinct_stacks;
    bool totals_stale;              /* node totals are summed from self counts on demand */
    /* the path of the stack added last: consecutive stacks share prefixes (sorted input, one thread's
     * samples), which then need no lookups */
    uint32_t last_frames[LAST_PATH_MAX];
    uint32_t last_nodes[LAST_PATH_MAX];
    size_t last_depth;
};

/* A word at a time: frame names are long (Rust paths), and this runs for every frame of every stack. */
static uint32_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, len - i);
    h = (h ^ tail) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return (uint32_t)h;
}

static uint32_t hash_pair(uint32_t parent, uint32_t frame)
{
    uint64_t x = ((uint64_t)parent << 32) | frame;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

static char *arena_copy(struct profile *p, const char *s, size_t len)
{
    struct arena_chunk *c = p->chunks;
    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
        c = malloc(sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->next = p->chunks;
        c->used = 0;
        c->cap = cap;
        p->chunks = c;
    }
    char *dst = c->data + c->used;
    memcpy(dst, s, len);
    dst[len] = '\0';
    c->used += len + 1;
    return dst;
}

static int add_node(struct profile *p, uint32_t parent, uint32_t frame)
{
    if (p->n_nodes == p->cap_nodes) {
        size_t cap = p->cap_nodes ? p->cap_nodes * 2 : 1024;
        struct profile_node *v = realloc(p->nodes, cap * sizeof(*v));
        if (!v)
            return -1;
        p->nodes = v;
        p->cap_nodes = cap;
    }
    struct profile_node *n = &p->nodes[p->n_nodes];
    n->frame = frame;
    n->parent = parent;
    n->first_child = PROFILE_NO_NODE;
    n->next_sibling = PROFILE_NO_NODE;
    n->total = 0;
    n->self = 0;
    if (parent != PROFILE_NO_NODE) {
        n->next_sibling = p->nodes[parent].first_child;
        p->nodes[parent].first_child = (uint32_t)p->n_nodes;
    }
    p->n_nodes++;
    return 0;
}

struct profile *profile_new(void)
{
    struct profile *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->frame_slot_mask = 1023;
    p->frame_slots = calloc(p->frame_slot_mask + 1, sizeof(uint32_t));
    p->child_slot_mask = 4095;
    p->child_slots = calloc(p->child_slot_mask + 1, sizeof(uint32_t));
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
        free(p->chunks);
        p->chunks = next;
    }
    free(p->frames);
    free(p->frame_slots);
    free(p->nodes);
    free(p->child_slots);
    free(p);
}

static int grow_frame_slots(struct profile *p)
{
    size_t mask = p->frame_slot_mask * 2 + 1;
    uint32_t *slots = calloc(mask + 1, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (size_t id = 0; id < p->n_frames; id++) {
        size_t i = p->frames[id].hash & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint32_t)id + 1;
    }
    free(p->frame_slots);
    p->frame_slots = slots;
    p->frame_slot_mask = mask;
    return 0;
}

uint32_t profile_intern(struct profile *p, const char *name, size_t len)
{
    if (len > UINT32_MAX / 2)
        return PROFILE_NO_FRAME;
    uint32_t h = hash_bytes(name, len);
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
        struct frame_entry *v = realloc(p->frames, cap * sizeof(*v));
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
    if (p->n_frames * 2 > p->frame_slot_mask && grow_frame_slots(p) != 0)
        return PROFILE_NO_FRAME;
    return id;
}

const char *profile_frame_name(const struct profile *p, uint32_t frame)
{
    return frame < p->n_frames ? p->frames[frame].name : "";
}

size_t profile_frame_count(const struct profile *p)
{
    return p->n_frames;
}

static int grow_child_slots(struct profile *p)
{
    size_t mask = p->child_slot_mask * 2 + 1;
    uint32_t *slots = calloc(mask + 1, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (size_t n = 1; n < p->n_nodes; n++) {
        size_t i = hash_pair(p->nodes[n].parent, p->nodes[n].frame) & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint32_t)n + 1;
    }
    free(p->child_slots);
    p->child_slots = slots;
    p->child_slot_mask = mask;
    return 0;
}

/* The child of parent for frame, created when missing. Returns the node index or PROFILE_NO_NODE. */
static uint32_t child_of(struct profile *p, uint32_t parent, uint32_t frame)
{
    size_t i = hash_pair(parent, frame) & p->child_slot_mask;
    for (uint32_t slot; (slot = p->child_slots[i]) != 0; i = (i + 1) & p->child_slot_mask) {
        const struct profile_node *n = &p->nodes[slot - 1];
        if (n->parent == parent && n->frame == frame)
            return slot - 1;
    }
    if (p->n_nodes >= PROFILE_NO_NODE - 1 || add_node(p, parent, frame) != 0)
        return PROFILE_NO_NODE;
    uint32_t idx = (uint32_t)p->n_nodes - 1;
    p->child_slots[i] = idx + 1;
    if (p->n_nodes * 2 > p->child_slot_mask && grow_child_slots(p) != 0)
        return PROFILE_NO_NODE;
    return idx;
}

int profile_add_ids(struct profile *p, const uint32_t *frames, size_t n, uint64_t count)
{
    uint32_t node = 0;
    size_t i = 0;
    /* the prefix shared with the last stack added is already known */
    while (i < n && i < p->last_depth && frames[i] == p->last_frames[i])
        node = p->last_nodes[i++];
    /* Find or create the rest of the path, then count, so a failure leaves counts consistent. */
    for (; i < n; i++) {
        if (frames[i] >= p->n_frames) {
            p->last_depth = 0;
            return -1;
        }
        node = child_of(p, node, frames[i]);
        if (node == PROFILE_NO_NODE) {
            p->last_depth = 0;
            return -1;
        }
        if (i < LAST_PATH_MAX) {
            p->last_frames[i] = frames[i];
            p->last_nodes[i] = node;
        }
    }
    p->last_depth = n < LAST_PATH_MAX ? n : LAST_PATH_MAX;
    if (p->nodes[node].self == 0 && n > 0)
        p->distinct_stacks++;
    p->nodes[node].self += count;
    p->totals_stale = true;         /* totals are summed once when read, not per stack added */
    return 0;
}

/* Sum totals from self counts: children always come after their parent in the node array, so one pass
 * from the last node to the first adds each finished subtree into its parent. The totals are a cache of
 * the self counts, so this is allowed on a const profile. */
static void refresh_totals(const struct profile *cp)
{
    struct profile *p = (struct profile *)cp;
    if (!p->totals_stale)
        return;
    for (size_t i = 0; i < p->n_nodes; i++)
        p->nodes[i].total = p->nodes[i].self;
    for (size_t i = p->n_nodes; i-- > 1;)
        p->nodes[p->nodes[i].parent].total += p->nodes[i].total;
    p->totals_stale = false;
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

const struct profile_node *profile_nodes(const struct profile *p, size_t *n)
{
    refresh_totals(p);
    *n = p->n_nodes;
    return p->nodes;
}

uint64_t profile_total(const struct profile *p)
{
    refresh_totals(p);
    return p->nodes[0].total;
}

size_t profile_distinct_stacks(const struct profile *p)
{
    return p->distinct_stacks;
}
