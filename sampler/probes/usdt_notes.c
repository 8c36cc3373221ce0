/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usdt_notes.c: reads SystemTap SDT v3 notes out of an ELF file and turns probe and semaphore addresses
 * into file offsets; matches SPEC marker names. All note fields are bounds-checked. */
#include "sampler/probes/usdt_notes.h"

#include "base/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STAPSDT_OWNER "stapsdt"
#define STAPSDT_TYPE 3u
#define STAPSDT_ADDRS 3u           /* pc, base, semaphore: 8 bytes each in ELF64 */

static uint64_t read_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int list_push(struct usdt_note_list *l, const struct usdt_note *n)
{
    struct usdt_note *slot = vec_push(l);
    if (!slot)
        return -1;
    *slot = *n;
    return 0;
}

/* Split desc into its three strings. Returns false when a string is not NUL-terminated inside desc,
 * when provider or name is empty, or when bytes other than padding follow the arguments. */
static bool split_strings(const uint8_t *desc, size_t size, const char **s, size_t *len)
{
    size_t off = STAPSDT_ADDRS * 8;
    for (int i = 0; i < 3; i++) {
        if (off >= size)
            return false;
        const uint8_t *nul = memchr(desc + off, '\0', size - off);
        if (!nul)
            return false;
        s[i] = (const char *)desc + off;
        len[i] = (size_t)(nul - (desc + off));
        off += len[i] + 1;
    }
    return len[0] > 0 && len[1] > 0;
}

/* One stapsdt descriptor. Returns 1 when added, 0 when skipped as malformed, -1 on ENOMEM. */
static int add_note(const struct elf_file *ef, const uint8_t *desc, size_t size, bool has_base,
                    uint64_t base_addr, struct usdt_note_list *out)
{
    if (size < STAPSDT_ADDRS * 8 + 3)
        return 0;
    const char *s[3];
    size_t len[3];
    if (!split_strings(desc, size, s, len))
        return 0;
    struct usdt_note n = {0};
    n.note_pc = read_u64(desc);
    n.note_base = read_u64(desc + 8);
    n.note_semaphore = read_u64(desc + 16);
    n.pc = n.note_pc;
    n.semaphore = n.note_semaphore;
    if (has_base && n.note_base != 0) {
        uint64_t delta = base_addr - n.note_base;    /* modular arithmetic: moves either way */
        n.pc += delta;
        if (n.semaphore)
            n.semaphore += delta;
    }
    int64_t pc_offset = elf_file_vaddr_to_offset_in(ef, n.pc, PF_X, 1);
    if (pc_offset < 0)
        return 0;
    n.pc_offset = (uint64_t)pc_offset;
    if (n.semaphore) {
        /* a semaphore is a 2-byte counter the kernel writes: it must lie wholly in a writable segment */
        int64_t semaphore_offset = elf_file_vaddr_to_offset_in(ef, n.semaphore, PF_W, 2);
        if (semaphore_offset < 0)
            return 0;
        n.semaphore_offset = (uint64_t)semaphore_offset;
    }
    n.provider = dup_n(s[0], len[0]);
    n.name = dup_n(s[1], len[1]);
    n.args = dup_n(s[2], len[2]);
    if (!n.provider || !n.name || !n.args || list_push(out, &n) != 0) {
        free(n.provider);
        free(n.name);
        free(n.args);
        errno = ENOMEM;
        return -1;
    }
    out->v[out->n - 1].marker = usdt_marker_from_name(n.name);
    return 1;
}

int usdt_notes_parse(const struct elf_file *ef, const uint8_t *notes, size_t size, bool has_base,
                     uint64_t base_addr, struct usdt_note_list *out)
{
    out->has_base_section = has_base;
    struct elf_note_iter it;
    struct elf_note note;
    elf_notes_begin(&it, notes, size);
    while (elf_notes_next(&it, &note)) {
        if (note.type != STAPSDT_TYPE || !elf_note_owner_is(&note, STAPSDT_OWNER))
            continue;
        int r = add_note(ef, note.desc, note.desc_size, has_base, base_addr, out);
        if (r < 0)
            return -1;
        if (r == 0)
            out->skipped++;
    }
    /* a broken chain: nothing after that point can be trusted */
    if (it.broken && it.broken_type == STAPSDT_TYPE)
        out->skipped++;
    return 0;
}

int usdt_notes_read(const struct elf_file *ef, struct usdt_note_list *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t base_addr = 0;
    bool has_base = elf_file_section_addr(ef, ".stapsdt.base", &base_addr);
    const uint8_t *data;
    size_t size;
    if (elf_file_note_section(ef, ".note.stapsdt", &data, &size))
        return data ? usdt_notes_parse(ef, data, size, has_base, base_addr, out) : 0;
    /* No section table entry (stripped of sections): look through PT_NOTE segments instead. */
    struct elf_range seg;
    for (size_t i = 0; elf_file_segment_range(ef, PT_NOTE, i, &seg); i++)
        if (usdt_notes_parse(ef, ef->data + seg.offset, seg.size, has_base, base_addr, out) != 0)
            return -1;
    return 0;
}

void usdt_notes_free(struct usdt_note_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].provider);
        free(l->v[i].name);
        free(l->v[i].args);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* Normalise a probe name: each "__", "_" or "-" becomes one '-'. Returns false when it does not fit. */
static bool normalise(const char *name, char *out, size_t outsz)
{
    size_t o = 0;
    for (size_t i = 0; name[i];) {
        char c = name[i];
        if (c == '_' && name[i + 1] == '_') {
            c = '-';
            i += 2;
        } else {
            if (c == '_')
                c = '-';
            i++;
        }
        if (o + 1 >= outsz)
            return false;
        out[o++] = c;
    }
    out[o] = '\0';
    return true;
}

static const char *const marker_names[] = {
    [USDT_MARKER_OTHER] = "other",
    [USDT_MARKER_POLL_START] = "task-poll-start",
    [USDT_MARKER_POLL_END] = "task-poll-end",
    [USDT_MARKER_SPAWN] = "task-spawn",
    [USDT_MARKER_TERMINATE] = "task-terminate",
    [USDT_MARKER_PARK] = "worker-thread-park",
    [USDT_MARKER_UNPARK] = "worker-thread-unpark",
    [USDT_MARKER_WAKE] = "task-wake",
};

enum usdt_marker usdt_marker_from_name(const char *name)
{
    char norm[32];
    if (!name || !normalise(name, norm, sizeof(norm)))
        return USDT_MARKER_OTHER;
    for (size_t m = USDT_MARKER_POLL_START; m < sizeof(marker_names) / sizeof(marker_names[0]); m++)
        if (strcmp(norm, marker_names[m]) == 0)
            return (enum usdt_marker)m;
    return USDT_MARKER_OTHER;
}

const char *usdt_marker_name(enum usdt_marker m)
{
    if ((size_t)m >= sizeof(marker_names) / sizeof(marker_names[0]))
        return marker_names[USDT_MARKER_OTHER];
    return marker_names[m];
}

bool usdt_provider_selected(const char *spec, const char *provider)
{
    if (!spec || strcmp(spec, "auto") == 0)
        return true;
    if (strcmp(spec, "none") == 0 || !provider)
        return false;
    size_t plen = strlen(provider);
    for (const char *p = spec; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == plen && len > 0 && memcmp(p, provider, len) == 0)
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}
