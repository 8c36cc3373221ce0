/* elf_file.c: bounds-checked reading of a mapped ELF64 file (sections, program headers, notes). */
#include "elf/elf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static bool range_ok(size_t total, uint64_t off, uint64_t len)
{
    return off <= total && len <= total - off;
}

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
        range_ok(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) &&
        eh->e_phoff % _Alignof(Elf64_Phdr) == 0) {
        ef->phdrs = (const Elf64_Phdr *)(ef->data + eh->e_phoff);
        ef->n_phdrs = eh->e_phnum;
    }
    if (eh->e_shnum && eh->e_shentsize == sizeof(Elf64_Shdr) &&
        range_ok(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) &&
        eh->e_shoff % _Alignof(Elf64_Shdr) == 0) {
        ef->shdrs = (const Elf64_Shdr *)(ef->data + eh->e_shoff);
        ef->n_shdrs = eh->e_shnum;
        if (eh->e_shstrndx < ef->n_shdrs) {
            const Elf64_Shdr *s = &ef->shdrs[eh->e_shstrndx];
            if (s->sh_type != SHT_NOBITS && range_ok(size, s->sh_offset, s->sh_size) && s->sh_size > 0) {
                ef->shstrtab = (const char *)ef->data + s->sh_offset;
                ef->shstrtab_size = s->sh_size;
            }
        }
    }
    return 0;
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
    if (!sh || sh->sh_type == SHT_NOBITS || !range_ok(ef->size, sh->sh_offset, sh->sh_size))
        return NULL;
    if (size)
        *size = sh->sh_size;
    return ef->data + sh->sh_offset;
}

/* A PT_LOAD whose file range cannot overflow an offset (outside input may say anything). */
static bool load_segment_sane(const Elf64_Phdr *ph)
{
    return ph->p_type == PT_LOAD && ph->p_offset <= (uint64_t)INT64_MAX &&
           ph->p_filesz <= (uint64_t)INT64_MAX - ph->p_offset;
}

int64_t elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (load_segment_sane(ph) && vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz)
            return (int64_t)(ph->p_offset + (vaddr - ph->p_vaddr));
    }
    return -1;
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

static size_t build_id_in(const uint8_t *p, size_t size, const uint8_t **id)
{
    size_t off = 0;
    while (size - off >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        memcpy(&nh, p + off, sizeof(nh));
        off += sizeof(nh);
        size_t namesz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
        size_t descsz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
        if (namesz > size - off || descsz > size - off - namesz)
            return 0;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(p + off, "GNU", 4) == 0) {
            *id = p + off + namesz;
            return nh.n_descsz;
        }
        off += namesz + descsz;
    }
    return 0;
}

size_t elf_file_build_id(const struct elf_file *ef, const uint8_t **id)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        if (ph->p_type == PT_NOTE && range_ok(ef->size, ph->p_offset, ph->p_filesz)) {
            size_t n = build_id_in(ef->data + ph->p_offset, ph->p_filesz, id);
            if (n)
                return n;
        }
    }
    for (size_t i = 0; i < ef->n_shdrs; i++) {
        size_t sz;
        if (ef->shdrs[i].sh_type != SHT_NOTE)
            continue;
        const uint8_t *d = elf_file_section_data(ef, &ef->shdrs[i], &sz);
        size_t n = d ? build_id_in(d, sz, id) : 0;
        if (n)
            return n;
    }
    return 0;
}
