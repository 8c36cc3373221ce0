/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json_string.h: frame names as JSON string literals. Names come from symbol tables and folded files, so
 * they may hold quotes, backslashes, control characters or bytes that are not UTF-8; the literal written is
 * always valid JSON (RFC 8259: UTF-8 text), invalid bytes becoming U+FFFD. Internal to flamegraph/. */
#ifndef TASKSPY_JSON_STRING_H
#define TASKSPY_JSON_STRING_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF) at s,
 * of at most avail bytes; 0 when the bytes there are not one. */
size_t json_utf8_sequence_length(const unsigned char *s, size_t avail);

/* Write s (len bytes) to out as a JSON string literal, quotes included. Returns 0, or -1 (errno) when
 * writing failed. */
int json_write_string(FILE *out, const char *s, size_t len);

#endif
