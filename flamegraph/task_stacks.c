/* SPDX-License-Identifier: GPL-3.0-or-later */
/* task_stacks.c: builds the stacks the graph shows from symbolized frames: await-point labels on async
 * frames (prepared once per address), and per sample the runtime frames cut from task stacks, the task
 * root ("task: ENTRY", "task ID: ENTRY") or thread-name root put on top, and a macro's closure joined to the
 * frame of the function that invoked the macro (its await named "NAME @ FILE:LINE (select!)"). */
#include "base/u64_map.h"
#include "base/vec.h"
#include "flamegraph/flamegraph.h"
#include "flamegraph/runtime_rules.h"

#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME 1024
#define MAX_STACK 1024

/* Samples of a task whose entry is not known yet, settled by task_stacks_finish. */
struct pending_samples {
    uint64_t task_id;
    uint64_t count;
};

struct task_stacks {
    struct profile *profile;
    enum task_grouping group_by;
    bool await_points;
    struct runtime_rules rules;
    bool stack_boundaries;               /* no poll markers: find tasks by the runtime's boundary frames */
    bool ids_from_thread_local;          /* ids read from the runtime's thread-local, not poll probes */
    uint64_t boundary_samples;           /* samples found to be a task's that way */
    struct task_boundary_counts below_boundary;   /* samples the markers placed, with task code below a boundary */
    uint32_t unknown_root;               /* "[unknown task]": a marker record was lost */
    uint32_t unknown_entry_root;         /* "[task entry unknown]": a task's samples never left its wrapper */
    bool last_cut_found;                 /* the last stack built in a task had a boundary to cut at */
    /* entry frame id -> "task: ENTRY" root id, grown on demand */
    VEC_OF(uint32_t) entry_roots;        /* entry frame id -> its "task: ENTRY" frame, or PROFILE_NO_FRAME */
    /* task id -> its entry frame, learned from stacks that reach the task's boundary; used for samples
     * whose stack does not (inside the poll wrapper itself, or truncated) */
    uint64_t *known_ids;
    uint32_t *known_entries;
    size_t known_mask, n_known;
    /* marker function -> the function seen calling it: the boundary when the marker fires in a hook that
     * returns before the poll (so its frame is not on the task's stacks) */
    uint32_t learned_marker[8];
    uint32_t learned_caller[8];
    size_t n_learned;
    /* samples inside a poll wrapper of a task whose entry was not known yet: settled by task_stacks_finish */
    VEC_OF(struct pending_samples) pending;
    uint32_t last_node;                  /* the stack node of the sample added last, PROFILE_NO_NODE: held back */
    uint32_t seen_marker;                /* the poll-marker frame's function of the last sample that had one */
    uint32_t ids[MAX_STACK + 2];
    uint32_t entries[MAX_STACK + 2];     /* each of ids' frames' entry (put_frames) */
    bool asyncs[MAX_STACK + 2];          /* ... and whether it is an async frame a macro's closure may join */
    struct u64_map named_macros;         /* (display, macro) -> index in macro_displays */
    VEC_OF(uint32_t) macro_displays;     /* "NAME @ FILE:LINE (select!)" frame ids */
};

struct task_stacks *task_stacks_new(struct profile *p, enum task_grouping group_by, bool await_points,
                                    const char *boundary_regex, char *err, size_t errlen)
{
    struct task_stacks *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->profile = p;
    t->seen_marker = PROFILE_NO_FRAME;
    t->below_boundary.function = PROFILE_NO_FRAME;
    t->group_by = group_by;
    t->await_points = await_points;
    if (runtime_rules_compile(&t->rules, boundary_regex, err, errlen) != 0) {
        free(t);
        return NULL;
    }
    t->unknown_root = profile_intern(p, "[unknown task]", strlen("[unknown task]"));
    t->unknown_entry_root = profile_intern(p, "[task entry unknown]", strlen("[task entry unknown]"));
    if (t->unknown_root == PROFILE_NO_FRAME || t->unknown_entry_root == PROFILE_NO_FRAME) {
        snprintf(err, errlen, "out of memory");
        task_stacks_free(t);
        return NULL;
    }
    return t;
}

void task_stacks_free(struct task_stacks *t)
{
    if (!t)
        return;
    runtime_rules_free(&t->rules);
    vec_free(&t->entry_roots);
    free(t->known_ids);
    free(t->known_entries);
    vec_free(&t->pending);
    u64_map_free(&t->named_macros);
    vec_free(&t->macro_displays);
    free(t);
}

static int add_pending(struct task_stacks *t, uint64_t task_id, uint64_t count)
{
    if (t->pending.n && t->pending.v[t->pending.n - 1].task_id == task_id) {
        t->pending.v[t->pending.n - 1].count += count;
        return 0;
    }
    struct pending_samples *p = vec_push(&t->pending);
    if (!p)
        return -1;
    p->task_id = task_id;
    p->count = count;
    return 0;
}

static size_t known_slot(const struct task_stacks *t, uint64_t id)
{
    uint64_t h = id * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 20) & t->known_mask;
}

/* The entry remembered for a task, or PROFILE_NO_FRAME. */
static uint32_t known_entry(const struct task_stacks *t, uint64_t id)
{
    if (!t->known_ids)
        return PROFILE_NO_FRAME;
    for (size_t i = known_slot(t, id);; i = (i + 1) & t->known_mask) {
        if (t->known_entries[i] == PROFILE_NO_FRAME)
            return PROFILE_NO_FRAME;
        if (t->known_ids[i] == id)
            return t->known_entries[i];
    }
}

static void remember_entry(struct task_stacks *t, uint64_t id, uint32_t entry)
{
    if (!t->known_ids || (t->n_known + 1) * 2 > t->known_mask + 1) {
        size_t cap = t->known_ids ? (t->known_mask + 1) * 2 : 1024;
        uint64_t *ids = malloc(cap * sizeof(*ids));
        uint32_t *entries = malloc(cap * sizeof(*entries));
        if (!ids || !entries) {
            free(ids);
            free(entries);
            return;     /* only a hint: without it such samples fall back to their own frames */
        }
        for (size_t i = 0; i < cap; i++)
            entries[i] = PROFILE_NO_FRAME;
        uint64_t *old_ids = t->known_ids;
        uint32_t *old_entries = t->known_entries;
        size_t old_cap = old_ids ? t->known_mask + 1 : 0;
        t->known_ids = ids;
        t->known_entries = entries;
        t->known_mask = cap - 1;
        t->n_known = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old_entries[i] != PROFILE_NO_FRAME)
                remember_entry(t, old_ids[i], old_entries[i]);
        free(old_ids);
        free(old_entries);
    }
    for (size_t i = known_slot(t, id);; i = (i + 1) & t->known_mask) {
        if (t->known_entries[i] == PROFILE_NO_FRAME) {
            t->known_ids[i] = id;
            t->known_entries[i] = entry;
            t->n_known++;
            return;
        }
        if (t->known_ids[i] == id) {
            t->known_entries[i] = entry;
            return;
        }
    }
}

/* Is tail (starting after "::") one async suffix: "{{closure}}" or "{KIND#N}"? */
static bool is_async_suffix(const char *tail)
{
    static const char *const kinds[] = { "closure#", "async_fn#", "async_block#", "async_fn_env#",
                                         "async_block_env#" };
    if (strcmp(tail, "{{closure}}") == 0)
        return true;
    if (tail[0] != '{')
        return false;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t kl = strlen(kinds[i]);
        if (strncmp(tail + 1, kinds[i], kl) != 0)
            continue;
        const char *d = tail + 1 + kl;
        if (*d < '0' || *d > '9')
            return false;
        while (*d >= '0' && *d <= '9')
            d++;
        return d[0] == '}' && d[1] == '\0';
    }
    return false;
}

bool task_stacks_strip_async_suffix(char *name)
{
    bool stripped = false;
    for (;;) {
        char *sep = NULL;
        for (char *at = strstr(name, "::{"); at; at = strstr(at + 1, "::{"))
            sep = at;
        if (!sep || sep == name || !is_async_suffix(sep + 2))
            return stripped;
        *sep = '\0';
        stripped = true;
    }
}

/* Frame names go into folded lines: a ';' or a newline inside one would split it. */
static void sanitize(char *name)
{
    for (char *c = name; *c; c++)
        if (*c == ';')
            *c = ':';
        else if (*c == '\n' || *c == '\r')
            *c = ' ';
}

int task_stacks_prepare_in_macro(struct task_stacks *t, const char *name, const char *file, unsigned line,
                                 bool kernel, const char *macro, struct stack_frame *out)
{
    char plain[MAX_NAME], entry[MAX_NAME], display[MAX_NAME + 400];
    snprintf(plain, sizeof(plain), "%s", name && *name ? name : "[unknown]");
    sanitize(plain);
    snprintf(entry, sizeof(entry), "%s", plain);
    bool async = !kernel && task_stacks_strip_async_suffix(entry);
    if (!async)
        macro = NULL;               /* (only an async frame's position is an await's) */
    if (kernel)
        snprintf(display, sizeof(display), "%s_[k]", plain);
    else if (async && t->await_points && file && line)
        await_point_name(display, sizeof(display), entry, file, line, macro, macro != NULL);
    else
        snprintf(display, sizeof(display), "%s", plain);
    sanitize(display);
    out->display = profile_intern(t->profile, display, strlen(display));
    out->function = profile_intern(t->profile, plain, strlen(plain));
    out->entry = profile_intern(t->profile, entry, strlen(entry));
    out->runtime = kernel ? 0 : runtime_rules_classify(&t->rules, plain);
    out->async = async;
    out->macro = macro ? profile_intern(t->profile, macro, strlen(macro)) : PROFILE_NO_FRAME;
    if (out->display == PROFILE_NO_FRAME || out->function == PROFILE_NO_FRAME || out->entry == PROFILE_NO_FRAME ||
        (macro && out->macro == PROFILE_NO_FRAME))
        return -1;
    return 0;
}

int task_stacks_prepare(struct task_stacks *t, const char *name, const char *file, unsigned line, bool kernel,
                        struct stack_frame *out)
{
    return task_stacks_prepare_in_macro(t, name, file, line, kernel, NULL, out);
}

/* The display of an async frame (display, its name "NAME @ FILE:LINE") with the macro it invokes there named:
   "NAME @ FILE:LINE (select!)", made once per pair. */
static uint32_t with_macro(struct task_stacks *t, uint32_t display, uint32_t macro)
{
    uint64_t key = (uint64_t)display << 32 | macro;
    uint32_t index;
    if (!t->named_macros.keys && u64_map_init(&t->named_macros, 64) != 0)
        return display;
    int rc = u64_map_index(&t->named_macros, key, &t->macro_displays, &index);
    if (rc < 0)
        return display;
    if (rc == 1) {
        char name[MAX_NAME + 400];
        int len = snprintf(name, sizeof(name), "%s (%s)", profile_frame_name(t->profile, display),
                           profile_frame_name(t->profile, macro));
        uint32_t id = len > 0 && (size_t)len < sizeof(name) ? profile_intern(t->profile, name, (size_t)len)
                                                             : PROFILE_NO_FRAME;
        t->macro_displays.v[index] = id == PROFILE_NO_FRAME ? display : id;
    }
    return t->macro_displays.v[index];
}

#define MACRO_CLOSURE_REACH 4   /* frames above a macro's closure its function's own frame is looked for in */

/* Frames first..n of a stack into t->ids from out on: a macro's closure (an async frame positioned in the macro's
   source) whose function's own async frame is a few frames above is left out, and that frame named with the
   macro (with_macro). Returns the new out. */
static size_t put_frames(struct task_stacks *t, const struct stack_frame *const *frames, size_t first, size_t n,
                         size_t out)
{
    size_t start = out;
    for (size_t i = first; i < n; i++) {
        const struct stack_frame *f = frames[i];
        if (f->macro != PROFILE_NO_FRAME) {
            size_t j = out;
            while (j > start && out - j < MACRO_CLOSURE_REACH && t->entries[j - 1] != f->entry)
                j--;
            if (j > start && t->entries[j - 1] == f->entry && t->asyncs[j - 1]) {
                if (t->await_points)
                    t->ids[j - 1] = with_macro(t, t->ids[j - 1], f->macro);
                continue;
            }
        }
        t->entries[out] = f->entry;
        t->asyncs[out] = f->async && f->macro == PROFILE_NO_FRAME;
        t->ids[out++] = f->display;
    }
    return out;
}

static void learn_caller(struct task_stacks *t, uint32_t marker, uint32_t caller)
{
    for (size_t i = 0; i < t->n_learned; i++)
        if (t->learned_marker[i] == marker) {
            t->learned_caller[i] = caller;
            return;
        }
    if (t->n_learned < sizeof(t->learned_marker) / sizeof(t->learned_marker[0])) {
        t->learned_marker[t->n_learned] = marker;
        t->learned_caller[t->n_learned++] = caller;
    }
}

static uint32_t learned_caller(const struct task_stacks *t, uint32_t marker)
{
    for (size_t i = 0; i < t->n_learned; i++)
        if (t->learned_marker[i] == marker)
            return t->learned_caller[i];
    return PROFILE_NO_FRAME;
}

static uint32_t task_root_by_entry(struct task_stacks *t, uint32_t entry);

static uint32_t task_root(struct task_stacks *t, uint64_t task_id, uint32_t entry)
{
    if (t->group_by == GROUP_BY_TASK) {
        char root[MAX_NAME + 64];
        /* ids beyond 32 bits are addresses (a runtime's task header, without markers): show them in hex */
        int len = task_id > UINT32_MAX
                      ? snprintf(root, sizeof(root), "task 0x%" PRIx64 ": %s", task_id, profile_frame_name(t->profile, entry))
                      : snprintf(root, sizeof(root), "task %" PRIu64 ": %s", task_id, profile_frame_name(t->profile, entry));
        return profile_intern(t->profile, root, (size_t)len < sizeof(root) ? (size_t)len : sizeof(root) - 1);
    }
    return task_root_by_entry(t, entry);
}

/* "task: ENTRY", cached per entry. */
static uint32_t task_root_by_entry(struct task_stacks *t, uint32_t entry)
{
    const char *entry_name = profile_frame_name(t->profile, entry);
    char root[MAX_NAME + 64];
    if (entry >= t->entry_roots.n) {
        if (vec_reserve(&t->entry_roots, (size_t)entry + 1) != 0)
            return PROFILE_NO_FRAME;
        while (t->entry_roots.n <= entry)
            t->entry_roots.v[t->entry_roots.n++] = PROFILE_NO_FRAME;
    }
    if (t->entry_roots.v[entry] == PROFILE_NO_FRAME) {
        int len = snprintf(root, sizeof(root), "task: %s", entry_name);
        t->entry_roots.v[entry] =
            profile_intern(t->profile, root, (size_t)len < sizeof(root) ? (size_t)len : sizeof(root) - 1);
    }
    return t->entry_roots.v[entry];
}

void task_stacks_use_runtime_boundaries(struct task_stacks *t, bool on)
{
    t->stack_boundaries = on;
}

void task_stacks_ids_from_thread_local(struct task_stacks *t, bool on)
{
    t->ids_from_thread_local = on;
}

uint64_t task_stacks_boundary_samples(const struct task_stacks *t)
{
    return t->boundary_samples;
}

/* Index of the innermost frame that polls a task: the frame that fired the poll marker (*at_marker), else the
 * frame learned to call it (hooks that return before the poll), else the innermost runtime boundary. SIZE_MAX
 * if none is on the stack. */
static size_t boundary_frame(const struct task_stacks *t, const struct stack_frame *const *frames, size_t n,
                             uint32_t marker_function, bool *at_marker)
{
    *at_marker = false;
    if (marker_function != PROFILE_NO_FRAME) {
        for (size_t i = n; i-- > 0;)
            if (frames[i]->function == marker_function) {
                *at_marker = true;
                return i;
            }
        uint32_t caller = learned_caller(t, marker_function);
        if (caller != PROFILE_NO_FRAME)
            for (size_t i = n; i-- > 0;)
                if (frames[i]->function == caller)
                    return i;
    }
    /* (the marker may itself be a runtime boundary: tokio's raw::poll probed without markers) */
    for (size_t i = n; i-- > 0;)
        if (frames[i]->runtime & RUNTIME_BOUNDARY)
            return i;
    return SIZE_MAX;
}

/* boundary_frame, learning who calls a user's hook from the marker's frame (not a runtime boundary's, tokio's
 * raw::poll probed without markers: the runtime rules find it when its own frame is gone, a tail call) */
static size_t find_boundary(struct task_stacks *t, const struct stack_frame *const *frames, size_t n,
                            uint32_t marker_function)
{
    bool at_marker;
    size_t i = boundary_frame(t, frames, n, marker_function, &at_marker);
    if (at_marker && i > 0 && !(frames[i]->runtime & RUNTIME_BOUNDARY))
        learn_caller(t, marker_function, frames[i - 1]->function);
    return i;
}

/* The first frame of the task below a boundary at cut. Below a runtime boundary whose rule names the frame
 * the task's future follows, that is right after the innermost such frame (n when the stack does not reach
 * one, or goes on into what that frame does before the future or once it is done: the runtime's own work
 * inside the poll); otherwise past the glue the runtime inlines there. */
static size_t past_glue(const struct stack_frame *const *frames, size_t n, size_t cut)
{
    size_t first = cut + 1;
    if (cut < n && (frames[cut]->runtime & RUNTIME_BOUNDARY)) {
        bool rule_names_entry = false;
        for (size_t i = n; i-- > first;)
            if (frames[i]->runtime & RUNTIME_ENTRY_AFTER) {
                if (i + 1 < n && (frames[i + 1]->runtime & (RUNTIME_AFTER_FUTURE | RUNTIME_ID_GUARD)))
                    return n;
                first = i + 1;
                rule_names_entry = true;
                break;
            }
        if (!rule_names_entry) {
            for (size_t i = first; i < n; i++)
                if (frames[i]->runtime & RUNTIME_WORKER_LOOP)
                    return first;     /* a worker loop: the caller decides */
            if (frames[cut]->runtime & RUNTIME_ENTRY_RULE)
                return n;
        }
    }
    while (first < n && (frames[first]->runtime & (RUNTIME_GLUE | RUNTIME_BOUNDARY)))
        first++;
    return first;
}

static bool runs_worker_loop(const struct stack_frame *const *frames, size_t n, size_t first)
{
    for (size_t i = first; i < n; i++)
        if (frames[i]->runtime & RUNTIME_WORKER_LOOP)
            return true;
    return false;
}

/* Whether frames from..n drop a task's future or output (tokio's Core::set_stage and the like). With no
 * boundary on the stack that is a JoinHandle (or a JoinSet entry) dropped outside any poll; below a poll's
 * first frame, one dropped inside another task's poll. tokio sets the dropped task's id around the drop, so
 * the thread-local id names that task while the thread does another's work. */
static bool drops_task_stage(const struct stack_frame *const *frames, size_t n, size_t from)
{
    for (size_t i = from; i < n; i++)
        if (frames[i]->runtime & RUNTIME_AFTER_FUTURE)
            return true;
    return false;
}

/* A sample the markers placed (in a task or in none; not by runtime boundaries alone) whose stack runs task
 * code below a boundary: counted, and in no task counted apart (a marker that says so at every such sample
 * was never set). */
static void count_below_boundary(struct task_stacks *t, enum stack_task_state state, uint32_t marker_function,
                                 const struct stack_frame *const *frames, size_t n, uint64_t count)
{
    if (t->stack_boundaries || state == STACK_UNKNOWN_TASK)
        return;
    bool at_marker;
    size_t cut = boundary_frame(t, frames, n, marker_function, &at_marker);
    if (cut == SIZE_MAX)
        return;
    size_t first = past_glue(frames, n, cut);
    if (first >= n || runs_worker_loop(frames, n, first))
        return;
    t->below_boundary.samples += count;
    if (state == STACK_NO_TASK) {
        t->below_boundary.no_task += count;
        t->below_boundary.function = frames[cut]->function;
    }
}

void task_stacks_boundary_counts(const struct task_stacks *t, struct task_boundary_counts *out)
{
    *out = t->below_boundary;
}

bool task_boundary_never_in_task(const struct task_boundary_counts *c)
{
    return c->samples >= TASK_BOUNDARY_MIN_SAMPLES && c->no_task == c->samples;
}

/* The stack a sample gets, root first, into t->ids (*out frames). Returns 0, 1 when it is held back (inside the
 * poll wrapper of a task whose entry is not known yet), -1 when out of memory. count only feeds the counts of
 * samples found in tasks by boundary frames and of those below a boundary. */
static int build_stack(struct task_stacks *t, uint32_t thread_root, enum stack_task_state state, uint64_t task_id,
                       uint32_t marker_function, const struct stack_frame *const *frames, size_t n, uint64_t count,
                       size_t *out_n)
{
    if (n > MAX_STACK)
        n = MAX_STACK;          /* keep the outermost; the unwinder already bounds depth far below this */
    size_t first = 0;           /* first frame kept */
    size_t out = 0;
    bool id_known = true;
    count_below_boundary(t, state, marker_function, frames, n, count);
    if (state == STACK_NO_TASK && t->stack_boundaries) {
        /* No poll markers: a stack through a runtime boundary (that is not a worker loop) is a task's. */
        size_t cut = find_boundary(t, frames, n, PROFILE_NO_FRAME);
        if (cut != SIZE_MAX) {
            size_t start = past_glue(frames, n, cut);
            if (start < n && !runs_worker_loop(frames, n, start)) {
                state = STACK_IN_TASK;
                id_known = false;
                t->boundary_samples += count;
            }
        }
    }
    size_t cut = SIZE_MAX;
    t->last_cut_found = false;
    if (state == STACK_IN_TASK) {
        cut = find_boundary(t, frames, n, marker_function);
        t->last_cut_found = cut != SIZE_MAX;
        first = cut == SIZE_MAX ? 0 : past_glue(frames, n, cut);
        /* The boundary found runs a worker loop (a thread back in the scheduler after the poll, when only
         * poll entries are probed), or no boundary is on a stack that reaches a worker loop (the runtime's
         * own work, e.g. completing a task after a tail call left the poll) or drops a task's stage outside
         * any poll (the id is the dropped task's): the sample is the thread's. */
        if ((cut != SIZE_MAX && first < n && runs_worker_loop(frames, n, first)) ||
            (cut == SIZE_MAX && (runs_worker_loop(frames, n, 0) || drops_task_stage(frames, n, 0)))) {
            state = STACK_NO_TASK;
            first = 0;
        }
    }
    if (state == STACK_IN_TASK) {
        uint32_t entry = PROFILE_NO_FRAME;
        if (cut != SIZE_MAX && first < n) {
            entry = frames[first]->entry;
            if (id_known && t->ids_from_thread_local && drops_task_stage(frames, n, first))
                id_known = false;       /* the id is the dropped task's, the frames the polled one's */
            if (id_known && known_entry(t, task_id) != entry)
                remember_entry(t, task_id, entry);
        } else if (cut != SIZE_MAX) {
            /* Inside the poll wrapper itself (before or after the future, or the marker's own trap): the
             * sample is the task's, with no frame of its own; its entry comes from its other samples. */
            entry = known_entry(t, task_id);
            if (t->group_by == GROUP_BY_NONE)
                first = n - 1;      /* no task root to carry the sample: keep the wrapper frame */
            else if (entry == PROFILE_NO_FRAME)
                return 1;
        } else {
            /* A truncated stack that does not reach the boundary: keep its innermost frames, under the task's
             * entry if its other samples told it (never guessed from these frames). */
            entry = known_entry(t, task_id);
        }
        if (t->group_by != GROUP_BY_NONE) {
            uint32_t root = PROFILE_NO_FRAME;
            if (entry == PROFILE_NO_FRAME)
                root = t->unknown_entry_root;
            else if (id_known)
                root = task_root(t, task_id, entry);
            else
                root = task_root_by_entry(t, entry);    /* no id without probes: group by entry */
            if (root == PROFILE_NO_FRAME)
                return -1;
            t->ids[out++] = root;
        }
    } else if (state == STACK_UNKNOWN_TASK) {
        t->ids[out++] = t->unknown_root;
        cut = find_boundary(t, frames, n, PROFILE_NO_FRAME);
        if (cut != SIZE_MAX) {
            first = past_glue(frames, n, cut);
            if (first >= n)
                first = n - 1;
        }
    } else {
        t->ids[out++] = thread_root;
    }
    *out_n = put_frames(t, frames, first, n, out);
    return 0;
}

int task_stacks_add(struct task_stacks *t, uint32_t thread_root, enum stack_task_state state, uint64_t task_id,
                    uint32_t marker_function, const struct stack_frame *const *frames, size_t n, uint64_t count)
{
    t->last_node = PROFILE_NO_NODE;
    if (marker_function != PROFILE_NO_FRAME)
        t->seen_marker = marker_function;
    size_t out = 0;
    int rc = build_stack(t, thread_root, state, task_id, marker_function, frames, n, count, &out);
    if (rc == 1)
        return add_pending(t, task_id, count);
    if (rc != 0 || profile_add_ids(t->profile, t->ids, out, count) != 0)
        return -1;
    t->last_node = profile_last_leaf(t->profile);
    return 0;
}

void task_stacks_saw_marker(struct task_stacks *t, uint32_t marker_function)
{
    if (marker_function != PROFILE_NO_FRAME)
        t->seen_marker = marker_function;
}

int task_stacks_cut(struct task_stacks *t, uint32_t thread_root, uint64_t task_id,
                    const struct stack_frame *const *frames, size_t n, const uint32_t **ids, size_t *n_ids)
{
    size_t out = 0;
    int rc = build_stack(t, thread_root, STACK_IN_TASK, task_id, t->seen_marker, frames, n, 0, &out);
    if (rc < 0)
        return -1;
    *ids = t->ids;
    /* (no boundary on it: its root alone, never the thread's whole stack under the task's root) */
    *n_ids = rc == 1 || (!t->last_cut_found && t->group_by != GROUP_BY_NONE) ? 0 : out;
    return 0;
}

bool task_stacks_entry_known(const struct task_stacks *t, uint64_t task_id)
{
    return known_entry(t, task_id) != PROFILE_NO_FRAME;
}

int task_stacks_name_task(struct task_stacks *t, uint64_t task_id, const char *entry)
{
    if (known_entry(t, task_id) != PROFILE_NO_FRAME)
        return 0;
    char name[MAX_NAME];
    snprintf(name, sizeof(name), "%s", entry);
    sanitize(name);
    uint32_t id = profile_intern(t->profile, name, strlen(name));
    if (id == PROFILE_NO_FRAME)
        return -1;
    remember_entry(t, task_id, id);
    return 0;
}

uint32_t task_stacks_root_for(struct task_stacks *t, uint64_t task_id, const char *entry)
{
    char name[MAX_NAME];
    snprintf(name, sizeof(name), "%s", entry);
    sanitize(name);
    uint32_t id = profile_intern(t->profile, name, strlen(name));
    return id == PROFILE_NO_FRAME ? PROFILE_NO_FRAME : task_root(t, task_id, id);
}

uint32_t task_stacks_last_node(const struct task_stacks *t)
{
    return t->last_node;
}

uint32_t task_stacks_task_root(struct task_stacks *t, uint64_t task_id)
{
    uint32_t entry = known_entry(t, task_id);
    return entry != PROFILE_NO_FRAME ? task_root(t, task_id, entry) : t->unknown_entry_root;
}

int task_stacks_finish(struct task_stacks *t)
{
    for (size_t i = 0; i < t->pending.n; i++) {
        const struct pending_samples *s = &t->pending.v[i];
        uint32_t entry = known_entry(t, s->task_id);
        uint32_t root = entry != PROFILE_NO_FRAME ? task_root(t, s->task_id, entry) : t->unknown_entry_root;
        if (root == PROFILE_NO_FRAME || profile_add_ids(t->profile, &root, 1, s->count) != 0)
            return -1;
    }
    t->pending.n = 0;
    return 0;
}
