/* SPDX-License-Identifier: GPL-3.0-or-later */
/* btf_offsets.h: byte offsets of kernel structure members from BTF (the kernel's own type information,
 * /sys/kernel/btf/vmlinux), so BPF programs that read kernel memory never hard-code a layout. A small
 * reader of the BTF format: the type section walked once, structs found by name, member paths followed
 * through typedefs, qualifiers and anonymous structs or unions. */
#ifndef TASKSPY_BTF_OFFSETS_H
#define TASKSPY_BTF_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

struct btf_types {
    uint8_t *blob;             /* the whole BTF file (owned when loaded from a path) */
    size_t size;
    const uint8_t *types, *strings;
    size_t types_len, strings_len;
    const uint8_t **by_id;     /* type id -> its record (id 0 is void) */
    size_t n_ids;
};

/* Read and index the BTF file at path (/sys/kernel/btf/vmlinux). Returns 0, or -1 with errno (ENOENT: the
 * kernel has no BTF; EINVAL: not BTF). */
int btf_types_load(struct btf_types *b, const char *path);
/* Index a BTF image in memory (copied). Returns 0, or -1 with errno. */
int btf_types_from_memory(struct btf_types *b, const void *data, size_t size);
void btf_types_free(struct btf_types *b);
/* Byte offset of the member path ("thread.fsbase": members of members) in struct struct_name. Returns 0
 * with *offset, or -1 when the struct or a member is not there, or a member is a bit-field. */
int btf_member_offset(const struct btf_types *b, const char *struct_name, const char *path, uint32_t *offset);

#endif
