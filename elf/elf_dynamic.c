/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_dynamic.c: the dynamic section of an ELF file (.dynamic with its .dynstr): the entries, with string
 * values (DT_NEEDED, DT_SONAME, DT_RUNPATH, DT_RPATH) resolved and bounds-checked. */
#include "elf/elf_file.h"

#include <string.h>

bool elf_dynamic_begin(struct elf_dynamic_iter *it, const struct elf_file *ef)
{
    memset(it, 0, sizeof(*it));
    size_t size = 0, strs_size = 0;
    const uint8_t *dyn = elf_file_section_data(ef, elf_file_section(ef, ".dynamic"), &size);
    const uint8_t *strs = elf_file_section_data(ef, elf_file_section(ef, ".dynstr"), &strs_size);
    if (!dyn || !strs || strs_size == 0)
        return false;
    it->entries = dyn;
    it->n = size / sizeof(Elf64_Dyn);
    it->strs = (const char *)strs;
    it->strs_size = strs_size;
    return true;
}

bool elf_dynamic_next(struct elf_dynamic_iter *it, int64_t *tag, uint64_t *value, const char **string)
{
    while (it->at < it->n) {
        Elf64_Dyn d;
        memcpy(&d, it->entries + it->at++ * sizeof(Elf64_Dyn), sizeof(d));
        if (d.d_tag == DT_NULL) {
            it->at = it->n;
            return false;
        }
        *tag = d.d_tag;
        *value = d.d_un.d_val;
        *string = NULL;
        if (d.d_tag == DT_NEEDED || d.d_tag == DT_SONAME || d.d_tag == DT_RUNPATH || d.d_tag == DT_RPATH) {
            /* a string: inside .dynstr and NUL-terminated there, or the entry is skipped */
            if (d.d_un.d_val >= it->strs_size || !memchr(it->strs + d.d_un.d_val, '\0', it->strs_size - d.d_un.d_val))
                continue;
            *string = it->strs + d.d_un.d_val;
        }
        return true;
    }
    return false;
}
