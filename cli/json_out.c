/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json_out.c: the values the commands' JSON outputs write (taskspy tasks --json, taskspy top --json): strings
 * from the target (thread names may hold any byte, a comm cut in the middle of a UTF-8 sequence) written as valid
 * JSON strings (RFC 8259), control characters escaped, bytes that are not UTF-8 as U+FFFD; numbers that may be
 * unknown as null. */
#include "cli/json_out.h"

#include <inttypes.h>
#include <stdbool.h>

/* Bytes of the valid UTF-8 sequence (no overlong form, no surrogate, at most U+10FFFF) at s, 0 if none. */
static size_t utf8_length(const unsigned char *s)
{
    static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (n <= 1)
        return n;
    uint32_t code = s[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        code = code << 6 | (s[i] & 0x3fu);
    }
    bool valid = code >= least[n] && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    return valid ? n : 0;
}

void json_put_string(FILE *out, const char *text)
{
    if (!text) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        size_t n = utf8_length(c);
        if (n == 0) {
            fputs("\\ufffd", out);
            c++;
        } else if (*c == '"' || *c == '\\') {
            fprintf(out, "\\%c", *c++);
        } else if (*c < 0x20 || *c == 0x7f) {
            fprintf(out, "\\u%04x", *c++);
        } else {
            fwrite(c, 1, n, out);
            c += n;
        }
    }
    fputc('"', out);
}

/* A number, or null when it is the value meaning "not known". */
void json_put_signed(FILE *out, int64_t value, int64_t unknown)
{
    if (value == unknown)
        fputs("null", out);
    else
        fprintf(out, "%" PRId64, value);
}

void json_put_unsigned(FILE *out, uint64_t value, uint64_t unknown)
{
    if (value == unknown)
        fputs("null", out);
    else
        fprintf(out, "%" PRIu64, value);
}

void json_put_frame_fields(FILE *out, const struct task_frame *frame)
{
    fputs("\"function\": ", out);
    json_put_string(out, frame->function);
    fputs(", \"file\": ", out);
    json_put_string(out, frame->file);
    fputs(", \"line\": ", out);
    json_put_unsigned(out, frame->line, 0);
}
