/* elf_layout.c: reads the two things symbolize needs from an ELF64 file's headers, with pread and bounds
 * checks (the file is outside input): the PT_LOAD segments, to turn a file offset into the link-time
 * address libbfd works in (PIE, shared objects, non-PIE executables, LLD layouts where text vaddr and
 * file offset differ), and the GNU build-id note, to find separate debug files. */
#include "symbolize/symbolize_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ELF_MAX_PHDRS 256
#define ELF_MAX_NOTE_BYTES (64 * 1024)

static bool read_exact(int fd, void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

/* Walks the notes in buf for NT_GNU_BUILD_ID owned by "GNU". */
static void find_build_id(struct elf_layout *lay, const uint8_t *buf, size_t size)
{
    size_t pos = 0;
    while (size - pos >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        memcpy(&nh, buf + pos, sizeof(nh));
        pos += sizeof(nh);
        size_t name_sz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
        size_t desc_sz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
        if (name_sz > size - pos || desc_sz > size - pos - name_sz)
            return;
        const uint8_t *name = buf + pos;
        const uint8_t *desc = buf + pos + name_sz;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
            nh.n_descsz > 0 && nh.n_descsz <= ELF_LAYOUT_MAX_BUILD_ID) {
            memcpy(lay->build_id, desc, nh.n_descsz);
            lay->build_id_len = nh.n_descsz;
            return;
        }
        pos += name_sz + desc_sz;
    }
}

int elf_layout_read(struct elf_layout *lay, const char *path)
{
    memset(lay, 0, sizeof(*lay));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = -1;
    struct stat st;
    Elf64_Ehdr eh;
    Elf64_Phdr *phdrs = NULL;
    uint8_t *note = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !read_exact(fd, &eh, sizeof(eh), 0))
        goto out;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > ELF_MAX_PHDRS)
        goto out;
    uint64_t file_size = (uint64_t)st.st_size;
    uint64_t ph_bytes = (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);
    if (eh.e_phoff > file_size || ph_bytes > file_size - eh.e_phoff)
        goto out;
    phdrs = malloc(ph_bytes ? ph_bytes : 1);
    if (!phdrs || !read_exact(fd, phdrs, ph_bytes, eh.e_phoff))
        goto out;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        const Elf64_Phdr *ph = &phdrs[i];
        if (ph->p_type == PT_LOAD && lay->n_loads < ELF_LAYOUT_MAX_LOADS) {
            lay->loads[lay->n_loads++] = (struct elf_load_segment){
                .offset = ph->p_offset, .vaddr = ph->p_vaddr, .filesz = ph->p_filesz, .memsz = ph->p_memsz };
        } else if (ph->p_type == PT_NOTE && !lay->build_id_len && ph->p_filesz <= ELF_MAX_NOTE_BYTES &&
                   ph->p_offset <= file_size && ph->p_filesz <= file_size - ph->p_offset) {
            uint8_t *buf = realloc(note, ph->p_filesz ? ph->p_filesz : 1);
            if (!buf)
                goto out;
            note = buf;
            if (read_exact(fd, note, ph->p_filesz, ph->p_offset))
                find_build_id(lay, note, ph->p_filesz);
        }
    }
    rc = 0;
out:
    free(note);
    free(phdrs);
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

bool elf_layout_offset_to_vaddr(const struct elf_layout *lay, uint64_t offset, uint64_t *vaddr)
{
    for (size_t i = 0; i < lay->n_loads; i++) {
        const struct elf_load_segment *s = &lay->loads[i];
        if (offset >= s->offset && offset - s->offset < s->filesz) {
            *vaddr = s->vaddr + (offset - s->offset);
            return true;
        }
    }
    return false;
}
