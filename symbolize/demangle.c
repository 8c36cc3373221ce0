/* SPDX-License-Identifier: GPL-3.0-or-later */
/* demangle.c: display names for symbols. Rust legacy (_ZN...17h<hash>E, hash removed) and v0 (_R...)
 * are demangled without parameters, as rustfilt prints them; C++ (_Z...) with parameter types
 * (DMGL_PARAMS | DMGL_ANSI), as perf and c++filt print them. Async closures stay as rustc names them
 * ("::{{closure}}", "::{closure#0}"); the flamegraph layer decides what to do with them. */
#include "symbolize/symbolize_internal.h"

#include <ctype.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUST_HASH_DIGITS 16

/* "_ZN...17h0123456789abcdefE", possibly followed by a ".llvm.NNN"-style suffix. ('.' also occurs inside
 * legacy names, "$LT$a..b$GT$", so the hash is looked for at every "17h".) */
static bool is_rust_legacy(const char *s)
{
    if (strncmp(s, "_ZN", 3) != 0)
        return false;
    for (const char *h = strstr(s, "17h"); h; h = strstr(h + 1, "17h")) {
        size_t i = 0;
        while (i < RUST_HASH_DIGITS && isxdigit((unsigned char)h[3 + i]))
            i++;
        if (i < RUST_HASH_DIGITS)
            continue;
        const char *after = h + 3 + RUST_HASH_DIGITS;
        if (after[0] == 'E' && (after[1] == '\0' || after[1] == '.'))
            return true;
    }
    return false;
}

char *symbolize_demangle(const char *mangled)
{
    if (!mangled)
        return NULL;
    char *out = NULL;
    if (strncmp(mangled, "_R", 2) == 0 || is_rust_legacy(mangled))
        out = cplus_demangle(mangled, DMGL_RUST);
    if (!out && strncmp(mangled, "_Z", 2) == 0)
        out = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_GNU_V3);
    if (out)
        symbolize_strip_rust_hash(out);
    return out;
}

void symbolize_strip_rust_hash(char *name)
{
    size_t len = strlen(name);
    const size_t suffix = 3 + RUST_HASH_DIGITS;   /* "::h" + hex */
    if (len <= suffix)
        return;
    char *h = name + len - suffix;
    if (strncmp(h, "::h", 3) != 0)
        return;
    for (size_t i = 0; i < RUST_HASH_DIGITS; i++)
        if (!isxdigit((unsigned char)h[3 + i]))
            return;
    *h = '\0';
}

char *symbolize_display_name(const char *raw, bool demangle)
{
    /* Symbol versions ("memcpy@@GLIBC_2.14", "getpid@GLIBC_2.2.5") are dropped; a PLT entry keeps its
     * "@plt" after the demangled name. */
    const char *at = strchr(raw, '@');
    size_t len = at && at != raw ? (size_t)(at - raw) : strlen(raw);
    const char *suffix = at && at != raw && strcmp(at, "@plt") == 0 ? "@plt" : "";
    char *plain = strndup(raw, len);
    if (!plain)
        return NULL;
    char *demangled = demangle ? symbolize_demangle(plain) : NULL;
    const char *base = demangled ? demangled : plain;
    char *out = NULL;
    if (asprintf(&out, "%s%s", base, suffix) < 0)
        out = NULL;
    free(demangled);
    free(plain);
    return out;
}
