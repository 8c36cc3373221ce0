/* SPDX-License-Identifier: GPL-3.0-or-later */
/* u64_map.h: the one hash map of taskspy: open addressing from any u64 key to a u32 value (an index into
 * the caller's array), used by the sampler's per-thread and per-task tables and symbolize's address cache
 * (lookups on the per-sample path, no allocation once sized). Interning by content is base/intern_table. */
#ifndef TASKSPY_U64_MAP_H
#define TASKSPY_U64_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_map {
    uint64_t *keys;
    uint32_t *values;         /* value + 1; 0 = empty slot */
    size_t mask;
    size_t count;
};

int u64_map_init(struct u64_map *m, size_t initial_capacity);
void u64_map_free(struct u64_map *m);
/* Value for key, or false when absent. */
bool u64_map_get(const struct u64_map *m, uint64_t key, uint32_t *value);
/* Insert or overwrite. Returns 0, or -1 on allocation failure. */
int u64_map_put(struct u64_map *m, uint64_t key, uint32_t value);

#endif
