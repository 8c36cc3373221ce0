/* SPDX-License-Identifier: GPL-3.0-or-later */
/* poll_returns.c: where runtime poll functions return, probed without uretprobes. A uretprobe replaces the
 * function's return address on the stack with a trampoline's, so a dwarf unwind of any sample taken inside
 * the poll stops there (the task's stacks lose their runtime frames and the boundary rule cannot see
 * Harness::poll). Instead the entry's BPF program reads the caller's return address at %rsp, and the reader
 * attaches a plain uprobe at each new one: the instruction after the call, an instruction boundary. Polls
 * before that probe exists have no end (as without poll times); a handful of call sites cover a runtime. */
#include "sampler/markers/markers_internal.h"

#include <stdio.h>

#include "sampler/target/proc_maps.h"

/* Return sites probed at most (each costs a uprobe; a runtime has one per poll function copy's caller). */
#define MAX_RETURN_SITES 256

void poll_returns_note(struct markers *m, uint64_t ret_addr)
{
    uint32_t seen;
    if (ret_addr == 0 || !m->return_sites.keys || u64_map_get(&m->return_sites, ret_addr, &seen))
        return;
    if (u64_map_put(&m->return_sites, ret_addr, 0) != 0)
        return;
    uint64_t *slot = vec_push(&m->new_return_sites);
    if (slot)
        *slot = ret_addr;
}

void poll_returns_attach(struct markers *m)
{
    if (m->new_return_sites.n == 0)
        return;
    struct proc_maps maps = { 0 };
    if (proc_maps_load(&maps, m->pid) != 0) {
        m->new_return_sites.n = 0;
        proc_maps_free(&maps);
        return;
    }
    for (size_t i = 0; i < m->new_return_sites.n; i++) {
        if (m->return_probes >= MAX_RETURN_SITES) {
            if (m->return_probes++ == MAX_RETURN_SITES)    /* said once */
                markers_warn(m, "more than %d call sites of runtime poll functions: polls from the others have "
                                "no end", MAX_RETURN_SITES);
            break;
        }
        uint64_t addr = m->new_return_sites.v[i];
        const struct proc_map *map = proc_maps_find(&maps, addr);
        if (!map || !map->executable || map->path[0] != '/')
            continue;
        char full[4200];
        snprintf(full, sizeof(full), "%s%s", m->root, map->path);
        struct probe_location at = { "tokio", "poll (return site)", addr - map->start + map->pgoff, 0, false, false };
        if (attach_location(m, full, &at, MARKER_POLL_RETURN, NULL) == 0)
            m->return_probes++;
    }
    m->new_return_sites.n = 0;
    proc_maps_free(&maps);
}
