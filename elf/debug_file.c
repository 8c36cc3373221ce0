/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debug_file.c: the one lookup of an object's separate debug file (as Debian's -dbgsym packages and
 * `objcopy --only-keep-debug` produce them): by GNU build-id under /usr/lib/debug/.build-id/, then by the
 * .gnu_debuglink name beside the object, in its .debug/ directory and under /usr/lib/debug/DIR/. Every
 * path is looked up under the target's root. A candidate is only taken if it matches: the same build-id
 * when both files have one, else the .gnu_debuglink CRC; a stale debug file is refused. */
#include "elf/elf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUG_ROOT "/usr/lib/debug"
#define MAX_BUILD_ID 64

bool elf_file_debuglink(const struct elf_file *ef, const char **name, uint32_t *crc)
{
    size_t size;
    const uint8_t *data = elf_file_section_data(ef, elf_file_section(ef, ".gnu_debuglink"), &size);
    const uint8_t *nul = data ? memchr(data, '\0', size) : NULL;
    if (!nul || nul == data)
        return false;
    size_t crc_at = ((size_t)(nul - data) + 1 + 3) & ~(size_t)3;   /* the name, its NUL, padding to 4 */
    if (crc_at > size || size - crc_at < 4)
        return false;
    memcpy(crc, data + crc_at, 4);
    *name = (const char *)data;
    return true;
}

/* CRC-32 of the whole file, as .gnu_debuglink records it (the zlib/IEEE polynomial). */
static bool file_crc(const char *path, uint32_t *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char buf[64 * 1024];
    uLong crc = crc32(0L, Z_NULL, 0);
    bool ok = true;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            ok = false;
        if (n <= 0)
            break;
        crc = crc32(crc, buf, (uInt)n);
    }
    if (close(fd) != 0)
        ok = false;
    *out = (uint32_t)crc;
    return ok;
}

/* Is candidate the debug file of ef (opened from object_path)? */
static bool candidate_ok(const char *candidate, const char *object_path, const struct elf_file *ef)
{
    struct stat cst, ost;
    if (stat(candidate, &cst) != 0 || !S_ISREG(cst.st_mode))
        return false;
    if (stat(object_path, &ost) == 0 && ost.st_dev == cst.st_dev && ost.st_ino == cst.st_ino)
        return false;   /* the debuglink names the object itself */
    struct elf_file debug;
    if (elf_file_open(&debug, candidate) != 0)
        return false;
    bool both_ids = ef->build_id_len && debug.build_id_len;
    bool same_id = both_ids && ef->build_id_len == debug.build_id_len &&
                   memcmp(ef->build_id, debug.build_id, ef->build_id_len) == 0;
    elf_file_close(&debug);
    if (both_ids)
        return same_id;
    const char *link;
    uint32_t want, crc;
    return elf_file_debuglink(ef, &link, &want) && file_crc(candidate, &crc) && crc == want;
}

static char *build_id_path(const char *root, const struct elf_file *ef)
{
    if (ef->build_id_len < 2 || ef->build_id_len > MAX_BUILD_ID)
        return NULL;
    char hex[2 * MAX_BUILD_ID + 1];
    for (size_t i = 0; i < ef->build_id_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", ef->build_id[i]);
    char *p = NULL;
    if (asprintf(&p, "%s%s/.build-id/%.2s/%s.debug", root, DEBUG_ROOT, hex, hex + 2) < 0)
        return NULL;
    return p;
}

/* The first of the .gnu_debuglink places that holds a matching file, or NULL. */
static char *find_by_debuglink(const struct elf_file *ef, const char *root, const char *path,
                               const char *object_path)
{
    const char *link;
    uint32_t crc;
    if (!elf_file_debuglink(ef, &link, &crc) || strchr(link, '/'))
        return NULL;
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) : 0;
    const char *formats[] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s" DEBUG_ROOT "%.*s/%s" };
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        char *p = NULL;
        if (asprintf(&p, formats[i], root, dir_len, path, link) < 0)
            return NULL;
        if (candidate_ok(p, object_path, ef))
            return p;
        free(p);
    }
    return NULL;
}

char *elf_debug_file_find(const struct elf_file *ef, const char *root, const char *path)
{
    if (!root)
        root = "";
    char *object_path = NULL;
    if (asprintf(&object_path, "%s%s", root, path) < 0)
        return NULL;
    char *found = build_id_path(root, ef);
    if (found && !candidate_ok(found, object_path, ef)) {
        free(found);
        found = NULL;
    }
    if (!found)
        found = find_by_debuglink(ef, root, path, object_path);
    free(object_path);
    return found;
}
