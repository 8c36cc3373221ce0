/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sample_frames.c: a sample's addresses as the profile's frames (see sample_frames.h): each address symbolized
 * (the symbolizer caches it), each distinct result named once into the pool, a sample's frames gathered as pool
 * indices and turned into pointers once the pool no longer moves. */
#include "flamegraph/sample_frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void sample_frames_init(struct sample_frames *f, const struct sample_symbols *symbols, struct task_stacks *stacks,
                        struct profile *profile, const struct sample_frames_objects *objects)
{
    memset(f, 0, sizeof(*f));
    f->symbols = *symbols;
    f->stacks = stacks;
    f->profile = profile;
    if (objects)
        f->objects = *objects;
}

void sample_frames_free(struct sample_frames *f)
{
    vec_free(&f->by_result);
    vec_free(&f->pool);
    vec_free(&f->thread_roots);
}

const char *sample_frame_name(const struct sym_result *r, const struct sym_frame *f, char *buf, size_t len)
{
    if (f && f->name && strcmp(f->name, "[unknown]") != 0)
        return f->name;
    if (!r->object)
        return "[unknown]";
    snprintf(buf, len, r->object[0] == '[' ? "%s" : "[%s]", r->object);
    return buf;
}

/* The first user frame in no known mapping: its address and the mapping nearest below, for the summary. */
static void note_unmapped(struct sample_frames *f, uint64_t addr)
{
    if (f->unmapped_frames++ != 0)
        return;
    struct sym_mapping below;
    f->first_unmapped = addr;
    if (f->symbols.mapping_below(f->symbols.ctx, addr, &below) && addr >= below.end)
        snprintf(f->first_unmapped_near, sizeof(f->first_unmapped_near), "0x%" PRIx64 " past the end of %s [0x%"
                 PRIx64 "-0x%" PRIx64 ")", addr - below.end, below.path, below.start, below.end);
}

const struct sample_address *sample_frames_of(struct sample_frames *f, uint64_t addr, bool return_address,
                                              bool kernel)
{
    const struct sym_result *r = kernel ? f->symbols.kernel(f->symbols.ctx, addr)
                                        : f->symbols.user(f->symbols.ctx, addr, return_address);
    if (!kernel && !r->object)
        note_unmapped(f, addr);
    if (r->id < f->by_result.n && f->by_result.v[r->id].n)
        return &f->by_result.v[r->id];
    while (f->by_result.n <= r->id)
        if (!vec_push(&f->by_result))
            return NULL;
    uint32_t n = r->n ? (uint32_t)r->n : 1;
    if (vec_reserve(&f->pool, f->pool.n + n) != 0)
        return NULL;
    struct sample_address *c = &f->by_result.v[r->id];
    c->first = (uint32_t)f->pool.n;
    c->unsymbolized = r->unsymbolized && f->objects.counter ? f->objects.counter(f->objects.ctx, r->object)
                                                            : SAMPLE_FRAMES_NO_OBJECT;
    for (uint32_t i = 0; i < n; i++) {
        /* sym_result is innermost first; the pool keeps outermost first */
        const struct sym_frame *sf = r->n ? &r->frames[r->n - 1 - i] : NULL;
        char object_name[300];
        const char *name = sample_frame_name(r, sf, object_name, sizeof(object_name));
        /* (a frame positioned in a macro's own source, tokio's select.rs: the macro's closure, see task_stacks.h) */
        const char *macro = sf && !kernel ? f->symbols.macro_of(sf->path) : NULL;
        if (task_stacks_prepare_in_macro(f->stacks, name, sf ? sf->file : NULL, sf ? sf->line : 0, kernel, macro,
                                         &f->pool.v[f->pool.n + i]) != 0)
            return NULL;
    }
    f->pool.n += n;
    c->n = n;
    return c;
}

/* The frames of addresses ips (innermost first) appended to the sample's, outermost first. False when out of
   memory. */
static bool gather(struct sample_frames *f, const uint64_t *ips, size_t n_ips, bool kernel, size_t *n)
{
    for (size_t i = n_ips; i-- > 0;) {
        const struct sample_address *c = sample_frames_of(f, ips[i], !kernel && i > 0, kernel);
        if (!c)
            return false;
        if (!kernel && f->objects.saw)
            f->objects.saw(f->objects.ctx, c->unsymbolized);
        for (uint32_t j = 0; j < c->n && *n < SAMPLE_FRAMES_MAX; j++)
            f->expanded_at[(*n)++] = c->first + j;
    }
    return true;
}

const struct stack_frame *const *sample_frames_expand(struct sample_frames *f, const uint64_t *user_ips,
                                                      size_t n_user, const uint64_t *kernel_ips, size_t n_kernel,
                                                      size_t *n)
{
    *n = 0;
    if (f->objects.sample)
        f->objects.sample(f->objects.ctx);
    if (!gather(f, user_ips, n_user, false, n) || !gather(f, kernel_ips, n_kernel, true, n))
        return NULL;
    for (size_t i = 0; i < *n; i++)      /* the pool no longer moves for this sample */
        f->expanded[i] = &f->pool.v[f->expanded_at[i]];
    return f->expanded;
}

uint32_t sample_frames_function_at(struct sample_frames *f, uint64_t addr)
{
    const struct sample_address *c = addr ? sample_frames_of(f, addr, false, false) : NULL;
    return c && c->n ? f->pool.v[c->first + c->n - 1].function : PROFILE_NO_FRAME;
}

/* The root frame of a thread named name ("[thread]" when NULL or empty), or PROFILE_NO_FRAME. */
static uint32_t root_named(struct sample_frames *f, const char *name)
{
    /* A root frame is the start of a folded line: no ';' in it, and no leading '#' (a comment there). */
    char clean[64];
    snprintf(clean, sizeof(clean), "%s", name && *name ? name : "[thread]");
    for (char *c = clean; *c; c++)
        if (*c == ';' || *c == '\n' || *c == '\r' || (c == clean && *c == '#'))
            *c = '_';
    return profile_intern(f->profile, clean, strlen(clean));
}

uint32_t sample_frames_name_thread(struct sample_frames *f, uint32_t thread, const char *name)
{
    uint32_t id = root_named(f, name);
    if (id == PROFILE_NO_FRAME || thread == UINT32_MAX || vec_reserve(&f->thread_roots, (size_t)thread + 1))
        return PROFILE_NO_FRAME;
    while (f->thread_roots.n <= thread)
        f->thread_roots.v[f->thread_roots.n++] = PROFILE_NO_FRAME;
    f->thread_roots.v[thread] = id;
    return id;
}

uint32_t sample_frames_thread_root(struct sample_frames *f, uint32_t thread)
{
    uint32_t root = thread < f->thread_roots.n ? f->thread_roots.v[thread] : PROFILE_NO_FRAME;
    return root != PROFILE_NO_FRAME ? root : root_named(f, NULL);
}
