/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_symbols.c: walking a symbol table (.symtab/.strtab or .dynsym/.dynstr), names checked to end
 * inside their string table. */
#include "elf/elf_internal.h"

#include <string.h>

bool elf_symbols_begin(struct elf_symbol_iter *it, const struct elf_file *ef, const char *table)
{
    memset(it, 0, sizeof(*it));
    const char *strings = strcmp(table, ".dynsym") == 0 ? ".dynstr" : ".strtab";
    it->syms = elf_file_section_data(ef, elf_file_section(ef, table), &it->size);
    it->strs = (const char *)elf_file_section_data(ef, elf_file_section(ef, strings), &it->strs_size);
    if (!it->syms || !it->strs || it->strs_size == 0) {
        memset(it, 0, sizeof(*it));
        return false;
    }
    return true;
}

bool elf_symbols_next(struct elf_symbol_iter *it, struct elf_symbol *sym)
{
    while (it->syms && it->size - it->at >= sizeof(Elf64_Sym)) {
        Elf64_Sym s;
        memcpy(&s, it->syms + it->at, sizeof(s));
        it->at += sizeof(s);
        if (s.st_name >= it->strs_size || !memchr(it->strs + s.st_name, '\0', it->strs_size - s.st_name))
            continue;
        *sym = (struct elf_symbol){ .name = it->strs + s.st_name, .value = s.st_value, .size = s.st_size,
                                    .type = ELF64_ST_TYPE(s.st_info), .bind = ELF64_ST_BIND(s.st_info),
                                    .section = s.st_shndx };
        return true;
    }
    return false;
}
