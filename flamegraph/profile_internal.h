/* SPDX-License-Identifier: GPL-3.0-or-later */
/* profile_internal.h: batch entry points of the profile for the folded reader: many names interned, many
 * stacks added in one call, so the cache misses of their hash lookups overlap. Not part of the layer's
 * public interface. */
#ifndef TASKSPY_PROFILE_INTERNAL_H
#define TASKSPY_PROFILE_INTERNAL_H

#include "flamegraph/flamegraph.h"

/* ids[i] = profile_intern(p, names[i], lens[i]) for i < n. hashes (or NULL) are the names' hashes if the
 * caller has them: hashes[i] = (uint32_t)intern_hash_bytes(INTERN_HASH_SEED, names[i], lens[i]) (base/
 * intern_table.h; intern_hash_span gives the same while splitting a stack). ids may be hashes (in place).
 * Returns 0, or -1 on allocation failure. */
int profile_intern_batch(struct profile *p, const char *const *names, const uint32_t *lens,
                         const uint32_t *hashes, size_t n, uint32_t *ids);
/* For k < n: profile_add_ids(p, frames + start[k], len[k], count[k]), every frame id below known_frames
 * (interned before). Touches only the stack tree, not the names: one thread may intern while another adds.
 * Returns 0, or -1 on allocation failure (or an id not below known_frames); some nodes may then exist
 * without counts. */
int profile_add_batch(struct profile *p, const uint32_t *frames, const uint32_t *start, const uint32_t *len,
                      const uint64_t *count, size_t n, size_t known_frames);

/* Fault in up to step bytes of the node array's memory that profile_add_batch will fill next, at most ahead
 * bytes past what it had filled at its last return: called on another thread while it adds (the one thread
 * that may), so that it finds its pages there instead of stopping for each. Returns 1 if it did, 0 if there is
 * nothing (more) to do for now: all faulted in up to there, a node array of malloc's, or a kernel that
 * cannot. */
int profile_prefault(struct profile *p, size_t ahead, size_t step);

/* Make room for this many nodes and names (a guess is fine), so the node array and the hash tables need
 * not grow (move, rehash) while they are filled. Returns 0, or -1 on allocation failure. */
int profile_reserve(struct profile *p, size_t nodes, size_t names);

/* Parallel arrays (one element each per item: a struct of arrays) share a length and a capacity. Each is
 * grown by base/vec.h's rule (vec_reserve_raw) to room for need elements, all to the same capacity, which
 * *cap takes only once every one has it. Returns 0, or -1 (overflow, no memory). */
struct parallel_array {
    void **v;
    size_t elem_size;
};
#define PARALLEL_ARRAY(a) { (void **)&(a), sizeof(*(a)) }
int reserve_parallel(size_t *cap, size_t need, const struct parallel_array *arrays, size_t n);

#endif
