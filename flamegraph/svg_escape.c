/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_escape.c: makes arbitrary frame names safe inside the SVG: XML entities for the five special
 * characters, U+FFFD for invalid UTF-8 and for characters XML 1.0 does not allow, and labels cut to a
 * number of characters without splitting a UTF-8 sequence. */
#include "flamegraph/svg_internal.h"

#include <string.h>

static const char replacement_char[] = "\xEF\xBF\xBD";

static bool is_continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Length of the valid, XML-allowed UTF-8 sequence at s (at most len bytes), or 0 if there is none. */
static size_t utf8_sequence_length(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return (c >= 0x20 || c == '\t') ? 1 : 0;
    if (c >= 0xC2 && c <= 0xDF)
        return len >= 2 && is_continuation(s[1]) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (len < 3 || !is_continuation(s[1]) || !is_continuation(s[2]))
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0;                               /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0;                               /* UTF-16 surrogate */
        if (c == 0xEF && s[1] == 0xBF && s[2] >= 0xBE)
            return 0;                               /* U+FFFE, U+FFFF: not XML characters */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (len < 4 || !is_continuation(s[1]) || !is_continuation(s[2]) || !is_continuation(s[3]))
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0;                               /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return 0;                               /* above U+10FFFF */
        return 4;
    }
    return 0;
}

static const char *entity_for(unsigned char c)
{
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&apos;";
    default: return NULL;
    }
}

size_t svg_escape_into(char *dst, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    char *w = dst;
    size_t i = 0;
    while (i < len) {
        unsigned char c = u[i];
        if (c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'') {
            *w++ = (char)c;                         /* the common case: plain ASCII */
            i++;
            continue;
        }
        const char *entity = entity_for(c);
        size_t seq = entity ? 0 : utf8_sequence_length(u + i, len - i);
        if (seq > 0) {
            memcpy(w, s + i, seq);
            w += seq;
            i += seq;
            continue;
        }
        const char *with = entity ? entity : replacement_char;
        size_t n = strlen(with);
        memcpy(w, with, n);
        w += n;
        i++;
    }
    return (size_t)(w - dst);
}

/* In chunks through svg_escape_into; a chunk never ends inside a possible UTF-8 sequence (its lead byte is
 * left for the next chunk), so the chunks escape exactly as the whole would. */
void svg_write_escaped(FILE *out, const char *s, size_t len)
{
    enum { CHUNK = 4096 };
    char buf[SVG_ESCAPE_MAX * CHUNK];
    while (len > 0) {
        size_t n = len;
        if (n > CHUNK) {
            n = CHUNK;
            for (size_t back = 1; back < 4; back++)
                if (!is_continuation((unsigned char)s[CHUNK - back])) {
                    n = CHUNK - back;      /* the last character may go on past the chunk */
                    break;
                }
        }
        fwrite_unlocked(buf, 1, svg_escape_into(buf, s, n), out);
        s += n;
        len -= n;
    }
}

/* Advance over one character (an invalid byte counts as one, as it is drawn as one U+FFFD). */
static size_t next_char(const unsigned char *s, size_t len)
{
    size_t seq = utf8_sequence_length(s, len);
    return seq ? seq : 1;
}

size_t svg_label_bytes(const char *name, size_t len, size_t max_chars, bool *truncated)
{
    const unsigned char *u = (const unsigned char *)name;
    *truncated = false;
    if (max_chars < 3)
        return 0;
    size_t keep = max_chars - 2;                    /* characters kept when ".." must follow */
    size_t keep_bytes = 0;
    size_t chars = 0;
    size_t i = 0;
    while (i < len) {
        if (chars == keep)
            keep_bytes = i;
        if (chars == max_chars) {                   /* one more than fits: cut */
            *truncated = true;
            return keep_bytes;
        }
        i += next_char(u + i, len - i);
        chars++;
    }
    return len;
}
