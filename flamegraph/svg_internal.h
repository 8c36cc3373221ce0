/* SPDX-License-Identifier: GPL-3.0-or-later */
/* svg_internal.h: the pieces the SVG writer is made of, shared between flamegraph/svg_*.c and their unit
 * tests: XML escaping and label truncation, the frame palette, the layout of the merged stack tree and the
 * reversed (leaf-first) profile, the styled frames of a differential graph. Not part of the layer's public
 * interface. */
#ifndef TASKSPY_SVG_INTERNAL_H
#define TASKSPY_SVG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flamegraph/flamegraph.h"

/* ---- escaping (svg_escape.c) ---------------------------------------------------------------------- */

/* Write len bytes of s as XML character data / attribute text: & < > " ' become entities; bytes that are
 * not valid UTF-8 and characters XML 1.0 forbids (controls other than tab) become U+FFFD. */
void svg_write_escaped(FILE *out, const char *s, size_t len);
/* The same into dst, which has room for SVG_ESCAPE_MAX * len bytes. Returns the bytes written. */
#define SVG_ESCAPE_MAX 6
size_t svg_escape_into(char *dst, const char *s, size_t len);

/* Byte length of the label that fits max_chars characters: the whole name when it fits, otherwise its first
 * max_chars - 2 characters (never splitting a UTF-8 sequence) to which the caller appends "..". Returns 0
 * when fewer than 3 characters fit. *truncated says whether ".." must follow. */
size_t svg_label_bytes(const char *name, size_t len, size_t max_chars, bool *truncated);

/* ---- palette (svg_palette.c) ---------------------------------------------------------------------- */

enum svg_frame_kind {
    SVG_FRAME_ORDINARY,
    SVG_FRAME_TASK_ROOT,     /* root frame "task: X" or "task 123: X" */
    SVG_FRAME_AWAIT,         /* "NAME @ FILE:LINE" */
    SVG_FRAME_THREAD_ROOT,   /* any other root frame: runtime or thread name */
    SVG_FRAME_KERNEL,        /* "NAME_[k]" */
    SVG_FRAME_JIT,           /* "NAME_[j]" (flamegraph.pl's annotation of JIT-compiled code) */
    SVG_FRAME_INLINE,        /* "NAME_[i]" (an inlined frame) */
    SVG_FRAME_WAKER,         /* "NAME_[w]" (a waker's stack in an off-wake graph) */
    SVG_FRAME_SUSPENDED,     /* "[suspended]": a wait-time graph's time until the task was woken */
    SVG_FRAME_RUNNABLE,      /* "[runnable]": ... and from the wake until a worker polled it */
    SVG_FRAME_ALL,           /* the drawn root "all" */
};

/* What kind of frame name is at depth (1 = a root frame of a stack). */
enum svg_frame_kind svg_classify(const char *name, size_t len, unsigned depth);
/* Length of name without its trailing annotation ("_[k]", "_[j]", "_[i]", "_[w]"), as flamegraph.pl strips
 * it: what titles, labels and search show. The annotation only picks the colour (svg_classify). */
size_t svg_shown_length(const char *name, size_t len);
/* The fill colour 0xRRGGBB of a frame: stable for a name (hashed), by palette and kind. */
uint32_t svg_frame_color(const char *palette, enum svg_frame_kind kind, const char *name, size_t len);
/* A differential graph's fill for a frame whose samples changed by delta, of a largest change max_delta
 * (>= 1): flamegraph.pl's scale, red for growth and blue for shrinking, deeper as |delta| nears max_delta,
 * white for no change. */
uint32_t svg_diff_color(int64_t delta, uint64_t max_delta);

/* ---- layout (svg_layout.c) ------------------------------------------------------------------------ */

/* One drawn frame: a profile node, its offset in samples from the left edge, its depth (0 = "all"), and
 * what the writer needs of the node (so it need not look the node up again): total and frame name. */
struct svg_frame {
    uint32_t node;
    uint32_t depth;
    uint64_t start;
    uint64_t total;
    const char *name;        /* NULL for the root */
    uint32_t frame;          /* the name's frame id (PROFILE_NO_FRAME for the root) */
};

/* A chart's layout, walked in preorder (siblings sorted by name) a chunk of frames at a time. */
struct svg_layout;

/* Lay out p for a chart chart_width px wide, leaving out frames narrower than min_width px (and all they
 * contain): which nodes are drawn, and the deepest. Returns NULL (errno) on allocation failure. */
struct svg_layout *svg_layout_open(const struct profile *p, double chart_width, double min_width);
/* The depth of the deepest drawn frame (0: "all" alone, or nothing drawn). */
uint32_t svg_layout_max_depth(const struct svg_layout *l);
/* The next frames, at most room of them, into frames; returns how many (0: all given). */
size_t svg_layout_next(struct svg_layout *l, struct svg_frame *frames, size_t room);
void svg_layout_free(struct svg_layout *l);

/* ---- styled frames (svg_writer.c): a differential graph's colours and tooltips ----------------------- */

/* The most bytes a tooltip's tail may take. */
#define SVG_TITLE_TAIL_MAX 160
/* What a graph drawn by svg_write_styled shows of each frame besides its name, count and share. */
struct svg_frame_style {
    uint32_t (*fill)(const void *ctx, uint32_t node);     /* the frame's fill, 0xRRGGBB */
    /* Writes what the tooltip says after "NAME (N samples, P%" and before its ")" into dst (at most
     * SVG_TITLE_TAIL_MAX bytes of XML-safe text); returns its length. */
    size_t (*title_tail)(const void *ctx, uint32_t node, char *dst);
    const void *ctx;
};
/* profile_write_svg, each frame styled by style (NULL: the palette's colours). Frames are the nodes of p, so
 * opts->reverse (which draws another profile) is refused with a style (EINVAL). Returns 0 or -1 (errno). */
int svg_write_styled(const struct profile *p, FILE *out, const struct svg_options *opts,
                     const struct svg_frame_style *style);

/* ---- reverse (svg_reverse.c) ---------------------------------------------------------------------- */

/* A new profile holding p's stacks leaf first, or NULL with errno on allocation failure. */
struct profile *svg_reversed_profile(const struct profile *p);

#endif
