/* SPDX-License-Identifier: GPL-3.0-or-later */
/* runtime_probes.c: finding runtime poll functions by mangled name (a table: adding a runtime is a row). */
#include "sampler/probes/runtime_probes.h"

#include "base/vec.h"

#include <asm/perf_regs.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Each rule matches a mangled name by its parts in order; the last must end the name (before a legacy
 * hash), or for a generic function be followed by its type arguments. tokio 1.x: `tokio::runtime::task::raw::
 * poll<T,S>`, the task vtable's poll entry (so always out of line, and entered once per poll of exactly one
 * task: Harness<T,S>::poll, which it calls, is inlined into it in some builds and not in others); its first
 * argument (%rdi) is the task's header pointer, stable for the task's life; the waker vtable's
 * `tokio::runtime::task::waker::clone_waker`, `wake_by_val` and `wake_by_ref` (out of line: called through
 * WAKER_VTABLE) get the same pointer in %rdi. */
struct runtime_probe_rule {
    const char *runtime;
    enum runtime_probe_role role;
    const char *legacy;        /* Itanium-style Rust legacy mangling: a substring, followed by "17h<hash>E" */
    const char *v0_parts[4];   /* Rust v0 mangling: substrings in order */
    const char *v0_last;       /* the method's identifier: ends the name, or is followed by the instantiating
                                  crate ("C..." or a backref "B...") */
    int id_register;
    bool v0_generic;           /* v0_last is a generic function's path: its type arguments follow */
};

static const struct runtime_probe_rule rules[] = {
    { "tokio", RUNTIME_PROBE_POLL, "5tokio7runtime4task3raw4poll17h",
      { "5tokio", "7runtime", "4task", NULL }, "3raw4poll", PERF_REG_X86_DI, true },
    { "tokio", RUNTIME_PROBE_WAKER_CLONE, "5tokio7runtime4task5waker11clone_waker17h",
      { "5tokio", "7runtime", "4task", "5waker" }, "11clone_waker", PERF_REG_X86_DI, false },
    { "tokio", RUNTIME_PROBE_WAKE, "5tokio7runtime4task5waker11wake_by_val17h",
      { "5tokio", "7runtime", "4task", "5waker" }, "11wake_by_val", PERF_REG_X86_DI, false },
    { "tokio", RUNTIME_PROBE_WAKE, "5tokio7runtime4task5waker11wake_by_ref17h",
      { "5tokio", "7runtime", "4task", "5waker" }, "11wake_by_ref", PERF_REG_X86_DI, false },
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

static const struct runtime_probe_rule *match_rule(const char *name)
{
    for (size_t i = 0; i < N_RULES; i++) {
        const struct runtime_probe_rule *r = &rules[i];
        if (strncmp(name, "_ZN", 3) == 0 && strstr(name, r->legacy))
            return r;
        if (strncmp(name, "_R", 2) == 0) {
            const char *at = name;
            size_t k = 0;
            for (; k < 4 && r->v0_parts[k]; k++) {
                const char *next = strstr(at, r->v0_parts[k]);
                if (!next)
                    break;
                at = next + strlen(r->v0_parts[k]);
            }
            const char *last = k == 4 || !r->v0_parts[k] ? strstr(at, r->v0_last) : NULL;
            if (last && r->v0_generic) {
                /* "_RINv" + the function's path + its type arguments: the path ends at v0_last */
                if (strncmp(name, "_RINv", 5) == 0)
                    return r;
                continue;
            }
            while (last) {     /* the last occurrence decides */
                const char *again = strstr(last + 1, r->v0_last);
                if (!again)
                    break;
                last = again;
            }
            if (last) {
                char after = last[strlen(r->v0_last)];
                if (after == '\0' || after == 'C' || after == 'B')   /* end, crate, or crate backref */
                    return r;
            }
        }
    }
    return NULL;
}

const char *runtime_probes_match(const char *mangled, enum runtime_probe_role *role)
{
    const struct runtime_probe_rule *r = match_rule(mangled);
    if (r && role)
        *role = r->role;
    return r ? r->runtime : NULL;
}

static int add(struct runtime_probe_list *l, const struct runtime_probe_rule *r, uint64_t offset)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].file_offset == offset)
            return 0;          /* aliases of one function */
    struct runtime_probe *p = vec_push(l);
    if (!p)
        return -1;
    *p = (struct runtime_probe){ r->runtime, r->role, offset, r->id_register };
    return 0;
}

/* Scan symbol table `table` of sym_file; offsets come from code_file's program headers (the same file, or
 * the stripped binary whose debug file sym_file is). */
static int scan(const struct elf_file *sym_file, const struct elf_file *code_file, const char *table,
                struct runtime_probe_list *out)
{
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    if (!elf_symbols_begin(&it, sym_file, table))
        return 0;
    while (elf_symbols_next(&it, &sym)) {
        if (sym.type != STT_FUNC || sym.value == 0 || sym.section == SHN_UNDEF)
            continue;
        const struct runtime_probe_rule *r = match_rule(sym.name);
        if (!r)
            continue;
        int64_t file_offset = elf_file_vaddr_to_offset(code_file, sym.value);
        if (file_offset < 0)
            continue;
        if (add(out, r, (uint64_t)file_offset) != 0)
            return -1;
    }
    return 0;
}

int runtime_probes_find(const struct elf_file *ef, struct runtime_probe_list *out)
{
    memset(out, 0, sizeof(*out));
    if (elf_file_section(ef, ".symtab"))
        return scan(ef, ef, ".symtab", out);
    return scan(ef, ef, ".dynsym", out);
}

int runtime_probes_find_with_debug(const struct elf_file *ef, const char *path, const char *root,
                                   struct debug_files *debug_files, bool may_download,
                                   struct runtime_probe_list *out)
{
    if (runtime_probes_find(ef, out) != 0)
        return -1;
    if (out->n > 0 || elf_file_section(ef, ".symtab"))
        return 0;
    /* A stripped binary: its symbols are in its separate debug file, if one that matches it is there. */
    struct debug_file_result *found = malloc(sizeof(*found));
    if (!found)
        return -1;
    struct elf_file debug;
    int rc = 0;
    if (debug_file_find(debug_files, ef, root, path, may_download, found) &&
        elf_file_open(&debug, found->path) == 0) {
        rc = scan(&debug, ef, ".symtab", out);
        elf_file_close(&debug);
    }
    free(found);
    return rc;
}

void runtime_probes_free(struct runtime_probe_list *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}
