/* SPDX-License-Identifier: GPL-3.0-or-later */
/* unwind_objects.c: per-object cache for the unwinder: opening mapped files once, locating their
 * .eh_frame_hdr search table, computing load biases and reading file bytes by offset. */
#include "sampler/unwind/unwind_objects.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* DWARF pointer encodings used by .eh_frame_hdr. */
#define EH_PE_OMIT 0xff
#define EH_PE_FORMAT_MASK 0x0f
#define EH_PE_ABSPTR 0x00
#define EH_PE_UDATA2 0x02
#define EH_PE_UDATA4 0x03
#define EH_PE_UDATA8 0x04
#define EH_PE_SDATA2 0x0a
#define EH_PE_SDATA4 0x0b
#define EH_PE_SDATA8 0x0c
#define EH_PE_DATAREL 0x30
/* The only table encoding libunwind's remote binary search understands: pairs of int32 offsets. */
#define EH_PE_TABLE_ENC (EH_PE_DATAREL | EH_PE_SDATA4)

int unwind_objects_init(struct unwind_objects *objs, const char *root)
{
    memset(objs, 0, sizeof(*objs));
    objs->root = strdup(root ? root : "");
    return objs->root ? 0 : -1;
}

void unwind_objects_free(struct unwind_objects *objs)
{
    for (size_t i = 0; i < objs->index.n_slots; i++) {
        struct unwind_object *o = (struct unwind_object *)objs->index.slots[i].item;
        if (!o)
            continue;
        elf_file_close(&o->elf);
        free(o->path);
        free(o);
    }
    intern_table_free(&objs->index);
    free(objs->root);
    memset(objs, 0, sizeof(*objs));
}

struct object_key {
    const char *path;
    uint64_t inode;
};

static uint64_t hash_key(const struct object_key *k)
{
    return intern_hash_bytes(intern_hash_u64(INTERN_HASH_SEED, k->inode), k->path, strlen(k->path));
}

static bool same_object(const void *item, const void *key)
{
    const struct unwind_object *o = item;
    const struct object_key *k = key;
    return o->inode == k->inode && strcmp(o->path, k->path) == 0;
}

/* Size in bytes of a fixed-size encoded value, or 0 for encodings the table reader does not accept. */
static size_t encoded_size(uint8_t enc)
{
    switch (enc & EH_PE_FORMAT_MASK) {
    case EH_PE_ABSPTR:
    case EH_PE_UDATA8:
    case EH_PE_SDATA8:
        return 8;
    case EH_PE_UDATA4:
    case EH_PE_SDATA4:
        return 4;
    case EH_PE_UDATA2:
    case EH_PE_SDATA2:
        return 2;
    default:
        return 0;
    }
}

static uint64_t read_unsigned(const uint8_t *p, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, p, size); /* little-endian host and target */
    return v;
}

/* Find .eh_frame_hdr (through PT_GNU_EH_FRAME, else by section name) and check its table is usable. */
static void locate_eh_frame_hdr(struct unwind_object *o)
{
    struct elf_range hdr;
    if (!elf_file_segment_range(&o->elf, PT_GNU_EH_FRAME, 0, &hdr) &&
        !elf_file_section_range(&o->elf, ".eh_frame_hdr", &hdr))
        return;
    uint64_t vaddr = hdr.vaddr, size = hdr.size;
    if (size < 4)
        return;
    const uint8_t *h = o->elf.data + hdr.offset;
    uint8_t version = h[0], ptr_enc = h[1], count_enc = h[2], table_enc = h[3];
    if (version != 1 || count_enc == EH_PE_OMIT || table_enc != EH_PE_TABLE_ENC)
        return;
    size_t ptr_size = ptr_enc == EH_PE_OMIT ? 0 : encoded_size(ptr_enc);
    size_t count_size = encoded_size(count_enc);
    if ((ptr_enc != EH_PE_OMIT && ptr_size == 0) || count_size == 0 || (count_enc & 0x70) != 0)
        return;
    uint64_t table_offset = 4 + ptr_size + count_size;
    if (table_offset > size)
        return;
    uint64_t count = read_unsigned(h + 4 + ptr_size, count_size);
    if (count == 0 || count > (size - table_offset) / 8)
        return;
    o->hdr_vaddr = vaddr;
    o->table_offset = table_offset;
    o->fde_count = count;
    o->has_table = true;
}

/* The vDSO is not a file: use this process's copy, which is the same kernel image as the target's. */
static int open_vdso(struct elf_file *ef)
{
    const void *base = (const void *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!base) {
        errno = ENOENT;
        return -1;
    }
    return elf_file_from_loaded_image(ef, base);
}

static void open_object(struct unwind_objects *objs, struct unwind_object *o)
{
    int rc;
    if (strcmp(o->path, "[vdso]") == 0) {
        rc = open_vdso(&o->elf);
    } else {
        /* /proc/PID/map_files/... (a deleted file, see proc_maps_load) is opened as it is, not under root */
        const char *root = strncmp(o->path, "/proc/", 6) == 0 && strstr(o->path, "/map_files/") ? "" : objs->root;
        size_t n = strlen(root) + strlen(o->path) + 1;
        char *full = malloc(n);
        if (!full)
            return;
        snprintf(full, n, "%s%s", root, o->path);
        rc = elf_file_open(&o->elf, full);
        free(full);
    }
    if (rc != 0)
        return;
    o->usable = true;
    locate_eh_frame_hdr(o);
}

struct unwind_object *unwind_objects_get(struct unwind_objects *objs, const struct proc_map *map)
{
    const char *path = map->path ? map->path : "";
    if (path[0] == '\0' || (path[0] == '[' && strcmp(path, "[vdso]") != 0))
        return NULL;
    struct object_key key = { path, map->inode };
    uint64_t hash = hash_key(&key);
    struct unwind_object *found = (struct unwind_object *)intern_table_find(&objs->index, hash, same_object, &key);
    if (found)
        return found;
    struct unwind_object *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->path = strdup(path);
    if (!o->path) {
        free(o);
        return NULL;
    }
    o->inode = map->inode;
    open_object(objs, o);
    if (intern_table_add(&objs->index, hash, o) != 0) {
        elf_file_close(&o->elf);
        free(o->path);
        free(o);
        return NULL;
    }
    return o;
}

bool unwind_object_bias(const struct unwind_object *obj, const struct proc_map *map, uint64_t *bias)
{
    if (!obj->usable)
        return false;
    long page_size = sysconf(_SC_PAGESIZE);
    return elf_file_load_bias(&obj->elf, map->start, map->pgoff, map->executable,
                              page_size > 0 ? (uint64_t)page_size : 4096, bias);
}

bool unwind_object_read(const struct unwind_object *obj, uint64_t off, void *dst, size_t n)
{
    if (!obj->usable || off >= obj->elf.size)
        return false;
    size_t avail = obj->elf.size - (size_t)off;
    size_t take = n < avail ? n : avail;
    memcpy(dst, obj->elf.data + off, take);
    memset((uint8_t *)dst + take, 0, n - take);
    return true;
}
