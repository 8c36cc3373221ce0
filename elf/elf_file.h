/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_file.h: the one ELF reader of taskspy, below all layers, and its whole interface. A 64-bit ELF file
 * mapped into memory (or an image already in memory, such as the vDSO), with bounds-checked access to its
 * sections, program headers, notes, symbols and build id, the link-time address <-> file offset mapping
 * through PT_LOAD, and the one lookup of its verified separate debug file (local places, then debuginfod). Every
 * offset taken from the file is checked before use: the file is outside input. Nothing outside elf/ walks ELF
 * headers itself. */
#ifndef TASKSPY_ELF_FILE_H
#define TASKSPY_ELF_FILE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

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
    const uint8_t *build_id;   /* the GNU build-id note's bytes (found once, on open), or NULL */
    size_t build_id_len;
};

/* ---- elf_file.c: opening ------------------------------------------------------------------------- */
/* Open and map a file. Returns 0, or -1 with errno set (EINVAL/ENOEXEC for a file that is not ELF64). */
int elf_file_open(struct elf_file *ef, const char *path);
/* Parse an ELF image held in memory (not owned). Returns 0 or -1. */
int elf_file_from_memory(struct elf_file *ef, const void *data, size_t size);
/* Parse an ELF image loaded in this process at base (the vDSO), whose size only its headers tell. */
int elf_file_from_loaded_image(struct elf_file *ef, const void *base);
void elf_file_close(struct elf_file *ef);

/* ---- elf_file.c: sections ------------------------------------------------------------------------ */
/* Section by name, or NULL. */
const Elf64_Shdr *elf_file_section(const struct elf_file *ef, const char *name);
/* Bytes of a section inside the file, or NULL for SHT_NOBITS or out-of-bounds sections. */
const uint8_t *elf_file_section_data(const struct elf_file *ef, const Elf64_Shdr *sh, size_t *size);
/* The link-time address of a section (sh_addr), whether or not it has bytes in the file. */
bool elf_file_section_addr(const struct elf_file *ef, const char *name, uint64_t *addr);
/* Is there a note section (SHT_NOTE) of that name? *data gets its bytes (NULL when they lie outside the file). */
bool elf_file_note_section(const struct elf_file *ef, const char *name, const uint8_t **data, size_t *size);

/* ---- elf_inflate.c: compressed sections ----------------------------------------------------------- */
/* Whether a copy keeps a section's bytes (its header, name as given: "" when it has none). */
typedef bool (*elf_section_keep_fn)(const Elf64_Shdr *sh, const char *name, void *ctx);
/* A copy of the file in memory (malloc's, *size bytes) with its zlib-compressed sections inflated and the
 * sections keep refuses left out (their headers stay, as SHT_NOBITS; keep NULL: all kept); the section table
 * in the same order. NULL with errno ENOENT when no kept section is compressed (or the file's byte order is not
 * this machine's: read it as it is), else with the error (ENOEXEC, EILSEQ for a section that does not inflate,
 * ENOMEM). */
void *elf_file_inflated(const struct elf_file *ef, elf_section_keep_fn keep, void *ctx, size_t *size);

/* ---- elf_segments.c: program headers and addresses ------------------------------------------------ */
/* Where a piece of the file lies: link-time address, file offset, size in the file. */
struct elf_range {
    uint64_t vaddr, offset, size;
};
/* The nth (from 0) program header of type p_type (PT_NOTE, PT_GNU_EH_FRAME...) whose bytes lie in the file. */
bool elf_file_segment_range(const struct elf_file *ef, uint32_t p_type, size_t nth, struct elf_range *out);
/* The last program header of type p_type (PT_TLS: memory size and alignment too), or NULL. */
const Elf64_Phdr *elf_file_segment(const struct elf_file *ef, uint32_t p_type);
/* The executable's static TLS block ends at the thread pointer (x86-64 TLS variant II, the executable's
 * block first): a variable at st_value in a PT_TLS segment of memsz bytes aligned to align, whose first byte
 * sits at vaddr, is at tp + the returned (negative) offset. align 0 counts as 1. */
int64_t elf_tls_tp_offset(uint64_t st_value, uint64_t memsz, uint64_t align, uint64_t vaddr);
/* A section's place, when its bytes lie in the file. */
bool elf_file_section_range(const struct elf_file *ef, const char *name, struct elf_range *out);
/* Link-time virtual address to file offset through the first PT_LOAD holding vaddr; -1 when none does. */
int64_t elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr);
/* The same, and that segment must have all of p_flags (PF_X, PF_W) and hold len bytes from vaddr. */
int64_t elf_file_vaddr_to_offset_in(const struct elf_file *ef, uint64_t vaddr, uint32_t p_flags, uint64_t len);
/* File offset to link-time virtual address through the PT_LOAD headers; returns false if none holds it. */
bool elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr);
/* Load bias (runtime address - link-time address) of the object when the file offset pgoff is mapped at
 * start: from the PT_LOAD that pgoff falls in (page_size: the kernel maps from page-aligned offsets, and
 * several segments can share a page under LLD: the one whose PF_X matches executable wins). */
bool elf_file_load_bias(const struct elf_file *ef, uint64_t start, uint64_t pgoff, bool executable,
                        uint64_t page_size, uint64_t *bias);

/* ---- elf_notes.c: notes -------------------------------------------------------------------------- */
struct elf_note {
    uint32_t type;
    const uint8_t *owner;      /* n_namesz bytes (the NUL included, when the writer put one) */
    uint32_t owner_size;
    const uint8_t *desc;
    uint32_t desc_size;
};
struct elf_note_iter {
    const uint8_t *data;
    size_t size, at;
    bool broken;               /* a note's sizes ran past the end: nothing after it can be trusted */
    uint32_t broken_type;      /* that note's type */
};
/* Walk the notes of a note section or segment payload. */
void elf_notes_begin(struct elf_note_iter *it, const uint8_t *data, size_t size);
/* The next note, or false at the end (then it->broken tells whether the chain was cut). */
bool elf_notes_next(struct elf_note_iter *it, struct elf_note *note);
/* Is the note owned by owner ("GNU", "stapsdt": compared with its NUL)? */
bool elf_note_owner_is(const struct elf_note *note, const char *owner);
/* The GNU build-id (found once when the file was opened). Returns its length (0 if none), *id at it. */
size_t elf_file_build_id(const struct elf_file *ef, const uint8_t **id);

/* ---- elf_symbols.c: symbol tables ---------------------------------------------------------------- */
struct elf_symbol {
    const char *name;          /* NUL-terminated inside the string table */
    uint64_t value, size;
    uint8_t type;              /* STT_FUNC... */
    uint8_t bind;              /* STB_GLOBAL... */
    uint16_t section;          /* st_shndx (SHN_UNDEF for undefined) */
};
struct elf_symbol_iter {
    const uint8_t *syms;
    size_t size, at;
    const char *strs;
    size_t strs_size;
};
/* Walk symbol table `table` (".symtab" with ".strtab", ".dynsym" with ".dynstr"). False when it is absent. */
bool elf_symbols_begin(struct elf_symbol_iter *it, const struct elf_file *ef, const char *table);
/* The next symbol with a valid name, or false at the end. */
bool elf_symbols_next(struct elf_symbol_iter *it, struct elf_symbol *sym);

/* ---- elf_dynamic.c: the dynamic section ---------------------------------------------------------- */
struct elf_dynamic_iter {
    const uint8_t *entries;
    size_t n, at;
    const char *strs;
    size_t strs_size;
};
/* Walk .dynamic. False when the file has none (static, or no section table). */
bool elf_dynamic_begin(struct elf_dynamic_iter *it, const struct elf_file *ef);
/* The next entry before DT_NULL: its tag and value, and for DT_NEEDED, DT_SONAME, DT_RUNPATH and DT_RPATH
 * the string it names (*string NULL for other tags; an entry whose string is out of bounds is skipped). */
bool elf_dynamic_next(struct elf_dynamic_iter *it, int64_t *tag, uint64_t *value, const char **string);

/* ---- elf_loaded.c: a program loaded in another process ---------------------------------------------- */
/* Reads len bytes at addr of the other process into buf; false when it cannot. */
typedef bool (*elf_memory_reader)(void *ctx, uint64_t addr, void *buf, size_t len);
/* The address DT_DEBUG of the program holds (the dynamic linker's r_debug), from its program headers at
 * phdr (AT_PHDR, phnum of them: AT_PHNUM) in the process's memory. 0 when not set yet or not found. */
uint64_t elf_loaded_r_debug(uint64_t phdr, uint64_t phnum, elf_memory_reader read, void *ctx);

/* ---- elf_core.c: core files (ET_CORE, x86-64 Linux: the kernel's and gdb's gcore's) --------------------- */
/* A core file mapped, its segments and notes checked and indexed: the memory it saved (PT_LOAD), the threads
 * (NT_PRSTATUS: each one's registers, fs_base its thread pointer), the files mapped (NT_FILE), the process
 * (NT_PRPSINFO) and its auxiliary vector (NT_AUXV). Every size and offset is checked: the core is outside
 * input. */
struct elf_core_segment {
    uint64_t vaddr, memsz;     /* the mapping the segment describes */
    uint64_t offset, filesz;   /* the bytes the core saved of it, from vaddr (filesz < memsz: the rest left out) */
    uint32_t flags;            /* PF_R, PF_W, PF_X */
};
struct elf_core_thread {
    int32_t tid;
    int32_t signal;            /* pr_cursig: the signal that stopped it (the thread that dumped: the crash's) */
    uint64_t regs[27];         /* its registers, in struct user_regs_struct's order (<sys/user.h>) */
};
struct elf_core_file {
    uint64_t start, end;       /* where it was mapped */
    uint64_t offset;           /* the file offset mapped at start, in bytes */
    const char *path;          /* as the kernel named it (" (deleted)" when it was), inside the core */
};
struct elf_core {
    struct elf_file elf;       /* the core itself */
    VEC_OF(struct elf_core_segment) segments;   /* sorted by vaddr, not overlapping */
    VEC_OF(struct elf_core_thread) threads;     /* in the core's order: the kernel puts the dumping thread first */
    VEC_OF(struct elf_core_file) files;         /* sorted by start */
    int32_t pid;               /* the process (NT_PRPSINFO's, else the first thread's) */
    char command[17];          /* NT_PRPSINFO's pr_fname, "" without one */
    char args[81];             /* its pr_psargs: the command line's start */
    const uint8_t *auxv;       /* NT_AUXV: (type, value) pairs of 8 bytes, auxv_size bytes; NULL without one */
    size_t auxv_size;
};
/* Open and check a core. Returns 0, or -1 with one line in err saying what is wrong with it: not an ELF file,
 * not a core, a 32-bit one, another machine's, truncated (its segments or notes run past the file's end:
 * cut by a size limit), no threads in its notes. */
int elf_core_open(struct elf_core *c, const char *path, char *err, size_t errlen);
/* The same over an image in memory (not owned). */
int elf_core_from_memory(struct elf_core *c, const void *data, size_t size, char *err, size_t errlen);
void elf_core_close(struct elf_core *c);
/* What the core says of the memory at an address. */
enum elf_core_memory {
    ELF_CORE_SAVED,            /* its bytes are in the core */
    ELF_CORE_LEFT_OUT,         /* a segment describes it, but the core did not save those bytes */
    ELF_CORE_NO_SEGMENT,       /* no segment describes it (gdb writes none for what it left out) */
};
/* The saved bytes from addr to the end of what its segment saved (*len of them), or NULL with *what saying why
 * there are none. */
const uint8_t *elf_core_bytes(const struct elf_core *c, uint64_t addr, size_t *len, enum elf_core_memory *what);
/* The segment that describes addr, or NULL. */
const struct elf_core_segment *elf_core_segment_at(const struct elf_core *c, uint64_t addr);
/* The NT_FILE entry that maps addr, or NULL. */
const struct elf_core_file *elf_core_file_at(const struct elf_core *c, uint64_t addr);
/* An auxiliary vector entry (AT_ENTRY, AT_PHDR, AT_SYSINFO_EHDR...). */
bool elf_core_auxv(const struct elf_core *c, uint64_t type, uint64_t *value);

/* ---- debug_file.c, debug_files.c: the separate debug file ---------------------------------------- */
/* The one lookup of an object's separate debug file (as Debian's -dbgsym packages, `objcopy --only-keep-debug`
 * and debuginfod servers provide them), in this order: by GNU build-id under /usr/lib/debug/.build-id/, by the
 * .gnu_debuglink name (beside the object, in its .debug/ directory, under /usr/lib/debug/DIR/), then from a
 * debuginfod server (libdebuginfod) when the settings enable it and the caller may wait for a download. Local
 * paths are looked up under the target's root. A candidate is taken only if it matches: the same build-id when
 * both files have one, else the debug link's CRC; a stale file is refused. */
enum debug_file_source { DEBUG_FILE_NONE, DEBUG_FILE_BUILD_ID, DEBUG_FILE_DEBUGLINK, DEBUG_FILE_DEBUGINFOD };
enum debuginfod_answer {
    DEBUGINFOD_OFF,            /* no server to ask (the settings: the cli found DEBUGINFOD_URLS unset) */
    DEBUGINFOD_NOT_ASKED,      /* found locally, no build id to ask with, or no caller could wait for it yet */
    DEBUGINFOD_FOUND,
    DEBUGINFOD_NOT_FOUND,      /* the servers answered: they do not have it */
    DEBUGINFOD_NO_ANSWER,      /* no answer (down, refused, timed out: debuginfod_error); not asked again */
};
#define DEBUG_FILE_PATH_MAX 4096
/* What one lookup found, and where it looked. */
struct debug_file_result {
    char path[DEBUG_FILE_PATH_MAX];   /* the verified debug file, "" when none */
    enum debug_file_source source;
    char build_id_path[256];          /* the build-id place looked at, "" when the object has no build id */
    char debuglink[256];              /* the object's .gnu_debuglink name, "" when it has none */
    bool refused;                     /* a file was in one of the places but was another build's */
    enum debuginfod_answer debuginfod;
    int debuginfod_error;             /* for DEBUGINFOD_NO_ANSWER: an errno (ECONNREFUSED, ETIME, ...) */
};

/* A debuginfod download of object's debug file: bytes so far and in all (total 0: not known yet). */
typedef void (*debug_file_progress_fn)(void *ctx, const char *object, uint64_t bytes, uint64_t total);
/* Asks the servers for a build id's debug file: 0 with *path (malloc'd), or a negative errno (-ENOENT: they do
 * not have it). */
typedef int (*debug_file_fetch_fn)(void *ctx, const uint8_t *build_id, size_t len, const char *object,
                                   char **path);
/* The lookup's settings, which the cli fills: library code never reads the environment itself. */
struct debug_file_settings {
    bool debuginfod;                  /* ask debuginfod servers when the local places have nothing (the cli: when
                                         DEBUGINFOD_URLS names any; libdebuginfod reads the URLs, the cache path and
                                         the timeout from the environment itself, as perf and gdb have it) */
    unsigned wait_limit_s;            /* a query no server has begun to answer is given up after this long (0: never):
                                         the cli passes DEBUGINFOD_TIMEOUT's value, so that a server that does not
                                         answer costs it once per object, retries and connecting included (a server
                                         that sends slower than libdebuginfod's bound is cut by libdebuginfod) */
    debug_file_progress_fn on_progress; /* a download is under way (called by the thread that waits for it) */
    void *progress_ctx;
    debug_file_fetch_fn fetch;        /* how to ask; NULL: libdebuginfod (tests give their own) */
    void *fetch_ctx;
};

/* The lookup's results, one per build id, shared by everything that reads one target's debug information
 * (symbols, lines, DWARF types), so that no object is looked up twice and a server that gave no answer is not
 * asked again for it. Thread-safe. */
struct debug_files;
/* NULL on allocation failure. */
struct debug_files *debug_files_new(const struct debug_file_settings *settings);
void debug_files_free(struct debug_files *df);
/* The debug file of ef (the object at path as the target names it, opened through root: "" or "/proc/PID/root").
 * df: the shared results, or NULL for the local places alone, nothing kept. fetch: the caller may wait for a
 * download (never on the sampling path); without it a download another caller waits for is not waited for.
 * Returns whether one was found (out->path); out says where it looked either way. */
bool debug_file_find(struct debug_files *df, const struct elf_file *ef, const char *root, const char *path,
                     bool fetch, struct debug_file_result *out);
/* What debuginfod was asked and answered, over every object so far. */
struct debug_files_stats {
    unsigned asked, found, not_found, no_answer;
    int first_error;                  /* the first no-answer's errno */
    char first_failed[256];           /* and its object, as the target names it */
};
void debug_files_stats(struct debug_files *df, struct debug_files_stats *out);
/* The local places alone (debug_file_find without shared results): a malloc'd path or NULL. */
char *elf_debug_file_find(const struct elf_file *ef, const char *root, const char *path);
/* The debug link of ef: file name (inside ef) and CRC. False when it has none or it is malformed. */
bool elf_file_debuglink(const struct elf_file *ef, const char **name, uint32_t *crc);

#endif
