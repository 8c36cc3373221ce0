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

/* A zlib-compressed section's header and stream (*stream, *stream_len), when sh is one this copy inflates. */
static bool zlib_section(const struct elf_file *ef, const Elf64_Shdr *sh, Elf64_Chdr *chdr, const uint8_t **stream,
                         size_t *stream_len)
{
    size_t len = 0;
    const uint8_t *bytes = elf_file_section_data(ef, sh, &len);
    if (!(sh->sh_flags & SHF_COMPRESSED) || !bytes || len < sizeof(*chdr))
        return false;
    memcpy(chdr, bytes, sizeof(*chdr));
    *stream = bytes + sizeof(*chdr);
    *stream_len = len - sizeof(*chdr);
    return chdr->ch_type == ELFCOMPRESS_ZLIB && chdr->ch_size / DEFLATE_MAX_RATIO <= *stream_len;
}

/* The copy's sections laid out after the ELF and program headers: with image NULL only measured, else written
 * there (section headers at out_sh), compressed ones inflated. Returns where the last one ends, or 0 with errno
 * set (ENOEXEC for a section outside the file or aligned beyond MAX_ALIGN, EILSEQ for one that does not
 * inflate). */
static uint64_t lay_out(const struct elf_file *ef, elf_section_keep_fn keep, void *ctx, uint8_t *image,
                        Elf64_Shdr *out_sh, struct libdeflate_decompressor *inflater)
{
    uint64_t at = sizeof(Elf64_Ehdr) + (uint64_t)ef->n_phdrs * sizeof(Elf64_Phdr);
    for (size_t i = 1; i < ef->n_shdrs; i++) {
        const Elf64_Shdr *sh = &ef->shdrs[i];
        if (sh->sh_type == SHT_NOBITS || dropped(ef, i, keep, ctx)) {
            if (image) {
                out_sh[i].sh_type = SHT_NOBITS;
                out_sh[i].sh_offset = at;
                out_sh[i].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
            }
            continue;
        }
        size_t raw_len = 0;
        const uint8_t *raw = elf_file_section_data(ef, sh, &raw_len);
        Elf64_Chdr chdr;
        const uint8_t *stream = NULL;
        size_t stream_len = 0;
        bool inflate = zlib_section(ef, sh, &chdr, &stream, &stream_len);
        uint64_t align = inflate ? chdr.ch_addralign : sh->sh_addralign;
        uint64_t size = inflate ? chdr.ch_size : raw_len;
        if (!raw || align > MAX_ALIGN) {
            errno = ENOEXEC;
            return 0;
        }
        at = aligned(at, align);
        if (image) {
            size_t got = 0;
            if (inflate && (libdeflate_zlib_decompress(inflater, stream, stream_len, image + at, size, &got) !=
                            LIBDEFLATE_SUCCESS || got != size)) {
                errno = EILSEQ;
                return 0;
            }
            if (!inflate)
                memcpy(image + at, raw, size);
            out_sh[i].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
            out_sh[i].sh_size = size;
            out_sh[i].sh_addralign = align;
            out_sh[i].sh_offset = at;
        }
        at += size;
    }
    return at;
}

void *elf_file_inflated(const struct elf_file *ef, elf_section_keep_fn keep, void *ctx, size_t *size)
{
    *size = 0;
    const Elf64_Ehdr *eh = ef->ehdr;
    bool little = eh->e_ident[EI_DATA] == ELFDATA2LSB;
    bool native = little == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
    size_t n_compressed = 0;
    Elf64_Chdr chdr;
    const uint8_t *stream;
    size_t stream_len;
    for (size_t i = 0; ef->shdrs && i < ef->n_shdrs; i++)
        n_compressed += zlib_section(ef, &ef->shdrs[i], &chdr, &stream, &stream_len) && !dropped(ef, i, keep, ctx);
    if (!native || !ef->shdrs || ef->n_shdrs == 0 || n_compressed == 0) {
        errno = ENOENT;
        return NULL;
    }
    uint64_t end = lay_out(ef, keep, ctx, NULL, NULL, NULL);   /* sizes first: the copy is allocated once */
    if (end == 0)
        return NULL;
    uint64_t shoff = aligned(end, _Alignof(Elf64_Shdr));
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
    bool written = lay_out(ef, keep, ctx, image, out_sh, inflater) != 0;
    libdeflate_free_decompressor(inflater);
    if (!written) {
        free(image);
        return NULL;
    }
    *size = (size_t)total;
    return image;
}
