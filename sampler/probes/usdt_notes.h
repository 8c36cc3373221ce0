/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usdt_notes.h: discovery of USDT markers: the SystemTap SDT v3 notes (.note.stapsdt, owner "stapsdt",
 * type 3) of an ELF file, with each probe's address turned into the file offsets the uprobe PMU wants, and
 * the name matching of SPEC section 2 (task-poll-start & co, with "__", "_" and "-" equivalent).
 * Notes are outside input: every size and string is checked; a bad note is skipped and counted. */
#ifndef TASKSPY_USDT_NOTES_H
#define TASKSPY_USDT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf_file.h"

/* The probe names taskspy understands (SPEC section 2), under any provider. */
enum usdt_marker {
    USDT_MARKER_OTHER = 0,          /* a probe taskspy does not use */
    USDT_MARKER_POLL_START,         /* task-poll-start(task id) */
    USDT_MARKER_POLL_END,           /* task-poll-end(task id) */
    USDT_MARKER_SPAWN,              /* task-spawn(task id) */
    USDT_MARKER_TERMINATE,          /* task-terminate(task id) */
    USDT_MARKER_PARK,               /* worker-thread-park() */
    USDT_MARKER_UNPARK,             /* worker-thread-unpark() */
    USDT_MARKER_WAKE,               /* task-wake(task id): the task was woken (the wait profile) */
};

struct usdt_note {
    char *provider;                 /* owned, NUL-terminated */
    char *name;                     /* owned */
    char *args;                     /* owned; "" when the probe has no arguments */
    uint64_t note_pc;               /* probe address as written in the note (link time) */
    uint64_t note_base;             /* the note's idea of .stapsdt.base's address */
    uint64_t note_semaphore;        /* semaphore address as written, 0 = none */
    uint64_t pc;                    /* link-time vaddr after the .stapsdt.base adjustment */
    uint64_t semaphore;             /* link-time vaddr after the same adjustment, 0 = none */
    uint64_t pc_offset;             /* file offset of the probe: uprobe_path's probe_offset */
    uint64_t semaphore_offset;      /* file offset of the semaphore: ref_ctr_offset; 0 = none */
    enum usdt_marker marker;
};

struct usdt_note_list {
    struct usdt_note *v;
    size_t n, cap;
    size_t skipped;                 /* stapsdt notes that were malformed or pointed outside PT_LOAD */
    bool has_base_section;          /* the file has .stapsdt.base */
};

/* Read every stapsdt note of ef into out (which is initialised here). Notes of other owners/types are
 * ignored; malformed stapsdt notes and notes whose pc (or semaphore) no PT_LOAD segment holds are skipped
 * and counted in out->skipped. Address rules:
 *  - when .stapsdt.base exists and the note's base is non-zero, both pc and a non-zero semaphore move by
 *    (sh_addr of .stapsdt.base - note base): this undoes prelink-style relocation, which moves every
 *    segment by the same amount (GDB and SystemTap do the same; libbpf leaves semaphores alone, which only
 *    differs for prelinked files). When the linker dropped .stapsdt.base, addresses are used as written.
 *  - the adjusted vaddrs become file offsets through PT_LOAD (never assume vaddr == offset: LLD).
 * Returns 0 (also when there are no notes), or -1 with errno = ENOMEM. */
int usdt_notes_read(const struct elf_file *ef, struct usdt_note_list *out);
/* Parse the notes from a raw .note.stapsdt payload; base_addr is .stapsdt.base's sh_addr or 0 when the
 * section is absent. Exposed for tests and fuzzing; usdt_notes_read calls it. */
int usdt_notes_parse(const struct elf_file *ef, const uint8_t *notes, size_t size, bool has_base,
                     uint64_t base_addr, struct usdt_note_list *out);
void usdt_notes_free(struct usdt_note_list *l);

/* Which SPEC marker a probe name is ("task__poll__start", "task_poll_start", "task-poll-start" are all
 * USDT_MARKER_POLL_START). */
enum usdt_marker usdt_marker_from_name(const char *name);
/* "task-poll-start" etc., or "other". */
const char *usdt_marker_name(enum usdt_marker m);
/* Whether the --markers SPEC admits this provider: "auto" admits all, "none" none, otherwise a comma
 * separated list of provider names (exact match; empty items ignored). NULL spec means "auto". */
bool usdt_provider_selected(const char *markers_spec, const char *provider);

#endif
