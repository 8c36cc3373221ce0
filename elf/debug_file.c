/* debug_file.c: finds the separate debug file of an object (as Debian's -dbgsym packages and
 * `objcopy --only-keep-debug` produce): by GNU build-id under /usr/lib/debug/.build-id/, then by the
 * .gnu_debuglink name beside the object, in its .debug/ directory and under /usr/lib/debug/DIR/. Every
 * path is looked up under the target's root. A candidate is only taken if it matches: same build-id
 * when both files have one, else the .gnu_debuglink CRC. */
#include "symbolize/symbolize_internal.h"

#include <bfd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUG_ROOT "/usr/lib/debug"

static bool crc_matches(const char *path, unsigned long want)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char buf[64 * 1024];
    unsigned long crc = 0;
    bool ok = true;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            ok = false;
        if (n <= 0)
            break;
        crc = bfd_calc_gnu_debuglink_crc32(crc, buf, (bfd_size_type)n);
    }
    if (close(fd) != 0)
        ok = false;
    return ok && crc == want;
}

/* Is candidate a usable debug file for the object with layout lay? */
static bool candidate_ok(const char *candidate, const char *object_path, const struct elf_layout *lay,
                         bool check_crc, unsigned long crc)
{
    struct stat cst, ost;
    if (stat(candidate, &cst) != 0 || !S_ISREG(cst.st_mode))
        return false;
    if (stat(object_path, &ost) == 0 && ost.st_dev == cst.st_dev && ost.st_ino == cst.st_ino)
        return false;   /* the debuglink names the object itself */
    struct elf_layout dlay;
    if (elf_layout_read(&dlay, candidate) != 0)
        return false;
    if (lay->build_id_len && dlay.build_id_len)
        return lay->build_id_len == dlay.build_id_len &&
               memcmp(lay->build_id, dlay.build_id, lay->build_id_len) == 0;
    return !check_crc || crc_matches(candidate, crc);
}

static char *build_id_path(const char *root, const struct elf_layout *lay)
{
    char hex[2 * ELF_LAYOUT_MAX_BUILD_ID + 1];
    for (size_t i = 0; i < lay->build_id_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", lay->build_id[i]);
    char *p = NULL;
    if (asprintf(&p, "%s%s/.build-id/%.2s/%s.debug", root, DEBUG_ROOT, hex, hex + 2) < 0)
        return NULL;
    return p;
}

char *debug_file_find(const char *root, const char *path, const struct elf_layout *lay,
                      const char *link_name, unsigned long link_crc)
{
    if (!root)
        root = "";
    char *object_path = NULL;
    if (asprintf(&object_path, "%s%s", root, path) < 0)
        return NULL;
    char *found = NULL;
    if (lay->build_id_len >= 2) {
        char *p = build_id_path(root, lay);
        if (p && candidate_ok(p, object_path, lay, false, 0))
            found = p;
        else
            free(p);
    }
    if (!found && link_name && *link_name && !strchr(link_name, '/')) {
        const char *slash = strrchr(path, '/');
        int dir_len = slash ? (int)(slash - path) : 0;
        const char *formats[] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s" DEBUG_ROOT "%.*s/%s" };
        for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]) && !found; i++) {
            char *p = NULL;
            if (asprintf(&p, formats[i], root, dir_len, path, link_name) < 0)
                break;
            if (candidate_ok(p, object_path, lay, true, link_crc))
                found = p;
            else
                free(p);
        }
    }
    free(object_path);
    return found;
}
