/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_palette.c: frame colours. A frame's colour comes from a hash of its name, so a function keeps its
 * colour in every graph; the "taskspy" palette gives task roots, await points, thread/runtime roots and
 * annotated frames (kernel _[k], JIT _[j], inlined _[i], waker _[w]) hues of their own, the classic
 * flamegraph.pl palettes colour every frame alike; the "wait" palette (wait-time graphs) is flamegraph.pl's
 * io colours with "[suspended]" and "[runnable]" leaves in hues of their own. Annotations are not shown (svg_shown_length).
 * A differential graph's frames take flamegraph.pl's red/blue scale of their change (svg_diff_color). */
#include "flamegraph/svg_internal.h"

#include <string.h>

enum svg_hue { HUE_HOT, HUE_MEM, HUE_IO, HUE_RED, HUE_GREEN, HUE_BLUE, HUE_AQUA, HUE_YELLOW, HUE_PURPLE,
               HUE_ORANGE, HUE_GREY, HUE_TASK, HUE_KERNEL, HUE_WAIT };

struct palette_entry {
    const char *name;
    enum svg_hue hue;       /* hue of every frame in a single-hue palette */
};

static const struct palette_entry palettes[] = {
    { "taskspy", HUE_HOT }, { "hot", HUE_HOT },       { "mem", HUE_MEM },       { "io", HUE_IO },
    { "red", HUE_RED },     { "green", HUE_GREEN },   { "blue", HUE_BLUE },     { "aqua", HUE_AQUA },
    { "yellow", HUE_YELLOW }, { "purple", HUE_PURPLE }, { "orange", HUE_ORANGE }, { "wait", HUE_WAIT },
};

static const struct palette_entry *find_palette(const char *name)
{
    for (size_t i = 0; i < sizeof(palettes) / sizeof(palettes[0]); i++)
        if (strcmp(palettes[i].name, name) == 0)
            return &palettes[i];
    return NULL;
}

bool svg_palette_known(const char *palette)
{
    return palette && find_palette(palette) != NULL;
}

const char *svg_palette_names(void)
{
    return "taskspy, hot, mem, io, red, green, blue, aqua, yellow, purple, orange, wait";
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "task: X" or "task 123: X" */
static bool is_task_root_name(const char *s, size_t len)
{
    if (starts_with(s, len, "task: "))
        return true;
    if (!starts_with(s, len, "task "))
        return false;
    size_t i = 5;
    if (i >= len || !is_digit(s[i]))
        return false;
    while (i < len && is_digit(s[i]))
        i++;
    return i + 1 < len && s[i] == ':' && s[i + 1] == ' ';
}

/* "NAME @ FILE:LINE": the last " @ " is followed by a non-empty FILE, ':' and digits to the end (or to a
   " (select!)" naming the macro the await is in). */
static bool is_await_point_name(const char *s, size_t len)
{
    len = await_point_macro_at(s, len);
    size_t at = len;
    for (size_t i = len >= 3 ? len - 3 : 0; i > 0; i--) {
        if (s[i] == ' ' && s[i + 1] == '@' && s[i + 2] == ' ') {
            at = i;
            break;
        }
    }
    if (at == len || at == 0)
        return false;
    size_t file = at + 3;
    size_t end = len;
    size_t digits = 0;
    while (end > file && is_digit(s[end - 1])) {
        end--;
        digits++;
    }
    return digits > 0 && end > file + 1 && s[end - 1] == ':';
}

/* The annotation letter of "NAME_[x]" (x one of k, j, i, w), or 0. */
static char annotation_of(const char *s, size_t len)
{
    if (len < 4 || s[len - 4] != '_' || s[len - 3] != '[' || s[len - 1] != ']')
        return 0;
    char c = s[len - 2];
    return c == 'k' || c == 'j' || c == 'i' || c == 'w' ? c : 0;
}

size_t svg_shown_length(const char *name, size_t len)
{
    return annotation_of(name, len) ? len - 4 : len;
}

enum svg_frame_kind svg_classify(const char *name, size_t len, unsigned depth)
{
    if (depth == 0)
        return SVG_FRAME_ALL;
    if (depth == 1)
        return is_task_root_name(name, len) ? SVG_FRAME_TASK_ROOT : SVG_FRAME_THREAD_ROOT;
    switch (annotation_of(name, len)) {
    case 'k': return SVG_FRAME_KERNEL;
    case 'j': return SVG_FRAME_JIT;
    case 'i': return SVG_FRAME_INLINE;
    case 'w': return SVG_FRAME_WAKER;
    default: break;
    }
    if (len == 11 && memcmp(name, "[suspended]", 11) == 0)
        return SVG_FRAME_SUSPENDED;
    if (len == 10 && memcmp(name, "[runnable]", 10) == 0)
        return SVG_FRAME_RUNNABLE;
    if (is_await_point_name(name, len))
        return SVG_FRAME_AWAIT;
    return SVG_FRAME_ORDINARY;
}

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;            /* FNV-1a, 64 bit */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 29;                                   /* spread the low bits into the ones used below */
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}

static unsigned scale(unsigned base, unsigned span, unsigned v)  /* v in 0..255 */
{
    return base + span * v / 255;
}

static uint32_t rgb(unsigned r, unsigned g, unsigned b)
{
    return (uint32_t)((r > 255 ? 255 : r) << 16 | (g > 255 ? 255 : g) << 8 | (b > 255 ? 255 : b));
}

static uint32_t hue_color(enum svg_hue hue, uint64_t h)
{
    unsigned v1 = (unsigned)(h & 0xff), v2 = (unsigned)(h >> 8 & 0xff), v3 = (unsigned)(h >> 16 & 0xff);
    switch (hue) {
    case HUE_HOT:    return rgb(scale(205, 50, v3), scale(0, 230, v1), scale(0, 55, v2));
    case HUE_MEM:    return rgb(0, scale(190, 50, v2), scale(0, 210, v1));
    case HUE_IO:     return rgb(scale(80, 60, v1), scale(80, 60, v1), scale(190, 55, v2));
    case HUE_RED:    return rgb(scale(200, 55, v1), scale(50, 80, v1), scale(50, 80, v1));
    case HUE_GREEN:  return rgb(scale(50, 60, v1), scale(200, 55, v1), scale(50, 60, v1));
    case HUE_BLUE:   return rgb(scale(80, 60, v1), scale(80, 60, v1), scale(205, 50, v1));
    case HUE_AQUA:   return rgb(scale(50, 60, v1), scale(165, 55, v1), scale(165, 55, v1));
    case HUE_YELLOW: return rgb(scale(175, 55, v1), scale(175, 55, v1), scale(50, 20, v1));
    case HUE_PURPLE: return rgb(scale(190, 65, v1), scale(80, 60, v1), scale(190, 65, v1));
    case HUE_ORANGE: return rgb(scale(220, 35, v1), scale(120, 60, v2), scale(0, 40, v3));
    case HUE_GREY:   return rgb(scale(170, 40, v1), scale(170, 40, v1), scale(175, 40, v1));
    case HUE_TASK:   return rgb(scale(120, 50, v1), scale(110, 40, v2), scale(215, 40, v3));
    case HUE_KERNEL: return rgb(scale(230, 25, v1), scale(125, 40, v2), scale(160, 40, v2));
    case HUE_WAIT:   return hue_color(HUE_IO, h);
    }
    return rgb(200, 200, 200);
}

uint32_t svg_frame_color(const char *palette, enum svg_frame_kind kind, const char *name, size_t len)
{
    const struct palette_entry *pe = find_palette(palette ? palette : "taskspy");
    uint64_t h = name_hash(name, len);
    if (kind == SVG_FRAME_ALL)
        return rgb(200, 200, 205);
    if (pe && pe->hue == HUE_WAIT) {
        if (kind == SVG_FRAME_RUNNABLE)
            return hue_color(HUE_RED, h);        /* scheduling delay: woken, waiting for a worker */
        if (kind == SVG_FRAME_SUSPENDED)
            return hue_color(HUE_GREY, h);       /* waiting for its event */
        return hue_color(HUE_IO, h);
    }
    if (!pe || strcmp(pe->name, "taskspy") != 0)
        return hue_color(pe ? pe->hue : HUE_HOT, h);
    switch (kind) {
    case SVG_FRAME_TASK_ROOT:   return hue_color(HUE_TASK, h);
    case SVG_FRAME_AWAIT:       return hue_color(HUE_AQUA, h);
    case SVG_FRAME_THREAD_ROOT: return hue_color(HUE_GREY, h);
    case SVG_FRAME_KERNEL:      return hue_color(HUE_KERNEL, h);
    case SVG_FRAME_JIT:         return hue_color(HUE_GREEN, h);
    case SVG_FRAME_INLINE:      return hue_color(HUE_YELLOW, h);
    case SVG_FRAME_WAKER:       return hue_color(HUE_BLUE, h);
    default:                    return hue_color(HUE_HOT, h);
    }
}

uint32_t svg_diff_color(int64_t delta, uint64_t max_delta)
{
    /* flamegraph.pl's color_scale: the two other channels int(210 * (max - |delta|) / max) */
    uint64_t magnitude = delta < 0 ? (uint64_t)0 - (uint64_t)delta : (uint64_t)delta;
    if (delta == 0 || max_delta == 0)
        return rgb(255, 255, 255);
    if (magnitude > max_delta)
        magnitude = max_delta;
    unsigned other = (unsigned)(210.0 * (double)(max_delta - magnitude) / (double)max_delta);
    return delta > 0 ? rgb(255, other, other) : rgb(other, other, 255);
}
