/* SPDX-License-Identifier: GPL-3.0-or-later */
/* export_speedscope.c: writes a profile in speedscope's own JSON file format. One walk over the stacks:
 * each root frame starts a sampled profile named by it (stacks under one root come together), each stack
 * becomes a sample of indices into the shared frame table (the frames below the root, outermost first)
 * with its count as weight; frames enter the table when first met, and the table is written last (JSON
 * keys have no order). */
#include "flamegraph/export_internal.h"
#include "flamegraph/json_string.h"
#include "flamegraph/stack_walk.h"

#include "base/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

struct speedscope_writer {
    const struct profile *profile;
    FILE *out;
    uint32_t *table_index;          /* frame id -> its index in the shared table + 1, 0 = not there yet */
    VEC_OF(uint32_t) table;         /* the shared table: frame ids by index */
    VEC_OF(uint64_t) weights;       /* of the profile being written, one per sample */
    VEC_OF(char) sample_text;       /* one sample's "[i,j,...]", written with one fwrite */
    uint32_t root;                  /* root frame of that profile; PROFILE_NO_FRAME before the first */
    uint64_t weight_sum;            /* of that profile */
    size_t n_profiles;
    size_t heaviest;                /* index of the profile with the most samples: the one shown first */
    uint64_t heaviest_weight;
};

/* v in decimal at the end of text (24 bytes); returns where it starts. */
static char *format_u64(char *text, uint64_t v)
{
    char *at = text + 24;
    do {
        *--at = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return at;
}

static int put_u64(FILE *out, uint64_t v)
{
    char text[24];
    char *at = format_u64(text, v);
    size_t len = (size_t)(text + sizeof(text) - at);
    return fwrite(at, 1, len, out) == len ? 0 : -1;
}

static int put_string(FILE *out, const char *s)
{
    return json_write_string(out, s, strlen(s));
}

static int open_profile(struct speedscope_writer *w, const char *name)
{
    if (fputs(w->n_profiles ? ",\n{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", w->out) == EOF ||
        put_string(w->out, name) != 0 || fputs(",\"unit\":\"none\",\"startValue\":0,\"samples\":[", w->out) == EOF)
        return -1;
    w->weights.n = 0;
    w->weight_sum = 0;
    return 0;
}

static int close_profile(struct speedscope_writer *w)
{
    if (fputs("],\"weights\":[", w->out) == EOF)
        return -1;
    for (size_t i = 0; i < w->weights.n; i++)
        if ((i && putc(',', w->out) == EOF) || put_u64(w->out, w->weights.v[i]) != 0)
            return -1;
    if (fputs("],\"endValue\":", w->out) == EOF || put_u64(w->out, w->weight_sum) != 0 || putc('}', w->out) == EOF)
        return -1;
    if (w->n_profiles == 0 || w->weight_sum > w->heaviest_weight) {
        w->heaviest = w->n_profiles;
        w->heaviest_weight = w->weight_sum;
    }
    w->n_profiles++;
    return 0;
}

/* The frame's index in the shared table, adding it when new; UINT32_MAX when out of memory. */
static uint32_t table_index(struct speedscope_writer *w, uint32_t frame)
{
    if (w->table_index[frame])
        return w->table_index[frame] - 1;
    uint32_t *slot = vec_push(&w->table);
    if (!slot)
        return UINT32_MAX;
    *slot = frame;
    w->table_index[frame] = (uint32_t)w->table.n;
    return (uint32_t)w->table.n - 1;
}

static int visit_stack(void *ctx, const uint32_t *frames, size_t depth, uint64_t count)
{
    struct speedscope_writer *w = ctx;
    if (frames[0] != w->root) {
        if ((w->root != PROFILE_NO_FRAME && close_profile(w) != 0) ||
            open_profile(w, profile_frame_name(w->profile, frames[0])) != 0)
            return -1;
        w->root = frames[0];
    }
    /* ",[" + up to 11 bytes per frame + "]" */
    if (depth > SIZE_MAX / 16 || vec_reserve(&w->sample_text, 16 * depth + 4) != 0) {
        errno = ENOMEM;
        return -1;
    }
    char *text = w->sample_text.v, *at = text;
    if (w->weights.n)
        *at++ = ',';
    *at++ = '[';
    for (size_t d = 1; d < depth; d++) {
        uint32_t index = table_index(w, frames[d]);
        if (index == UINT32_MAX) {
            errno = ENOMEM;
            return -1;
        }
        if (d > 1)
            *at++ = ',';
        char digits[24];
        char *from = format_u64(digits, index);
        size_t len = (size_t)(digits + sizeof(digits) - from);
        memcpy(at, from, len);
        at += len;
    }
    *at++ = ']';
    if (fwrite(text, 1, (size_t)(at - text), w->out) != (size_t)(at - text))
        return -1;
    uint64_t *weight = vec_push(&w->weights);
    if (!weight) {
        errno = ENOMEM;
        return -1;
    }
    *weight = count;
    w->weight_sum += count;
    return 0;
}

static int write_frame(FILE *out, const char *name)
{
    struct frame_parts parts;
    export_parse_frame(name, &parts);
    if (fputs("{\"name\":", out) == EOF || put_string(out, name) != 0)
        return -1;
    if (parts.file && (fputs(",\"file\":", out) == EOF || json_write_string(out, parts.file, parts.file_len) != 0 ||
                       fputs(",\"line\":", out) == EOF || put_u64(out, parts.line) != 0))
        return -1;
    return putc('}', out) == EOF ? -1 : 0;
}

static int write_document(struct speedscope_writer *w, const struct export_info *info)
{
    const char *name = info && info->name ? info->name : "taskspy";
    FILE *out = w->out;
    if (fputs("{\"$schema\":\"" SCHEMA_URL "\",\"exporter\":", out) == EOF ||
        put_string(out, info && info->exporter ? info->exporter : "taskspy") != 0 ||
        fputs(",\"name\":", out) == EOF || put_string(out, name) != 0 || fputs(",\"profiles\":[\n", out) == EOF)
        return -1;
    int rc = stack_walk(w->profile, visit_stack, w);
    if (rc != 0)
        return -1;
    /* no stacks: one empty profile, so that viewers open the file and show that it is empty */
    if (w->root == PROFILE_NO_FRAME && open_profile(w, name) != 0)
        return -1;
    if (close_profile(w) != 0 || fputs("\n],\"activeProfileIndex\":", out) == EOF || put_u64(out, w->heaviest) != 0 ||
        fputs(",\"shared\":{\"frames\":[", out) == EOF)
        return -1;
    for (size_t i = 0; i < w->table.n; i++)
        if (fputs(i ? ",\n" : "\n", out) == EOF || write_frame(out, profile_frame_name(w->profile, w->table.v[i])) != 0)
            return -1;
    return fputs("\n]}}\n", out) == EOF ? -1 : 0;
}

int profile_write_speedscope(const struct profile *p, FILE *out, const struct export_info *info)
{
    struct speedscope_writer w = { .profile = p, .out = out, .root = PROFILE_NO_FRAME };
    size_t n_frames = profile_frame_count(p);
    w.table_index = calloc(n_frames ? n_frames : 1, sizeof(*w.table_index));
    if (!w.table_index) {
        errno = ENOMEM;
        return -1;
    }
    errno = 0;
    int rc = write_document(&w, info);
    if (rc != 0 && errno == 0)
        errno = EIO;
    free(w.table_index);
    vec_free(&w.table);
    vec_free(&w.weights);
    vec_free(&w.sample_text);
    return rc;
}
