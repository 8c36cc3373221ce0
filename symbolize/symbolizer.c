/* SPDX-License-Identifier: GPL-3.0-or-later */
/* symbolizer.c: the symbolize layer's entry points. Keeps the target's mappings, opens each object once
 * (lazily, on the first address in it), resolves each distinct address once per mapping through libbfd or
 * kallsyms, and caches the pooled result by address and mapping generation, so a repeated address costs a
 * mapping lookup and one hash lookup, and an address whose mapping was replaced resolves afresh. */
#include "symbolize/symbolize_internal.h"

#include <bfd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define UNKNOWN_NAME "[unknown]"
#define KERNEL_OBJECT "[kernel.kallsyms]"
#define DELETED_SUFFIX " (deleted)"

struct object_slot {
    const char *path;           /* interned */
    const char *root;           /* interned */
    uint64_t file_dev, file_ino;
    struct bfd_object *object;  /* NULL: could not be opened (tried once) */
};

struct symbolizer {
    struct symbolizer_options opts;
    struct string_pool strings;
    struct result_pool results;
    struct addr_cache cache;
    struct mapping_table mappings;
    VEC_OF(struct object_slot) objects;
    struct kallsyms kallsyms;
    const char *unknown_name;                 /* interned "[unknown]" */
    const struct sym_result *fallback_user;   /* returned when memory runs out */
    const struct sym_result *fallback_kernel;
};

static pthread_once_t bfd_once = PTHREAD_ONCE_INIT;

/* libbfd reports malformed DWARF and odd sections on stderr; a profiler reading arbitrary binaries
 * degrades to "[unknown]" instead. */
static void quiet_bfd_errors(const char *fmt, va_list ap)
{
    (void)fmt;
    (void)ap;
}

static void init_bfd_once(void)
{
    bfd_init();
    bfd_set_error_handler(quiet_bfd_errors);
}

static const struct sym_result *make_unknown(struct symbolizer *s, const char *object, bool kernel)
{
    struct sym_frame frame = { .name = s->unknown_name, .system_name = s->unknown_name };
    struct sym_result r = { .frames = &frame, .n = 1, .object = object, .kernel = kernel };
    return result_pool_intern(&s->results, &r);
}

struct symbolizer *symbolizer_new(const struct symbolizer_options *opts)
{
    if (pthread_once(&bfd_once, init_bfd_once) != 0)
        return NULL;
    struct symbolizer *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (opts)
        s->opts = *opts;
    s->unknown_name = string_pool_intern(&s->strings, UNKNOWN_NAME);
    if (s->unknown_name) {
        s->fallback_user = make_unknown(s, NULL, false);
        s->fallback_kernel = make_unknown(s, NULL, true);
    }
    if (!s->fallback_user || !s->fallback_kernel) {
        symbolizer_free(s);
        return NULL;
    }
    return s;
}

void symbolizer_free(struct symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->objects.n; i++)
        bfd_object_close(s->objects.v[i].object);
    vec_free(&s->objects);
    kallsyms_free(&s->kallsyms);
    mapping_table_free(&s->mappings);
    addr_cache_free(&s->cache);
    result_pool_free(&s->results);
    string_pool_free(&s->strings);
    free(s);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The name callers show for a mapping: the file's base name, "[vdso]"-style pseudo names as they are. */
static const char *object_name_of(struct symbolizer *s, const char *path)
{
    if (!*path)
        return NULL;
    if (path[0] == '[')
        return string_pool_intern(&s->strings, path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(base);
    if (ends_with(base, DELETED_SUFFIX))
        len -= strlen(DELETED_SUFFIX);
    return string_pool_intern_len(&s->strings, base, len);
}

/* Only real files are opened: not anonymous or pseudo mappings, not files deleted since they were
 * mapped (what is at that path now is another file). */
static bool openable(const struct mapping *m)
{
    return m->path[0] == '/' && !ends_with(m->path, DELETED_SUFFIX) && strncmp(m->path, "/memfd:", 7) != 0;
}

/* Which file root + path is now (a library rewritten in place and mapped again is another file). */
static void identify_file(struct mapping *m)
{
    char *full = NULL;
    struct stat st;
    if (openable(m) && asprintf(&full, "%s%s", m->root, m->path) >= 0 && stat(full, &st) == 0) {
        m->file_dev = (uint64_t)st.st_dev;
        m->file_ino = (uint64_t)st.st_ino;
    }
    free(full);
}

int symbolizer_add_mapping(struct symbolizer *s, uint64_t start, uint64_t end, uint64_t pgoff,
                           const char *path, const char *root)
{
    struct mapping m = { .start = start, .end = end, .pgoff = pgoff };
    m.path = string_pool_intern(&s->strings, path ? path : "");
    m.root = string_pool_intern(&s->strings, root ? root : "");
    if (!m.path || !m.root)
        return -1;
    m.object_name = object_name_of(s, m.path);
    if (*m.path && !m.object_name)
        return -1;
    identify_file(&m);
    return mapping_table_add(&s->mappings, &m);
}

static struct bfd_object *object_for(struct symbolizer *s, const struct mapping *m)
{
    if (!openable(m))
        return NULL;
    for (size_t i = 0; i < s->objects.n; i++)
        if (s->objects.v[i].path == m->path && s->objects.v[i].root == m->root &&
            s->objects.v[i].file_dev == m->file_dev && s->objects.v[i].file_ino == m->file_ino)
            return s->objects.v[i].object;
    struct object_slot *slot = vec_push(&s->objects);
    if (!slot)
        return NULL;
    struct bfd_object *o = bfd_object_open(m->root, m->path, s->opts.debug_files);
    *slot = (struct object_slot){ .path = m->path, .root = m->root, .file_dev = m->file_dev,
                                  .file_ino = m->file_ino, .object = o };
    return o;
}

static const char *intern_base_name(struct symbolizer *s, const char *file)
{
    if (!file || !*file)
        return NULL;
    const char *slash = strrchr(file, '/');
    return string_pool_intern(&s->strings, slash ? slash + 1 : file);
}

static const char *intern_path(struct symbolizer *s, const char *file)
{
    return file && *file ? string_pool_intern(&s->strings, file) : NULL;
}

static const char *intern_system_name(struct symbolizer *s, const char *raw)
{
    return raw && *raw ? string_pool_intern(&s->strings, raw) : s->unknown_name;
}

static const char *intern_display_name(struct symbolizer *s, const char *raw)
{
    if (!raw || !*raw)
        return s->unknown_name;
    char *name = symbolize_display_name(raw, s->opts.demangle);
    if (!name)
        return NULL;
    const char *interned = string_pool_intern(&s->strings, name);
    free(name);
    return interned;
}

/* Resolves a user address (already adjusted for return addresses) in mapping m. */
static const struct sym_result *resolve_user(struct symbolizer *s, const struct mapping *m, uint64_t addr)
{
    struct bfd_object *o = object_for(s, m);
    uint64_t vaddr;
    if (!o || !bfd_object_offset_to_vaddr(o, addr - m->start + m->pgoff, &vaddr))
        return make_unknown(s, m->object_name, false);
    struct raw_lookup raw;
    bfd_object_lookup(o, vaddr, &raw);
    struct sym_frame frames[RAW_FRAMES_MAX];
    for (size_t i = 0; i < raw.n; i++) {
        frames[i] = (struct sym_frame){
            .name = intern_display_name(s, raw.frames[i].name),
            .system_name = intern_system_name(s, raw.frames[i].name),
            .file = intern_base_name(s, raw.frames[i].file),
            .path = intern_path(s, raw.frames[i].file),
            .line = raw.frames[i].line,
            .start_line = i + 1 == raw.n ? raw.function_line : 0,
            .inlined = i + 1 < raw.n,
        };
        if (!frames[i].name || !frames[i].system_name ||
            (raw.frames[i].file && *raw.frames[i].file && (!frames[i].file || !frames[i].path)))
            return NULL;
        if (!frames[i].file || !frames[i].line) {   /* line 0: compiler-generated code, no position */
            frames[i].file = NULL;
            frames[i].path = NULL;
            frames[i].line = 0;
        }
    }
    struct sym_result r = {
        .frames = frames,
        .n = raw.n,
        .object = m->object_name,
        .function_start = raw.have_function ? raw.function_vaddr + (addr - vaddr) : 0,
        .unsymbolized = !bfd_object_has_symbols(o),
    };
    return result_pool_intern(&s->results, &r);
}

const struct sym_result *symbolize_user(struct symbolizer *s, uint64_t addr, bool return_address)
{
    enum addr_kind kind = return_address ? ADDR_USER_RETURN : ADDR_USER;
    /* A return address points after the call; the call instruction is the byte before it. */
    uint64_t lookup = return_address && addr > 0 ? addr - 1 : addr;
    const struct mapping *m = mapping_table_find(&s->mappings, lookup);
    if (!m)   /* not cached: a mapping added later may cover it */
        return s->fallback_user;
    const struct sym_result *hit = addr_cache_get(&s->cache, addr, kind, m->generation);
    if (hit)
        return hit;
    const struct sym_result *r = resolve_user(s, m, lookup);
    if (!r)
        return s->fallback_user;
    /* on failure the answer is still right, uncached */
    (void)addr_cache_put(&s->cache, addr, kind, m->generation, r);
    return r;
}

const struct sym_result *symbolize_kernel(struct symbolizer *s, uint64_t addr)
{
    const struct sym_result *hit = addr_cache_get(&s->cache, addr, ADDR_KERNEL, 0);
    if (hit)
        return hit;
    if (!s->opts.kernel)
        return s->fallback_kernel;
    if (!s->kallsyms.loaded)
        (void)kallsyms_load(&s->kallsyms, "/proc/kallsyms", &s->strings);   /* unreadable: all unknown */
    const struct kallsyms_entry *e = kallsyms_find(&s->kallsyms, addr);
    const struct sym_result *r;
    if (!e) {
        r = s->fallback_kernel;
    } else {
        const char *object = e->module ? e->module : string_pool_intern(&s->strings, KERNEL_OBJECT);
        struct sym_frame frame = { .name = e->name, .system_name = e->name };
        struct sym_result res = { .frames = &frame, .n = 1, .object = object, .function_start = e->addr,
                                  .kernel = true };
        r = object ? result_pool_intern(&s->results, &res) : NULL;
        if (!r)
            return s->fallback_kernel;
    }
    (void)addr_cache_put(&s->cache, addr, ADDR_KERNEL, 0, r);
    return r;
}

/* The build id as lowercase hex, interned; NULL when the object has none (or memory ran out). */
static const char *build_id_hex(struct symbolizer *s, const struct bfd_object *o)
{
    const uint8_t *id;
    size_t len = o ? bfd_object_build_id(o, &id) : 0;
    if (len == 0 || len > 64)
        return NULL;
    char hex[129];
    for (size_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    return string_pool_intern(&s->strings, hex);
}

bool symbolize_user_mapping(struct symbolizer *s, uint64_t addr, bool return_address, struct sym_mapping *out)
{
    const struct mapping *m = mapping_table_find(&s->mappings, return_address && addr > 0 ? addr - 1 : addr);
    if (!m)
        return false;
    *out = (struct sym_mapping){ .start = m->start, .end = m->end, .pgoff = m->pgoff, .path = m->path,
                                 .build_id = build_id_hex(s, object_for(s, m)), .generation = m->generation };
    return true;
}

bool symbolize_mapping_below(struct symbolizer *s, uint64_t addr, struct sym_mapping *out)
{
    const struct mapping *below = NULL;
    for (size_t i = 0; i < s->mappings.items.n && s->mappings.items.v[i].start <= addr; i++)
        below = &s->mappings.items.v[i];
    if (!below)
        return false;
    *out = (struct sym_mapping){ .start = below->start, .end = below->end, .pgoff = below->pgoff,
                                 .path = below->path, .generation = below->generation };
    return true;
}

bool symbolize_object_report(struct symbolizer *s, const char *object, struct sym_object_report *out)
{
    for (size_t i = 0; i < s->mappings.items.n; i++) {
        const struct mapping *m = &s->mappings.items.v[i];
        if (!m->object_name || strcmp(m->object_name, object) != 0)
            continue;
        struct bfd_object *o = object_for(s, m);
        if (!o || bfd_object_has_symbols(o))
            continue;
        *out = (struct sym_object_report){ .path = m->path, .root = m->root, .build_id = build_id_hex(s, o),
                                           .dynamic_symbols = bfd_object_has_dynamic_symbols(o),
                                           .debug_file = bfd_object_debug_file(o) };
        return true;
    }
    return false;
}
