/* runtime_probes.c: finding runtime poll functions by mangled name (a table: adding a runtime is a row). */
#include "sampler/probes/runtime_probes.h"

#include <asm/perf_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each rule matches a mangled name by its parts in order; the last must end the name (before a legacy
 * hash). tokio 1.x: `tokio::runtime::task::harness::Harness<T,S>::poll`, its first argument (%rdi) is the
 * task's header pointer, stable for the task's life. */
struct runtime_probe_rule {
    const char *runtime;
    const char *legacy;        /* Itanium-style Rust legacy mangling: a substring, followed by "17h<hash>E" */
    const char *v0_parts[4];   /* Rust v0 mangling: substrings in order */
    const char *v0_last;       /* the method's identifier: ends the name, or is followed by the instantiating
                                  crate ("C..." or a backref "B...") */
    int id_register;
};

static const struct runtime_probe_rule rules[] = {
    { "tokio", "5tokio7runtime4task7harness20Harness$LT$T$C$S$GT$4poll17h",
      { "5tokio", "7runtime", "4task7harness", "7Harness" }, "4poll", PERF_REG_X86_DI },
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

static const struct runtime_probe_rule *match_rule(const char *name)
{
    for (size_t i = 0; i < N_RULES; i++) {
        const struct runtime_probe_rule *r = &rules[i];
        if (strncmp(name, "_ZN", 3) == 0 && strstr(name, r->legacy))
            return r;
        if (strncmp(name, "_R", 2) == 0) {
            const char *at = name;
            size_t k = 0;
            for (; k < 4 && r->v0_parts[k]; k++) {
                const char *next = strstr(at, r->v0_parts[k]);
                if (!next)
                    break;
                at = next + strlen(r->v0_parts[k]);
            }
            const char *last = k == 4 ? strstr(at, r->v0_last) : NULL;
            while (last) {     /* the last occurrence decides */
                const char *again = strstr(last + 1, r->v0_last);
                if (!again)
                    break;
                last = again;
            }
            if (last) {
                char after = last[strlen(r->v0_last)];
                if (after == '\0' || after == 'C' || after == 'B')   /* end, crate, or crate backref */
                    return r;
            }
        }
    }
    return NULL;
}

const char *runtime_probes_match(const char *mangled)
{
    const struct runtime_probe_rule *r = match_rule(mangled);
    return r ? r->runtime : NULL;
}

static int add(struct runtime_probe_list *l, const struct runtime_probe_rule *r, uint64_t offset)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].file_offset == offset)
            return 0;          /* aliases of one function */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct runtime_probe *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct runtime_probe){ r->runtime, offset, r->id_register };
    return 0;
}

/* Scan symbols of sym_file; offsets come from code_file's program headers (the same file, or the stripped
 * binary whose debug file sym_file is). */
static int scan(const struct elf_file *sym_file, const struct elf_file *code_file, const char *table,
                const char *strings, struct runtime_probe_list *out)
{
    const Elf64_Shdr *symtab = elf_file_section(sym_file, table);
    const Elf64_Shdr *strtab = elf_file_section(sym_file, strings);
    size_t sym_size, str_size;
    const uint8_t *syms = elf_file_section_data(sym_file, symtab, &sym_size);
    const char *strs = (const char *)elf_file_section_data(sym_file, strtab, &str_size);
    if (!syms || !strs || str_size == 0)
        return 0;
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= sym_size; off += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        memcpy(&sym, syms + off, sizeof(sym));
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_shndx == SHN_UNDEF ||
            sym.st_name >= str_size || !memchr(strs + sym.st_name, '\0', str_size - sym.st_name))
            continue;
        const struct runtime_probe_rule *r = match_rule(strs + sym.st_name);
        if (!r)
            continue;
        int64_t file_offset = elf_file_vaddr_to_offset(code_file, sym.st_value);
        if (file_offset < 0)
            continue;
        if (add(out, r, (uint64_t)file_offset) != 0)
            return -1;
    }
    return 0;
}

int runtime_probes_find(const struct elf_file *ef, struct runtime_probe_list *out)
{
    memset(out, 0, sizeof(*out));
    if (elf_file_section(ef, ".symtab"))
        return scan(ef, ef, ".symtab", ".strtab", out);
    return scan(ef, ef, ".dynsym", ".dynstr", out);
}

static int scan_debug_file(const struct elf_file *ef, const char *debug_path, struct runtime_probe_list *out)
{
    struct elf_file debug;
    if (elf_file_open(&debug, debug_path) != 0)
        return 1;              /* not there: try the next place */
    int rc = scan(&debug, ef, ".symtab", ".strtab", out);
    elf_file_close(&debug);
    return rc;
}

int runtime_probes_find_with_debug(const struct elf_file *ef, const char *path, const char *root,
                                   struct runtime_probe_list *out)
{
    if (runtime_probes_find(ef, out) != 0)
        return -1;
    if (out->n > 0 || elf_file_section(ef, ".symtab"))
        return 0;
    char candidate[4096];
    /* .gnu_debuglink: a file name (then a CRC, not checked: a wrong file simply has no matching symbols) */
    size_t link_size;
    const char *link = (const char *)elf_file_section_data(ef, elf_file_section(ef, ".gnu_debuglink"), &link_size);
    if (link && link_size > 1 && memchr(link, '\0', link_size) && !strchr(link, '/')) {
        const char *slash = strrchr(path, '/');
        int dir_len = slash ? (int)(slash - path) : 0;
        const char *root_dir = path + strlen(root ? root : "");
        int root_dir_len = slash && slash >= root_dir ? (int)(slash - root_dir) : 0;
        const char *formats[3] = { "%.*s/%s", "%.*s/.debug/%s", NULL };
        for (int f = 0; f < 3; f++) {
            if (formats[f])
                snprintf(candidate, sizeof(candidate), formats[f], dir_len, path, link);
            else
                snprintf(candidate, sizeof(candidate), "%s/usr/lib/debug%.*s/%s", root ? root : "", root_dir_len,
                         root_dir, link);
            int rc = scan_debug_file(ef, candidate, out);
            if (rc <= 0)
                return rc;
        }
    }
    const uint8_t *id;
    size_t id_len = elf_file_build_id(ef, &id);
    if (id_len < 2)
        return 0;
    int at = snprintf(candidate, sizeof(candidate), "%s/usr/lib/debug/.build-id/%02x/", root ? root : "", id[0]);
    for (size_t i = 1; i < id_len && at > 0 && (size_t)at + 3 < sizeof(candidate); i++)
        at += snprintf(candidate + at, sizeof(candidate) - (size_t)at, "%02x", id[i]);
    if (at <= 0 || (size_t)at + 7 >= sizeof(candidate))
        return 0;
    snprintf(candidate + at, sizeof(candidate) - (size_t)at, ".debug");
    return scan_debug_file(ef, candidate, out) < 0 ? -1 : 0;
}

void runtime_probes_free(struct runtime_probe_list *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}
