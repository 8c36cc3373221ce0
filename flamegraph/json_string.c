/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json_string.c: JSON string literals: runs of bytes that need no escape are written as they are; '"', '\\'
 * and control characters are escaped; each byte that does not start a valid UTF-8 sequence is replaced by
 * "\ufffd". */
#include "flamegraph/json_string.h"

#include <stdbool.h>

static bool continuation(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

size_t json_utf8_sequence_length(const unsigned char *s, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    /* the lead byte says the length and narrows the second byte (RFC 3629, section 4) */
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (avail < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (!continuation(s[i]))
            return 0;
    return len;
}

int json_write_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0;   /* start of the bytes not written yet */
    bool failed = putc('"', out) == EOF;
    for (size_t i = 0; i < len && !failed;) {
        unsigned char c = u[i];
        size_t seq = 1;
        const char *escape = NULL;
        char hex[8];
        if (c == '"')
            escape = "\\\"";
        else if (c == '\\')
            escape = "\\\\";
        else if (c == '\n')
            escape = "\\n";
        else if (c == '\t')
            escape = "\\t";
        else if (c == '\r')
            escape = "\\r";
        else if (c < 0x20) {
            snprintf(hex, sizeof(hex), "\\u%04x", c);
            escape = hex;
        } else if (c >= 0x80 && (seq = json_utf8_sequence_length(u + i, len - i)) == 0) {
            escape = "\\ufffd";
            seq = 1;
        }
        if (escape) {
            failed = (i > run && fwrite(u + run, 1, i - run, out) != i - run) || fputs(escape, out) == EOF;
            run = i + seq;
        }
        i += seq;
    }
    if (!failed && len > run)
        failed = fwrite(u + run, 1, len - run, out) != len - run;
    if (!failed)
        failed = putc('"', out) == EOF;
    return failed ? -1 : 0;
}
