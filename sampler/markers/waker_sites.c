/* SPDX-License-Identifier: GPL-3.0-or-later */
/* waker_sites.c: the wait profile's probes in one object (SPEC section 3a). A runtime's waker functions
 * (tokio's clone_waker: a task registers its waker; wake_by_val / wake_by_ref: a task is woken) are found
 * with its poll functions by the rule table (sampler/probes/runtime_probes.h, the same lookup, debug file
 * included); a marker runtime names its own registration function with --waker-symbol. Each is a probe like
 * a marker's, its task id in %rdi, through the same slots, and every registration site is told to the
 * sampler, which takes stacks there at a budget. Each sits at the function's first instruction the kernel
 * emulates (sampler/probes/emulated_probe_point.h), where one exists before %rdi changes. In an object whose
 * tasks come from poll markers, tokio's waker functions are probed too, their hits of kinds that say that
 * %rdi is tokio's task header, not a marker's id (the sampler joins the two: header_join.h). */
#include "sampler/markers/markers_internal.h"

#include <asm/perf_regs.h>
#include <string.h>

#include "sampler/probes/emulated_probe_point.h"
#include "sampler/probes/runtime_probes.h"

/* Attach one waker location (kind MARKER_WAKE, MARKER_WAKER_REGISTERED or their MARKER_RUNTIME_ forms) whose
 * task id is in %rdi. */
static void attach_waker(struct markers *m, const char *full, const char *provider, const char *name,
                         uint64_t offset, enum marker_kind kind)
{
    struct usdt_arg id = { .kind = USDT_ARG_REG, .size = 8, .reg = PERF_REG_X86_DI, .reg_bytes = 8 };
    bool registration = kind == MARKER_WAKER_REGISTERED || kind == MARKER_RUNTIME_WAKER_REGISTERED;
    /* a registration's slot also holds the word at %rsp, its call site (the wait profile files a registration
       without a stack under the task's last stack from the same site) */
    struct probe_location at = { provider, name, offset, 0, false,
                                 registration ? BPF_RETURN_ALWAYS : BPF_RETURN_NEVER };
    bool runtime_ids = kind == MARKER_RUNTIME_WAKER_REGISTERED;
    /* a registration's slot write and stack filter in one program on one probe consumer, where the sampler
       can; else the location as any, and its stack event beside it */
    if (registration && offer_registration(m, full, &at, kind, &id, runtime_ids) == 0) {
        m->waker_locations++;
        return;
    }
    if (attach_location(m, full, &at, kind, &id) != 0)
        return;
    m->waker_locations++;
    if (registration && m->on_waker_site)
        m->on_waker_site(m->warning_ctx, full, offset, runtime_ids, NULL);
}

/* The waker functions among found (every role), attached; runtime_ids: their %rdi is the runtime's task header
 * in a program whose tasks come from poll markers. */
static void attach_found(struct markers *m, const struct elf_file *ef, const char *full,
                         const struct runtime_probe_list *found, bool runtime_ids)
{
    for (size_t i = 0; found && i < found->n; i++) {
        const struct runtime_probe *r = &found->v[i];
        /* at the first instruction the kernel emulates (no out-of-line single step), %rdi still the task */
        uint64_t at = emulated_probe_point(ef, r->file_offset);
        if (r->role == RUNTIME_PROBE_WAKER_CLONE)
            attach_waker(m, full, r->runtime, "waker clone (registration)", at,
                         runtime_ids ? MARKER_RUNTIME_WAKER_REGISTERED : MARKER_WAKER_REGISTERED);
        else if (r->role == RUNTIME_PROBE_WAKE)
            attach_waker(m, full, r->runtime, "wake", at, runtime_ids ? MARKER_RUNTIME_WAKE : MARKER_WAKE);
    }
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
    attach_found(m, ef, full, found, false);
    if (m->waker_symbol) {
        int64_t offset = find_function(ef, m->waker_symbol);
        if (offset >= 0)
            attach_waker(m, full, "waker-symbol", m->waker_symbol, emulated_probe_point(ef, (uint64_t)offset),
                         MARKER_WAKER_REGISTERED);
    }
}

void attach_marker_runtime_wakers(struct markers *m, const struct elf_file *ef, const char *path, const char *full,
                                  bool may_download)
{
    if (!m->wait_profile)
        return;
    struct runtime_probe_list found;
    if (runtime_probes_find_with_debug(ef, path, m->root, m->debug_files, may_download, &found) != 0)
        return;
    attach_found(m, ef, full, &found, true);
    runtime_probes_free(&found);
}
