/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_folded.c: libFuzzer target for the folded-stack reader (profile_read_folded through fmemopen) and
 * the writers behind it: profile_write_folded and profile_write_svg (to /dev/null), with SVG options
 * picked from the input's length. Also checks that re-reading the written folded text gives the same
 * total. */
#include "flamegraph/flamegraph.h"

#include <stdlib.h>
#include <string.h>

static FILE *devnull;

/* Warnings are formatted (that code runs) and written where nobody reads them. */
static void discard_warning(void *ctx, const char *message)
{
    fputs(message, ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    if (size == 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    if (!in)
        return 0;
    struct profile *p = profile_new();
    if (!p) {
        fclose(in);
        return 0;
    }
    struct folded_read_report rep;
    char err[256];
    const struct folded_warnings warnings = { .warn = discard_warning, .ctx = devnull };
    int rc = profile_read_folded(p, in, "fuzz", &warnings, &rep, err, sizeof(err));
    fclose(in);
    if (rc == 0) {
        if (rep.stacks == 0 || rep.stacks + rep.skipped > rep.lines)
            abort();
        if (profile_write_folded(p, devnull) != 0)
            abort();
        /* round trip: what we write must read back to the same total */
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (mem && profile_write_folded(p, mem) == 0 && fclose(mem) == 0) {
            mem = NULL;
            struct profile *q = profile_new();
            FILE *again = len ? fmemopen(buf, len, "r") : NULL;
            if (q && again) {
                struct folded_read_report rep2;
                int rc2 = profile_read_folded(q, again, "again", NULL, &rep2, err, sizeof(err));
                if ((rc2 == 0 || profile_total(p) != 0) &&
                    (rc2 != 0 || profile_total(q) != profile_total(p) || rep2.skipped != 0))
                    abort();
            }
            if (again)
                fclose(again);
            profile_free(q);
        }
        if (mem)
            fclose(mem);
        free(buf);

        static const char *const palettes[] = {"taskspy", "hot", "mem", "io", "purple", "nosuch", NULL};
        struct svg_options o;
        svg_options_init(&o);
        o.inverted = size & 1;
        o.reverse = (size >> 1) & 1;
        o.colors = palettes[(size >> 2) % (sizeof(palettes) / sizeof(palettes[0]))];
        o.width = (size >> 5) & 1 ? 1200 : 60;
        o.min_width = (size >> 6) & 1 ? 0.1 : 0.0;
        o.subtitle = (size >> 7) & 1 ? "sub <&>\"'" : NULL;
        bool bad_palette = o.colors && strcmp(o.colors, "nosuch") == 0;
        if ((profile_write_svg(p, devnull, &o) != 0) != bad_palette)
            abort();                              /* only an unknown palette name may be refused */
    }
    profile_free(p);
    return 0;
}
