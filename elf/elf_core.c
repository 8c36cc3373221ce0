/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_core.c: core files (x86-64 Linux, as the kernel and gdb's gcore write them): the file checked (ELF64,
 * ET_CORE, EM_X86_64, every segment and note inside the file), its PT_LOAD segments indexed by address, and its
 * notes read: NT_PRSTATUS (a thread: its id, signal and registers), NT_PRPSINFO (the process), NT_FILE (the
 * files mapped), NT_AUXV. A core cut short by a size limit is refused whole: which of its bytes are missing
 * cannot be told from the rest. */
#include "elf/elf_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>

_Static_assert(sizeof(((struct elf_prstatus *)0)->pr_reg) == sizeof(((struct elf_core_thread *)0)->regs),
               "x86-64's elf_gregset_t is 27 registers");

/* the program headers, also past 65535 of them (PN_XNUM: the count is section 0's sh_info) */
static bool program_headers(const struct elf_file *ef, const Elf64_Phdr **out, size_t *n)
{
    const Elf64_Ehdr *eh = ef->ehdr;
    uint64_t count = eh->e_phnum;
    if (count == PN_XNUM) {
        if (!elf_range_ok(ef->size, eh->e_shoff, sizeof(Elf64_Shdr)) || eh->e_shoff % _Alignof(Elf64_Shdr) != 0)
            return false;
        count = ((const Elf64_Shdr *)(ef->data + eh->e_shoff))->sh_info;
    }
    if (count == 0 || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % _Alignof(Elf64_Phdr) != 0 ||
        !elf_range_ok(ef->size, eh->e_phoff, count * sizeof(Elf64_Phdr)))
        return false;
    *out = (const Elf64_Phdr *)(ef->data + eh->e_phoff);
    *n = (size_t)count;
    return true;
}

static int by_vaddr(const void *a, const void *b)
{
    const struct elf_core_segment *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int by_start(const void *a, const void *b)
{
    const struct elf_core_file *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void read_prstatus(struct elf_core *c, const struct elf_note *note, bool *failed)
{
    struct elf_prstatus st;
    if (note->desc_size < sizeof(st))
        return;                       /* another layout (a 32-bit thread of an x32 core): not a thread we read */
    memcpy(&st, note->desc, sizeof(st));
    struct elf_core_thread *t = vec_push(&c->threads);
    if (!t) {
        *failed = true;
        return;
    }
    t->tid = st.pr_pid;
    t->signal = st.pr_cursig;
    memcpy(t->regs, st.pr_reg, sizeof(t->regs));
}

static void read_prpsinfo(struct elf_core *c, const struct elf_note *note)
{
    struct elf_prpsinfo ps;
    if (note->desc_size < sizeof(ps))
        return;
    memcpy(&ps, note->desc, sizeof(ps));
    c->pid = ps.pr_pid;
    memcpy(c->command, ps.pr_fname, sizeof(ps.pr_fname));
    c->command[sizeof(ps.pr_fname)] = '\0';
    memcpy(c->args, ps.pr_psargs, sizeof(ps.pr_psargs));
    c->args[sizeof(ps.pr_psargs)] = '\0';
}

/* NT_FILE: count, page size, count x (start, end, page offset), then count NUL-terminated names. False when its
   sizes do not hold together. */
static bool read_files(struct elf_core *c, const struct elf_note *note, bool *failed)
{
    uint64_t head[2];
    if (note->desc_size < sizeof(head))
        return false;
    memcpy(head, note->desc, sizeof(head));
    uint64_t count = head[0], page = head[1], size = note->desc_size;
    if (count > (size - sizeof(head)) / 24 || page == 0 || (page & (page - 1)) != 0)
        return false;
    const uint8_t *entries = note->desc + sizeof(head);
    const char *name = (const char *)entries + count * 24, *end = (const char *)note->desc + size;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t e[3];
        memcpy(e, entries + i * 24, sizeof(e));
        const char *nul = name < end ? memchr(name, '\0', (size_t)(end - name)) : NULL;
        if (!nul || e[1] < e[0] || e[2] > UINT64_MAX / page)
            return false;
        struct elf_core_file *f = vec_push(&c->files);
        if (!f) {
            *failed = true;
            return true;
        }
        *f = (struct elf_core_file){ .start = e[0], .end = e[1], .offset = e[2] * page, .path = name };
        name = nul + 1;
    }
    return true;
}

/* Walk a PT_NOTE segment's notes. Returns 0, or -1 with err. */
static int read_notes(struct elf_core *c, const uint8_t *data, size_t size, char *err, size_t errlen)
{
    struct elf_note_iter it;
    struct elf_note note;
    bool failed = false;
    elf_notes_begin(&it, data, size);
    while (!failed && elf_notes_next(&it, &note)) {
        bool core_owner = elf_note_owner_is(&note, "CORE");
        if (core_owner && note.type == NT_PRSTATUS)
            read_prstatus(c, &note, &failed);
        else if (core_owner && note.type == NT_PRPSINFO)
            read_prpsinfo(c, &note);
        else if (core_owner && note.type == NT_AUXV && !c->auxv) {
            c->auxv = note.desc;
            c->auxv_size = note.desc_size - note.desc_size % 16;
        } else if (core_owner && note.type == NT_FILE && c->files.n == 0 && !read_files(c, &note, &failed)) {
            snprintf(err, errlen, "its list of mapped files (NT_FILE) is broken");
            return -1;
        }
    }
    if (failed) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (it.broken) {
        snprintf(err, errlen, "its notes are broken (a note of type 0x%x runs past its segment)", it.broken_type);
        return -1;
    }
    return 0;
}

/* The checks of the ELF header that come before anything else is read. */
static int check_header(const struct elf_file *ef, const void *data, size_t size, char *err, size_t errlen)
{
    const uint8_t *id = data;
    if (size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) != 0) {
        snprintf(err, errlen, "not a core file (not ELF)");
        return -1;
    }
    if (id[EI_CLASS] == ELFCLASS32) {
        uint16_t type = size >= 18 ? (uint16_t)(id[16] | id[17] << 8) : 0;   /* e_type, little-endian */
        snprintf(err, errlen, "%s: taskspy reads 64-bit (x86-64) programs only",
                 type == ET_CORE ? "a 32-bit core" : "a 32-bit ELF file, not a core");
        return -1;
    }
    if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB || !ef->ehdr) {
        snprintf(err, errlen, "not a core file (%s)", size < sizeof(Elf64_Ehdr) ? "cut inside its ELF header"
                                                      : "not a little-endian 64-bit ELF file");
        return -1;
    }
    if (ef->ehdr->e_type != ET_CORE) {
        snprintf(err, errlen, "not a core file but an ELF %s", ef->ehdr->e_type == ET_EXEC ? "executable"
                                                             : ef->ehdr->e_type == ET_DYN ? "executable or shared object"
                                                             : ef->ehdr->e_type == ET_REL ? "object file" : "file");
        return -1;
    }
    if (ef->ehdr->e_machine != EM_X86_64) {
        snprintf(err, errlen, "a core of another machine (ELF machine %u): taskspy reads x86-64 programs only",
                 (unsigned)ef->ehdr->e_machine);
        return -1;
    }
    return 0;
}

int elf_core_from_memory(struct elf_core *c, const void *data, size_t size, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    int parsed = elf_file_from_memory(&c->elf, data, size);
    if (check_header(parsed == 0 ? &c->elf : &(struct elf_file){ 0 }, data, size, err, errlen) != 0)
        return -1;
    const Elf64_Phdr *ph;
    size_t n;
    if (!program_headers(&c->elf, &ph, &n)) {
        snprintf(err, errlen, "its program headers are missing or run past the end of the file (truncated?)");
        return -1;
    }
    /* every byte the headers say the core holds must be in the file: a core cut by a size limit (ulimit -c,
       systemd-coredump's ProcessSizeMax) is refused whole */
    uint64_t needed = 0;
    for (size_t i = 0; i < n; i++)
        if ((ph[i].p_type == PT_LOAD || ph[i].p_type == PT_NOTE) && ph[i].p_filesz > 0) {
            if (ph[i].p_offset > UINT64_MAX - ph[i].p_filesz) {
                snprintf(err, errlen, "its segment %zu runs past any file size", i);
                return -1;
            }
            if (ph[i].p_offset + ph[i].p_filesz > needed)
                needed = ph[i].p_offset + ph[i].p_filesz;
        }
    if (needed > size) {
        snprintf(err, errlen, "truncated: its segments need %" PRIu64 " bytes, the file has %zu (a core cut by a "
                 "size limit: ulimit -c, systemd-coredump's ProcessSizeMax)", needed, size);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (ph[i].p_type == PT_NOTE && ph[i].p_filesz > 0) {
            if (read_notes(c, c->elf.data + ph[i].p_offset, ph[i].p_filesz, err, errlen) != 0) {
                elf_core_close(c);
                return -1;
            }
        } else if (ph[i].p_type == PT_LOAD && ph[i].p_memsz > 0) {
            struct elf_core_segment *s = vec_push(&c->segments);
            if (!s) {
                snprintf(err, errlen, "out of memory");
                elf_core_close(c);
                return -1;
            }
            uint64_t room = UINT64_MAX - ph[i].p_vaddr;
            *s = (struct elf_core_segment){ .vaddr = ph[i].p_vaddr, .memsz = ph[i].p_memsz < room ? ph[i].p_memsz : room,
                                            .offset = ph[i].p_offset, .filesz = ph[i].p_filesz, .flags = ph[i].p_flags };
            if (s->filesz > s->memsz)
                s->filesz = s->memsz;
        }
    }
    if (c->threads.n == 0) {
        snprintf(err, errlen, "no thread in its notes (no NT_PRSTATUS): not a process's core, or its notes were "
                 "cut");
        elf_core_close(c);
        return -1;
    }
    if (!c->pid)
        c->pid = c->threads.v[0].tid;
    if (c->segments.n > 1)
        qsort(c->segments.v, c->segments.n, sizeof(*c->segments.v), by_vaddr);
    if (c->files.n > 1)
        qsort(c->files.v, c->files.n, sizeof(*c->files.v), by_start);
    /* overlapping segments are not how a process's memory looks: each is cut where the next begins (one cut to
       nothing is dropped) */
    size_t kept = 0;
    for (size_t i = 0; i < c->segments.n; i++) {
        struct elf_core_segment s = c->segments.v[i];
        if (i + 1 < c->segments.n && c->segments.v[i + 1].vaddr - s.vaddr < s.memsz) {
            s.memsz = c->segments.v[i + 1].vaddr - s.vaddr;
            if (s.filesz > s.memsz)
                s.filesz = s.memsz;
        }
        if (s.memsz > 0)
            c->segments.v[kept++] = s;
    }
    c->segments.n = kept;
    return 0;
}

int elf_core_open(struct elf_core *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    struct elf_file mapped;
    if (elf_file_open(&mapped, path) != 0) {
        if (errno != ENOEXEC) {
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
            return -1;
        }
        /* elf_file_open maps only ELF64 images: read what the file is, to say why */
        FILE *f = fopen(path, "re");
        uint8_t id[sizeof(Elf64_Ehdr)] = { 0 };
        size_t got = f ? fread(id, 1, sizeof(id), f) : 0;
        if (f)
            fclose(f);
        char why[200];
        if (elf_core_from_memory(c, id, got, why, sizeof(why)) != 0)
            snprintf(err, errlen, "%s is %s", path, why);
        else
            snprintf(err, errlen, "%s is not a core file", path);
        return -1;
    }
    char why[400];
    if (elf_core_from_memory(c, mapped.data, mapped.size, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s is %s", path, why);
        elf_file_close(&mapped);
        return -1;
    }
    c->elf.mapped = true;             /* closed with the core */
    return 0;
}

void elf_core_close(struct elf_core *c)
{
    vec_free(&c->segments);
    vec_free(&c->threads);
    vec_free(&c->files);
    elf_file_close(&c->elf);
    memset(c, 0, sizeof(*c));
}

const struct elf_core_segment *elf_core_segment_at(const struct elf_core *c, uint64_t addr)
{
    size_t lo = 0, hi = c->segments.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct elf_core_segment *s = &c->segments.v[mid];
        if (addr < s->vaddr)
            hi = mid;
        else if (addr - s->vaddr >= s->memsz)
            lo = mid + 1;
        else
            return s;
    }
    return NULL;
}

const uint8_t *elf_core_bytes(const struct elf_core *c, uint64_t addr, size_t *len, enum elf_core_memory *what)
{
    const struct elf_core_segment *s = elf_core_segment_at(c, addr);
    *len = 0;
    if (!s || addr - s->vaddr >= s->filesz) {
        *what = s ? ELF_CORE_LEFT_OUT : ELF_CORE_NO_SEGMENT;
        return NULL;
    }
    *what = ELF_CORE_SAVED;
    *len = (size_t)(s->filesz - (addr - s->vaddr));
    return c->elf.data + s->offset + (addr - s->vaddr);
}

const struct elf_core_file *elf_core_file_at(const struct elf_core *c, uint64_t addr)
{
    size_t lo = 0, hi = c->files.n;
    while (lo < hi) {                 /* the last file starting at or below addr */
        size_t mid = lo + (hi - lo) / 2;
        if (c->files.v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && addr < c->files.v[lo - 1].end ? &c->files.v[lo - 1] : NULL;
}

bool elf_core_auxv(const struct elf_core *c, uint64_t type, uint64_t *value)
{
    for (size_t at = 0; c->auxv && at + 16 <= c->auxv_size; at += 16) {
        uint64_t e[2];
        memcpy(e, c->auxv + at, sizeof(e));
        if (e[0] == AT_NULL)
            break;
        if (e[0] == type) {
            *value = e[1];
            return true;
        }
    }
    return false;
}
