/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tls_library.c: the TLS task marker in a shared library (see tls_library.h): glibc's static TLS layout, the
 * DT_NEEDED search before the target runs, and the walk of the dynamic linker's link_map in the running
 * target (only its public fields: l_addr, l_name, l_ld, l_next). */
#include "sampler/probes/tls_library.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "sampler/probes/tls_marker.h"

#define MAX_OBJECTS 1024
#define MAX_NEEDED 512

static uint64_t round_up(uint64_t v, uint64_t align)
{
    return (v + align - 1) / align * align;
}

void tls_static_layout(const struct tls_module *modules, size_t n, uint64_t *offsets)
{
    uint64_t offset = 0, freetop = 0, freebottom = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t align = modules[i].align ? modules[i].align : 1;
        uint64_t size = modules[i].memsz;
        uint64_t firstbyte = (0 - (modules[i].vaddr & (align - 1))) & (align - 1);
        /* a gap an earlier module's alignment left may hold this one */
        if (freebottom - freetop >= size) {
            uint64_t off = round_up(freetop + size - firstbyte, align) + firstbyte;
            if (off <= freebottom) {
                freetop = off;
                offsets[i] = off;
                continue;
            }
        }
        uint64_t off = round_up(offset + size - firstbyte, align) + firstbyte;
        if (off > offset + size + (freebottom - freetop)) {
            freetop = offset;
            freebottom = off - size;
        }
        offset = off;
        offsets[i] = off;
    }
}

/* ---- before the target runs: DT_NEEDED ------------------------------------------------------------ */

/* The TLS segment of the file at path (memsz 0: none). */
static struct tls_module tls_segment(const char *path)
{
    struct tls_module m = { 0, 1, 0 };
    struct elf_file ef;
    if (elf_file_open(&ef, path) != 0)
        return m;
    const Elf64_Phdr *tls = elf_file_segment(&ef, PT_TLS);
    if (tls)
        m = (struct tls_module){ tls->p_memsz, tls->p_align, tls->p_vaddr };
    elf_file_close(&ef);
    return m;
}

/* dir (one entry of a search path, $ORIGIN replaced by origin) + "/" + name, if that file exists. */
static bool try_dir(const char *dir, size_t dir_len, const char *origin, const char *name, char *lib, size_t len)
{
    char expanded[2048];
    if (dir_len >= 7 && strncmp(dir, "$ORIGIN", 7) == 0)
        snprintf(expanded, sizeof(expanded), "%.1000s%.*s", origin, (int)(dir_len - 7 < 1000 ? dir_len - 7 : 1000), dir + 7);
    else
        snprintf(expanded, sizeof(expanded), "%.*s", (int)(dir_len < 2000 ? dir_len : 2000), dir);
    if (!expanded[0])
        return false;
    snprintf(lib, len, "%s/%.1000s", expanded, name);
    return access(lib, R_OK) == 0;
}

static bool search_path(const char *path, const char *origin, const char *name, char *lib, size_t len)
{
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        if (try_dir(p, n, origin, name, lib, len))
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

int tls_library_find_needed(const char *exe, struct tls_library_place *out)
{
    static const char system_dirs[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:"
                                      "/usr/lib:/usr/local/lib";
    memset(out, 0, sizeof(*out));
    struct elf_file ef;
    if (elf_file_open(&ef, exe) != 0)
        return 0;
    char origin[4096];
    snprintf(origin, sizeof(origin), "%s", exe);
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(origin, sizeof(origin), ".");
    const char *rpath = NULL, *runpath = NULL, *name;
    struct elf_dynamic_iter it;
    int64_t tag;
    uint64_t value;
    for (bool ok = elf_dynamic_begin(&it, &ef); ok && elf_dynamic_next(&it, &tag, &value, &name);) {
        if (tag == DT_RPATH)
            rpath = name;
        else if (tag == DT_RUNPATH)
            runpath = name;
    }
    /* The dynamic linker loads the executable's DT_NEEDED libraries first, in order (their own needs after
     * them all): the modules before a direct dependency are the executable and the libraries before it. */
    struct tls_module modules[MAX_NEEDED + 1];
    uint64_t offsets[MAX_NEEDED + 1];
    size_t n = 0;
    if ((modules[n] = tls_segment(exe)).memsz > 0)
        n++;
    int found = 0;
    for (bool ok = elf_dynamic_begin(&it, &ef); ok && !found && n < MAX_NEEDED && elf_dynamic_next(&it, &tag, &value, &name);) {
        char lib[4096];
        if (tag != DT_NEEDED || !name)
            continue;
        bool here = strchr(name, '/') ? try_dir(".", 1, origin, name, lib, sizeof(lib))
                                      : (!runpath && search_path(rpath, origin, name, lib, sizeof(lib))) ||
                                            search_path(runpath, origin, name, lib, sizeof(lib)) ||
                                            search_path(system_dirs, origin, name, lib, sizeof(lib));
        if (!here || (modules[n] = tls_segment(lib)).memsz == 0)
            continue;
        n++;
        struct tls_marker m;
        if (tls_marker_find(lib, &m) != 1)
            continue;
        tls_static_layout(modules, n, offsets);
        snprintf(out->library, sizeof(out->library), "%.500s", lib);
        out->tp_offset = (int64_t)m.st_value - (int64_t)offsets[n - 1];
        found = 1;
    }
    elf_file_close(&ef);
    return found;
}

/* ---- the running target: its link_map -------------------------------------------------------------- */

static bool read_at(int mem, uint64_t addr, void *buf, size_t len)
{
    return pread(mem, buf, len, (off_t)addr) == (ssize_t)len;
}

/* read_at as elf/'s memory reader (ctx: the int fd of /proc/PID/mem) */
static bool read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
    return read_at(*(const int *)ctx, addr, buf, len);
}

/* &_r_debug, from the executable's DT_DEBUG (the program headers' place from the auxiliary vector). 0 while
 * the dynamic linker has not set it. */
static uint64_t r_debug_address(pid_t pid, int mem)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    uint64_t auxv[2 * 64], phdr = 0, phnum = 0;
    ssize_t n = read(fd, auxv, sizeof(auxv));
    close(fd);
    for (ssize_t i = 0; i + 1 < n / 8; i += 2) {
        if (auxv[i] == AT_PHDR)
            phdr = auxv[i + 1];
        else if (auxv[i] == AT_PHNUM)
            phnum = auxv[i + 1];
    }
    return elf_loaded_r_debug(phdr, phnum, read_mem, &mem);
}

/* One object of the link map, as found in its file. */
struct object {
    bool has_tls, has_marker, startup;
    struct tls_module tls;
    uint64_t marker_st_value;
    char path[512];
};

/* The names an object needs (DT_NEEDED), added to needed; its DT_SONAME into soname. Also its TLS segment
 * and whether it defines the marker. */
static void read_object(const char *file, struct object *o, char **needed, size_t *n_needed, char *soname,
                        size_t soname_len)
{
    struct tls_marker m;
    if (tls_marker_find(file, &m) == 1) {
        o->has_marker = true;
        o->marker_st_value = m.st_value;
    }
    struct elf_file ef;
    soname[0] = '\0';
    if (elf_file_open(&ef, file) != 0)
        return;
    const Elf64_Phdr *tls = elf_file_segment(&ef, PT_TLS);
    if (tls && tls->p_memsz > 0) {
        o->has_tls = true;
        o->tls = (struct tls_module){ tls->p_memsz, tls->p_align, tls->p_vaddr };
    }
    struct elf_dynamic_iter it;
    int64_t tag;
    uint64_t value;
    const char *name;
    for (bool ok = elf_dynamic_begin(&it, &ef); ok && elf_dynamic_next(&it, &tag, &value, &name);) {
        if (tag == DT_NEEDED && name && *n_needed < MAX_NEEDED && (needed[*n_needed] = strdup(name)))
            (*n_needed)++;
        else if (tag == DT_SONAME && name)
            snprintf(soname, soname_len, "%s", name);
    }
    elf_file_close(&ef);
}

static bool is_needed(char *const *needed, size_t n, const char *name)
{
    for (size_t i = 0; name[0] && i < n; i++)
        if (strcmp(needed[i], name) == 0)
            return true;
    return false;
}

/* Walk the link map from r_map: every object in load order (module order), with which of them were loaded
 * at start (every object up to the last one some startup object needs: that includes LD_PRELOAD's). Returns
 * the number of objects. */
static size_t walk_link_map(pid_t pid, const char *root, int mem, uint64_t lm, struct object *objects)
{
    char *needed[MAX_NEEDED];
    size_t n_needed = 0, n = 0, last_startup = 0;
    for (; lm && n < MAX_OBJECTS; n++) {
        struct link_map entry;        /* only the public fields are read */
        if (!read_at(mem, lm, &entry, sizeof(entry)))
            break;
        struct object *o = &objects[n];
        memset(o, 0, sizeof(*o));
        char name[512] = "", file[700], soname[256];
        if (entry.l_name && pread(mem, name, sizeof(name) - 1, (off_t)(uintptr_t)entry.l_name) <= 0)
            name[0] = '\0';
        name[sizeof(name) - 1] = '\0';
        if (n == 0)
            snprintf(file, sizeof(file), "/proc/%d/exe", (int)pid);    /* the executable: l_name "" */
        else
            snprintf(file, sizeof(file), "%s%s", root, name);
        snprintf(o->path, sizeof(o->path), "%s", n == 0 ? "(the executable)" : name);
        if (n == 0 || name[0] == '/')
            read_object(file, o, needed, &n_needed, soname, sizeof(soname));
        else
            soname[0] = '\0';
        const char *base = strrchr(name, '/');
        if (n == 0 || is_needed(needed, n_needed, base ? base + 1 : name) || is_needed(needed, n_needed, soname))
            last_startup = n;
        lm = (uint64_t)(uintptr_t)entry.l_next;
    }
    for (size_t i = 0; i < n; i++)
        objects[i].startup = i <= last_startup;
    for (size_t i = 0; i < n_needed; i++)
        free(needed[i]);
    return n;
}

int tls_library_place(pid_t pid, const char *root, struct tls_library_place *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    int mem = open(path, O_RDONLY | O_CLOEXEC);
    if (mem < 0)
        return 0;              /* its link map cannot be read: no library marker is known */
    uint64_t r_debug = r_debug_address(pid, mem);
    struct r_debug rd;
    if (!r_debug || !read_at(mem, r_debug, &rd, sizeof(rd)) || !rd.r_map || rd.r_state != RT_CONSISTENT) {
        close(mem);
        return 0;              /* the dynamic linker is not done (or this is not a dynamic program) */
    }
    struct object *objects = calloc(MAX_OBJECTS, sizeof(*objects));
    if (!objects) {
        close(mem);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = walk_link_map(pid, root, mem, (uint64_t)(uintptr_t)rd.r_map, objects);
    close(mem);
    struct tls_module modules[MAX_OBJECTS];
    uint64_t offsets[MAX_OBJECTS];
    size_t n_modules = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct object *o = &objects[i];
        if (o->startup && o->has_tls)
            modules[n_modules++] = o->tls;
        if (!o->has_marker || i == 0)
            continue;          /* (a marker in the executable is found without the link map) */
        snprintf(out->library, sizeof(out->library), "%s", o->path);
        if (!o->startup) {
            snprintf(err, errlen, "%s is in %s, loaded after start (dlopen): its TLS block is dynamic",
                     TLS_MARKER_SYMBOL, o->path);
            rc = -1;
            break;
        }
        tls_static_layout(modules, n_modules, offsets);
        out->tp_offset = (int64_t)o->marker_st_value - (int64_t)offsets[n_modules - 1];
        rc = 1;
    }
    free(objects);
    return rc;
}
