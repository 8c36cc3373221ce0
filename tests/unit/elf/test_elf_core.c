/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_elf_core.c: the core-file reader (elf_core_*): a core's threads (tid, signal, registers: fs_base and rsp),
 * process, mapped files (byte offsets from NT_FILE's page offsets), auxv and memory read back from small cores laid
 * out as the kernel writes them; what a segment saved, left out (filesz < memsz) or does not describe told apart;
 * and each bad core refused with its own one-line reason: not ELF, not a core, 32-bit, another machine, truncated
 * (a segment past the end of the file), no thread, a broken NT_FILE, broken notes. */
#include "elf/elf_file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/elf/core_builder.h"

static uint8_t heap_bytes[8192];

/* the core of a process with two threads, three mappings of two files, a heap of 2 pages saved of 3 */
static uint8_t *good_core(size_t *size)
{
    static struct core_builder b;
    memset(&b, 0, sizeof(b));
    for (size_t i = 0; i < sizeof(heap_bytes); i++)
        heap_bytes[i] = (uint8_t)(i * 7);
    core_process(&b, 4242, "server", "/usr/bin/server --port 80");
    core_thread(&b, 4242, 6, 0x401000, 0x7fff0000, 0x7f0000001000);
    core_thread(&b, 4243, 0, 0x402000, 0x7ffe0000, 0x7f0000002000);
    core_file(&b, 0x400000, 0x401000, 0, "/usr/bin/server");
    core_file(&b, 0x401000, 0x403000, 0x1000, "/usr/bin/server");
    core_file(&b, 0x7f0000100000, 0x7f0000101000, 0, "/lib/libc.so.6 (deleted)");
    core_files_note(&b);
    core_auxv(&b, AT_PHDR, 0x400040);
    core_auxv(&b, AT_ENTRY, 0x401010);
    core_auxv_note(&b);
    core_segment(&b, 0x400000, 0x1000, heap_bytes, 0x1000, PF_R);             /* the header page, saved */
    core_segment(&b, 0x401000, 0x2000, NULL, 0, PF_R | PF_X);                 /* code, left out */
    core_segment(&b, 0x600000, 0x3000, heap_bytes, 0x2000, PF_R | PF_W);     /* a heap, its last page left out */
    return core_image(&b, size);
}

static void test_good_core(void **state)
{
    (void)state;
    size_t size;
    uint8_t *image = good_core(&size);
    struct elf_core c;
    char err[256] = "";
    assert_int_equal(elf_core_from_memory(&c, image, size, err, sizeof(err)), 0);
    assert_int_equal(c.pid, 4242);
    assert_string_equal(c.command, "server");
    assert_string_equal(c.args, "/usr/bin/server --port 80");
    assert_int_equal(c.threads.n, 2);
    assert_int_equal(c.threads.v[0].tid, 4242);
    assert_int_equal(c.threads.v[0].signal, 6);
    struct user_regs_struct regs;
    memcpy(&regs, c.threads.v[1].regs, sizeof(regs));
    assert_int_equal(regs.rip, 0x402000);
    assert_int_equal(regs.rsp, 0x7ffe0000);
    assert_int_equal(regs.fs_base, 0x7f0000002000);
    assert_int_equal(c.files.n, 3);
    assert_int_equal(c.files.v[1].offset, 0x1000);
    assert_string_equal(c.files.v[2].path, "/lib/libc.so.6 (deleted)");
    const struct elf_core_file *f = elf_core_file_at(&c, 0x402fff);
    assert_non_null(f);
    assert_int_equal(f->start, 0x401000);
    assert_null(elf_core_file_at(&c, 0x403000));
    assert_null(elf_core_file_at(&c, 0x3fffff));
    uint64_t value;
    assert_true(elf_core_auxv(&c, AT_ENTRY, &value));
    assert_int_equal(value, 0x401010);
    assert_false(elf_core_auxv(&c, AT_SYSINFO_EHDR, &value));

    size_t len;
    enum elf_core_memory what;
    const uint8_t *bytes = elf_core_bytes(&c, 0x600010, &len, &what);
    assert_int_equal(what, ELF_CORE_SAVED);
    assert_int_equal(len, 0x2000 - 0x10);
    assert_memory_equal(bytes, heap_bytes + 0x10, 16);
    assert_null(elf_core_bytes(&c, 0x602000, &len, &what));
    assert_int_equal(what, ELF_CORE_LEFT_OUT);
    assert_null(elf_core_bytes(&c, 0x401800, &len, &what));
    assert_int_equal(what, ELF_CORE_LEFT_OUT);
    assert_null(elf_core_bytes(&c, 0x603000, &len, &what));
    assert_int_equal(what, ELF_CORE_NO_SEGMENT);
    assert_non_null(elf_core_segment_at(&c, 0x402fff));
    elf_core_close(&c);
    free(image);
}

/* elf_core_from_memory's error for image, or "" when it opened */
static const char *refusal(const uint8_t *image, size_t size)
{
    static char err[400];
    struct elf_core c;
    err[0] = '\0';
    if (elf_core_from_memory(&c, image, size, err, sizeof(err)) == 0)
        elf_core_close(&c);
    return err;
}

static void test_truncated(void **state)
{
    (void)state;
    size_t size;
    uint8_t *image = good_core(&size);
    assert_string_equal(refusal(image, size), "");
    assert_non_null(strstr(refusal(image, size - 1), "truncated: its segments need"));
    assert_non_null(strstr(refusal(image, 200), "program headers"));
    assert_non_null(strstr(refusal(image, 40), "not a core file (cut inside its ELF header)"));
    assert_non_null(strstr(refusal(image, 0), "not a core file (not ELF)"));
    free(image);
}

static void test_not_cores(void **state)
{
    (void)state;
    static struct core_builder b;
    size_t size;
    memset(&b, 0, sizeof(b));
    core_thread(&b, 1, 0, 0, 0, 0);
    b.type = ET_DYN;
    uint8_t *image = core_image(&b, &size);
    assert_non_null(strstr(refusal(image, size), "not a core file but an ELF executable or shared object"));
    free(image);
    b.type = ET_CORE;
    b.machine = EM_AARCH64;
    image = core_image(&b, &size);
    assert_non_null(strstr(refusal(image, size), "a core of another machine"));
    free(image);
    b.machine = 0;
    b.ident_class = ELFCLASS32;
    image = core_image(&b, &size);
    assert_non_null(strstr(refusal(image, size), "a 32-bit core"));
    free(image);
    const char text[] = "#!/bin/sh\necho not a core\n";
    assert_non_null(strstr(refusal((const uint8_t *)text, sizeof(text)), "not a core file (not ELF)"));
}

static void test_bad_notes(void **state)
{
    (void)state;
    static struct core_builder b;
    size_t size;
    memset(&b, 0, sizeof(b));
    core_process(&b, 7, "x", "x");
    uint8_t *image = core_image(&b, &size);
    assert_non_null(strstr(refusal(image, size), "no thread in its notes"));
    free(image);

    /* NT_FILE saying it has more entries than it holds */
    memset(&b, 0, sizeof(b));
    core_thread(&b, 7, 0, 0, 0, 0);
    uint64_t files[5] = { 1000, 4096, 0x1000, 0x2000, 0 };
    core_note(&b, "CORE", NT_FILE, files, sizeof(files));
    image = core_image(&b, &size);
    assert_non_null(strstr(refusal(image, size), "NT_FILE"));
    free(image);

    /* a note whose size runs past its segment */
    memset(&b, 0, sizeof(b));
    core_thread(&b, 7, 0, 0, 0, 0);
    Elf64_Nhdr nh = { .n_namesz = 5, .n_descsz = 100000, .n_type = NT_AUXV };
    memcpy(b.notes + b.notes_len, &nh, sizeof(nh));
    memcpy(b.notes + b.notes_len + sizeof(nh), "CORE\0\0\0", 8);
    b.notes_len += sizeof(nh) + 8;
    image = core_image(&b, &size);
    assert_non_null(strstr(refusal(image, size), "notes are broken"));
    free(image);
}

/* elf_core_open on files: the reasons name the file; a regular ELF file and a short one */
static void test_open_files(void **state)
{
    (void)state;
    char err[600];
    struct elf_core c;
    assert_int_equal(elf_core_open(&c, "/nonexistent/core", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot read /nonexistent/core"));
    char path[] = "/tmp/taskspy-test-core-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t size;
    uint8_t *image = good_core(&size);
    assert_int_equal(write(fd, image, size), (ssize_t)size);
    assert_int_equal(elf_core_open(&c, path, err, sizeof(err)), 0);
    assert_int_equal(c.threads.n, 2);
    elf_core_close(&c);
    assert_int_equal(ftruncate(fd, 20), 0);
    assert_int_equal(elf_core_open(&c, path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a core file (cut inside its ELF header)"));
    assert_int_equal(elf_core_open(&c, "/proc/self/exe", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is not a core file but an ELF"));
    close(fd);
    unlink(path);
    free(image);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_core),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_not_cores),
        cmocka_unit_test(test_bad_notes),
        cmocka_unit_test(test_open_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
