/* SPDX-License-Identifier: GPL-3.0-or-later */
/* emulated_probe_point.c: finding the first uprobe-emulated instruction of a function (see the header), with
 * binutils' disassembler (libopcodes, from the same package as libbfd) reading the instructions' text. */
#include "sampler/probes/emulated_probe_point.h"

#include <dis-asm.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Instructions looked at, at most: a waker function's straight-line start is a handful. */
#define MAX_INSNS 12
#define MAX_BYTES 128u

struct insn_text {
    char text[160];
    size_t len;
};

static int append_v(struct insn_text *t, const char *fmt, va_list ap)
{
    int n = vsnprintf(t->text + t->len, sizeof(t->text) - t->len, fmt, ap);
    if (n > 0)
        t->len = t->len + (size_t)n < sizeof(t->text) ? t->len + (size_t)n : sizeof(t->text) - 1;
    return n;
}

/* The disassembler's two printers (plain and styled text): both append to the instruction's text. */
static int append(void *stream, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = append_v(stream, fmt, ap);
    va_end(ap);
    return n;
}

static int append_styled(void *stream, enum disassembler_style style, const char *fmt, ...)
{
    (void)style;
    va_list ap;
    va_start(ap, fmt);
    int n = append_v(stream, fmt, ap);
    va_end(ap);
    return n;
}

/* The mnemonic of an instruction's text (prefixes such as "lock" or "data16" skipped), into m. */
static void mnemonic(const char *text, char *m, size_t len)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if ((n == 4 && strncmp(p, "lock", 4) == 0) || (n == 6 && strncmp(p, "data16", 6) == 0) ||
            (n == 2 && (strncmp(p, "cs", 2) == 0 || strncmp(p, "ds", 2) == 0)) || (n == 3 && strncmp(p, "rex", 3) == 0)) {
            p += n;
            continue;
        }
        snprintf(m, len, "%.*s", (int)n, p);
        return;
    }
}

/* Whether the kernel emulates it (arch/x86/kernel/uprobes.c: branches, calls, push of a register, nop). */
static bool emulated(const char *m, const char *text)
{
    if (m[0] == 'j' || strncmp(m, "call", 4) == 0)
        return strchr(text, '*') == NULL;       /* direct ones: an indirect jmp/call is single-stepped */
    if (strncmp(m, "push", 4) == 0)
        return strchr(text, '%') != NULL && strchr(text, '(') == NULL && strchr(text, '$') == NULL;
    return strcmp(m, "nop") == 0;
}

static bool names_rdi(const char *operand, size_t len)
{
    char op[64];
    snprintf(op, sizeof(op), "%.*s", (int)len, operand);
    return !strchr(op, '(') && (strstr(op, "%rdi") || strstr(op, "%edi") || strstr(op, "%di"));
}

/* Whether an instruction that runs before the probe point keeps it from being one: it ends the straight
 * line (return, trap), or may write %rdi: as its destination (AT&T syntax: the last operand; a memory operand
 * based on %rdi is not a write of it), as either operand of an exchange, or implicitly (string operations). */
static bool disqualifies(const char *m, const char *text)
{
    static const char *const stops[] = { "ret", "int", "ud2", "syscall", "hlt", "rep", "stos", "movs", "scas",
                                         "cmps", "lods", "ins", "outs", "leave", "enter" };
    for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
        if (strncmp(m, stops[i], strlen(stops[i])) == 0)
            return true;
    const char *ops = strstr(text, m);
    ops = ops ? ops + strlen(m) : text;
    const char *comma = strrchr(ops, ',');
    const char *dest = comma ? comma + 1 : ops;
    if (names_rdi(dest, strlen(dest)))
        return true;
    bool exchange = strncmp(m, "xchg", 4) == 0 || strncmp(m, "xadd", 4) == 0 || strncmp(m, "cmpxchg", 7) == 0;
    return exchange && comma && names_rdi(ops, (size_t)(comma - ops));
}

uint64_t emulated_probe_point_in(const uint8_t *code, uint64_t size)
{
    struct disassemble_info info;
    struct insn_text t = { .len = 0 };
    init_disassemble_info(&info, &t, append, append_styled);
    info.arch = bfd_arch_i386;
    info.mach = bfd_mach_x86_64;
    info.buffer = (bfd_byte *)code;
    info.buffer_vma = 0;
    info.buffer_length = size;
    info.read_memory_func = buffer_read_memory;
    disassemble_init_for_target(&info);
    disassembler_ftype decode = disassembler(bfd_arch_i386, false, bfd_mach_x86_64, NULL);
    if (!decode)
        return 0;
    uint64_t at = 0;
    for (int k = 0; k < MAX_INSNS && at < size; k++) {
        t.len = 0;
        t.text[0] = '\0';
        int n = decode((bfd_vma)at, &info);
        if (n <= 0)
            return 0;
        char m[32];
        mnemonic(t.text, m, sizeof(m));
        if (emulated(m, t.text))
            return at;
        if (m[0] == '(' || disqualifies(m, t.text))     /* "(bad)": not an instruction */
            return 0;
        at += (uint64_t)n;
    }
    return 0;
}

uint64_t emulated_probe_point(const struct elf_file *ef, uint64_t entry_offset)
{
    if (entry_offset >= ef->size)
        return entry_offset;
    uint64_t size = ef->size - entry_offset < MAX_BYTES ? ef->size - entry_offset : MAX_BYTES;
    return entry_offset + emulated_probe_point_in(ef->data + entry_offset, size);
}
