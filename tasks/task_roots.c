/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_roots.c: a task named by its root future from the code that polls it, without reading the task: tokio polls
 * every task through the raw::poll<T, S> of its future type T (the task vtable's poll entry, one copy per T),
 * so the copy a poll went through names the task as taskspy tasks names it (T's async fn, or its type). record
 * uses it for the tasks no sample caught (task_roots.h in tasks.h: task_root_namer). */
#include "tasks/tasks_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc_exe.h"
#include "base/vec.h"

#define MAX_NAME 2048

struct task_root_namer {
    struct dwarf_types *dwarf;
    uint64_t bias;                     /* the executable's: runtime address = link-time + bias */
    struct string_pool pool;
    struct u64_map by_addr;            /* runtime address -> index in names */
    struct {
        const char **v;                /* NULL: not a raw::poll<T, S> */
        size_t n, cap;
    } names;
};

int task_root_namer_open(struct task_root_namer **out, pid_t pid, const char *dwarf_path, char *err, size_t errlen)
{
    *out = NULL;
    char exe[64], target_path[4096];
    bool have_path = proc_exe_path(pid, exe, sizeof(exe), target_path, sizeof(target_path)) == 0;
    struct task_root_namer *n = calloc(1, sizeof(*n));
    struct target_maps maps = { 0 };
    struct elf_file ef;
    bool placed = false;
    if (!n || !have_path || target_maps_load(pid, &maps) != 0 || elf_file_open(&ef, exe) != 0) {
        snprintf(err, errlen, "cannot read process %d's executable and mappings", (int)pid);
    } else {
        placed = target_maps_bias(&maps, target_path, &ef, &n->bias);
        elf_file_close(&ef);
        if (!placed)
            snprintf(err, errlen, "cannot place %s in process %d's memory", target_path, (int)pid);
    }
    target_maps_free(&maps);
    if (placed && (dwarf_types_open(&n->dwarf, dwarf_path ? dwarf_path : exe) != 0 ||
                   u64_map_init(&n->by_addr, 64) != 0)) {
        snprintf(err, errlen, "cannot read the DWARF of %s", dwarf_path ? dwarf_path : target_path);
        placed = false;
    }
    if (!placed) {
        task_root_namer_close(n);
        return -1;
    }
    *out = n;
    return 0;
}

const char *task_root_namer_name(struct task_root_namer *n, uint64_t addr)
{
    uint32_t index;
    int rc = u64_map_index(&n->by_addr, addr, &n->names, &index);
    if (rc < 0)
        return NULL;
    if (rc == 1) {
        char name[MAX_NAME];
        n->names.v[index] = addr >= n->bias && task_root_name(n->dwarf, addr - n->bias, name, sizeof(name))
                                ? string_pool_intern(&n->pool, name)
                                : NULL;
    }
    return n->names.v[index];
}

void task_root_namer_close(struct task_root_namer *n)
{
    if (!n)
        return;
    dwarf_types_close(n->dwarf);
    string_pool_free(&n->pool);
    u64_map_free(&n->by_addr);
    vec_free(&n->names);
    free(n);
}
