/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dwarf_lookup.c: an object's DWARF read for addresses, with the least work per address: the file is mapped
 * by libdw (nothing copied; a file with compressed sections is read from a copy with them inflated by libdeflate,
 * elf_file_inflated, at less than half zlib's cost, and without the sections never read here), compilation units
 * are found from their own DIE's ranges, and only the units that hold an address asked for are read: their line
 * table (dwarf_lines.c) and one walk over their DIEs that keeps their out-of-line functions (those no other
 * function contains) with their address ranges; a function's tree (every function and inlined call below it,
 * with its ranges and its caller) is read when an address in it is first asked for; each kept until the object
 * is closed. Names, call sites and declaration lines are read only for the functions an answer names. The
 * file's pages are unmapped again after each lookup that read it (they stay in the page cache).
 * The answers are libbfd's (bfd_object.c used bfd_find_nearest_line, bfd_find_inliner_info and bfd_find_line
 * before, and still does for objects this reader declines): the same unit is chosen (those read so far whose
 * ranges hold the address, then the next ones in the file's order), the same function (the smallest range that
 * holds the address, the later one among equals), the same names (a linkage name over DW_AT_name, through
 * DW_AT_abstract_origin and DW_AT_specification) and the same lines. */
#include "symbolize/symbolize_internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define NO_FUNC UINT32_MAX
#define MAX_NESTING 512            /* deeper DIE trees are treated as malformed */
#define MAX_ORIGIN_DEPTH 100       /* DW_AT_specification chains (libbfd's recursion limit) */
#define HASHED_LOOKUPS_AFTER 100   /* libbfd looks declaration lines up by exact name from its 101st lookup */

enum func_names { NAMES_UNREAD, NAMES_READ };

/* A function or inlined call of an expanded tree (below). */
struct dw_func {
    Dwarf_Off die;                 /* its DIE's offset in .debug_info */
    uint32_t caller;               /* the function it is inlined into (inlined calls only), NO_FUNC */
    uint32_t first_range, n_ranges;/* its ranges in the tree's ranges, libbfd's list order */
    uint16_t tag;
    uint8_t names;                 /* enum func_names */
    bool is_linkage;               /* name is a linkage name (or the language mangles nothing) */
    bool has_file;                 /* it has a DW_AT_decl_file (its own or its origin's) */
    const char *name;              /* NULL: none */
    const char *caller_file;       /* the call site's file (inlined calls), NULL */
    uint32_t caller_line;
    int32_t decl_line;
};

/* An out-of-line function with every function and inlined call below it, in the order of their DIEs (the
 * function first): read when an address in the function is first asked for, kept. */
struct dw_tree {
    VEC_OF(struct dw_func) funcs;
    line_range_vec ranges;
};

/* A function no other function contains (the unit walk keeps only these), and its ranges. */
struct dw_root {
    Dwarf_Off die;
    uint32_t first_range, n_ranges;/* in the unit's root_ranges */
    uint32_t tree;                 /* its expanded tree in the unit's trees, NO_FUNC: not read yet */
    bool failed;                   /* its tree cannot be read */
};

/* One range of a root, for the lookup by address: the unit's index sorted by low, with each entry's highest
 * end so far, as libbfd's table of functions. */
struct dw_piece {
    uint64_t low, high;
    uint64_t max_high;             /* the highest high of this and every piece before it */
    uint32_t root;
};

struct dw_unit {
    Dwarf_Off die;                 /* the unit DIE's offset */
    Dwarf_Off start, end;          /* the unit's bytes in .debug_info (its header to the next one's) */
    uint16_t version;
    uint8_t addr_size, offset_size;
    uint32_t lang;
    const char *comp_dir;
    bool has_stmt;
    uint64_t stmt;                 /* its line table's offset in .debug_line */
    uint64_t base;                 /* the base address of its range lists */
    bool has_children;
    line_range_vec ranges;         /* from its DIE (DW_AT_low_pc/high_pc, DW_AT_ranges) */
    bool error;                    /* unusable, as libbfd's unit->error */
    bool scanned;                  /* its DIEs walked for the roots */
    struct line_table *lines;      /* (the unit at stmt offset 0 may share the first one's, as libbfd has it) */
    bool owns_lines;
    VEC_OF(struct dw_root) roots;
    line_range_vec root_ranges;
    VEC_OF(struct dw_piece) index;
    VEC_OF(struct dw_tree) trees;
};

struct section_bytes {
    const uint8_t *data;
    size_t size;
};

struct dwarf_lookup {
    int fd;
    Dwarf *dw;
    const uint8_t *info;           /* .debug_info's bytes (where DIE addresses point) */
    struct section_bytes line, line_str, ranges, rnglists;
    VEC_OF(struct dw_unit) units;  /* read so far, in the file's order */
    Dwarf_CU *last_cu;             /* where reading units goes on from (NULL: the start) */
    bool all_read;                 /* every unit read, or reading stopped at a malformed one */
    struct line_table *line0;      /* the table at .debug_line offset 0, shared (libbfd) */
    unsigned decl_lookups;         /* declaration-line lookups so far (libbfd changes method after 100) */
    void *mapped;                  /* libdw's read-only mapping of the file, NULL when it read the file */
    size_t mapped_size;
    size_t touched;                /* about how many bytes of it were mapped since it was last released */
    void *image;                   /* the file's copy with its compressed sections inflated, or NULL */
    Elf *image_elf;                /* libelf's handle of it */
};

/* ---- opening ------------------------------------------------------------------------------------------ */
static struct section_bytes section_named(Elf *elf, const char *name, const char *zname)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return (struct section_bytes){ 0 };
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr shdr;
        const char *n = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
        if (!n || (strcmp(n, name) != 0 && strcmp(n, zname) != 0) || shdr.sh_type == SHT_NOBITS)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);   /* libdw has decompressed it in place when it was compressed */
        return d && d->d_buf ? (struct section_bytes){ d->d_buf, d->d_size } : (struct section_bytes){ 0 };
    }
    return (struct section_bytes){ 0 };
}

/* Whether the file has a section libbfd reads and this reader does not: another file's DWARF (dwz), DWARF 4
 * type units. */
static bool declined(Elf *elf)
{
    static const char *const names[] = { ".gnu_debugaltlink", ".debug_types", ".zdebug_types" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (section_named(elf, names[i], names[i]).data)
            return true;
    return false;
}

/* Whether [p, p + size) is a mapping of a file (libelf maps the file read-only, and reads it into the heap when
 * it cannot): /proc/self/maps names it. */
static bool file_backed(const void *p, size_t size)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    char line[512];
    bool found = false;
    uintptr_t at = (uintptr_t)p;
    while (maps && !found && fgets(line, sizeof(line), maps)) {
        uintptr_t start, end;
        unsigned long inode = 0;
        char perms[8];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %lu", &start, &end, perms, &inode) == 4)
            found = at >= start && at + size <= end + 4096 && inode != 0 && perms[1] == '-';
    }
    if (maps)
        fclose(maps);
    return found;
}

/* Unmaps the file from this process once lookups have read a few megabytes of it (its pages stay in the page
 * cache): the kernel maps 16 pages around each page read, so that reading a few units' DIEs, their unit headers
 * and a few hundred names would leave most of a big object's DWARF counted as this process's memory. What is read
 * again later is mapped again. Only libdw's read-only mapping of the file, where it has one: nothing of it is
 * lost. touched counts a read of a few bytes (a unit's header, a name, a tree's first DIEs) as the 64 KiB the
 * kernel maps around it. */
#define FAULT_AROUND (64u << 10)
#define RELEASE_AFTER (2u << 20)

static void release_pages(struct dwarf_lookup *l)
{
    if (l->mapped && l->touched >= RELEASE_AFTER) {
        (void)madvise(l->mapped, l->mapped_size, MADV_DONTNEED);
        l->touched = 0;
    }
}

/* What an inflated copy keeps: the sections this reader may read, not the program's own bytes (code, data:
 * allocated sections) nor the DWARF it never reads (variables' locations, macros). */
static bool read_here(const Elf64_Shdr *sh, const char *name, void *ctx)
{
    (void)ctx;
    static const char *const unread[] = { ".debug_loclists", ".debug_loc", ".debug_macro", ".debug_macinfo" };
    if (sh->sh_flags & SHF_ALLOC)
        return false;
    for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++)
        if (strcmp(name, unread[i]) == 0)
            return false;
    return true;
}

/* The file's DWARF through libdw: from a copy with its compressed sections inflated (elf_file_inflated), which
 * *image and *image_elf then hold, when it has any; else libdw reads the file itself. */
static Dwarf *open_dwarf(int fd, const char *path, void **image, Elf **image_elf)
{
    struct elf_file ef;
    size_t size = 0;
    if (elf_file_open(&ef, path) == 0) {
        *image = elf_file_inflated(&ef, read_here, NULL, &size);
        elf_file_close(&ef);
    }
    if (*image && (*image_elf = elf_memory(*image, size)) != NULL) {
        Dwarf *dw = dwarf_begin_elf(*image_elf, DWARF_C_READ, NULL);
        if (dw)
            return dw;
    }
    if (*image_elf)
        elf_end(*image_elf);
    free(*image);
    *image = NULL;
    *image_elf = NULL;
    return dwarf_begin(fd, DWARF_C_READ);
}

struct dwarf_lookup *dwarf_lookup_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *image = NULL;
    Elf *image_elf = NULL;
    Dwarf *dw = open_dwarf(fd, path, &image, &image_elf);
    Elf *elf = dw ? dwarf_getelf(dw) : NULL;
    GElf_Ehdr ehdr;
    struct section_bytes info = elf ? section_named(elf, ".debug_info", ".zdebug_info") : (struct section_bytes){ 0 };
    struct dwarf_lookup *l = NULL;
    if (info.data && info.size && gelf_getehdr(elf, &ehdr) && ehdr.e_type != ET_REL && !declined(elf))
        l = calloc(1, sizeof(*l));
    if (!l) {
        if (dw)
            dwarf_end(dw);
        if (image_elf)
            elf_end(image_elf);
        free(image);
        close(fd);
        return NULL;
    }
    l->fd = fd;
    l->dw = dw;
    l->image = image;
    l->image_elf = image_elf;
    l->info = info.data;
    size_t file_size;
    char *mapped = elf_rawfile(elf, &file_size);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (mapped && file_size && file_backed(mapped, file_size)) {
        l->mapped = (void *)((uintptr_t)mapped & ~(page - 1));
        l->mapped_size = file_size + ((uintptr_t)mapped - (uintptr_t)l->mapped);
    }
    l->line = section_named(elf, ".debug_line", ".zdebug_line");
    l->line_str = section_named(elf, ".debug_line_str", ".zdebug_line_str");
    l->ranges = section_named(elf, ".debug_ranges", ".zdebug_ranges");
    l->rnglists = section_named(elf, ".debug_rnglists", ".zdebug_rnglists");
    return l;
}

static void unit_free(struct dw_unit *u)
{
    if (u->owns_lines)
        line_table_free(u->lines);
    vec_free(&u->ranges);
    for (size_t i = 0; i < u->trees.n; i++) {
        vec_free(&u->trees.v[i].funcs);
        vec_free(&u->trees.v[i].ranges);
    }
    vec_free(&u->trees);
    vec_free(&u->roots);
    vec_free(&u->root_ranges);
    vec_free(&u->index);
}

void dwarf_lookup_close(struct dwarf_lookup *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->units.n; i++)
        unit_free(&l->units.v[i]);
    vec_free(&l->units);
    line_table_free(l->line0);
    dwarf_end(l->dw);
    if (l->image_elf)
        elf_end(l->image_elf);
    free(l->image);
    close(l->fd);
    free(l);
}

/* ---- attribute values as libbfd reads them ------------------------------------------------------------ */
static bool is_int_form(unsigned form)
{
    switch (form) {
    case DW_FORM_addr: case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
    case DW_FORM_flag: case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_ref_addr: case DW_FORM_ref1:
    case DW_FORM_ref2: case DW_FORM_ref4: case DW_FORM_ref8: case DW_FORM_ref_udata: case DW_FORM_sec_offset:
    case DW_FORM_flag_present: case DW_FORM_ref_sig8: case DW_FORM_addrx: case DW_FORM_implicit_const:
    case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3: case DW_FORM_addrx4: case DW_FORM_GNU_ref_alt:
        return true;
    default:
        return false;
    }
}

static bool is_str_form(unsigned form)
{
    switch (form) {
    case DW_FORM_string: case DW_FORM_strp: case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2:
    case DW_FORM_strx3: case DW_FORM_strx4: case DW_FORM_line_strp: case DW_FORM_GNU_strp_alt:
        return true;
    default:
        return false;
    }
}

/* An integer-form value (addresses through .debug_addr for the addrx forms); 0 when it cannot be read. */
static uint64_t int_value(Dwarf_Attribute *a)
{
    unsigned form = dwarf_whatform(a);
    Dwarf_Word w = 0;
    Dwarf_Addr addr = 0;
    Dwarf_Sword s = 0;
    switch (form) {
    case DW_FORM_addr: case DW_FORM_addrx: case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3:
    case DW_FORM_addrx4:
        return dwarf_formaddr(a, &addr) == 0 ? addr : 0;
    case DW_FORM_sdata: case DW_FORM_implicit_const:
        return dwarf_formsdata(a, &s) == 0 ? (uint64_t)s : 0;
    case DW_FORM_flag: case DW_FORM_flag_present: {
        bool flag = false;
        return dwarf_formflag(a, &flag) == 0 && flag;
    }
    default:
        return dwarf_formudata(a, &w) == 0 ? w : 0;
    }
}

/* A string-form value; NULL for an empty string (libbfd's reading gives none for it). */
static const char *str_value(Dwarf_Attribute *a)
{
    const char *s = dwarf_formstring(a);
    return s && *s ? s : NULL;
}

/* C and the languages that mangle nothing: a DW_AT_name is as good as a linkage name (libbfd's mangle_style). */
static bool name_is_linkage(uint32_t lang)
{
    switch (lang) {
    case DW_LANG_C89: case DW_LANG_C: case DW_LANG_Cobol74: case DW_LANG_Cobol85: case DW_LANG_Fortran77:
    case DW_LANG_Pascal83: case DW_LANG_PLI: case DW_LANG_C99: case DW_LANG_UPC: case DW_LANG_C11:
    case DW_LANG_Mips_Assembler: case 0x8765 /* DW_LANG_Upc */: case 0x8004 /* HP_Basic91 */:
    case 0x8006 /* HP_IMacro */: case 0x8007 /* HP_Assembler */:
        return true;
    default:
        return false;
    }
}

/* ---- address ranges ------------------------------------------------------------------------------------ */
/* libbfd's arange_add: an empty range is dropped, one that touches a range already there extends it, others
 * go in after the first (the list's order decides which range a later one extends). */
static bool range_add(line_range_vec *list, uint32_t first, uint32_t *n, uint64_t low, uint64_t high)
{
    if (low == high)
        return true;
    if (*n == 0) {
        if (vec_reserve(list, first + 1) != 0)
            return false;
        list->v[first] = (struct line_range){ low, high };
        list->n = first + 1 > list->n ? first + 1 : list->n;
        *n = 1;
        return true;
    }
    /* list order: the first, then the others newest first (they sit after it in the array, oldest first) */
    for (uint32_t k = 0; k < *n; k++) {
        struct line_range *r = &list->v[first + (k == 0 ? 0 : *n - k)];
        if (low == r->high) {
            r->high = high;
            return true;
        }
        if (high == r->low) {
            r->low = low;
            return true;
        }
    }
    if (list->n != first + *n || vec_reserve(list, list->n + 1) != 0)
        return false;
    list->v[list->n++] = (struct line_range){ low, high };
    (*n)++;
    return true;
}

static uint64_t read_address(const uint8_t **p, const uint8_t *end, unsigned size)
{
    return dwarf_bytes_fixed(p, end, size);
}

static uint64_t read_uleb(const uint8_t **p, const uint8_t *end)
{
    return dwarf_bytes_uleb(p, end);
}

/* A range list (DWARF 4's .debug_ranges, DWARF 5's .debug_rnglists without the indexed entries, which libbfd
 * does not read: a list with one fails, as it does there) added to a range list. */
static bool read_range_list(const struct dwarf_lookup *l, const struct dw_unit *u, uint64_t base, uint64_t offset,
                            line_range_vec *list, uint32_t first, uint32_t *n)
{
    if (u->version <= 4) {
        if (!l->ranges.data || offset > l->ranges.size)
            return false;
        const uint8_t *p = l->ranges.data + offset, *end = l->ranges.data + l->ranges.size;
        for (;;) {
            if ((size_t)(end - p) < 2u * u->addr_size)
                return false;
            uint64_t low = read_address(&p, end, u->addr_size), high = read_address(&p, end, u->addr_size);
            if (low == 0 && high == 0)
                return true;
            if (low == UINT64_MAX && high != UINT64_MAX)
                base = high;
            else if (!range_add(list, first, n, base + low, base + high))
                return false;
        }
    }
    if (!l->rnglists.data || offset >= l->rnglists.size)
        return false;
    const uint8_t *p = l->rnglists.data + offset, *end = l->rnglists.data + l->rnglists.size;
    for (;;) {
        if (p >= end)
            return false;
        uint64_t low, high;
        switch (*p++) {
        case DW_RLE_end_of_list:
            return true;
        case DW_RLE_base_address:
            if ((size_t)(end - p) < u->addr_size)
                return false;
            base = read_address(&p, end, u->addr_size);
            continue;
        case DW_RLE_start_length:
            if ((size_t)(end - p) < u->addr_size)
                return false;
            low = read_address(&p, end, u->addr_size);
            high = low + read_uleb(&p, end);
            break;
        case DW_RLE_offset_pair:
            low = base + read_uleb(&p, end);
            high = base + read_uleb(&p, end);
            break;
        case DW_RLE_start_end:
            if ((size_t)(end - p) < 2u * u->addr_size)
                return false;
            low = read_address(&p, end, u->addr_size);
            high = read_address(&p, end, u->addr_size);
            break;
        default:
            return false;
        }
        if (!range_add(list, first, n, low, high))
            return false;
    }
}

/* ---- units --------------------------------------------------------------------------------------------- */
struct unit_attrs {
    struct dwarf_lookup *l;
    struct dw_unit *u;
    bool compile_unit;
    uint64_t low, high;
    bool high_relative, failed;
    uint32_t n_ranges;
};

static int unit_attr(Dwarf_Attribute *a, void *arg)
{
    struct unit_attrs *s = arg;
    struct dw_unit *u = s->u;
    unsigned form = dwarf_whatform(a);
    switch (dwarf_whatattr(a)) {
    case DW_AT_stmt_list:
        if (is_int_form(form)) {
            u->has_stmt = true;
            u->stmt = int_value(a);
        }
        break;
    case DW_AT_low_pc:
        if (is_int_form(form)) {
            s->low = int_value(a);
            if (s->compile_unit)
                u->base = s->low;
        }
        break;
    case DW_AT_high_pc:
        if (is_int_form(form)) {
            s->high = int_value(a);
            s->high_relative = form != DW_FORM_addr;
        }
        break;
    case DW_AT_ranges:
        if (is_int_form(form) && !read_range_list(s->l, u, u->base, int_value(a), &u->ranges, 0,
                                                  &s->n_ranges))
            s->failed = true;
        break;
    case DW_AT_comp_dir:
        if (is_str_form(form) && (u->comp_dir = str_value(a))) {
            const char *colon = strchr(u->comp_dir, ':');   /* libbfd drops an Irix "<machine>.:" prefix */
            if (colon && colon != u->comp_dir && colon[-1] == '.' && colon[1] == '/')
                u->comp_dir = colon + 1;
        }
        break;
    case DW_AT_language:
        if (is_int_form(form))
            u->lang = (uint32_t)int_value(a);
        break;
    default:
        break;
    }
    return s->failed ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* Read the next unit as libbfd's parse_comp_unit does: its header and its DIE's attributes. False when there
 * is none, or it is malformed (libbfd then reads no unit after it either). */
static bool read_next_unit(struct dwarf_lookup *l)
{
    if (l->all_read)
        return false;
    Dwarf_CU *cu;
    Dwarf_Half version;
    uint8_t unit_type, addr_size, offset_size;
    Dwarf_Die die;
    uint64_t unit_id;
    int rc = dwarf_get_units(l->dw, l->last_cu, &cu, &version, &unit_type, &die, NULL);
    if (rc != 0 || dwarf_cu_info(cu, NULL, NULL, NULL, NULL, &unit_id, &addr_size, &offset_size) != 0 ||
        version < 2 || version > 5 || (addr_size != 2 && addr_size != 4 && addr_size != 8) || !die.addr ||
        dwarf_tag(&die) <= 0) {
        l->all_read = true;
        return false;
    }
    struct dw_unit *u = vec_push(&l->units);
    l->touched += FAULT_AROUND;
    if (!u) {
        l->all_read = true;
        return false;
    }
    Dwarf_Off die_off = dwarf_dieoffset(&die), next;
    size_t header_size;
    u->die = die_off;
    u->start = die_off - dwarf_cuoffset(&die);
    u->end = dwarf_next_unit(l->dw, u->start, &next, &header_size, NULL, NULL, NULL, NULL, NULL, NULL) == 0
             ? next : die_off;
    u->version = version;
    u->addr_size = addr_size;
    u->offset_size = offset_size;
    u->has_children = dwarf_haschildren(&die) > 0;
    struct unit_attrs s = { .l = l, .u = u, .compile_unit = dwarf_tag(&die) == DW_TAG_compile_unit };
    if (dwarf_getattrs(&die, unit_attr, &s, 0) != 1 || s.failed) {
        unit_free(u);
        l->units.n--;
        l->all_read = true;
        return false;
    }
    if (s.high_relative)
        s.high += s.low;
    if (s.high != 0 && !range_add(&u->ranges, 0, &s.n_ranges, s.low, s.high)) {
        unit_free(u);
        l->units.n--;
        l->all_read = true;
        return false;
    }
    l->last_cu = cu;
    return true;
}

static bool ranges_hold(const struct line_range *r, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= r[i].low && addr < r[i].high)
            return true;
    return false;
}

/* libbfd's "the unit has no ranges" (arange.high == 0): none from its DIE nor from its line table. */
static bool unit_rangeless(const struct dw_unit *u)
{
    return u->ranges.n == 0 && (!u->lines || !line_table_covers_any(u->lines));
}

/* libbfd's comp_unit_contains_address. */
static bool unit_holds(const struct dw_unit *u, uint64_t addr)
{
    return !u->error && (ranges_hold(u->ranges.v, u->ranges.n, addr) || (u->lines && line_table_covers(u->lines, addr)));
}

/* ---- a unit's functions: one walk over its DIEs for the roots, one over a root's for its tree ------------ */
struct walk {
    struct dwarf_lookup *l;
    struct dw_unit *u;
    const uint8_t *unit_end;
    struct dw_tree *tree;          /* collecting every function of one root's tree, or NULL: the unit's roots */
    uint32_t nest[MAX_NESTING];    /* the function (tree) or whether one is open (roots) at each level */
};

struct pc_attrs {
    struct walk *w;
    line_range_vec *list;
    uint32_t first, n;
    uint64_t low, high;
    bool high_relative, failed;
};

static int pc_attr(Dwarf_Attribute *a, void *arg)
{
    struct pc_attrs *s = arg;
    struct dw_unit *u = s->w->u;
    unsigned form = dwarf_whatform(a);
    if (!is_int_form(form))
        return DWARF_CB_OK;
    switch (dwarf_whatattr(a)) {
    case DW_AT_low_pc:
        s->low = int_value(a);
        break;
    case DW_AT_high_pc:
        s->high = int_value(a);
        s->high_relative = form != DW_FORM_addr;
        break;
    case DW_AT_ranges:
        if (!read_range_list(s->w->l, u, u->base, int_value(a), s->list, s->first, &s->n))
            s->failed = true;
        break;
    default:
        break;
    }
    return s->failed ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* A function's address ranges as libbfd's walk reads them (DW_AT_ranges, then DW_AT_low_pc/high_pc), appended
 * to list: *first and *n say where. */
static bool read_pc_ranges(struct walk *w, Dwarf_Die *die, line_range_vec *list, uint32_t *first, uint32_t *n)
{
    struct pc_attrs s = { .w = w, .list = list, .first = (uint32_t)list->n };
    if (dwarf_getattrs(die, pc_attr, &s, 0) != 1 || s.failed)
        return false;
    if (s.high_relative)
        s.high += s.low;
    if (s.high != 0 && !range_add(list, s.first, &s.n, s.low, s.high))
        return false;
    *first = s.first;
    *n = s.n;
    return true;
}

static bool add_function(struct walk *w, Dwarf_Die *die, int tag, int level)
{
    if (!w->tree) {                /* the unit's walk: a root when no function is open around it */
        for (int i = 0; i < level; i++)
            if (w->nest[i])
                return true;
        struct dw_root *r = vec_push(&w->u->roots);
        if (!r || w->u->roots.n >= NO_FUNC)
            return false;
        *r = (struct dw_root){ .die = dwarf_dieoffset(die), .tree = NO_FUNC };
        w->nest[level] = 1;
        return read_pc_ranges(w, die, &w->u->root_ranges, &r->first_range, &r->n_ranges);
    }
    struct dw_tree *t = w->tree;
    struct dw_func *f = vec_push(&t->funcs);
    if (!f || t->funcs.n >= NO_FUNC)
        return false;
    uint32_t index = (uint32_t)(t->funcs.n - 1);
    *f = (struct dw_func){ .die = dwarf_dieoffset(die), .caller = NO_FUNC, .tag = (uint16_t)tag };
    if (tag == DW_TAG_inlined_subroutine)
        for (int i = level; i-- > 0;)
            if (w->nest[i] != NO_FUNC) {
                f->caller = w->nest[i];
                break;
            }
    w->nest[level] = index;
    return read_pc_ranges(w, die, &t->ranges, &f->first_range, &f->n_ranges);
}

/* Walks die and its subtree; returns where what follows it starts (its next sibling, or the null entry that
 * ends its parent's children), NULL when the unit cannot be read. Each DIE is read once: a subtree's end is
 * where its last child's ends, so libdw never skips a subtree it would have to read again. */
static const uint8_t *walk_die(struct walk *w, Dwarf_Die *die, int level)
{
    int tag = dwarf_tag(die);
    if (tag < 0 || level >= MAX_NESTING)
        return NULL;
    w->nest[level] = w->tree ? NO_FUNC : 0;
    if ((tag == DW_TAG_subprogram || tag == DW_TAG_entry_point || tag == DW_TAG_inlined_subroutine) &&
        !add_function(w, die, tag, level))
        return NULL;
    Dwarf_Die child;
    int rc = dwarf_haschildren(die) > 0 ? dwarf_child(die, &child) : 1;
    if (rc < 0)
        return NULL;
    if (rc == 0) {
        for (;;) {
            const uint8_t *after = walk_die(w, &child, level + 1);
            if (!after || after >= w->unit_end)
                return NULL;
            if (*after == 0)
                return after + 1;
            Dwarf_CU *cu = child.cu;
            memset(&child, 0, sizeof(child));
            child.addr = (void *)after;
            child.cu = cu;
        }
    }
    Dwarf_Die next;
    rc = dwarf_siblingof(die, &next);   /* (a childless DIE, or one whose children are none: its entry alone) */
    if (rc < 0)
        return NULL;
    return next.addr ? (const uint8_t *)next.addr : w->unit_end;
}

static int cmp_pieces(const void *a, const void *b)
{
    const struct dw_piece *x = a, *y = b;
    if (x->low != y->low)
        return x->low < y->low ? -1 : 1;
    if (x->high != y->high)
        return x->high < y->high ? -1 : 1;
    return x->root < y->root ? -1 : x->root > y->root;
}

static bool index_roots(struct dw_unit *u)
{
    if (vec_reserve(&u->index, u->root_ranges.n) != 0)
        return false;
    for (uint32_t i = 0; i < u->roots.n; i++) {
        const struct dw_root *r = &u->roots.v[i];
        for (uint32_t k = 0; k < r->n_ranges; k++) {
            const struct line_range *range = &u->root_ranges.v[r->first_range + k];
            u->index.v[u->index.n++] = (struct dw_piece){ .low = range->low, .high = range->high, .root = i };
        }
    }
    if (u->index.n)
        qsort(u->index.v, u->index.n, sizeof(*u->index.v), cmp_pieces);
    uint64_t max_high = 0;
    for (size_t i = 0; i < u->index.n; i++)
        u->index.v[i].max_high = max_high = u->index.v[i].high > max_high ? u->index.v[i].high : max_high;
    return true;
}

static struct walk *walk_new(struct dwarf_lookup *l, struct dw_unit *u, struct dw_tree *tree)
{
    struct walk *w = malloc(sizeof(*w));
    if (w)
        *w = (struct walk){ .l = l, .u = u, .unit_end = l->info + u->end, .tree = tree };
    return w;
}

/* The unit's roots: one walk over its DIEs. */
static bool scan_unit(struct dwarf_lookup *l, struct dw_unit *u)
{
    Dwarf_Die unit, child;
    struct walk *w = dwarf_offdie(l->dw, u->die, &unit) ? walk_new(l, u, NULL) : NULL;
    if (!w)
        return false;
    int rc = u->has_children ? dwarf_child(&unit, &child) : 1;
    bool ok = rc >= 0;
    if (rc == 0) {
        for (;;) {
            const uint8_t *after = walk_die(w, &child, 0);
            if (!after) {
                ok = false;
                break;
            }
            if (after >= w->unit_end || *after == 0)
                break;
            Dwarf_CU *cu = child.cu;
            memset(&child, 0, sizeof(child));
            child.addr = (void *)after;
            child.cu = cu;
        }
    }
    free(w);
    return ok && index_roots(u);
}

/* A root's tree, read on first use; NULL when it cannot be. */
static struct dw_tree *root_tree(struct dwarf_lookup *l, struct dw_unit *u, uint32_t root, uint32_t *tree_index)
{
    struct dw_root *r = &u->roots.v[root];
    if (r->tree != NO_FUNC) {
        *tree_index = r->tree;
        return &u->trees.v[r->tree];
    }
    if (r->failed)
        return NULL;
    r->failed = true;
    l->touched += FAULT_AROUND;
    struct dw_tree *t = vec_push(&u->trees);
    if (!t || u->trees.n >= NO_FUNC)
        return NULL;
    Dwarf_Die die;
    struct walk *w = dwarf_offdie(l->dw, r->die, &die) ? walk_new(l, u, t) : NULL;
    bool ok = w && walk_die(w, &die, 0) != NULL && t->funcs.n > 0;
    free(w);
    if (!ok) {
        vec_free(&t->funcs);
        vec_free(&t->ranges);
        u->trees.n--;
        return NULL;
    }
    r->failed = false;
    r->tree = *tree_index = (uint32_t)(u->trees.n - 1);
    return t;
}

static struct line_table *decode_lines(struct dwarf_lookup *l, struct dw_unit *u)
{
    struct line_unit_info info = { .line = l->line.data, .line_size = l->line.size, .line_str = l->line_str.data,
                                   .line_str_size = l->line_str.size, .offset = u->stmt, .comp_dir = u->comp_dir,
                                   .addr_size = u->addr_size, .offset_size = u->offset_size };
    return line_table_decode(&info);
}

/* The unit's line table, read on first use (libbfd's comp_unit_maybe_decode_line_info without the walk). */
static bool unit_lines(struct dwarf_lookup *l, struct dw_unit *u)
{
    if (u->error)
        return false;
    if (u->lines)
        return true;
    if (!u->has_stmt) {
        u->error = true;
        return false;
    }
    if (u->stmt == 0 && l->line0) {
        u->lines = l->line0;
        return true;
    }
    u->lines = decode_lines(l, u);
    l->touched += FAULT_AROUND + line_table_bytes(u->lines);
    if (!u->lines) {
        u->error = true;
        return false;
    }
    if (u->stmt == 0)
        l->line0 = u->lines;
    else
        u->owns_lines = true;
    return true;
}

/* Lines and functions (libbfd's comp_unit_maybe_decode_line_info). */
static bool unit_ready(struct dwarf_lookup *l, struct dw_unit *u)
{
    if (!unit_lines(l, u))
        return false;
    if (!u->scanned) {
        u->scanned = true;
        bool ok = scan_unit(l, u);
        l->touched += u->end - u->start;
        if (!ok) {
            u->error = true;
            return false;
        }
    }
    return true;
}

/* The unit whose bytes hold .debug_info offset off, read (in order) if it was not yet; NULL when none. */
static struct dw_unit *unit_at(struct dwarf_lookup *l, Dwarf_Off off, uint32_t *index)
{
    for (;;) {
        size_t lo = 0, hi = l->units.n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (l->units.v[mid].end <= off)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < l->units.n && off >= l->units.v[lo].start) {
            *index = (uint32_t)lo;
            return &l->units.v[lo];
        }
        if (lo < l->units.n || !read_next_unit(l))
            return NULL;
    }
}

/* ---- names (libbfd's find_abstract_instance and the name part of its walk) ------------------------------ */
struct name_attrs {
    struct dwarf_lookup *l;
    uint32_t unit;                 /* index of the unit the DIE is in */
    const char **name;
    bool *is_linkage;
    bool *has_file;
    int32_t *decl_line;
    struct dw_func *f;             /* the function itself (call site attributes), or NULL for an origin */
    int depth;
    bool failed;
};

static bool read_origin(struct name_attrs *s, Dwarf_Attribute *a);

static int name_attr(Dwarf_Attribute *a, void *arg)
{
    struct name_attrs *s = arg;
    unsigned form = dwarf_whatform(a);
    struct dw_unit *u = &s->l->units.v[s->unit];
    switch (dwarf_whatattr(a)) {
    case DW_AT_call_file:
        if (s->f && is_int_form(form) && unit_lines(s->l, u))
            s->f->caller_file = line_table_file(u->lines, int_value(a));
        break;
    case DW_AT_call_line:
        if (s->f && is_int_form(form))
            s->f->caller_line = (uint32_t)int_value(a);
        break;
    case DW_AT_abstract_origin:
        if (s->f && is_int_form(form) && !read_origin(s, a))
            s->failed = true;
        break;
    case DW_AT_specification:
        if (is_int_form(form) && !read_origin(s, a))
            s->failed = true;
        break;
    case DW_AT_name:
        if (!*s->name && is_str_form(form)) {
            *s->name = str_value(a);
            if (name_is_linkage(u->lang))
                *s->is_linkage = true;
        }
        break;
    case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name:
        if (is_str_form(form)) {
            *s->name = str_value(a);
            *s->is_linkage = true;
        }
        break;
    case DW_AT_decl_file:
        if (!s->f && !unit_lines(s->l, u))
            s->failed = true;               /* (libbfd reads the origin's unit's lines before the number) */
        else if (is_int_form(form))
            *s->has_file = true;
        break;
    case DW_AT_decl_line:
        if (is_int_form(form))
            *s->decl_line = (int32_t)int_value(a);
        break;
    default:
        break;
    }
    return s->failed ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* The DIE an abstract origin or specification names, its attributes read into the same name. */
static bool read_origin(struct name_attrs *s, Dwarf_Attribute *a)
{
    unsigned form = dwarf_whatform(a);
    if (s->depth + 1 >= MAX_ORIGIN_DEPTH || form == DW_FORM_ref_sig8 || form == DW_FORM_GNU_ref_alt)
        return false;
    Dwarf_Die target;
    if (!dwarf_formref_die(a, &target)) {
        /* libbfd reads nothing, and fails nothing, for a DW_FORM_ref_addr of 0 (which names no DIE) */
        const uint8_t *v = a->valp;
        unsigned size = s->l->units.v[s->unit].offset_size;
        bool zero = form == DW_FORM_ref_addr && v;
        for (unsigned i = 0; zero && i < size; i++)
            zero = v[i] == 0;
        return zero;
    }
    uint32_t unit = s->unit;
    if (form == DW_FORM_ref_addr && !unit_at(s->l, dwarf_dieoffset(&target), &unit))
        return false;
    struct name_attrs origin = { .l = s->l, .unit = unit, .name = s->name, .is_linkage = s->is_linkage,
                                 .has_file = s->has_file, .decl_line = s->decl_line, .depth = s->depth + 1 };
    return dwarf_getattrs(&target, name_attr, &origin, 0) == 1 && !origin.failed;
}

/* The function f names (its tree exists: it was read to find f). */
static struct dw_func *func_of(struct dwarf_lookup *l, struct dwarf_func_ref f)
{
    return &l->units.v[f.unit].trees.v[f.tree].funcs.v[f.index];
}

/* A function's names and call site, read on first use. */
static struct dw_func *func_named(struct dwarf_lookup *l, struct dwarf_func_ref ref)
{
    struct dw_func *f = func_of(l, ref);
    if (f->names == NAMES_UNREAD) {
        f->names = NAMES_READ;
        l->touched += FAULT_AROUND;
        Dwarf_Die die;
        struct name_attrs s = { .l = l, .unit = ref.unit, .name = &f->name, .is_linkage = &f->is_linkage,
                                .has_file = &f->has_file, .decl_line = &f->decl_line, .f = f };
        if (dwarf_offdie(l->dw, f->die, &die))
            (void)dwarf_getattrs(&die, name_attr, &s, 0);   /* (what was read before a failure stays) */
    }
    return f;
}

/* The length of function f's shortest range that holds addr, UINT64_MAX when none does. */
static uint64_t holding_length(const struct dw_tree *t, const struct dw_func *f, uint64_t addr)
{
    uint64_t len = UINT64_MAX;
    for (uint32_t k = 0; k < f->n_ranges; k++) {
        const struct line_range *r = &t->ranges.v[f->first_range + k];
        if (addr >= r->low && addr < r->high && r->high - r->low < len)
            len = r->high - r->low;
    }
    return len;
}

/* ---- lookups ------------------------------------------------------------------------------------------- */
/* The function with the smallest range holding addr (the later one among equals), among the trees of the roots
 * whose ranges hold it; false when none. accept, when given, must also hold for it. */
static bool best_function(struct dwarf_lookup *l, uint32_t unit, uint64_t addr,
                          bool (*accept)(struct dwarf_lookup *l, struct dwarf_func_ref f, const void *ctx),
                          const void *ctx, struct dwarf_func_ref *best)
{
    struct dw_unit *u = &l->units.v[unit];
    size_t lo = 0, hi = u->index.n;
    while (lo < hi) {                   /* the first piece whose highest end so far is past addr */
        size_t mid = lo + (hi - lo) / 2;
        if (u->index.v[mid].max_high <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool found = false;
    uint64_t best_len = UINT64_MAX;
    Dwarf_Off best_die = 0;
    uint32_t last_root = NO_FUNC;
    for (size_t i = lo; i < l->units.v[unit].index.n && l->units.v[unit].index.v[i].low <= addr; i++) {
        const struct dw_piece p = l->units.v[unit].index.v[i];
        uint32_t tree_index;
        if (addr >= p.high || p.root == last_root)
            continue;
        last_root = p.root;
        const struct dw_tree *t = root_tree(l, &l->units.v[unit], p.root, &tree_index);
        for (uint32_t f = 0; t && f < t->funcs.n; f++) {
            uint64_t len = holding_length(t, &t->funcs.v[f], addr);
            if (len == UINT64_MAX || len > best_len || (len == best_len && t->funcs.v[f].die < best_die))
                continue;
            struct dwarf_func_ref ref = { .unit = unit, .tree = tree_index, .index = f };
            if (accept && !accept(l, ref, ctx))
                continue;
            t = &l->units.v[unit].trees.v[tree_index];   /* (accept may read more, trees among it) */
            *best = ref;
            best_len = len;
            best_die = t->funcs.v[f].die;
            found = true;
        }
    }
    return found;
}

/* libbfd's comp_unit_find_nearest_line. */
static bool find_in_unit(struct dwarf_lookup *l, uint32_t unit, uint64_t addr, struct dwarf_nearest *out)
{
    if (!unit_ready(l, &l->units.v[unit]))
        return false;
    bool have = best_function(l, unit, addr, NULL, NULL, &out->func);
    if (!have)
        out->func.index = NO_FUNC;
    out->inlined = have && func_of(l, out->func)->tag == DW_TAG_inlined_subroutine;
    bool line_found = line_table_lookup(l->units.v[unit].lines, addr, &out->file, &out->line);
    return line_found || have;
}

static void nothing_found(struct dwarf_nearest *out)
{
    *out = (struct dwarf_nearest){ .func = { .index = NO_FUNC } };
}

static bool nearest(struct dwarf_lookup *l, uint64_t addr, struct dwarf_nearest *out)
{
    nothing_found(out);
    /* the units read so far whose ranges (or line table) hold it */
    for (uint32_t i = 0; i < l->units.n; i++) {
        struct dw_unit *u = &l->units.v[i];
        if ((ranges_hold(u->ranges.v, u->ranges.n, addr) || (u->lines && line_table_covers(u->lines, addr))) &&
            find_in_unit(l, i, addr, out))
            return true;
        nothing_found(out);
    }
    /* then the next ones, in order, trying each that holds it or has no ranges at all */
    while (read_next_unit(l)) {
        uint32_t i = (uint32_t)(l->units.n - 1);
        struct dw_unit *u = &l->units.v[i];
        if ((unit_rangeless(u) || unit_holds(u, addr)) && find_in_unit(l, i, addr, out))
            return true;
        nothing_found(out);
    }
    return false;
}

bool dwarf_lookup_nearest(struct dwarf_lookup *l, uint64_t addr, struct dwarf_nearest *out)
{
    bool found = nearest(l, addr, out);
    release_pages(l);
    return found;
}

unsigned dwarf_lookup_ties(struct dwarf_lookup *l, uint64_t addr)
{
    struct dwarf_nearest near;
    if (!dwarf_lookup_nearest(l, addr, &near) || !dwarf_func_valid(near.func))
        return 0;
    const struct dw_tree *t = &l->units.v[near.func.unit].trees.v[near.func.tree];
    uint64_t len = holding_length(t, &t->funcs.v[near.func.index], addr);
    unsigned ties = 0;
    for (uint32_t f = t->funcs.v[near.func.index].caller; f != NO_FUNC && holding_length(t, &t->funcs.v[f], addr) == len;
         f = t->funcs.v[f].caller)
        ties++;
    return ties;
}

bool dwarf_func_valid(struct dwarf_func_ref f)
{
    return f.index != NO_FUNC;
}

const char *dwarf_func_name(struct dwarf_lookup *l, struct dwarf_func_ref f, bool *is_linkage)
{
    const struct dw_func *fn = func_named(l, f);
    *is_linkage = fn->is_linkage;
    return fn->name;
}

void dwarf_func_rename(struct dwarf_lookup *l, struct dwarf_func_ref f, const char *name)
{
    struct dw_func *fn = func_named(l, f);
    if (name)
        fn->name = name;
}

void dwarf_func_mark_linkage(struct dwarf_lookup *l, struct dwarf_func_ref f)
{
    func_named(l, f)->is_linkage = true;
}

uint64_t dwarf_func_low(struct dwarf_lookup *l, struct dwarf_func_ref f)
{
    const struct dw_tree *t = &l->units.v[f.unit].trees.v[f.tree];
    const struct dw_func *fn = &t->funcs.v[f.index];
    return fn->n_ranges ? t->ranges.v[fn->first_range].low : 0;
}

bool dwarf_func_caller(struct dwarf_lookup *l, struct dwarf_func_ref *f, const char **file, const char **name,
                       unsigned *line)
{
    if (f->index == NO_FUNC)
        return false;
    const struct dw_func *fn = func_named(l, *f);
    if (fn->caller == NO_FUNC)
        return false;
    *file = fn->caller_file;
    *line = fn->caller_line;
    bool linkage;
    struct dwarf_func_ref caller = { .unit = f->unit, .tree = f->tree, .index = fn->caller };
    *name = dwarf_func_name(l, caller, &linkage);
    *f = caller;
    return true;
}

/* ---- declaration lines (libbfd's bfd_find_line for a function symbol) ------------------------------------ */
struct decl_query {
    const char *symbol;
    bool exact;                    /* the name must be the symbol's (else a part of it, and a file declared) */
};

static bool decl_accept(struct dwarf_lookup *l, struct dwarf_func_ref f, const void *ctx)
{
    const struct decl_query *q = ctx;
    const struct dw_func *fn = func_named(l, f);
    if (!fn->name)
        return false;
    return q->exact ? strcmp(q->symbol, fn->name) == 0 : fn->has_file && strstr(q->symbol, fn->name) != NULL;
}

static bool decl_in_unit(struct dwarf_lookup *l, uint32_t unit, uint64_t addr, const struct decl_query *q,
                         unsigned *line)
{
    struct dwarf_func_ref f;
    if (!unit_ready(l, &l->units.v[unit]) || !best_function(l, unit, addr, decl_accept, q, &f))
        return false;
    *line = (unsigned)func_named(l, f)->decl_line;
    return true;
}

/* Whether libbfd would look units up in unit i for a symbol at addr. */
static bool decl_candidate(const struct dw_unit *u, uint64_t addr, bool function)
{
    return !function || unit_rangeless(u) || unit_holds(u, addr);
}

static bool decl_line(struct dwarf_lookup *l, const char *symbol, uint64_t addr, bool function, unsigned *line)
{
    *line = 0;
    if (l->decl_lookups++ >= HASHED_LOOKUPS_AFTER) {
        /* libbfd's hash tables of every unit read: the functions named exactly so, the smallest range holding
           addr; a unit read without a line table turns them off for good */
        bool hashed = true;
        for (uint32_t i = 0; i < l->units.n && hashed; i++)
            hashed = l->units.v[i].has_stmt;
        struct decl_query exact = { symbol, true };
        if (hashed)
            for (uint32_t i = 0; i < l->units.n; i++)
                if (decl_candidate(&l->units.v[i], addr, true) && decl_in_unit(l, i, addr, &exact, line))
                    return true;
    }
    struct decl_query part = { symbol, false };
    for (uint32_t i = (uint32_t)l->units.n; i-- > 0;)        /* libbfd's list: the last read first */
        if (decl_candidate(&l->units.v[i], addr, function) && decl_in_unit(l, i, addr, &part, line))
            return true;
    while (read_next_unit(l)) {
        uint32_t i = (uint32_t)(l->units.n - 1);
        if (decl_candidate(&l->units.v[i], addr, function) && decl_in_unit(l, i, addr, &part, line))
            return true;
    }
    *line = 0;
    return false;
}

bool dwarf_lookup_decl_line(struct dwarf_lookup *l, const char *symbol, uint64_t addr, bool function, unsigned *line)
{
    bool found = decl_line(l, symbol, addr, function, line);
    release_pages(l);
    return found;
}
