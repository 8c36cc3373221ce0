/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_usdt_args.c: libFuzzer target for the stapsdt argument-spec parser (usdt_arg_parse, _parse_one,
 * _describe, the value helpers and usdt_provider_selected) on arbitrary NUL-terminated strings. */
#include "sampler/probes/usdt_args.h"
#include "sampler/probes/usdt_notes.h"

#include <asm/perf_regs.h>
#include <stdlib.h>
#include <string.h>

static bool fake_reg(void *ctx, int reg, uint64_t *v)
{
    (void)ctx;
    if (reg < 0 || reg >= PERF_REG_X86_64_MAX)
        abort();                                  /* the parser handed out a bogus register number */
    *v = 0x8877665544332211ull * (uint64_t)(reg + 1);
    return reg != PERF_REG_X86_R15;
}

static void check(const struct usdt_arg *a)
{
    if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)
        abort();
    if (a->kind != USDT_ARG_IMM && (a->reg < 0 || a->reg >= PERF_REG_X86_64_MAX || !usdt_reg_kernel_name(a->reg)))
        abort();
    if (a->kind == USDT_ARG_REG && ((a->reg_bytes != 1 && a->reg_bytes != 2 && a->reg_bytes != 4 &&
                                     a->reg_bytes != 8) || (a->reg_shift != 0 && a->reg_shift != 8)))
        abort();
    char buf[64];
    usdt_arg_describe(a, buf, sizeof(buf));
    if (strlen(buf) >= sizeof(buf))
        abort();
    char tiny[4];
    usdt_arg_describe(a, tiny, sizeof(tiny));
    uint64_t v;
    (void)usdt_arg_value(a, fake_reg, NULL, &v);
    (void)usdt_arg_address(a, 0x7ffc00001000ull);
    const uint8_t mem[8] = {0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88};
    v = usdt_arg_from_memory(a, mem);
    if (a->size < 8 && !a->is_signed && (v >> (a->size * 8)) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct usdt_arg a;
    for (unsigned i = 0; i < 4; i++) {
        int r = usdt_arg_parse(s, i, &a);
        if (r > USDT_ARG_OK || r < USDT_ARG_EUNSUPPORTED)
            abort();
        if (r == USDT_ARG_OK)
            check(&a);
        if (r == USDT_ARG_ENOARG)
            break;
    }
    if (usdt_arg_parse_one(s, &a) == USDT_ARG_OK)
        check(&a);
    unsigned bytes, shift;
    (void)usdt_reg_from_name(s, &bytes, &shift);
    /* the same bytes as a --markers list and as a probe name */
    (void)usdt_provider_selected(s, "tokio");
    (void)usdt_provider_selected("taskspy,,tokio", s);
    (void)usdt_marker_name(usdt_marker_from_name(s));
    free(s);
    return 0;
}
