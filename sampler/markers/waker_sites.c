/* SPDX-License-Identifier: GPL-3.0-or-later */
/* waker_sites.c: the wait profile's probes in one object (SPEC section 3a). A runtime's waker functions
 * (tokio's clone_waker: a task registers its waker; wake_by_val / wake_by_ref: a task is woken) are found
 * with its poll functions by the rule table (sampler/probes/runtime_probes.h, the same lookup, debug file
 * included); a marker runtime names its own registration function with --waker-symbol. Each is a probe like
 * a marker's, its task id in %rdi, through the same slots, and every registration site is told to the
 * sampler, which takes stacks there at a budget. */
#include "sampler/markers/markers_internal.h"

#include <asm/perf_regs.h>
#include <string.h>

#include "sampler/probes/runtime_probes.h"

/* Attach one waker location (kind MARKER_WAKE or MARKER_WAKER_REGISTERED) whose task id is in %rdi. */
static void attach_waker(struct markers *m, const char *full, const char *provider, const char *name,
                         uint64_t offset, enum marker_kind kind)
{
    struct usdt_arg id = { .kind = USDT_ARG_REG, .size = 8, .reg = PERF_REG_X86_DI, .reg_bytes = 8 };
    struct probe_location at = { provider, name, offset, 0, false, false };
    if (attach_location(m, full, &at, kind, &id) != 0)
        return;
    m->waker_locations++;
    if (kind == MARKER_WAKER_REGISTERED && m->on_waker_site)
        m->on_waker_site(m->warning_ctx, full, offset);
}

/* The file offset of the function named name in ef (its .symtab, else .dynsym), or -1. */
static int64_t find_function(const struct elf_file *ef, const char *name)
{
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    const char *table = elf_file_section(ef, ".symtab") ? ".symtab" : ".dynsym";
    if (!elf_symbols_begin(&it, ef, table))
        return -1;
    while (elf_symbols_next(&it, &sym))
        if (sym.type == STT_FUNC && sym.value != 0 && sym.section != SHN_UNDEF && strcmp(sym.name, name) == 0)
            return elf_file_vaddr_to_offset(ef, sym.value);
    return -1;
}

void attach_waker_functions(struct markers *m, const struct elf_file *ef, const char *full,
                            const struct runtime_probe_list *found)
{
    if (!m->wait_profile)
        return;
    for (size_t i = 0; found && i < found->n; i++) {
        const struct runtime_probe *r = &found->v[i];
        if (r->role == RUNTIME_PROBE_WAKER_CLONE)
            attach_waker(m, full, r->runtime, "waker clone (registration)", r->file_offset, MARKER_WAKER_REGISTERED);
        else if (r->role == RUNTIME_PROBE_WAKE)
            attach_waker(m, full, r->runtime, "wake", r->file_offset, MARKER_WAKE);
    }
    if (m->waker_symbol) {
        int64_t offset = find_function(ef, m->waker_symbol);
        if (offset >= 0)
            attach_waker(m, full, "waker-symbol", m->waker_symbol, (uint64_t)offset, MARKER_WAKER_REGISTERED);
    }
}
