/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_loaded.c: ELF structures of a program as it is loaded in another process's memory (read through the
 * caller's reader, e.g. /proc/PID/mem): its program headers, found where the auxiliary vector's AT_PHDR says,
 * and its dynamic section's DT_DEBUG, which the dynamic linker points at its r_debug (the link map's head). */
#include "elf/elf_file.h"

#define MAX_LOADED_PHDRS 64
#define MAX_DYNAMIC_BYTES (64 * 1024)

uint64_t elf_loaded_r_debug(uint64_t phdr, uint64_t phnum, elf_memory_reader read, void *ctx)
{
    Elf64_Phdr phdrs[MAX_LOADED_PHDRS];
    if (!phdr || phnum == 0 || phnum > MAX_LOADED_PHDRS || !read(ctx, phdr, phdrs, phnum * sizeof(Elf64_Phdr)))
        return 0;
    uint64_t bias = 0, dynamic = 0, dynamic_size = 0;
    bool have_bias = false;
    for (uint64_t i = 0; i < phnum; i++) {
        if (phdrs[i].p_type == PT_PHDR) {
            bias = phdr - phdrs[i].p_vaddr;
            have_bias = true;
        } else if (phdrs[i].p_type == PT_DYNAMIC) {
            dynamic = phdrs[i].p_vaddr;
            dynamic_size = phdrs[i].p_memsz;
        }
    }
    if (!have_bias || !dynamic)
        return 0;
    for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dynamic_size && at < MAX_DYNAMIC_BYTES; at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        if (!read(ctx, bias + dynamic + at, &d, sizeof(d)) || d.d_tag == DT_NULL)
            return 0;
        if (d.d_tag == DT_DEBUG)
            return d.d_un.d_ptr;
    }
    return 0;
}
