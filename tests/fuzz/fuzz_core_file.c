/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_core_file.c: libFuzzer target for the core-file reader (elf_core_from_memory) on hostile images: its
 * header checks, PT_LOAD index, and the notes it reads (NT_PRSTATUS, NT_PRPSINFO, NT_FILE, NT_AUXV). Asserts
 * that what it hands back lies inside the image (saved bytes, file names, auxv), that segments are sorted and
 * do not overlap, that a file's range is sane, and that every lookup (memory at an address, the file mapped
 * there, the segment that holds it) agrees with the index. */
#include "elf/elf_file.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t *image_start, *image_end;

static void in_image(const void *p, size_t len)
{
    const uint8_t *b = p;
    if (b < image_start || b > image_end || len > (size_t)(image_end - b))
        abort();
}

static void lookup(const struct elf_core *c, uint64_t addr)
{
    size_t len;
    enum elf_core_memory what;
    const uint8_t *bytes = elf_core_bytes(c, addr, &len, &what);
    const struct elf_core_segment *s = elf_core_segment_at(c, addr);
    if (bytes) {
        in_image(bytes, len);
        if (what != ELF_CORE_SAVED || len == 0 || !s)
            abort();
    } else if ((what == ELF_CORE_NO_SEGMENT) != (s == NULL) || what == ELF_CORE_SAVED) {
        abort();
    }
    if (s && (addr < s->vaddr || addr - s->vaddr >= s->memsz))
        abort();
    const struct elf_core_file *f = elf_core_file_at(c, addr);
    if (f && (addr < f->start || addr >= f->end))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    image_start = data;
    image_end = data + size;
    struct elf_core c;
    char err[512];
    if (elf_core_from_memory(&c, data, size, err, sizeof(err)) != 0) {
        if (!memchr(err, '\0', sizeof(err)) || err[0] == '\0' || strchr(err, '\n'))
            abort();                                   /* one line, always */
        return 0;
    }
    if (c.threads.n == 0)
        abort();
    for (size_t i = 0; i < c.segments.n; i++) {
        const struct elf_core_segment *s = &c.segments.v[i];
        if (s->filesz > s->memsz || s->memsz == 0)
            abort();
        if (s->filesz)
            in_image(data + s->offset, s->filesz);
        if (i > 0 && s->vaddr - c.segments.v[i - 1].vaddr < c.segments.v[i - 1].memsz)
            abort();                                   /* sorted, not overlapping */
        lookup(&c, s->vaddr);
        lookup(&c, s->vaddr + s->memsz - 1);
        lookup(&c, s->vaddr + s->filesz);
        lookup(&c, s->vaddr - 1);
    }
    for (size_t i = 0; i < c.files.n; i++) {
        const struct elf_core_file *f = &c.files.v[i];
        in_image(f->path, strlen(f->path) + 1);
        if (f->end < f->start || (i > 0 && f->start < c.files.v[i - 1].start))
            abort();
        lookup(&c, f->start);
        lookup(&c, f->end);
    }
    if (c.auxv)
        in_image(c.auxv, c.auxv_size);
    uint64_t value;
    (void)elf_core_auxv(&c, AT_ENTRY, &value);
    (void)elf_core_auxv(&c, AT_SYSINFO_EHDR, &value);
    if (memchr(c.command, '\0', sizeof(c.command)) == NULL || memchr(c.args, '\0', sizeof(c.args)) == NULL)
        abort();
    for (size_t i = 0; i < c.threads.n; i++)
        lookup(&c, c.threads.v[i].regs[19]);          /* rsp */
    elf_core_close(&c);
    return 0;
}
