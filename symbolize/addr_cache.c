/* addr_cache.c: the per-address cache in front of the resolver. A hit is one hash and a short linear
 * probe; nothing is allocated. Keys are the address and its kind (user, user return address, kernel). */
#include "symbolize/symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t addr, unsigned kind, size_t mask)
{
    uint64_t h = (addr ^ ((uint64_t)kind << 62)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & mask;
}

const struct sym_result *addr_cache_get(const struct addr_cache *c, uint64_t addr, enum addr_kind kind)
{
    if (!c->n_slots)
        return NULL;
    size_t mask = c->n_slots - 1;
    for (size_t j = slot_of(addr, kind, mask);; j = (j + 1) & mask) {
        const struct addr_cache_slot *s = &c->slots[j];
        if (!s->result)
            return NULL;
        if (s->addr == addr && s->kind == (unsigned)kind)
            return s->result;
    }
}

static void place(struct addr_cache_slot *slots, size_t mask, const struct addr_cache_slot *e)
{
    size_t j = slot_of(e->addr, e->kind, mask);
    while (slots[j].result)
        j = (j + 1) & mask;
    slots[j] = *e;
}

static int grow(struct addr_cache *c)
{
    size_t n = c->n_slots ? c->n_slots * 2 : 4096;
    struct addr_cache_slot *slots = calloc(n, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < c->n_slots; i++)
        if (c->slots[i].result)
            place(slots, n - 1, &c->slots[i]);
    free(c->slots);
    c->slots = slots;
    c->n_slots = n;
    return 0;
}

int addr_cache_put(struct addr_cache *c, uint64_t addr, enum addr_kind kind, const struct sym_result *r)
{
    if ((c->n_used + 1) * 2 > c->n_slots && grow(c) != 0)
        return -1;
    struct addr_cache_slot e = { .addr = addr, .result = r, .kind = kind };
    place(c->slots, c->n_slots - 1, &e);
    c->n_used++;
    return 0;
}

void addr_cache_clear(struct addr_cache *c)
{
    if (c->slots)
        memset(c->slots, 0, c->n_slots * sizeof(*c->slots));
    c->n_used = 0;
}

void addr_cache_free(struct addr_cache *c)
{
    free(c->slots);
    memset(c, 0, sizeof(*c));
}
