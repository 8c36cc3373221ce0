/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_inflate.c: a copy of an ELF file in memory with its zlib-compressed sections (SHF_COMPRESSED, as Debian's
 * -dbg packages ship their DWARF) inflated by libdeflate, for a reader that would otherwise inflate them with
 * zlib: libdw inflates every debug section of a file it opens, which took a fifth of taskspy's symbolizing on a
 * tokio server (libc's 10 MB of DWARF: 50 ms; libdeflate takes less than half). Sections the reader will not
 * read are left out (their headers stay, as SHT_NOBITS), so neither time nor memory is spent on them. */
#include "elf/elf_internal.h"

#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

/* Deflate makes at most 1032 bytes of 1 (its longest match for its shortest code): a section that claims more
 * is not read. */
#define DEFLATE_MAX_RATIO 1032u
/* Alignments above this are not a debug section's: such a file is read as it is. */
#define MAX_ALIGN (1u << 16)

/* The copy's layout: the ELF header, the program headers, the sections' bytes in their order (each at its
 * alignment), the section headers. */
static uint64_t aligned(uint64_t at, uint64_t align)
{
    return align > 1 ? (at + align - 1) / align * align : at;
}

/* Whether the copy leaves section i out: the caller says, from its header and name (the section names' table,
 * which the copy needs to be read at all, is always kept). */
static bool dropped(const struct elf_file *ef, size_t i, elf_section_keep_fn keep, void *ctx)
{
    const Elf64_Shdr *sh = &ef->shdrs[i];
    if (i == ef->ehdr->e_shstrndx || !keep)
        return false;
    const char *name = "";
    if (ef->shstrtab && sh->sh_name < ef->shstrtab_size &&
        strnlen(ef->shstrtab + sh->sh_name, ef->shstrtab_size - sh->sh_name) < ef->shstrtab_size - sh->sh_name)
        name = ef->shstrtab + sh->sh_name;
    return !keep(sh, name, ctx);
}

/* A zlib-compressed section's header, when sh is one this copy inflates. */
static bool zlib_section(const struct elf_file *ef, const Elf64_Shdr *sh, Elf64_Chdr *chdr)
{
    if (!(sh->sh_flags & SHF_COMPRESSED) || sh->sh_type == SHT_NOBITS || sh->sh_size < sizeof(*chdr) ||
        !elf_range_ok(ef->size, sh->sh_offset, sh->sh_size))
        return false;
    memcpy(chdr, ef->data + sh->sh_offset, sizeof(*chdr));
    return chdr->ch_type == ELFCOMPRESS_ZLIB && chdr->ch_size / DEFLATE_MAX_RATIO <= sh->sh_size - sizeof(*chdr);
}

void *elf_file_inflated(const struct elf_file *ef, elf_section_keep_fn keep, void *ctx, size_t *size)
{
    *size = 0;
    const Elf64_Ehdr *eh = ef->ehdr;
    bool little = eh->e_ident[EI_DATA] == ELFDATA2LSB;
    bool native = little == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
    size_t n_compressed = 0;
    Elf64_Chdr chdr;
    for (size_t i = 0; ef->shdrs && i < ef->n_shdrs; i++)
        n_compressed += zlib_section(ef, &ef->shdrs[i], &chdr) && !dropped(ef, i, keep, ctx);
    if (!native || !ef->shdrs || ef->n_shdrs == 0 || n_compressed == 0) {
        errno = ENOENT;
        return NULL;
    }
    /* sizes first: the copy is allocated once */
    uint64_t at = sizeof(Elf64_Ehdr) + (uint64_t)ef->n_phdrs * sizeof(Elf64_Phdr);
    for (size_t i = 1; i < ef->n_shdrs; i++) {
        const Elf64_Shdr *sh = &ef->shdrs[i];
        if (sh->sh_type == SHT_NOBITS || dropped(ef, i, keep, ctx))
            continue;
        if (!elf_range_ok(ef->size, sh->sh_offset, sh->sh_size)) {
            errno = ENOEXEC;
            return NULL;
        }
        bool inflate = zlib_section(ef, sh, &chdr);
        uint64_t align = inflate ? chdr.ch_addralign : sh->sh_addralign;
        if (align > MAX_ALIGN) {
            errno = ENOEXEC;
            return NULL;
        }
        at = aligned(at, align) + (inflate ? chdr.ch_size : sh->sh_size);
    }
    uint64_t shoff = aligned(at, _Alignof(Elf64_Shdr));
    uint64_t total = shoff + (uint64_t)ef->n_shdrs * sizeof(Elf64_Shdr);
    if (total > SIZE_MAX / 2) {
        errno = EFBIG;
        return NULL;
    }
    uint8_t *image = calloc(1, (size_t)total);
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    if (!image || !inflater) {
        free(image);
        libdeflate_free_decompressor(inflater);
        errno = ENOMEM;
        return NULL;
    }
    Elf64_Ehdr *out_eh = (Elf64_Ehdr *)image;
    *out_eh = *eh;
    out_eh->e_phoff = ef->n_phdrs ? sizeof(Elf64_Ehdr) : 0;
    out_eh->e_phnum = (uint16_t)ef->n_phdrs;
    out_eh->e_shoff = shoff;
    if (ef->n_phdrs)
        memcpy(image + sizeof(Elf64_Ehdr), ef->phdrs, ef->n_phdrs * sizeof(Elf64_Phdr));
    Elf64_Shdr *out_sh = (Elf64_Shdr *)(image + shoff);
    memcpy(out_sh, ef->shdrs, ef->n_shdrs * sizeof(Elf64_Shdr));
    at = sizeof(Elf64_Ehdr) + (uint64_t)ef->n_phdrs * sizeof(Elf64_Phdr);
    for (size_t i = 1; i < ef->n_shdrs; i++) {
        const Elf64_Shdr *sh = &ef->shdrs[i];
        Elf64_Shdr *o = &out_sh[i];
        if (sh->sh_type == SHT_NOBITS || dropped(ef, i, keep, ctx)) {
            o->sh_type = SHT_NOBITS;
            o->sh_offset = at;
            o->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
            continue;
        }
        const uint8_t *from = ef->data + sh->sh_offset;
        if (zlib_section(ef, sh, &chdr)) {
            at = aligned(at, chdr.ch_addralign);
            size_t got = 0;
            if (libdeflate_zlib_decompress(inflater, from + sizeof(chdr), sh->sh_size - sizeof(chdr), image + at,
                                           chdr.ch_size, &got) != LIBDEFLATE_SUCCESS || got != chdr.ch_size) {
                free(image);
                libdeflate_free_decompressor(inflater);
                errno = EILSEQ;
                return NULL;
            }
            o->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
            o->sh_size = chdr.ch_size;
            o->sh_addralign = chdr.ch_addralign;
        } else {
            at = aligned(at, sh->sh_addralign);
            memcpy(image + at, from, sh->sh_size);
        }
        o->sh_offset = at;
        at += o->sh_size;
    }
    libdeflate_free_decompressor(inflater);
    *size = (size_t)total;
    return image;
}
