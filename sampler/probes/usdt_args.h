/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usdt_args.h: the x86-64 stapsdt argument spec ("-4@%edi 8@$5 8@8(%rbx)"): parses one argument into a
 * register / immediate / register-relative memory description, with perf's PERF_REG_X86_* numbering, and
 * computes its value from sampled registers (or from fetched memory bytes) with the spec's size and
 * signedness. The spec string is outside input. */
#ifndef TASKSPY_USDT_ARGS_H
#define TASKSPY_USDT_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum usdt_arg_kind {
    USDT_ARG_REG,                   /* value is (part of) a register */
    USDT_ARG_IMM,                   /* value is a constant */
    USDT_ARG_MEM,                   /* value is at register + displacement */
};

struct usdt_arg {
    enum usdt_arg_kind kind;
    unsigned size;                  /* 1, 2, 4 or 8 bytes */
    bool is_signed;                 /* negative size in the spec: sign-extend */
    int reg;                        /* PERF_REG_X86_*: the register, or the memory operand's base */
    unsigned reg_shift;             /* REG: bit position of the named part (8 for %ah..%bh, else 0) */
    unsigned reg_bytes;             /* REG: width of the named register (8 %rdi, 4 %edi, 2 %di, 1 %dil) */
    int64_t imm;                    /* IMM: the constant; MEM: the displacement */
};

enum usdt_arg_error {
    USDT_ARG_OK = 0,
    USDT_ARG_ENOARG = -1,           /* the spec has fewer arguments than asked for */
    USDT_ARG_EINVAL = -2,           /* malformed */
    USDT_ARG_EUNSUPPORTED = -3,     /* well-formed but not decodable here (%rip+symbol, index registers) */
};

/* Parse argument number index (0-based) of a whole stapsdt argument string. Returns USDT_ARG_OK or one of
 * the negative errors above. A missing "SIZE@" is taken as an unsigned 8-byte value (old SDT). */
int usdt_arg_parse(const char *spec, unsigned index, struct usdt_arg *out);
/* Parse one operand such as "-4@-20(%rbp)" (exactly one, surrounding blanks allowed). */
int usdt_arg_parse_one(const char *operand, struct usdt_arg *out);
/* "8@%rdi"-style description of a parsed argument into buf (for messages). */
const char *usdt_arg_describe(const struct usdt_arg *a, char *buf, size_t bufsz);

/* Register number (PERF_REG_X86_*) of an AT&T name without '%' ("rdi", "r8d", "dil", "ah"), or -1.
 * *bytes and *shift receive the part of the register the name denotes. */
int usdt_reg_from_name(const char *name, unsigned *bytes, unsigned *shift);
/* The kernel's pt_regs name of a PERF_REG_X86_* register for uprobe_events fetch args ("di", "r8"). */
const char *usdt_reg_kernel_name(int perf_reg);
/* Can a uprobe_events fetch arg read a (REG or MEM) operand: the low a->size bytes of a register, or a->size
 * bytes at register + displacement; size 1, 2, 4 or 8, any register but ip. */
bool usdt_arg_kernel_fetchable(const struct usdt_arg *a);

/* Truncate raw to the argument's size and sign- or zero-extend to 64 bits. */
uint64_t usdt_arg_extend(const struct usdt_arg *a, uint64_t raw);
/* Value of a REG or IMM argument from registers indexed by PERF_REG_X86_* (reg_value(ctx, n) returns
 * false when n was not sampled). Returns 0, or -1 for MEM arguments and missing registers. */
int usdt_arg_value(const struct usdt_arg *a, bool (*reg_value)(void *ctx, int reg, uint64_t *v), void *ctx,
                   uint64_t *out);
/* Address a MEM argument reads, given its base register's value. */
uint64_t usdt_arg_address(const struct usdt_arg *a, uint64_t base_value);
/* Value of a MEM argument from the bytes read at its address (at least a->size of them). */
uint64_t usdt_arg_from_memory(const struct usdt_arg *a, const uint8_t *bytes);

#endif
