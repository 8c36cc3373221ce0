/* SPDX-License-Identifier: GPL-3.0-or-later */
/* u64_map.h: the one hash map of taskspy: open addressing from any u64 key to a u32 value (an index into
 * the caller's array), used by the sampler's per-thread and per-task tables and symbolize's address cache
 * (lookups on the per-sample path, no allocation once sized), and u64_map_index, the find-or-append of such
 * an index and its array. Interning by content is base/intern_table.
 *
 * It grows at half load into a table twice the size, but moves its keys there a few at each later insert, not
 * all at once: the sampler's reading thread (a real-time one, whose pause overruns the BPF slot regions after
 * ~25 ms at saturation) inserts every task it sees, and moving 262,144 tasks' keys at once took it 30-75 ms. */
#ifndef TASKSPY_U64_MAP_H
#define TASKSPY_U64_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_map {
    uint64_t *keys;
    uint32_t *values;         /* value + 1; 0 = empty slot */
    size_t mask;
    size_t count;             /* keys in the map (in either table while it grows) */
    /* while it grows: the table before, read-only, whose slots below `moved` are in keys/values already */
    uint64_t *old_keys;
    uint32_t *old_values;
    size_t old_mask;
    size_t moved;
};

int u64_map_init(struct u64_map *m, size_t initial_capacity);
void u64_map_free(struct u64_map *m);
/* Empty the map, keeping its slots (no allocation). */
void u64_map_clear(struct u64_map *m);
/* Value for key, or false when absent. */
bool u64_map_get(const struct u64_map *m, uint64_t key, uint32_t *value);
/* Insert or overwrite. Returns 0, or -1 on allocation failure (then the map is as it was). */
int u64_map_put(struct u64_map *m, uint64_t key, uint32_t value);

/* u64_map_index(&map, key, &arr, &index): find-or-append for a map that indexes a growable array (base/vec.h).
 * Sets *index to key's element of arr: the one map holds for it (returns 0), else a zeroed element appended
 * to arr and mapped from key (returns 1, the caller fills it in). Returns -1 when out of memory or arr holds
 * UINT32_MAX elements: then neither map nor arr has changed. */
#define u64_map_index(m, key, a, index) \
    u64_map_index_raw((m), (key), (void **)&(a)->v, &(a)->n, &(a)->cap, sizeof(*(a)->v), (index))
int u64_map_index_raw(struct u64_map *m, uint64_t key, void **data, size_t *n, size_t *cap, size_t elem_size,
                      uint32_t *index);

#endif
