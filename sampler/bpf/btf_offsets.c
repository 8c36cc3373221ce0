/* SPDX-License-Identifier: GPL-3.0-or-later */
/* btf_offsets.c: the BTF reader behind btf_offsets.h. Every offset and length taken from the file is
 * checked before use. */
#include "sampler/bpf/btf_offsets.h"

#include "base/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes that follow a type record of this kind with vlen entries, or -1 for an unknown kind. */
static long extra_bytes(unsigned kind, unsigned vlen)
{
    switch (kind) {
    case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG: return 4;
    case BTF_KIND_ARRAY: return 12;
    case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC: case BTF_KIND_ENUM64: return 12L * vlen;
    case BTF_KIND_ENUM: case BTF_KIND_FUNC_PROTO: return 8L * vlen;
    case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
    case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG: return 0;
    default: return -1;
    }
}

static int index_types(struct btf_types *b)
{
    struct btf_header h;
    if (b->size < sizeof(h)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(&h, b->blob, sizeof(h));
    if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h) || h.hdr_len > b->size ||
        (uint64_t)h.type_off + h.type_len > b->size - h.hdr_len ||
        (uint64_t)h.str_off + h.str_len > b->size - h.hdr_len || h.type_off % 4) {
        errno = EINVAL;
        return -1;
    }
    b->types = b->blob + h.hdr_len + h.type_off;
    b->types_len = h.type_len;
    b->strings = b->blob + h.hdr_len + h.str_off;
    b->strings_len = h.str_len;
    size_t cap = b->types_len / sizeof(struct btf_type) + 2;
    b->by_id = calloc(cap, sizeof(*b->by_id));
    if (!b->by_id)
        return -1;
    b->n_ids = 1;                                  /* id 0: void */
    size_t at = 0;
    while (at + sizeof(struct btf_type) <= b->types_len) {
        struct btf_type t;
        memcpy(&t, b->types + at, sizeof(t));
        long extra = extra_bytes(BTF_INFO_KIND(t.info), BTF_INFO_VLEN(t.info));
        if (extra < 0 || at + sizeof(t) + (size_t)extra > b->types_len || b->n_ids >= cap) {
            errno = EINVAL;
            return -1;
        }
        b->by_id[b->n_ids++] = b->types + at;
        at += sizeof(t) + (size_t)extra;
    }
    return 0;
}

/* b owns blob (size bytes) from now on: index its types, or free it. Returns 0, or -1 with errno. */
static int adopt_blob(struct btf_types *b, uint8_t *blob, size_t size)
{
    b->blob = blob;
    b->size = size;
    if (index_types(b) != 0) {
        int saved = errno;
        btf_types_free(b);
        errno = saved;
        return -1;
    }
    return 0;
}

int btf_types_from_memory(struct btf_types *b, const void *data, size_t size)
{
    memset(b, 0, sizeof(*b));
    b->blob = malloc(size ? size : 1);
    if (!b->blob)
        return -1;
    memcpy(b->blob, data, size);
    return adopt_blob(b, b->blob, size);
}

int btf_types_load(struct btf_types *b, const char *path)
{
    memset(b, 0, sizeof(*b));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* sysfs reports a size of 4096 or the real one depending on the kernel: read until the end */
    VEC_OF(uint8_t) buf = { 0 };
    int failed = 0;
    for (;;) {
        if (buf.n == buf.cap && (buf.cap >= ((size_t)256 << 20) ||
                                 vec_reserve(&buf, buf.cap ? buf.cap * 2 : (size_t)1 << 20) != 0)) {
            failed = buf.cap >= ((size_t)256 << 20) ? EFBIG : ENOMEM;
            break;
        }
        ssize_t got = read(fd, buf.v + buf.n, buf.cap - buf.n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            failed = errno;
            break;
        }
        if (got == 0)
            break;
        buf.n += (size_t)got;
    }
    close(fd);
    if (failed) {
        vec_free(&buf);
        errno = failed;
        return -1;
    }
    return adopt_blob(b, buf.v, buf.n);
}

void btf_types_free(struct btf_types *b)
{
    free(b->blob);
    free(b->by_id);
    memset(b, 0, sizeof(*b));
}

static struct btf_type type_at(const struct btf_types *b, uint32_t id)
{
    struct btf_type t = { 0 };
    if (id > 0 && id < b->n_ids)
        memcpy(&t, b->by_id[id], sizeof(t));
    return t;
}

static bool name_is(const struct btf_types *b, uint32_t name_off, const char *name, size_t len)
{
    if (name_off >= b->strings_len || b->strings_len - name_off <= len)
        return false;
    const char *s = (const char *)b->strings + name_off;
    return memcmp(s, name, len) == 0 && s[len] == '\0';
}

/* Follow typedefs and qualifiers to the type they name. */
static uint32_t resolve(const struct btf_types *b, uint32_t id)
{
    for (int hops = 0; hops < 32 && id > 0 && id < b->n_ids; hops++) {
        struct btf_type t = type_at(b, id);
        unsigned kind = BTF_INFO_KIND(t.info);
        if (kind != BTF_KIND_TYPEDEF && kind != BTF_KIND_VOLATILE && kind != BTF_KIND_CONST &&
            kind != BTF_KIND_RESTRICT && kind != BTF_KIND_TYPE_TAG)
            return id;
        id = t.type;
    }
    return id;
}

static bool is_aggregate(const struct btf_types *b, uint32_t id)
{
    unsigned kind = BTF_INFO_KIND(type_at(b, id).info);
    return id > 0 && id < b->n_ids && (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION);
}

/* Member name (len bytes) of struct or union id, looked for in anonymous members too: its type and bit
 * offset. Returns false when absent or a bit-field. */
static bool find_member(const struct btf_types *b, uint32_t id, const char *name, size_t len, int depth,
                        uint32_t *type, uint64_t *bits)
{
    if (depth > 8 || !is_aggregate(b, id))
        return false;
    struct btf_type t = type_at(b, id);
    const uint8_t *m = b->by_id[id] + sizeof(struct btf_type);
    for (unsigned i = 0; i < BTF_INFO_VLEN(t.info); i++, m += sizeof(struct btf_member)) {
        struct btf_member mem;
        memcpy(&mem, m, sizeof(mem));
        uint64_t off = BTF_INFO_KFLAG(t.info) ? BTF_MEMBER_BIT_OFFSET(mem.offset) : mem.offset;
        if (BTF_INFO_KFLAG(t.info) && BTF_MEMBER_BITFIELD_SIZE(mem.offset))
            continue;
        if (mem.name_off == 0) {
            uint64_t inner;
            if (find_member(b, resolve(b, mem.type), name, len, depth + 1, type, &inner)) {
                *bits = off + inner;
                return true;
            }
        } else if (name_is(b, mem.name_off, name, len)) {
            *type = mem.type;
            *bits = off;
            return true;
        }
    }
    return false;
}

int btf_member_offset(const struct btf_types *b, const char *struct_name, const char *path, uint32_t *offset)
{
    uint32_t id = 0;
    for (uint32_t i = 1; i < b->n_ids && !id; i++) {
        struct btf_type t = type_at(b, i);
        if (BTF_INFO_KIND(t.info) == BTF_KIND_STRUCT && BTF_INFO_VLEN(t.info) > 0 &&
            name_is(b, t.name_off, struct_name, strlen(struct_name)))
            id = i;
    }
    if (!id)
        return -1;
    uint64_t bits = 0;
    for (const char *p = path; *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        uint32_t type;
        uint64_t member_bits;
        if (!find_member(b, id, p, len, 0, &type, &member_bits))
            return -1;
        bits += member_bits;
        id = resolve(b, type);
        p += len + (dot ? 1 : 0);
    }
    if (bits % 8 || bits / 8 > UINT32_MAX)
        return -1;
    *offset = (uint32_t)(bits / 8);
    return 0;
}
