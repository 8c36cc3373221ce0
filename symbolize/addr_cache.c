/* SPDX-License-Identifier: GPL-3.0-or-later */
/* addr_cache.c: the one per-address cache of taskspy, in front of the resolver. A hit is one hash lookup
 * (base/u64_map) and a check that the entry was resolved in the mapping generation that holds the address
 * now, so a mapping replaced by another object (exec, dlclose + dlopen at the same address) misses. Keys
 * are the address and its kind (user, user return address, kernel). */
#include "symbolize/symbolize_internal.h"

#include <string.h>

#define RETURN_ADDRESS_BIT (1ULL << 63)   /* user addresses stay below it (x86-64: 47 bits) */

/* The key of an address in its map: user return addresses are told apart by the top bit. */
static uint64_t key_of(uint64_t addr, enum addr_kind kind)
{
    return kind == ADDR_USER_RETURN ? addr | RETURN_ADDRESS_BIT : addr;
}

const struct sym_result *addr_cache_get(const struct addr_cache *c, uint64_t addr, enum addr_kind kind,
                                        uint32_t generation)
{
    uint32_t idx;
    if (!u64_map_get(kind == ADDR_KERNEL ? &c->kernel : &c->user, key_of(addr, kind), &idx))
        return NULL;
    const struct addr_cache_entry *e = &c->entries.v[idx];
    return e->generation == generation ? e->result : NULL;
}

int addr_cache_put(struct addr_cache *c, uint64_t addr, enum addr_kind kind, uint32_t generation,
                   const struct sym_result *r)
{
    struct u64_map *map = kind == ADDR_KERNEL ? &c->kernel : &c->user;
    uint64_t key = key_of(addr, kind);
    uint32_t idx;
    /* a new entry, or a stale one (the address's mapping was replaced) */
    if (u64_map_index(map, key, &c->entries, &idx) < 0)
        return -1;
    c->entries.v[idx] = (struct addr_cache_entry){ r, generation };
    return 0;
}

void addr_cache_free(struct addr_cache *c)
{
    u64_map_free(&c->user);
    u64_map_free(&c->kernel);
    vec_free(&c->entries);
}
