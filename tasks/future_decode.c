/* SPDX-License-Identifier: GPL-3.0-or-later */
/* future_decode.c: a task's async backtrace from its future's bytes and the program's DWARF. Per vtable once
 * (task_plan_find): the root future's type T from the vtable's raw::poll<T, S> (a template parameter), and
 * where it sits in the task's Cell<T, S> (core.stage). Per task (future_decode): an async fn's state machine
 * is a variant part on __state; a Suspend<k> variant carries its await's file and line and the awaited future
 * as __awaitee, followed down; other futures (a connection struct, Box/Pin<Box<..>>, Option, select!'s
 * captured futures) are searched through their members, owned boxes (trait objects by their vtable) and
 * &mut references, bounded in depth and bytes, never through shared pointers (Arc: the runtime's own state)
 * nor raw pointers; the first suspended async fn found wins, else the innermost leaf future taskspy knows. */
#include "tasks/tasks_internal.h"

#include <dwarf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "symbolize/symbolize.h"

#define MAX_VALUE (64 * 1024)        /* bytes of one value read at once */
#define MAX_NAME 2048
#define MAX_VISITED 4096
#define VISITED_SLOTS 8192           /* the visited set's table: a power of two above MAX_VISITED */
#define MAX_LEAD_DEPTH 64            /* deeper types are taken as leading to a future */
/* tokio's taskdump feature (tokio_unstable) wraps every task's future in trace::Root<T> { future: T } */
#define TRACE_ROOT "tokio::runtime::task::trace::Root<"

struct decoder {
    const struct tokio_layout *l;
    struct string_pool *pool;
    struct type_cache *types;
    elf_memory_reader read;
    void *rctx;
    size_t bytes_left;
    unsigned max_depth;
    bool no_details;
    struct decoded_future *out;
    const char *weak_leaf, *weak_detail;   /* an I/O object met on the way, if nothing better is found */
    size_t n_visited;
    /* the (address, type) pairs visited in this task: an open-addressing table whose slots count as empty
       unless stamped with this task's generation (never cleared between tasks) */
    uint64_t visited_key[VISITED_SLOTS];
    uint32_t visited_generation[VISITED_SLOTS];
    uint32_t generation;
};

enum found { FOUND_NONE, FOUND_FRAME };

/* ---- names ----------------------------------------------------------------------------------------------- */

/* "a::b::{async_fn_env#0}<T>" -> "a::b"; "x::{{closure}}" -> "x" (SPEC 3: async suffixes removed) */
static void strip_async(char *name)
{
    static const char *const suffixes[] = { "::{async_fn_env#", "::{async_block_env#", "::{{closure}}",
                                            "::{closure#", "::{async_fn#", "::{async_block#" };
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        char *at = strstr(name, suffixes[i]);
        if (at)
            *at = '\0';
    }
}

void type_cache_free(struct type_cache *c)
{
    u64_map_free(&c->by_die);
    vec_free(&c->facts);
    vec_free(&c->members);
    u64_map_free(&c->variant_by_key);
    vec_free(&c->variants);
    free(c->spare);
    c->spare = NULL;
}

static bool is_async_env(Dwarf_Die *type)
{
    const char *n = dwarf_diename(type);
    return n && (strncmp(n, "{async_fn_env#", 14) == 0 || strncmp(n, "{async_block_env#", 17) == 0);
}

/* the function an async state machine type belongs to, as the CPU profile names it */
static const char *find_function_name(struct decoder *dc, Dwarf_Die *env)
{
    char linkage[MAX_NAME], name[MAX_NAME];
    char *demangled = dwarf_async_fn_linkage(dc->l->dwarf, env, linkage, sizeof(linkage)) ? symbolize_demangle(linkage)
                                                                                            : NULL;
    if (demangled) {
        snprintf(name, sizeof(name), "%s", demangled);
        free(demangled);
    } else if (dwarf_qualified_name(dc->l->dwarf, env, name, sizeof(name)) == 0) {
        return NULL;
    }
    strip_async(name);
    return string_pool_intern(dc->pool, name);
}

/* what decode does with a structure of this name */
static enum type_kind kind_of(const char *name, const struct leaf_plan *leaf)
{
    if (!name)
        return TYPE_OTHER;
    if (leaf->strength != LEAF_NONE)
        return TYPE_LEAF;
    if (strncmp(name, TRACE_ROOT, strlen(TRACE_ROOT)) == 0)
        return TYPE_TRACE_ROOT;
    if (strncmp(name, "alloc::sync::Arc<", 17) == 0 || strncmp(name, "alloc::rc::Rc<", 14) == 0 ||
        strncmp(name, "tokio::runtime::", 16) == 0)
        return TYPE_SHARED;
    if (strncmp(name, "alloc::boxed::Box<", 18) == 0)
        return TYPE_BOX;
    return TYPE_OTHER;
}

/* where a Box (alloc::boxed::Box) keeps its pointer: a trait object's data and vtable, or a sized type's
   pointer and what it points to */
static void find_box(Dwarf_Die *box, struct type_facts *f)
{
    struct dwarf_member ptr, vtable;
    const char *failed;
    if (dwarf_member(box, "pointer", &ptr) && dwarf_member(box, "vtable", &vtable)) {
        f->box_dyn = true;
        f->pointer_offset = ptr.offset;
        f->vtable_offset = vtable.offset;
        return;
    }
    if ((dwarf_member_path(box, "__0.pointer.pointer", &ptr, &failed) ||
         dwarf_member_path(box, "__0.pointer", &ptr, &failed)) &&
        dwarf_tag(&ptr.type) == DW_TAG_pointer_type && dwarf_type_of(&ptr.type, &f->target)) {
        f->has_target = true;
        f->pointer_offset = ptr.offset;
    }
}

static struct type_facts find_facts(struct decoder *dc, Dwarf_Die *type)
{
    struct type_facts f = { .tag = dwarf_tag(type) };
    struct dwarf_member value;     /* MaybeUninit<T> { uninit, value: ManuallyDrop<T> } */
    if (f.tag == DW_TAG_union_type && dwarf_member(type, "value", &value)) {
        f.has_target = true;
        f.pointer_offset = value.offset;
        f.target = value.type;
    }
    if (f.tag != DW_TAG_structure_type)
        return f;
    const char *own = dwarf_diename(type);
    f.branches = own && own[0] == '(';
    f.async_env = is_async_env(type);
    f.has_variants = dwarf_has_variants(type);
    f.size = dwarf_type_size(type);
    if (f.has_variants)
        f.discr_known = dwarf_variant_discr_at(type, &f.discr_offset, &f.discr_size);
    char name[MAX_NAME];
    if (dwarf_qualified_name(dc->l->dwarf, type, name, sizeof(name)) > 0)
        f.name = string_pool_intern(dc->pool, name);
    future_leaf_plan(f.name, type, &f.leaf);
    f.kind = kind_of(f.name, &f.leaf);
    if (f.kind == TYPE_BOX)
        find_box(type, &f);
    if (f.async_env)
        f.function = find_function_name(dc, type);
    return f;
}

/* a structure type's facts, found on its first sight */
/* a type's facts' index in the cache, found on its first sight; UINT32_MAX when the cache cannot hold them */
static uint32_t facts_index(struct decoder *dc, Dwarf_Die *type)
{
    uint32_t index;
    struct type_cache *c = dc->types;
    if (!c->by_die.keys && u64_map_init(&c->by_die, 1024) != 0)
        return UINT32_MAX;
    int rc = u64_map_index(&c->by_die, dwarf_dieoffset(type), &c->facts, &index);
    if (rc < 0)
        return UINT32_MAX;
    if (rc == 1)
        c->facts.v[index] = find_facts(dc, type);
    return index;
}

static struct type_facts facts_of(struct decoder *dc, Dwarf_Die *type)
{
    uint32_t index = facts_index(dc, type);
    return index == UINT32_MAX ? find_facts(dc, type) : dc->types->facts.v[index];
}

/* ---- reading ---------------------------------------------------------------------------------------------- */

static bool take_bytes(struct decoder *dc, uint64_t addr, void *buf, size_t len)
{
    if (len > dc->bytes_left)
        return false;
    dc->bytes_left -= len;
    return dc->read(dc->rctx, addr, buf, len);
}

/* What the variant selected by value says (found in the DWARF: once per type and value, kept by variant_at). */
static void find_variant(Dwarf_Die *type, const struct type_facts *f, uint64_t value, struct variant_facts *out)
{
    size_t len = (size_t)f->discr_offset + (f->discr_size ? f->discr_size : 1);
    uint8_t *bytes = calloc(1, len);
    out->ok = bytes && dwarf_variant_of(type, bytes ? (memcpy(bytes + f->discr_offset, &value, f->discr_size), bytes)
                                                    : NULL, len, &out->variant);
    free(bytes);
    if (!out->ok)
        return;
    out->name = dwarf_diename(&out->variant.type);
    if (!dwarf_decl_position(&out->variant.die, &out->file, &out->line))
        dwarf_decl_position(&out->variant.type, &out->file, &out->line);
    out->has_awaitee = dwarf_member(&out->variant.type, "__awaitee", &out->awaitee);
    out->has_field0 = dwarf_member(&out->variant.type, "__0", &out->field0);
}

/* The variant the enum value at addr holds: its discriminant read (the whole value counted against the byte
   budget), what its variant says looked up once per (type, discriminant value). */
static bool variant_at(struct decoder *dc, Dwarf_Die *type, const struct type_facts *f, uint64_t addr,
                       struct variant_facts *out)
{
    memset(out, 0, sizeof(*out));
    if (!f->discr_known || f->size <= 0 || f->size > MAX_VALUE || (size_t)f->size > dc->bytes_left ||
        f->discr_offset + f->discr_size > (uint64_t)f->size)
        return false;
    dc->bytes_left -= (size_t)f->size;
    uint64_t value = 0;
    if (f->discr_size && !dc->read(dc->rctx, addr + f->discr_offset, &value, f->discr_size))
        return false;
    Dwarf_Off at = dwarf_dieoffset(type);
    uint64_t key = (at * 0x9e3779b97f4a7c15ull) ^ value;
    struct type_cache *c = dc->types;
    uint32_t index;
    int rc = c->variant_by_key.keys || u64_map_init(&c->variant_by_key, 256) == 0
                 ? u64_map_index(&c->variant_by_key, key, &c->variants, &index)
                 : -1;
    if (rc == 0 && c->variants.v[index].type == at && c->variants.v[index].value == value) {
        *out = c->variants.v[index];
        return out->ok;
    }
    out->type = at;
    out->value = value;
    find_variant(type, f, value, out);
    if (rc == 1)
        c->variants.v[index] = *out;   /* (another (type, value) under the same key: found each time) */
    return out->ok;
}

/* visit (addr, type) once: cycles through &mut references and repeated members end here (a linear search of
   the visited pairs was a sixth of a snapshot's CPU on the hyper fixture's connections) */
static bool first_visit(struct decoder *dc, uint64_t addr, Dwarf_Die *type)
{
    uint64_t key = addr * 31 + dwarf_dieoffset(type);
    for (size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 51) & (VISITED_SLOTS - 1);; i = (i + 1) & (VISITED_SLOTS - 1)) {
        if (dc->visited_generation[i] != dc->generation) {
            if (dc->n_visited == MAX_VISITED)
                return false;
            dc->visited_generation[i] = dc->generation;
            dc->visited_key[i] = key;
            dc->n_visited++;
            return true;
        }
        if (dc->visited_key[i] == key)
            return false;
    }
}

static bool push_frame(struct decoder *dc, const char *function, const char *file, uint32_t line)
{
    struct decoded_future *o = dc->out;
    if (vec_reserve_raw((void **)&o->frames, &o->cap_frames, sizeof(*o->frames), o->n_frames + 1) != 0)
        return false;
    o->frames[o->n_frames++] = (struct task_frame){ function, file ? string_pool_intern(dc->pool, file) : NULL, line };
    return true;
}

static enum found decode(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth);

/* ---- pointers: which are followed ----------------------------------------------------------------------- */

/* decode what a followed pointer points to, once per (address, type) in a task: cycles through &mut references
   and futures reached by two pointers end here (a struct's members, at fixed offsets, cannot revisit one) */
static enum found decode_target(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    return first_visit(dc, addr, type) ? decode(dc, type, addr, depth) : FOUND_NONE;
}

/* a Box<T> (alloc::boxed::Box): owned, followed; a trait object's box by its vtable's concrete type */
static enum found follow_box(struct decoder *dc, const struct type_facts *f, uint64_t addr, unsigned depth)
{
    uint64_t data, vt;
    Dwarf_Die target;
    if (f->box_dyn) {
        /* Box<dyn Trait>: data pointer and vtable; the vtable names the concrete type */
        if (!take_bytes(dc, addr + f->pointer_offset, &data, 8) || !take_bytes(dc, addr + f->vtable_offset, &vt, 8) ||
            !data || !dwarf_vtable_type(dc->l->dwarf, vt - dc->l->bias, &target))
            return FOUND_NONE;
        return decode_target(dc, &target, data, depth + 1);
    }
    target = f->target;
    if (!f->has_target || !take_bytes(dc, addr + f->pointer_offset, &data, 8) || !data)
        return FOUND_NONE;
    return decode_target(dc, &target, data, depth + 1);
}

/* a pointer type met as a member: &mut T (select! and join! hold their futures so) and Box<T> (owned) are
   followed; shared references, raw pointers and Arc are not (runtime state, other tasks) */
static enum found follow_pointer(struct decoder *dc, Dwarf_Die *ptr_type, uint64_t addr, unsigned depth)
{
    const char *n = dwarf_diename(ptr_type);
    Dwarf_Die target;
    uint64_t data;
    /* rustc describes a Box of a sized type as a pointer type named after the Box */
    bool owned = n && (strncmp(n, "&mut ", 5) == 0 || strncmp(n, "alloc::boxed::Box<", 18) == 0);
    if (!owned || !dwarf_type_of(ptr_type, &target) || !take_bytes(dc, addr, &data, 8) || !data)
        return FOUND_NONE;
    return decode_target(dc, &target, data, depth + 1);
}

/* ---- an async fn's state machine ----------------------------------------------------------------------- */

static enum found decode_async(struct decoder *dc, Dwarf_Die *env, uint64_t addr, unsigned depth)
{
    struct type_facts facts = facts_of(dc, env);
    struct variant_facts v;
    bool ok = variant_at(dc, env, &facts, addr, &v);
    const char *fn = facts.function;
    /* a state machine's variant members are numbered; their types carry the names (Unresumed, Suspend0, ...) and
       the members the await's position */
    const char *vname = ok ? v.name : NULL;
    if (!fn || !vname)
        return FOUND_NONE;
    if (strncmp(vname, "Suspend", 7) != 0) {
        /* Unresumed (spawned, never polled yet), Returned, Panicked: no await to show */
        push_frame(dc, fn, NULL, 0);
        if (strcmp(vname, "Unresumed") == 0 && !dc->out->leaf)
            dc->out->leaf = string_pool_intern(dc->pool, "(not polled yet)");
        return FOUND_FRAME;
    }
    if (!push_frame(dc, fn, v.file, v.line))
        return FOUND_FRAME;
    if (v.has_awaitee)
        decode(dc, &v.awaitee.type, addr + v.variant.offset + v.awaitee.offset, depth + 1);
    return FOUND_FRAME;
}

/* ---- which types can lead to a future ------------------------------------------------------------------- */

static bool may_lead(struct decoder *dc, Dwarf_Die *type, unsigned depth);

static bool members_may_lead(struct decoder *dc, Dwarf_Die *type, unsigned depth)
{
    struct dwarf_member m;
    struct dwarf_member_cursor cursor = { 0 };
    while (dwarf_member_next(type, &cursor, &m))
        if (may_lead(dc, &m.type, depth + 1))
            return true;
    return false;
}

/* whether decode, for some value of the structure type, would find a frame or a leaf: its order of cases */
static bool structure_may_lead(struct decoder *dc, Dwarf_Die *type, const struct type_facts *f, unsigned depth)
{
    if (f->async_env || f->kind == TYPE_LEAF)
        return true;
    if (f->kind == TYPE_TRACE_ROOT)
        return members_may_lead(dc, type, depth);
    if (f->kind == TYPE_SHARED)
        return false;
    if (f->kind == TYPE_BOX) {
        Dwarf_Die target = f->target;  /* (a trait object: what it holds is known from its vtable only) */
        return f->box_dyn || (f->has_target && may_lead(dc, &target, depth + 1));
    }
    if (f->has_variants) {
        struct dwarf_member v;
        for (size_t i = 0; dwarf_variant_at(type, i, &v); i++)
            if (members_may_lead(dc, &v.type, depth))
                return true;
        return false;
    }
    return members_may_lead(dc, type, depth);
}

/* Whether a value of type can lead decode to a frame or a leaf, whatever the value: found from the DWARF once
   per type. A connection's buffers, headers, counters and the runtime's handles cannot, and not searching
   them was most of a snapshot's CPU on the hyper fixture. In doubt (a type within itself, a trait object,
   deeper than MAX_LEAD_DEPTH, no room in the cache), it can. */
static bool may_lead(struct decoder *dc, Dwarf_Die *type, unsigned depth)
{
    uint32_t index = depth > MAX_LEAD_DEPTH ? UINT32_MAX : facts_index(dc, type);
    if (index == UINT32_MAX)
        return true;
    struct type_facts f = dc->types->facts.v[index];
    if (f.lead != LEAD_UNKNOWN)
        return f.lead != LEAD_NONE;     /* (LEAD_SEARCHING: met within itself) */
    dc->types->facts.v[index].lead = LEAD_SEARCHING;
    bool maybe = false;
    Dwarf_Die target;
    if (f.tag == DW_TAG_pointer_type) {
        /* followed as follow_pointer does: &mut T and Box<T> only */
        const char *n = dwarf_diename(type);
        bool owned = n && (strncmp(n, "&mut ", 5) == 0 || strncmp(n, "alloc::boxed::Box<", 18) == 0);
        maybe = owned && dwarf_type_of(type, &target) && may_lead(dc, &target, depth + 1);
    } else if (f.tag == DW_TAG_union_type) {
        target = f.target;
        maybe = f.has_target && may_lead(dc, &target, depth + 1);
    } else if (f.tag == DW_TAG_structure_type) {
        maybe = structure_may_lead(dc, type, &f, depth);
    }
    dc->types->facts.v[index].lead = maybe ? LEAD_MAYBE : LEAD_NONE;
    return maybe;
}

/* ---- any other future ----------------------------------------------------------------------------------- */

/* type's members, listed in the cache on the first sight of the type: false when they cannot be (no memory) */
static bool members_of(struct decoder *dc, Dwarf_Die *type, uint32_t *at, uint32_t *n)
{
    struct type_cache *c = dc->types;
    uint32_t index;
    if (!c->by_die.keys || !u64_map_get(&c->by_die, dwarf_dieoffset(type), &index))
        return false;
    if (!c->facts.v[index].members_known) {
        size_t first = c->members.n;
        struct dwarf_member m;
        struct dwarf_member_cursor cursor = { 0 };
        while (dwarf_member_next(type, &cursor, &m)) {
            struct member_facts *mf = vec_push(&c->members);
            if (!mf || c->members.n > UINT32_MAX) {
                c->members.n = first;
                return false;
            }
            const char *name = dwarf_diename(&m.die);
            *mf = (struct member_facts){ m.type, m.offset, name && strncmp(name, "_marker", 7) == 0, LEAD_UNKNOWN };
        }
        c->facts.v[index].members_at = (uint32_t)first;
        c->facts.v[index].n_members = (uint32_t)(c->members.n - first);
        c->facts.v[index].members_known = true;
    }
    *at = c->facts.v[index].members_at;
    *n = c->facts.v[index].n_members;
    return true;
}

/* A struct's members are searched whole: a suspended async fn anywhere in it beats a socket met first (a
   connection holds its socket before its request's handler). A tuple's elements are select!'s or join!'s
   branches: the first branch (in source order) where anything is found, a socket included, is the one shown. */
static enum found decode_members(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    bool branches = facts_of(dc, type).branches;
    uint32_t at, n;
    if (!members_of(dc, type, &at, &n))
        return FOUND_NONE;
    for (uint32_t i = at; i < at + n; i++) {
        struct member_facts m = dc->types->members.v[i];   /* (a copy: the list grows while decoding) */
        if (m.lead == LEAD_UNKNOWN)
            dc->types->members.v[i].lead = m.lead = may_lead(dc, &m.type, 0) ? LEAD_MAYBE : LEAD_NONE;
        if (m.marker || m.lead == LEAD_NONE)
            continue;
        const char *weak_before = dc->weak_leaf;
        if (decode(dc, &m.type, addr + m.offset, depth + 1) == FOUND_FRAME)
            return FOUND_FRAME;
        if (branches && dc->weak_leaf != weak_before) {
            dc->out->leaf = dc->weak_leaf;
            dc->out->detail = dc->weak_detail;
            return FOUND_FRAME;
        }
    }
    return FOUND_NONE;
}

static enum found decode_enum(struct decoder *dc, Dwarf_Die *type, const struct type_facts *facts, uint64_t addr,
                              unsigned depth)
{
    struct variant_facts v;
    if (!variant_at(dc, type, facts, addr, &v))
        return FOUND_NONE;
    return decode_members(dc, &v.variant.type, addr + v.variant.offset, depth);
}

static enum found decode(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    if (depth > dc->max_depth || dc->bytes_left == 0 || addr == 0)
        return FOUND_NONE;
    struct type_facts facts = facts_of(dc, type);
    if (facts.tag == DW_TAG_pointer_type)
        return follow_pointer(dc, type, addr, depth);
    if (facts.tag == DW_TAG_union_type)
        return facts.has_target ? decode(dc, &facts.target, addr + facts.pointer_offset, depth + 1) : FOUND_NONE;
    if (facts.tag != DW_TAG_structure_type)
        return FOUND_NONE;
    if (facts.async_env)
        return decode_async(dc, type, addr, depth);
    const char *name = facts.name;
    if (facts.kind == TYPE_LEAF) {
        const char *detail =
            dc->no_details ? NULL : future_leaf_detail(dc->l, dc->pool, dc->read, dc->rctx, &facts.leaf, addr);
        enum leaf_strength s = facts.leaf.strength;
        if (s == LEAF_STRONG) {
            dc->out->leaf = name;
            dc->out->detail = detail;
            return FOUND_FRAME;
        }
        if (s == LEAF_WEAK) {
            if (!dc->weak_leaf) {
                dc->weak_leaf = name;
                dc->weak_detail = detail;
            }
            return FOUND_NONE;
        }
    }
    if (facts.kind == TYPE_TRACE_ROOT)
        return decode_members(dc, type, addr, depth);
    if (facts.kind == TYPE_SHARED)
        return FOUND_NONE;         /* shared or runtime state: never another task's future */
    if (facts.kind == TYPE_BOX)
        return follow_box(dc, &facts, addr, depth);
    if (facts.has_variants)
        return decode_enum(dc, type, &facts, addr, depth);
    return decode_members(dc, type, addr, depth);
}

/* ---- per vtable ------------------------------------------------------------------------------------------ */

bool task_plan_find(const struct tokio_layout *l, struct string_pool *pool, uint64_t poll, struct task_plan *out)
{
    memset(out, 0, sizeof(*out));
    Dwarf_Die fn, params[2], cell;
    static const char *const names[] = { "T", "S" };
    struct dwarf_member stage;
    const char *failed;
    if (!dwarf_function_at(l->dwarf, poll - l->bias, &fn) || !dwarf_template_param(&fn, "T", &params[0]) ||
        !dwarf_template_param(&fn, "S", &params[1]) ||
        !dwarf_generic_type(l->dwarf, "tokio::runtime::task::core::Cell", names, params, 2, &cell) ||
        !dwarf_member_path(&cell, "core.stage.stage", &stage, &failed))
        return false;
    /* through the UnsafeCell wrappers (tokio's loom one holds std's) to the Stage<T> enum */
    struct dwarf_member inner;
    for (int i = 0; i < 4 && !dwarf_has_variants(&stage.type) && dwarf_member_count(&stage.type) == 1 &&
                    dwarf_member_at(&stage.type, 0, &inner);
         i++) {
        stage.offset += inner.offset;
        stage.type = inner.type;
    }
    if (!dwarf_has_variants(&stage.type))
        return false;
    struct dwarf_member wrapped;
    char outer[MAX_NAME];
    if (dwarf_qualified_name(l->dwarf, &params[0], outer, sizeof(outer)) > 0 &&
        strncmp(outer, TRACE_ROOT, strlen(TRACE_ROOT)) == 0 && dwarf_member(&params[0], "future", &wrapped))
        params[0] = wrapped.type;   /* the root is what Root wraps; decoding goes through Root itself */
    out->future = params[0];
    out->stage = stage.type;
    out->stage_offset = stage.offset;
    char name[MAX_NAME];
    if (dwarf_qualified_name(l->dwarf, &params[0], name, sizeof(name)) == 0)
        snprintf(name, sizeof(name), "[unknown future]");
    if (is_async_env(&params[0])) {
        char linkage[MAX_NAME];
        char *demangled = dwarf_async_fn_linkage(l->dwarf, &params[0], linkage, sizeof(linkage))
                              ? symbolize_demangle(linkage)
                              : NULL;
        if (demangled) {
            snprintf(name, sizeof(name), "%s", demangled);
            free(demangled);
        }
        strip_async(name);
    }
    out->root = string_pool_intern(pool, name);
    out->ok = out->root != NULL;
    return out->ok;
}

bool future_decode(const struct tokio_layout *l, struct string_pool *pool, struct type_cache *types,
                   const struct decode_limits *limits,
                   elf_memory_reader read, void *rctx, uint64_t header, const struct task_plan *plan,
                   struct decoded_future *out)
{
    /* (not zeroed whole: the visited set's slots are stamped with a generation per task, and zeroing 32 KB per
       task was a tenth of a dump's CPU) */
    struct decoder *dc = types->spare ? types->spare : calloc(1, sizeof(*dc));
    if (!dc)
        return false;
    types->spare = NULL;
    memset(dc, 0, offsetof(struct decoder, visited_key));
    if (++dc->generation == 0) {   /* (wrapped: slots of 2^32 tasks ago would count as this task's) */
        memset(dc->visited_generation, 0, sizeof(dc->visited_generation));
        dc->generation = 1;
    }
    dc->l = l;
    dc->pool = pool;
    dc->types = types;
    dc->read = read;
    dc->rctx = rctx;
    dc->bytes_left = limits->max_bytes;
    dc->max_depth = limits->max_depth;
    dc->no_details = limits->no_details;
    dc->out = out;
    dc->n_visited = 0;
    /* the stage: Running(T) holds the future; Finished and Consumed hold none */
    Dwarf_Die stage = plan->stage;
    struct type_facts facts = facts_of(dc, &stage);
    struct variant_facts v;
    const char *vname;
    bool running = variant_at(dc, &stage, &facts, header + plan->stage_offset, &v) &&
                   (vname = dwarf_diename(&v.variant.die)) && strcmp(vname, "Running") == 0 && v.has_field0;
    if (running) {
        decode(dc, &v.field0.type, header + plan->stage_offset + v.variant.offset + v.field0.offset, 0);
        if (!out->leaf && dc->weak_leaf) {
            out->leaf = dc->weak_leaf;
            out->detail = dc->weak_detail;
        }
    }
    types->spare = dc;
    return running;
}
