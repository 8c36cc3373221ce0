/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_segments.c: program headers: where a segment or section lies, and the one place where a link-time
 * address and a file offset are turned into each other through the PT_LOAD headers (PIE, shared objects,
 * non-PIE executables, LLD layouts where a segment's address and file offset differ). */
#include "elf/elf_internal.h"

#include <string.h>

bool elf_file_segment_range(const struct elf_file *ef, uint32_t p_type, size_t nth, struct elf_range *out)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (ph->p_type == p_type && elf_range_ok(ef->size, ph->p_offset, ph->p_filesz) && nth-- == 0) {
            *out = (struct elf_range){ .vaddr = ph->p_vaddr, .offset = ph->p_offset, .size = ph->p_filesz };
            return true;
        }
    }
    return false;
}

const Elf64_Phdr *elf_file_segment(const struct elf_file *ef, uint32_t p_type)
{
    const Elf64_Phdr *last = NULL;
    for (size_t i = 0; i < ef->n_phdrs; i++)
        if (ef->phdrs[i].p_type == p_type)
            last = &ef->phdrs[i];
    return last;
}

bool elf_file_section_range(const struct elf_file *ef, const char *name, struct elf_range *out)
{
    const Elf64_Shdr *sh = elf_file_section(ef, name);
    if (!elf_file_section_data(ef, sh, NULL))
        return false;
    *out = (struct elf_range){ .vaddr = sh->sh_addr, .offset = sh->sh_offset, .size = sh->sh_size };
    return true;
}

/* A PT_LOAD whose file range cannot overflow an offset (outside input may say anything). */
static bool load_segment_sane(const Elf64_Phdr *ph)
{
    return ph->p_type == PT_LOAD && ph->p_offset <= (uint64_t)INT64_MAX &&
           ph->p_filesz <= (uint64_t)INT64_MAX - ph->p_offset;
}

/* The first sane PT_LOAD whose file bytes hold vaddr, or NULL. */
static const Elf64_Phdr *load_segment_of(const struct elf_file *ef, uint64_t vaddr)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (load_segment_sane(ph) && vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz)
            return ph;
    }
    return NULL;
}

int64_t elf_file_vaddr_to_offset_in(const struct elf_file *ef, uint64_t vaddr, uint32_t p_flags, uint64_t len)
{
    const Elf64_Phdr *ph = load_segment_of(ef, vaddr);
    if (!ph || (ph->p_flags & p_flags) != p_flags || ph->p_filesz - (vaddr - ph->p_vaddr) < len)
        return -1;
    return (int64_t)(ph->p_offset + (vaddr - ph->p_vaddr));
}

int64_t elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr)
{
    return elf_file_vaddr_to_offset_in(ef, vaddr, 0, 1);
}

bool elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (load_segment_sane(ph) && offset >= ph->p_offset && offset - ph->p_offset < ph->p_filesz) {
            *vaddr = ph->p_vaddr + (offset - ph->p_offset);
            return true;
        }
    }
    return false;
}

bool elf_file_load_bias(const struct elf_file *ef, uint64_t start, uint64_t pgoff, bool executable,
                        uint64_t page_size, uint64_t *bias)
{
    uint64_t page_mask = (page_size ? page_size : 4096) - 1;
    const Elf64_Phdr *best = NULL;
    int best_score = -1;
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (ph->p_type != PT_LOAD || ph->p_filesz == 0)
            continue;
        /* The kernel maps a segment from its page-aligned file offset: several segments can share a
         * page (LLD), so prefer the one whose permissions and first page match the mapping. */
        uint64_t lo = ph->p_offset & ~page_mask, hi = ph->p_offset + ph->p_filesz;
        if (pgoff < lo || pgoff >= hi)
            continue;
        int score = (((ph->p_flags & PF_X) != 0) == executable ? 2 : 0) + (lo == pgoff ? 1 : 0);
        if (score > best_score) {
            best = ph;
            best_score = score;
        }
    }
    if (!best)
        return false;
    /* runtime(offset) = start + (offset - pgoff); link(offset) = p_vaddr + (offset - p_offset). */
    *bias = start - pgoff - (best->p_vaddr - best->p_offset);
    return true;
}

int64_t elf_tls_tp_offset(uint64_t st_value, uint64_t memsz, uint64_t align, uint64_t vaddr)
{
    if (align == 0)
        align = 1;
    /* the block starts firstbyte past an aligned address when the segment itself is not aligned */
    uint64_t firstbyte = (0 - (vaddr & (align - 1))) & (align - 1);
    uint64_t block = ((memsz - firstbyte + align - 1) / align) * align + firstbyte;
    return (int64_t)st_value - (int64_t)block;
}
