/* SPDX-License-Identifier: GPL-3.0-or-later */
/* marker_discovery.c: finding what to probe in an object the target maps: its USDT poll markers (all
 * decodable, or none of the object's), else the poll functions of a runtime taskspy knows. */
#include "sampler/markers/markers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "sampler/probes/runtime_probes.h"
#include "sampler/probes/usdt_notes.h"

static enum marker_kind kind_of(enum usdt_marker m)
{
    switch (m) {
    case USDT_MARKER_POLL_START: return MARKER_POLL_START;
    case USDT_MARKER_POLL_END: return MARKER_POLL_END;
    case USDT_MARKER_SPAWN: return MARKER_SPAWN;
    case USDT_MARKER_TERMINATE: return MARKER_TERMINATE;
    case USDT_MARKER_PARK: return MARKER_PARK;
    case USDT_MARKER_UNPARK: return MARKER_UNPARK;
    case USDT_MARKER_WAKE: return MARKER_WAKE;
    default: return MARKER_KIND_COUNT;
    }
}

static bool needs_arg(enum marker_kind k)
{
    return k == MARKER_POLL_START || k == MARKER_POLL_END || k == MARKER_SPAWN || k == MARKER_TERMINATE ||
           k == MARKER_WAKE;
}
/* Whether path was scanned before (remembering it now when not). */
static bool already_scanned(struct markers *m, const char *path)
{
    for (size_t i = 0; i < m->scanned.n; i++)
        if (strcmp(m->scanned.v[i], path) == 0)
            return true;
    char *copy = strdup(path);
    char **slot = copy ? vec_push(&m->scanned) : NULL;
    if (!slot) {
        free(copy);
        return true;   /* cannot remember it: do not attach twice */
    }
    *slot = copy;
    return false;
}

/* The runtime functions of the object (path: as the target names it, full: from here). */
static void attach_runtime_functions(struct markers *m, const struct elf_file *ef, const char *path,
                                     const char *full, bool may_download)
{
    struct runtime_probe_list found;
    if (runtime_probes_find_with_debug(ef, path, m->root, m->debug_files, may_download, &found) != 0)
        return;
    size_t polls = 0;
    for (size_t i = 0; i < found.n; i++) {
        const struct runtime_probe *r = &found.v[i];
        if (r->role != RUNTIME_PROBE_POLL)
            continue;
        polls++;
        struct usdt_arg id = { .kind = USDT_ARG_REG, .size = 8, .reg = r->id_register, .reg_bytes = 8 };
        /* Poll ends: return probes. Their trampoline replaces the caller's return address on the stack,
         * which would cut every dwarf-unwound stack inside the poll: the entry's program records that
         * address and where it is, and the unwinder puts it back (sampler_records.c). Also without
         * --poll-times: a return probe on the same function put there by another tracer (another taskspy
         * with --poll-times on another process of the same program: uprobes are per file, and the kernel
         * readies a return-only consumer's trampoline at every hit of the shared entry breakpoint, whatever
         * process that consumer is for) cuts the stacks the same way. For the wait profile's poll events only
         * once such a trampoline is seen (markers_read_return_addresses): the read is ~60-160 ns a hit
         * (tokio_plain --fast-polls), and SPEC 7 holds that mode's cost per hit to 1.2x the kernel's own. */
        enum bpf_return_read read_return = m->poll_times || !m->wait_profile ? BPF_RETURN_ALWAYS
                                                                             : BPF_RETURN_WHEN_FLAGGED;
        struct probe_location entry = { r->runtime, "poll (function entry)", r->file_offset, 0, false,
                                        read_return };
        if (attach_location(m, full, &entry, MARKER_POLL_START, &id) != 0)
            continue;
        if (m->poll_times) {
            struct probe_location ret = { r->runtime, "poll (return)", r->file_offset, 0, true, BPF_RETURN_NEVER };
            attach_location(m, full, &ret, MARKER_POLL_RETURN, NULL);
        }
    }
    m->runtime_functions += polls;
    if (polls > 0 || m->waker_symbol)
        attach_waker_functions(m, ef, full, polls > 0 ? &found : NULL);
    runtime_probes_free(&found);
}

/* Whether every marker of the object that carries an argument can be decoded: a half-attached set
 * (poll-start without poll-end) would attribute wrongly, so an undecodable marker leaves the whole object out
 * (reported). */
static bool all_markers_decodable(struct markers *m, const struct usdt_note_list *notes, const char *path)
{
    for (size_t i = 0; i < notes->n; i++) {
        const struct usdt_note *n = &notes->v[i];
        enum marker_kind k = kind_of(n->marker);
        if (k == MARKER_KIND_COUNT || !usdt_provider_selected(m->spec, n->provider) || !needs_arg(k))
            continue;
        struct usdt_arg a;
        struct uprobe_arg_plan plan;
        if (usdt_arg_parse(n->args, 0, &a) != USDT_ARG_OK || uprobe_arg_plan_for(&a, &plan) != 0) {
            markers_warn(m, "marker %s:%s in %s has an argument taskspy cannot decode ('%s'); no markers from %s",
                         n->provider, n->name, path, n->args, path);
            return false;
        }
    }
    return true;
}

/* Optional markers (spawn, terminate, park, unpark) only feed counts in the summary, but every location
 * costs an event per CPU and each event's teardown waits in the kernel: a kind with many sites (tokio
 * inlines spawn at every call site) is skipped (reported). Fills skip[kind]. */
static void choose_optional_kinds(struct markers *m, const struct usdt_note_list *notes, const char *path,
                                  bool skip[MARKER_KIND_COUNT])
{
    size_t sites[MARKER_KIND_COUNT] = { 0 };
    for (size_t i = 0; i < notes->n; i++) {
        enum marker_kind k = kind_of(notes->v[i].marker);
        if (k != MARKER_KIND_COUNT && usdt_provider_selected(m->spec, notes->v[i].provider))
            sites[k]++;
    }
    for (int k = 0; k < MARKER_KIND_COUNT; k++) {
        if (k == MARKER_WAKE) {        /* the wait profile's: all of them with it, none without */
            skip[k] = !m->wait_profile;
            continue;
        }
        skip[k] = k != MARKER_POLL_START && k != MARKER_POLL_END && sites[k] > MAX_OPTIONAL_SITES;
        if (skip[k])
            markers_warn(m, "not attaching %zu %s markers in %s (optional; more than %d sites)", sites[k],
                         k == MARKER_SPAWN ? "task-spawn" : k == MARKER_TERMINATE ? "task-terminate" : "park", path,
                         MAX_OPTIONAL_SITES);
    }
}

/* Attach every selected marker of the object (full: its path from here). Returns the poll-start locations
 * attached. */
static size_t attach_markers(struct markers *m, const struct usdt_note_list *notes, const char *full,
                             const bool skip[MARKER_KIND_COUNT])
{
    size_t poll_markers = 0;
    for (size_t i = 0; i < notes->n; i++) {
        const struct usdt_note *n = &notes->v[i];
        enum marker_kind k = kind_of(n->marker);
        if (k == MARKER_KIND_COUNT || !usdt_provider_selected(m->spec, n->provider) || skip[k])
            continue;
        struct usdt_arg a;
        bool with_arg = needs_arg(k) && usdt_arg_parse(n->args, 0, &a) == USDT_ARG_OK;
        struct probe_location loc = { n->provider, n->name, n->pc_offset, n->semaphore_offset, false,
                                      BPF_RETURN_NEVER };
        if (attach_location(m, full, &loc, k, with_arg ? &a : NULL) != 0)
            continue;
        poll_markers += k == MARKER_POLL_START;
        m->waker_locations += k == MARKER_WAKE;
    }
    return poll_markers;
}

void markers_scan_object(struct markers *m, const char *path, bool may_download)
{
    if (!m || !path || path[0] != '/' || already_scanned(m, path))
        return;
    char full[4200];
    snprintf(full, sizeof(full), "%s%s", m->root, path);
    struct elf_file ef;
    if (elf_file_open(&ef, full) != 0 && elf_file_open(&ef, path) != 0)
        return;
    struct usdt_note_list notes;
    if (usdt_notes_read(&ef, &notes) != 0) {
        elf_file_close(&ef);
        return;
    }
    bool usable = all_markers_decodable(m, &notes, path);
    bool skip[MARKER_KIND_COUNT];
    choose_optional_kinds(m, &notes, path, skip);
    size_t poll_markers = usable ? attach_markers(m, &notes, full, skip) : 0;
    /* No poll markers here: probe the poll functions of the runtimes taskspy knows (tokio's
     * raw::poll<T,S>, the task vtable's poll entry), the task's identity read from a register at entry. */
    if (usable && poll_markers == 0 && strcmp(m->spec, "auto") == 0) {
        attach_runtime_functions(m, &ef, path, full, may_download);
    } else {
        if (poll_markers > 0)   /* tasks from the markers, perhaps on tokio: its waker functions too */
            attach_marker_runtime_wakers(m, &ef, path, full, may_download);
        if (m->waker_symbol)
            attach_waker_functions(m, &ef, full, NULL); /* a marker runtime's --waker-symbol, in any object */
    }
    usdt_notes_free(&notes);
    elf_file_close(&ef);
}
