/* SPDX-License-Identifier: GPL-3.0-or-later */
/* debug_file.c: the one lookup of an object's separate debug file (as Debian's -dbgsym packages, `objcopy
 * --only-keep-debug` and debuginfod servers provide them), in order: by GNU build-id under
 * /usr/lib/debug/.build-id/, then by the .gnu_debuglink name beside the object, in its .debug/ directory and
 * under /usr/lib/debug/DIR/ (every path looked up under the target's root), then from a debuginfod server
 * (debug_files.c: asked once per build id, shared by every reader). A candidate is only taken if it matches:
 * the same build-id when both files have one, else the .gnu_debuglink CRC; a stale debug file is refused. */
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

bool debug_file_matches(const char *candidate, const char *object_path, const struct elf_file *ef)
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

/* Takes candidate (a path under root) when it is there and matches; notes a stale one. */
static bool take(const char *candidate, const char *object_path, const struct elf_file *ef,
                 enum debug_file_source source, struct debug_file_result *out)
{
    if (debug_file_matches(candidate, object_path, ef)) {
        snprintf(out->path, sizeof(out->path), "%s", candidate);
        out->source = source;
        return true;
    }
    struct stat st;
    out->refused |= stat(candidate, &st) == 0;
    return false;
}

/* The build-id place: ROOT/usr/lib/debug/.build-id/xx/rest.debug. */
static bool find_by_build_id(const struct elf_file *ef, const char *root, const char *object_path,
                             struct debug_file_result *out)
{
    if (ef->build_id_len < 2 || ef->build_id_len > MAX_BUILD_ID)
        return false;
    char hex[2 * MAX_BUILD_ID + 1];
    for (size_t i = 0; i < ef->build_id_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", ef->build_id[i]);
    int n = snprintf(out->build_id_path, sizeof(out->build_id_path), "%s%s/.build-id/%.2s/%s.debug", root,
                     DEBUG_ROOT, hex, hex + 2);
    if (n < 0 || (size_t)n >= sizeof(out->build_id_path)) {
        out->build_id_path[0] = '\0';
        return false;
    }
    return take(out->build_id_path, object_path, ef, DEBUG_FILE_BUILD_ID, out);
}

/* The first of the .gnu_debuglink places that holds a matching file. */
static bool find_by_debuglink(const struct elf_file *ef, const char *root, const char *path,
                              const char *object_path, struct debug_file_result *out)
{
    const char *link;
    uint32_t crc;
    if (!elf_file_debuglink(ef, &link, &crc) || strchr(link, '/'))
        return false;
    snprintf(out->debuglink, sizeof(out->debuglink), "%s", link);
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) : 0;
    const char *formats[] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s" DEBUG_ROOT "%.*s/%s" };
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        char candidate[DEBUG_FILE_PATH_MAX];
        int n = snprintf(candidate, sizeof(candidate), formats[i], root, dir_len, path, link);
        if (n > 0 && (size_t)n < sizeof(candidate) && take(candidate, object_path, ef, DEBUG_FILE_DEBUGLINK, out))
            return true;
    }
    return false;
}

void debug_file_find_local(const struct elf_file *ef, const char *root, const char *path,
                           struct debug_file_result *out)
{
    out->path[0] = out->build_id_path[0] = out->debuglink[0] = '\0';
    out->source = DEBUG_FILE_NONE;
    out->refused = false;
    if (!root)
        root = "";
    char object_path[DEBUG_FILE_PATH_MAX];
    int n = snprintf(object_path, sizeof(object_path), "%s%s", root, path);
    if (n < 0 || (size_t)n >= sizeof(object_path))
        return;
    if (!find_by_build_id(ef, root, object_path, out))
        find_by_debuglink(ef, root, path, object_path, out);
}

bool debug_file_find(struct debug_files *df, const struct elf_file *ef, const char *root, const char *path,
                     bool fetch, struct debug_file_result *out)
{
    if (df && ef->build_id_len)     /* debuginfod asks by build id; results are shared by it */
        return debug_files_resolve(df, ef, root, path, fetch, out);
    debug_file_find_local(ef, root, path, out);
    out->debuginfod = df && debug_files_ask_debuginfod(df) ? DEBUGINFOD_NOT_ASKED : DEBUGINFOD_OFF;
    out->debuginfod_error = 0;
    return out->path[0] != '\0';
}

char *elf_debug_file_find(const struct elf_file *ef, const char *root, const char *path)
{
    struct debug_file_result *r = malloc(sizeof(*r));
    char *found = r && debug_file_find(NULL, ef, root, path, false, r) ? strdup(r->path) : NULL;
    free(r);
    return found;
}
