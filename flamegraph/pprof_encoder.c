/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pprof_encoder.c: profile.proto messages, encoded one at a time and compressed once a chunk has gathered.
 * Protobuf fields may come in any order, so samples come first (as their writer walks the stacks), then
 * mappings, locations and functions, and the string table last, once every string is in it. */
#include "flamegraph/pprof_encoder.h"

#include <errno.h>
#include <string.h>

/* profile.proto field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5,
    MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
    MAPPING_HAS_INLINE_FRAMES = 10,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4, FUNCTION_START_LINE = 5,
};

#define FLUSH_AT (1u << 16)            /* compress the encoded messages once this many bytes are waiting */

uint32_t pprof_string(struct pprof_encoder *e, const char *s, size_t len)
{
    uint32_t id = profile_intern(e->strings, s, len);
    if (id != PROFILE_NO_FRAME)
        return id;
    e->no_memory = true;
    return 0;
}

static int flush_out(struct pprof_encoder *e)
{
    if (e->out.failed || e->no_memory) {
        errno = ENOMEM;
        return -1;
    }
    int rc = gzip_sink_write(&e->gzip, e->out.v, e->out.n);
    pb_reset(&e->out);
    return rc;
}

/* Put the message built in e->message into the profile as field, compressing when a chunk has gathered. */
static int add_message(struct pprof_encoder *e, uint32_t field)
{
    pb_message_field(&e->out, field, &e->message);
    return e->out.n >= FLUSH_AT || e->out.failed || e->no_memory ? flush_out(e) : 0;
}

static void add_value_type(struct pprof_encoder *e, uint32_t field, const char *type, const char *unit)
{
    pb_reset(&e->part);
    pb_uint_field(&e->part, VALUE_TYPE_TYPE, pprof_string(e, type, strlen(type)));
    pb_uint_field(&e->part, VALUE_TYPE_UNIT, pprof_string(e, unit, strlen(unit)));
    pb_message_field(&e->out, field, &e->part);
}

int pprof_encoder_open(struct pprof_encoder *e, FILE *out, const struct export_info *info)
{
    memset(e, 0, sizeof(*e));
    if (!(e->strings = profile_new()) || gzip_sink_open(&e->gzip, out) != 0) {
        profile_free(e->strings);
        errno = ENOMEM;
        return -1;
    }
    e->period_ns = info ? info->period_ns : 0;
    pprof_string(e, "", 0);
    e->key_task = pprof_string(e, "task", 4);
    e->key_task_id = pprof_string(e, "task_id", 7);
    e->key_thread = pprof_string(e, "thread", 6);
    add_value_type(e, PROFILE_SAMPLE_TYPE, "samples", "count");
    if (e->period_ns)
        add_value_type(e, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
    e->wait = info && info->wait;
    if (e->wait)
        add_value_type(e, PROFILE_SAMPLE_TYPE, "wait", "nanoseconds");
    return 0;
}

void pprof_root_labels(struct pprof_encoder *e, const char *root, struct pprof_labels *out)
{
    struct root_parts parts;
    export_parse_root(root, &parts);
    out->task = parts.task ? pprof_string(e, parts.task, parts.task_len) : 0;
    out->task_id = parts.task_id ? pprof_string(e, parts.task_id, parts.task_id_len) : 0;
    out->thread = parts.thread ? pprof_string(e, parts.thread, parts.thread_len) : 0;
}

static void add_label(struct pprof_encoder *e, uint32_t key, uint32_t value)
{
    if (!value)
        return;
    pb_reset(&e->part);
    pb_uint_field(&e->part, LABEL_KEY, key);
    pb_uint_field(&e->part, LABEL_STR, value);
    pb_message_field(&e->message, SAMPLE_LABEL, &e->part);
}

int pprof_sample(struct pprof_encoder *e, const uint64_t *location_ids, size_t n, uint64_t count,
                 uint64_t wait_ns, const struct pprof_labels *labels)
{
    uint64_t values[3] = { count };
    size_t n_values = 1;
    if (e->period_ns)
        values[n_values++] = count * e->period_ns;
    if (e->wait)
        values[n_values++] = wait_ns;
    pb_reset(&e->message);
    pb_packed_field(&e->message, SAMPLE_LOCATION_ID, location_ids, n);
    pb_packed_field(&e->message, SAMPLE_VALUE, values, n_values);
    add_label(e, e->key_task, labels->task);
    add_label(e, e->key_task_id, labels->task_id);
    add_label(e, e->key_thread, labels->thread);
    return add_message(e, PROFILE_SAMPLE);
}

int pprof_mapping(struct pprof_encoder *e, const struct pprof_mapping *m)
{
    pb_reset(&e->message);
    pb_uint_field(&e->message, MAPPING_ID, m->id);
    pb_uint_field(&e->message, MAPPING_MEMORY_START, m->start);
    pb_uint_field(&e->message, MAPPING_MEMORY_LIMIT, m->limit);
    pb_uint_field(&e->message, MAPPING_FILE_OFFSET, m->offset);
    pb_uint_field(&e->message, MAPPING_FILENAME, m->file);
    pb_uint_field(&e->message, MAPPING_BUILD_ID, m->build_id);
    pb_uint_field(&e->message, MAPPING_HAS_FUNCTIONS, 1);
    pb_uint_field(&e->message, MAPPING_HAS_FILENAMES, 1);
    pb_uint_field(&e->message, MAPPING_HAS_LINE_NUMBERS, 1);
    pb_uint_field(&e->message, MAPPING_HAS_INLINE_FRAMES, 1);
    return add_message(e, PROFILE_MAPPING);
}

int pprof_location(struct pprof_encoder *e, uint64_t id, uint64_t mapping_id, uint64_t address,
                   const struct pprof_line *lines, size_t n)
{
    pb_reset(&e->message);
    pb_uint_field(&e->message, LOCATION_ID, id);
    pb_uint_field(&e->message, LOCATION_MAPPING_ID, mapping_id);
    pb_uint_field(&e->message, LOCATION_ADDRESS, address);
    for (size_t i = 0; i < n; i++) {
        pb_reset(&e->part);
        pb_uint_field(&e->part, LINE_FUNCTION_ID, lines[i].function_id);
        pb_uint_field(&e->part, LINE_LINE, lines[i].line);
        pb_message_field(&e->message, LOCATION_LINE, &e->part);
    }
    return add_message(e, PROFILE_LOCATION);
}

int pprof_function(struct pprof_encoder *e, uint64_t id, uint32_t name, uint32_t system_name, uint32_t file,
                   uint64_t start_line)
{
    pb_reset(&e->message);
    pb_uint_field(&e->message, FUNCTION_ID, id);
    pb_uint_field(&e->message, FUNCTION_NAME, name);
    pb_uint_field(&e->message, FUNCTION_SYSTEM_NAME, system_name);
    pb_uint_field(&e->message, FUNCTION_FILENAME, file);
    pb_uint_field(&e->message, FUNCTION_START_LINE, start_line);
    return add_message(e, PROFILE_FUNCTION);
}

/* Everything after the samples and tables. */
static int write_rest(struct pprof_encoder *e, const struct export_info *info)
{
    if (info && info->exporter)
        pb_uint_field(&e->out, PROFILE_COMMENT, pprof_string(e, info->exporter, strlen(info->exporter)));
    if (info) {
        pb_uint_field(&e->out, PROFILE_TIME_NANOS, info->start_time_ns);
        pb_uint_field(&e->out, PROFILE_DURATION_NANOS, info->duration_ns);
    }
    if (e->period_ns) {
        add_value_type(e, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
        pb_uint_field(&e->out, PROFILE_PERIOD, e->period_ns);
    } else {
        add_value_type(e, PROFILE_PERIOD_TYPE, "samples", "count");
        pb_uint_field(&e->out, PROFILE_PERIOD, 1);
    }
    if (e->wait)                   /* pprof shows the last type unless told: CPU time stays the default */
        pb_uint_field(&e->out, PROFILE_DEFAULT_SAMPLE_TYPE,
                      e->period_ns ? pprof_string(e, "cpu", 3) : pprof_string(e, "samples", 7));
    /* the string table last: every string has been interned by now */
    size_t n_strings = profile_frame_count(e->strings);
    for (uint32_t i = 0; i < n_strings; i++) {
        const char *s = profile_frame_name(e->strings, i);
        pb_bytes_field(&e->out, PROFILE_STRING_TABLE, s, strlen(s));
        if (e->out.n >= FLUSH_AT && flush_out(e) != 0)
            return -1;
    }
    return flush_out(e);
}

int pprof_encoder_close(struct pprof_encoder *e, int rc, const struct export_info *info)
{
    if (rc == 0)
        rc = write_rest(e, info);
    if (rc == 0)
        rc = gzip_sink_finish(&e->gzip);
    else
        gzip_sink_abort(&e->gzip);
    if (rc != 0 && errno == 0)
        errno = ENOMEM;
    profile_free(e->strings);
    pb_free(&e->out);
    pb_free(&e->message);
    pb_free(&e->part);
    return rc;
}
