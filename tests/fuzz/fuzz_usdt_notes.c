/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_usdt_notes.c: libFuzzer target for the stapsdt note parser (usdt_notes_parse). Input layout:
 *   byte 0      bit 0: .stapsdt.base present; bits 1-3: number of program headers (0-7)
 *   bytes 1-8   .stapsdt.base address (little-endian)
 *   then        that many Elf64_Phdr (56 bytes each), placed in a synthetic ELF header built here
 *   the rest    the raw .note.stapsdt payload.
 * Every note kept must have a pc inside an executable PT_LOAD, a semaphore (if any) inside a writable one,
 * and arguments the arg parser survives. */
#include "elf/elf_file.h"
#include "sampler/probes/usdt_args.h"
#include "sampler/probes/usdt_notes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PHDRS 7

/* The segment holding vaddr; a segment whose file range wraps or does not fit an int64_t offset holds
 * nothing (file offsets become uprobe offsets and elf_file_vaddr_to_offset's int64_t results). */
static const Elf64_Phdr *segment_of(const struct elf_file *ef, uint64_t vaddr)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (ph->p_type == PT_LOAD && ph->p_offset <= INT64_MAX && ph->p_filesz <= (uint64_t)INT64_MAX - ph->p_offset &&
            vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz)
            return ph;
    }
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    bool has_base = data[0] & 1;
    size_t nph = (data[0] >> 1) & 7;
    uint64_t base;
    memcpy(&base, data + 1, 8);
    data += 9;
    size -= 9;
    if (size < nph * sizeof(Elf64_Phdr))
        nph = size / sizeof(Elf64_Phdr);

    static _Alignas(16) uint8_t image[sizeof(Elf64_Ehdr) + MAX_PHDRS * sizeof(Elf64_Phdr)];
    memset(image, 0, sizeof(image));
    Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_DYN;
    eh->e_machine = EM_X86_64;
    eh->e_version = EV_CURRENT;
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_phoff = sizeof(Elf64_Ehdr);
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = (Elf64_Half)nph;
    memcpy(image + sizeof(Elf64_Ehdr), data, nph * sizeof(Elf64_Phdr));
    data += nph * sizeof(Elf64_Phdr);
    size -= nph * sizeof(Elf64_Phdr);

    struct elf_file ef;
    if (elf_file_from_memory(&ef, image, sizeof(Elf64_Ehdr) + nph * sizeof(Elf64_Phdr)) != 0)
        abort();
    /* an exact-size heap copy, so reading one byte past the notes is caught */
    uint8_t *notes = malloc(size ? size : 1);
    if (!notes)
        return 0;
    memcpy(notes, data, size);

    struct usdt_note_list l;
    memset(&l, 0, sizeof(l));
    if (usdt_notes_parse(&ef, size ? notes : NULL, size, has_base, base, &l) == 0) {
        for (size_t i = 0; i < l.n; i++) {
            const struct usdt_note *n = &l.v[i];
            if (!n->provider[0] || !n->name[0])
                abort();
            const Elf64_Phdr *text = segment_of(&ef, n->pc);
            if (!text || !(text->p_flags & PF_X) || n->pc_offset != text->p_offset + (n->pc - text->p_vaddr) ||
                n->pc_offset < text->p_offset)
                abort();                          /* < p_offset: the offset wrapped around 2^64 */
            if (n->semaphore) {
                const Elf64_Phdr *d = segment_of(&ef, n->semaphore);
                if (!d || !(d->p_flags & PF_W) ||
                    n->semaphore_offset != d->p_offset + (n->semaphore - d->p_vaddr) || n->semaphore_offset < d->p_offset)
                    abort();
            }
            if (n->marker != usdt_marker_from_name(n->name))
                abort();
            struct usdt_arg a;
            for (unsigned k = 0; k < 4 && usdt_arg_parse(n->args, k, &a) != USDT_ARG_ENOARG; k++)
                ;
            (void)usdt_provider_selected("auto", n->provider);
        }
    }
    usdt_notes_free(&l);
    free(notes);
    return 0;
}
