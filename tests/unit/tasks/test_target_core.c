/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_target_core.c: a core file as the task reader's target (tasks/target_core.c), on small cores of a real
 * shared object built here (its program in these cores): memory the core saved is read from it; code it left out
 * (the kernel's empty segments, gdb's missing ones) from the file, at the mapped offset, once the file's build id
 * is the one in the core's copy of its first page; its relocated and writable pages never from the file, and
 * what cannot be read counted as the core's gaps, with the file mapped there; a program of another build refused
 * in one line naming both build ids, --exe taking its place, a missing one asking for --exe; a core without the
 * program's first page taken unchecked and said so; threads with their thread pointer and saved stack. */
#include "tasks/tasks_internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/shell_run.h"

#include "tests/unit/elf/core_builder.h"

#define BASE 0x7f1200000000ull
#define STACK 0x7ffd00000000ull

static char dir[] = "/tmp/taskspy-target-core-XXXXXX";
static char lib[600], other[600], copy[600], core_path[600];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(lib, sizeof(lib), "%s/libprog.so", dir);
    snprintf(other, sizeof(other), "%s/other.so", dir);
    snprintf(copy, sizeof(copy), "%s/copy.so", dir);
    snprintf(core_path, sizeof(core_path), "%s/core", dir);
    /* relocated data (a pointer table: RELRO under -z relro) and writable data beside the code */
    run("cd '%s' && printf 'int f(int x) { return x * 3; }\\nint g(int x) { return f(x) + 1; }\\n"
        "int (*const table[])(int) = { f, g };\\nint counter = 5;\\n' > v1.c && "
        "cc -O1 -shared -fPIC -Wl,--build-id -Wl,-z,relro -o libprog.so v1.c && cp libprog.so copy.so && "
        "sed 's/x \\* 3/x * 4/' v1.c > v2.c && cc -O1 -shared -fPIC -Wl,--build-id -o other.so v2.c", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    run("rm -rf '%s'", dir);
    return 0;
}

struct mapped_lib {
    struct elf_file elf;
    uint64_t code;             /* the runtime address of f's first byte */
    int64_t code_offset;       /* its file offset */
    uint64_t relro;            /* an address in the RELRO pages (the table) */
    uint64_t data;             /* an address in the writable data (counter) */
};

static uint64_t symbol(const struct elf_file *ef, const char *name)
{
    struct elf_symbol_iter it;
    struct elf_symbol sym;
    assert_true(elf_symbols_begin(&it, ef, ".dynsym"));
    while (elf_symbols_next(&it, &sym))
        if (strcmp(sym.name, name) == 0 && sym.section != SHN_UNDEF)
            return sym.value;
    fail_msg("no symbol %s", name);
    return 0;
}

/* A core of the library mapped at BASE as its program (the kernel's layout: one NT_FILE entry per segment's
   pages). header_saved: the core saved the first page; kernel: the pages it left out have empty segments
   (else none, as gdb writes). named: the path the core names. */
static void write_core(struct mapped_lib *m, const char *named, bool header_saved, bool kernel)
{
    assert_int_equal(elf_file_open(&m->elf, lib), 0);
    static struct core_builder b;
    memset(&b, 0, sizeof(b));
    core_process(&b, 999, "prog", "prog");
    core_thread(&b, 999, 6, BASE + symbol(&m->elf, "f"), STACK + 0x100, 0x7f0000abc000);
    core_thread(&b, 1000, 0, 0, STACK + 0x3000, 0x7f0000def000);
    static char stack_bytes[0x1000];
    memset(stack_bytes, 0x5a, sizeof(stack_bytes));
    for (size_t i = 0; i < m->elf.n_phdrs; i++) {
        const Elf64_Phdr *ph = &m->elf.phdrs[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t start = BASE + (ph->p_vaddr & ~0xfffull), end = (BASE + ph->p_vaddr + ph->p_memsz + 0xfff) & ~0xfffull;
        core_file(&b, start, end, ph->p_offset & ~0xfffull, named);
        bool first = (ph->p_offset & ~0xfffull) == 0;
        if (first && header_saved)
            core_segment(&b, start, end - start, m->elf.data, 0x1000, PF_R);
        else if (kernel)
            core_segment(&b, start, end - start, NULL, 0, (ph->p_flags & PF_W) ? PF_R | PF_W : ph->p_flags);
    }
    core_files_note(&b);
    core_auxv(&b, AT_ENTRY, BASE + symbol(&m->elf, "g"));
    core_auxv_note(&b);
    core_segment(&b, STACK, 0x2000, stack_bytes, 0x1000, PF_R | PF_W);       /* its second page left out */
    size_t size = 0;
    uint8_t *image = core_image(&b, &size);
    assert_non_null(image);
    FILE *f = fopen(core_path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(image, 1, size, f), size);
    fclose(f);
    free(image);
    m->code = BASE + symbol(&m->elf, "f");
    m->code_offset = elf_file_vaddr_to_offset(&m->elf, symbol(&m->elf, "f"));
    m->relro = BASE + symbol(&m->elf, "table");
    m->data = BASE + symbol(&m->elf, "counter");
    assert_true(m->code_offset > 0);
}

static void check_reads(bool kernel)
{
    struct mapped_lib m;
    write_core(&m, lib, true, kernel);
    struct target_view *t;
    char err[1024] = "";
    if (view_open_core(&t, core_path, NULL, err, sizeof(err)) != 0)
        fail_msg("view_open_core: %s", err);
    assert_int_equal(t->pid, 999);
    assert_string_equal(t->program, lib);
    assert_false(t->program_unchecked);
    /* code the core left out: from the file, byte for byte */
    uint8_t code[32];
    assert_true(view_read(t, m.code, code, sizeof(code)));
    assert_memory_equal(code, m.elf.data + m.code_offset, sizeof(code));
    /* the first page the core saved */
    uint8_t magic[4];
    assert_true(view_read(t, BASE, magic, 4));
    assert_memory_equal(magic, ELFMAG, 4);
    assert_int_equal(t->gaps.pages, 0);
    /* relocated and writable data: not from the file; counted, the file named */
    uint64_t word;
    assert_false(view_read(t, m.relro, &word, 8));
    assert_int_equal(t->gaps.pages, 1);
    assert_int_equal(t->gaps.first, m.relro & ~0xfffull);
    assert_string_equal(t->gaps.first_path, lib);
    assert_false(view_read(t, m.data, &word, 4));
    assert_false(view_read(t, m.data, &word, 4));            /* (a page counted once) */
    assert_true(t->gaps.pages == 1 || t->gaps.pages == 2);   /* (the table and counter may share a page) */
    size_t counted = t->gaps.pages;
    /* the stack: its saved page read, the left-out one counted; unmapped memory neither */
    assert_true(view_read(t, STACK + 8, &word, 8));
    assert_int_equal(word, 0x5a5a5a5a5a5a5a5aull);
    assert_false(view_read(t, STACK + 0x1ff8, &word, 16));
    assert_int_equal(t->gaps.pages, counted + 1);
    assert_false(view_read(t, 0x1000, &word, 8));
    assert_int_equal(t->gaps.pages, counted + 1);
    /* threads: thread pointers from the registers, the stack as saved from rsp */
    struct target_threads threads;
    assert_int_equal(t->ops->threads(t, NULL, NULL, &threads, err, sizeof(err)), 0);
    assert_int_equal(threads.n, 2);
    assert_int_equal(threads.v[0].tid, 999);
    assert_int_equal(threads.v[0].fsbase, 0x7f0000abc000);
    assert_int_equal(threads.v[0].stack_len, 0x1000 - 0x100);
    assert_null(threads.v[1].stack);                         /* rsp in the left-out page */
    vec_free(&threads);
    const struct target_mapping *code_map = target_maps_find(&t->maps, m.code);
    assert_non_null(code_map);
    assert_true(code_map->executable);
    assert_true(code_map->read_only);
    assert_string_equal(code_map->path, lib);
    assert_false(t->ops->gone(t));
    view_close(t);
    elf_file_close(&m.elf);
}

static void test_reads_kernel_core(void **state)
{
    (void)state;
    check_reads(true);
}

static void test_reads_gdb_core(void **state)
{
    (void)state;
    check_reads(false);
}

static void test_program_checked(void **state)
{
    (void)state;
    struct mapped_lib m;
    struct target_view *t;
    char err[1024] = "";
    write_core(&m, lib, true, true);
    elf_file_close(&m.elf);
    /* another build at the path the core names: refused, both build ids named; --exe gives the right one */
    run("cp '%s' '%s.keep' && cp '%s' '%s'", lib, lib, other, lib);
    assert_int_equal(view_open_core(&t, core_path, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is not the program of"));
    assert_non_null(strstr(err, "give its file with --exe"));
    assert_int_equal(view_open_core(&t, core_path, other, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "(build id "));
    if (view_open_core(&t, core_path, copy, err, sizeof(err)) != 0)
        fail_msg("with --exe: %s", err);
    assert_string_equal(t->program, copy);
    view_close(t);
    /* gone: --exe asked for */
    run("rm '%s'", lib);
    assert_int_equal(view_open_core(&t, core_path, NULL, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "give its file with --exe PROGRAM"));
    assert_non_null(strstr(err, strerror(ENOENT)));
    run("mv '%s.keep' '%s'", lib, lib);
    /* no first page in the core: taken as found, and said */
    write_core(&m, lib, false, true);
    elf_file_close(&m.elf);
    if (view_open_core(&t, core_path, NULL, err, sizeof(err)) != 0)
        fail_msg("unchecked: %s", err);
    assert_true(t->program_unchecked);
    view_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_kernel_core),
        cmocka_unit_test(test_reads_gdb_core),
        cmocka_unit_test(test_program_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
