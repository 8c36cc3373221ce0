/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_exports.c: unit tests of the speedscope and pprof exports and their parts: the stack walk (every
 * stack once, root first, stacks of one root together), JSON string literals (escapes, invalid UTF-8 as
 * U+FFFD, valid multi-byte text kept), the protobuf writer's bytes (varints, keys, length-delimited and
 * packed fields, zero fields left out), frame and root names read back (file:line, inlined, task roots),
 * a small profile's speedscope file exactly, the same profile's pprof file decoded back (gunzip, a small
 * protobuf reader here) into the same stacks, counts, values, labels and inline chains, a recording's
 * address stacks written as pprof and decoded (locations, mappings with build ids, system names, start
 * lines, labels), empty profiles in both formats, and write errors reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <zlib.h>

#include "flamegraph/export_internal.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/json_string.h"
#include "flamegraph/protobuf_writer.h"
#include "flamegraph/stack_walk.h"

#define STACK(...) (const char *const[]){ __VA_ARGS__ }, sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *)

/* The profile most tests use: two task roots (one with an inline chain), a thread root with a sample of
 * its own, names that need escaping. */
static struct profile *sample_profile(void)
{
    struct profile *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_add(p, STACK("task: serve", "handle @ srv.rs:42", "parse @ http.rs:7", "memchr"), 5), 0);
    assert_int_equal(profile_add(p, STACK("task: serve", "handle @ srv.rs:42", "render", "fmt_[i]", "pad_[i]", "memcpy"), 3), 0);
    assert_int_equal(profile_add(p, STACK("task 17: job", "compute @ job.rs:5"), 2), 0);
    assert_int_equal(profile_add(p, STACK("worker-0", "main", "epoll_[k]"), 4), 0);
    assert_int_equal(profile_add(p, STACK("worker-0"), 1), 0);
    assert_int_equal(profile_add(p, STACK("say \"hi\"\\", "tab\there"), 1), 0);
    return p;
}

/* ---- stack walk ------------------------------------------------------------------------------------ */

struct walked {
    char lines[16][160];
    size_t n;
    uint64_t total;
    int stop_after;      /* return 7 after this many stacks (0: never) */
};

static int record_stack(void *ctx, const uint32_t *frames, size_t depth, uint64_t count);
static const struct profile *walked_profile;

static int record_stack(void *ctx, const uint32_t *frames, size_t depth, uint64_t count)
{
    struct walked *w = ctx;
    assert_true(w->n < 16);
    char *line = w->lines[w->n++];
    line[0] = '\0';
    for (size_t d = 0; d < depth; d++) {
        strcat(line, profile_frame_name(walked_profile, frames[d]));
        strcat(line, d + 1 < depth ? ";" : "");
    }
    snprintf(line + strlen(line), 24, " %llu", (unsigned long long)count);
    w->total += count;
    return w->stop_after && (int)w->n == w->stop_after ? 7 : 0;
}

static void test_stack_walk(void **state)
{
    (void)state;
    struct profile *p = sample_profile();
    walked_profile = p;
    struct walked w = { .n = 0 };
    assert_int_equal(stack_walk(p, record_stack, &w), 0);
    const char *want[] = {
        "task: serve;handle @ srv.rs:42;parse @ http.rs:7;memchr 5",
        "task: serve;handle @ srv.rs:42;render;fmt_[i];pad_[i];memcpy 3",
        "task 17: job;compute @ job.rs:5 2",
        "worker-0 1",
        "worker-0;main;epoll_[k] 4",
        "say \"hi\"\\;tab\there 1",
    };
    assert_int_equal(w.n, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(w.lines[i], want[i]);
    assert_int_equal(w.total, profile_total(p));
    /* the visitor's non-zero value stops the walk and is returned */
    struct walked stopped = { .stop_after = 2 };
    assert_int_equal(stack_walk(p, record_stack, &stopped), 7);
    assert_int_equal(stopped.n, 2);
    profile_free(p);

    /* no stacks: no visit */
    struct profile *empty = profile_new();
    struct walked none = { .n = 0 };
    assert_int_equal(stack_walk(empty, record_stack, &none), 0);
    assert_int_equal(none.n, 0);
    profile_free(empty);
}

/* ---- JSON strings ---------------------------------------------------------------------------------- */

static char *json_of(const char *s, size_t len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    assert_non_null(out);
    assert_int_equal(json_write_string(out, s, len), 0);
    assert_int_equal(fclose(out), 0);
    return buf;
}

#define EXPECT_JSON(literal, want)                                 \
    do {                                                           \
        char *got_ = json_of((literal), sizeof(literal) - 1);      \
        assert_string_equal(got_, (want));                         \
        free(got_);                                                \
    } while (0)

static void test_json_string(void **state)
{
    (void)state;
    EXPECT_JSON("", "\"\"");
    EXPECT_JSON("plain::name<T>", "\"plain::name<T>\"");
    EXPECT_JSON("q\"b\\s/", "\"q\\\"b\\\\s/\"");
    EXPECT_JSON("a\nb\tc\rd", "\"a\\nb\\tc\\rd\"");
    EXPECT_JSON("\x01\x1f", "\"\\u0001\\u001f\"");
    EXPECT_JSON("nul\0in", "\"nul\\u0000in\"");
    /* valid UTF-8 passes as it is: 2, 3 and 4 bytes */
    EXPECT_JSON("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\"");
    /* invalid: a lone continuation, Latin-1, an overlong '/', a surrogate, beyond U+10FFFF, truncated */
    EXPECT_JSON("a\x80" "b", "\"a\\ufffdb\"");
    EXPECT_JSON("caf\xe9", "\"caf\\ufffd\"");
    EXPECT_JSON("\xc0\xaf", "\"\\ufffd\\ufffd\"");
    EXPECT_JSON("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
    EXPECT_JSON("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    EXPECT_JSON("x\xe2\x82", "\"x\\ufffd\\ufffd\"");
    assert_int_equal(json_utf8_sequence_length((const unsigned char *)"\xf4\x8f\xbf\xbf", 4), 4);
    assert_int_equal(json_utf8_sequence_length((const unsigned char *)"\xe0\x9f\x80", 3), 0);
    assert_int_equal(json_utf8_sequence_length((const unsigned char *)"\xf0\x9f\x94", 3), 0);
}

/* ---- protobuf writer -------------------------------------------------------------------------------- */

static void expect_bytes(const struct pb_buffer *b, const uint8_t *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->n, n);
    assert_memory_equal(b->v, want, n);
}

static void test_protobuf_writer(void **state)
{
    (void)state;
    struct pb_buffer b = { 0 };
    pb_varint(&b, 0);
    pb_varint(&b, 1);
    pb_varint(&b, 127);
    pb_varint(&b, 128);
    pb_varint(&b, 300);
    expect_bytes(&b, (const uint8_t[]){ 0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02 }, 7);
    pb_reset(&b);
    pb_varint(&b, UINT64_MAX);
    expect_bytes(&b, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10);
    assert_int_equal(pb_varint_size(UINT64_MAX), 10);
    assert_int_equal(pb_varint_size(300), 2);

    /* field 1 = 150 (the protobuf documentation's example), a zero field left out, field 2 = "testing" */
    pb_reset(&b);
    pb_uint_field(&b, 1, 150);
    pb_uint_field(&b, 3, 0);
    pb_bytes_field(&b, 2, "testing", 7);
    expect_bytes(&b, (const uint8_t[]){ 0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' }, 12);
    /* an empty string is still written (the string table's first entry) */
    pb_reset(&b);
    pb_bytes_field(&b, 6, "", 0);
    expect_bytes(&b, (const uint8_t[]){ 0x32, 0x00 }, 2);
    /* packed repeated: field 4, [3, 270, 86942] */
    pb_reset(&b);
    pb_packed_field(&b, 4, (const uint64_t[]){ 3, 270, 86942 }, 3);
    pb_packed_field(&b, 5, NULL, 0);
    expect_bytes(&b, (const uint8_t[]){ 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 }, 8);
    /* an embedded message, and a large field number */
    struct pb_buffer inner = { 0 };
    pb_uint_field(&inner, 1, 150);
    pb_reset(&b);
    pb_message_field(&b, 3, &inner);
    pb_uint_field(&b, 16, 1);
    expect_bytes(&b, (const uint8_t[]){ 0x1a, 0x03, 0x08, 0x96, 0x01, 0x80, 0x01, 0x01 }, 8);
    /* a failed part fails the whole */
    inner.failed = true;
    pb_message_field(&b, 3, &inner);
    assert_true(b.failed);
    pb_free(&inner);
    pb_free(&b);
}

/* ---- names read back ------------------------------------------------------------------------------- */

static void expect_frame(const char *name, const char *function, const char *file, unsigned line, bool inlined)
{
    struct frame_parts f;
    export_parse_frame(name, &f);
    assert_int_equal(f.function_len, strlen(function));
    assert_memory_equal(f.function, function, f.function_len);
    if (file) {
        assert_non_null(f.file);
        assert_int_equal(f.file_len, strlen(file));
        assert_memory_equal(f.file, file, f.file_len);
    } else {
        assert_null(f.file);
    }
    assert_int_equal(f.line, line);
    assert_int_equal(f.inlined, inlined);
}

static void test_frame_names(void **state)
{
    (void)state;
    expect_frame("memchr", "memchr", NULL, 0, false);
    expect_frame("app::serve @ main.rs:42", "app::serve", "main.rs", 42, false);
    expect_frame("app::serve @ main.rs:42_[i]", "app::serve", "main.rs", 42, true);
    expect_frame("fmt_[i]", "fmt", NULL, 0, true);
    expect_frame("do_syscall_64_[k]", "do_syscall_64_[k]", NULL, 0, false);
    expect_frame("handle (app.py:12)", "handle", "app.py", 12, false);
    expect_frame("inner [src/lib.c:9]", "inner", "src/lib.c", 9, false);
    expect_frame("C:\\x\\y.c @ C:\\x\\y.c:3", "C:\\x\\y.c", "C:\\x\\y.c", 3, false);
    /* not positions: no line, line 0, no file, words, a call's parentheses */
    expect_frame("a @ main.rs", "a @ main.rs", NULL, 0, false);
    expect_frame("a @ main.rs:0", "a @ main.rs:0", NULL, 0, false);
    expect_frame("a @ :5", "a @ :5", NULL, 0, false);
    expect_frame("a @ x:5a", "a @ x:5a", NULL, 0, false);
    expect_frame("(anonymous namespace)::f()", "(anonymous namespace)::f()", NULL, 0, false);
    expect_frame("f (int)", "f (int)", NULL, 0, false);
    expect_frame("@ x:1", "@ x:1", NULL, 0, false);

    struct root_parts r;
    export_parse_root("task: app::serve", &r);
    assert_int_equal(r.task_len, 10);
    assert_memory_equal(r.task, "app::serve", 10);
    assert_null(r.task_id);
    assert_null(r.thread);
    export_parse_root("task 17: job", &r);
    assert_memory_equal(r.task, "job", 3);
    assert_int_equal(r.task_id_len, 2);
    assert_memory_equal(r.task_id, "17", 2);
    export_parse_root("task 0x7f00ab: job", &r);
    assert_int_equal(r.task_id_len, 8);
    export_parse_root("[unknown task]", &r);
    assert_int_equal(r.task_len, strlen("[unknown task]"));
    assert_null(r.thread);
    export_parse_root("task x: y", &r);          /* not an id: a thread named so */
    assert_null(r.task);
    assert_int_equal(r.thread_len, 9);
    export_parse_root("exec-worker-0", &r);
    assert_null(r.task);
    assert_memory_equal(r.thread, "exec-worker-0", 13);
}

/* ---- speedscope ------------------------------------------------------------------------------------ */

static char *speedscope_text(const struct profile *p, const struct export_info *info)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    assert_non_null(out);
    assert_int_equal(profile_write_speedscope(p, out, info), 0);
    assert_int_equal(fclose(out), 0);
    return buf;
}

#define PROFILE_HEAD(name) "{\"type\":\"sampled\",\"name\":\"" name "\",\"unit\":\"none\",\"startValue\":0,\"samples\":"

static void test_speedscope(void **state)
{
    (void)state;
    struct profile *p = sample_profile();
    struct export_info info = { .name = "unit \"test\"", .exporter = "taskspy test", .period_ns = 1000 };
    char *got = speedscope_text(p, &info);
    const char *want =
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"taskspy test\","
        "\"name\":\"unit \\\"test\\\"\",\"profiles\":[\n"
        PROFILE_HEAD("task: serve") "[[0,1,2],[0,3,4,5,6]],\"weights\":[5,3],\"endValue\":8},\n"
        PROFILE_HEAD("task 17: job") "[[7]],\"weights\":[2],\"endValue\":2},\n"
        PROFILE_HEAD("worker-0") "[[],[8,9]],\"weights\":[1,4],\"endValue\":5},\n"
        PROFILE_HEAD("say \\\"hi\\\"\\\\") "[[10]],\"weights\":[1],\"endValue\":1}\n"
        "],\"activeProfileIndex\":0,\"shared\":{\"frames\":[\n"
        "{\"name\":\"handle @ srv.rs:42\",\"file\":\"srv.rs\",\"line\":42},\n"
        "{\"name\":\"parse @ http.rs:7\",\"file\":\"http.rs\",\"line\":7},\n"
        "{\"name\":\"memchr\"},\n"
        "{\"name\":\"render\"},\n"
        "{\"name\":\"fmt_[i]\"},\n"
        "{\"name\":\"pad_[i]\"},\n"
        "{\"name\":\"memcpy\"},\n"
        "{\"name\":\"compute @ job.rs:5\",\"file\":\"job.rs\",\"line\":5},\n"
        "{\"name\":\"main\"},\n"
        "{\"name\":\"epoll_[k]\"},\n"
        "{\"name\":\"tab\\there\"}\n"
        "]}}\n";
    assert_string_equal(got, want);
    free(got);

    /* the heaviest profile is the one shown first */
    assert_int_equal(profile_add(p, STACK("worker-0", "main", "epoll_[k]"), 10), 0);
    got = speedscope_text(p, NULL);
    assert_non_null(strstr(got, "\"activeProfileIndex\":2,"));
    assert_non_null(strstr(got, "\"exporter\":\"taskspy\",\"name\":\"taskspy\","));
    free(got);
    profile_free(p);

    /* empty: one empty profile named by the file */
    struct profile *empty = profile_new();
    got = speedscope_text(empty, &info);
    assert_string_equal(got,
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"taskspy test\","
        "\"name\":\"unit \\\"test\\\"\",\"profiles\":[\n"
        PROFILE_HEAD("unit \\\"test\\\"") "[],\"weights\":[],\"endValue\":0}\n"
        "],\"activeProfileIndex\":0,\"shared\":{\"frames\":[\n]}}\n");
    free(got);
    profile_free(empty);
}

/* ---- pprof: decoded back ----------------------------------------------------------------------------- */

#define MAX_ITEMS 64

struct reader {
    const uint8_t *at, *end;
};

static uint64_t read_varint(struct reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        assert_true(r->at < r->end);
        uint8_t byte = *r->at++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    fail_msg("varint longer than 10 bytes");
    return 0;
}

/* The next field: its number, and either its varint value or its bytes (sub). False at the end. */
static bool next_field(struct reader *r, uint32_t *field, uint64_t *value, struct reader *sub)
{
    if (r->at == r->end)
        return false;
    uint64_t key = read_varint(r);
    *field = (uint32_t)(key >> 3);
    switch (key & 7) {
    case 0:
        *value = read_varint(r);
        sub->at = sub->end = NULL;
        return true;
    case 2: {
        uint64_t len = read_varint(r);
        assert_true(len <= (uint64_t)(r->end - r->at));
        sub->at = r->at;
        sub->end = r->at + len;
        r->at += len;
        *value = 0;
        return true;
    }
    default:
        fail_msg("unexpected wire type %u", (unsigned)(key & 7));
        return false;
    }
}

struct decoded_sample {
    uint64_t locations[MAX_ITEMS];
    size_t n_locations;
    uint64_t values[4];
    size_t n_values;
    uint64_t label_keys[4], label_strs[4];
    size_t n_labels;
};

struct decoded_location {
    uint64_t id, mapping, address;
    uint64_t functions[8], lines[8];
    size_t n_lines;
};

struct decoded_profile {
    uint64_t sample_types[4][2];
    size_t n_sample_types;
    struct decoded_sample samples[MAX_ITEMS];
    size_t n_samples;
    struct decoded_location locations[MAX_ITEMS];
    size_t n_locations;
    uint64_t functions[MAX_ITEMS][5];   /* id, name, filename, system name, start line */
    size_t n_functions;
    char *strings[MAX_ITEMS * 2];
    size_t n_strings;
    uint64_t mapping_id, mapping_start, mapping_limit, mapping_offset, mapping_file, mapping_build_id, mapping_flags;
    uint64_t time_nanos, duration_nanos, period, period_type[2];
};

static void read_packed(struct reader *r, uint64_t *out, size_t *n, size_t max)
{
    while (r->at < r->end) {
        assert_true(*n < max);
        out[(*n)++] = read_varint(r);
    }
}

static void decode_sample(struct reader *r, struct decoded_sample *s)
{
    uint32_t f;
    uint64_t v;
    struct reader sub;
    memset(s, 0, sizeof(*s));
    while (next_field(r, &f, &v, &sub)) {
        if (f == 1)
            read_packed(&sub, s->locations, &s->n_locations, MAX_ITEMS);
        else if (f == 2)
            read_packed(&sub, s->values, &s->n_values, 4);
        else if (f == 3) {
            assert_true(s->n_labels < 4);
            struct reader label = sub, none;
            while (next_field(&label, &f, &v, &none)) {
                if (f == 1)
                    s->label_keys[s->n_labels] = v;
                else if (f == 2)
                    s->label_strs[s->n_labels] = v;
                else
                    fail_msg("label field %u", f);
            }
            s->n_labels++;
        }
    }
}

static void decode_location(struct reader *r, struct decoded_location *l)
{
    uint32_t f;
    uint64_t v;
    struct reader sub;
    memset(l, 0, sizeof(*l));
    while (next_field(r, &f, &v, &sub)) {
        if (f == 1)
            l->id = v;
        else if (f == 2)
            l->mapping = v;
        else if (f == 3)
            l->address = v;
        else if (f == 4) {
            assert_true(l->n_lines < 8);
            struct reader none;
            while (next_field(&sub, &f, &v, &none))
                (f == 1 ? l->functions : l->lines)[l->n_lines] = v;
            l->n_lines++;
        }
    }
}

static void decode_profile(const uint8_t *data, size_t len, struct decoded_profile *d)
{
    memset(d, 0, sizeof(*d));
    struct reader r = { data, data + len }, sub, none;
    uint32_t f;
    uint64_t v;
    while (next_field(&r, &f, &v, &sub)) {
        switch (f) {
        case 1:
        case 11: {
            uint64_t *vt = f == 1 ? d->sample_types[d->n_sample_types++] : d->period_type;
            while (next_field(&sub, &f, &v, &none))
                vt[f - 1] = v;
            break;
        }
        case 2:
            assert_true(d->n_samples < MAX_ITEMS);
            decode_sample(&sub, &d->samples[d->n_samples++]);
            break;
        case 3:
            while (next_field(&sub, &f, &v, &none)) {
                if (f == 1)
                    d->mapping_id = v;
                else if (f == 2)
                    d->mapping_start = v;
                else if (f == 3)
                    d->mapping_limit = v;
                else if (f == 4)
                    d->mapping_offset = v;
                else if (f == 5)
                    d->mapping_file = v;
                else if (f == 6)
                    d->mapping_build_id = v;
                else if (f >= 7 && f <= 10)
                    d->mapping_flags |= v << (f - 7);
            }
            break;
        case 4:
            assert_true(d->n_locations < MAX_ITEMS);
            decode_location(&sub, &d->locations[d->n_locations++]);
            break;
        case 5:
            assert_true(d->n_functions < MAX_ITEMS);
            while (next_field(&sub, &f, &v, &none)) {
                if (f == 1)
                    d->functions[d->n_functions][0] = v;
                else if (f == 2)
                    d->functions[d->n_functions][1] = v;
                else if (f == 4)
                    d->functions[d->n_functions][2] = v;
                else if (f == 3)
                    d->functions[d->n_functions][3] = v;
                else if (f == 5)
                    d->functions[d->n_functions][4] = v;
            }
            d->n_functions++;
            break;
        case 6:
            assert_true(d->n_strings < MAX_ITEMS * 2);
            d->strings[d->n_strings++] = strndup((const char *)sub.at, (size_t)(sub.end - sub.at));
            break;
        case 9: d->time_nanos = v; break;
        case 10: d->duration_nanos = v; break;
        case 12: d->period = v; break;
        default: break;
        }
    }
}

static void decoded_free(struct decoded_profile *d)
{
    for (size_t i = 0; i < d->n_strings; i++)
        free(d->strings[i]);
}

static const char *string_at(const struct decoded_profile *d, uint64_t i)
{
    assert_true(i < d->n_strings);
    return d->strings[i];
}

static const struct decoded_location *location_by_id(const struct decoded_profile *d, uint64_t id)
{
    for (size_t i = 0; i < d->n_locations; i++)
        if (d->locations[i].id == id)
            return &d->locations[i];
    fail_msg("no location %llu", (unsigned long long)id);
    return NULL;
}

static const uint64_t *function_by_id(const struct decoded_profile *d, uint64_t id)
{
    for (size_t i = 0; i < d->n_functions; i++)
        if (d->functions[i][0] == id)
            return d->functions[i];
    fail_msg("no function %llu", (unsigned long long)id);
    return NULL;
}

/* A sample as a folded line: locations root first, each location's lines outermost first, inlined ones
 * marked "_[i]", positions as " @ FILE:LINE". */
static void sample_line(const struct decoded_profile *d, const struct decoded_sample *s, char *line, size_t len)
{
    line[0] = '\0';
    for (size_t i = s->n_locations; i-- > 0;) {
        const struct decoded_location *l = location_by_id(d, s->locations[i]);
        assert_int_equal(l->mapping, d->mapping_id);
        assert_true(l->address >= d->mapping_start && l->address < d->mapping_limit);
        for (size_t j = l->n_lines; j-- > 0;) {
            const uint64_t *f = function_by_id(d, l->functions[j]);
            size_t at = strlen(line);
            snprintf(line + at, len - at, "%s%s", at ? ";" : "", string_at(d, f[1]));
            at = strlen(line);
            if (f[2])
                snprintf(line + at, len - at, " @ %s:%llu", string_at(d, f[2]), (unsigned long long)l->lines[j]);
            else
                assert_int_equal(l->lines[j], 0);
            if (j + 1 < l->n_lines)
                strncat(line, "_[i]", len - strlen(line) - 1);
        }
    }
    size_t at = strlen(line);
    snprintf(line + at, len - at, " %llu", (unsigned long long)s->values[0]);
}

/* The labels of a sample as "key=value,...". */
static void sample_labels(const struct decoded_profile *d, const struct decoded_sample *s, char *text, size_t len)
{
    text[0] = '\0';
    for (size_t i = 0; i < s->n_labels; i++) {
        size_t at = strlen(text);
        snprintf(text + at, len - at, "%s%s=%s", i ? "," : "", string_at(d, s->label_keys[i]),
                 string_at(d, s->label_strs[i]));
    }
}

/* The pprof file written by profile_write_pprof (addresses NULL) or profile_write_pprof_addresses, decoded. */
static void pprof_decoded_of(const struct profile *p, const struct address_profile *addresses,
                             const struct export_info *info, struct decoded_profile *d)
{
    char *gz = NULL;
    size_t gz_len = 0;
    FILE *out = open_memstream(&gz, &gz_len);
    assert_non_null(out);
    assert_int_equal(addresses ? profile_write_pprof_addresses(addresses, p, out, info) : profile_write_pprof(p, out, info), 0);
    assert_int_equal(fclose(out), 0);
    assert_true(gz_len > 18);
    assert_int_equal((uint8_t)gz[0], 0x1f);   /* gzip magic */
    assert_int_equal((uint8_t)gz[1], 0x8b);
    size_t cap = 1u << 20;
    uint8_t *raw = malloc(cap);
    assert_non_null(raw);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (uint8_t *)gz;
    z.avail_in = (uInt)gz_len;
    z.next_out = raw;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.avail_in, 0);                  /* nothing after the gzip member */
    size_t raw_len = cap - z.avail_out;
    inflateEnd(&z);
    decode_profile(raw, raw_len, d);
    free(raw);
    free(gz);
    assert_true(d->n_strings > 0);
    assert_string_equal(d->strings[0], "");
}

static void pprof_decoded(const struct profile *p, const struct export_info *info, struct decoded_profile *d)
{
    pprof_decoded_of(p, NULL, info, d);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_pprof(void **state)
{
    (void)state;
    struct profile *p = sample_profile();
    struct export_info info = { .name = "/bin/app", .exporter = "taskspy test", .period_ns = 10101010,
                                .duration_ns = 4000000000u, .start_time_ns = 1700000000123456789u };
    static struct decoded_profile d;
    pprof_decoded(p, &info, &d);

    assert_int_equal(d.n_sample_types, 2);
    assert_string_equal(string_at(&d, d.sample_types[0][0]), "samples");
    assert_string_equal(string_at(&d, d.sample_types[0][1]), "count");
    assert_string_equal(string_at(&d, d.sample_types[1][0]), "cpu");
    assert_string_equal(string_at(&d, d.sample_types[1][1]), "nanoseconds");
    assert_string_equal(string_at(&d, d.period_type[0]), "cpu");
    assert_string_equal(string_at(&d, d.period_type[1]), "nanoseconds");
    assert_int_equal(d.period, 10101010);
    assert_int_equal(d.duration_nanos, 4000000000u);
    assert_int_equal(d.time_nanos, 1700000000123456789u);
    assert_int_equal(d.mapping_id, 1);
    assert_int_equal(d.mapping_flags, 15);           /* functions, file names, line numbers, inline frames */

    /* the same stacks and counts, values count x period, labels from the roots */
    char lines[MAX_ITEMS][200];
    char *sorted[MAX_ITEMS];
    char labels[MAX_ITEMS][100];
    assert_int_equal(d.n_samples, 6);
    for (size_t i = 0; i < d.n_samples; i++) {
        assert_int_equal(d.samples[i].n_values, 2);
        assert_int_equal(d.samples[i].values[1], d.samples[i].values[0] * 10101010);
        sample_line(&d, &d.samples[i], lines[i], sizeof(lines[i]));
        sample_labels(&d, &d.samples[i], labels[i], sizeof(labels[i]));
        sorted[i] = lines[i];
    }
    assert_string_equal(lines[0], "task: serve;handle @ srv.rs:42;parse @ http.rs:7;memchr 5");
    assert_string_equal(labels[0], "task=serve");
    assert_string_equal(lines[2], "task 17: job;compute @ job.rs:5 2");
    assert_string_equal(labels[2], "task=job,task_id=17");
    assert_string_equal(lines[3], "worker-0 1");
    assert_string_equal(labels[3], "thread=worker-0");
    assert_string_equal(labels[5], "thread=say \"hi\"\\");
    qsort(sorted, d.n_samples, sizeof(char *), compare_strings);
    const char *want[] = {
        "say \"hi\"\\;tab\there 1",
        "task 17: job;compute @ job.rs:5 2",
        "task: serve;handle @ srv.rs:42;parse @ http.rs:7;memchr 5",
        "task: serve;handle @ srv.rs:42;render;fmt_[i];pad_[i];memcpy 3",
        "worker-0 1",
        "worker-0;main;epoll_[k] 4",
    };
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(sorted[i], want[i]);

    /* the inline chain is one location of three lines, innermost first; one location per distinct frame */
    const struct decoded_location *chain = location_by_id(&d, d.samples[1].locations[1]);
    assert_int_equal(chain->n_lines, 3);
    assert_string_equal(string_at(&d, function_by_id(&d, chain->functions[0])[1]), "pad");
    assert_string_equal(string_at(&d, function_by_id(&d, chain->functions[2])[1]), "render");
    assert_int_equal(d.n_locations, 13);
    for (size_t i = 0; i < d.n_locations; i++)
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(d.locations[i].id, d.locations[j].id);
            assert_int_not_equal(d.locations[i].address, d.locations[j].address);
        }
    /* functions carry their file names */
    bool found = false;
    for (size_t i = 0; i < d.n_functions; i++)
        if (strcmp(string_at(&d, d.functions[i][1]), "compute") == 0) {
            assert_string_equal(string_at(&d, d.functions[i][2]), "job.rs");
            found = true;
        }
    assert_true(found);
    decoded_free(&d);
    profile_free(p);
}

static void test_pprof_empty_and_no_period(void **state)
{
    (void)state;
    struct profile *empty = profile_new();
    static struct decoded_profile d;
    pprof_decoded(empty, NULL, &d);
    assert_int_equal(d.n_samples, 0);
    assert_int_equal(d.n_locations, 0);
    assert_int_equal(d.n_functions, 0);
    assert_int_equal(d.n_sample_types, 1);            /* no period: counts only */
    assert_string_equal(string_at(&d, d.sample_types[0][0]), "samples");
    assert_int_equal(d.period, 1);
    decoded_free(&d);
    profile_free(empty);

    struct profile *p = profile_new();
    assert_int_equal(profile_add(p, STACK("t", "f"), 3), 0);
    pprof_decoded(p, &(struct export_info){ .period_ns = 0 }, &d);
    assert_int_equal(d.n_samples, 1);
    assert_int_equal(d.samples[0].n_values, 1);
    assert_int_equal(d.samples[0].values[0], 3);
    decoded_free(&d);
    profile_free(p);
}

/* A recording's address stacks: a repeated stack merged, one location per address with its mapping (or
 * none, as a kernel address) and its inline chain, functions with system names and start lines, labels
 * from the roots (a held-back task root settled by address_profile_finish from its task id), the
 * mapping's build id. */
static void test_pprof_addresses(void **state)
{
    (void)state;
    struct profile *names = profile_new();
    uint32_t thread = profile_intern(names, "worker-0", 8);
    uint32_t task_root = profile_intern(names, "task 42: serve", 14);
    char err[200];
    struct task_stacks *t = task_stacks_new(names, GROUP_BY_ENTRY, true, NULL, err, sizeof(err));
    struct address_profile *a = address_profile_new();
    assert_non_null(t);
    assert_non_null(a);
    struct address_mapping m = { .start = 0x5000, .limit = 0x9000, .offset = 0x1000, .file = "/bin/app",
                                 .build_id = "abcd01" };
    assert_int_equal(address_profile_mapping(a, 7, &m), 1);
    assert_int_equal(address_profile_mapping(a, 7, &m), 1);   /* the same key: the same mapping */
    struct address_line chain[] = {
        { .function = "pad", .file = "/src/fmt.rs", .line = 3 },
        { .function = "app::render", .system_name = "_ZN3app6render17h0123456789abcdefE", .file = "/src/app.rs",
          .line = 20, .start_line = 18 },
    };
    struct address_line outer[] = { { .function = "main", .file = "/src/app.rs", .line = 40, .start_line = 38 } };
    struct address_line kernel[] = { { .function = "do_syscall_64" } };
    uint32_t leaf = address_profile_location(a, 0x5123, 1, chain, 2);
    uint32_t caller = address_profile_location(a, 0x5456, 1, outer, 1);
    uint32_t in_kernel = address_profile_location(a, 0xffffffff81000010u, 0, kernel, 1);
    assert_int_equal(leaf, 1);
    assert_int_equal(caller, 2);
    assert_int_equal(in_kernel, 3);
    uint32_t user_stack[] = { leaf, caller }, kernel_stack[] = { in_kernel, caller };
    struct address_labels in_task = { .thread = thread, .root = task_root };
    struct address_labels held = { .thread = thread, .root = PROFILE_NO_FRAME, .task_id = 7, .has_task_id = true };
    struct address_labels plain = { .thread = thread, .root = thread };
    assert_int_equal(address_profile_add(a, user_stack, 2, &in_task, 1), 0);
    assert_int_equal(address_profile_add(a, kernel_stack, 2, &plain, 3), 0);
    assert_int_equal(address_profile_add(a, user_stack, 2, &in_task, 1), 0);
    assert_int_equal(address_profile_add(a, user_stack, 2, &held, 1), 0);
    assert_int_equal(address_profile_stacks(a), 3);
    assert_int_equal(address_profile_finish(a, t), 0);

    static struct decoded_profile d;
    pprof_decoded_of(names, a, &(struct export_info){ .period_ns = 1000 }, &d);
    assert_int_equal(d.n_samples, 3);
    char labels[100];
    assert_int_equal(d.samples[0].n_locations, 2);
    assert_int_equal(d.samples[0].locations[0], leaf);            /* leaf first */
    assert_int_equal(d.samples[0].locations[1], caller);
    assert_int_equal(d.samples[0].values[0], 2);
    assert_int_equal(d.samples[0].values[1], 2000);
    sample_labels(&d, &d.samples[0], labels, sizeof(labels));
    assert_string_equal(labels, "task=serve,task_id=42,thread=worker-0");
    sample_labels(&d, &d.samples[1], labels, sizeof(labels));
    assert_string_equal(labels, "thread=worker-0");
    assert_int_equal(d.samples[1].values[0], 3);
    sample_labels(&d, &d.samples[2], labels, sizeof(labels));
    assert_string_equal(labels, "task=[task entry unknown],thread=worker-0");   /* settled: the root's labels */

    assert_int_equal(d.n_locations, 3);
    const struct decoded_location *l = location_by_id(&d, leaf);
    assert_int_equal(l->address, 0x5123);
    assert_int_equal(l->mapping, 1);
    assert_int_equal(l->n_lines, 2);                               /* innermost first */
    assert_string_equal(string_at(&d, function_by_id(&d, l->functions[0])[1]), "pad");
    assert_int_equal(l->lines[0], 3);
    const uint64_t *render = function_by_id(&d, l->functions[1]);
    assert_string_equal(string_at(&d, render[1]), "app::render");
    assert_string_equal(string_at(&d, render[2]), "/src/app.rs");
    assert_string_equal(string_at(&d, render[3]), "_ZN3app6render17h0123456789abcdefE");
    assert_int_equal(render[4], 18);
    assert_int_equal(l->lines[1], 20);
    const uint64_t *pad = function_by_id(&d, l->functions[0]);
    assert_string_equal(string_at(&d, pad[3]), "pad");             /* no system name: the name */
    assert_int_equal(pad[4], 0);
    assert_int_equal(location_by_id(&d, in_kernel)->mapping, 0);
    assert_int_equal(location_by_id(&d, in_kernel)->address, 0xffffffff81000010u);

    assert_int_equal(d.mapping_id, 1);
    assert_int_equal(d.mapping_start, 0x5000);
    assert_int_equal(d.mapping_limit, 0x9000);
    assert_int_equal(d.mapping_offset, 0x1000);
    assert_string_equal(string_at(&d, d.mapping_file), "/bin/app");
    assert_string_equal(string_at(&d, d.mapping_build_id), "abcd01");
    assert_int_equal(d.mapping_flags, 15);
    decoded_free(&d);
    address_profile_free(a);
    task_stacks_free(t);
    profile_free(names);
}

/* A stream that cannot take the output: both writers say so. */
static void test_write_errors(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        skip();
    setvbuf(full, NULL, _IONBF, 0);
    struct profile *p = sample_profile();
    errno = 0;
    assert_int_equal(profile_write_speedscope(p, full, NULL), -1);
    assert_int_equal(errno, ENOSPC);
    errno = 0;
    assert_int_equal(profile_write_pprof(p, full, NULL), -1);
    assert_int_equal(errno, ENOSPC);
    fclose(full);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_walk),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_protobuf_writer),
        cmocka_unit_test(test_frame_names),
        cmocka_unit_test(test_speedscope),
        cmocka_unit_test(test_pprof),
        cmocka_unit_test(test_pprof_empty_and_no_period),
        cmocka_unit_test(test_pprof_addresses),
        cmocka_unit_test(test_write_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
