/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_demangle.c: libFuzzer target for demangled-name cleanup: symbolize_demangle (Rust legacy/v0 and
 * C++ through libiberty), symbolize_strip_rust_hash and task_stacks_strip_async_suffix, on NUL-terminated
 * copies of the input and on the demangler's output. */
#include "flamegraph/flamegraph.h"
#include "symbolize/symbolize.h"

#include <stdlib.h>
#include <string.h>

static void cleanup(const char *src)
{
    size_t len = strlen(src);
    char *a = strdup(src);
    char *b = strdup(src);
    if (!a || !b) {
        free(a);
        free(b);
        return;
    }
    symbolize_strip_rust_hash(a);
    if (strlen(a) > len || strncmp(a, src, strlen(a)) != 0)
        abort();                                  /* stripping may only shorten the name */
    bool async = task_stacks_strip_async_suffix(b);
    size_t blen = strlen(b);
    if (blen > len || strncmp(b, src, blen) != 0 || async != (blen != len))
        abort();
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)                              /* demangling is superlinear on hostile input; names are short */
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    cleanup(s);
    char *d = symbolize_demangle(s);
    if (d) {
        cleanup(d);
        free(d);
    }
    free(s);
    return 0;
}
