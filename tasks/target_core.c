/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target_core.c: a core file as the task reader's target. Memory: the bytes the core saved (its PT_LOAD
 * segments); where it left them out (the kernel's coredump_filter skips file-backed pages that were never
 * written: code, read-only data; gdb's gcore writes no segment for them), the file the core names for that
 * address (NT_FILE) at the mapped offset, once the file is known to be the one that was mapped: its GNU build id
 * equal to the one in the core's own copy of the file's first page (kept by both writers: coredump_filter's
 * "ELF headers" bit). A file's pages that the process wrote (relocated data, RELRO, writable segments) are never
 * read from the file: the file holds them as they were before. What neither can give is counted by page (the
 * target's gaps). Threads: NT_PRSTATUS, whose x86-64 registers carry the thread pointer (fs_base); a core
 * whose registers lack it (an old gdb) is listed through libthread_db over the core's memory. */
#include "tasks/tasks_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <time.h>

#include "base/u64_map.h"
#include "base/vec.h"

#define REG_INDEX(name) (offsetof(struct user_regs_struct, name) / sizeof(uint64_t))
#define DELETED_SUFFIX " (deleted)"

enum object_state {
    OBJECT_CHECKED,            /* its build id is the core's */
    OBJECT_UNCHECKED,          /* the core holds no build id of it: used as found */
    OBJECT_OTHER_BUILD,        /* a file of another build: not read */
    OBJECT_MISSING,            /* it cannot be opened (not on this machine): not read */
    OBJECT_NOT_ELF,            /* a data file (a locale archive): not read */
};

/* One file the core names, and the file taskspy reads for it. */
struct core_object {
    char *path;                /* as the core names it, " (deleted)" cut */
    char *file;                /* the file read for it (path, or --exe for the program) */
    enum object_state state;
    struct elf_file elf;       /* open when CHECKED or UNCHECKED */
    bool placed;               /* bias known: from its mapping of offset 0 (a mapping of a later page can hold
                                  two segments' bytes, at two places) */
    uint64_t bias;
    int open_errno;            /* MISSING: why */
    char core_build_id[65];    /* hex, "" when the core holds none */
    char file_build_id[65];
};

struct core_target {
    struct target_view base;
    struct elf_core core;
    char core_path[4096];
    VEC_OF(struct core_object) objects;
    uint32_t *object_of_map;   /* parallel to base.maps.v: index in objects */
    struct target_threads threads;
    struct u64_map gap_pages;  /* pages counted in base.gaps */
    struct timespec dump_time; /* tv_sec < 0: not known */
    struct thread_lister *lister;   /* the fallback listing (no fs_base in the registers), or NULL */
};

static void hex(const uint8_t *id, size_t len, char out[65])
{
    out[0] = '\0';
    for (size_t i = 0; i < len && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* The file mapped at addr (its mapping in *mapping, the offset in it), or NULL when none is. */
static const struct core_object *file_at(const struct core_target *ct, uint64_t addr, uint64_t *offset,
                                         const struct target_mapping **mapping)
{
    const struct target_mapping *m = target_maps_find(&ct->base.maps, addr);
    *mapping = m;
    if (!m)
        return NULL;
    *offset = m->offset + (addr - m->start);
    return &ct->objects.v[ct->object_of_map[m - ct->base.maps.v]];
}

static bool usable(const struct core_object *o)
{
    return o->state == OBJECT_CHECKED || o->state == OBJECT_UNCHECKED;
}

/* whether the file's bytes for addr (in mapping m of it) are what the process had there: not in a segment it
   writes (a writable PT_LOAD's, or the RELRO range the dynamic linker relocates before making it read-only), by
   link-time address (under LLD a file page can hold the end of the code and the start of relocated data, mapped
   twice) */
static bool file_bytes_unchanged(const struct core_object *o, const struct target_mapping *m, uint64_t addr)
{
    const struct elf_file *ef = &o->elf;
    uint64_t bias = o->bias, mask = ~(uint64_t)(MEMORY_PAGE - 1);
    if (!o->placed && !elf_file_load_bias(ef, m->start, m->offset, m->executable, MEMORY_PAGE, &bias))
        return false;
    uint64_t vaddr = addr - bias;
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        bool written = (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) || ph->p_type == PT_GNU_RELRO;
        uint64_t lo = ph->p_vaddr & mask, hi = ph->p_vaddr + ph->p_memsz;
        if (written && hi > ph->p_vaddr && vaddr >= lo && (vaddr & mask) <= ((hi - 1) & mask))
            return false;
    }
    return true;
}

static void count_gap(struct core_target *ct, uint64_t addr, const struct core_object *o)
{
    uint64_t page = addr & ~(uint64_t)(MEMORY_PAGE - 1);
    uint32_t seen;
    if (!ct->gap_pages.keys || u64_map_get(&ct->gap_pages, page, &seen) || u64_map_put(&ct->gap_pages, page, 0) != 0)
        return;
    if (ct->base.gaps.pages++ == 0) {
        ct->base.gaps.first = page;
        ct->base.gaps.first_path = o ? o->path : NULL;
    }
}

static bool core_read(struct target_view *t, uint64_t addr, void *buf, size_t len)
{
    struct core_target *ct = (struct core_target *)t;
    uint8_t *out = buf;
    while (len > 0) {
        size_t avail;
        enum elf_core_memory what;
        const uint8_t *saved = elf_core_bytes(&ct->core, addr, &avail, &what);
        if (saved) {
            size_t n = avail < len ? avail : len;
            memcpy(out, saved, n);
            out += n, addr += n, len -= n;
            continue;
        }
        uint64_t offset = 0;
        const struct target_mapping *m;
        const struct core_object *o = file_at(ct, addr, &offset, &m);
        /* a file's page the process may have written, a file not here or of another build, a mapping past the
           file's end: what the core left out cannot be told */
        if (!o || !usable(o) || !file_bytes_unchanged(o, m, addr) ||
            (offset >= o->elf.size && offset - o->elf.size >= MEMORY_PAGE)) {
            if (what == ELF_CORE_LEFT_OUT || o)
                count_gap(ct, addr, o);
            return false;
        }
        /* to the end of the page (the next may be saved) or of the mapping; past the file's end, zeros (the
           tail of its last page) */
        uint64_t page_end = (addr | (MEMORY_PAGE - 1)) + 1, end = page_end < m->end ? page_end : m->end;
        size_t n = (size_t)(end - addr) < len ? (size_t)(end - addr) : len;
        size_t from_file = offset < o->elf.size ? o->elf.size - (size_t)offset : 0;
        if (from_file > n)
            from_file = n;
        if (from_file)
            memcpy(out, o->elf.data + offset, from_file);
        memset(out + from_file, 0, n - from_file);
        out += n, addr += n, len -= n;
    }
    return true;
}

static bool core_read_with_page(struct target_view *t, uint64_t addr, void *buf, size_t len, uint64_t page,
                                void *page_buf, bool *page_read)
{
    *page_read = false;
    if (!view_read(t, addr, buf, len))
        return false;
    *page_read = page && view_read(t, page, page_buf, MEMORY_PAGE);
    return true;
}

static int core_threads(struct target_view *t, elf_memory_reader read, void *rctx, struct target_threads *out, char *err,
                        size_t errlen)
{
    (void)read, (void)rctx, (void)err, (void)errlen;
    struct core_target *ct = (struct core_target *)t;
    *out = (struct target_threads){ 0 };
    if (vec_reserve(out, ct->threads.n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(out->v, ct->threads.v, ct->threads.n * sizeof(*out->v));
    out->n = ct->threads.n;
    return 0;
}

static bool core_thread_sched(struct target_view *t, pid_t tid, uint64_t *cpu_ns, char *state)
{
    (void)t;
    (void)tid;
    *cpu_ns = 0;
    *state = 0;
    return false;          /* (a core keeps no scheduler counts) */
}

static void core_thread_name(struct target_view *t, pid_t tid, char name[16])
{
    (void)t, (void)tid;
    name[0] = '\0';
}

static bool core_gone(struct target_view *t)
{
    (void)t;
    return false;
}

static bool core_now(struct target_view *t, struct timespec *out)
{
    struct core_target *ct = (struct core_target *)t;
    *out = ct->dump_time;
    return out->tv_sec >= 0;
}

static void core_close(struct target_view *t)
{
    struct core_target *ct = (struct core_target *)t;
    thread_lister_close(ct->lister);
    for (size_t i = 0; i < ct->objects.n; i++) {
        elf_file_close(&ct->objects.v[i].elf);
        free(ct->objects.v[i].path);
        free(ct->objects.v[i].file);
    }
    vec_free(&ct->objects);
    free(ct->object_of_map);
    target_maps_free(&t->maps);
    vec_free(&ct->threads);
    u64_map_free(&ct->gap_pages);
    elf_core_close(&ct->core);
    free(ct);
}

static const struct target_view_ops core_ops = {
    .read = core_read,
    .read_with_page = core_read_with_page,
    .threads = core_threads,
    .thread_name = core_thread_name,
    .thread_sched = core_thread_sched,
    .gone = core_gone,
    .now = core_now,
    .close = core_close,
};

/* The dump's moment on CLOCK_MONOTONIC: the core file's modification time (the kernel and gcore write it at the
   dump, in seconds' time), moved to the monotonic clock; not known for a file from before this boot. */
static struct timespec dump_moment(const char *path)
{
    struct stat st;
    struct timespec real, mono, boot, unknown = { -1, 0 };
    if (stat(path, &st) != 0 || clock_gettime(CLOCK_REALTIME, &real) != 0 ||
        clock_gettime(CLOCK_MONOTONIC, &mono) != 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
        return unknown;
    int64_t ago_ns = (int64_t)(real.tv_sec - st.st_mtim.tv_sec) * 1000000000 + (real.tv_nsec - st.st_mtim.tv_nsec);
    int64_t boot_ns = (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec;
    int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
    if (ago_ns < 0)
        ago_ns = 0;
    if (ago_ns >= boot_ns || ago_ns > mono_ns)
        return unknown;
    int64_t at = mono_ns - ago_ns;
    return (struct timespec){ .tv_sec = at / 1000000000, .tv_nsec = at % 1000000000 };
}

/* The build id of the object mapped at f (its first page), from the core's own copy of that page: "" when the
   core did not save it or the object has none. */
static void core_build_id(const struct elf_core *core, const struct elf_core_file *f, char out[65])
{
    size_t avail;
    enum elf_core_memory what;
    const uint8_t *bytes = elf_core_bytes(core, f->start, &avail, &what);
    struct elf_file page;
    out[0] = '\0';
    if (!bytes || f->offset != 0)
        return;
    if (avail > f->end - f->start)
        avail = (size_t)(f->end - f->start);
    const uint8_t *id;
    size_t len;
    if (elf_file_from_memory(&page, bytes, avail) == 0 && (len = elf_file_build_id(&page, &id)) > 0)
        hex(id, len, out);
}

/* the object for path (created on first sight), or NULL when out of memory */
static struct core_object *object_for(struct core_target *ct, const char *named, uint32_t *index)
{
    size_t len = strlen(named);
    size_t suffix = strlen(DELETED_SUFFIX);
    if (len > suffix && strcmp(named + len - suffix, DELETED_SUFFIX) == 0)
        len -= suffix;
    for (size_t i = 0; i < ct->objects.n; i++)
        if (strlen(ct->objects.v[i].path) == len && strncmp(ct->objects.v[i].path, named, len) == 0) {
            *index = (uint32_t)i;
            return &ct->objects.v[i];
        }
    struct core_object *o = vec_push(&ct->objects);
    if (!o || !(o->path = strndup(named, len)))
        return NULL;
    *index = (uint32_t)(ct->objects.n - 1);
    return o;
}

/* Open the file read for o (file: where it is) and check it against the core's build id. */
static void open_object(struct core_object *o, const char *file)
{
    o->file = strdup(file);
    if (!o->file || elf_file_open(&o->elf, file) != 0) {
        o->open_errno = o->file ? errno : ENOMEM;
        o->state = o->open_errno == ENOEXEC ? OBJECT_NOT_ELF : OBJECT_MISSING;
        return;
    }
    const uint8_t *id;
    size_t len = elf_file_build_id(&o->elf, &id);
    hex(id, len, o->file_build_id);
    if (!o->core_build_id[0])
        o->state = OBJECT_UNCHECKED;
    else if (strcmp(o->core_build_id, o->file_build_id) == 0)
        o->state = OBJECT_CHECKED;
    else {
        o->state = OBJECT_OTHER_BUILD;
        elf_file_close(&o->elf);
    }
}

/* the flags of the file's PT_LOAD whose pages hold the link-time address vaddr (PF_R when none does) */
static uint32_t file_segment_flags(const struct elf_file *ef, uint64_t vaddr)
{
    for (size_t i = 0; i < ef->n_phdrs; i++) {
        const Elf64_Phdr *ph = &ef->phdrs[i];
        uint64_t lo = ph->p_vaddr & ~(uint64_t)(MEMORY_PAGE - 1), hi = ph->p_vaddr + ph->p_memsz;
        if (ph->p_type == PT_LOAD && hi > ph->p_vaddr && vaddr >= lo && vaddr < hi)
            return ph->p_flags;
    }
    return PF_R;
}

/* The NT_FILE entry of the program: the one that maps its entry point (AT_ENTRY), else the one whose name is the
   process's command (NT_PRPSINFO), else the first. */
static const struct elf_core_file *program_entry(const struct elf_core *core)
{
    uint64_t entry;
    const struct elf_core_file *f = elf_core_auxv(core, AT_ENTRY, &entry) ? elf_core_file_at(core, entry) : NULL;
    for (size_t i = 0; !f && core->command[0] && i < core->files.n; i++) {
        const char *base = strrchr(core->files.v[i].path, '/');
        base = base ? base + 1 : core->files.v[i].path;
        if (strncmp(base, core->command, strlen(core->command)) == 0)
            f = &core->files.v[i];
    }
    return f ? f : core->files.n ? &core->files.v[0] : NULL;
}

/* The mappings (one per NT_FILE entry, its permissions from the segment the core has of it, else from the file's
   own segment), each file opened once and checked; the program's read from exe when given. */
static int load_files(struct core_target *ct, const char *exe, char *err, size_t errlen)
{
    const struct elf_core *core = &ct->core;
    const struct elf_core_file *program = program_entry(core);
    if (!program) {
        snprintf(err, errlen, "%s lists no mapped files (no NT_FILE note): taskspy cannot tell where the program "
                 "and its libraries were", ct->core_path);
        return -1;
    }
    ct->object_of_map = calloc(core->files.n, sizeof(*ct->object_of_map));
    if (!ct->object_of_map || vec_reserve(&ct->base.maps, core->files.n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t program_index = UINT32_MAX;
    for (size_t i = 0; i < core->files.n; i++) {
        const struct elf_core_file *f = &core->files.v[i];
        uint32_t index;
        struct core_object *o = object_for(ct, f->path, &index);
        if (!o) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (!o->core_build_id[0])
            core_build_id(core, f, o->core_build_id);   /* from its first page, in whichever entry maps it */
        if (f == program)
            program_index = index;
        ct->object_of_map[i] = index;
        ct->base.maps.v[ct->base.maps.n++] = (struct target_mapping){ .start = f->start, .end = f->end,
                                                                      .offset = f->offset };
    }
    for (size_t i = 0; i < ct->objects.n; i++) {
        struct core_object *o = &ct->objects.v[i];
        open_object(o, i == program_index && exe ? exe : o->path);
        if (o->state == OBJECT_MISSING || o->state == OBJECT_OTHER_BUILD) {
            if (ct->base.unusable_files++ == 0)
                ct->base.first_unusable = o->path;
        }
    }
    struct core_object *p = &ct->objects.v[program_index];
    if (p->state == OBJECT_MISSING || p->state == OBJECT_NOT_ELF) {
        if (exe)
            snprintf(err, errlen, "cannot read %s, given as the program of %s: %s", exe, ct->core_path,
                     strerror(p->open_errno));
        else
            snprintf(err, errlen, "cannot read %s, the program of %s (%s): give its file with --exe PROGRAM", p->path,
                     ct->core_path, strerror(p->open_errno));
        return -1;
    }
    if (p->state == OBJECT_OTHER_BUILD) {
        snprintf(err, errlen, "%s (build id %s) is not the program of %s (%s, build id %s)%s", p->file,
                 p->file_build_id[0] ? p->file_build_id : "none", ct->core_path, p->path, p->core_build_id,
                 exe ? "" : ": give its file with --exe PROGRAM");
        return -1;
    }
    ct->base.program_unchecked = p->state == OBJECT_UNCHECKED;
    /* each object placed by its mapping of offset 0 (a later page can hold two segments' bytes under LLD) */
    for (size_t i = 0; i < ct->base.maps.n; i++) {
        struct target_mapping *m = &ct->base.maps.v[i];
        struct core_object *o = &ct->objects.v[ct->object_of_map[i]];
        const struct elf_core_segment *s = elf_core_segment_at(core, m->start);
        if (m->offset == 0 && !o->placed && o->elf.data)
            o->placed = elf_file_load_bias(&o->elf, m->start, 0, s && (s->flags & PF_X), MEMORY_PAGE, &o->bias);
    }
    for (size_t i = 0; i < ct->base.maps.n; i++) {
        struct target_mapping *m = &ct->base.maps.v[i];
        const struct core_object *o = &ct->objects.v[ct->object_of_map[i]];
        const struct elf_core_segment *s = elf_core_segment_at(core, m->start);
        /* gdb writes no segment for a mapping it left out: then the file's own segment there says */
        uint32_t flags = s ? s->flags : o->placed ? file_segment_flags(&o->elf, m->start - o->bias) : PF_R;
        m->executable = flags & PF_X;
        m->read_only = !(flags & PF_W);
        if ((o->state == OBJECT_CHECKED || o->state == OBJECT_UNCHECKED) && !(m->path = strdup(o->file))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    ct->base.program = ct->base.program_file = p->file;
    return 0;
}

/* Every thread of the core with its thread pointer (fs_base in its registers) and stack. */
static int load_threads(struct core_target *ct, char *err, size_t errlen)
{
    bool any_pointer = false;
    for (size_t i = 0; i < ct->core.threads.n; i++) {
        const struct elf_core_thread *ct_thread = &ct->core.threads.v[i];
        struct target_thread *th = vec_push(&ct->threads);
        if (!th) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        th->tid = ct_thread->tid;
        th->fsbase = ct_thread->regs[REG_INDEX(fs_base)];
        th->regs = ct_thread->regs;
        any_pointer |= th->fsbase != 0;
        enum elf_core_memory what;
        uint64_t sp = ct_thread->regs[REG_INDEX(rsp)];
        th->stack = elf_core_bytes(&ct->core, sp, &th->stack_len, &what);
        if (!th->stack && what == ELF_CORE_LEFT_OUT)
            count_gap(ct, sp, NULL);
    }
    if (any_pointer)
        return 0;
    /* registers without fs_base (a gdb before 8): glibc's own thread list, read from the core */
    struct thread_pointer_list list;
    if (thread_lister_open(&ct->lister, ct->base.pid, "", &ct->base.maps, view_read, &ct->base, err, errlen) != 0 ||
        thread_lister_list(ct->lister, NULL, NULL, &list, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < list.n; i++)
        for (size_t k = 0; k < ct->threads.n; k++)
            if (ct->threads.v[k].tid == list.v[i].tid)
                ct->threads.v[k].fsbase = list.v[i].fsbase;
    vec_free(&list);
    return 0;
}

int view_open_core(struct target_view **out, const char *core, const char *exe, char *err, size_t errlen)
{
    *out = NULL;
    struct core_target *ct = calloc(1, sizeof(*ct));
    if (!ct) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ct->base.ops = &core_ops;
    ct->base.core = true;
    snprintf(ct->core_path, sizeof(ct->core_path), "%s", core);
    if (elf_core_open(&ct->core, core, err, errlen) != 0) {
        free(ct);
        return -1;
    }
    ct->base.pid = ct->core.pid;
    ct->dump_time = dump_moment(core);
    if (u64_map_init(&ct->gap_pages, 16) != 0) {
        snprintf(err, errlen, "out of memory");
        core_close(&ct->base);
        return -1;
    }
    if (load_files(ct, exe, err, errlen) != 0 || load_threads(ct, err, errlen) != 0) {
        core_close(&ct->base);
        return -1;
    }
    *out = &ct->base;
    return 0;
}
