/* SPDX-License-Identifier: GPL-3.0-or-later */
/* elf_internal.h: what the files of elf/ share among themselves only. */
#ifndef TASKSPY_ELF_INTERNAL_H
#define TASKSPY_ELF_INTERNAL_H

#include "elf/elf_file.h"

/* Does [off, off + len) lie inside total bytes (without overflow)? */
static inline bool elf_range_ok(size_t total, uint64_t off, uint64_t len)
{
    return off <= total && len <= total - off;
}

/* Set ef->build_id from the GNU build-id note (PT_NOTE segments first, then SHT_NOTE sections). */
void elf_notes_find_build_id(struct elf_file *ef);

#endif
