/* SPDX-License-Identifier: GPL-3.0-or-later */
/* protobuf_writer.h: the protocol buffers wire format, as much of it as profile.proto needs: varint fields,
 * length-delimited fields (strings, bytes, embedded messages) and packed repeated varints, appended to a
 * growable byte buffer. A failed allocation marks the buffer failed and later calls do nothing, so a
 * message is built without a check per field and checked once. Internal to flamegraph/. */
#ifndef TASKSPY_PROTOBUF_WRITER_H
#define TASKSPY_PROTOBUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pb_buffer {
    uint8_t *v;        /* the encoded bytes (base/vec.h fields) */
    size_t n, cap;
    bool failed;       /* out of memory: the content is incomplete */
};

enum pb_wire_type { PB_WIRE_VARINT = 0, PB_WIRE_LENGTH_DELIMITED = 2 };

/* Empty the buffer for the next message, keeping its memory (and clearing failed). */
void pb_reset(struct pb_buffer *b);
void pb_free(struct pb_buffer *b);

/* Bytes a varint of v takes (1 to 10). */
size_t pb_varint_size(uint64_t v);
void pb_varint(struct pb_buffer *b, uint64_t v);
void pb_tag(struct pb_buffer *b, uint32_t field, enum pb_wire_type wire);
/* A uint64/int64/bool field; left out when v is 0 (proto3's default, read back as 0). An int64 is passed
 * as its two's complement (uint64_t)v, which is its encoding. */
void pb_uint_field(struct pb_buffer *b, uint32_t field, uint64_t v);
/* A string or bytes field, written even when empty (a repeated string keeps its place). */
void pb_bytes_field(struct pb_buffer *b, uint32_t field, const void *data, size_t len);
/* An embedded message: the bytes of msg as a length-delimited field. */
void pb_message_field(struct pb_buffer *b, uint32_t field, const struct pb_buffer *msg);
/* A packed repeated varint field (left out when n is 0). */
void pb_packed_field(struct pb_buffer *b, uint32_t field, const uint64_t *values, size_t n);

#endif
