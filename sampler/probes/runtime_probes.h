/* SPDX-License-Identifier: GPL-3.0-or-later */
/* runtime_probes.h: where to probe async runtimes that carry no USDT markers: the out-of-line functions that
 * poll exactly one task (tokio's raw::poll<T,S> copies, one per future type and scheduler), and those
 * that register or wake a task's waker (tokio's waker vtable functions, for the wait profile), found by
 * their mangled names in an object's symbol table (or its separate debug file), with the file offsets a
 * uprobe needs and how to read the task's identity (a register holding a pointer stable for its life). */
#ifndef TASKSPY_RUNTIME_PROBES_H
#define TASKSPY_RUNTIME_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf_file.h"

/* What a runtime function does with the task whose identity it receives. */
enum runtime_probe_role {
    RUNTIME_PROBE_POLL,        /* polls the task (tokio: raw::poll<T,S>) */
    RUNTIME_PROBE_WAKER_CLONE, /* the task's waker is cloned: a future registers it to be woken later (tokio:
                                  waker::clone_waker) */
    RUNTIME_PROBE_WAKE,        /* the task is woken (tokio: waker::wake_by_val, wake_by_ref) */
};

struct runtime_probe {
    const char *runtime;       /* "tokio" (static string) */
    enum runtime_probe_role role;
    uint64_t file_offset;      /* of the function's entry */
    int id_register;           /* PERF_REG_X86_* holding the task id at entry */
};

struct runtime_probe_list {
    struct runtime_probe *v;
    size_t n, cap;
};

/* Find the runtime functions (every role) of ef (its .symtab, else .dynsym). Returns 0 (also when none), -1 on
 * allocation failure. */
int runtime_probes_find(const struct elf_file *ef, struct runtime_probe_list *out);
/* The same, and when ef (the object at path as the target names it, opened through root: "" or
 * "/proc/PID/root") has no .symtab (a stripped binary), in its separate debug file, found and verified by elf/'s
 * one lookup (debug_files: the shared results, or NULL; may_download: it may wait for a debuginfod download),
 * with offsets from ef's own program headers. */
int runtime_probes_find_with_debug(const struct elf_file *ef, const char *path, const char *root,
                                   struct debug_files *debug_files, bool may_download,
                                   struct runtime_probe_list *out);
void runtime_probes_free(struct runtime_probe_list *l);
/* Does a mangled symbol name denote a runtime function? Returns the runtime's name (and its role in *role,
 * which may be NULL) or NULL. */
const char *runtime_probes_match(const char *mangled, enum runtime_probe_role *role);

#endif
