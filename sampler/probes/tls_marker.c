/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_marker.c: finding the TLS task marker in an executable's symbol table and TLS segment, and the
 * static TLS offset arithmetic of x86-64 (glibc's _dl_determine_tlsoffset for the first module). */
#include "sampler/probes/tls_marker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf/elf_file.h"

typedef bool (*symbol_match_fn)(const char *name);

/* The first defined STT_TLS symbol whose name matches, in .symtab (else .dynsym), and PT_TLS, through the
 * project's ELF reader. Returns 1 found, 0 not, -1 with errno. */
static int read_tls_symbol(const char *path, symbol_match_fn match, struct tls_marker *out)
{
    struct elf_file ef;
    if (elf_file_open(&ef, path) != 0)
        return -1;
    const Elf64_Phdr *tls = elf_file_segment(&ef, PT_TLS);
    int found = 0;
    const char *tables[2] = { ".symtab", ".dynsym" };
    for (int t = 0; t < 2 && tls && !found; t++) {
        struct elf_symbol_iter it;
        struct elf_symbol sym;
        if (!elf_symbols_begin(&it, &ef, tables[t]))
            continue;
        while (!found && elf_symbols_next(&it, &sym)) {
            if (sym.type != STT_TLS || sym.section == SHN_UNDEF || !match(sym.name))
                continue;
            snprintf(out->symbol, sizeof(out->symbol), "%s", sym.name);
            out->st_value = sym.value;
            out->size = sym.size;
            out->tls_vaddr = tls->p_vaddr;
            out->tls_memsz = tls->p_memsz;
            out->tls_align = tls->p_align;
            found = 1;
        }
    }
    elf_file_close(&ef);
    return found;
}

static bool is_marker(const char *name)
{
    return strcmp(name, TLS_MARKER_SYMBOL) == 0;
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
    out->tp_offset = elf_tls_tp_offset(out->st_value, out->tls_memsz, out->tls_align, out->tls_vaddr);
    return 1;
}
