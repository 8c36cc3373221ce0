/* SPDX-License-Identifier: GPL-3.0-or-later */
/* address_stacks.c: a recording's stacks as addresses for pprof. Per sample: each address's symbolize
 * result (a cache hit after its first sight), then its site (one hash lookup; the result id tells a site
 * made under a mapping since replaced), then the stack of location ids into the address profile (found by
 * content, stored once). A new site makes its location once: the mapping with its build id, the inline
 * chain as lines. Nothing is allocated per frame. */
#include "cli/address_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/sample_frames.h"

#define RETURN_ADDRESS_BIT (1ULL << 63)   /* user addresses stay below it */

int address_stacks_init(struct address_stacks *a, struct symbolizer *symbolizer, const struct profile *names)
{
    memset(a, 0, sizeof(*a));
    a->symbolizer = symbolizer;
    a->names = names;
    if (!(a->profile = address_profile_new()) || u64_map_init(&a->user_sites, 4096) != 0 ||
        u64_map_init(&a->kernel_sites, 256) != 0 || u64_map_init(&a->name_locations, 64) != 0) {
        address_stacks_free(a);
        return -1;
    }
    return 0;
}

void address_stacks_free(struct address_stacks *a)
{
    address_profile_free(a->profile);
    u64_map_free(&a->user_sites);
    u64_map_free(&a->kernel_sites);
    u64_map_free(&a->name_locations);
    vec_free(&a->sites);
    a->profile = NULL;
}

/* The location of addr resolved as r: its mapping and its inline chain. 0 when out of memory. */
static uint32_t make_location(struct address_stacks *a, uint64_t addr, bool return_address, bool kernel,
                              const struct sym_result *r)
{
    uint32_t mapping = 0;
    struct sym_mapping m;
    if (!kernel && symbolize_user_mapping(a->symbolizer, addr, return_address, &m)) {
        struct address_mapping am = { .start = m.start, .limit = m.end, .offset = m.pgoff, .file = m.path,
                                      .build_id = m.build_id };
        if (!(mapping = address_profile_mapping(a->profile, m.generation, &am)))
            return 0;
    }
    struct address_line lines[64];
    char object_name[300];
    size_t n = r->n < 64 ? r->n : 64;
    for (size_t i = 0; i < n; i++) {
        const struct sym_frame *f = &r->frames[i];
        const char *name = sample_frame_name(r, f, object_name, sizeof(object_name));
        lines[i] = (struct address_line){ .function = name, .system_name = name == f->name ? f->system_name : name,
                                          .file = f->path, .line = f->line, .start_line = f->start_line };
    }
    if (n == 0) {
        const char *name = sample_frame_name(r, NULL, object_name, sizeof(object_name));
        lines[n++] = (struct address_line){ .function = name };
    }
    /* A return address is the instruction after the call; the location is the call's, so a caller's frame is
     * given inside its call instruction (profile.proto allows it), and a leaf sampled right after a call
     * returned keeps an address of its own. */
    return address_profile_location(a->profile, return_address ? addr - 1 : addr, mapping, lines, n);
}

/* The location id of one address of a sample (0: out of memory). */
static uint32_t location_of(struct address_stacks *a, uint64_t addr, bool return_address, bool kernel)
{
    const struct sym_result *r = kernel ? symbolize_kernel(a->symbolizer, addr)
                                        : symbolize_user(a->symbolizer, addr, return_address);
    struct u64_map *map = kernel ? &a->kernel_sites : &a->user_sites;
    uint64_t key = return_address ? addr | RETURN_ADDRESS_BIT : addr;
    uint32_t first = 0, index;
    if (u64_map_get(map, key, &index)) {
        first = index + 1;
        for (uint32_t at = first; at; at = a->sites.v[at - 1].next)
            if (a->sites.v[at - 1].result == r->id)
                return a->sites.v[at - 1].location;
    }
    uint32_t location = make_location(a, addr, return_address, kernel, r);
    struct address_site *site = location && a->sites.n < UINT32_MAX ? vec_push(&a->sites) : NULL;
    if (!site)
        return 0;
    *site = (struct address_site){ .location = location, .result = r->id, .next = first };
    if (u64_map_put(map, key, (uint32_t)(a->sites.n - 1)) != 0)
        return 0;
    return location;
}

/* The root frame of the stack that ends at node: the child of the tree's root on its path. */
static uint32_t root_frame_of(const struct profile *names, uint32_t node)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(names, &n_nodes);
    if (node == PROFILE_NO_NODE || node == 0 || node >= n_nodes)
        return PROFILE_NO_FRAME;
    while (nodes[node].parent != 0)
        node = nodes[node].parent;
    return nodes[node].frame;
}

int address_stacks_add(struct address_stacks *a, const struct sampler_sample *s, uint32_t thread_root, uint32_t node)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_kernel && n < 2 * SAMPLER_MAX_FRAMES; i++)   /* leaf first: kernel, then user */
        if (!(a->locations[n++] = location_of(a, s->kernel_ips[i], false, true)))
            return -1;
    for (size_t i = 0; i < s->n_user && n < 2 * SAMPLER_MAX_FRAMES; i++)
        if (!(a->locations[n++] = location_of(a, s->user_ips[i], i > 0, false)))
            return -1;
    /* The root gives the labels (task_id only when the root shows it, --group-by task), so stacks do not
     * multiply by task ids; a sample held back keeps its id until its task's root is settled. */
    struct address_labels labels = { .thread = thread_root, .root = root_frame_of(a->names, node) };
    if (node == PROFILE_NO_NODE) {
        labels.task_id = s->task_id;
        labels.has_task_id = true;
    } else if (labels.root == PROFILE_NO_FRAME) {
        labels.root = thread_root;      /* no frame at all: under its thread */
    }
    return address_profile_add(a->profile, a->locations, n, &labels, 1);
}

uint32_t address_stacks_wait_key(struct address_stacks *a, const struct sampler_wait_stack *w, size_t first)
{
    size_t n = 0;
    for (size_t i = first; i < w->n_user && n < 2 * SAMPLER_MAX_FRAMES; i++)
        if (!(a->locations[n++] = location_of(a, w->user_ips[i], true, false)))
            return WAIT_NO_KEY;
    uint32_t part = address_profile_part(a->profile, a->locations, n);
    return part == UINT32_MAX ? WAIT_NO_KEY : part;
}

/* The location of a name without an address ("[suspended]", a task root), made once: *cache holds it. 0 when
 * out of memory. */
static uint32_t name_location(struct address_stacks *a, const char *name, uint32_t *cache)
{
    if (!*cache) {
        struct address_line line = { .function = name };
        *cache = address_profile_location(a->profile, 0, 0, &line, 1);
    }
    return *cache;
}

/* The location of a root frame of the profile of names (0: no memory). */
static uint32_t root_location(struct address_stacks *a, uint32_t frame)
{
    uint32_t location = 0;
    if (u64_map_get(&a->name_locations, frame, &location))
        return location;
    if (!name_location(a, profile_frame_name(a->names, frame), &location) ||
        u64_map_put(&a->name_locations, frame, location) != 0)
        return 0;
    return location;
}

int address_stacks_add_wait(struct address_stacks *a, const struct wait_site_time *t)
{
    size_t n_part = 0;
    const uint32_t *part = t->key == WAIT_NO_KEY ? NULL : address_profile_part_locations(a->profile, t->key, &n_part);
    size_t n = 1;
    if (part) {
        n_part = n_part < 2 * SAMPLER_MAX_FRAMES - 1 ? n_part : 2 * SAMPLER_MAX_FRAMES - 1;
        memcpy(a->locations + 1, part, n_part * sizeof(*part));
        n += n_part;
    } else if (!(a->locations[n++] = root_location(a, t->root))) {
        return -1;
    }
    struct address_labels labels = { .thread = PROFILE_NO_FRAME, .root = t->root };
    if (t->suspended_ns) {
        if (!(a->locations[0] = name_location(a, "[suspended]", &a->suspended_location)) ||
            address_profile_add_wait(a->profile, a->locations, n, &labels, t->suspended_ns) != 0)
            return -1;
    }
    if (t->runnable_ns) {
        if (!(a->locations[0] = name_location(a, "[runnable]", &a->runnable_location)) ||
            address_profile_add_wait(a->profile, a->locations, n, &labels, t->runnable_ns) != 0)
            return -1;
    }
    return 0;
}

/* The location of a frame of a profile of names: "NAME @ FILE:LINE" as function NAME at FILE:LINE, any other
 * name as a function of that name (0: no memory). */
static uint32_t named_location(struct address_stacks *a, const char *name)
{
    char function[4096], file[1024];
    struct address_line line = { .function = name };
    const char *at = strstr(name, " @ ");
    const char *colon = at ? strrchr(at, ':') : NULL;
    size_t end_of_line = await_point_macro_at(name, strlen(name));   /* (before a " (select!)") */
    if (at && colon && colon[1] && (size_t)(at - name) < sizeof(function) &&
        (size_t)(colon - at - 3) < sizeof(file)) {
        char *end;
        unsigned long number = strtoul(colon + 1, &end, 10);
        if ((!*end || end == name + end_of_line) && number > 0 && number <= UINT32_MAX) {
            snprintf(function, sizeof(function), "%.*s", (int)(at - name), name);
            snprintf(file, sizeof(file), "%.*s", (int)(colon - at - 3), at + 3);
            line = (struct address_line){ .function = function, .file = file, .line = (unsigned)number };
        }
    }
    return address_profile_location(a->profile, 0, 0, &line, 1);
}

int address_stacks_add_named_waits(struct address_stacks *a, struct profile *names, const struct profile *waits)
{
    size_t n_nodes;
    const struct profile_node *nodes = profile_nodes(waits, &n_nodes);
    struct u64_map locations;       /* frame of waits -> location */
    if (u64_map_init(&locations, 256) != 0)
        return -1;
    int rc = 0;
    for (uint32_t leaf = 1; leaf < n_nodes && rc == 0; leaf++) {
        if (!nodes[leaf].self)
            continue;
        size_t n = 0;
        uint32_t root = leaf;
        for (uint32_t at = leaf; at != 0 && n < 2 * SAMPLER_MAX_FRAMES; at = nodes[at].parent) {
            uint32_t frame = nodes[at].frame, location;
            if (!u64_map_get(&locations, frame, &location) &&
                (!(location = named_location(a, profile_frame_name(waits, frame))) ||
                 u64_map_put(&locations, frame, location) != 0)) {
                rc = -1;
                break;
            }
            a->locations[n++] = location;
            root = at;
        }
        const char *root_name = profile_frame_name(waits, nodes[root].frame);
        struct address_labels labels = { .thread = PROFILE_NO_FRAME,
                                         .root = profile_intern(names, root_name, strlen(root_name)) };
        if (rc == 0 && (labels.root == PROFILE_NO_FRAME ||
                        address_profile_add_wait(a->profile, a->locations, n, &labels, nodes[leaf].self * 1000) != 0))
            rc = -1;
    }
    u64_map_free(&locations);
    return rc;
}
