/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_locate.c: where a target's task id thread-local is (see tls_locate.h): the TLS marker in the
 * executable, else tokio's CONTEXT.current_task_id through its DWARF, in the executable or its verified
 * separate debug file, else the marker in a shared library loaded at start; and the executable's poll-start
 * USDT markers, whose one place cuts task stacks without a probe. */
#include "sampler/markers/tls_locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "sampler/probes/tls_library.h"
#include "sampler/probes/tls_marker.h"
#include "sampler/probes/usdt_notes.h"
#include "tasks/tasks.h"

/* The file to read the executable's symbols and DWARF from: exe itself, or where it is stripped (no
 * .symtab), its separate debug file (the one verified lookup of elf/, shared with the symbolizer: same
 * build-id or CRC; from debuginfod too, waited for now, before the recording). Returns a malloc'd path, or
 * NULL with no debug file (exe then). */
static char *debug_file_of(const struct tls_join_target *t)
{
    struct elf_file ef;
    if (!t->target_path || elf_file_open(&ef, t->exe) != 0)
        return NULL;
    struct debug_file_result *found = elf_file_section(&ef, ".symtab") ? NULL : malloc(sizeof(*found));
    char *path = found && debug_file_find(t->debug_files, &ef, t->root, t->target_path, true, found)
                     ? strdup(found->path) : NULL;
    free(found);
    elf_file_close(&ef);
    return path;
}

/* Where the task id is: the TLS marker, else (tokio) CONTEXT.current_task_id through DWARF, in exe (or in
 * its debug file, which has the same TLS segment). Fills the program's marker fields and the stats' name
 * and offset. Returns 1, 0 (neither), -1 with err. */
static int find_marker(const char *exe, struct bpf_sample_program_spec *spec, struct tls_join_stats *st,
                       bool *tokio, char *err, size_t errlen)
{
    struct tls_marker marker;
    struct tokio_task_id_place place;   /* (tasks/: the one place that knows tokio's CONTEXT) */
    int64_t offset, tag_offset = 0;
    bool has_tag = false;
    uint32_t tag_size = 0;
    uint64_t some_value = 0;
    if (tls_marker_find(exe, &marker) == 1) {
        snprintf(st->symbol, sizeof(st->symbol), "%s", marker.symbol);
        offset = marker.tp_offset;
    } else if (tokio_task_id_place_find(exe, &place) == 1) {
        snprintf(st->symbol, sizeof(st->symbol), "tokio CONTEXT.current_task_id");
        if (place.id_size != 8) {      /* the program reads 8 bytes (tokio's Id is a u64 in every version) */
            snprintf(err, errlen, "tokio's CONTEXT.current_task_id is %u bytes, not the 8 taskspy reads", place.id_size);
            return -1;
        }
        *tokio = true;
        offset = place.id_tp_offset;
        has_tag = place.has_tag;
        tag_offset = place.tag_tp_offset;
        tag_size = place.tag_size;
        some_value = place.some_value;
    } else {
        return 0;              /* no marker (or no ELF to find one in: the probes' side says why) */
    }
    if (offset < INT32_MIN || offset > INT32_MAX || tag_offset < INT32_MIN || tag_offset > INT32_MAX ||
        some_value > INT32_MAX) {
        snprintf(err, errlen, "TLS marker %s is out of a BPF program's reach", st->symbol);
        return -1;
    }
    st->tp_offset = offset;
    spec->tp_offset = (int32_t)offset;
    spec->has_tag = has_tag;
    spec->tag_tp_offset = (int32_t)tag_offset;
    spec->tag_size = tag_size;
    spec->some_value = (uint32_t)some_value;
    return 1;
}

/* The executable's poll-start USDT markers: how many locations, and the file offset of the last. */
static size_t poll_marker_locations(const char *exe, uint64_t *offset)
{
    struct elf_file ef;
    size_t locations = 0;
    if (elf_file_open(&ef, exe) != 0)
        return 0;
    struct usdt_note_list notes;
    if (usdt_notes_read(&ef, &notes) == 0) {
        for (size_t i = 0; i < notes.n; i++)
            if (notes.v[i].marker == USDT_MARKER_POLL_START) {
                *offset = notes.v[i].pc_offset;
                locations++;
            }
        usdt_notes_free(&notes);
    }
    elf_file_close(&ef);
    return locations;
}

/* The marker in a shared library loaded at start (sampler/probes/tls_library.h): placed now in a running
 * target; in one about to start (a DT_NEEDED library defines it), placed once the dynamic linker has loaded
 * it (*later). Returns 1, 0 (none), -1 with err (a dynamic TLS block). */
static int find_library_marker(const struct tls_join_target *t, struct bpf_sample_program_spec *spec,
                               struct tls_join_stats *st, bool *later, char *err, size_t errlen)
{
    struct tls_library_place place;
    char why[400] = "";
    int rc = t->launched ? tls_library_find_needed(t->exe, &place)
                         : tls_library_place(t->tgid, t->root, &place, why, sizeof(why));
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    if (rc != 1)
        return rc;
    *later = t->launched;     /* a prediction: confirmed (or corrected) once the library is loaded */
    if (place.tp_offset < INT32_MIN || place.tp_offset > INT32_MAX) {
        snprintf(err, errlen, "TLS marker in %s is out of a BPF program's reach", place.library);
        return -1;
    }
    snprintf(st->symbol, sizeof(st->symbol), "%s in %.400s", TLS_MARKER_SYMBOL, place.library);
    st->tp_offset = place.tp_offset;
    spec->tp_offset = (int32_t)place.tp_offset;
    return 1;
}

int tls_locate(const struct tls_join_target *t, struct bpf_sample_program_spec *spec, struct tls_join_stats *st,
               struct tls_location *loc, char *err, size_t errlen)
{
    memset(loc, 0, sizeof(*loc));
    int rc = find_marker(t->exe, spec, st, &loc->tokio, err, errlen);
    if (rc == 0) {
        char *debug = debug_file_of(t);
        if (debug) {
            rc = find_marker(debug, spec, st, &loc->tokio, err, errlen);
            if (rc == 1)
                snprintf(st->debug_file, sizeof(st->debug_file), "%s", debug);
        }
        free(debug);
    }
    if (rc == 0)
        rc = find_library_marker(t, spec, st, &loc->place_later, err, errlen);
    if (rc == 1)
        loc->poll_wrappers = poll_marker_locations(t->exe, &loc->poll_marker_offset);
    return rc;
}
