/* SPDX-License-Identifier: GPL-3.0-or-later */
/* protobuf_writer.c: varints (7 bits a byte, low group first, high bit set on all but the last byte), field
 * keys (field number << 3 | wire type) and length prefixes, appended to a pb_buffer grown with base/vec. */
#include "flamegraph/protobuf_writer.h"

#include "base/vec.h"

#include <string.h>

void pb_reset(struct pb_buffer *b)
{
    b->n = 0;
    b->failed = false;
}

void pb_free(struct pb_buffer *b)
{
    vec_free(b);
    b->failed = false;
}

/* Room for extra more bytes; false (and failed set) when there is none. */
static bool room(struct pb_buffer *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->cap - b->n >= extra)
        return true;
    if (extra > SIZE_MAX - b->n || vec_reserve(b, b->n + extra) != 0) {
        b->failed = true;
        return false;
    }
    return true;
}

size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void pb_varint(struct pb_buffer *b, uint64_t v)
{
    if (!room(b, 10))
        return;
    while (v >= 0x80) {
        b->v[b->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->v[b->n++] = (uint8_t)v;
}

void pb_tag(struct pb_buffer *b, uint32_t field, enum pb_wire_type wire)
{
    pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void pb_uint_field(struct pb_buffer *b, uint32_t field, uint64_t v)
{
    if (v == 0)
        return;
    pb_tag(b, field, PB_WIRE_VARINT);
    pb_varint(b, v);
}

void pb_bytes_field(struct pb_buffer *b, uint32_t field, const void *data, size_t len)
{
    pb_tag(b, field, PB_WIRE_LENGTH_DELIMITED);
    pb_varint(b, len);
    if (len == 0 || !room(b, len))
        return;
    memcpy(b->v + b->n, data, len);
    b->n += len;
}

void pb_message_field(struct pb_buffer *b, uint32_t field, const struct pb_buffer *msg)
{
    if (msg->failed) {
        b->failed = true;
        return;
    }
    pb_bytes_field(b, field, msg->v, msg->n);
}

void pb_packed_field(struct pb_buffer *b, uint32_t field, const uint64_t *values, size_t n)
{
    if (n == 0)
        return;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += pb_varint_size(values[i]);
    pb_tag(b, field, PB_WIRE_LENGTH_DELIMITED);
    pb_varint(b, len);
    if (!room(b, len))
        return;
    for (size_t i = 0; i < n; i++)
        pb_varint(b, values[i]);
}
