/* flamegraph.h: the whole interface of the flamegraph layer: a profile (stacks of named frames merged into
 * a tree of counts, memory growing with distinct stacks, not samples), task-aware stack building (task
 * roots, runtime frames cut, await points), and the folded and SVG readers/writers. */
#ifndef TASKSPY_FLAMEGRAPH_H
#define TASKSPY_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- profile: interned frame names and a prefix tree of stacks ---------------------------------- */

#define PROFILE_NO_FRAME UINT32_MAX
#define PROFILE_NO_NODE UINT32_MAX

struct profile;

/* A node of the stack tree. Node 0 is the root (frame PROFILE_NO_FRAME); a node's total counts every
 * sample whose stack passes through it, self those whose stack ends there. Children are linked through
 * first_child/next_sibling in no particular order. */
struct profile_node {
    uint32_t frame;
    uint32_t parent;
    uint32_t first_child;
    uint32_t next_sibling;
    uint64_t total;
    uint64_t self;
};

struct profile *profile_new(void);
void profile_free(struct profile *p);
/* Intern a frame name (len bytes, need not be NUL-terminated). Returns its id, or PROFILE_NO_FRAME on
 * allocation failure. The same name always gets the same id. */
uint32_t profile_intern(struct profile *p, const char *name, size_t len);
const char *profile_frame_name(const struct profile *p, uint32_t frame);
size_t profile_frame_count(const struct profile *p);
/* Add count samples of a stack of frame ids, root first. Returns 0, or -1 on allocation failure. */
int profile_add_ids(struct profile *p, const uint32_t *frames, size_t n, uint64_t count);
/* Same with names (interned on the way). */
int profile_add(struct profile *p, const char *const *names, size_t n, uint64_t count);
const struct profile_node *profile_nodes(const struct profile *p, size_t *n);
uint64_t profile_total(const struct profile *p);
size_t profile_distinct_stacks(const struct profile *p);

/* ---- folded stacks -------------------------------------------------------------------------------- */

/* Write "root;...;leaf COUNT" lines, one per distinct stack, sorted. Returns 0 or -1 (errno). */
int profile_write_folded(const struct profile *p, FILE *out);

struct folded_read_report {
    uint64_t lines;          /* lines read */
    uint64_t stacks;         /* lines accepted */
    uint64_t skipped;        /* malformed lines skipped (each reported to the warn stream) */
};
/* Read folded text into p (merging with what it holds). Malformed lines (no count, negative or
 * non-numeric count, empty frames, over-long lines) are reported as "NAME:LINE: why" on warn (if not
 * NULL) and skipped; CRLF endings are accepted; perf script's trailing annotations are tolerated.
 * Returns 0, or -1 with a one-line message in err for a fatal problem (read error, no valid line). */
int profile_read_folded(struct profile *p, FILE *in, const char *name, FILE *warn,
                        struct folded_read_report *report, char *err, size_t errlen);

/* ---- SVG flame graph ------------------------------------------------------------------------------- */

struct svg_options {
    const char *title;       /* default "Flame Graph" */
    const char *subtitle;    /* second line, or NULL */
    const char *header;      /* what was profiled: target, duration, frequency, samples, lost; or NULL */
    unsigned width;          /* image width in px, default 1200 */
    unsigned frame_height;   /* px per frame, default 16 */
    double min_width;        /* frames narrower than this (px) are left out, default 0.1 */
    const char *colors;      /* palette name: "taskspy" (default), "hot", "mem", "io", ... */
    bool inverted;           /* icicle graph: root at the top */
    bool reverse;            /* merge stacks reversed (leaf first) */
    const char *count_name;  /* "samples" */
};
void svg_options_init(struct svg_options *o);
/* Render p as one self-contained interactive SVG. Returns 0 or -1 (errno). */
int profile_write_svg(const struct profile *p, FILE *out, const struct svg_options *opts);

#endif
