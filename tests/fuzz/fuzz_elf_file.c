/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_elf_file.c: libFuzzer target for the ELF64 reader on whole hostile images: elf_file_from_memory,
 * section lookup and data, segment and section ranges, the PT_LOAD vaddr <-> offset mapping and load bias,
 * the build-id note, note and symbol iteration, and the USDT note and runtime probe readers on top
 * (usdt_notes_read, runtime_probes_find), and the copy with compressed sections inflated (elf_file_inflated),
 * which must parse again with as many sections. Asserts that nothing it hands back points outside the image. */
#include "elf/elf_file.h"
#include "sampler/probes/runtime_probes.h"
#include "sampler/probes/usdt_notes.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t *image_end;
static const uint8_t *image_start;

static void in_image(const void *p, size_t len)
{
    const uint8_t *b = p;
    if (b < image_start || b > image_end || len > (size_t)(image_end - b))
        abort();
}

static void mapping(const struct elf_file *ef, uint64_t vaddr)
{
    int64_t off = elf_file_vaddr_to_offset(ef, vaddr);
    if (off < -1)
        abort();                                  /* documented: an offset, or -1 */
    if (off >= 0 && (uint64_t)off < ef->size) {
        /* an offset inside the file that some segment maps must map back to an address */
        uint64_t back;
        if (!elf_file_offset_to_vaddr(ef, (uint64_t)off, &back))
            abort();
    }
    uint64_t v;
    if (elf_file_offset_to_vaddr(ef, vaddr, &v))
        (void)elf_file_vaddr_to_offset(ef, v);
}

static bool keep_unallocated(const Elf64_Shdr *sh, const char *name, void *ctx)
{
    (void)ctx;
    return !(sh->sh_flags & SHF_ALLOC) && strcmp(name, ".debug_loclists") != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* libFuzzer's buffer is malloc'd (16-byte aligned) and exactly size bytes long */
    image_start = data;
    image_end = data + size;
    struct elf_file ef;
    if (elf_file_from_memory(&ef, data, size) != 0)
        return 0;
    if (ef.phdrs)
        in_image(ef.phdrs, ef.n_phdrs * sizeof(Elf64_Phdr));
    if (ef.shdrs)
        in_image(ef.shdrs, ef.n_shdrs * sizeof(Elf64_Shdr));
    if (ef.shstrtab)
        in_image(ef.shstrtab, ef.shstrtab_size);

    static const char *const names[] = {".note.stapsdt", ".stapsdt.base", ".eh_frame_hdr", ".shstrtab", ""};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const Elf64_Shdr *sh = elf_file_section(&ef, names[i]);
        if (!sh)
            continue;
        in_image(sh, sizeof(*sh));
        size_t len = 0;
        const uint8_t *d = elf_file_section_data(&ef, sh, &len);
        if (d)
            in_image(d, len);
    }
    for (size_t i = 0; i < ef.n_shdrs; i++) {
        size_t len = 0;
        const uint8_t *d = elf_file_section_data(&ef, &ef.shdrs[i], &len);
        if (d)
            in_image(d, len);
    }

    /* addresses: every segment's edges, and the last 16 bytes of the input read as two addresses */
    for (size_t i = 0; i < ef.n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef.phdrs[i];
        mapping(&ef, ph->p_vaddr);
        mapping(&ef, ph->p_vaddr + ph->p_filesz - 1);
        mapping(&ef, ph->p_vaddr + ph->p_filesz);
        mapping(&ef, ph->p_offset);
    }
    if (size >= 16) {
        uint64_t a, b;
        memcpy(&a, data + size - 16, 8);
        memcpy(&b, data + size - 8, 8);
        mapping(&ef, a);
        mapping(&ef, b);
    }

    const uint8_t *id = NULL;
    size_t n = elf_file_build_id(&ef, &id);
    if (n)
        in_image(id, n);

    struct elf_range r;
    for (size_t i = 0; elf_file_segment_range(&ef, PT_NOTE, i, &r); i++) {
        in_image(ef.data + r.offset, r.size);
        struct elf_note_iter it;
        struct elf_note note;
        elf_notes_begin(&it, ef.data + r.offset, r.size);
        while (elf_notes_next(&it, &note)) {
            in_image(note.owner, note.owner_size);
            in_image(note.desc, note.desc_size);
        }
    }
    if (elf_file_section_range(&ef, ".eh_frame_hdr", &r))
        in_image(ef.data + r.offset, r.size);
    uint64_t bias;
    for (size_t i = 0; i < ef.n_phdrs; i++)
        (void)elf_file_load_bias(&ef, 0x7f0000000000ull, ef.phdrs[i].p_offset, i & 1, 4096, &bias);
    static const char *const tables[] = {".symtab", ".dynsym"};
    for (size_t t = 0; t < 2; t++) {
        struct elf_symbol_iter it;
        struct elf_symbol sym;
        if (!elf_symbols_begin(&it, &ef, tables[t]))
            continue;
        while (elf_symbols_next(&it, &sym))
            in_image(sym.name, strlen(sym.name) + 1);
    }

    size_t inflated_size = 0;
    void *inflated = elf_file_inflated(&ef, keep_unallocated, NULL, &inflated_size);
    if (inflated) {
        struct elf_file copy;
        if (elf_file_from_memory(&copy, inflated, inflated_size) != 0 || copy.n_shdrs != ef.n_shdrs)
            abort();
        elf_file_close(&copy);
        free(inflated);
    }

    struct usdt_note_list l;
    if (usdt_notes_read(&ef, &l) == 0)
        usdt_notes_free(&l);
    struct runtime_probe_list probes;
    if (runtime_probes_find(&ef, &probes) == 0)
        runtime_probes_free(&probes);
    elf_file_close(&ef);
    return 0;
}
