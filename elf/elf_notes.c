/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_notes.c: walking ELF notes (a note section's or PT_NOTE segment's payload: header, owner, desc,
 * each padded to 4 bytes), and the GNU build-id note, found once when a file is opened. */
#include "elf/elf_internal.h"

#include <string.h>

#define NOTE_ALIGN(n) (((uint64_t)(n) + 3) & ~(uint64_t)3)

void elf_notes_begin(struct elf_note_iter *it, const uint8_t *data, size_t size)
{
    *it = (struct elf_note_iter){ .data = data, .size = data ? size : 0 };
}

bool elf_notes_next(struct elf_note_iter *it, struct elf_note *note)
{
    if (it->broken || it->size - it->at < sizeof(Elf64_Nhdr))
        return false;
    Elf64_Nhdr nh;
    memcpy(&nh, it->data + it->at, sizeof(nh));
    size_t at = it->at + sizeof(nh);
    uint64_t owner_size = NOTE_ALIGN(nh.n_namesz), desc_size = NOTE_ALIGN(nh.n_descsz);
    if (owner_size > it->size - at || desc_size > it->size - at - owner_size) {
        it->broken = true;
        it->broken_type = nh.n_type;
        return false;
    }
    *note = (struct elf_note){ .type = nh.n_type, .owner = it->data + at, .owner_size = nh.n_namesz,
                               .desc = it->data + at + owner_size, .desc_size = nh.n_descsz };
    it->at = at + owner_size + desc_size;
    return true;
}

bool elf_note_owner_is(const struct elf_note *note, const char *owner)
{
    size_t len = strlen(owner) + 1;
    return note->owner_size == len && memcmp(note->owner, owner, len) == 0;
}

static bool build_id_in(struct elf_file *ef, const uint8_t *data, size_t size)
{
    struct elf_note_iter it;
    struct elf_note note;
    elf_notes_begin(&it, data, size);
    while (elf_notes_next(&it, &note)) {
        if (note.type == NT_GNU_BUILD_ID && elf_note_owner_is(&note, "GNU") && note.desc_size > 0) {
            ef->build_id = note.desc;
            ef->build_id_len = note.desc_size;
            return true;
        }
    }
    return false;
}

void elf_notes_find_build_id(struct elf_file *ef)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (ph->p_type == PT_NOTE && elf_range_ok(ef->size, ph->p_offset, ph->p_filesz) &&
            build_id_in(ef, ef->data + ph->p_offset, ph->p_filesz))
            return;
    }
    for (size_t i = 0; i < ef->n_shdrs; i++) {
        size_t size;
        const uint8_t *data = ef->shdrs[i].sh_type == SHT_NOTE ? elf_file_section_data(ef, &ef->shdrs[i], &size)
                                                               : NULL;
        if (data && build_id_in(ef, data, size))
            return;
    }
}

size_t elf_file_build_id(const struct elf_file *ef, const uint8_t **id)
{
    *id = ef->build_id;
    return ef->build_id_len;
}
