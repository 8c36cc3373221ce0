/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_tls_library.c: unit tests of the static TLS layout of sampler/probes/tls_library, checked against
 * glibc itself: this program's own startup objects with a TLS segment (itself, libc and whatever else it
 * links), in their module order as dl_iterate_phdr walks them, laid out by tls_static_layout, must put each
 * block exactly where glibc put this thread's copy (dl_phdr_info.dlpi_tls_data), in the main thread and in
 * another thread. And the link map walk of this very process finds no library defining the marker. */
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampler/probes/tls_library.h"

/* TLS of the executable's own, with an alignment that leaves gaps */
__thread char own_tls[24] __attribute__((tls_model("initial-exec"), used, aligned(64))) = { 1 };

struct collected {
    struct tls_module modules[64];
    uintptr_t blocks[64];            /* this thread's copy of each module's block */
    size_t n;
};

static int collect(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct collected *c = ctx;
    for (int i = 0; i < info->dlpi_phnum && c->n < 64; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_phdr[i].p_memsz > 0) {
            c->modules[c->n] = (struct tls_module){ info->dlpi_phdr[i].p_memsz, info->dlpi_phdr[i].p_align,
                                                    info->dlpi_phdr[i].p_vaddr };
            c->blocks[c->n++] = (uintptr_t)info->dlpi_tls_data;
        }
    return 0;
}

static uintptr_t thread_pointer(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

/* Returns how many blocks matched glibc's, or -1 at the first that did not. */
static void *check_layout(void *arg)
{
    (void)arg;
    own_tls[0]++;                    /* (this thread's copy exists either way: static TLS) */
    struct collected c = { .n = 0 };
    dl_iterate_phdr(collect, &c);
    uint64_t offsets[64];
    tls_static_layout(c.modules, c.n, offsets);
    intptr_t matched = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (!c.blocks[i])
            continue;                /* not allocated in this thread (dynamic TLS): not ours to place */
        if (thread_pointer() - offsets[i] != c.blocks[i])
            return (void *)(intptr_t)-1;
        matched++;
    }
    return (void *)matched;
}

static void test_layout_is_glibcs(void **state)
{
    (void)state;
    intptr_t matched = (intptr_t)check_layout(NULL);
    assert_true(matched >= 2);       /* the executable's own block and libc's at least */
    pthread_t t;
    void *other;
    assert_int_equal(pthread_create(&t, NULL, check_layout, NULL), 0);
    assert_int_equal(pthread_join(t, &other), 0);
    assert_int_equal((intptr_t)other, matched);
}

static void test_no_library_marker_here(void **state)
{
    (void)state;
    struct tls_library_place place;
    char err[256] = "";
    assert_int_equal(tls_library_place(getpid(), "", &place, err, sizeof(err)), 0);
    assert_string_equal(place.library, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_is_glibcs),
        cmocka_unit_test(test_no_library_marker_here),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
