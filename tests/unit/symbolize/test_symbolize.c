/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_symbolize.c: the symbolize layer on real code: this test binary's own functions (through
 * /proc/self/maps), an inlined call chain, libc's dynamic symbols, separate debug files found by
 * .gnu_debuglink and by build-id under a target root, kernel symbols, the address cache, and what pprof
 * needs besides (system names, source paths, declaration lines, the mapping with its build id). */
#include "elf/elf_file.h"
#include "symbolize/symbolize.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/shell_run.h"

/* ---- sanitizer settings (used only in ASan builds) --------------------------------------------------
 * libbfd 2.40 does not free the .debug_rnglists buffer it reads for DWARF 5 objects when the bfd is
 * closed (one buffer per object, allocated under _bfd_elf_find_nearest_line). That leak is libbfd's;
 * it is suppressed by that function name, which needs full unwinding through libbfd's frame-pointer-less
 * code, so every other leak is still reported. */
const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
const char *__lsan_default_suppressions(void)
{
    return "leak:_bfd_elf_find_nearest_line\n";
}

/* ---- code to symbolize ---------------------------------------------------------------------------
 * Kept out of line and unclonable (no .constprop/.isra copies) so their addresses and names are exact. */
#if defined(__has_attribute) && __has_attribute(noclone)
#define NOINLINE __attribute__((noinline, noclone))
#else
#define NOINLINE __attribute__((noinline))
#endif

static volatile uint64_t captured_return_address;

static void NOINLINE capture_return_address(void)
{
    captured_return_address = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

/* The next three definitions' line numbers are checked below: keep their layout. */
static const unsigned inlined_call_line = __LINE__ + 3;
static inline __attribute__((always_inline)) int inlined_helper(int x)
{
    capture_return_address();
    return x * 3;
}

static const unsigned outer_call_line = __LINE__ + 3;
static int NOINLINE outer_function(int x)
{
    int y = inlined_helper(x);
    return y + 1;
}

static const unsigned target_function_line = __LINE__ + 1;
static int NOINLINE target_function(int x) { return x * 5 + (int)captured_return_address; }

/* ---- helpers -------------------------------------------------------------------------------------- */
/* Adds every file-backed mapping of this process; paths in rewrite_from are given as rewrite_to under
 * root instead (to test /proc/PID/root-style roots). Returns the number added. */
static int add_self_mappings(struct symbolizer *s, const char *rewrite_from, const char *rewrite_to,
                             const char *root)
{
    FILE *f = fopen("/proc/self/maps", "re");
    assert_non_null(f);
    char line[4096];
    int added = 0;
    while (fgets(line, sizeof(line), f)) {
        uint64_t start, end, pgoff;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &pgoff,
                   &path_at) != 4 || path_at == 0)
            continue;
        char *path = line + path_at;
        path[strcspn(path, "\n")] = '\0';
        if (rewrite_from && strcmp(path, rewrite_from) == 0)
            assert_int_equal(symbolizer_add_mapping(s, start, end, pgoff, rewrite_to, root), 0);
        else
            assert_int_equal(symbolizer_add_mapping(s, start, end, pgoff, path, NULL), 0);
        added++;
    }
    assert_int_equal(fclose(f), 0);
    return added;
}

static struct symbolizer *new_self_symbolizer(void)
{
    struct symbolizer_options opts = { .demangle = true };
    struct symbolizer *s = symbolizer_new(&opts);
    assert_non_null(s);
    assert_true(add_self_mappings(s, NULL, NULL, NULL) > 0);
    return s;
}

static uint64_t address_of(void *fn)
{
    return (uint64_t)(uintptr_t)fn;
}

/* ---- tests ---------------------------------------------------------------------------------------- */
static void test_own_function(void **state)
{
    (void)state;
    struct symbolizer *s = new_self_symbolizer();
    const struct sym_result *r = symbolize_user(s, address_of((void *)target_function), false);
    assert_int_equal(r->n, 1);
    assert_string_equal(r->frames[0].name, "target_function");
    assert_non_null(r->frames[0].file);
    assert_string_equal(r->frames[0].file, "test_symbolize.c");
    assert_int_equal(r->frames[0].line, target_function_line);
    assert_false(r->frames[0].inlined);
    assert_false(r->kernel);
    assert_int_equal(r->function_start, address_of((void *)target_function));
    assert_non_null(r->object);
    assert_string_equal(r->object, program_invocation_short_name);
    /* pprof's parts: the linker's name, DWARF's path, the declaration line */
    assert_string_equal(r->frames[0].system_name, "target_function");
    assert_non_null(r->frames[0].path);
    size_t path_len = strlen(r->frames[0].path), tail_len = strlen("symbolize/test_symbolize.c");
    assert_true(path_len >= tail_len);
    assert_string_equal(r->frames[0].path + path_len - tail_len, "symbolize/test_symbolize.c");
    assert_int_equal(r->frames[0].start_line, target_function_line);
    /* the mapping that holds it, with this binary's build id as elf/ reads it */
    struct sym_mapping m;
    assert_true(symbolize_user_mapping(s, address_of((void *)target_function), false, &m));
    assert_true(m.start <= address_of((void *)target_function) && address_of((void *)target_function) < m.end);
    char self[4096];
    ssize_t self_len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    assert_true(self_len > 0);
    self[self_len] = '\0';
    assert_string_equal(m.path, self);
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, self), 0);
    const uint8_t *id;
    size_t id_len = elf_file_build_id(&ef, &id);
    char hex[129] = "";
    for (size_t i = 0; i < id_len && i < 64; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    elf_file_close(&ef);
    if (id_len)
        assert_string_equal(m.build_id, hex);
    else
        assert_null(m.build_id);
    assert_false(symbolize_user_mapping(s, 16, false, &m));
    /* A few bytes in: same function, same start. */
    const struct sym_result *r2 = symbolize_user(s, address_of((void *)target_function) + 2, false);
    assert_string_equal(r2->frames[r2->n - 1].name, "target_function");
    assert_int_equal(r2->function_start, address_of((void *)target_function));
    symbolizer_free(s);
}

static void test_inline_chain(void **state)
{
    (void)state;
    assert_int_equal(outer_function(2), 7);
    uint64_t ret = captured_return_address;
    assert_true(ret > address_of((void *)outer_function));
    struct symbolizer *s = new_self_symbolizer();
    const struct sym_result *r = symbolize_user(s, ret, true);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->frames[0].name, "inlined_helper");
    assert_true(r->frames[0].inlined);
    assert_string_equal(r->frames[0].file, "test_symbolize.c");
    assert_int_equal(r->frames[0].line, inlined_call_line);
    assert_string_equal(r->frames[1].name, "outer_function");
    assert_false(r->frames[1].inlined);
    assert_string_equal(r->frames[1].file, "test_symbolize.c");
    assert_int_equal(r->frames[1].line, outer_call_line);
    assert_int_equal(r->frames[1].start_line, outer_call_line - 2);   /* its declaration */
    assert_int_equal(r->frames[0].start_line, 0);                     /* not looked up for inlined frames */
    assert_int_equal(r->function_start, address_of((void *)outer_function));
    symbolizer_free(s);
}

static void test_cache_returns_same_pointer(void **state)
{
    (void)state;
    struct symbolizer *s = new_self_symbolizer();
    uint64_t a = address_of((void *)target_function);
    const struct sym_result *first = symbolize_user(s, a, false);
    const struct sym_result *again = symbolize_user(s, a, false);
    assert_ptr_equal(first, again);
    /* The same source position reached through another address shares the pooled result and strings. */
    const struct sym_result *other = symbolize_user(s, address_of((void *)test_own_function), false);
    assert_ptr_not_equal(first, other);
    assert_ptr_equal(first->frames[0].file, other->frames[0].file);
    symbolizer_free(s);
}

static void test_libc_dynamic_symbol(void **state)
{
    (void)state;
    struct symbolizer *s = new_self_symbolizer();
    const struct sym_result *r = symbolize_user(s, address_of((void *)getpid), false);
    const char *name = r->frames[r->n - 1].name;
    assert_non_null(strstr(name, "getpid"));
    assert_null(strchr(name, '@'));   /* no symbol version */
    assert_non_null(r->object);
    assert_non_null(strstr(r->object, "libc"));
    assert_int_equal(r->function_start, address_of((void *)getpid));
    symbolizer_free(s);
}

static void test_unmapped_address_is_unknown(void **state)
{
    (void)state;
    struct symbolizer *s = new_self_symbolizer();
    const struct sym_result *r = symbolize_user(s, 0x10, false);
    assert_int_equal(r->n, 1);
    assert_string_equal(r->frames[0].name, "[unknown]");
    assert_null(r->frames[0].file);
    assert_null(r->object);
    assert_int_equal(r->function_start, 0);
    /* A mapping that appears later (dlopen seen after the address) makes it resolvable. */
    assert_int_equal(symbolizer_add_mapping(s, 0x0, 0x1000, 0, "/opt/app/late.so (deleted)", NULL), 0);
    r = symbolize_user(s, 0x10, false);
    assert_non_null(r->object);
    assert_string_equal(r->object, "late.so");
    /* An address past it: unknown, and the mapping below it is the one that tells where it lies. */
    assert_int_equal(symbolizer_add_mapping(s, 0x5000, 0x6000, 0x2000, "/opt/app/far.so (deleted)", NULL), 0);
    assert_null(symbolize_user(s, 0x1800, false)->object);
    struct sym_mapping below;
    assert_true(symbolize_mapping_below(s, 0x1800, &below));
    assert_int_equal(below.start, 0x0);
    assert_int_equal(below.end, 0x1000);
    assert_string_equal(below.path, "/opt/app/late.so (deleted)");
    assert_true(symbolize_mapping_below(s, 0x7000, &below));
    assert_int_equal(below.start, 0x5000);
    assert_int_equal(below.pgoff, 0x2000);
    symbolizer_free(s);
    s = new_self_symbolizer();
    assert_false(symbolize_mapping_below(s, 0x10, &below));   /* nothing starts below it */
    symbolizer_free(s);
}

static void test_deleted_and_anonymous_mappings(void **state)
{
    (void)state;
    struct symbolizer_options opts = { .demangle = true };
    struct symbolizer *s = symbolizer_new(&opts);
    assert_non_null(s);
    assert_int_equal(symbolizer_add_mapping(s, 0x100000, 0x200000, 0, "/opt/app/server (deleted)", NULL), 0);
    assert_int_equal(symbolizer_add_mapping(s, 0x300000, 0x301000, 0, "[vdso]", ""), 0);
    const struct sym_result *r = symbolize_user(s, 0x100123, false);
    assert_string_equal(r->frames[0].name, "[unknown]");
    assert_string_equal(r->object, "server");
    r = symbolize_user(s, 0x300010, false);
    assert_string_equal(r->frames[0].name, "[unknown]");
    assert_string_equal(r->object, "[vdso]");
    /* A later mapping over the same range replaces the earlier one, cached answers included. */
    assert_int_equal(symbolizer_add_mapping(s, 0x100000, 0x200000, 0, "/opt/app/other (deleted)", NULL), 0);
    r = symbolize_user(s, 0x100123, false);
    assert_string_equal(r->object, "other");
    /* ... also as a return address, and when the first object comes back (dlopen again) */
    r = symbolize_user(s, 0x100124, true);
    assert_string_equal(r->object, "other");
    assert_int_equal(symbolizer_add_mapping(s, 0x100000, 0x200000, 0, "/opt/app/server (deleted)", NULL), 0);
    assert_string_equal(symbolize_user(s, 0x100123, false)->object, "server");
    assert_string_equal(symbolize_user(s, 0x100124, true)->object, "server");
    /* the same mapping reported again is not a replacement: the same answers */
    const struct sym_result *before = symbolize_user(s, 0x100123, false);
    assert_int_equal(symbolizer_add_mapping(s, 0x100000, 0x180000, 0, "/opt/app/server (deleted)", NULL), 0);
    assert_ptr_equal(symbolize_user(s, 0x100123, false), before);
    /* a replacement over part of the range leaves the rest as it was */
    assert_int_equal(symbolizer_add_mapping(s, 0x180000, 0x200000, 0, "/opt/app/third (deleted)", NULL), 0);
    assert_string_equal(symbolize_user(s, 0x100123, false)->object, "server");
    assert_string_equal(symbolize_user(s, 0x180123, false)->object, "third");
    /* equal results share one id, distinct ones get distinct ids */
    assert_int_equal(symbolize_user(s, 0x100123, false)->id, before->id);
    assert_int_not_equal(symbolize_user(s, 0x180123, false)->id, before->id);
    symbolizer_free(s);
}

/* One line, so the function's entry is on line 1 whichever line a compiler gives the prologue. */
static const char fixture_source[] =
    "int dbg_fixture_function(int x) { int y = x * 7; return y + 1; }\n"
    "int dbg_fixture_other(int x) { return x - 1; }\n";
#define FIXTURE_FUNCTION_LINE 1

/* Builds lib.so in dir from fixture_source with DWARF and a build-id. */
static void build_fixture_library(const char *dir, const char *lib)
{
    char src[512];
    snprintf(src, sizeof(src), "%s/dbg_fixture.c", dir);
    FILE *f = fopen(src, "we");
    assert_non_null(f);
    assert_int_equal(fputs(fixture_source, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    run("cd '%s' && cc -g -O0 -shared -fPIC -Wl,--build-id -o '%s' dbg_fixture.c", dir, lib);
}

static uint64_t dlsym_fixture(const char *path, void **handle)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle)
        fail_msg("dlopen %s: %s", path, dlerror());
    void *fn = dlsym(*handle, "dbg_fixture_function");
    assert_non_null(fn);
    return address_of(fn);
}

/* .gnu_debuglink to a file under ROOT/usr/lib/debug/DIR/: only the symbolizer's own lookup finds it
 * (libbfd's built-in fallback searches beside the file and under the host's /usr/lib/debug). */
static void test_debuglink_debug_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-symbolize-XXXXXX";
    assert_non_null(mkdtemp(dir));
    run("mkdir -p '%s/root/lib' '%s/root/usr/lib/debug/lib'", dir, dir);
    build_fixture_library(dir, "root/lib/libdbglink.so");
    run("cd '%s/root/lib' && objcopy --only-keep-debug libdbglink.so libdbglink.so.debug && "
        "strip --strip-debug libdbglink.so && objcopy --remove-section=.note.gnu.build-id libdbglink.so && "
        "objcopy --add-gnu-debuglink=libdbglink.so.debug libdbglink.so && "
        "mv libdbglink.so.debug ../usr/lib/debug/lib/",
        dir);
    char lib[512], root[512];
    snprintf(lib, sizeof(lib), "%s/root/lib/libdbglink.so", dir);
    snprintf(root, sizeof(root), "%s/root", dir);
    void *handle;
    uint64_t fn = dlsym_fixture(lib, &handle);

    struct symbolizer_options opts = { .demangle = true };
    struct symbolizer *s = symbolizer_new(&opts);
    assert_non_null(s);
    add_self_mappings(s, lib, "/lib/libdbglink.so", root);
    const struct sym_result *r = symbolize_user(s, fn, false);
    assert_string_equal(r->frames[r->n - 1].name, "dbg_fixture_function");
    assert_non_null(r->frames[r->n - 1].file);
    assert_string_equal(r->frames[r->n - 1].file, "dbg_fixture.c");
    assert_int_equal(r->frames[r->n - 1].line, FIXTURE_FUNCTION_LINE);
    assert_string_equal(r->object, "libdbglink.so");
    symbolizer_free(s);

    /* Without the debug file the same address has a name (symbol table) but no line. */
    run("rm -r '%s/root/usr/lib/debug'", dir);
    s = symbolizer_new(&opts);
    assert_non_null(s);
    add_self_mappings(s, lib, "/lib/libdbglink.so", root);
    r = symbolize_user(s, fn, false);
    assert_string_equal(r->frames[r->n - 1].name, "dbg_fixture_function");
    assert_null(r->frames[r->n - 1].file);
    symbolizer_free(s);

    assert_int_equal(dlclose(handle), 0);
    run("rm -r '%s'", dir);
}

/* A stand-in for debuginfod: sends the file at path (counting the questions). */
struct fetched_file {
    char path[512];
    int asked;
};
static int fetch_kept_file(void *ctx, const uint8_t *build_id, size_t len, const char *object, char **path)
{
    struct fetched_file *f = ctx;
    (void)build_id;
    (void)len;
    (void)object;
    f->asked++;
    *path = strdup(f->path);
    return *path ? 0 : -ENOMEM;
}

static void test_build_id_debug_file_under_root(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-symbolize-XXXXXX";
    assert_non_null(mkdtemp(dir));
    run("mkdir -p '%s/root/lib'", dir);
    build_fixture_library(dir, "root/lib/libbid.so");
    /* Debug file by build-id under the root; the library itself fully stripped (no .symtab, no DWARF). */
    run("cd '%s' && id=$(readelf -n root/lib/libbid.so | sed -n 's/.*Build ID: *//p') && "
        "d=root/usr/lib/debug/.build-id/$(echo $id | cut -c1-2) && mkdir -p $d && "
        "objcopy --only-keep-debug root/lib/libbid.so $d/$(echo $id | cut -c3-).debug && strip root/lib/libbid.so",
        dir);
    char lib[512], root[512];
    snprintf(lib, sizeof(lib), "%s/root/lib/libbid.so", dir);
    snprintf(root, sizeof(root), "%s/root", dir);
    void *handle;
    uint64_t fn = dlsym_fixture(lib, &handle);

    struct symbolizer_options opts = { .demangle = true };
    struct symbolizer *s = symbolizer_new(&opts);
    assert_non_null(s);
    add_self_mappings(s, lib, "/lib/libbid.so", root);
    const struct sym_result *r = symbolize_user(s, fn + 4, false);
    assert_string_equal(r->frames[r->n - 1].name, "dbg_fixture_function");
    assert_non_null(r->frames[r->n - 1].file);
    assert_string_equal(r->frames[r->n - 1].file, "dbg_fixture.c");
    assert_int_equal(r->frames[r->n - 1].line, FIXTURE_FUNCTION_LINE);
    assert_int_equal(r->function_start, fn);
    assert_string_equal(r->object, "libbid.so");
    assert_false(r->unsymbolized);
    struct sym_object_report report;
    assert_false(symbolize_object_report(s, "libbid.so", &report));
    symbolizer_free(s);

    /* The debug file moved away: the frames are unsymbolized, and the report says where it was looked for. */
    run("cd '%s' && mv root/usr/lib/debug/.build-id/*/*.debug libbid.debug", dir);
    s = symbolizer_new(&opts);
    assert_non_null(s);
    add_self_mappings(s, lib, "/lib/libbid.so", root);
    r = symbolize_user(s, fn + 4, false);
    assert_true(r->unsymbolized);
    assert_true(symbolize_object_report(s, "libbid.so", &report));
    assert_string_equal(report.path, "/lib/libbid.so");
    assert_string_equal(report.root, root);
    assert_non_null(report.build_id);
    assert_true(report.dynamic_symbols);
    assert_string_equal(report.debug_file->path, "");
    assert_int_equal(report.debug_file->debuginfod, DEBUGINFOD_OFF);
    assert_non_null(strstr(report.debug_file->build_id_path, "/root/usr/lib/debug/.build-id/"));
    assert_non_null(strstr(report.debug_file->build_id_path, report.build_id + 2));
    symbolizer_free(s);

    /* ... and fetched (a stand-in for debuginfod) through the shared lookup, it names and places the frames. */
    struct fetched_file fetched;
    snprintf(fetched.path, sizeof(fetched.path), "%s/libbid.debug", dir);
    fetched.asked = 0;
    struct debug_file_settings settings = { .debuginfod = true, .fetch = fetch_kept_file, .fetch_ctx = &fetched };
    struct debug_files *df = debug_files_new(&settings);
    assert_non_null(df);
    struct symbolizer_options shared = { .demangle = true, .debug_files = df };
    s = symbolizer_new(&shared);
    assert_non_null(s);
    add_self_mappings(s, lib, "/lib/libbid.so", root);
    r = symbolize_user(s, fn + 4, false);
    assert_false(r->unsymbolized);
    assert_string_equal(r->frames[r->n - 1].name, "dbg_fixture_function");
    assert_int_equal(r->frames[r->n - 1].line, FIXTURE_FUNCTION_LINE);
    assert_int_equal(fetched.asked, 1);
    symbolizer_free(s);
    debug_files_free(df);

    assert_int_equal(dlclose(handle), 0);
    run("rm -r '%s'", dir);
}

/* File offset of function name in the object at path. */
static uint64_t function_offset(const char *path, const char *name)
{
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, path), 0);
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    int64_t offset = -1;
    assert_true(elf_symbols_begin(&it, &ef, ".symtab"));
    while (offset < 0 && elf_symbols_next(&it, &sym))
        if (strcmp(sym.name, name) == 0)
            offset = elf_file_vaddr_to_offset(&ef, sym.value);
    elf_file_close(&ef);
    assert_true(offset > 0);
    return (uint64_t)offset;
}

/* A library rewritten in place (same path, another inode) and mapped again at the same address is another
 * object: its own names, not what was cached or opened for the old file. */
static void test_same_path_rewritten(void **state)
{
    (void)state;
    char dir[] = "/tmp/taskspy-symbolize-XXXXXX";
    assert_non_null(mkdtemp(dir));
    run("cd '%s' && printf 'int first_name_fn(int x) { return x * 7 + 1; }\\n' > v1.c && "
        "printf 'int other_name_fn(int x) { return x * 7 + 1; }\\n' > v2.c && "
        "cc -g -O1 -shared -fPIC -o lib.so v1.c && cc -g -O1 -shared -fPIC -o lib2.so v2.c",
        dir);
    char lib[512];
    snprintf(lib, sizeof(lib), "%s/lib.so", dir);
    uint64_t offset = function_offset(lib, "first_name_fn");
    const uint64_t start = 0x10000000, end = start + 0x100000;

    struct symbolizer_options opts = { .demangle = true };
    struct symbolizer *s = symbolizer_new(&opts);
    assert_non_null(s);
    assert_int_equal(symbolizer_add_mapping(s, start, end, 0, lib, ""), 0);
    const struct sym_result *r = symbolize_user(s, start + offset, false);
    assert_string_equal(r->frames[r->n - 1].name, "first_name_fn");
    run("cd '%s' && mv lib2.so lib.so", dir);   /* a new inode at the same path */
    assert_int_equal(function_offset(lib, "other_name_fn"), offset);
    assert_int_equal(symbolizer_add_mapping(s, start, end, 0, lib, ""), 0);
    r = symbolize_user(s, start + offset, false);
    assert_string_equal(r->frames[r->n - 1].name, "other_name_fn");
    symbolizer_free(s);
    run("rm -r '%s'", dir);
}

/* A text symbol from /proc/kallsyms with a distinct address, or 0 if addresses are hidden. */
static uint64_t pick_kernel_symbol(char *name, size_t name_size)
{
    FILE *f = fopen("/proc/kallsyms", "re");
    if (!f)
        return 0;
    char line[512];
    uint64_t found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
        uint64_t addr;
        char type, sym[256];
        if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) == 3 && addr && (type == 'T') &&
            strchr(line, '\t') == NULL && strcmp(sym, "schedule") == 0) {
            snprintf(name, name_size, "%s", sym);
            found = addr;
        }
    }
    assert_int_equal(fclose(f), 0);
    return found;
}

static void test_kernel_symbols(void **state)
{
    (void)state;
    struct symbolizer_options opts = { .kernel = true, .demangle = true };
    struct symbolizer *s = symbolizer_new(&opts);
    assert_non_null(s);
    char name[256];
    uint64_t addr = pick_kernel_symbol(name, sizeof(name));
    const struct sym_result *r = symbolize_kernel(s, addr ? addr + 1 : 0xffffffff81000010ull);
    assert_true(r->kernel);
    assert_int_equal(r->n, 1);
    if (addr) {
        assert_string_equal(r->frames[0].name, name);
        assert_int_equal(r->function_start, addr);
        assert_string_equal(r->object, "[kernel.kallsyms]");
        assert_ptr_equal(symbolize_kernel(s, addr + 1), r);
    } else {   /* kptr_restrict: nothing can be resolved */
        assert_string_equal(r->frames[0].name, "[unknown]");
    }
    symbolizer_free(s);

    /* Without opts.kernel, kallsyms is not read. */
    struct symbolizer_options no_kernel = { .demangle = true };
    s = symbolizer_new(&no_kernel);
    assert_non_null(s);
    r = symbolize_kernel(s, addr ? addr : 0xffffffff81000010ull);
    assert_true(r->kernel);
    assert_string_equal(r->frames[0].name, "[unknown]");
    symbolizer_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_function),
        cmocka_unit_test(test_inline_chain),
        cmocka_unit_test(test_cache_returns_same_pointer),
        cmocka_unit_test(test_libc_dynamic_symbol),
        cmocka_unit_test(test_unmapped_address_is_unknown),
        cmocka_unit_test(test_deleted_and_anonymous_mappings),
        cmocka_unit_test(test_debuglink_debug_file),
        cmocka_unit_test(test_build_id_debug_file_under_root),
        cmocka_unit_test(test_same_path_rewritten),
        cmocka_unit_test(test_kernel_symbols),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
