/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_usdt.c: USDT note discovery (against readelf on freshly built probe binaries, GNU ld and LLD),
 * malformed notes, .stapsdt.base adjustment, marker name matching, provider selection, and the stapsdt
 * argument parser/evaluator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <asm/perf_regs.h>

#include "elf/elf_file.h"
#include "sampler/probes/usdt_args.h"
#include "sampler/probes/usdt_notes.h"

/* ---- helpers: temp dir, compiling probe programs, readelf ---------------------------------------- */
static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/test_usdt.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Build tests/fixtures/executor.c with extra flags into tmpdir/name. */
static void build_executor(const char *name, const char *flags, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/%s", tmpdir, name);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "cc -g -O2 -pthread -I/usr/include/x86_64-linux-gnu %s tests/fixtures/executor.c -o '%s' -ldl", flags,
             out);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("build failed: %s", cmd);
}

struct readelf_note {
    char provider[64], name[64], args[128];
    unsigned long long pc, base, sema;
};

/* Parse `readelf -n` stapsdt output. */
static size_t readelf_notes(const char *path, struct readelf_note *v, size_t cap)
{
    char cmd[512], line[512];
    snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = 0;
    struct readelf_note cur = {0};
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *p = line + strspn(line, " ");
        if (sscanf(p, "Provider: %63s", cur.provider) == 1)
            continue;
        if (sscanf(p, "Name: %63s", cur.name) == 1)
            continue;
        if (sscanf(p, "Location: %llx, Base: %llx, Semaphore: %llx", &cur.pc, &cur.base, &cur.sema) == 3)
            continue;
        if (strncmp(p, "Arguments:", 10) == 0) {
            const char *a = p + 10;
            a += strspn(a, " ");
            snprintf(cur.args, sizeof(cur.args), "%s", a);
            if (n < cap)
                v[n++] = cur;
            memset(&cur, 0, sizeof(cur));
        }
    }
    assert_int_equal(pclose(f), 0);
    return n;
}

static const struct usdt_note *find_note(const struct usdt_note_list *l, uint64_t note_pc, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].note_pc == note_pc && strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    return NULL;
}

/* Compare our notes with readelf's and check each probe offset holds the probe's nop (0x90). */
static void check_against_readelf(const char *path, bool want_sema)
{
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, path), 0);
    struct usdt_note_list l;
    assert_int_equal(usdt_notes_read(&ef, &l), 0);
    struct readelf_note re[64];
    size_t n = readelf_notes(path, re, 64);
    assert_true(n >= 6);
    assert_int_equal(l.n, n);
    assert_int_equal(l.skipped, 0);
    bool seen_start = false;
    for (size_t i = 0; i < n; i++) {
        const struct usdt_note *u = find_note(&l, re[i].pc, re[i].name);
        assert_non_null(u);
        assert_string_equal(u->provider, re[i].provider);
        assert_string_equal(u->args, re[i].args);
        assert_int_equal(u->note_base, re[i].base);
        assert_int_equal(u->note_semaphore, re[i].sema);
        assert_int_equal(u->pc, re[i].pc);   /* a freshly linked file needs no base adjustment */
        assert_true(u->pc_offset < ef.size);
        assert_int_equal(ef.data[u->pc_offset], 0x90);
        if (want_sema) {
            assert_true(u->semaphore != 0);
            const Elf64_Shdr *probes = elf_file_section(&ef, ".probes");
            assert_non_null(probes);
            assert_int_equal(u->semaphore_offset, probes->sh_offset + (u->semaphore - probes->sh_addr));
        } else {
            assert_int_equal(u->semaphore, 0);
            assert_int_equal(u->semaphore_offset, 0);
        }
        if (u->marker == USDT_MARKER_POLL_START)
            seen_start = true;
    }
    assert_true(seen_start);
    usdt_notes_free(&l);
    elf_file_close(&ef);
}

static void test_notes_gnu_ld(void **state)
{
    (void)state;
    char path[256];
    build_executor("exec_plain", "", path, sizeof(path));
    check_against_readelf(path, false);
}

static void test_notes_lld_semaphores(void **state)
{
    (void)state;
    char path[256];
    build_executor("exec_lld", "-fuse-ld=lld -DEXECUTOR_SEMAPHORES", path, sizeof(path));
    /* make sure this really is the interesting case: some PT_LOAD with vaddr != offset */
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, path), 0);
    bool differs = false;
    for (size_t i = 0; i < ef.n_phdrs; i++)
        if (ef.phdrs[i].p_type == PT_LOAD && (ef.phdrs[i].p_flags & PF_X) && ef.phdrs[i].p_vaddr != ef.phdrs[i].p_offset)
            differs = true;
    elf_file_close(&ef);
    assert_true(differs);
    check_against_readelf(path, true);
}

static void test_notes_memarg_spec(void **state)
{
    (void)state;
    char path[256];
    build_executor("exec_memarg", "-DEXECUTOR_MEMARG", path, sizeof(path));
    check_against_readelf(path, false);
    struct elf_file ef;
    assert_int_equal(elf_file_open(&ef, path), 0);
    struct usdt_note_list l;
    assert_int_equal(usdt_notes_read(&ef, &l), 0);
    int mem = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (l.v[i].marker != USDT_MARKER_POLL_START)
            continue;
        struct usdt_arg a;
        assert_int_equal(usdt_arg_parse(l.v[i].args, 0, &a), USDT_ARG_OK);
        mem += a.kind == USDT_ARG_MEM && a.size == 8;
    }
    assert_true(mem >= 1);
    usdt_notes_free(&l);
    elf_file_close(&ef);
}

/* Copy a file into memory, patch it, and read its notes. */
static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* Prelink-style: .stapsdt.base moved by 0x40 (pc and semaphore move with it); and without the section
 * (renamed), addresses are used as written. Uses the LLD build so vaddr != offset. */
static void test_base_adjustment_real(void **state)
{
    (void)state;
    char path[256];
    build_executor("exec_base", "-fuse-ld=lld -DEXECUTOR_SEMAPHORES", path, sizeof(path));
    size_t size;
    uint8_t *img = slurp(path, &size);
    struct elf_file ef;
    assert_int_equal(elf_file_from_memory(&ef, img, size), 0);
    struct usdt_note_list ref;
    assert_int_equal(usdt_notes_read(&ef, &ref), 0);
    assert_true(ref.has_base_section);
    assert_true(ref.n > 0);

    Elf64_Shdr *base = (Elf64_Shdr *)elf_file_section(&ef, ".stapsdt.base");
    assert_non_null(base);
    base->sh_addr += 0x40;
    struct usdt_note_list moved;
    assert_int_equal(usdt_notes_read(&ef, &moved), 0);
    assert_int_equal(moved.n, ref.n);
    for (size_t i = 0; i < ref.n; i++) {
        assert_int_equal(moved.v[i].pc, ref.v[i].pc + 0x40);
        assert_int_equal(moved.v[i].pc_offset, ref.v[i].pc_offset + 0x40);
        assert_int_equal(moved.v[i].semaphore, ref.v[i].semaphore + 0x40);
        assert_int_equal(moved.v[i].semaphore_offset, ref.v[i].semaphore_offset + 0x40);
    }
    base->sh_addr -= 0x40;
    /* drop the section: rename it in .shstrtab */
    char *nm = (char *)ef.shstrtab + base->sh_name;
    assert_string_equal(nm, ".stapsdt.base");
    nm[1] = 'x';
    struct usdt_note_list dropped;
    assert_int_equal(usdt_notes_read(&ef, &dropped), 0);
    assert_false(dropped.has_base_section);
    assert_int_equal(dropped.n, ref.n);
    for (size_t i = 0; i < ref.n; i++) {
        assert_int_equal(dropped.v[i].pc, ref.v[i].pc);
        assert_int_equal(dropped.v[i].pc_offset, ref.v[i].pc_offset);
        assert_int_equal(dropped.v[i].semaphore_offset, ref.v[i].semaphore_offset);
    }
    usdt_notes_free(&ref);
    usdt_notes_free(&moved);
    usdt_notes_free(&dropped);
    free(img);
}

/* ---- synthetic notes --------------------------------------------------------------------------- */
/* A fake ELF with text at vaddr 0x401000 / offset 0x1000 (R-X) and data at 0x604000 / 0x3000 (RW-). */
static Elf64_Phdr fake_phdrs[2] = {
    {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1000, .p_vaddr = 0x401000, .p_filesz = 0x1000},
    {.p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x3000, .p_vaddr = 0x604000, .p_filesz = 0x100,
     .p_memsz = 0x1000},
};
static const struct elf_file fake_ef = {.phdrs = fake_phdrs, .n_phdrs = 2};

static size_t put_note(uint8_t *buf, const char *owner, uint32_t type, uint64_t pc, uint64_t base, uint64_t sema,
                       const char *prov, const char *name, const char *args)
{
    size_t ol = strlen(owner) + 1, pl = strlen(prov) + 1, nl = strlen(name) + 1, al = strlen(args) + 1;
    Elf64_Nhdr nh = {(uint32_t)ol, (uint32_t)(24 + pl + nl + al), type};
    size_t off = 0;
    memcpy(buf, &nh, sizeof(nh));
    off += sizeof(nh);
    memset(buf + off, 0, (ol + 3) & ~3u);
    memcpy(buf + off, owner, ol);
    off += (ol + 3) & ~3u;
    uint64_t addrs[3] = {pc, base, sema};
    memcpy(buf + off, addrs, 24);
    memcpy(buf + off + 24, prov, pl);
    memcpy(buf + off + 24 + pl, name, nl);
    memcpy(buf + off + 24 + pl + nl, args, al);
    size_t d = 24 + pl + nl + al;
    memset(buf + off + d, 0, ((d + 3) & ~(size_t)3) - d);
    return off + ((d + 3) & ~(size_t)3);
}

static void test_synthetic_valid_and_base(void **state)
{
    (void)state;
    uint8_t buf[512];
    size_t n = put_note(buf, "stapsdt", 3, 0x401234, 0x402000, 0x604010, "tokio", "task__poll__start", "8@%rdi");
    n += put_note(buf + n, "GNU", 3, 0, 0, 0, "x", "y", "");              /* other owner: ignored */
    n += put_note(buf + n, "stapsdt", 1, 0x401234, 0, 0, "x", "y", "");   /* other type: ignored */
    struct usdt_note_list l = {0};
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, false, 0, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.skipped, 0);
    assert_string_equal(l.v[0].provider, "tokio");
    assert_int_equal(l.v[0].marker, USDT_MARKER_POLL_START);
    assert_int_equal(l.v[0].pc_offset, 0x1234);
    assert_int_equal(l.v[0].semaphore_offset, 0x3010);
    usdt_notes_free(&l);
    /* .stapsdt.base now at 0x402010: everything moves by +0x10 */
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, true, 0x402010, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.v[0].pc, 0x401244);
    assert_int_equal(l.v[0].pc_offset, 0x1244);
    assert_int_equal(l.v[0].semaphore_offset, 0x3020);
    usdt_notes_free(&l);
    /* and backwards by -0x1000 */
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, true, 0x401000, &l), 0);
    assert_int_equal(l.n, 0);        /* 0x400234 is outside every segment: skipped */
    assert_int_equal(l.skipped, 1);
    usdt_notes_free(&l);
}

static void test_synthetic_malformed(void **state)
{
    (void)state;
    uint8_t buf[512];
    struct usdt_note_list l = {0};
    size_t n;
    /* missing NUL after the arguments: shrink descsz by one so the final NUL falls outside */
    n = put_note(buf, "stapsdt", 3, 0x401234, 0, 0, "p", "task_poll_end", "8@%rdi");
    ((Elf64_Nhdr *)buf)->n_descsz -= 1;
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, false, 0, &l), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.skipped, 1);
    usdt_notes_free(&l);
    /* descsz too small for the three addresses */
    n = put_note(buf, "stapsdt", 3, 0x401234, 0, 0, "p", "n", "");
    ((Elf64_Nhdr *)buf)->n_descsz = 20;
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, false, 0, &l), 0);
    assert_int_equal(l.n, 0);
    usdt_notes_free(&l);
    /* descsz pointing past the buffer, namesz huge */
    n = put_note(buf, "stapsdt", 3, 0x401234, 0, 0, "p", "n", "");
    ((Elf64_Nhdr *)buf)->n_descsz = 0xfffffff0u;
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, false, 0, &l), 0);
    assert_int_equal(l.n, 0);
    usdt_notes_free(&l);
    ((Elf64_Nhdr *)buf)->n_descsz = 30;
    ((Elf64_Nhdr *)buf)->n_namesz = 0xffffffffu;
    assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, false, 0, &l), 0);
    assert_int_equal(l.n, 0);
    usdt_notes_free(&l);
    /* empty provider; pc in the data segment (not executable); semaphore outside / in bss */
    const struct { uint64_t pc, sema; const char *prov; } bad[] = {
        {0x401234, 0, ""}, {0x604010, 0, "p"}, {0x401234, 0x700000, "p"}, {0x401234, 0x604800, "p"},
        {0x401234, 0x6040ff, "p"}, /* only one byte of the 2-byte counter in the file */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = put_note(buf, "stapsdt", 3, bad[i].pc, 0, bad[i].sema, bad[i].prov, "n", "");
        assert_int_equal(usdt_notes_parse(&fake_ef, buf, n, false, 0, &l), 0);
        assert_int_equal(l.n, 0);
        assert_int_equal(l.skipped, 1);
        usdt_notes_free(&l);
    }
    /* every truncation of a valid two-note buffer: never more notes than fit, never a crash */
    n = put_note(buf, "stapsdt", 3, 0x401234, 0, 0, "p", "task-spawn", "-4@%esi");
    size_t first = n;
    n += put_note(buf + n, "stapsdt", 3, 0x401238, 0, 0, "p", "task-terminate", "8@$7");
    for (size_t cut = 0; cut <= n; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, buf, cut);
        assert_int_equal(usdt_notes_parse(&fake_ef, copy, cut, false, 0, &l), 0);
        assert_int_equal(l.n, cut >= n ? 2 : cut >= first ? 1 : 0);
        usdt_notes_free(&l);
        free(copy);
    }
    /* random garbage */
    srand(12345);
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = (size_t)(rand() % 200);
        uint8_t *g = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++)
            g[i] = (uint8_t)rand();
        if (len >= 12 && (rand() & 1)) {     /* make the header plausible half of the time */
            Elf64_Nhdr nh = {8, (uint32_t)(rand() % 64), 3};
            memcpy(g, &nh, sizeof(nh));
            if (len >= 20)
                memcpy(g + 12, "stapsdt", 8);
        }
        assert_int_equal(usdt_notes_parse(&fake_ef, g, len, rand() & 1, (uint64_t)rand(), &l), 0);
        for (size_t i = 0; i < l.n; i++)
            assert_true(l.v[i].pc_offset >= 0x1000 && l.v[i].pc_offset < 0x2000);
        usdt_notes_free(&l);
        free(g);
    }
}

/* ---- names and providers ---------------------------------------------------------------------- */
static void test_marker_names(void **state)
{
    (void)state;
    assert_int_equal(usdt_marker_from_name("task-poll-start"), USDT_MARKER_POLL_START);
    assert_int_equal(usdt_marker_from_name("task__poll__start"), USDT_MARKER_POLL_START);
    assert_int_equal(usdt_marker_from_name("task_poll_start"), USDT_MARKER_POLL_START);
    assert_int_equal(usdt_marker_from_name("task__poll-start"), USDT_MARKER_POLL_START);
    assert_int_equal(usdt_marker_from_name("task_poll__end"), USDT_MARKER_POLL_END);
    assert_int_equal(usdt_marker_from_name("task__spawn"), USDT_MARKER_SPAWN);
    assert_int_equal(usdt_marker_from_name("task-terminate"), USDT_MARKER_TERMINATE);
    assert_int_equal(usdt_marker_from_name("worker__thread__park"), USDT_MARKER_PARK);
    assert_int_equal(usdt_marker_from_name("worker_thread-unpark"), USDT_MARKER_UNPARK);
    assert_int_equal(usdt_marker_from_name("task___poll__start"), USDT_MARKER_OTHER);
    assert_int_equal(usdt_marker_from_name("taskpollstart"), USDT_MARKER_OTHER);
    assert_int_equal(usdt_marker_from_name("task-poll-start2"), USDT_MARKER_OTHER);
    assert_int_equal(usdt_marker_from_name("Task-poll-start"), USDT_MARKER_OTHER);
    assert_int_equal(usdt_marker_from_name(""), USDT_MARKER_OTHER);
    char longname[200];
    memset(longname, '_', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(usdt_marker_from_name(longname), USDT_MARKER_OTHER);
    assert_string_equal(usdt_marker_name(USDT_MARKER_UNPARK), "worker-thread-unpark");
}

static void test_provider_filter(void **state)
{
    (void)state;
    assert_true(usdt_provider_selected("auto", "tokio"));
    assert_true(usdt_provider_selected(NULL, "tokio"));
    assert_false(usdt_provider_selected("none", "tokio"));
    assert_true(usdt_provider_selected("tokio", "tokio"));
    assert_true(usdt_provider_selected("a,tokio,b", "tokio"));
    assert_true(usdt_provider_selected("a,,tokio", "tokio"));
    assert_false(usdt_provider_selected("tok", "tokio"));
    assert_false(usdt_provider_selected("tokio2,xtokio", "tokio"));
    assert_false(usdt_provider_selected("", "tokio"));
}

/* ---- argument specs ----------------------------------------------------------------------------- */
static void test_arg_forms(void **state)
{
    (void)state;
    struct usdt_arg a;
    assert_int_equal(usdt_arg_parse("8@%rdi", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.kind, USDT_ARG_REG);
    assert_int_equal(a.reg, PERF_REG_X86_DI);
    assert_int_equal(a.size, 8);
    assert_false(a.is_signed);
    assert_int_equal(usdt_arg_parse("-4@%edi", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_DI);
    assert_int_equal(a.reg_bytes, 4);
    assert_true(a.is_signed);
    assert_int_equal(usdt_arg_parse("1@%dil", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg_bytes, 1);
    assert_int_equal(usdt_arg_parse("-4@%r8d 8@%r15", 1, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_R15);
    assert_int_equal(usdt_arg_parse("-4@%r8d", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_R8);
    assert_int_equal(usdt_arg_parse("2@%r12w", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_R12);
    assert_int_equal(usdt_arg_parse("1@%ah", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_AX);
    assert_int_equal(a.reg_shift, 8);
    assert_int_equal(usdt_arg_parse("8@$5", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.kind, USDT_ARG_IMM);
    assert_int_equal(a.imm, 5);
    assert_int_equal(usdt_arg_parse("-4@$-1", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.imm, -1);
    assert_int_equal(usdt_arg_parse("8@$0x10", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.imm, 16);
    assert_int_equal(usdt_arg_parse("8@(%rdi)", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.kind, USDT_ARG_MEM);
    assert_int_equal(a.reg, PERF_REG_X86_DI);
    assert_int_equal(a.imm, 0);
    assert_int_equal(usdt_arg_parse("-4@-20(%rbp)", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_BP);
    assert_int_equal(a.imm, -20);
    assert_true(a.is_signed);
    assert_int_equal(a.size, 4);
    assert_int_equal(usdt_arg_parse("  8@8(%rsp)  -4@%esi", 0, &a), USDT_ARG_OK);
    assert_int_equal(a.reg, PERF_REG_X86_SP);
    assert_int_equal(a.imm, 8);
    assert_int_equal(usdt_arg_parse("%rdi", 0, &a), USDT_ARG_OK);   /* no size: 8 bytes */
    assert_int_equal(a.size, 8);
    char buf[64];
    assert_int_equal(usdt_arg_parse("-4@-20(%rbp)", 0, &a), USDT_ARG_OK);
    assert_string_equal(usdt_arg_describe(&a, buf, sizeof(buf)), "-4@-20(bp)");
}

static void test_arg_errors(void **state)
{
    (void)state;
    struct usdt_arg a;
    assert_int_equal(usdt_arg_parse("", 0, &a), USDT_ARG_ENOARG);
    assert_int_equal(usdt_arg_parse(NULL, 0, &a), USDT_ARG_ENOARG);
    assert_int_equal(usdt_arg_parse("8@%rdi", 1, &a), USDT_ARG_ENOARG);
    assert_int_equal(usdt_arg_parse("8@foo(%rip)", 0, &a), USDT_ARG_EUNSUPPORTED);
    assert_int_equal(usdt_arg_parse("8@16(%rip)", 0, &a), USDT_ARG_EUNSUPPORTED);
    assert_int_equal(usdt_arg_parse("8@(%rax,%rbx,8)", 0, &a), USDT_ARG_EUNSUPPORTED);
    assert_int_equal(usdt_arg_parse("8@$sym", 0, &a), USDT_ARG_EUNSUPPORTED);
    assert_int_equal(usdt_arg_parse("8f@%xmm0", 0, &a), USDT_ARG_EUNSUPPORTED);
    assert_int_equal(usdt_arg_parse("8@%xmm0", 0, &a), USDT_ARG_EUNSUPPORTED);
    assert_int_equal(usdt_arg_parse("8@4096", 0, &a), USDT_ARG_EUNSUPPORTED);
    const char *bad[] = {"3@%rdi", "16@%rdi", "8@", "8@%", "@%rdi", "x@%rdi", "8@(%rdi", "8@8(%edi)",
                         "8@%rdi)", "8@$", "8@$-", "8@(%)", "8@%rdiq", "8@8(%rdi)x", "--8@%rdi",
                         "8@99999999999999999999(%rdi)", "8@%averyveryverylongregistername"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int r = usdt_arg_parse(bad[i], 0, &a);
        if (r == USDT_ARG_OK)
            fail_msg("accepted malformed spec '%s'", bad[i]);
    }
    char huge[300];
    memset(huge, '8', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    assert_int_equal(usdt_arg_parse(huge, 0, &a), USDT_ARG_EINVAL);
}

static const uint64_t fake_regs[24] = {
    [PERF_REG_X86_AX] = 0x1122334455668788ull, [PERF_REG_X86_DI] = 0xffffffff80000001ull,
    [PERF_REG_X86_R8] = 0x00000000000000ffull,
};

static bool fake_reg_value(void *ctx, int reg, uint64_t *v)
{
    (void)ctx;
    if (reg < 0 || reg >= 24 || reg == PERF_REG_X86_SI)   /* pretend %rsi was not sampled */
        return false;
    *v = fake_regs[reg];
    return true;
}

static void test_arg_values(void **state)
{
    (void)state;
    struct usdt_arg a;
    uint64_t v;
    assert_int_equal(usdt_arg_parse("8@%rax", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0x1122334455668788ull);
    assert_int_equal(usdt_arg_parse("4@%eax", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0x55668788ull);
    assert_int_equal(usdt_arg_parse("-2@%ax", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0xffffffffffff8788ull);
    assert_int_equal(usdt_arg_parse("1@%ah", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0x87);
    assert_int_equal(usdt_arg_parse("-4@%edi", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0xffffffff80000001ull);
    assert_int_equal(usdt_arg_parse("4@%edi", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0x80000001ull);
    assert_int_equal(usdt_arg_parse("-1@%r8b", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, UINT64_MAX);
    assert_int_equal(usdt_arg_parse("-4@$-1", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, UINT64_MAX);
    assert_int_equal(usdt_arg_parse("4@$-1", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), 0);
    assert_int_equal(v, 0xffffffffull);
    assert_int_equal(usdt_arg_parse("8@%rsi", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), -1);   /* not sampled */
    assert_int_equal(usdt_arg_parse("-4@-20(%rbp)", 0, &a), 0);
    assert_int_equal(usdt_arg_value(&a, fake_reg_value, NULL, &v), -1);   /* memory: caller fetches */
    assert_int_equal(usdt_arg_address(&a, 0x7ffc0000), 0x7ffc0000 - 20);
    const uint8_t mem[8] = {0xfe, 0xff, 0xff, 0xff, 0x12, 0x34, 0x56, 0x78};
    assert_int_equal(usdt_arg_from_memory(&a, mem), (uint64_t)-2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes_gnu_ld),
        cmocka_unit_test(test_notes_lld_semaphores),
        cmocka_unit_test(test_notes_memarg_spec),
        cmocka_unit_test(test_base_adjustment_real),
        cmocka_unit_test(test_synthetic_valid_and_base),
        cmocka_unit_test(test_synthetic_malformed),
        cmocka_unit_test(test_marker_names),
        cmocka_unit_test(test_provider_filter),
        cmocka_unit_test(test_arg_forms),
        cmocka_unit_test(test_arg_errors),
        cmocka_unit_test(test_arg_values),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
