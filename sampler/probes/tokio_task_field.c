/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tokio_task_field.c: the DWARF walk behind tokio_task_field.h (libdw). The storage variable is found by
 * its linkage name; inside its type, the member whose type is tokio's Context (a struct of that name with a
 * current_task_id member); inside that, current_task_id,
 * then through Cell and UnsafeCell (members named "value") to the Option, whose variant part gives the
 * discriminant and the Some variant's id. */
#include "sampler/probes/tokio_task_field.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 12

static bool member_offset(Dwarf_Die *member, uint32_t *offset)
{
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    if (!dwarf_attr_integrate(member, DW_AT_data_member_location, &attr)) {
        *offset = 0;           /* a union's members, or a variant's single member */
        return true;
    }
    if (dwarf_formudata(&attr, &v) != 0 || v > UINT32_MAX)
        return false;
    *offset = (uint32_t)v;
    return true;
}

static bool type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute attr;
    return dwarf_attr_integrate(die, DW_AT_type, &attr) && dwarf_formref_die(&attr, type) != NULL;
}

static bool named(Dwarf_Die *die, const char *name)
{
    const char *n = dwarf_diename(die);
    return n && strcmp(n, name) == 0;
}

/* The member of struct die named name: its type and offset. */
static bool find_member(Dwarf_Die *die, const char *name, Dwarf_Die *type, uint32_t *offset)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return false;
    do {
        if (dwarf_tag(&child) == DW_TAG_member && named(&child, name))
            return member_offset(&child, offset) && type_of(&child, type);
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* tokio's Context: a struct named Context with a current_task_id member. */
static bool is_context(Dwarf_Die *die)
{
    Dwarf_Die type;
    uint32_t off;
    return dwarf_tag(die) == DW_TAG_structure_type && named(die, "Context") &&
           find_member(die, "current_task_id", &type, &off);
}

/* The Context inside type die (the storage's type, at any depth): its DIE and offset. */
static bool find_context_within(Dwarf_Die *die, int depth, Dwarf_Die *context, uint32_t *offset)
{
    if (is_context(die)) {
        *context = *die;
        *offset = 0;
        return true;
    }
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
        return false;
    do {
        Dwarf_Die type;
        uint32_t here, inner;
        if (dwarf_tag(&child) == DW_TAG_member && member_offset(&child, &here) && type_of(&child, &type) &&
            find_context_within(&type, depth + 1, context, &inner)) {
            *offset = here + inner;
            return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* Option<Id> at base: its discriminant (if any) and the Some variant's id. */
static bool read_option(Dwarf_Die *option, uint32_t base, struct tokio_task_field *out)
{
    Dwarf_Die part, child;
    if (dwarf_child(option, &part) != 0)
        return false;
    while (dwarf_tag(&part) != DW_TAG_variant_part)
        if (dwarf_siblingof(&part, &part) != 0)
            return false;
    Dwarf_Attribute attr;
    Dwarf_Die discr;
    out->has_tag = dwarf_attr_integrate(&part, DW_AT_discr, &attr) && dwarf_formref_die(&attr, &discr);
    if (out->has_tag) {
        uint32_t off;
        Dwarf_Die type;
        int size = type_of(&discr, &type) ? dwarf_bytesize(&type) : -1;
        if (!member_offset(&discr, &off) || (size != 1 && size != 2 && size != 4 && size != 8))
            return false;
        out->tag_offset = base + off;
        out->tag_size = (uint32_t)size;
    }
    if (dwarf_child(&part, &child) != 0)
        return false;
    do {
        Dwarf_Die member, some, id;
        uint32_t variant_off, field_off;
        if (dwarf_tag(&child) != DW_TAG_variant || dwarf_child(&child, &member) != 0 ||
            !named(&member, "Some") || !member_offset(&member, &variant_off) || !type_of(&member, &some) ||
            !find_member(&some, "__0", &id, &field_off) || dwarf_bytesize(&id) != 8)
            continue;
        Dwarf_Word value = 1;
        if (out->has_tag && (!dwarf_attr_integrate(&child, DW_AT_discr_value, &attr) ||
                             dwarf_formudata(&attr, &value) != 0))
            return false;
        out->some_value = value;
        out->id_offset = base + variant_off + field_off;
        return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* In Context (at base in the storage): current_task_id, through Cell and UnsafeCell to the Option. */
static bool read_context(Dwarf_Die *context, uint32_t base, struct tokio_task_field *out)
{
    Dwarf_Die type;
    uint32_t off;
    if (!find_member(context, "current_task_id", &type, &off))
        return false;
    base += off;
    for (int i = 0; i < 4; i++) {
        Dwarf_Die inner;
        if (!find_member(&type, "value", &inner, &off))
            break;
        base += off;
        type = inner;
    }
    return read_option(&type, base, out);
}

/* The storage variable (by its linkage name), anywhere in the namespaces of die. */
static bool find_variable(Dwarf_Die *die, const char *symbol, int depth, Dwarf_Die *type)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_namespace && find_variable(&child, symbol, depth + 1, type))
            return true;
        if (tag == DW_TAG_variable) {
            Dwarf_Attribute attr;
            const char *linkage = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_linkage_name, &attr));
            if (linkage && strcmp(linkage, symbol) == 0 && type_of(&child, type))
                return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

int tokio_task_field_find(const char *path, const char *symbol, struct tokio_task_field *out)
{
    memset(out, 0, sizeof(*out));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    if (!dw) {
        close(fd);
        return 0;
    }
    Dwarf_Die storage, context;
    bool have_storage = false;
    Dwarf_Off off = 0, next;
    size_t header;
    while (!have_storage && dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        have_storage = dwarf_offdie(dw, off + header, &cu) && find_variable(&cu, symbol, 0, &storage);
        off = next;
    }
    uint32_t base;
    int found = have_storage && find_context_within(&storage, 0, &context, &base) &&
                read_context(&context, base, out);
    dwarf_end(dw);
    close(fd);
    return found;
}
