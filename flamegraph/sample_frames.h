/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sample_frames.h: how a recording's samples become the profile's frames, shared by `taskspy record` (its CPU
 * profile, wait stacks, trace) and `taskspy top` (each group's hottest frames): a sample's addresses symbolized
 * (symbolize/, which caches by address) and each distinct result named once (task_stacks_prepare_in_macro: the
 * display name, await point, async entry, runtime flags), kept in one pool of frames; the threads' roots named
 * after the threads. Frames in objects without symbols are told to an optional counter (record's debug-file
 * lines), user frames at addresses in no known mapping counted. Not thread-safe: one thread expands. */
#ifndef TASKSPY_SAMPLE_FRAMES_H
#define TASKSPY_SAMPLE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "flamegraph/flamegraph.h"
#include "symbolize/symbolize.h"

/* One sample's frames at most (inline frames expanded; a deeper stack keeps its outermost frames). */
#define SAMPLE_FRAMES_MAX 2048u
#define SAMPLE_FRAMES_NO_OBJECT UINT32_MAX

/* The objects without symbols that samples have frames in (record's debug-file lines); NULL callbacks: not
 * told. counter: a number for object (sym_result.object) made on first sight (SAMPLE_FRAMES_NO_OBJECT when it
 * cannot be); sample: a sample begins; saw: one of its frames is in the object numbered counter. */
struct sample_frames_objects {
    uint32_t (*counter)(void *ctx, const char *object);
    void (*sample)(void *ctx);
    void (*saw)(void *ctx, uint32_t counter);
    void *ctx;
};

/* How addresses are symbolized: symbolize/'s functions, given by the caller (sample_symbols_of), so that this layer
 * links without symbolize/ (its fuzzers build it alone). */
struct sample_symbols {
    const struct sym_result *(*user)(void *ctx, uint64_t addr, bool return_address);
    const struct sym_result *(*kernel)(void *ctx, uint64_t addr);
    bool (*mapping_below)(void *ctx, uint64_t addr, struct sym_mapping *out);
    const char *(*macro_of)(const char *path);
    void *ctx;
};

static inline const struct sym_result *sample_symbols_user(void *s, uint64_t addr, bool return_address)
{
    return symbolize_user(s, addr, return_address);
}
static inline const struct sym_result *sample_symbols_kernel(void *s, uint64_t addr)
{
    return symbolize_kernel(s, addr);
}
static inline bool sample_symbols_mapping_below(void *s, uint64_t addr, struct sym_mapping *out)
{
    return symbolize_mapping_below(s, addr, out);
}
/* The symbolizer's functions, for a caller that links symbolize/. */
static inline struct sample_symbols sample_symbols_of(struct symbolizer *s)
{
    return (struct sample_symbols){ sample_symbols_user, sample_symbols_kernel, sample_symbols_mapping_below,
                                    symbolize_macro_of, s };
}

/* One address's frames in the pool: pool[first .. first + n), outermost first. */
struct sample_address {
    uint32_t first;
    uint32_t n;                /* 0: this result is not prepared yet */
    uint32_t unsymbolized;     /* its object's counter, or SAMPLE_FRAMES_NO_OBJECT */
};

struct sample_frames {
    struct sample_symbols symbols;
    struct task_stacks *stacks;                 /* names frames into its profile */
    struct profile *profile;
    struct sample_frames_objects objects;
    VEC_OF(struct sample_address) by_result;   /* indexed by sym_result.id */
    VEC_OF(struct stack_frame) pool;           /* every prepared frame; results point in by index */
    VEC_OF(uint32_t) thread_roots;             /* thread number -> frame id of its name (PROFILE_NO_FRAME: none) */
    uint64_t unmapped_frames;                  /* user frames at addresses in no known mapping (shown [unknown]) */
    uint64_t first_unmapped;                   /* the first such address, and the mapping nearest below it then */
    char first_unmapped_near[320];
    uint32_t expanded_at[SAMPLE_FRAMES_MAX];   /* the last sample's frames: indices into pool */
    const struct stack_frame *expanded[SAMPLE_FRAMES_MAX];   /* the same as pointers, once resolved */
};

/* What symbols' context and stacks (its profile) outlive f; objects may be NULL. */
void sample_frames_init(struct sample_frames *f, const struct sample_symbols *symbols, struct task_stacks *stacks,
                        struct profile *profile, const struct sample_frames_objects *objects);
void sample_frames_free(struct sample_frames *f);

/* The frames of one address (return_address: a return address, looked up one byte before; kernel: a kernel
 * address), prepared on first sight of its symbolized result. NULL when out of memory. May grow the pool (and move
 * it: pointers into it are taken only once every address of a stack is resolved). */
const struct sample_address *sample_frames_of(struct sample_frames *f, uint64_t addr, bool return_address,
                                              bool kernel);
/* A sample's frames, outermost first: user addresses (innermost first, as the sampler gives them: the sampled
 * instruction, then return addresses), then kernel ones above them. Returns f->expanded (valid until the next
 * call) with *n frames, or NULL when out of memory. */
const struct stack_frame *const *sample_frames_expand(struct sample_frames *f, const uint64_t *user_ips,
                                                      size_t n_user, const uint64_t *kernel_ips, size_t n_kernel,
                                                      size_t *n);
/* The function of the innermost frame at addr (a poll marker's probe: PROFILE_NO_FRAME for 0 or when out of
 * memory). May grow the pool. */
uint32_t sample_frames_function_at(struct sample_frames *f, uint64_t addr);

/* Thread number thread is named name (NULL or empty: "[thread]"): its root frame, made safe for folded lines (no
 * ';', no leading '#'). Returns the frame id, or PROFILE_NO_FRAME when out of memory. */
uint32_t sample_frames_name_thread(struct sample_frames *f, uint32_t thread, const char *name);
/* The root frame of thread number thread ("[thread]" for one never named), PROFILE_NO_FRAME when out of memory. */
uint32_t sample_frames_thread_root(struct sample_frames *f, uint32_t thread);

/* The name a frame shows for symbolized result r's frame f (NULL: r has none): its function, else "[OBJECT]"
 * for an address in an object without symbols for it, else "[unknown]"; buf holds what is made. */
const char *sample_frame_name(const struct sym_result *r, const struct sym_frame *f, char *buf, size_t len);

#endif
