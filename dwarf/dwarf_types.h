/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_types.h: the one DWARF type reader (libdw), the whole interface of dwarf/. An object's DWARF opened
 * once; types walked by member name, Rust enums decoded through their variant parts (the discriminant member
 * and each variant's value, the default variant included), template parameters, qualified names built from
 * the namespaces a DIE sits in, the function at an address, thread-local and static variables by linkage
 * name, trait-object vtables by address (rustc's `<T as Trait>::{vtable}` variables name the concrete type),
 * and the inline chain at an address with qualified names (for objects whose DWARF names inlined functions
 * without their paths: line-tables-only builds). Nothing here prints or reads the environment. */
#ifndef TASKSPY_DWARF_TYPES_H
#define TASKSPY_DWARF_TYPES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_types;

/* Open path's DWARF. Returns 0, -1 when the file cannot be read, 1 when it has no DWARF at all. */
int dwarf_types_open(struct dwarf_types **out, const char *path);
void dwarf_types_close(struct dwarf_types *d);
/* Whether the DWARF describes types (a structure type with members anywhere): not a line-tables-only build. */
bool dwarf_types_has_types(struct dwarf_types *d);

/* A member found in a structure: its byte offset in the structure and its type (typedefs and qualifiers
 * stripped). */
struct dwarf_member {
    Dwarf_Die die;
    Dwarf_Die type;
    uint64_t offset;
};

/* type with typedefs, const and volatile stripped; false when die has no type */
bool dwarf_type_of(Dwarf_Die *die, Dwarf_Die *type);
void dwarf_type_strip(Dwarf_Die *type);
/* DW_AT_byte_size (or a pointer's 8), -1 when absent */
int64_t dwarf_type_size(Dwarf_Die *type);
/* The member of structure (or union) type named name. */
bool dwarf_member(Dwarf_Die *type, const char *name, struct dwarf_member *out);
/* Follow a path of member names separated by '.', summing offsets: "current.handle.value". On failure
 * *failed_at points into path at the component that did not match. */
bool dwarf_member_path(Dwarf_Die *type, const char *path, struct dwarf_member *out, const char **failed_at);
/* The i-th member (0-based) of a structure, in declaration order (tuple fields, single-field wrappers). */
bool dwarf_member_at(Dwarf_Die *type, size_t i, struct dwarf_member *out);
/* The members of a structure one after the other, in declaration order (walking them with dwarf_member_at
 * starts from the first each time): a zeroed cursor, then dwarf_member_next until it returns false. */
struct dwarf_member_cursor {
    Dwarf_Die child;
    bool started;
};
bool dwarf_member_next(Dwarf_Die *type, struct dwarf_member_cursor *c, struct dwarf_member *out);
/* Number of DW_TAG_member children (variant parts not counted). */
size_t dwarf_member_count(Dwarf_Die *type);

/* A Rust enum (a structure with a variant part): which variant the value's bytes hold. bytes holds the whole
 * value (size of the enum type). The variant's member (named after the variant) with its offset and type.
 * Returns false when type has no variant part or the bytes match no variant. */
bool dwarf_has_variants(Dwarf_Die *type);
bool dwarf_variant_of(Dwarf_Die *type, const uint8_t *bytes, size_t size, struct dwarf_member *out);
/* Where an enum type's discriminant is: its byte offset in the value and its size (0: an untagged variant part,
 * whose variant does not depend on the value). With it a caller that decodes many values of one type reads
 * only the discriminant and asks dwarf_variant_of once per value it meets. False: no variant part. */
bool dwarf_variant_discr_at(Dwarf_Die *type, uint64_t *offset, size_t *size);
/* The i-th variant member (0-based, in declaration order; variants without one not counted) of an enum type,
 * whatever its discriminant. */
bool dwarf_variant_at(Dwarf_Die *type, size_t i, struct dwarf_member *out);
/* The variant member named name of an enum type (whatever its discriminant), e.g. "Some". */
bool dwarf_variant_named(Dwarf_Die *type, const char *name, struct dwarf_member *out);
/* The discriminant member of an enum type's variant part (its offset and type), and the value that selects
 * variant name (has_value false: the default variant). */
bool dwarf_variant_discr(Dwarf_Die *type, const char *name, struct dwarf_member *discr, bool *has_value,
                         uint64_t *value);

/* The template type parameter named name ("T") of die (a type or a subprogram; its abstract origin's or
 * specification's when it has none of its own). */
bool dwarf_template_param(Dwarf_Die *die, const char *name, Dwarf_Die *out);
/* "ns::ns::Name" for die (a type or subprogram): its namespaces' and enclosing types' names, then its own.
 * Returns the length written (truncated to len - 1), 0 when die has no name. */
size_t dwarf_qualified_name(struct dwarf_types *d, Dwarf_Die *die, char *buf, size_t len);
/* die's DW_AT_decl_file (base name) and DW_AT_decl_line; false when absent */
bool dwarf_decl_position(Dwarf_Die *die, const char **file, uint32_t *line);
/* die's DW_AT_decl_file as the DWARF names it (a full path where it has one), NULL when absent */
const char *dwarf_decl_path(Dwarf_Die *die);

/* The DW_TAG_variable whose DW_AT_linkage_name is symbol, and its type. near (n_near addresses, may be none):
 * link-time code addresses of functions likely compiled in the variable's unit (its module's); their units are
 * searched first, then its crate's (Rust legacy mangling), then the others. */
bool dwarf_variable_by_linkage(struct dwarf_types *d, const char *symbol, const uint64_t *near, size_t n_near,
                               Dwarf_Die *type);
/* The function (concrete DW_TAG_subprogram) whose code starts at the link-time address addr. */
bool dwarf_function_at(struct dwarf_types *d, uint64_t addr, Dwarf_Die *out);
/* The function (concrete DW_TAG_subprogram, the out-of-line one) whose code holds link-time address addr. */
bool dwarf_function_containing(struct dwarf_types *d, uint64_t addr, Dwarf_Die *out);
/* The concrete type a trait object's vtable at link-time address addr belongs to (rustc's vtable variables). */
bool dwarf_vtable_type(struct dwarf_types *d, uint64_t addr, Dwarf_Die *out);
/* The structure type named by its qualified name ("tokio::runtime::task::core::Trailer"), exact. */
bool dwarf_type_by_name(struct dwarf_types *d, const char *qualified, Dwarf_Die *out);

/* The linkage name of the function an async state machine type belongs to: rustc puts the resume function
 * `{async_fn#N}` (or `{async_block#N}`) beside its `{async_fn_env#N}` type in the same scope. */
bool dwarf_async_fn_linkage(struct dwarf_types *d, Dwarf_Die *env, char *buf, size_t len);

/* The `__awaitee` locals of the resume function of async state machine type env (rustc's `{async_fn#N}` beside
 * its `{async_fn_env#N}`): the future each await holds, each declared at the await's source position. rustc gives
 * a Suspend<k> variant the position of the await's expansion (inside a macro: the macro's own source), but
 * declares the local at the position the program wrote (the macro's invocation). Calls fn(ctx, type, path, line)
 * for each (type stripped, path as the DWARF names the file) from the first unit that describes the function
 * (env's own, then its crate's); returns how many. */
size_t dwarf_async_fn_awaitees(struct dwarf_types *d, Dwarf_Die *env,
                               void (*fn)(void *ctx, Dwarf_Die *type, const char *path, uint32_t line), void *ctx);

/* The instance of the generic structure type qualified ("tokio::runtime::task::core::Cell", its name's
 * generic arguments left out) whose template type parameters param_names[i] are the types params[i] (the same
 * DIE, or types of the same qualified name in another unit). */
bool dwarf_generic_type(struct dwarf_types *d, const char *qualified, const char *const *param_names,
                        Dwarf_Die *params, size_t n, Dwarf_Die *out);

/* The functions inlined at link-time address pc, innermost first, each with its qualified name (namespaces
 * and impl scopes included); calls fn(ctx, name) for each and for the function they are inlined into (last).
 * Returns the number of names given, 0 when pc is in no known function. */
size_t dwarf_inline_names(struct dwarf_types *d, uint64_t pc, void (*fn)(void *ctx, const char *name),
                          void *ctx);

/* The source frames executing at link-time address pc, innermost first: each function inlined there (qualified
 * name) and the function they are inlined into, each with its position (pc's line for the innermost, the call
 * site of the one inside it for the others; path as the DWARF names the file, NULL / 0 when not known): calls
 * fn(ctx, name, path, line) for each. A return address's caller: pass the address before it. Returns how many. */
size_t dwarf_frames_at(struct dwarf_types *d, uint64_t pc,
                       void (*fn)(void *ctx, const char *name, const char *path, uint32_t line), void *ctx);

#endif
