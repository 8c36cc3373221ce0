/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_pprof.c: writes a profile as pprof's profile.proto, gzipped. One walk over the stacks: each frame
 * becomes a Location (frames marked inlined join the location of the frame they are inlined into, which
 * then stands for the whole inline chain), each stack a Sample (leaf first) with values and the labels its
 * root frame gives; Samples are encoded and compressed as they come. Locations get their ids when a sample
 * first uses them, so only used ones are written; Locations, Functions and the string table follow the
 * samples (protobuf fields may come in any order). The folded data has no addresses: each location gets a
 * synthetic one in one synthetic mapping, which also tells pprof the profile is symbolized. */
#include "flamegraph/export_internal.h"
#include "flamegraph/protobuf_writer.h"
#include "flamegraph/stack_walk.h"

#include "base/u64_map.h"
#include "base/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* profile.proto field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILENAME = 5,
    MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

#define MAPPING_START 0x400000u        /* synthetic addresses: one 16-byte slot per location from here */
#define ADDRESS_STEP 16u
#define FLUSH_AT (1u << 16)            /* compress the encoded samples once this many bytes are waiting */

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

struct label_strings {
    uint32_t task, task_id, thread;    /* string ids of the values, 0 = no such label */
};

struct pprof_writer {
    const struct profile *profile;
    struct profile *strings;           /* the string table: a profile's interned names have ids 0, 1, ... in
                                          order of interning, "" first */
    uint8_t *frame_kind;               /* frame id -> enum frame_kind */
    uint32_t *own_location;            /* frame id -> index + 1 of its location as a frame of its own */
    struct u64_map location_of;        /* caller << 32 | frame -> location index, for inlined frames */
    struct u64_map function_of;        /* name << 32 | file -> function index */
    VEC_OF(struct pprof_location) locations;
    VEC_OF(uint32_t) used;             /* location indices in id order */
    VEC_OF(struct pprof_function) functions;
    VEC_OF(uint64_t) stack;            /* location ids of the sample being encoded */
    uint32_t root;                     /* root frame whose labels are in `labels` */
    struct label_strings labels;
    uint32_t key_task, key_task_id, key_thread;
    uint64_t period_ns;
    struct pb_buffer out, message, part;
    struct gzip_sink gzip;
    bool no_memory;                    /* a string could not be interned: the file would be wrong */
};

/* The string's index in the string table (0 after an allocation failure, which sets no_memory). */
static uint32_t string_id(struct pprof_writer *w, const char *s, size_t len)
{
    uint32_t id = profile_intern(w->strings, s, len);
    if (id != PROFILE_NO_FRAME)
        return id;
    w->no_memory = true;
    return 0;
}

static uint32_t function_index(struct pprof_writer *w, const struct frame_parts *parts)
{
    uint32_t name = string_id(w, parts->function, parts->function_len);
    uint32_t file = parts->file ? string_id(w, parts->file, parts->file_len) : 0;
    if (w->no_memory)
        return UINT32_MAX;
    uint64_t key = (uint64_t)name << 32 | file;
    uint32_t index;
    if (u64_map_get(&w->function_of, key, &index))
        return index;
    struct pprof_function *f = vec_push(&w->functions);
    if (!f || u64_map_put(&w->function_of, key, (uint32_t)(w->functions.n - 1)) != 0)
        return UINT32_MAX;
    f->name = name;
    f->file = file;
    return (uint32_t)(w->functions.n - 1);
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

static void root_labels(struct pprof_writer *w, uint32_t root)
{
    struct root_parts parts;
    export_parse_root(profile_frame_name(w->profile, root), &parts);
    w->labels.task = parts.task ? string_id(w, parts.task, parts.task_len) : 0;
    w->labels.task_id = parts.task_id ? string_id(w, parts.task_id, parts.task_id_len) : 0;
    w->labels.thread = parts.thread ? string_id(w, parts.thread, parts.thread_len) : 0;
    w->root = root;
}

static void add_label(struct pprof_writer *w, uint32_t key, uint32_t value)
{
    if (!value)
        return;
    pb_reset(&w->part);
    pb_uint_field(&w->part, LABEL_KEY, key);
    pb_uint_field(&w->part, LABEL_STR, value);
    pb_message_field(&w->message, SAMPLE_LABEL, &w->part);
}

static int flush_out(struct pprof_writer *w)
{
    if (w->out.failed) {
        errno = ENOMEM;
        return -1;
    }
    int rc = gzip_sink_write(&w->gzip, w->out.v, w->out.n);
    pb_reset(&w->out);
    return rc;
}

static int visit_stack(void *ctx, const uint32_t *frames, size_t depth, uint64_t count)
{
    struct pprof_writer *w = ctx;
    if (frames[0] != w->root)
        root_labels(w, frames[0]);
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
    uint64_t values[2] = { count, count * w->period_ns };
    pb_reset(&w->message);
    pb_packed_field(&w->message, SAMPLE_LOCATION_ID, w->stack.v, w->stack.n);
    pb_packed_field(&w->message, SAMPLE_VALUE, values, w->period_ns ? 2 : 1);
    add_label(w, w->key_task, w->labels.task);
    add_label(w, w->key_task_id, w->labels.task_id);
    add_label(w, w->key_thread, w->labels.thread);
    pb_message_field(&w->out, PROFILE_SAMPLE, &w->message);
    if (w->no_memory)
        goto no_memory;
    return w->out.n >= FLUSH_AT || w->out.failed ? flush_out(w) : 0;
no_memory:
    errno = ENOMEM;
    return -1;
}

static void add_value_type(struct pprof_writer *w, uint32_t field, const char *type, const char *unit)
{
    pb_reset(&w->part);
    pb_uint_field(&w->part, VALUE_TYPE_TYPE, string_id(w, type, strlen(type)));
    pb_uint_field(&w->part, VALUE_TYPE_UNIT, string_id(w, unit, strlen(unit)));
    pb_message_field(&w->out, field, &w->part);
}

static int write_location(struct pprof_writer *w, uint32_t index)
{
    const struct pprof_location *l = &w->locations.v[index];
    pb_reset(&w->message);
    pb_uint_field(&w->message, LOCATION_ID, l->id);
    pb_uint_field(&w->message, LOCATION_MAPPING_ID, 1);
    pb_uint_field(&w->message, LOCATION_ADDRESS, MAPPING_START + (uint64_t)l->id * ADDRESS_STEP);
    /* the inline chain, innermost first: the caller a frame was inlined into comes after it */
    for (const struct pprof_location *at = l;; at = &w->locations.v[at->caller - 1]) {
        pb_reset(&w->part);
        pb_uint_field(&w->part, LINE_FUNCTION_ID, at->function + 1u);
        pb_uint_field(&w->part, LINE_LINE, at->line);
        pb_message_field(&w->message, LOCATION_LINE, &w->part);
        if (!at->caller)
            break;
    }
    pb_message_field(&w->out, PROFILE_LOCATION, &w->message);
    return w->out.n >= FLUSH_AT ? flush_out(w) : 0;
}

/* Everything after the samples. */
static int write_tables(struct pprof_writer *w, const struct export_info *info)
{
    const char *name = info && info->name ? info->name : "taskspy";
    pb_reset(&w->message);
    pb_uint_field(&w->message, MAPPING_ID, 1);
    pb_uint_field(&w->message, MAPPING_MEMORY_START, MAPPING_START);
    pb_uint_field(&w->message, MAPPING_MEMORY_LIMIT, MAPPING_START + ((uint64_t)w->used.n + 1) * ADDRESS_STEP);
    pb_uint_field(&w->message, MAPPING_FILENAME, string_id(w, name, strlen(name)));
    pb_uint_field(&w->message, MAPPING_HAS_FUNCTIONS, 1);
    pb_uint_field(&w->message, MAPPING_HAS_FILENAMES, 1);
    pb_uint_field(&w->message, MAPPING_HAS_LINE_NUMBERS, 1);
    pb_uint_field(&w->message, MAPPING_HAS_INLINE_FRAMES, 1);
    pb_message_field(&w->out, PROFILE_MAPPING, &w->message);
    for (size_t i = 0; i < w->used.n; i++)
        if (write_location(w, w->used.v[i]) != 0)
            return -1;
    for (size_t i = 0; i < w->functions.n; i++) {
        pb_reset(&w->message);
        pb_uint_field(&w->message, FUNCTION_ID, i + 1);
        pb_uint_field(&w->message, FUNCTION_NAME, w->functions.v[i].name);
        pb_uint_field(&w->message, FUNCTION_SYSTEM_NAME, w->functions.v[i].name);
        pb_uint_field(&w->message, FUNCTION_FILENAME, w->functions.v[i].file);
        pb_message_field(&w->out, PROFILE_FUNCTION, &w->message);
        if (w->out.n >= FLUSH_AT && flush_out(w) != 0)
            return -1;
    }
    if (info && info->exporter)
        pb_uint_field(&w->out, PROFILE_COMMENT, string_id(w, info->exporter, strlen(info->exporter)));
    if (info) {
        pb_uint_field(&w->out, PROFILE_TIME_NANOS, info->start_time_ns);
        pb_uint_field(&w->out, PROFILE_DURATION_NANOS, info->duration_ns);
    }
    if (w->period_ns) {
        add_value_type(w, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
        pb_uint_field(&w->out, PROFILE_PERIOD, w->period_ns);
    } else {
        add_value_type(w, PROFILE_PERIOD_TYPE, "samples", "count");
        pb_uint_field(&w->out, PROFILE_PERIOD, 1);
    }
    /* the string table last: every string has been interned by now */
    size_t n_strings = profile_frame_count(w->strings);
    for (uint32_t i = 0; i < n_strings; i++) {
        const char *s = profile_frame_name(w->strings, i);
        pb_bytes_field(&w->out, PROFILE_STRING_TABLE, s, strlen(s));
        if (w->out.n >= FLUSH_AT && flush_out(w) != 0)
            return -1;
    }
    if (w->no_memory) {
        errno = ENOMEM;
        return -1;
    }
    return flush_out(w);
}

static int write_profile(struct pprof_writer *w, const struct export_info *info)
{
    if (string_id(w, "", 0) != 0)
        return -1;
    w->key_task = string_id(w, "task", 4);
    w->key_task_id = string_id(w, "task_id", 7);
    w->key_thread = string_id(w, "thread", 6);
    add_value_type(w, PROFILE_SAMPLE_TYPE, "samples", "count");
    if (w->period_ns)
        add_value_type(w, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
    if (stack_walk(w->profile, visit_stack, w) != 0 || write_tables(w, info) != 0)
        return -1;
    return 0;
}

int profile_write_pprof(const struct profile *p, FILE *out, const struct export_info *info)
{
    struct pprof_writer *w = calloc(1, sizeof(*w));
    size_t n_frames = profile_frame_count(p);
    if (!w || !(w->strings = profile_new()) || !(w->frame_kind = calloc(n_frames ? n_frames : 1, 1)) ||
        !(w->own_location = calloc(n_frames ? n_frames : 1, sizeof(uint32_t))) ||
        u64_map_init(&w->location_of, 1024) != 0 || u64_map_init(&w->function_of, 1024) != 0 ||
        gzip_sink_open(&w->gzip, out) != 0) {
        if (w) {
            profile_free(w->strings);
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
    w->period_ns = info ? info->period_ns : 0;
    errno = 0;
    int rc = write_profile(w, info);
    if (rc == 0)
        rc = gzip_sink_finish(&w->gzip);
    else
        gzip_sink_abort(&w->gzip);
    if (rc != 0 && errno == 0)
        errno = ENOMEM;
    profile_free(w->strings);
    free(w->frame_kind);
    free(w->own_location);
    u64_map_free(&w->location_of);
    u64_map_free(&w->function_of);
    vec_free(&w->locations);
    vec_free(&w->used);
    vec_free(&w->functions);
    vec_free(&w->stack);
    pb_free(&w->out);
    pb_free(&w->message);
    pb_free(&w->part);
    free(w);
    return rc;
}
