/* SPDX-License-Identifier: GPL-3.0-or-later */
/* top_samples.c: the sampler's side of `taskspy top` (top_samples.h). Each sample in a task is told to the view's
 * model with its innermost frame of the program's own (in its executable, outside Rust's standard library),
 * looked up once per address. The symbol state
 * behind those lookups (the symbolizer with the objects' symbols and DWARF, the prepared frames, the map of
 * addresses) grows with each code path first sampled: in a view of minutes the target keeps reaching new ones,
 * so the whole of it is put away and started afresh once a minute, the mappings told again (the heap it leaves is
 * what the next one grows into: after a renewal or two the view's memory stays where it is). The names already
 * given live on in their own pool (names), so the model's frames stay as they were; what is hot is read again
 * within a few samples. */
#include "cli/top_samples.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/u64_map.h"
#include "base/vec.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/sample_frames.h"
#include "symbolize/symbolize.h"

#define FRAME_SCAN 12                      /* addresses looked through for a sample's innermost frame of its own */
#define RENEW_AFTER_NS 60000000000ull      /* the symbol state's life */

/* An executable mapping of the target, kept to be told to each new symbolizer. */
struct top_mapping {
    uint64_t start, end, pgoff;
    char *path, *root;
    bool program;                     /* the target's executable: its code is the program's own */
};

/* What names the samples' frames: renewed as a whole. */
struct symbol_state {
    struct symbolizer *symbolizer;
    struct task_stacks *stacks;
    struct sample_frames frames;
    struct u64_map own_frames;        /* an address (x2, +1 as a return address) -> its innermost frame outside the
                                         standard library, a frame id in names + 1 (0: none there) */
    bool open;
};

struct top_samples {
    struct task_top *model;
    struct profile *names;            /* the frames' names (sample_frames prepares them there): lives as long as k */
    struct symbol_state sym;
    VEC_OF(struct top_mapping) mappings;
    char *executable;                 /* the target's executable as it names it; NULL: every object is the program's */
    uint64_t renew_at_ns;             /* on the samples' clock; 0: no sample yet */
    unsigned renewals;
};

static void state_close(struct symbol_state *st)
{
    if (!st->open)
        return;
    sample_frames_free(&st->frames);
    u64_map_free(&st->own_frames);
    task_stacks_free(st->stacks);
    symbolizer_free(st->symbolizer);
    *st = (struct symbol_state){ 0 };
}

static bool state_open(struct top_samples *k)
{
    struct symbol_state *st = &k->sym;
    char err[256];
    st->symbolizer = symbolizer_new(&(struct symbolizer_options){ .demangle = true });
    st->stacks = task_stacks_new(k->names, GROUP_BY_ENTRY, false, NULL, err, sizeof(err));
    if (!st->symbolizer || !st->stacks || u64_map_init(&st->own_frames, 1024) != 0) {
        if (st->stacks)
            task_stacks_free(st->stacks);
        if (st->symbolizer)
            symbolizer_free(st->symbolizer);
        *st = (struct symbol_state){ 0 };
        return false;
    }
    const struct sample_symbols symbols = sample_symbols_of(st->symbolizer);
    sample_frames_init(&st->frames, &symbols, st->stacks, k->names, NULL);
    st->open = true;
    for (size_t i = 0; i < k->mappings.n; i++) {
        const struct top_mapping *m = &k->mappings.v[i];
        if (symbolizer_add_mapping(st->symbolizer, m->start, m->end, m->pgoff, m->path, m->root) != 0)
            return false;
    }
    return true;
}

struct top_samples *top_samples_new(struct task_top *model, const char *executable)
{
    struct top_samples *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    k->model = model;
    if (executable && !(k->executable = strdup(executable))) {
        free(k);
        return NULL;
    }
    k->names = profile_new();
    if (!k->names || !state_open(k)) {
        top_samples_free(k);
        return NULL;
    }
    return k;
}

void top_samples_free(struct top_samples *k)
{
    if (!k)
        return;
    state_close(&k->sym);
    for (size_t i = 0; i < k->mappings.n; i++) {
        free(k->mappings.v[i].path);
        free(k->mappings.v[i].root);
    }
    vec_free(&k->mappings);
    free(k->executable);
    if (k->names)
        profile_free(k->names);
    free(k);
}

unsigned top_samples_renewals(const struct top_samples *k)
{
    return k->renewals;
}

void top_samples_mapping(void *ctx, const struct sampler_mapping *m)
{
    struct top_samples *k = ctx;
    if (!m->executable)
        return;
    /* a mapping over the whole of an earlier one replaces it (the symbolizer's rule): only the later is kept */
    size_t kept = 0;
    for (size_t i = 0; i < k->mappings.n; i++) {
        struct top_mapping *old = &k->mappings.v[i];
        if (old->start >= m->start && old->end <= m->end) {
            free(old->path);
            free(old->root);
        } else {
            k->mappings.v[kept++] = *old;
        }
    }
    k->mappings.n = kept;
    struct top_mapping *keep = vec_push(&k->mappings);
    char *path = strdup(m->path ? m->path : ""), *root = strdup(m->root ? m->root : "");
    if (!keep || !path || !root) {
        free(path);
        free(root);
        if (keep)
            k->mappings.n--;
    } else {
        *keep = (struct top_mapping){ .start = m->start, .end = m->end, .pgoff = m->pgoff, .path = path, .root = root,
                                      .program = !k->executable || strcmp(path, k->executable) == 0 };
    }
    if (k->sym.open)
        symbolizer_add_mapping(k->sym.symbolizer, m->start, m->end, m->pgoff, m->path, m->root);
}

/* A function of Rust's standard library: its crates' paths, or a method of a primitive type ("<u64>::wrapping_add",
   "<[T]>::len", "<*const T>::add") */
static bool standard_library(const char *name)
{
    static const char *const prefixes[] = { "core::", "alloc::", "std::", "<core::", "<alloc::", "<std::", "<[", "<*",
                                            "<&" };
    static const char *const primitives[] = { "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
                                              "i128", "isize", "f32", "f64", "bool", "char", "str" };
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    size_t len = name[0] == '<' ? strcspn(name + 1, ">") : 0;
    for (size_t i = 0; len && i < sizeof(primitives) / sizeof(primitives[0]); i++)
        if (strlen(primitives[i]) == len && strncmp(name + 1, primitives[i], len) == 0)
            return true;
    return false;
}

/* Whether address is in the code of another object than the target's executable (libc, the loader, the vDSO, a
   library it links): such a frame is not the program's own, and is never symbolized (on a tokio server's first
   busy second, opening libc's debug file was a third of top's CPU). The latest mapping that holds it decides. */
static bool outside_program(const struct top_samples *k, uint64_t address)
{
    for (size_t i = k->mappings.n; i-- > 0;) {
        const struct top_mapping *m = &k->mappings.v[i];
        if (address >= m->start && address < m->end)
            return !m->program;
    }
    return false;
}

/* The innermost frame of the program's own at address (a return address when caller), a frame id in names + 1, 0
   when there is none there; -1 when out of memory. (Rust's standard library: its inlined helpers too, wrapping_mul,
   memcpy's callers; the C library and the other shared objects: their callers.) */
static int64_t own_frame_at(struct top_samples *k, uint64_t address, bool caller)
{
    struct symbol_state *st = &k->sym;
    if (outside_program(k, address - caller))
        return 0;
    const struct sample_address *c = sample_frames_of(&st->frames, address, caller, false);
    if (!c)
        return -1;
    for (uint32_t j = c->n; j-- > 0;) {
        uint32_t function = st->frames.pool.v[c->first + j].function;
        const char *name = profile_frame_name(k->names, function);
        if (name[0] && !standard_library(name))
            return (int64_t)function + 1;
    }
    return 0;
}

const char *top_samples_frame(struct top_samples *k, const struct sampler_sample *s)
{
    struct symbol_state *st = &k->sym;
    if (!st->open)
        return NULL;
    for (size_t i = 0; i < s->n_user && i < FRAME_SCAN; i++) {
        uint64_t key = s->user_ips[i] * 2 + (i > 0);
        uint32_t own;
        if (!u64_map_get(&st->own_frames, key, &own)) {
            int64_t found = own_frame_at(k, s->user_ips[i], i > 0);
            if (found < 0 || u64_map_put(&st->own_frames, key, (uint32_t)found) != 0)
                return NULL;
            own = (uint32_t)found;
        }
        if (own)
            return profile_frame_name(k->names, own - 1);
    }
    return NULL;
}

void top_samples_sample(void *ctx, const struct sampler_sample *s)
{
    struct top_samples *k = ctx;
    if (k->renew_at_ns == 0) {
        k->renew_at_ns = s->time_ns + RENEW_AFTER_NS;
    } else if (s->time_ns >= k->renew_at_ns) {
        state_close(&k->sym);
        if (state_open(k))
            k->renewals++;
        else
            state_close(&k->sym);          /* out of memory: samples are told without their frames */
        k->renew_at_ns = s->time_ns + RENEW_AFTER_NS;
    }
    uint64_t task = s->task_state == SAMPLER_IN_TASK ? s->task_id : 0;
    task_top_add_sample(k->model, task, s->time_ns, task ? top_samples_frame(k, s) : NULL);
}
