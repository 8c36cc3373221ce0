/* u64_map.h: open-addressing hash map from a non-zero-able u64 key to a u32 value index, used for the
 * per-thread and per-task tables of the sampler (lookups on the per-sample path, no allocation once sized). */
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
