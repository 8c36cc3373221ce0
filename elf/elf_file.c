/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_file.c: opening an ELF64 file (mapped, or an image already in memory) and finding its sections by
 * name, bounds-checked. */
#include "elf/elf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int elf_file_from_memory(struct elf_file *ef, const void *data, size_t size)
{
    memset(ef, 0, sizeof(*ef));
    ef->data = data;
    ef->size = size;
    if (size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) != 0 ||
        ((const uint8_t *)data)[EI_CLASS] != ELFCLASS64) {
        errno = ENOEXEC;
        return -1;
    }
    ef->ehdr = data;
    const Elf64_Ehdr *eh = ef->ehdr;
    if (eh->e_phnum && eh->e_phentsize == sizeof(Elf64_Phdr) &&
        elf_range_ok(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) &&
        eh->e_phoff % _Alignof(Elf64_Phdr) == 0) {
        ef->phdrs = (const Elf64_Phdr *)(ef->data + eh->e_phoff);
        ef->n_phdrs = eh->e_phnum;
    }
    if (eh->e_shnum && eh->e_shentsize == sizeof(Elf64_Shdr) &&
        elf_range_ok(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) &&
        eh->e_shoff % _Alignof(Elf64_Shdr) == 0) {
        ef->shdrs = (const Elf64_Shdr *)(ef->data + eh->e_shoff);
        ef->n_shdrs = eh->e_shnum;
        if (eh->e_shstrndx < ef->n_shdrs) {
            const Elf64_Shdr *s = &ef->shdrs[eh->e_shstrndx];
            if (s->sh_type != SHT_NOBITS && elf_range_ok(size, s->sh_offset, s->sh_size) && s->sh_size > 0) {
                ef->shstrtab = (const char *)ef->data + s->sh_offset;
                ef->shstrtab_size = s->sh_size;
            }
        }
    }
    elf_notes_find_build_id(ef);
    return 0;
}

int elf_file_from_loaded_image(struct elf_file *ef, const void *base)
{
    memset(ef, 0, sizeof(*ef));
    const Elf64_Ehdr *eh = base;
    if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phentsize != sizeof(Elf64_Phdr)) {
        errno = ENOEXEC;
        return -1;
    }
    /* The image is exactly as large as what its headers describe; never read past its mapping. */
    uint64_t size = (uint64_t)eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)((const uint8_t *)base + eh->e_phoff);
    for (size_t i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
            size = ph[i].p_offset + ph[i].p_filesz;
    return elf_file_from_memory(ef, base, (size_t)size);
}

int elf_file_open(struct elf_file *ef, const char *path)
{
    memset(ef, 0, sizeof(*ef));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        errno = ENOEXEC;
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        errno = e;
        return -1;
    }
    if (elf_file_from_memory(ef, p, (size_t)st.st_size) != 0) {
        munmap(p, (size_t)st.st_size);
        errno = ENOEXEC;
        return -1;
    }
    ef->mapped = true;
    return 0;
}

void elf_file_close(struct elf_file *ef)
{
    if (ef->mapped && ef->data)
        munmap((void *)ef->data, ef->size);
    memset(ef, 0, sizeof(*ef));
}

const Elf64_Shdr *elf_file_section(const struct elf_file *ef, const char *name)
{
    if (!ef->shdrs || !ef->shstrtab)
        return NULL;
    size_t len = strlen(name);
    for (size_t i = 0; i < ef->n_shdrs; i++) {
        uint32_t off = ef->shdrs[i].sh_name;
        if (off < ef->shstrtab_size && ef->shstrtab_size - off > len &&
            memcmp(ef->shstrtab + off, name, len + 1) == 0)
            return &ef->shdrs[i];
    }
    return NULL;
}

const uint8_t *elf_file_section_data(const struct elf_file *ef, const Elf64_Shdr *sh, size_t *size)
{
    if (!sh || sh->sh_type == SHT_NOBITS || !elf_range_ok(ef->size, sh->sh_offset, sh->sh_size))
        return NULL;
    if (size)
        *size = sh->sh_size;
    return ef->data + sh->sh_offset;
}


bool elf_file_section_addr(const struct elf_file *ef, const char *name, uint64_t *addr)
{
    const Elf64_Shdr *sh = elf_file_section(ef, name);
    if (sh)
        *addr = sh->sh_addr;
    return sh != NULL;
}

bool elf_file_note_section(const struct elf_file *ef, const char *name, const uint8_t **data, size_t *size)
{
    const Elf64_Shdr *sh = elf_file_section(ef, name);
    if (!sh || sh->sh_type != SHT_NOTE)
        return false;
    *size = 0;
    *data = elf_file_section_data(ef, sh, size);
    return true;
}
