/* elf_file.h: read-only view of a 64-bit ELF file mapped into memory, with bounds-checked access to its
 * sections and program headers. Used by the unwinder (.eh_frame_hdr) and the USDT note reader. Every
 * offset taken from the file is checked before use: the file is outside input. */
#ifndef TASKSPY_ELF_FILE_H
#define TASKSPY_ELF_FILE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file {
    const uint8_t *data;       /* whole file */
    size_t size;
    bool mapped;               /* data came from mmap (else borrowed) */
    const Elf64_Ehdr *ehdr;
    const Elf64_Shdr *shdrs;   /* NULL when the file has no usable section table */
    size_t n_shdrs;
    const char *shstrtab;
    size_t shstrtab_size;
    const Elf64_Phdr *phdrs;
    size_t n_phdrs;
};

/* Open and map a file. Returns 0, or -1 with errno set (EINVAL/ENOEXEC for a file that is not ELF64). */
int elf_file_open(struct elf_file *ef, const char *path);
/* Parse an ELF image held in memory (not owned). Returns 0 or -1. */
int elf_file_from_memory(struct elf_file *ef, const void *data, size_t size);
void elf_file_close(struct elf_file *ef);

/* Section by name, or NULL. */
const Elf64_Shdr *elf_file_section(const struct elf_file *ef, const char *name);
/* Bytes of a section inside the file, or NULL for SHT_NOBITS or out-of-bounds sections. */
const uint8_t *elf_file_section_data(const struct elf_file *ef, const Elf64_Shdr *sh, size_t *size);
/* Link-time virtual address to file offset through the PT_LOAD headers; -1 when no segment holds it. */
int64_t elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr);
/* File offset to link-time virtual address through the PT_LOAD headers; returns false if none holds it. */
bool elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr);
/* The GNU build-id note, if any. Returns its length (0 if none) and points *id at it. */
size_t elf_file_build_id(const struct elf_file *ef, const uint8_t **id);

#endif
