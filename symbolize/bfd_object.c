/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bfd_object.c: one mapped object file opened with libbfd: its function symbols (static, else dynamic,
 * plus PLT entries) sorted for binary search, and its DWARF lines and inline chains, taken from a separate
 * debug file (elf/'s one lookup: local places, then debuginfod) when the object itself has no DWARF or no
 * symbol table. The DWARF is read by dwarf_lookup.c (only the units that hold the addresses asked for, each
 * once) with libbfd's rules for the names it gives; libbfd's own reader (bfd_find_nearest_line, which reads all
 * of the DWARF into memory) stays for the objects dwarf_lookup.c declines and as the reference the tests
 * compare with. Only called on cache misses. */
#include "elf/elf_file.h"
#include "symbolize/symbolize_internal.h"

#include <bfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct func_symbol {
    uint64_t vaddr;
    uint64_t end;       /* next symbol's start or the end of its section, whichever comes first */
    const char *name;   /* owned by the bfd (or by synthetic) */
    asymbol *sym;       /* the symbol itself, for its declaration line */
    int rank;           /* higher wins among symbols at the same address */
    int decl_line;      /* DW_AT_decl_line of the function, 0 if none, -1 not looked up yet */
};

struct symbol_table {
    asymbol **syms;     /* NULL-terminated; libbfd fills it */
    long n;
};

struct bfd_object {
    bfd *main;
    struct dwarf_lookup *dwarf;    /* line_bfd's DWARF through dwarf_lookup.c, or NULL: through libbfd */
    bfd *debug;                    /* separate debug file, or NULL */
    bfd *line_bfd;                 /* where DWARF comes from: debug if it has .debug_info, else main */
    struct symbol_table main_static, main_dynamic, debug_static;
    asymbol **line_syms;           /* symbols for line_bfd, never NULL */
    asymbol *synthetic;            /* PLT entries, malloc'd by libbfd */
    struct func_symbol *funcs;
    size_t n_funcs;
    bool dynamic_only;             /* funcs come from .dynsym only: nearest symbol may be far off */
    struct elf_file elf;           /* the object's own headers: offsets to addresses, build-id, debuglink */
    struct debug_file_result debug_file;   /* what the debug-file lookup found and tried */
};

static asymbol *no_symbols[1] = { NULL };

/* libbfd's search of an ELF object's symbols for the function holding an address, with its one-entry cache
 * (declared in libbfd's elf-bfd.h, which binutils-dev does not install; exported by libbfd 2.40): what
 * bfd_find_nearest_line names a function by when DWARF gives no linkage name, called here at the same points,
 * so that names come out as they did through libbfd. */
extern asymbol *_bfd_elf_find_function(bfd *abfd, asymbol **symbols, asection *section, bfd_vma offset,
                                       const char **filename_ptr, const char **functionname_ptr);

static void read_symbols(bfd *b, bool dynamic, struct symbol_table *t)
{
    t->syms = NULL;
    t->n = 0;
    if (!dynamic && !(bfd_get_file_flags(b) & HAS_SYMS))
        return;
    long bytes = dynamic ? bfd_get_dynamic_symtab_upper_bound(b) : bfd_get_symtab_upper_bound(b);
    if (bytes <= 0)
        return;
    asymbol **syms = malloc((size_t)bytes);
    if (!syms)
        return;
    long n = dynamic ? bfd_canonicalize_dynamic_symtab(b, syms) : bfd_canonicalize_symtab(b, syms);
    if (n <= 0) {
        free(syms);
        return;
    }
    t->syms = syms;
    t->n = n;
}

static int symbol_rank(const asymbol *sym)
{
    int rank = 0;
    if (sym->flags & BSF_FUNCTION)
        rank += 4;
    if (sym->flags & BSF_GLOBAL)
        rank += 2;
    else if (sym->flags & BSF_WEAK)
        rank += 1;
    return rank;
}

static bool is_function_symbol(const asymbol *sym)
{
    const asection *sec = sym->section;
    if (!sec || bfd_is_und_section(sec) || bfd_is_com_section(sec) || bfd_is_abs_section(sec))
        return false;
    if (sym->flags & (BSF_SECTION_SYM | BSF_FILE | BSF_DEBUGGING | BSF_WARNING | BSF_INDIRECT))
        return false;
    if (!(sym->flags & BSF_FUNCTION) && !(sec->flags & SEC_CODE))
        return false;
    const char *name = bfd_asymbol_name(sym);
    return name && name[0] && name[0] != '$';
}

static int cmp_func(const void *a, const void *b)
{
    const struct func_symbol *x = a, *y = b;
    if (x->vaddr != y->vaddr)
        return x->vaddr < y->vaddr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank > y->rank ? -1 : 1;   /* best first */
    return strcmp(x->name, y->name);
}

typedef VEC_OF(struct func_symbol) func_symbol_vec;

static int append_funcs(func_symbol_vec *funcs, asymbol *const *syms, long count)
{
    for (long i = 0; i < count; i++) {
        asymbol *sym = syms[i];
        if (!is_function_symbol(sym))
            continue;
        struct func_symbol *f = vec_push(funcs);
        if (!f)
            return -1;
        const asection *sec = sym->section;
        uint64_t vaddr = bfd_asymbol_value(sym);
        *f = (struct func_symbol){
            .vaddr = vaddr,
            .end = bfd_section_vma(sec) + bfd_section_size(sec),
            .name = bfd_asymbol_name(sym),
            .sym = sym,
            .rank = symbol_rank(sym),
            .decl_line = -1,
        };
    }
    return 0;
}

/* Builds the sorted function table: one entry per address (the best-ranked name), each ending where the
 * next begins or where its section ends. */
static void build_function_table(struct bfd_object *o)
{
    const struct symbol_table *primary = o->debug_static.n ? &o->debug_static
                                         : o->main_static.n ? &o->main_static : &o->main_dynamic;
    o->dynamic_only = primary == &o->main_dynamic;
    func_symbol_vec table = { 0 };
    if (append_funcs(&table, primary->syms, primary->n) != 0)
        goto fail;
    if (o->main_dynamic.n) {
        long n_synth = bfd_get_synthetic_symtab(o->main, o->main_static.n, o->main_static.syms,
                                                o->main_dynamic.n, o->main_dynamic.syms, &o->synthetic);
        if (n_synth > 0) {
            asymbol **ptrs = malloc((size_t)n_synth * sizeof(*ptrs));
            if (!ptrs)
                goto fail;
            for (long i = 0; i < n_synth; i++)
                ptrs[i] = &o->synthetic[i];
            int rc = append_funcs(&table, ptrs, n_synth);
            free(ptrs);
            if (rc != 0)
                goto fail;
        }
    }
    struct func_symbol *funcs = table.v;
    size_t n = table.n;
    if (n)
        qsort(funcs, n, sizeof(*funcs), cmp_func);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || funcs[kept - 1].vaddr != funcs[i].vaddr)
            funcs[kept++] = funcs[i];
    for (size_t i = 0; i + 1 < kept; i++)
        if (funcs[i + 1].vaddr < funcs[i].end)
            funcs[i].end = funcs[i + 1].vaddr;
    o->funcs = funcs;
    o->n_funcs = kept;
    return;
fail:
    vec_free(&table);
    o->funcs = NULL;
    o->n_funcs = 0;
}

static bfd *open_bfd(const char *path)
{
    bfd *b = bfd_openr(path, NULL);
    if (!b)
        return NULL;
    b->flags |= BFD_DECOMPRESS;
    if (!bfd_check_format(b, bfd_object)) {
        bfd_close(b);
        return NULL;
    }
    return b;
}

static bool has_dwarf(bfd *b)
{
    const asection *s = bfd_get_section_by_name(b, ".debug_info");
    return s && bfd_section_size(s) > 0 && (s->flags & SEC_HAS_CONTENTS);
}

static void attach_debug_file(struct bfd_object *o, const char *root, const char *path,
                              struct debug_files *debug_files)
{
    if (!debug_file_find(debug_files, &o->elf, root, path, true, &o->debug_file))
        return;
    o->debug = open_bfd(o->debug_file.path);
    if (o->debug)
        read_symbols(o->debug, false, &o->debug_static);
}

struct bfd_object *bfd_object_open(const char *root, const char *path, struct debug_files *debug_files)
{
    return bfd_object_open_as(root, path, debug_files, DWARF_OWN_READER);
}

struct bfd_object *bfd_object_open_as(const char *root, const char *path, struct debug_files *debug_files,
                                      enum dwarf_reader reader)
{
    if (!root)
        root = "";
    char *full = NULL;
    if (asprintf(&full, "%s%s", root, path) < 0)
        return NULL;
    struct bfd_object *o = calloc(1, sizeof(*o));
    if (!o || elf_file_open(&o->elf, full) != 0 || !(o->main = open_bfd(full))) {
        if (o)
            elf_file_close(&o->elf);
        free(o);
        free(full);
        return NULL;
    }
    free(full);
    read_symbols(o->main, false, &o->main_static);
    read_symbols(o->main, true, &o->main_dynamic);
    if (!has_dwarf(o->main) || !o->main_static.n)
        attach_debug_file(o, root, path, debug_files);
    o->line_bfd = o->debug && has_dwarf(o->debug) ? o->debug : o->main;
    if (o->line_bfd == o->debug)
        o->line_syms = o->debug_static.syms ? o->debug_static.syms : no_symbols;
    else
        o->line_syms = o->main_static.syms ? o->main_static.syms
                       : o->main_dynamic.syms ? o->main_dynamic.syms : no_symbols;
    build_function_table(o);
    if (reader == DWARF_OWN_READER && has_dwarf(o->line_bfd))
        o->dwarf = dwarf_lookup_open(bfd_get_filename(o->line_bfd));
    return o;
}

void bfd_object_close(struct bfd_object *o)
{
    if (!o)
        return;
    dwarf_lookup_close(o->dwarf);
    free(o->funcs);
    free(o->synthetic);
    free(o->main_static.syms);
    free(o->main_dynamic.syms);
    free(o->debug_static.syms);
    if (o->debug)
        bfd_close(o->debug);
    bfd_close(o->main);
    elf_file_close(&o->elf);
    free(o);
}

bool bfd_object_offset_to_vaddr(const struct bfd_object *o, uint64_t offset, uint64_t *vaddr)
{
    return elf_file_offset_to_vaddr(&o->elf, offset, vaddr);
}

static struct func_symbol *find_function(const struct bfd_object *o, uint64_t vaddr)
{
    size_t lo = 0, hi = o->n_funcs;
    while (lo < hi) {   /* first entry with start > vaddr */
        size_t mid = lo + (hi - lo) / 2;
        if (o->funcs[mid].vaddr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    struct func_symbol *f = &o->funcs[lo - 1];
    return vaddr < f->end ? f : NULL;
}

static asection *section_containing(bfd *b, uint64_t vaddr)
{
    for (asection *s = b->sections; s; s = s->next) {
        if (!(s->flags & SEC_ALLOC))
            continue;
        uint64_t vma = bfd_section_vma(s);
        if (vaddr >= vma && vaddr - vma < bfd_section_size(s))
            return s;
    }
    return NULL;
}

static bool is_mangled(const char *name)
{
    return name && (strncmp(name, "_Z", 2) == 0 || strncmp(name, "_R", 2) == 0);
}

/* The line where fn is declared (DWARF's DW_AT_decl_line, through libbfd's bfd_find_line), looked up on
 * the function's first use only; 0 when DWARF does not say. */
static unsigned decl_line_of(struct bfd_object *o, struct func_symbol *fn)
{
    if (fn->decl_line < 0) {
        const char *file = NULL;
        unsigned line = 0;
        if (o->dwarf)
            fn->decl_line = dwarf_lookup_decl_line(o->dwarf, bfd_asymbol_name(fn->sym), bfd_asymbol_value(fn->sym),
                                                   (fn->sym->flags & BSF_FUNCTION) != 0, &line) ? (int)line : 0;
        else
            fn->decl_line = o->line_bfd && bfd_find_line(o->line_bfd, o->line_syms, fn->sym, &file, &line)
                            ? (int)line : 0;
    }
    return (unsigned)fn->decl_line;
}

/* bfd_find_nearest_line over dwarf_lookup.c: the DWARF's line and function, named as libbfd names it (a
 * function without a linkage name is looked up in the symbols once, and renamed after the symbol that starts
 * where it does), then libbfd's fallback to the symbols alone. *chain: the inlined call whose callers follow. */
static bool dwarf_nearest_line(struct bfd_object *o, asection *sec, uint64_t vaddr, const char **file,
                               const char **func, unsigned *line, struct dwarf_func_ref *chain)
{
    struct dwarf_nearest near;
    bool found = dwarf_lookup_nearest(o->dwarf, vaddr, &near);
    *file = near.file;
    *line = near.line;
    *func = NULL;
    *chain = near.func;
    if (!near.inlined)
        chain->index = UINT32_MAX;
    bool have_function = dwarf_func_valid(near.func), linkage = false;
    const char *dwarf_name = have_function ? dwarf_func_name(o->dwarf, near.func, &linkage) : NULL;
    if (have_function && linkage) {
        *func = dwarf_name;
        return true;
    }
    uint64_t offset = vaddr - bfd_section_vma(sec);
    const char *symbol_file = NULL, *symbol_name = NULL;
    asymbol *fun = _bfd_elf_find_function(o->line_bfd, o->line_syms, sec, offset, *file ? NULL : &symbol_file,
                                          &symbol_name);
    if (fun) {
        if (!*file)
            *file = symbol_file;
        *func = symbol_name;
        found = true;
    }
    if (have_function) {
        if (!fun)
            *func = dwarf_name;
        else if (fun->value + bfd_section_vma(sec) == dwarf_func_low(o->dwarf, near.func))
            dwarf_func_rename(o->dwarf, near.func, symbol_name);
        dwarf_func_mark_linkage(o->dwarf, near.func);
    }
    /* (when DWARF found nothing, libbfd's symbol fallback asks _bfd_elf_find_function again: it found nothing) */
    return found;
}

void bfd_object_lookup(struct bfd_object *o, uint64_t vaddr, struct raw_lookup *out)
{
    memset(out, 0, sizeof(*out));
    struct func_symbol *fn = find_function(o, vaddr);
    if (fn) {
        out->function_vaddr = fn->vaddr;
        out->have_function = true;
    }
    asection *sec = section_containing(o->line_bfd, vaddr);
    const char *file = NULL, *func = NULL;
    unsigned line = 0, discriminator = 0;
    struct dwarf_func_ref chain;
    if (sec && o->dwarf && dwarf_nearest_line(o, sec, vaddr, &file, &func, &line, &chain) && (file || func)) {
        out->frames[out->n++] = (struct raw_frame){ .name = func, .file = file, .line = line };
        while (out->n < RAW_FRAMES_MAX && dwarf_func_caller(o->dwarf, &chain, &file, &func, &line))
            out->frames[out->n++] = (struct raw_frame){ .name = func, .file = file, .line = line };
    } else if (sec && !o->dwarf &&
               bfd_find_nearest_line_discriminator(o->line_bfd, sec, o->line_syms, vaddr - bfd_section_vma(sec),
                                                   &file, &func, &line, &discriminator) &&
               (file || func)) {
        out->frames[out->n++] = (struct raw_frame){ .name = func, .file = file, .line = line };
        while (out->n < RAW_FRAMES_MAX && bfd_find_inliner_info(o->line_bfd, &file, &func, &line))
            out->frames[out->n++] = (struct raw_frame){ .name = func, .file = file, .line = line };
    }
    if (out->n == 0)
        out->frames[out->n++] = (struct raw_frame){ 0 };
    /* The out-of-line frame: the symbol table's name is the full (mangled) one; DWARF may only have a
     * plain DW_AT_name. Keep DWARF's when it is a linkage name, or when the symbol table has only
     * exported symbols (the nearest may belong to another function). */
    struct raw_frame *outer = &out->frames[out->n - 1];
    if (fn && !(outer->name && (is_mangled(outer->name) || o->dynamic_only)))
        outer->name = fn->name;
    if (fn && !o->dynamic_only)
        out->function_line = decl_line_of(o, fn);
}

size_t bfd_object_build_id(const struct bfd_object *o, const uint8_t **id)
{
    return elf_file_build_id(&o->elf, id);
}

bool bfd_object_has_symbols(const struct bfd_object *o)
{
    return o->main_static.n || o->debug_static.n || has_dwarf(o->line_bfd);
}

bool bfd_object_has_dynamic_symbols(const struct bfd_object *o)
{
    return o->n_funcs > 0;   /* exported functions, PLT entries */
}

const struct debug_file_result *bfd_object_debug_file(const struct bfd_object *o)
{
    return &o->debug_file;
}

struct dwarf_lookup *bfd_object_dwarf(const struct bfd_object *o)
{
    return o->dwarf;
}
