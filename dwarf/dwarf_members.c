/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_members.c: walking one type: members by name, by position and by path, Rust enums through their
 * variant parts, template parameters, declaration positions (dwarf_types.h). */
#include "dwarf/dwarf_types.h"

#include <dwarf.h>
#include <string.h>

#define MAX_STRIP 16

void dwarf_type_strip(Dwarf_Die *type)
{
    for (int i = 0; i < MAX_STRIP; i++) {
        int tag = dwarf_tag(type);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
            tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
            return;
        Dwarf_Attribute attr;
        if (!dwarf_attr_integrate(type, DW_AT_type, &attr) || !dwarf_formref_die(&attr, type))
            return;
    }
}

bool dwarf_type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute attr;
    if (!dwarf_attr_integrate(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, type))
        return false;
    dwarf_type_strip(type);
    return true;
}

int64_t dwarf_type_size(Dwarf_Die *type)
{
    Dwarf_Attribute attr;
    Dwarf_Word v;
    if (dwarf_attr_integrate(type, DW_AT_byte_size, &attr) && dwarf_formudata(&attr, &v) == 0)
        return (int64_t)v;
    int tag = dwarf_tag(type);
    if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type)
        return 8;
    return -1;
}

/* a member's offset: DW_AT_data_member_location as a constant (0 when absent: unions, single variants) */
static bool member_offset(Dwarf_Die *member, uint64_t *offset)
{
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    *offset = 0;
    if (!dwarf_attr_integrate(member, DW_AT_data_member_location, &attr))
        return true;
    if (dwarf_formudata(&attr, &v) != 0)
        return false;
    *offset = v;
    return true;
}

static bool fill_member(Dwarf_Die *child, struct dwarf_member *out)
{
    out->die = *child;
    return member_offset(child, &out->offset) && dwarf_type_of(child, &out->type);
}

bool dwarf_member(Dwarf_Die *type, const char *name, struct dwarf_member *out)
{
    Dwarf_Die child;
    if (dwarf_child(type, &child) != 0)
        return false;
    do {
        const char *n;
        if (dwarf_tag(&child) == DW_TAG_member && (n = dwarf_diename(&child)) && strcmp(n, name) == 0)
            return fill_member(&child, out);
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool dwarf_member_at(Dwarf_Die *type, size_t i, struct dwarf_member *out)
{
    Dwarf_Die child;
    size_t k = 0;
    if (dwarf_child(type, &child) != 0)
        return false;
    do {
        if (dwarf_tag(&child) == DW_TAG_member && k++ == i)
            return fill_member(&child, out);
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool dwarf_member_next(Dwarf_Die *type, struct dwarf_member_cursor *c, struct dwarf_member *out)
{
    for (;;) {
        if (!c->started ? dwarf_child(type, &c->child) != 0 : dwarf_siblingof(&c->child, &c->child) != 0)
            return false;
        c->started = true;
        if (dwarf_tag(&c->child) == DW_TAG_member)
            return fill_member(&c->child, out);
    }
}

size_t dwarf_member_count(Dwarf_Die *type)
{
    Dwarf_Die child;
    size_t k = 0;
    if (dwarf_child(type, &child) != 0)
        return 0;
    do
        k += dwarf_tag(&child) == DW_TAG_member;
    while (dwarf_siblingof(&child, &child) == 0);
    return k;
}

bool dwarf_member_path(Dwarf_Die *type, const char *path, struct dwarf_member *out, const char **failed_at)
{
    Dwarf_Die at = *type;
    uint64_t offset = 0;
    const char *p = path;
    memset(out, 0, sizeof(*out));
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        char name[128];
        if (len == 0 || len >= sizeof(name)) {
            *failed_at = p;
            return false;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        struct dwarf_member m;
        if (!dwarf_member(&at, name, &m) && !dwarf_variant_named(&at, name, &m)) {
            *failed_at = p;
            return false;
        }
        offset += m.offset;
        at = m.type;
        *out = m;
        if (!dot)
            break;
        p = dot + 1;
    }
    out->offset = offset;
    return true;
}

/* the variant part of an enum type */
static bool variant_part(Dwarf_Die *type, Dwarf_Die *part)
{
    if (dwarf_child(type, part) != 0)
        return false;
    do
        if (dwarf_tag(part) == DW_TAG_variant_part)
            return true;
    while (dwarf_siblingof(part, part) == 0);
    return false;
}

bool dwarf_has_variants(Dwarf_Die *type)
{
    Dwarf_Die part;
    return variant_part(type, &part);
}

/* the discriminant member of a variant part (referenced by DW_AT_discr), with its offset and type */
static bool discr_member(Dwarf_Die *part, struct dwarf_member *out)
{
    Dwarf_Attribute attr;
    Dwarf_Die d;
    return dwarf_attr_integrate(part, DW_AT_discr, &attr) && dwarf_formref_die(&attr, &d) && fill_member(&d, out);
}

/* a variant's member (the one DW_TAG_member child) */
static bool variant_member(Dwarf_Die *variant, struct dwarf_member *out)
{
    Dwarf_Die m;
    if (dwarf_child(variant, &m) != 0)
        return false;
    do
        if (dwarf_tag(&m) == DW_TAG_member)
            return fill_member(&m, out);
    while (dwarf_siblingof(&m, &m) == 0);
    return false;
}

static uint64_t read_uint(const uint8_t *bytes, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, bytes, size < 8 ? size : 8);     /* little-endian */
    return v;
}

/* Whether no value of type can exist: an enum without variants (Rust's `enum Never {}`, Infallible) or a
   struct or tuple holding one by value (a few levels down). */
static bool uninhabited(Dwarf_Die *type, int depth)
{
    Dwarf_Die child, v;
    if (depth > 4 || dwarf_tag(type) != DW_TAG_structure_type || dwarf_child(type, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_variant_part) {
            bool any = false;
            if (dwarf_child(&child, &v) == 0)
                do
                    any = dwarf_tag(&v) == DW_TAG_variant;
                while (!any && dwarf_siblingof(&v, &v) == 0);
            if (!any)
                return true;
        } else if (tag == DW_TAG_member) {
            struct dwarf_member m;
            if (fill_member(&child, &m) && uninhabited(&m.type, depth + 1))
                return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool dwarf_variant_discr_at(Dwarf_Die *type, uint64_t *offset, size_t *size)
{
    Dwarf_Die part;
    struct dwarf_member discr;
    if (!variant_part(type, &part))
        return false;
    *offset = 0;
    *size = 0;
    if (!discr_member(&part, &discr))
        return true;
    int64_t dsize = dwarf_type_size(&discr.type);
    if (dsize <= 0 || dsize > 8)
        return false;
    *offset = discr.offset;
    *size = (size_t)dsize;
    return true;
}

bool dwarf_variant_of(Dwarf_Die *type, const uint8_t *bytes, size_t size, struct dwarf_member *out)
{
    Dwarf_Die part, variant;
    if (!variant_part(type, &part))
        return false;
    struct dwarf_member discr;
    bool tagged = discr_member(&part, &discr);
    uint64_t value = 0;
    if (tagged) {
        int64_t dsize = dwarf_type_size(&discr.type);
        if (dsize <= 0 || dsize > 8 || discr.offset + (uint64_t)dsize > size)
            return false;
        value = read_uint(bytes + discr.offset, (size_t)dsize);
    }
    bool have_default = false;
    Dwarf_Die fallback;
    if (dwarf_child(&part, &variant) != 0)
        return false;
    do {
        if (dwarf_tag(&variant) != DW_TAG_variant)
            continue;
        Dwarf_Attribute attr;
        Dwarf_Word v;
        if (!dwarf_attr_integrate(&variant, DW_AT_discr_value, &attr)) {
            /* the default variant; with no discriminant at all the one variant a value can be (rustc lists the
               uninhabited ones too: hyper's ProtoServer::H2 holding a Never when http2 is off) */
            struct dwarf_member m;
            if (!tagged && variant_member(&variant, &m) && !uninhabited(&m.type, 0)) {
                *out = m;
                return true;
            }
            fallback = variant;
            have_default = true;
            continue;
        }
        if (!tagged)
            continue;
        if (dwarf_formudata(&attr, &v) == 0 && v == value)
            return variant_member(&variant, out);
        Dwarf_Sword sv;
        if (dwarf_formsdata(&attr, &sv) == 0 && (uint64_t)sv == value)
            return variant_member(&variant, out);
    } while (dwarf_siblingof(&variant, &variant) == 0);
    /* no variant carries this value: the default (untagged, niche-holding) variant, or a one-variant enum */
    return have_default && variant_member(&fallback, out);
}

bool dwarf_variant_at(Dwarf_Die *type, size_t i, struct dwarf_member *out)
{
    Dwarf_Die part, variant;
    if (!variant_part(type, &part) || dwarf_child(&part, &variant) != 0)
        return false;
    do {
        struct dwarf_member m;
        if (dwarf_tag(&variant) == DW_TAG_variant && variant_member(&variant, &m) && i-- == 0) {
            *out = m;
            return true;
        }
    } while (dwarf_siblingof(&variant, &variant) == 0);
    return false;
}

bool dwarf_variant_named(Dwarf_Die *type, const char *name, struct dwarf_member *out)
{
    Dwarf_Die part, variant;
    if (!variant_part(type, &part) || dwarf_child(&part, &variant) != 0)
        return false;
    do {
        struct dwarf_member m;
        const char *n;
        if (dwarf_tag(&variant) == DW_TAG_variant && variant_member(&variant, &m) && (n = dwarf_diename(&m.die)) &&
            strcmp(n, name) == 0) {
            *out = m;
            return true;
        }
    } while (dwarf_siblingof(&variant, &variant) == 0);
    return false;
}

bool dwarf_variant_discr(Dwarf_Die *type, const char *name, struct dwarf_member *discr, bool *has_value,
                         uint64_t *value)
{
    Dwarf_Die part, variant;
    if (!variant_part(type, &part) || !discr_member(&part, discr) || dwarf_child(&part, &variant) != 0)
        return false;
    do {
        struct dwarf_member m;
        const char *n;
        if (dwarf_tag(&variant) != DW_TAG_variant || !variant_member(&variant, &m) || !(n = dwarf_diename(&m.die)) ||
            strcmp(n, name) != 0)
            continue;
        Dwarf_Attribute attr;
        Dwarf_Word v = 0;
        *has_value = dwarf_attr_integrate(&variant, DW_AT_discr_value, &attr) != NULL;
        if (*has_value && dwarf_formudata(&attr, &v) != 0)
            return false;
        *value = v;
        return true;
    } while (dwarf_siblingof(&variant, &variant) == 0);
    return false;
}

/* die's template parameter named name, among its own children */
static bool own_template_param(Dwarf_Die *die, const char *name, Dwarf_Die *out)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return false;
    do {
        const char *n;
        if (dwarf_tag(&child) == DW_TAG_template_type_parameter && (n = dwarf_diename(&child)) &&
            strcmp(n, name) == 0)
            return dwarf_type_of(&child, out);
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool dwarf_template_param(Dwarf_Die *die, const char *name, Dwarf_Die *out)
{
    Dwarf_Die at = *die;
    for (int i = 0; i < 4; i++) {
        if (own_template_param(&at, name, out))
            return true;
        Dwarf_Attribute attr;
        if (!(dwarf_attr(&at, DW_AT_specification, &attr) || dwarf_attr(&at, DW_AT_abstract_origin, &attr)) ||
            !dwarf_formref_die(&attr, &at))
            return false;
    }
    return false;
}

bool dwarf_decl_position(Dwarf_Die *die, const char **file, uint32_t *line)
{
    int l = 0;
    const char *f = dwarf_decl_file(die);
    if (!f || dwarf_decl_line(die, &l) != 0 || l <= 0)
        return false;
    const char *slash = strrchr(f, '/');
    *file = slash ? slash + 1 : f;
    *line = (uint32_t)l;
    return true;
}

const char *dwarf_decl_path(Dwarf_Die *die)
{
    return dwarf_decl_file(die);
}
