/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core_builder.h: writes small x86-64 core files for the unit tests (test_elf_core.c, test_target_core.c), laid
 * out as the kernel lays them out: the ELF header, the program headers (the PT_NOTE first), the notes, then each
 * PT_LOAD's saved bytes. A test adds threads, files, auxv entries and segments, then takes the image. */
#ifndef TASKSPY_TEST_CORE_BUILDER_H
#define TASKSPY_TEST_CORE_BUILDER_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/user.h>

#define CORE_MAX_SEGMENTS 16
#define CORE_MAX_FILES 16

struct core_segment_spec {
    uint64_t vaddr, memsz;
    const void *bytes;         /* filesz bytes saved, from vaddr */
    uint64_t filesz;
    uint32_t flags;
};

struct core_file_spec {
    uint64_t start, end, offset;   /* offset in bytes (a multiple of 4096) */
    const char *path;
};

struct core_builder {
    uint8_t notes[65536];
    size_t notes_len;
    struct core_segment_spec segments[CORE_MAX_SEGMENTS];
    size_t n_segments;
    struct core_file_spec files[CORE_MAX_FILES];
    size_t n_files;
    uint64_t auxv[32];
    size_t n_auxv;             /* values in auxv (pairs) */
    uint8_t ident_class;       /* ELFCLASS64 unless set */
    uint16_t type, machine;    /* ET_CORE, EM_X86_64 unless set */
};

static inline void core_note(struct core_builder *b, const char *owner, uint32_t type, const void *desc, size_t len)
{
    Elf64_Nhdr nh = { .n_namesz = (uint32_t)strlen(owner) + 1, .n_descsz = (uint32_t)len, .n_type = type };
    uint8_t *at = b->notes + b->notes_len;
    memcpy(at, &nh, sizeof(nh));
    at += sizeof(nh);
    memset(at, 0, (nh.n_namesz + 3) & ~3u);
    memcpy(at, owner, nh.n_namesz);
    at += (nh.n_namesz + 3) & ~3u;
    memset(at, 0, (len + 3) & ~(size_t)3);
    memcpy(at, desc, len);
    at += (len + 3) & ~(size_t)3;
    b->notes_len = (size_t)(at - b->notes);
}

static inline void core_thread(struct core_builder *b, int tid, int signal, uint64_t rip, uint64_t rsp,
                               uint64_t fs_base)
{
    struct elf_prstatus st;
    memset(&st, 0, sizeof(st));
    st.pr_pid = tid;
    st.pr_cursig = (short)signal;
    struct user_regs_struct regs;
    memset(&regs, 0, sizeof(regs));
    regs.rip = rip;
    regs.rsp = rsp;
    regs.fs_base = fs_base;
    memcpy(st.pr_reg, &regs, sizeof(regs));
    core_note(b, "CORE", NT_PRSTATUS, &st, sizeof(st));
}

static inline void core_process(struct core_builder *b, int pid, const char *command, const char *args)
{
    struct elf_prpsinfo ps;
    memset(&ps, 0, sizeof(ps));
    ps.pr_pid = pid;
    strncpy(ps.pr_fname, command, sizeof(ps.pr_fname) - 1);
    strncpy(ps.pr_psargs, args, sizeof(ps.pr_psargs) - 1);
    core_note(b, "CORE", NT_PRPSINFO, &ps, sizeof(ps));
}

static inline void core_file(struct core_builder *b, uint64_t start, uint64_t end, uint64_t offset, const char *path)
{
    b->files[b->n_files++] = (struct core_file_spec){ start, end, offset, path };
}

/* the NT_FILE note of the files added so far (call once, after them) */
static inline void core_files_note(struct core_builder *b)
{
    uint8_t desc[16384];
    uint64_t head[2] = { b->n_files, 4096 };
    size_t len = sizeof(head);
    memcpy(desc, head, sizeof(head));
    for (size_t i = 0; i < b->n_files; i++) {
        uint64_t e[3] = { b->files[i].start, b->files[i].end, b->files[i].offset / 4096 };
        memcpy(desc + len, e, sizeof(e));
        len += sizeof(e);
    }
    for (size_t i = 0; i < b->n_files; i++) {
        size_t n = strlen(b->files[i].path) + 1;
        memcpy(desc + len, b->files[i].path, n);
        len += n;
    }
    core_note(b, "CORE", NT_FILE, desc, len);
}

static inline void core_auxv(struct core_builder *b, uint64_t type, uint64_t value)
{
    b->auxv[b->n_auxv++] = type;
    b->auxv[b->n_auxv++] = value;
}

static inline void core_auxv_note(struct core_builder *b)
{
    core_auxv(b, AT_NULL, 0);
    core_note(b, "CORE", NT_AUXV, b->auxv, b->n_auxv * sizeof(uint64_t));
}

static inline void core_segment(struct core_builder *b, uint64_t vaddr, uint64_t memsz, const void *bytes,
                                uint64_t filesz, uint32_t flags)
{
    b->segments[b->n_segments++] = (struct core_segment_spec){ vaddr, memsz, bytes, filesz, flags };
}

/* The core's bytes (malloc'd, *size of them). */
static inline uint8_t *core_image(const struct core_builder *b, size_t *size)
{
    size_t n_ph = 1 + b->n_segments;
    size_t notes_at = sizeof(Elf64_Ehdr) + n_ph * sizeof(Elf64_Phdr);
    size_t data_at = (notes_at + b->notes_len + 4095) & ~(size_t)4095;
    size_t total = data_at;
    for (size_t i = 0; i < b->n_segments; i++)
        total += b->segments[i].filesz;
    uint8_t *image = calloc(1, total);
    if (!image)
        return NULL;
    Elf64_Ehdr eh = { .e_type = b->type ? b->type : ET_CORE, .e_machine = b->machine ? b->machine : EM_X86_64,
                      .e_version = EV_CURRENT, .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
                      .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = (uint16_t)n_ph };
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = b->ident_class ? b->ident_class : ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    memcpy(image, &eh, sizeof(eh));
    Elf64_Phdr note = { .p_type = PT_NOTE, .p_offset = notes_at, .p_filesz = b->notes_len, .p_align = 4 };
    memcpy(image + sizeof(eh), &note, sizeof(note));
    memcpy(image + notes_at, b->notes, b->notes_len);
    size_t at = data_at;
    for (size_t i = 0; i < b->n_segments; i++) {
        const struct core_segment_spec *s = &b->segments[i];
        Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = s->flags, .p_offset = at, .p_vaddr = s->vaddr,
                          .p_filesz = s->filesz, .p_memsz = s->memsz, .p_align = 4096 };
        memcpy(image + sizeof(eh) + (1 + i) * sizeof(Elf64_Phdr), &ph, sizeof(ph));
        if (s->filesz)
            memcpy(image + at, s->bytes, s->filesz);
        at += s->filesz;
    }
    *size = total;
    return image;
}

#endif
