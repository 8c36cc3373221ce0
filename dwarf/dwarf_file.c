/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_file.c: an object's DWARF as a whole (dwarf_types.h): opening it, and the lookups that search every
 * compilation unit: variables by linkage name, the function at an address, vtables by address (an index built
 * on first use), types by qualified name and generic instances by their parameters, qualified names, inline
 * chains. */
#include "dwarf/dwarf_types.h"

#include <dwarf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/u64_map.h"
#include "base/vec.h"
#include "dwarf/dwarf_internal.h"

#define MAX_DEPTH 24

struct off_vec {
    Dwarf_Off *v;
    size_t n, cap;
};

struct name_vec {
    char **v;
    size_t n, cap;
};

struct dwarf_types {
    int fd;
    Dwarf *dw;
    struct u64_map name_by_die;      /* DIE offset -> index in names: qualified names, built once each */
    struct name_vec names;
    struct u64_map linkage_by_env;   /* async state machine DIE offset -> index in linkages */
    struct name_vec linkages;
    int has_types;             /* -1 not checked yet */
    bool vtables_indexed;
    struct u64_map vtable_by_addr;   /* link-time address -> index in vtable_types */
    struct off_vec vtable_types;     /* DIE offsets of the concrete types */
    struct dwarf_scope_index scopes; /* the DIEs that contain a DIE, per unit walked once */
};

int dwarf_types_open(struct dwarf_types **out, const char *path)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    if (!dw) {
        close(fd);
        return 1;
    }
    struct dwarf_types *d = calloc(1, sizeof(*d));
    if (!d) {
        dwarf_end(dw);
        close(fd);
        return -1;
    }
    d->fd = fd;
    d->dw = dw;
    d->has_types = -1;
    if (u64_map_init(&d->name_by_die, 256) != 0 || u64_map_init(&d->linkage_by_env, 64) != 0) {
        dwarf_types_close(d);
        return -1;
    }
    *out = d;
    return 0;
}

void dwarf_types_close(struct dwarf_types *d)
{
    if (!d)
        return;
    u64_map_free(&d->vtable_by_addr);
    vec_free(&d->vtable_types);
    for (size_t i = 0; i < d->names.n; i++)
        free(d->names.v[i]);
    vec_free(&d->names);
    u64_map_free(&d->name_by_die);
    for (size_t i = 0; i < d->linkages.n; i++)
        free(d->linkages.v[i]);
    vec_free(&d->linkages);
    u64_map_free(&d->linkage_by_env);
    dwarf_scope_index_free(&d->scopes);
    dwarf_end(d->dw);
    close(d->fd);
    free(d);
}

/* die's next sibling, a subtree skipped through the scope index: 0 when there is one (die set to it) */
static int next_sibling(struct dwarf_types *d, Dwarf_Die *die)
{
    return dwarf_scopes_next_sibling(&d->scopes, die, die);
}

/* Calls visit(ctx, die, depth) for every DIE below each CU's top level that is a namespace, a type or a
 * variable, descending into namespaces and types (not into function bodies). Stops when visit returns
 * true; returns whether it did. */
typedef bool (*visit_fn)(void *ctx, Dwarf_Die *die);

static bool walk_scope(struct dwarf_types *d, Dwarf_Die *scope, int depth, visit_fn visit, void *ctx)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(scope, &child) != 0)
        return false;
    do {
        if (visit(ctx, &child))
            return true;
        int tag = dwarf_tag(&child);
        if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
             tag == DW_TAG_enumeration_type) && walk_scope(d, &child, depth + 1, visit, ctx))
            return true;
    } while (next_sibling(d, &child) == 0);
    return false;
}

/* Whether unit is one of crate's codegen units: rustc names them "SOURCE/@/CRATE.HASH-cgu.N". crate NULL: any. */
static bool unit_of_crate(Dwarf_Die *unit, const char *crate, size_t crate_len)
{
    if (!crate)
        return true;
    const char *name = dwarf_diename(unit);
    const char *at = name ? strstr(name, "/@/") : NULL;
    return at && strncmp(at + 3, crate, crate_len) == 0 && at[3 + crate_len] == '.';
}

/* fn(ctx, unit) for every unit until it returns true: near's unit first (near given), then crate's units (crate
   given), then the others. A lookup that knows where its answer likely is skips most of a Rust binary's units. */
typedef bool (*unit_fn)(void *ctx, Dwarf_Die *unit);

static bool each_unit(struct dwarf_types *d, Dwarf_Die *near, const char *crate, size_t crate_len, unit_fn fn,
                      void *ctx)
{
    Dwarf_Off near_unit = (Dwarf_Off)-1;
    Dwarf_Die unit;
    if (near && dwarf_diecu(near, &unit, NULL, NULL)) {
        near_unit = dwarf_dieoffset(&unit);
        if (fn(ctx, &unit))
            return true;
    }
    for (int pass = crate ? 0 : 1; pass < 2; pass++) {
        Dwarf_Off off = 0, next;
        size_t header;
        while (dwarf_nextcu(d->dw, off, &next, &header, NULL, NULL, NULL) == 0) {
            if (dwarf_offdie(d->dw, off + header, &unit) && dwarf_dieoffset(&unit) != near_unit) {
                bool of_crate = crate && unit_of_crate(&unit, crate, crate_len);
                if ((pass == 0) == of_crate && fn(ctx, &unit))
                    return true;
            }
            off = next;
        }
    }
    return false;
}

struct scope_walk {
    struct dwarf_types *d;
    visit_fn visit;
    void *ctx;
};

static bool walk_unit(void *ctx, Dwarf_Die *unit)
{
    struct scope_walk *w = ctx;
    return walk_scope(w->d, unit, 0, w->visit, w->ctx);
}

static bool walk_units(struct dwarf_types *d, const char *crate, size_t crate_len, visit_fn visit, void *ctx)
{
    struct scope_walk w = { d, visit, ctx };
    return each_unit(d, NULL, crate, crate_len, walk_unit, &w);
}

/* Every unit walked once for one answer: the units this walk indexed are forgotten after it. */
static bool walk_all(struct dwarf_types *d, visit_fn visit, void *ctx)
{
    uint64_t mark = dwarf_scope_index_mark(&d->scopes);
    bool stopped = walk_units(d, NULL, 0, visit, ctx);
    dwarf_scope_index_forget_since(&d->scopes, mark);
    return stopped;
}

static bool is_struct_with_members(void *ctx, Dwarf_Die *die)
{
    (void)ctx;
    Dwarf_Die child;
    if (dwarf_tag(die) != DW_TAG_structure_type || dwarf_child(die, &child) != 0)
        return false;
    do
        if (dwarf_tag(&child) == DW_TAG_member && dwarf_hasattr(&child, DW_AT_data_member_location))
            return true;
    while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool dwarf_types_has_types(struct dwarf_types *d)
{
    if (d->has_types < 0)
        d->has_types = walk_all(d, is_struct_with_members, NULL);
    return d->has_types == 1;
}

struct linkage_search {
    const char *symbol;
    Dwarf_Die *type;
};

static bool match_linkage(void *ctx, Dwarf_Die *die)
{
    struct linkage_search *s = ctx;
    if (dwarf_tag(die) != DW_TAG_variable)
        return false;
    Dwarf_Attribute attr;
    const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    return linkage && strcmp(linkage, s->symbol) == 0 && dwarf_type_of(die, s->type);
}

/* The crate a Rust symbol (legacy mangling, _ZN<length><crate>...) belongs to, NULL for others. */
static const char *crate_of(const char *symbol, size_t *len)
{
    if (strncmp(symbol, "_ZN", 3) != 0)
        return NULL;
    char *end;
    unsigned long n = strtoul(symbol + 3, &end, 10);
    if (end == symbol + 3 || n == 0 || n > 256 || strnlen(end, n) < n)
        return NULL;
    *len = n;
    return end;
}

bool dwarf_variable_by_linkage(struct dwarf_types *d, const char *symbol, const uint64_t *near, size_t n_near,
                               Dwarf_Die *type)
{
    struct linkage_search s = { symbol, type };
    Dwarf_Die unit;
    for (size_t i = 0; i < n_near; i++)      /* the units holding the given functions' code (.debug_aranges) */
        if (dwarf_addrdie(d->dw, near[i], &unit) && walk_scope(d, &unit, 0, match_linkage, &s))
            return true;
    size_t crate_len = 0;
    const char *crate = crate_of(symbol, &crate_len);
    return walk_units(d, crate, crate_len, match_linkage, &s);
}

/* the name a DIE is known by: its own, or its specification's / abstract origin's */
static const char *die_name(Dwarf_Die *die, Dwarf_Die *named)
{
    *named = *die;
    for (int i = 0; i < 4; i++) {
        const char *n = dwarf_diename(named);
        if (n)
            return n;
        Dwarf_Attribute attr;
        if (!(dwarf_attr(named, DW_AT_specification, &attr) || dwarf_attr(named, DW_AT_abstract_origin, &attr)) ||
            !dwarf_formref_die(&attr, named))
            return NULL;
    }
    return NULL;
}

/* The DIEs that contain die, innermost first, its unit last, from the scope index (libdw's own search when the
   index cannot answer: it walks the unit from its start each time). Returns how many, -1 when none are known;
   *scopes is to be freed. */
static int containing_scopes(struct dwarf_types *d, Dwarf_Die *die, Dwarf_Die **scopes)
{
    *scopes = malloc(MAX_DEPTH * 2 * sizeof(**scopes));
    int n = *scopes ? dwarf_scopes_containing(&d->scopes, die, *scopes, MAX_DEPTH * 2) : -1;
    if (n >= 0)
        return n;
    free(*scopes);
    *scopes = NULL;
    Dwarf_Die *with_die = NULL;
    n = dwarf_getscopes_die(die, &with_die);   /* [0] is die itself */
    if (n < 1) {
        free(with_die);
        return -1;
    }
    memmove(with_die, with_die + 1, (size_t)(n - 1) * sizeof(*with_die));
    *scopes = with_die;
    return n - 1;
}

/* the qualified name, built from the scopes that contain the DIE (cached by the caller) */
static size_t build_qualified_name(struct dwarf_types *d, Dwarf_Die *die, char *buf, size_t len)
{
    Dwarf_Die named;
    const char *own = die_name(die, &named);
    if (!own || len == 0)
        return 0;
    Dwarf_Die *scopes = NULL;
    int n = containing_scopes(d, &named, &scopes);
    size_t at = 0;
    buf[0] = '\0';
    /* scopes[0] contains the DIE, the last is its compilation unit */
    for (int i = n - 2; i >= 0; i--) {
        int tag = dwarf_tag(&scopes[i]);
        const char *s = dwarf_diename(&scopes[i]);
        if (!s || (tag != DW_TAG_namespace && tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
                   tag != DW_TAG_enumeration_type && tag != DW_TAG_subprogram))
            continue;
        size_t sl = strlen(s);
        if (at + sl + 2 >= len)
            break;
        memcpy(buf + at, s, sl);
        memcpy(buf + at + sl, "::", 2);
        at += sl + 2;
    }
    free(scopes);
    size_t ol = strlen(own);
    if (at + ol >= len)
        ol = len - at - 1;
    memcpy(buf + at, own, ol);
    at += ol;
    buf[at] = '\0';
    return at;
}

size_t dwarf_qualified_name(struct dwarf_types *d, Dwarf_Die *die, char *buf, size_t len)
{
    uint32_t index;
    int rc = u64_map_index(&d->name_by_die, dwarf_dieoffset(die), &d->names, &index);
    if (rc == 1) {
        char name[4096];
        size_t n = build_qualified_name(d, die, name, sizeof(name));
        d->names.v[index] = n ? strdup(name) : NULL;
    } else if (rc < 0) {
        return build_qualified_name(d, die, buf, len);
    }
    const char *name = d->names.v[index];
    if (!name || len == 0)
        return 0;
    snprintf(buf, len, "%s", name);
    return strlen(buf);
}

static bool entry_is(Dwarf_Die *die, uint64_t addr)
{
    Dwarf_Addr low;
    return dwarf_lowpc(die, &low) == 0 && low == addr;
}

/* the concrete subprogram (one with code) containing pc below scope, through namespaces and types (rustc
   nests functions in them; libdw's scope walk does not enter them); entry: only one starting at pc */
static bool subprogram_at(struct dwarf_types *d, Dwarf_Die *scope, uint64_t pc, bool entry, int depth,
                          Dwarf_Die *out)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(scope, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            if (entry ? entry_is(&child, pc) : dwarf_haspc(&child, pc) == 1) {
                *out = child;
                return true;
            }
        } else if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
                    tag == DW_TAG_enumeration_type) &&
                   subprogram_at(d, &child, pc, entry, depth + 1, out)) {
            return true;
        }
    } while (next_sibling(d, &child) == 0);
    return false;
}

bool dwarf_function_at(struct dwarf_types *d, uint64_t addr, Dwarf_Die *out)
{
    Dwarf_Die cu;
    return dwarf_addrdie(d->dw, addr, &cu) && subprogram_at(d, &cu, addr, true, 0, out);
}

bool dwarf_function_containing(struct dwarf_types *d, uint64_t addr, Dwarf_Die *out)
{
    Dwarf_Die cu;
    return dwarf_addrdie(d->dw, addr, &cu) && subprogram_at(d, &cu, addr, false, 0, out);
}

/* ---- vtables ------------------------------------------------------------------------------------------- */

static bool index_vtable(void *ctx, Dwarf_Die *die)
{
    struct dwarf_types *d = ctx;
    const char *name;
    if (dwarf_tag(die) != DW_TAG_variable || !(name = dwarf_diename(die)))
        return false;
    size_t n = strlen(name);
    if (n < 10 || strcmp(name + n - 10, "::{vtable}") != 0)
        return false;
    Dwarf_Attribute attr;
    Dwarf_Op *expr;
    size_t len;
    Dwarf_Die vtype, concrete;
    if (!dwarf_attr(die, DW_AT_location, &attr) || dwarf_getlocation(&attr, &expr, &len) != 0 || len != 1 ||
        expr[0].atom != DW_OP_addr || !dwarf_type_of(die, &vtype) ||
        !dwarf_attr_integrate(&vtype, DW_AT_containing_type, &attr) || !dwarf_formref_die(&attr, &concrete))
        return false;
    uint32_t index;
    int rc = u64_map_index(&d->vtable_by_addr, expr[0].number, &d->vtable_types, &index);
    if (rc == 1)
        d->vtable_types.v[index] = dwarf_dieoffset(&concrete);
    return false;
}

bool dwarf_vtable_type(struct dwarf_types *d, uint64_t addr, Dwarf_Die *out)
{
    if (!d->vtables_indexed) {
        d->vtables_indexed = true;
        if (u64_map_init(&d->vtable_by_addr, 256) != 0)
            return false;
        walk_all(d, index_vtable, d);
    }
    uint32_t index;
    if (!u64_map_get(&d->vtable_by_addr, addr, &index))
        return false;
    if (!dwarf_offdie(d->dw, d->vtable_types.v[index], out))
        return false;
    dwarf_type_strip(out);
    return true;
}

/* ---- types by name -------------------------------------------------------------------------------------- */

/* The scope components of a qualified name: "a::b::C<x::y>" -> a, b, C<x::y> (no split inside <...>). */
static size_t split_path(const char *q, const char *parts[], size_t lens[], size_t max)
{
    size_t n = 0;
    int angle = 0;
    const char *start = q;
    for (const char *p = q;; p++) {
        if (*p == '<')
            angle++;
        else if (*p == '>')
            angle--;
        if (*p == '\0' || (angle == 0 && p[0] == ':' && p[1] == ':')) {
            if (n == max)
                return 0;
            parts[n] = start;
            lens[n++] = (size_t)(p - start);
            if (*p == '\0')
                return n;
            start = p + 2;
            p++;
        }
    }
}

static bool name_is(Dwarf_Die *die, const char *s, size_t len)
{
    const char *n = dwarf_diename(die);
    return n && strlen(n) == len && memcmp(n, s, len) == 0;
}

/* below scope, the DIE that the remaining path components name (the last a structure type for which
   accept(ctx, die) holds) */
static bool find_in(struct dwarf_types *d, Dwarf_Die *scope, const char *parts[], size_t lens[], size_t n,
                    bool (*accept)(void *ctx, Dwarf_Die *die), void *ctx, Dwarf_Die *out)
{
    Dwarf_Die child;
    if (dwarf_child(scope, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (n == 1) {
            if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type) &&
                !dwarf_hasattr(&child, DW_AT_declaration) && accept(ctx, &child) &&
                (lens[0] == 0 || name_is(&child, parts[0], lens[0]))) {
                *out = child;
                return true;
            }
        } else if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type) && name_is(&child, parts[0], lens[0]) &&
                   find_in(d, &child, parts + 1, lens + 1, n - 1, accept, ctx, out)) {
            return true;
        }
    } while (next_sibling(d, &child) == 0);
    return false;
}

struct type_search {
    struct dwarf_types *d;
    const char **parts;
    size_t *lens, n;
    bool (*accept)(void *ctx, Dwarf_Die *die);
    void *ctx;
    Dwarf_Die *out;
};

static bool find_in_unit(void *ctx, Dwarf_Die *unit)
{
    struct type_search *s = ctx;
    return find_in(s->d, unit, s->parts, s->lens, s->n, s->accept, s->ctx, s->out);
}

/* The type qualified names (near's unit searched first, near given; then in the file's order: a type is
   described again in every unit that uses it, and the program's own units, which use the most, come first). */
static bool find_type(struct dwarf_types *d, const char *qualified, bool (*accept)(void *ctx, Dwarf_Die *die),
                      void *ctx, bool prefix_last, Dwarf_Die *near, Dwarf_Die *out)
{
    const char *parts[MAX_DEPTH];
    size_t lens[MAX_DEPTH];
    size_t n = split_path(qualified, parts, lens, MAX_DEPTH);
    if (n == 0)
        return false;
    if (prefix_last)
        lens[n - 1] = 0;       /* any name: accept() decides */
    struct type_search s = { d, parts, lens, n, accept, ctx, out };
    return each_unit(d, near, NULL, 0, find_in_unit, &s);
}

static bool accept_any(void *ctx, Dwarf_Die *die)
{
    (void)ctx;
    (void)die;
    return true;
}

bool dwarf_type_by_name(struct dwarf_types *d, const char *qualified, Dwarf_Die *out)
{
    return find_type(d, qualified, accept_any, NULL, false, NULL, out);
}

struct generic_search {
    struct dwarf_types *d;
    const char *base;          /* "Cell" */
    size_t base_len;
    Dwarf_Die *params;
    const char *const *param_names;
    size_t n;
};

static bool same_type(struct dwarf_types *d, Dwarf_Die *a, Dwarf_Die *b)
{
    if (dwarf_dieoffset(a) == dwarf_dieoffset(b))
        return true;
    char qa[1024], qb[1024];
    return dwarf_qualified_name(d, a, qa, sizeof(qa)) > 0 && dwarf_qualified_name(d, b, qb, sizeof(qb)) > 0 &&
           strcmp(qa, qb) == 0;
}

static bool accept_instance(void *ctx, Dwarf_Die *die)
{
    struct generic_search *s = ctx;
    const char *n = dwarf_diename(die);
    if (!n || strncmp(n, s->base, s->base_len) != 0 || n[s->base_len] != '<')
        return false;
    for (size_t i = 0; i < s->n; i++) {
        Dwarf_Die p;
        if (!dwarf_template_param(die, s->param_names[i], &p) || !same_type(s->d, &p, &s->params[i]))
            return false;
    }
    return true;
}

bool dwarf_generic_type(struct dwarf_types *d, const char *qualified, const char *const *param_names,
                        Dwarf_Die *params, size_t n, Dwarf_Die *out)
{
    const char *last = qualified;
    for (const char *p = qualified; (p = strstr(p, "::")); p += 2)
        last = p + 2;
    struct generic_search s = { d, last, strlen(last), params, param_names, n };
    return find_type(d, qualified, accept_instance, &s, true, n > 0 ? &params[0] : NULL, out);
}

static bool find_async_fn_linkage(struct dwarf_types *d, Dwarf_Die *env, char *buf, size_t len)
{
    const char *name = dwarf_diename(env);
    const char *kind = name && strncmp(name, "{async_fn_env#", 14) == 0      ? "{async_fn#"
                       : name && strncmp(name, "{async_block_env#", 17) == 0 ? "{async_block#"
                                                                               : NULL;
    if (!kind)
        return false;
    const char *number = strchr(name, '#') + 1;
    size_t digits = strspn(number, "0123456789");
    Dwarf_Die *scopes = NULL;
    int n = containing_scopes(d, env, &scopes);
    bool found = false;
    Dwarf_Die child;
    if (n >= 1 && dwarf_child(&scopes[0], &child) == 0) {
        do {
            const char *cn = dwarf_diename(&child);
            Dwarf_Attribute attr;
            const char *linkage;
            if (dwarf_tag(&child) != DW_TAG_subprogram || !cn || strncmp(cn, kind, strlen(kind)) != 0 ||
                strncmp(cn + strlen(kind), number, digits) != 0 || cn[strlen(kind) + digits] != '}' ||
                !(linkage = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_linkage_name, &attr))))
                continue;
            snprintf(buf, len, "%s", linkage);
            found = true;
            break;
        } while (next_sibling(d, &child) == 0);
    }
    free(scopes);
    return found;
}

bool dwarf_async_fn_linkage(struct dwarf_types *d, Dwarf_Die *env, char *buf, size_t len)
{
    uint32_t index;
    int rc = u64_map_index(&d->linkage_by_env, dwarf_dieoffset(env), &d->linkages, &index);
    if (rc < 0)
        return find_async_fn_linkage(d, env, buf, len);
    if (rc == 1) {
        char found[4096];
        d->linkages.v[index] = find_async_fn_linkage(d, env, found, sizeof(found)) ? strdup(found) : NULL;
    }
    if (!d->linkages.v[index] || len == 0)
        return false;
    snprintf(buf, len, "%s", d->linkages.v[index]);
    return true;
}

/* ---- an async fn's awaits as the program wrote them ------------------------------------------------------ */

struct awaitee_search {
    struct dwarf_types *d;
    const char **parts;        /* the scopes of the resume function, "a", "b", "select_wait" */
    size_t *lens, n;
    const char *function;      /* "{async_fn#0}" */
    size_t function_len;
    void (*fn)(void *ctx, Dwarf_Die *type, const char *path, uint32_t line);
    void *ctx;
    size_t found;
    const char *crate;         /* only this crate's units are searched (NULL: any) */
    size_t crate_len;
};

/* the `__awaitee` variables below die (a subprogram or a lexical block of it; not what is inlined into it) */
static void awaitees_below(struct awaitee_search *s, Dwarf_Die *die, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        Dwarf_Attribute attr;
        const char *name;
        Dwarf_Die type;
        int line = 0;
        if (tag == DW_TAG_lexical_block) {
            awaitees_below(s, &child, depth + 1);
        } else if (tag == DW_TAG_variable &&
                   (name = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &attr))) &&
                   strcmp(name, "__awaitee") == 0 && dwarf_type_of(&child, &type)) {
            Dwarf_Word word;
            const char *path = dwarf_decl_file(&child);
            if (dwarf_formudata(dwarf_attr_integrate(&child, DW_AT_decl_line, &attr), &word) == 0)
                line = (int)word;
            if (path && line > 0) {
                s->fn(s->ctx, &type, path, (uint32_t)line);
                s->found++;
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* below scope, the resume functions the remaining path components lead to */
static void awaitees_in(struct awaitee_search *s, Dwarf_Die *scope, size_t part)
{
    Dwarf_Die child;
    if (part > MAX_DEPTH || dwarf_child(scope, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        const char *n = dwarf_diename(&child);
        if (part == s->n) {
            if (tag == DW_TAG_subprogram && n && strncmp(n, s->function, s->function_len) == 0 &&
                (n[s->function_len] == '\0' || n[s->function_len] == '<'))
                awaitees_below(s, &child, 0);
        } else if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type) &&
                   name_is(&child, s->parts[part], s->lens[part])) {
            awaitees_in(s, &child, part + 1);
        }
    } while (next_sibling(s->d, &child) == 0);
}

static bool awaitees_in_unit(void *ctx, Dwarf_Die *unit)
{
    struct awaitee_search *s = ctx;
    /* (an incremental build, a debug one, names its crate's units by a hash alone: "SOURCE/@/HASH", no crate) */
    const char *name = dwarf_diename(unit), *at = name ? strstr(name, "/@/") : NULL;
    if (!unit_of_crate(unit, s->crate, s->crate_len) && !(at && !strchr(at + 3, '.')))
        return false;
    awaitees_in(s, unit, 0);
    return s->found > 0;       /* one unit's description of the function holds all its locals */
}

size_t dwarf_async_fn_awaitees(struct dwarf_types *d, Dwarf_Die *env,
                               void (*fn)(void *ctx, Dwarf_Die *type, const char *path, uint32_t line), void *ctx)
{
    char qualified[4096], function[64];
    const char *own = dwarf_diename(env);
    const char *kind = own && strncmp(own, "{async_fn_env#", 14) == 0      ? "{async_fn#"
                       : own && strncmp(own, "{async_block_env#", 17) == 0 ? "{async_block#"
                                                                             : NULL;
    if (!kind || dwarf_qualified_name(d, env, qualified, sizeof(qualified)) == 0)
        return 0;
    const char *number = strchr(own, '#') + 1;
    snprintf(function, sizeof(function), "%s%.*s}", kind, (int)strspn(number, "0123456789"), number);
    const char *parts[MAX_DEPTH];
    size_t lens[MAX_DEPTH];
    size_t n = split_path(qualified, parts, lens, MAX_DEPTH);
    if (n < 2)
        return 0;
    struct awaitee_search s = { d, parts, lens, n - 1, function, strlen(function), fn, ctx, 0, NULL, 0 };
    /* its own unit, then its crate's units (the resume function of a program's async fn is compiled there), then
       the others */
    Dwarf_Die unit;
    if (dwarf_diecu(env, &unit, NULL, NULL) && awaitees_in_unit(&s, &unit))
        return s.found;
    s.crate = parts[0];
    s.crate_len = lens[0];
    if (each_unit(d, NULL, s.crate, s.crate_len, awaitees_in_unit, &s))
        return s.found;
    /* a library's generic async fn is compiled into the units of the crate that instantiates it (axum's
       handle_connection in the program's): every unit, once per type the caller asks about */
    s.crate = NULL;
    each_unit(d, NULL, NULL, 0, awaitees_in_unit, &s);
    return s.found;
}

/* ---- inline chains -------------------------------------------------------------------------------------- */

/* The chain of inlined subroutines of function sub that contain pc, outermost first, into chain (at most
   MAX_DEPTH); returns how many. */
static size_t inline_chain(Dwarf_Die *sub, uint64_t pc, Dwarf_Die *chain)
{
    size_t n = 0;
    Dwarf_Die at = *sub, child;
    while (n < MAX_DEPTH && dwarf_child(&at, &child) == 0) {
        bool deeper = false;
        do {
            int tag = dwarf_tag(&child);
            if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) == 1) {
                if (tag == DW_TAG_inlined_subroutine)
                    chain[n++] = child;
                at = child;
                deeper = true;
                break;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
        if (!deeper)
            break;
    }
    return n;
}

size_t dwarf_inline_names(struct dwarf_types *d, uint64_t pc, void (*fn)(void *ctx, const char *name), void *ctx)
{
    Dwarf_Die cu, sub;
    if (!dwarf_addrdie(d->dw, pc, &cu) || !subprogram_at(d, &cu, pc, false, 0, &sub))
        return 0;
    /* the chain of inlined subroutines containing pc, outermost first, then given innermost first */
    Dwarf_Die chain[MAX_DEPTH];
    size_t n = inline_chain(&sub, pc, chain);
    char name[2048];
    for (size_t i = n; i-- > 0;) {
        if (dwarf_qualified_name(d, &chain[i], name, sizeof(name)) == 0)
            snprintf(name, sizeof(name), "[unknown]");
        fn(ctx, name);
    }
    if (dwarf_qualified_name(d, &sub, name, sizeof(name)) == 0)
        snprintf(name, sizeof(name), "[unknown]");
    fn(ctx, name);
    return n + 1;
}

/* the DIE a concrete or inlined instance describes (its abstract origin, or its specification): where its name
   and the scopes that qualify it are */
static Dwarf_Die origin_of(Dwarf_Die *die)
{
    Dwarf_Die at = *die, next;
    Dwarf_Attribute attr;
    for (int i = 0; i < 4; i++) {
        if (!(dwarf_attr(&at, DW_AT_abstract_origin, &attr) || dwarf_attr(&at, DW_AT_specification, &attr)) ||
            !dwarf_formref_die(&attr, &next))
            break;
        at = next;
    }
    return at;
}

/* the file DW_AT_call_file of an inlined subroutine names, and its DW_AT_call_line */
static void call_position(Dwarf_Die *cu, Dwarf_Die *inlined, const char **file, uint32_t *line)
{
    Dwarf_Attribute attr;
    Dwarf_Word index, number;
    Dwarf_Files *files;
    size_t n_files;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &number) == 0)
        *line = (uint32_t)number;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &index) == 0 &&
        dwarf_getsrcfiles(cu, &files, &n_files) == 0 && index < n_files)
        *file = dwarf_filesrc(files, index, NULL, NULL);
}

size_t dwarf_frames_at(struct dwarf_types *d, uint64_t pc,
                       void (*fn)(void *ctx, const char *name, const char *path, uint32_t line), void *ctx)
{
    Dwarf_Die cu, sub;
    if (!dwarf_addrdie(d->dw, pc, &cu) || !subprogram_at(d, &cu, pc, false, 0, &sub))
        return 0;
    Dwarf_Die chain[MAX_DEPTH];
    size_t n = inline_chain(&sub, pc, chain);
    /* the innermost frame is at pc's line; each frame around an inlined one at its call site */
    const char *file = NULL;
    int line = 0;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, pc);
    if (l) {
        file = dwarf_linesrc(l, NULL, NULL);
        dwarf_lineno(l, &line);
    }
    char name[2048];
    uint32_t here = line > 0 ? (uint32_t)line : 0;
    for (size_t i = n; i-- > 0;) {
        Dwarf_Die origin = origin_of(&chain[i]);
        if (dwarf_qualified_name(d, &origin, name, sizeof(name)) == 0)
            snprintf(name, sizeof(name), "[unknown]");
        fn(ctx, name, file, here);
        call_position(&cu, &chain[i], &file, &here);
    }
    Dwarf_Die origin = origin_of(&sub);
    if (dwarf_qualified_name(d, &origin, name, sizeof(name)) == 0)
        snprintf(name, sizeof(name), "[unknown]");
    fn(ctx, name, file, here);
    return n + 1;
}
