/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_elf_inflate.c: elf_file_inflated on a program whose DWARF objcopy compressed (zlib, SHF_COMPRESSED):
 * the copy holds every section the uncompressed build holds, byte for byte, in the same order and none of them
 * compressed, the sections the caller refuses as SHT_NOBITS; a file with nothing compressed (or none kept) gives
 * ENOENT; a compressed section that does not inflate gives EILSEQ. */
#include "elf/elf_file.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/shell_run.h"

static char dir[] = "/tmp/taskspy-inflate-XXXXXX";

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    run("cd '%s' && printf 'static int g(int x) { return x * 3; }\\nint main(int c, char **v) { (void)v; "
        "return g(c); }\\n' > p.c && cc -g -O1 -o plain p.c && "
        "objcopy --compress-debug-sections=zlib plain packed", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    run("rm -rf '%s'", dir);
    return 0;
}

static void open_file(struct elf_file *ef, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_int_equal(elf_file_open(ef, path), 0);
}

static const char *name_of(const struct elf_file *ef, const Elf64_Shdr *sh)
{
    return ef->shstrtab + sh->sh_name;
}

static bool all_but_debug_str(const Elf64_Shdr *sh, const char *name, void *ctx)
{
    (void)sh;
    (void)ctx;
    return strcmp(name, ".debug_str") != 0;
}

static bool nothing(const Elf64_Shdr *sh, const char *name, void *ctx)
{
    (void)sh;
    (void)name;
    (void)ctx;
    return false;
}

static void test_inflated_copy(void **state)
{
    (void)state;
    struct elf_file plain, packed;
    open_file(&plain, "plain");
    open_file(&packed, "packed");
    const Elf64_Shdr *info = elf_file_section(&packed, ".debug_info");
    assert_non_null(info);
    assert_true(info->sh_flags & SHF_COMPRESSED);             /* objcopy did compress it */
    size_t size = 0;
    void *image = elf_file_inflated(&packed, all_but_debug_str, NULL, &size);
    assert_non_null(image);
    struct elf_file copy;
    assert_int_equal(elf_file_from_memory(&copy, image, size), 0);
    assert_int_equal(copy.n_shdrs, plain.n_shdrs);
    size_t compared = 0;
    for (size_t i = 1; i < plain.n_shdrs; i++) {
        const Elf64_Shdr *p = &plain.shdrs[i], *c = &copy.shdrs[i];
        assert_string_equal(name_of(&copy, c), name_of(&plain, p));
        assert_false(c->sh_flags & SHF_COMPRESSED);
        if (strcmp(name_of(&plain, p), ".debug_str") == 0) {
            assert_int_equal(c->sh_type, SHT_NOBITS);          /* left out */
            continue;
        }
        assert_int_equal(c->sh_type, p->sh_type);
        if (p->sh_type == SHT_NOBITS)
            continue;
        size_t plain_size = 0, copy_size = 0;
        const uint8_t *want = elf_file_section_data(&plain, p, &plain_size);
        const uint8_t *got = elf_file_section_data(&copy, c, &copy_size);
        assert_non_null(got);
        assert_int_equal(copy_size, plain_size);
        assert_memory_equal(got, want, plain_size);
        compared++;
    }
    assert_true(compared > 10);
    elf_file_close(&copy);
    free(image);
    /* every section refused: nothing compressed is kept, nothing to do; but the names' table stays */
    errno = 0;
    assert_null(elf_file_inflated(&packed, nothing, NULL, &size));
    assert_int_equal(errno, ENOENT);
    /* nothing compressed: nothing to do */
    errno = 0;
    assert_null(elf_file_inflated(&plain, NULL, NULL, &size));
    assert_int_equal(errno, ENOENT);
    elf_file_close(&plain);
    elf_file_close(&packed);
}

static void test_broken_stream(void **state)
{
    (void)state;
    struct elf_file packed;
    open_file(&packed, "packed");
    const Elf64_Shdr *info = elf_file_section(&packed, ".debug_info");
    assert_non_null(info);
    /* a copy of the file whose .debug_info stream is cut short after its header */
    uint8_t *bytes = malloc(packed.size);
    assert_non_null(bytes);
    memcpy(bytes, packed.data, packed.size);
    memset(bytes + info->sh_offset + sizeof(Elf64_Chdr) + 2, 0xff, info->sh_size - sizeof(Elf64_Chdr) - 2);
    struct elf_file broken;
    assert_int_equal(elf_file_from_memory(&broken, bytes, packed.size), 0);
    size_t size = 1;
    errno = 0;
    assert_null(elf_file_inflated(&broken, NULL, NULL, &size));
    assert_int_equal(errno, EILSEQ);
    assert_int_equal(size, 0);
    elf_file_close(&broken);
    free(bytes);
    elf_file_close(&packed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inflated_copy),
        cmocka_unit_test(test_broken_stream),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
