/* SPDX-License-Identifier: GPL-3.0-or-later */
/* address_stacks.h: what `taskspy record` keeps for a pprof output besides the profile of names: each
 * sample's stack as addresses (flamegraph's address_profile), one location per distinct address, made the
 * first time the address is seen from its symbolize result and mapping. */
#ifndef TASKSPY_ADDRESS_STACKS_H
#define TASKSPY_ADDRESS_STACKS_H

#include "base/u64_map.h"
#include "base/vec.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/wait_profile.h"
#include "sampler/sampler.h"
#include "symbolize/symbolize.h"

struct address_site {
    uint32_t location;         /* location id in the address profile */
    uint32_t result;           /* the sym_result id it was made from */
    uint32_t next;             /* another site at the same address (index + 1; a replaced mapping), 0: none */
};

struct address_stacks {
    struct symbolizer *symbolizer;         /* not owned */
    const struct profile *names;           /* not owned: the profile task_stacks fills */
    struct address_profile *profile;
    struct u64_map user_sites;             /* user address (| RETURN bit) -> first site index */
    struct u64_map kernel_sites;           /* kernel address -> first site index */
    VEC_OF(struct address_site) sites;
    /* the wait profile's locations of names without addresses */
    struct u64_map name_locations;        /* root frame -> location */
    uint32_t suspended_location, runnable_location;   /* 0: not made yet */
    uint32_t locations[2 * SAMPLER_MAX_FRAMES];   /* one sample's, leaf first */
};

/* Returns 0, or -1 when out of memory. */
int address_stacks_init(struct address_stacks *a, struct symbolizer *symbolizer, const struct profile *names);
void address_stacks_free(struct address_stacks *a);
/* Add one sample: its addresses, labelled by its thread's root frame and the node task_stacks_add put it at
 * (task_stacks_last_node; PROFILE_NO_NODE: held back, its task root settled at the end). 0 or -1. */
int address_stacks_add(struct address_stacks *a, const struct sampler_sample *s, uint32_t thread_root, uint32_t node);

/* The key of a waker-registration stack for the wait profile: the part (address_profile_part) made of its
 * return addresses from user_ips[first] outwards. WAIT_NO_KEY when out of memory. */
uint32_t address_stacks_wait_key(struct address_stacks *a, const struct sampler_wait_stack *w, size_t first);
/* Add the waits of one site (wait_profile_each_site) as two stacks: "[suspended]" and "[runnable]" leaves on
 * the registration stack's locations (or on a location named by the task root when it has none), labelled
 * by the root. Returns 0 or -1 (no memory). */
int address_stacks_add_wait(struct address_stacks *a, const struct wait_site_time *t);

/* Add the waits of a profile made of names only (the snapshot wait profile, whose stacks have no addresses):
 * each of its stacks as locations named by its frames (an await frame "NAME @ FILE:LINE" as function NAME at
 * FILE:LINE), its count (microseconds) as wait nanoseconds, labelled by its root frame, interned in names (the
 * profile a was made with). Returns 0 or -1 (no memory). */
int address_stacks_add_named_waits(struct address_stacks *a, struct profile *names, const struct profile *waits);

#endif
