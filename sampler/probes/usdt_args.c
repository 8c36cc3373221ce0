/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usdt_args.c: parser and evaluator of x86-64 stapsdt argument specs (SIZE@OPERAND, AT&T syntax). */
#include "sampler/probes/usdt_args.h"

#include <asm/perf_regs.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reg_names {
    int perf_reg;
    const char *kernel;             /* pt_regs name used by uprobe_events fetch args */
    const char *n64, *n32, *n16, *n8, *n8hi;
};

static const struct reg_names regs[] = {
    {PERF_REG_X86_AX, "ax", "rax", "eax", "ax", "al", "ah"},
    {PERF_REG_X86_BX, "bx", "rbx", "ebx", "bx", "bl", "bh"},
    {PERF_REG_X86_CX, "cx", "rcx", "ecx", "cx", "cl", "ch"},
    {PERF_REG_X86_DX, "dx", "rdx", "edx", "dx", "dl", "dh"},
    {PERF_REG_X86_SI, "si", "rsi", "esi", "si", "sil", NULL},
    {PERF_REG_X86_DI, "di", "rdi", "edi", "di", "dil", NULL},
    {PERF_REG_X86_BP, "bp", "rbp", "ebp", "bp", "bpl", NULL},
    {PERF_REG_X86_SP, "sp", "rsp", "esp", "sp", "spl", NULL},
    {PERF_REG_X86_IP, "ip", "rip", "eip", NULL, NULL, NULL},
    {PERF_REG_X86_R8, "r8", "r8", "r8d", "r8w", "r8b", NULL},
    {PERF_REG_X86_R9, "r9", "r9", "r9d", "r9w", "r9b", NULL},
    {PERF_REG_X86_R10, "r10", "r10", "r10d", "r10w", "r10b", NULL},
    {PERF_REG_X86_R11, "r11", "r11", "r11d", "r11w", "r11b", NULL},
    {PERF_REG_X86_R12, "r12", "r12", "r12d", "r12w", "r12b", NULL},
    {PERF_REG_X86_R13, "r13", "r13", "r13d", "r13w", "r13b", NULL},
    {PERF_REG_X86_R14, "r14", "r14", "r14d", "r14w", "r14b", NULL},
    {PERF_REG_X86_R15, "r15", "r15", "r15d", "r15w", "r15b", NULL},
};
#define N_REGS (sizeof(regs) / sizeof(regs[0]))

int usdt_reg_from_name(const char *name, unsigned *bytes, unsigned *shift)
{
    for (size_t i = 0; i < N_REGS; i++) {
        const struct reg_names *r = &regs[i];
        const char *forms[5] = {r->n64, r->n32, r->n16, r->n8, r->n8hi};
        static const unsigned widths[5] = {8, 4, 2, 1, 1};
        for (int f = 0; f < 5; f++) {
            if (forms[f] && strcmp(name, forms[f]) == 0) {
                *bytes = widths[f];
                *shift = f == 4 ? 8 : 0;
                return r->perf_reg;
            }
        }
    }
    return -1;
}

const char *usdt_reg_kernel_name(int perf_reg)
{
    for (size_t i = 0; i < N_REGS; i++)
        if (regs[i].perf_reg == perf_reg)
            return regs[i].kernel;
    return NULL;
}

bool usdt_arg_kernel_fetchable(const struct usdt_arg *a)
{
    if (a->kind != USDT_ARG_REG && a->kind != USDT_ARG_MEM)
        return false;
    if (a->kind == USDT_ARG_REG && (a->reg_shift != 0 || a->size > a->reg_bytes))
        return false;      /* a high byte (%ah), or wider than the register named */
    const char *reg = usdt_reg_kernel_name(a->reg);
    return reg && strcmp(reg, "ip") != 0 && (a->size == 1 || a->size == 2 || a->size == 4 || a->size == 8);
}

/* Signed integer in decimal or 0x-hex at *p (no leading blanks). Advances *p. */
static bool parse_int(const char **p, int64_t *out)
{
    const char *s = *p;
    bool neg = false;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (!isdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || end == s)
        return false;
    if (neg && v > (unsigned long long)INT64_MAX + 1)
        return false;
    *out = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)(uint64_t)v;
    *p = end;
    return true;
}

/* "%name" at *p; the name ends at a non-alphanumeric character. */
static int parse_reg(const char **p, unsigned *bytes, unsigned *shift)
{
    const char *s = *p;
    if (*s != '%')
        return USDT_ARG_EINVAL;
    s++;
    char name[8];
    size_t n = 0;
    while (isalnum((unsigned char)s[n])) {
        if (n + 1 >= sizeof(name))
            return USDT_ARG_EINVAL;
        name[n] = s[n];
        n++;
    }
    name[n] = '\0';
    if (n == 0)
        return USDT_ARG_EINVAL;
    int r = usdt_reg_from_name(name, bytes, shift);
    if (r < 0)
        return USDT_ARG_EUNSUPPORTED;   /* %xmm0, %st and the like: real registers we cannot sample */
    *p = s + n;
    return r;
}

int usdt_arg_parse_one(const char *operand, struct usdt_arg *out)
{
    memset(out, 0, sizeof(*out));
    const char *p = operand;
    while (*p == ' ' || *p == '\t')
        p++;
    out->size = 8;
    const char *at = strchr(p, '@');
    if (at) {
        int64_t sz;
        const char *q = p;
        if (!parse_int(&q, &sz))
            return USDT_ARG_EINVAL;
        if (q != at)
            return *q == 'f' && q + 1 == at ? USDT_ARG_EUNSUPPORTED : USDT_ARG_EINVAL;   /* "8f@": float */
        if (sz < 0) {
            out->is_signed = true;
            sz = -sz;
        }
        if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
            return USDT_ARG_EINVAL;
        out->size = (unsigned)sz;
        p = at + 1;
    }
    int reg;
    if (*p == '%') {
        out->kind = USDT_ARG_REG;
        reg = parse_reg(&p, &out->reg_bytes, &out->reg_shift);
        if (reg < 0)
            return reg;
        if (reg == PERF_REG_X86_IP)
            return USDT_ARG_EUNSUPPORTED;
        out->reg = reg;
    } else if (*p == '$') {
        out->kind = USDT_ARG_IMM;
        p++;
        if (!parse_int(&p, &out->imm))
            return *p && (isalpha((unsigned char)*p) || *p == '_' || *p == '.') ? USDT_ARG_EUNSUPPORTED
                                                                                : USDT_ARG_EINVAL;
    } else {
        out->kind = USDT_ARG_MEM;
        if (*p != '(' && !parse_int(&p, &out->imm))
            return *p && (isalpha((unsigned char)*p) || *p == '_' || *p == '.') ? USDT_ARG_EUNSUPPORTED
                                                                                : USDT_ARG_EINVAL;
        if (*p != '(')
            return *p == '\0' || *p == ' ' || *p == '\t' ? USDT_ARG_EUNSUPPORTED   /* absolute address */
                                                         : USDT_ARG_EINVAL;
        p++;
        unsigned bytes, shift;
        reg = parse_reg(&p, &bytes, &shift);
        if (reg < 0)
            return reg;
        if (*p == ',')
            return USDT_ARG_EUNSUPPORTED;   /* base + index*scale */
        if (*p != ')' || bytes != 8)
            return USDT_ARG_EINVAL;
        p++;
        out->reg = reg;
        if (reg == PERF_REG_X86_IP)
            return USDT_ARG_EUNSUPPORTED;   /* %rip-relative: the address is the next instruction's */
    }
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '\0' ? USDT_ARG_OK : USDT_ARG_EINVAL;
}

int usdt_arg_parse(const char *spec, unsigned index, struct usdt_arg *out)
{
    memset(out, 0, sizeof(*out));
    if (!spec)
        return USDT_ARG_ENOARG;
    const char *p = spec;
    for (unsigned i = 0;; i++) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            return USDT_ARG_ENOARG;
        size_t len = strcspn(p, " \t");
        if (i == index) {
            char buf[128];
            if (len >= sizeof(buf))
                return USDT_ARG_EINVAL;
            memcpy(buf, p, len);
            buf[len] = '\0';
            return usdt_arg_parse_one(buf, out);
        }
        p += len;
    }
}

const char *usdt_arg_describe(const struct usdt_arg *a, char *buf, size_t bufsz)
{
    int sz = a->is_signed ? -(int)a->size : (int)a->size;
    const char *kn = usdt_reg_kernel_name(a->reg);
    switch (a->kind) {
    case USDT_ARG_REG:
        snprintf(buf, bufsz, "%d@reg(%s)", sz, kn ? kn : "?");
        break;
    case USDT_ARG_IMM:
        snprintf(buf, bufsz, "%d@$%lld", sz, (long long)a->imm);
        break;
    case USDT_ARG_MEM:
        snprintf(buf, bufsz, "%d@%lld(%s)", sz, (long long)a->imm, kn ? kn : "?");
        break;
    }
    return buf;
}

uint64_t usdt_arg_extend(const struct usdt_arg *a, uint64_t raw)
{
    if (a->size >= 8)
        return raw;
    unsigned bits = a->size * 8;
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    raw &= mask;
    if (a->is_signed && (raw >> (bits - 1)) & 1)
        raw |= ~mask;
    return raw;
}

int usdt_arg_value(const struct usdt_arg *a, bool (*reg_value)(void *ctx, int reg, uint64_t *v), void *ctx,
                   uint64_t *out)
{
    if (a->kind == USDT_ARG_IMM) {
        *out = usdt_arg_extend(a, (uint64_t)a->imm);
        return 0;
    }
    if (a->kind != USDT_ARG_REG)
        return -1;
    uint64_t v;
    if (!reg_value(ctx, a->reg, &v))
        return -1;
    v >>= a->reg_shift;
    if (a->reg_bytes < 8)
        v &= (UINT64_C(1) << (a->reg_bytes * 8)) - 1;
    *out = usdt_arg_extend(a, v);
    return 0;
}

uint64_t usdt_arg_address(const struct usdt_arg *a, uint64_t base_value)
{
    return base_value + (uint64_t)a->imm;
}

uint64_t usdt_arg_from_memory(const struct usdt_arg *a, const uint8_t *bytes)
{
    uint64_t v = 0;
    memcpy(&v, bytes, a->size <= 8 ? a->size : 8);   /* x86-64 is little-endian */
    return usdt_arg_extend(a, v);
}
