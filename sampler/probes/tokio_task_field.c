/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tokio_task_field.c: the walk behind tokio_task_field.h, over the one DWARF type reader (dwarf/). The storage
 * variable is found by its linkage name; inside its type, the member whose type is tokio's Context (a struct
 * of that name with a current_task_id member); inside that, current_task_id, then through Cell and
 * UnsafeCell (members named "value") to the Option, whose variant part gives the discriminant and the Some
 * variant's id. A niche-encoded Option (tokio 1.41 and later: Id is a NonZeroU64) names the id itself as its
 * discriminant, None its 0: then there is no tag of its own. */
#include "sampler/probes/tokio_task_field.h"

#include <dwarf.h>
#include <string.h>

#include "dwarf/dwarf_types.h"

#define MAX_DEPTH 12

/* tokio's Context: a struct named Context with a current_task_id member. */
static bool is_context(Dwarf_Die *die)
{
    const char *n = dwarf_diename(die);
    struct dwarf_member m;
    return dwarf_tag(die) == DW_TAG_structure_type && n && strcmp(n, "Context") == 0 &&
           dwarf_member(die, "current_task_id", &m);
}

/* The Context inside type die (the storage's type, at any depth): its DIE and offset. */
static bool find_context_within(Dwarf_Die *die, int depth, Dwarf_Die *context, uint64_t *offset)
{
    if (is_context(die)) {
        *context = *die;
        *offset = 0;
        return true;
    }
    struct dwarf_member m;
    for (size_t i = 0; depth <= MAX_DEPTH && dwarf_member_at(die, i, &m); i++) {
        uint64_t inner;
        if (find_context_within(&m.type, depth + 1, context, &inner)) {
            *offset = m.offset + inner;
            return true;
        }
    }
    return false;
}

/* Option<Id> at base: its discriminant (if any) and the Some variant's id. */
static bool read_option(Dwarf_Die *option, uint64_t base, struct tokio_task_field *out)
{
    struct dwarf_member some, id, discr;
    bool has_value;
    uint64_t value;
    if (!dwarf_variant_named(option, "Some", &some) || !dwarf_member(&some.type, "__0", &id) ||
        dwarf_type_size(&id.type) != 8)
        return false;
    uint64_t id_offset = base + some.offset + id.offset;
    if (!dwarf_variant_discr(option, "Some", &discr, &has_value, &value)) {
        out->has_tag = false;              /* no discriminant at all: 0 is None */
    } else if (!has_value) {
        /* Some is the default variant: a niche, the discriminant is the id itself and 0 is None */
        if (base + discr.offset != id_offset)
            return false;
        out->has_tag = false;
    } else {
        int64_t size = dwarf_type_size(&discr.type);
        if (size != 1 && size != 2 && size != 4 && size != 8)
            return false;
        out->has_tag = true;
        out->tag_offset = (uint32_t)(base + discr.offset);
        out->tag_size = (uint32_t)size;
        out->some_value = value;
    }
    out->id_offset = (uint32_t)id_offset;
    return id_offset <= UINT32_MAX;
}

/* In Context (at base in the storage): current_task_id, through Cell and UnsafeCell to the Option. */
static bool read_context(Dwarf_Die *context, uint64_t base, struct tokio_task_field *out)
{
    struct dwarf_member m;
    if (!dwarf_member(context, "current_task_id", &m))
        return false;
    base += m.offset;
    Dwarf_Die type = m.type;
    for (int i = 0; i < 4 && dwarf_member(&type, "value", &m); i++) {
        base += m.offset;
        type = m.type;
    }
    return read_option(&type, base, out);
}

int tokio_task_field_find(const char *path, const char *symbol, struct tokio_task_field *out)
{
    memset(out, 0, sizeof(*out));
    struct dwarf_types *d;
    int rc = dwarf_types_open(&d, path);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    Dwarf_Die storage, context;
    uint64_t base;
    int found = dwarf_variable_by_linkage(d, symbol, NULL, 0, &storage) && find_context_within(&storage, 0, &context, &base) &&
                read_context(&context, base, out);
    dwarf_types_close(d);
    return found;
}
