/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_pprof_addresses.c: writes a recording's address profile as pprof's profile.proto, gzipped
 * (flamegraph/pprof_encoder.h): its distinct stacks as Samples with their labels, then every Mapping (with
 * its build id), Location (its address, mapping and inline chain as Lines) and Function (name, system name,
 * file, start line). The labels come from the profile of names: the thread's name, and the task of the
 * stack's root ("task: ENTRY", "task ID: ENTRY"). pprof takes the first mapping for the main binary: the
 * lowest-addressed mapping of a file comes first (executables, PIE or not, load below their libraries). */
#include "flamegraph/address_profile_internal.h"
#include "flamegraph/pprof_encoder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 64             /* lines of one location written at most (symbolize keeps no more) */

struct address_writer {
    const struct address_profile *a;
    const struct profile *names;
    struct pprof_encoder enc;
    uint32_t *string_of;         /* the address profile's string id -> the file's */
    uint32_t main_mapping;       /* index of the mapping written first (UINT32_MAX: none) */
    VEC_OF(uint64_t) stack;      /* location ids of the sample being encoded */
};

static uint32_t file_string(struct address_writer *w, uint32_t id)
{
    return w->string_of[id];
}

/* The labels of a stack: thread always; task, and task_id when the root shows one, from its root. */
static void stack_labels(struct address_writer *w, const struct address_stack *s, struct pprof_labels *out)
{
    const char *thread = profile_frame_name(w->names, s->thread);
    pprof_root_labels(&w->enc, profile_frame_name(w->names, s->root), out);
    out->thread = thread ? pprof_string(&w->enc, thread, strlen(thread)) : 0;
}

/* The main binary's mapping: the lowest-addressed one of a file ("/..."), UINT32_MAX when none is. */
static uint32_t main_mapping_of(struct address_writer *w)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < w->a->mappings.n; i++) {
        const struct address_mapping_entry *m = &w->a->mappings.v[i];
        const char *file = profile_frame_name(w->a->strings, m->file);
        if (file && file[0] == '/' && (best == UINT32_MAX || m->start < w->a->mappings.v[best].start))
            best = i;
    }
    return best;
}

/* The id a mapping (by its id in the address profile, 0: none) has in the file: the main one first. */
static uint64_t mapping_id(const struct address_writer *w, uint32_t id)
{
    if (id == 0 || w->main_mapping == UINT32_MAX)
        return id;
    uint32_t index = id - 1;
    return index == w->main_mapping ? 1 : index < w->main_mapping ? (uint64_t)index + 2 : (uint64_t)index + 1;
}

static int write_samples(struct address_writer *w)
{
    for (size_t i = 0; i < w->a->stacks.n; i++) {
        const struct address_stack *s = w->a->stacks.v[i];
        if (vec_reserve(&w->stack, s->n) != 0)
            return -1;
        for (uint32_t j = 0; j < s->n; j++)
            w->stack.v[j] = s->locations[j];
        struct pprof_labels labels;
        stack_labels(w, s, &labels);
        if (pprof_sample(&w->enc, w->stack.v, s->n, s->count, s->wait_ns, &labels) != 0)
            return -1;
    }
    return 0;
}

static int write_tables(struct address_writer *w)
{
    const struct address_profile *a = w->a;
    /* the main mapping first (pprof's Mapping[0]), then the others in order: ids as mapping_id gives them */
    for (size_t k = 0; k < a->mappings.n; k++) {
        size_t i = w->main_mapping == UINT32_MAX ? k
                   : k == 0 ? w->main_mapping : k <= w->main_mapping ? k - 1 : k;
        const struct address_mapping_entry *m = &a->mappings.v[i];
        struct pprof_mapping pm = { .id = mapping_id(w, (uint32_t)i + 1), .start = m->start, .limit = m->limit,
                                    .offset = m->offset, .file = file_string(w, m->file),
                                    .build_id = file_string(w, m->build_id) };
        if (pprof_mapping(&w->enc, &pm) != 0)
            return -1;
    }
    for (size_t i = 0; i < a->locations.n; i++) {
        const struct address_location *l = &a->locations.v[i];
        struct pprof_line lines[MAX_LINES];
        size_t n = l->n_lines < MAX_LINES ? l->n_lines : MAX_LINES;
        for (size_t j = 0; j < n; j++) {
            const struct address_line_entry *e = &a->lines.v[l->first_line + j];
            lines[j] = (struct pprof_line){ .function_id = e->function + 1u, .line = e->line };
        }
        if (pprof_location(&w->enc, i + 1, mapping_id(w, l->mapping), l->address, lines, n) != 0)
            return -1;
    }
    for (size_t i = 0; i < a->functions.n; i++) {
        const struct address_function *f = &a->functions.v[i];
        if (pprof_function(&w->enc, i + 1, file_string(w, f->name), file_string(w, f->system_name),
                           file_string(w, f->file), f->start_line) != 0)
            return -1;
    }
    return 0;
}

int profile_write_pprof_addresses(const struct address_profile *a, const struct profile *names, FILE *out,
                                  const struct export_info *info)
{
    struct address_writer w = { .a = a, .names = names };
    w.main_mapping = main_mapping_of(&w);
    size_t n_strings = profile_frame_count(a->strings);
    if (!(w.string_of = calloc(n_strings ? n_strings : 1, sizeof(*w.string_of))))
        return -1;
    if (pprof_encoder_open(&w.enc, out, info) != 0) {
        free(w.string_of);
        return -1;
    }
    for (uint32_t i = 0; i < n_strings; i++) {
        const char *s = profile_frame_name(a->strings, i);
        w.string_of[i] = pprof_string(&w.enc, s, strlen(s));
    }
    errno = 0;
    int rc = w.enc.no_memory || write_samples(&w) != 0 || write_tables(&w) != 0 ? -1 : 0;
    rc = pprof_encoder_close(&w.enc, rc, info);
    free(w.string_of);
    vec_free(&w.stack);
    return rc;
}
