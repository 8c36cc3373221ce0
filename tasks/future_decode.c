/* SPDX-License-Identifier: GPL-3.0-or-later */
/* future_decode.c: a task's async backtrace, as a tree, from its future's bytes and the program's DWARF. Per
 * vtable once (task_plan_find): the root future's type T from the vtable's raw::poll<T, S> (a template parameter),
 * and where it sits in the task's Cell<T, S> (core.stage). Per task (future_decode): an async fn's state machine
 * is a variant part on __state; a Suspend<k> variant carries its await's position and the awaited future as
 * __awaitee, followed down (a node of the tree); other futures (a connection struct, Box/Pin<Box<..>>, Option)
 * are searched through their members, owned boxes (trait objects by their vtable) and &mut references, bounded
 * in depth, bytes and nodes, never through shared pointers (Arc: the runtime's own state) nor raw pointers, except
 * where a set of futures awaited at once keeps them so. Such sets make the tree's branches, each pending one a
 * child of the frame that awaits it: a tuple (select!'s and join!'s futures; tokio's select! skips the branches
 * its mask disables), a boxed slice (join_all), a Vec (select_all), a FuturesUnordered (its tasks' list, through
 * raw pointers; FuturesOrdered holds one). A MaybeDone that is Done, an async fn that has Returned, a Fuse that
 * has finished are left out. Where nothing better is found in a branch, an I/O object met in it is its leaf.
 *
 * The await's line is the program's (task_frame): a Suspend<k> variant inside a macro has the macro's own
 * position, so the await's `__awaitee` local of the same type, which rustc declares at the macro's invocation, is
 * looked up in the async fn's resume function (once per type and variant). */
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
#define MAX_NODES 1024               /* nodes of one task's tree */
#define MAX_SET 4096                 /* elements of one set of futures read */
/* tokio's taskdump feature (tokio_unstable) wraps every task's future in trace::Root<T> { future: T } */
#define TRACE_ROOT "tokio::runtime::task::trace::Root<"

struct node_vec {
    struct task_node *v;
    size_t n, cap;
};

struct decoder {
    const struct tokio_layout *l;
    struct string_pool *pool;
    struct type_cache *types;
    elf_memory_reader read;
    void *rctx;
    size_t bytes_left;
    unsigned max_depth;
    bool no_details;
    struct string_pool *details;     /* the leaves' details */
    bool truncated;                      /* a bound cut the tree */
    uint32_t parent;                     /* the node new nodes go under */
    const char *weak_leaf, *weak_detail; /* an I/O object met in the branch being read, if nothing better is found */
    bool mask_armed;                     /* select!'s disabled branches, for the next tuple read */
    uint64_t mask;
    bool macro_closure;                  /* an await inside a macro: the closure it polls (futures' select! and
                                            join! capture each future apart) holds branches */
    struct type_facts facts_scratch;     /* facts_ptr's when the cache cannot hold them */
    VEC_OF(uint32_t) map;                /* finish_tree's: old node index -> new */
    size_t n_visited;
    struct node_vec nodes;               /* the tree being built (kept for the next task) */
    /* the (address, type) pairs visited in this task: an open-addressing table whose slots count as empty
       unless stamped with this task's generation (never cleared between tasks) */
    uint64_t visited_key[VISITED_SLOTS];
    uint32_t visited_generation[VISITED_SLOTS];
    uint32_t generation;
};

enum found { FOUND_NONE, FOUND_FRAME };

/* ---- names ----------------------------------------------------------------------------------------------- */

/* "a::b::{async_fn_env#0}<T>" -> "a::b"; "x::{{closure}}" -> "x" (SPEC 3: async suffixes removed) */
void tasks_strip_async(char *name)
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
    if (c->spare) {
        vec_free(&c->spare->nodes);
        vec_free(&c->spare->map);
    }
    free(c->spare);
    c->spare = NULL;
}

static bool is_async_env(Dwarf_Die *type)
{
    const char *n = dwarf_diename(type);
    return n && (strncmp(n, "{async_fn_env#", 14) == 0 || strncmp(n, "{async_block_env#", 17) == 0);
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

/* the function an async state machine type belongs to, as the CPU profile names it */
static bool function_name(struct dwarf_types *dwarf, Dwarf_Die *env, char *name, size_t len)
{
    char linkage[MAX_NAME];
    char *demangled = dwarf_async_fn_linkage(dwarf, env, linkage, sizeof(linkage)) ? symbolize_demangle(linkage) : NULL;
    if (demangled) {
        snprintf(name, len, "%s", demangled);
        free(demangled);
    } else if (dwarf_qualified_name(dwarf, env, name, len) == 0) {
        return false;
    }
    tasks_strip_async(name);
    return true;
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
    if (strncmp(name, "alloc::vec::Vec<", 16) == 0)
        return TYPE_VEC;
    static const char unordered[] = "futures_util::stream::futures_unordered::FuturesUnordered<";
    if (strncmp(name, unordered, sizeof(unordered) - 1) == 0)
        return TYPE_UNORDERED;
    return TYPE_OTHER;
}

/* where a Box (alloc::boxed::Box) keeps its pointer: a trait object's data and vtable, a slice's data and
   length (join_all's Box<[MaybeDone<F>]>), or a sized type's pointer and what it points to */
static void find_box(Dwarf_Die *box, struct type_facts *f)
{
    struct dwarf_member ptr, vtable, length;
    const char *failed;
    if (dwarf_member(box, "pointer", &ptr) && dwarf_member(box, "vtable", &vtable)) {
        f->box_dyn = true;
        f->pointer_offset = ptr.offset;
        f->vtable_offset = vtable.offset;
        return;
    }
    if (dwarf_member(box, "data_ptr", &ptr) && dwarf_member(box, "length", &length) &&
        dwarf_tag(&ptr.type) == DW_TAG_pointer_type && dwarf_type_of(&ptr.type, &f->set.element)) {
        f->set.pointer_offset = ptr.offset;
        f->set.length_offset = length.offset;
        f->set.element_size = dwarf_type_size(&f->set.element);
        f->set.ok = f->set.element_size > 0;
        return;
    }
    if ((dwarf_member_path(box, "__0.pointer.pointer", &ptr, &failed) ||
         dwarf_member_path(box, "__0.pointer", &ptr, &failed)) &&
        dwarf_tag(&ptr.type) == DW_TAG_pointer_type && dwarf_type_of(&ptr.type, &f->target)) {
        f->has_target = true;
        f->pointer_offset = ptr.offset;
    }
}

/* a Vec<T>: its buffer's pointer (type-erased in current Rust: the element type is the template parameter T) and
   its length */
static void find_vec(Dwarf_Die *vec, struct branch_set *set)
{
    struct dwarf_member buf, len;
    Dwarf_Die untyped;
    uint64_t at;
    if (!dwarf_template_param(vec, "T", &set->element) || !dwarf_member(vec, "buf", &buf) ||
        !dwarf_member(vec, "len", &len))
        return;
    dwarf_type_strip(&set->element);
    struct dwarf_member inner = buf, ptr;
    for (int i = 0; i < 4 && !dwarf_member(&inner.type, "ptr", &ptr); i++) {   /* RawVec { inner: RawVecInner } */
        struct dwarf_member next;
        if (!dwarf_member(&inner.type, "inner", &next))
            return;
        next.offset += inner.offset;
        inner = next;
    }
    if (!dwarf_member(&inner.type, "ptr", &ptr))
        return;
    at = inner.offset + ptr.offset;
    if (!type_pointer_inside(&ptr.type, &at, &untyped))
        return;
    set->pointer_offset = at;
    set->length_offset = len.offset;
    set->element_size = dwarf_type_size(&set->element);
    set->ok = set->element_size > 0;
}

/* a FuturesUnordered<Fut>: head_all, the list of its tasks (Task<Fut> { future: UnsafeCell<Option<Fut>>,
   next_all: AtomicPtr<Task<Fut>> }) */
static void find_unordered(Dwarf_Die *set_type, struct branch_set *set)
{
    struct dwarf_member head, future, next;
    Dwarf_Die task, next_target;
    uint64_t head_at = 0, next_at = 0;
    if (!dwarf_member(set_type, "head_all", &head) || !type_pointer_inside(&head.type, &head_at, &task))
        return;
    dwarf_type_strip(&task);
    if (!dwarf_member(&task, "future", &future) || !dwarf_member(&task, "next_all", &next) ||
        !type_pointer_inside(&next.type, &next_at, &next_target))
        return;
    set->pointer_offset = head.offset + head_at;
    set->element_offset = future.offset;
    set->element = future.type;
    set->next_offset = next.offset + next_at;
    set->element_size = dwarf_type_size(&task);
    set->ok = set->element_size > 0;
}

/* a closure of tokio's select!: `disabled` (the mask, or a &mut to it) beside the futures */
static void find_mask(Dwarf_Die *closure, struct type_facts *f)
{
    struct dwarf_member m;
    if (!dwarf_member(closure, "_ref__disabled", &m) && !dwarf_member(closure, "disabled", &m))
        return;
    Dwarf_Die value = m.type;
    f->mask_indirect = dwarf_tag(&m.type) == DW_TAG_pointer_type;
    if (f->mask_indirect && !dwarf_type_of(&m.type, &value))
        return;
    int64_t size = dwarf_type_size(&value);
    if (dwarf_tag(&value) != DW_TAG_base_type || size < 1 || size > 8)
        return;
    f->has_mask = true;
    f->mask_offset = m.offset;
    f->mask_size = (size_t)size;
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
    f.maybe_done = f.has_variants && f.name && strstr(f.name, "MaybeDone<");
    if (f.kind == TYPE_BOX)
        find_box(type, &f);
    else if (f.kind == TYPE_VEC)
        find_vec(type, &f.set);
    else if (f.kind == TYPE_UNORDERED)
        find_unordered(type, &f.set);
    else if (own && strncmp(own, "&mut [", 6) == 0)
        find_box(type, &f);                   /* a borrowed slice: data_ptr and length, as a boxed one */
    else if ((f.closure = own && strncmp(own, "{closure_env#", 13) == 0))
        find_mask(type, &f);
    if (f.async_env) {
        struct dwarf_member unresumed;
        const char *home;
        if (function_name(dc->l->dwarf, type, name, sizeof(name)))
            f.function = string_pool_intern(dc->pool, name);
        if (dwarf_variant_at(type, 0, &unresumed) && (home = dwarf_decl_path(&unresumed.die)))
            f.home = string_pool_intern(dc->pool, home);
    }
    return f;
}

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

/* The same without a copy (a type's facts are a few hundred bytes, met at every value decoded): valid until the
   cache grows, i.e. until the next type is met; callers read what they need before decoding further, and copy a
   DIE they pass on. */
static const struct type_facts *facts_ptr(struct decoder *dc, Dwarf_Die *type)
{
    uint32_t index = facts_index(dc, type);
    if (index != UINT32_MAX)
        return &dc->types->facts.v[index];
    dc->facts_scratch = find_facts(dc, type);
    return &dc->facts_scratch;
}

/* ---- reading ---------------------------------------------------------------------------------------------- */

static bool take_bytes(struct decoder *dc, uint64_t addr, void *buf, size_t len)
{
    if (len > dc->bytes_left)
        return false;
    dc->bytes_left -= len;
    return dc->read(dc->rctx, addr, buf, len);
}

/* ---- the program's line of an await written inside a macro ---------------------------------------------- */

struct awaitee_match {
    struct dwarf_types *dwarf;
    const char *want;          /* the awaitee's type, by qualified name */
    const char *macro_path;    /* the variant's position: the macro's source */
    const char *path;          /* the one other position found, NULL: none yet */
    uint32_t line;
    bool ambiguous;            /* two positions: which one is this await's cannot be told */
};

static void match_awaitee(void *ctx, Dwarf_Die *type, const char *path, uint32_t line)
{
    struct awaitee_match *m = ctx;
    char name[MAX_NAME];
    if (dwarf_qualified_name(m->dwarf, type, name, sizeof(name)) == 0 || strcmp(name, m->want) != 0 ||
        strcmp(path, m->macro_path) == 0)
        return;
    if (!m->path) {
        m->path = path;
        m->line = line;
    } else if (m->line != line || strcmp(m->path, path) != 0) {
        m->ambiguous = true;
    }
}

/* A Suspend variant at path:line (the DWARF's position) of the state machine env: when that is not the async fn's
   own file (home), the await is written inside a macro. Its program's line: the one `__awaitee` local of the same
   type declared elsewhere than the macro. Where none or two are found, the macro's position stays, said so. */
static void find_program_line(struct decoder *dc, Dwarf_Die *env, const char *home, const char *path,
                              struct variant_facts *out)
{
    const char *macro = symbolize_macro_of(path);
    if (!macro && (!home || strcmp(home, path) == 0))
        return;                                /* the program's own code */
    out->macro = macro ? macro : "macro";
    out->macro_line = true;
    char want[MAX_NAME];
    if (!out->has_awaitee || dwarf_qualified_name(dc->l->dwarf, &out->awaitee.type, want, sizeof(want)) == 0)
        return;
    struct awaitee_match m = { dc->l->dwarf, want, path, NULL, 0, false };
    dwarf_async_fn_awaitees(dc->l->dwarf, env, match_awaitee, &m);
    if (m.path && !m.ambiguous) {
        out->file = string_pool_intern(dc->pool, base_name(m.path));
        out->line = m.line;
        out->macro_line = false;
    }
}

/* What the variant selected by value says (found in the DWARF: once per type and value, kept by variant_at). */
static void find_variant(struct decoder *dc, Dwarf_Die *type, const struct type_facts *f, uint64_t value,
                         struct variant_facts *out)
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
    if (out->file)
        out->file = string_pool_intern(dc->pool, out->file);
    out->has_awaitee = dwarf_member(&out->variant.type, "__awaitee", &out->awaitee);
    out->has_field0 = dwarf_member(&out->variant.type, "__0", &out->field0);
    const char *member = dwarf_diename(&out->variant.die);
    out->done = f->maybe_done && member && (strcmp(member, "Done") == 0 || strcmp(member, "Gone") == 0);
    const char *path;
    if (f->async_env && out->name && strncmp(out->name, "Suspend", 7) == 0 &&
        (path = dwarf_decl_path(&out->variant.die)))
        find_program_line(dc, type, f->home, path, out);
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
    find_variant(dc, type, f, value, out);
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

/* ---- the tree --------------------------------------------------------------------------------------------- */

/* A new node under dc->parent; TASK_NO_NODE when the tree is full (or out of memory). */
static uint32_t add_node(struct decoder *dc)
{
    if (dc->nodes.n >= MAX_NODES) {
        dc->truncated = true;
        return TASK_NO_NODE;
    }
    struct task_node *n = vec_push(&dc->nodes);
    if (!n)
        return TASK_NO_NODE;
    n->parent = dc->parent;
    n->subtree = 1;
    if (dc->parent != TASK_NO_NODE)
        dc->nodes.v[dc->parent].n_children++;
    return (uint32_t)(dc->nodes.n - 1);
}

static enum found add_leaf(struct decoder *dc, const char *leaf, const char *detail)
{
    uint32_t at = add_node(dc);
    if (at == TASK_NO_NODE)
        return FOUND_NONE;
    dc->nodes.v[at].leaf = leaf;
    dc->nodes.v[at].detail = detail;
    return FOUND_FRAME;
}

static enum found decode(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth);

/* Decode a future on its own: what is found goes under dc->parent, and an I/O object met in it, when nothing
   else is, is its leaf (a node of its own). One branch of a set, an async fn's awaitee, the root. */
static enum found decode_scoped(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    const char *weak_leaf = dc->weak_leaf, *weak_detail = dc->weak_detail;
    dc->weak_leaf = dc->weak_detail = NULL;
    enum found r = decode(dc, type, addr, depth);
    if (r == FOUND_NONE && dc->weak_leaf)
        r = add_leaf(dc, dc->weak_leaf, dc->weak_detail);
    dc->weak_leaf = weak_leaf;
    dc->weak_detail = weak_detail;
    return r;
}

/* ---- pointers: which are followed ----------------------------------------------------------------------- */

/* decode what a followed pointer points to, once per (address, type) in a task: cycles through &mut references
   and futures reached by two pointers end here (a struct's members, at fixed offsets, cannot revisit one) */
static enum found decode_target(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    return first_visit(dc, addr, type) ? decode(dc, type, addr, depth) : FOUND_NONE;
}

/* The elements of a set of futures awaited at once (count of them, size bytes apart from first), each a branch. */
static enum found decode_elements(struct decoder *dc, Dwarf_Die *element, uint64_t first, uint64_t count,
                                  int64_t size, unsigned depth)
{
    enum found found = FOUND_NONE;
    if (count > MAX_SET) {
        count = MAX_SET;
        dc->truncated = true;
    }
    for (uint64_t i = 0; i < count && dc->bytes_left > 0; i++) {
        Dwarf_Die type = *element;
        uint64_t at = first + i * (uint64_t)size;
        if (first_visit(dc, at, &type) && decode_scoped(dc, &type, at, depth + 1) == FOUND_FRAME)
            found = FOUND_FRAME;
    }
    return found;
}

/* a slice (its data pointer and length at set's offsets in the value at addr) */
static enum found follow_slice(struct decoder *dc, const struct branch_set *set, uint64_t addr, unsigned depth)
{
    uint64_t data, length;
    if (!set->ok || !take_bytes(dc, addr + set->pointer_offset, &data, 8) ||
        !take_bytes(dc, addr + set->length_offset, &length, 8) || !data)
        return FOUND_NONE;
    Dwarf_Die element = set->element;
    return decode_elements(dc, &element, data, length, set->element_size, depth);
}

/* a FuturesUnordered: its tasks from head_all along next_all (futures-util's own end of the list is a null
   pointer; a task being linked in points to its queue's stub: the visited set and the bounds end such walks) */
static enum found follow_unordered(struct decoder *dc, const struct branch_set *facts_set, uint64_t addr,
                                   unsigned depth)
{
    const struct branch_set copy = *facts_set, *set = &copy;   /* (the facts may move while its tasks are decoded) */
    uint64_t task;
    enum found found = FOUND_NONE;
    if (!set->ok || !take_bytes(dc, addr + set->pointer_offset, &task, 8))
        return FOUND_NONE;
    for (size_t n = 0; task && dc->bytes_left > 0; n++) {
        Dwarf_Die type = set->element;
        if (n == MAX_SET || !first_visit(dc, task, &type)) {
            dc->truncated |= n == MAX_SET;
            break;
        }
        if (decode_scoped(dc, &type, task + set->element_offset, depth + 1) == FOUND_FRAME)
            found = FOUND_FRAME;
        if (!take_bytes(dc, task + set->next_offset, &task, 8))
            break;
    }
    return found;
}

/* a Box<T> (alloc::boxed::Box): owned, followed; a trait object's box by its vtable's concrete type; a boxed
   slice's elements as branches */
static enum found follow_box(struct decoder *dc, const struct type_facts *f, uint64_t addr, unsigned depth)
{
    uint64_t data, vt;
    Dwarf_Die target;
    if (f->set.ok)
        return follow_slice(dc, &f->set, addr, depth);
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

static bool owned_pointer(Dwarf_Die *ptr_type)
{
    /* rustc describes a Box of a sized type as a pointer type named after the Box */
    const char *n = dwarf_diename(ptr_type);
    return n && (strncmp(n, "&mut ", 5) == 0 || strncmp(n, "alloc::boxed::Box<", 18) == 0);
}

/* a pointer type met as a member: &mut T (select! and join! hold their futures so) and Box<T> (owned) are
   followed; shared references, raw pointers and Arc are not (runtime state, other tasks) */
static enum found follow_pointer(struct decoder *dc, Dwarf_Die *ptr_type, uint64_t addr, unsigned depth)
{
    Dwarf_Die target;
    uint64_t data;
    if (!owned_pointer(ptr_type) || !dwarf_type_of(ptr_type, &target) || !take_bytes(dc, addr, &data, 8) || !data)
        return FOUND_NONE;
    return decode_target(dc, &target, data, depth + 1);
}

/* ---- an async fn's state machine ----------------------------------------------------------------------- */

static enum found decode_async(struct decoder *dc, Dwarf_Die *env, uint64_t addr, unsigned depth)
{
    const struct type_facts *facts = facts_ptr(dc, env);
    struct variant_facts v;
    bool ok = variant_at(dc, env, facts, addr, &v);
    const char *fn = facts->function;
    /* a state machine's variant members are numbered; their types carry the names (Unresumed, Suspend0, ...) and
       the members the await's position */
    const char *vname = ok ? v.name : NULL;
    if (!fn || !vname || strcmp(vname, "Returned") == 0 || strcmp(vname, "Panicked") == 0)
        return FOUND_NONE;     /* done: nothing awaited there (a finished branch of a select! or a join!) */
    uint32_t at = add_node(dc);
    if (at == TASK_NO_NODE)
        return FOUND_NONE;
    struct task_node *n = &dc->nodes.v[at];
    n->frame.function = fn;
    if (strncmp(vname, "Suspend", 7) != 0) {
        /* Unresumed: spawned (or made a branch), never polled yet */
        n->leaf = string_pool_intern(dc->pool, "(not polled yet)");
        return FOUND_FRAME;
    }
    n->frame.file = v.file;
    n->frame.line = v.line;
    n->frame.macro = v.macro;
    n->frame.macro_line = v.macro_line;
    if (v.has_awaitee) {
        uint32_t parent = dc->parent;
        dc->parent = at;
        dc->macro_closure = v.macro != NULL;
        decode_scoped(dc, &v.awaitee.type, addr + v.variant.offset + v.awaitee.offset, depth + 1);
        dc->macro_closure = false;
        dc->parent = parent;
    }
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
    Dwarf_Die target;
    if (f->async_env || f->kind == TYPE_LEAF)
        return true;
    if (f->kind == TYPE_TRACE_ROOT)
        return members_may_lead(dc, type, depth);
    if (f->kind == TYPE_SHARED)
        return false;
    if (f->set.ok) {                       /* a slice, a Vec, a FuturesUnordered: what their elements may */
        target = f->set.element;
        return may_lead(dc, &target, depth + 1);
    }
    if (f->kind == TYPE_BOX) {
        target = f->target;  /* (a trait object: what it holds is known from its vtable only) */
        return f->box_dyn || (f->has_target && may_lead(dc, &target, depth + 1));
    }
    if (f->kind == TYPE_VEC || f->kind == TYPE_UNORDERED)
        return false;                      /* (their layout not found) */
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
        maybe = owned_pointer(type) && dwarf_type_of(type, &target) && may_lead(dc, &target, depth + 1);
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
        c->facts.v[index].members_known = true;
        c->facts.v[index].members_at = (uint32_t)first;
        c->facts.v[index].n_members = (uint32_t)(c->members.n - first);
    }
    *at = c->facts.v[index].members_at;
    *n = c->facts.v[index].n_members;
    return true;
}

/* select!'s mask: read when its closure is met, taken by the tuple of futures read next */
static void arm_mask(struct decoder *dc, const struct type_facts *f, uint64_t addr)
{
    uint64_t at = addr + f->mask_offset, mask = 0;
    if ((f->mask_indirect && !take_bytes(dc, at, &at, 8)) || !take_bytes(dc, at, &mask, f->mask_size))
        return;
    dc->mask = mask;
    dc->mask_armed = true;
}

/* A struct's members are searched whole, the first that leads to a frame (or a strong leaf) taken: a suspended
   async fn anywhere in it beats a socket met first (a connection holds its socket before its request's handler).
   A tuple's elements are select!'s or join!'s branches: every one where something is found is a branch of the
   tree (but those select!'s mask disables). */
static enum found decode_members(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    const struct type_facts *facts = facts_ptr(dc, type);   /* (read before decoding further) */
    uint32_t at, n;
    if (!members_of(dc, type, &at, &n))      /* (lists them in the cache: the facts stay where they are) */
        return FOUND_NONE;
    bool branches = facts->branches;
    if (dc->macro_closure && facts->closure) {
        branches = true;                   /* the closure a select! or join! polls: each capture a branch */
        dc->macro_closure = false;
    }
    uint64_t mask = 0;
    if (facts->branches && dc->mask_armed) {
        mask = dc->mask;
        dc->mask_armed = false;
    } else if (facts->has_mask) {
        arm_mask(dc, facts, addr);
    }
    enum found found = FOUND_NONE;
    for (uint32_t i = at; i < at + n; i++) {
        struct member_facts m = dc->types->members.v[i];   /* (a copy: the list grows while decoding) */
        if (m.lead == LEAD_UNKNOWN)
            dc->types->members.v[i].lead = m.lead = may_lead(dc, &m.type, 0) ? LEAD_MAYBE : LEAD_NONE;
        if (m.marker || m.lead == LEAD_NONE)
            continue;
        if (branches) {
            if (i - at < 64 && (mask >> (i - at)) & 1)
                continue;                  /* disabled by select!: finished, or its precondition false */
            if (decode_scoped(dc, &m.type, addr + m.offset, depth + 1) == FOUND_FRAME)
                found = FOUND_FRAME;
        } else if (decode(dc, &m.type, addr + m.offset, depth + 1) == FOUND_FRAME) {
            found = FOUND_FRAME;
            break;
        }
    }
    dc->mask_armed = false;
    return found;
}

static enum found decode_enum(struct decoder *dc, Dwarf_Die *type, const struct type_facts *facts, uint64_t addr,
                              unsigned depth)
{
    struct variant_facts v;
    if (!variant_at(dc, type, facts, addr, &v) || v.done)
        return FOUND_NONE;
    return decode_members(dc, &v.variant.type, addr + v.variant.offset, depth);
}

static enum found decode(struct decoder *dc, Dwarf_Die *type, uint64_t addr, unsigned depth)
{
    if (depth > dc->max_depth || dc->bytes_left == 0 || addr == 0) {
        dc->truncated |= depth > dc->max_depth || dc->bytes_left == 0;
        return FOUND_NONE;
    }
    /* (read before decoding further: a type met below may grow the cache the facts are in) */
    const struct type_facts *facts = facts_ptr(dc, type);
    if (facts->tag == DW_TAG_pointer_type)
        return follow_pointer(dc, type, addr, depth);
    if (facts->tag == DW_TAG_union_type) {
        Dwarf_Die target = facts->target;
        return facts->has_target ? decode(dc, &target, addr + facts->pointer_offset, depth + 1) : FOUND_NONE;
    }
    if (facts->tag != DW_TAG_structure_type)
        return FOUND_NONE;
    if (facts->async_env)
        return decode_async(dc, type, addr, depth);
    const char *name = facts->name;
    if (facts->kind == TYPE_LEAF) {
        const char *detail =
            dc->no_details ? NULL : future_leaf_detail(dc->l, dc->details, dc->read, dc->rctx, &facts->leaf, addr);
        enum leaf_strength s = facts->leaf.strength;
        if (s == LEAF_STRONG)
            return add_leaf(dc, name, detail);
        if (s == LEAF_WEAK) {
            if (!dc->weak_leaf) {
                dc->weak_leaf = name;
                dc->weak_detail = detail;
            }
            return FOUND_NONE;
        }
    }
    if (facts->kind == TYPE_TRACE_ROOT)
        return decode_members(dc, type, addr, depth);
    if (facts->kind == TYPE_SHARED)
        return FOUND_NONE;         /* shared or runtime state: never another task's future */
    if (facts->kind == TYPE_BOX)
        return follow_box(dc, facts, addr, depth);
    if (facts->kind == TYPE_VEC || (facts->set.ok && facts->kind == TYPE_OTHER))
        return follow_slice(dc, &facts->set, addr, depth);
    if (facts->kind == TYPE_UNORDERED)
        return follow_unordered(dc, &facts->set, addr, depth);
    if (facts->has_variants)
        return decode_enum(dc, type, facts, addr, depth);
    return decode_members(dc, type, addr, depth);
}

/* ---- per vtable ------------------------------------------------------------------------------------------ */

/* T of raw::poll<T, S> at link-time address poll (its entry, or an address in it), and S */
static bool poll_params(struct dwarf_types *dwarf, uint64_t poll, Dwarf_Die params[2])
{
    Dwarf_Die fn;
    return (dwarf_function_at(dwarf, poll, &fn) || dwarf_function_containing(dwarf, poll, &fn)) &&
           dwarf_template_param(&fn, "T", &params[0]) && dwarf_template_param(&fn, "S", &params[1]);
}

/* the root's name from T (what Root wraps, under tokio's taskdump) */
static bool root_name(struct dwarf_types *dwarf, Dwarf_Die *future, char *name, size_t len)
{
    if (dwarf_qualified_name(dwarf, future, name, len) == 0)
        return false;
    if (is_async_env(future)) {
        char linkage[MAX_NAME];
        char *demangled = dwarf_async_fn_linkage(dwarf, future, linkage, sizeof(linkage))
                              ? symbolize_demangle(linkage)
                              : NULL;
        if (demangled) {
            snprintf(name, len, "%s", demangled);
            free(demangled);
        }
        tasks_strip_async(name);
    }
    return true;
}

/* T, or what tokio's taskdump Root<T> wraps */
static void unwrap_trace_root(struct dwarf_types *dwarf, Dwarf_Die *future)
{
    struct dwarf_member wrapped;
    char outer[MAX_NAME];
    if (dwarf_qualified_name(dwarf, future, outer, sizeof(outer)) > 0 &&
        strncmp(outer, TRACE_ROOT, strlen(TRACE_ROOT)) == 0 && dwarf_member(future, "future", &wrapped))
        *future = wrapped.type;
}

bool task_root_name(struct dwarf_types *dwarf, uint64_t poll, char *buf, size_t len)
{
    Dwarf_Die params[2];
    if (!poll_params(dwarf, poll, params))
        return false;
    unwrap_trace_root(dwarf, &params[0]);
    return root_name(dwarf, &params[0], buf, len);
}

bool task_plan_find(const struct tokio_layout *l, struct string_pool *pool, uint64_t poll, struct task_plan *out)
{
    memset(out, 0, sizeof(*out));
    Dwarf_Die params[2], cell;
    static const char *const names[] = { "T", "S" };
    struct dwarf_member stage;
    const char *failed;
    if (!poll_params(l->dwarf, poll - l->bias, params) ||
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
    unwrap_trace_root(l->dwarf, &params[0]);   /* the root is what Root wraps; decoding goes through Root itself */
    out->future = params[0];
    out->stage = stage.type;
    out->stage_offset = stage.offset;
    /* a future tokio boxed on spawn (Pin<Box<F>>, over its size threshold): named, sized and placed by F */
    Dwarf_Die named = params[0], boxed;
    char name[MAX_NAME];
    uint64_t offset = 0;
    int64_t size = dwarf_type_size(&params[0]);
    out->future_size = size > 0 ? (uint64_t)size : 0;
    if (dwarf_qualified_name(l->dwarf, &params[0], name, sizeof(name)) > 0 &&
        strncmp(name, "core::pin::Pin<alloc::boxed::Box<", strlen("core::pin::Pin<alloc::boxed::Box<")) == 0 &&
        type_pointer_inside(&params[0], &offset, &boxed) && (size = dwarf_type_size(&boxed)) > 0) {
        out->boxed_size = (uint64_t)size;
        named = boxed;
    }
    const char *file;
    if (dwarf_decl_position(&named, &file, &out->line))
        out->file = string_pool_intern(pool, file);
    if (!root_name(l->dwarf, &named, name, sizeof(name)))
        snprintf(name, sizeof(name), "[unknown future]");
    out->root = string_pool_intern(pool, name);
    out->ok = out->root != NULL;
    return out->ok;
}

/* ---- per task -------------------------------------------------------------------------------------------- */

/* The tree as the caller gets it, in one allocation (nodes, then the first path's frames): the gathering root
   dropped when it holds one node; a leaf that is a frame's only child (a chain's end) kept on that frame; subtree
   sizes; the first pending path (the first child at each node) and its leaf. */
static bool finish_tree(struct decoder *dc, struct decoded_future *out)
{
    const struct node_vec *t = &dc->nodes;
    if (t->n == 0 || t->v[0].n_children == 0)
        return false;
    size_t first = t->v[0].n_children == 1 ? 1 : 0;
    size_t cap = t->n;
    char *block = malloc(cap * (sizeof(struct task_node) + sizeof(struct task_frame)));
    if (!block || vec_reserve(&dc->map, t->n) != 0) {
        free(block);
        return false;
    }
    uint32_t *map = dc->map.v;
    struct task_node *o = (struct task_node *)block;
    size_t kept = 0;
    for (size_t i = first; i < t->n; i++) {
        const struct task_node *n = &t->v[i];
        uint32_t p = n->parent;
        bool in_tree = p != TASK_NO_NODE && p >= first;
        if (in_tree && t->v[p].n_children == 1 && t->v[p].frame.function && !t->v[p].leaf && !n->frame.function &&
            n->n_children == 0) {
            o[map[p]].leaf = n->leaf;
            o[map[p]].detail = n->detail;
            o[map[p]].n_children = 0;
            map[i] = TASK_NO_NODE;
            continue;
        }
        map[i] = (uint32_t)kept;
        o[kept] = *n;
        o[kept].parent = in_tree ? map[p] : TASK_NO_NODE;
        o[kept].subtree = 1;
        kept++;
    }
    for (size_t i = kept; i-- > 1;)
        if (o[i].parent != TASK_NO_NODE)
            o[o[i].parent].subtree += o[i].subtree;
    out->nodes = o;
    out->n_nodes = kept;
    out->frames = (struct task_frame *)(block + cap * sizeof(struct task_node));
    for (size_t i = 0; i < kept; i++) {      /* (a node's first child is the node after it) */
        if (o[i].frame.function)
            out->frames[out->n_frames++] = o[i].frame;
        if (o[i].n_children == 0) {
            out->leaf = o[i].leaf;
            out->detail = o[i].detail;
            break;
        }
    }
    out->truncated = dc->truncated;
    return true;
}

bool future_decode(const struct tokio_layout *l, struct string_pool *pool, struct type_cache *types,
                   const struct decode_limits *limits,
                   elf_memory_reader read, void *rctx, uint64_t header, const struct task_plan *plan,
                   struct decoded_future *out)
{
    memset(out, 0, sizeof(*out));
    /* (not zeroed whole: the visited set's slots are stamped with a generation per task, and zeroing 32 KB per
       task was a tenth of a dump's CPU) */
    struct decoder *dc = types->spare ? types->spare : calloc(1, sizeof(*dc));
    if (!dc)
        return false;
    types->spare = NULL;
    struct node_vec nodes = dc->nodes;
    VEC_OF(uint32_t) map = { dc->map.v, dc->map.n, dc->map.cap };
    memset(dc, 0, offsetof(struct decoder, visited_key));
    dc->nodes = nodes;
    dc->map.v = map.v;
    dc->map.n = map.n;
    dc->map.cap = map.cap;
    dc->nodes.n = 0;
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
    dc->details = limits->details ? limits->details : pool;
    dc->parent = TASK_NO_NODE;
    /* the stage: Running(T) holds the future; Finished and Consumed hold none */
    Dwarf_Die stage = plan->stage;
    struct type_facts facts = facts_of(dc, &stage);
    struct variant_facts v;
    const char *vname;
    bool running = variant_at(dc, &stage, &facts, header + plan->stage_offset, &v) &&
                   (vname = dwarf_diename(&v.variant.die)) && strcmp(vname, "Running") == 0 && v.has_field0;
    if (running && add_node(dc) == 0) {      /* the gathering root */
        dc->parent = 0;
        decode_scoped(dc, &v.field0.type, header + plan->stage_offset + v.variant.offset + v.field0.offset, 0);
        finish_tree(dc, out);
    }
    types->spare = dc;
    return running;
}
