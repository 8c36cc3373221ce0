/* tls_marker.c: finding the TLS task marker in an executable's symbol table and TLS segment, and the
 * static TLS offset arithmetic of x86-64 (glibc's _dl_determine_tlsoffset for the first module). */
#include "sampler/probes/tls_marker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf/elf_file.h"

int64_t tls_marker_tp_offset(uint64_t st_value, uint64_t memsz, uint64_t align, uint64_t vaddr)
{
    if (align == 0)
        align = 1;
    /* the block starts firstbyte past an aligned address when the segment itself is not aligned */
    uint64_t firstbyte = (0 - (vaddr & (align - 1))) & (align - 1);
    uint64_t block = ((memsz - firstbyte + align - 1) / align) * align + firstbyte;
    return (int64_t)st_value - (int64_t)block;
}

typedef bool (*symbol_match_fn)(const char *name);

/* The one place that reads ELF: the first STT_TLS symbol whose name matches in .symtab (else .dynsym), and
 * PT_TLS. Returns 1 found, 0 not, -1 with errno. */
static int read_tls_symbol(const char *path, symbol_match_fn match, struct tls_marker *out)
{
    struct elf_file ef;
    if (elf_file_open(&ef, path) != 0)
        return -1;
    const Elf64_Phdr *tls = NULL;
    for (size_t i = 0; i < ef.n_phdrs; i++)
        if (ef.phdrs[i].p_type == PT_TLS)
            tls = &ef.phdrs[i];
    int found = 0;
    const char *tables[2] = { ".symtab", ".dynsym" };
    for (int t = 0; t < 2 && tls && !found; t++) {
        const Elf64_Shdr *sh = elf_file_section(&ef, tables[t]);
        if (!sh || sh->sh_link >= ef.n_shdrs || sh->sh_entsize != sizeof(Elf64_Sym))
            continue;
        size_t sym_size = 0, str_size = 0;
        const Elf64_Sym *syms = (const Elf64_Sym *)elf_file_section_data(&ef, sh, &sym_size);
        const char *strs = (const char *)elf_file_section_data(&ef, &ef.shdrs[sh->sh_link], &str_size);
        if (!syms || !strs)
            continue;
        for (size_t i = 0; i < sym_size / sizeof(Elf64_Sym); i++) {
            if (ELF64_ST_TYPE(syms[i].st_info) != STT_TLS || syms[i].st_shndx == SHN_UNDEF ||
                syms[i].st_name >= str_size || strnlen(strs + syms[i].st_name, str_size - syms[i].st_name) ==
                                                   str_size - syms[i].st_name ||
                !match(strs + syms[i].st_name))
                continue;
            snprintf(out->symbol, sizeof(out->symbol), "%s", strs + syms[i].st_name);
            out->st_value = syms[i].st_value;
            out->size = syms[i].st_size;
            out->tls_vaddr = tls->p_vaddr;
            out->tls_memsz = tls->p_memsz;
            out->tls_align = tls->p_align;
            found = 1;
            break;
        }
    }
    elf_file_close(&ef);
    return found;
}

static bool is_marker(const char *name)
{
    return strcmp(name, TLS_MARKER_SYMBOL) == 0;
}

/* tokio::runtime::context::CONTEXT's storage, legacy (..5tokio7runtime7context7CONTEXT..) or v0 mangled */
static bool is_tokio_context(const char *name)
{
    return strstr(name, "5tokio7runtime7context7CONTEXT") && strstr(name, "__RUST_STD_INTERNAL_VAL");
}

int tls_marker_find_tokio_context(const char *path, struct tls_marker *out)
{
    memset(out, 0, sizeof(*out));
    int rc = read_tls_symbol(path, is_tokio_context, out);
    if (rc == 1)
        out->tp_offset = tls_marker_tp_offset(out->st_value, out->tls_memsz, out->tls_align, out->tls_vaddr);
    return rc;
}

int tls_marker_find(const char *path, struct tls_marker *out)
{
    memset(out, 0, sizeof(*out));
    int rc = read_tls_symbol(path, is_marker, out);
    if (rc != 1)
        return rc;
    /* a uint64_t inside the segment, or it is not the marker the ABI describes */
    if (out->size != 8 || out->st_value + 8 > out->tls_memsz) {
        memset(out, 0, sizeof(*out));
        return 0;
    }
    out->tp_offset = tls_marker_tp_offset(out->st_value, out->tls_memsz, out->tls_align, out->tls_vaddr);
    return 1;
}
