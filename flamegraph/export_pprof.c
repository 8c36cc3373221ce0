/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_pprof.c: writes a profile of frame names (a folded file's, for `taskspy flamegraph`) as pprof's
 * profile.proto, gzipped (flamegraph/pprof_encoder.h). One walk over the stacks: each frame becomes a
 * Location (frames marked inlined join the location of the frame they are inlined into, which then stands
 * for the whole inline chain), each stack a Sample (leaf first) with values and the labels its root frame
 * gives. Locations get their ids when a sample first uses them, so only used ones are written. Names have
 * no addresses: each location gets a synthetic one in one synthetic mapping, which also tells pprof the
 * profile is symbolized. A recording's pprof, with real addresses, is export_pprof_addresses.c. */
#include "flamegraph/pprof_encoder.h"
#include "flamegraph/stack_walk.h"

#include "base/u64_map.h"
#include "base/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAPPING_START 0x400000u        /* synthetic addresses: one 16-byte slot per location from here */
#define ADDRESS_STEP 16u
#define MAX_INLINE_CHAIN 64            /* lines written per location at most */

enum frame_kind { FRAME_UNSEEN = 0, FRAME_PLAIN, FRAME_INLINED };

struct pprof_location {
    uint32_t caller;                   /* location (index + 1) this frame is inlined into, 0 for none */
    uint32_t function;                 /* index into functions */
    uint32_t line;
    uint32_t id;                       /* id in the file, 0 while no sample uses it */
};

struct pprof_function {
    uint32_t name, file;               /* string ids */
};

struct pprof_writer {
    const struct profile *profile;
    struct pprof_encoder enc;
    uint8_t *frame_kind;               /* frame id -> enum frame_kind */
    uint32_t *own_location;            /* frame id -> index + 1 of its location as a frame of its own */
    struct u64_map location_of;        /* caller << 32 | frame -> location index, for inlined frames */
    struct u64_map function_of;        /* name << 32 | file -> function index */
    VEC_OF(struct pprof_location) locations;
    VEC_OF(uint32_t) used;             /* location indices in id order */
    VEC_OF(struct pprof_function) functions;
    VEC_OF(uint64_t) stack;            /* location ids of the sample being encoded */
    uint32_t root;                     /* root frame whose labels are in `labels` */
    struct pprof_labels labels;
};

static uint32_t function_index(struct pprof_writer *w, const struct frame_parts *parts)
{
    uint32_t name = pprof_string(&w->enc, parts->function, parts->function_len);
    uint32_t file = parts->file ? pprof_string(&w->enc, parts->file, parts->file_len) : 0;
    if (w->enc.no_memory)
        return UINT32_MAX;
    uint64_t key = (uint64_t)name << 32 | file;
    uint32_t index;
    int added = u64_map_index(&w->function_of, key, &w->functions, &index);
    if (added < 0)
        return UINT32_MAX;
    if (added) {
        w->functions.v[index].name = name;
        w->functions.v[index].file = file;
    }
    return index;
}

/* The location of frame inlined into caller (location index + 1, or 0 for a frame of its own), made when
 * new. Returns its index or UINT32_MAX (no memory). */
static uint32_t location_index(struct pprof_writer *w, uint32_t caller, uint32_t frame)
{
    uint64_t key = (uint64_t)caller << 32 | frame;
    uint32_t index;
    if (!caller && w->own_location[frame])
        return w->own_location[frame] - 1;
    if (caller && u64_map_get(&w->location_of, key, &index))
        return index;
    struct frame_parts parts;
    export_parse_frame(profile_frame_name(w->profile, frame), &parts);
    uint32_t function = function_index(w, &parts);
    if (function == UINT32_MAX)
        return UINT32_MAX;
    struct pprof_location *l = vec_push(&w->locations);
    if (!l || (caller && u64_map_put(&w->location_of, key, (uint32_t)(w->locations.n - 1)) != 0))
        return UINT32_MAX;
    if (!caller)
        w->own_location[frame] = (uint32_t)w->locations.n;
    l->caller = caller;
    l->function = function;
    l->line = parts.line;
    return (uint32_t)(w->locations.n - 1);
}

static bool inlined(struct pprof_writer *w, uint32_t frame)
{
    if (w->frame_kind[frame] == FRAME_UNSEEN) {
        struct frame_parts parts;
        export_parse_frame(profile_frame_name(w->profile, frame), &parts);
        w->frame_kind[frame] = parts.inlined ? FRAME_INLINED : FRAME_PLAIN;
    }
    return w->frame_kind[frame] == FRAME_INLINED;
}

/* Append the id of location index to the sample's stack, giving the location an id on first use. */
static int push_location(struct pprof_writer *w, uint32_t index)
{
    struct pprof_location *l = &w->locations.v[index];
    if (!l->id) {
        uint32_t *slot = vec_push(&w->used);
        if (!slot)
            return -1;
        *slot = index;
        l->id = (uint32_t)w->used.n;
    }
    uint64_t *id = vec_push(&w->stack);
    if (!id)
        return -1;
    *id = l->id;
    return 0;
}

static int visit_stack(void *ctx, const uint32_t *frames, size_t depth, uint64_t count)
{
    struct pprof_writer *w = ctx;
    if (frames[0] != w->root) {
        pprof_root_labels(&w->enc, profile_frame_name(w->profile, frames[0]), &w->labels);
        w->root = frames[0];
    }
    /* locations root first: a frame of its own starts one, an inlined frame extends the one before it */
    w->stack.n = 0;
    uint32_t current = UINT32_MAX;
    for (size_t d = 0; d < depth; d++) {
        bool extends = d > 0 && inlined(w, frames[d]);
        if (!extends && current != UINT32_MAX && push_location(w, current) != 0)
            goto no_memory;
        current = location_index(w, extends ? current + 1 : 0, frames[d]);
        if (current == UINT32_MAX)
            goto no_memory;
    }
    if (push_location(w, current) != 0)
        goto no_memory;
    for (size_t i = 0, j = w->stack.n - 1; i < j; i++, j--) {   /* leaf first */
        uint64_t t = w->stack.v[i];
        w->stack.v[i] = w->stack.v[j];
        w->stack.v[j] = t;
    }
    return pprof_sample(&w->enc, w->stack.v, w->stack.n, count, 0, &w->labels);
no_memory:
    errno = ENOMEM;
    return -1;
}

static int write_location(struct pprof_writer *w, uint32_t index)
{
    const struct pprof_location *l = &w->locations.v[index];
    /* the inline chain, innermost first: the caller a frame was inlined into comes after it */
    struct pprof_line lines[MAX_INLINE_CHAIN];
    size_t n = 0;
    for (const struct pprof_location *at = l; n < MAX_INLINE_CHAIN; at = &w->locations.v[at->caller - 1]) {
        lines[n++] = (struct pprof_line){ .function_id = at->function + 1u, .line = at->line };
        if (!at->caller)
            break;
    }
    return pprof_location(&w->enc, l->id, 1, MAPPING_START + (uint64_t)l->id * ADDRESS_STEP, lines, n);
}

/* Everything after the samples. */
static int write_tables(struct pprof_writer *w, const struct export_info *info)
{
    const char *name = info && info->name ? info->name : "taskspy";
    struct pprof_mapping m = { .id = 1, .start = MAPPING_START,
                               .limit = MAPPING_START + ((uint64_t)w->used.n + 1) * ADDRESS_STEP,
                               .file = pprof_string(&w->enc, name, strlen(name)) };
    if (pprof_mapping(&w->enc, &m) != 0)
        return -1;
    for (size_t i = 0; i < w->used.n; i++)
        if (write_location(w, w->used.v[i]) != 0)
            return -1;
    for (size_t i = 0; i < w->functions.n; i++)
        if (pprof_function(&w->enc, i + 1, w->functions.v[i].name, w->functions.v[i].name,
                           w->functions.v[i].file, 0) != 0)
            return -1;
    return 0;
}

int profile_write_pprof(const struct profile *p, FILE *out, const struct export_info *info)
{
    struct pprof_writer *w = calloc(1, sizeof(*w));
    size_t n_frames = profile_frame_count(p);
    if (!w || !(w->frame_kind = calloc(n_frames ? n_frames : 1, 1)) ||
        !(w->own_location = calloc(n_frames ? n_frames : 1, sizeof(uint32_t))) ||
        u64_map_init(&w->location_of, 1024) != 0 || u64_map_init(&w->function_of, 1024) != 0 ||
        pprof_encoder_open(&w->enc, out, info) != 0) {
        if (w) {
            free(w->frame_kind);
            free(w->own_location);
            u64_map_free(&w->location_of);
            u64_map_free(&w->function_of);
        }
        free(w);
        errno = ENOMEM;
        return -1;
    }
    w->profile = p;
    w->root = PROFILE_NO_FRAME;
    errno = 0;
    int rc = stack_walk(w->profile, visit_stack, w) != 0 || write_tables(w, info) != 0 ? -1 : 0;
    rc = pprof_encoder_close(&w->enc, rc, info);
    free(w->frame_kind);
    free(w->own_location);
    u64_map_free(&w->location_of);
    u64_map_free(&w->function_of);
    vec_free(&w->locations);
    vec_free(&w->used);
    vec_free(&w->functions);
    vec_free(&w->stack);
    free(w);
    return rc;
}
