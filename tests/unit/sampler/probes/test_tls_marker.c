/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_tls_marker.c: unit tests of the TLS task marker's lookup (sampler/probes/tls_marker): the static TLS
 * offset arithmetic (an aligned segment, the tokio numbers, a segment whose first byte is not
 * aligned), and the whole lookup checked against glibc: this test program defines the marker itself, finds
 * it in its own executable, and the offset must land on the variable's real address from the thread
 * pointer, in the main thread and in another thread. Files that are not ELF, or lack the marker, say so. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "elf/elf_file.h"
#include "sampler/probes/tls_marker.h"

__thread uint64_t taskspy_current_task __attribute__((tls_model("initial-exec"), used));
__thread char other_tls_data[40] __attribute__((tls_model("initial-exec"), used)) = { 1 };

static void test_offset_arithmetic(void **state)
{
    (void)state;
    assert_int_equal(elf_tls_tp_offset(0, 8, 8, 0x3db0), -8);
    /* the hyper server: CONTEXT at 0x90 of a 0x170-byte segment aligned to 16 */
    assert_int_equal(elf_tls_tp_offset(0x90, 0x170, 16, 0x1000), 0x90 - 0x170);
    /* memsz rounds up to the alignment */
    assert_int_equal(elf_tls_tp_offset(0x10, 0x28, 32, 0x2000), 0x10 - 0x40);
    /* a segment starting 8 bytes past a 16-byte boundary: the block keeps that phase */
    assert_int_equal(elf_tls_tp_offset(0, 0x18, 16, 0x2008), -0x18);
    assert_int_equal(elf_tls_tp_offset(0, 0x20, 16, 0x2008), -0x28);
    assert_int_equal(elf_tls_tp_offset(4, 8, 0, 0), 4 - 8);   /* align 0 counts as 1 */
}

static uintptr_t thread_pointer(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));       /* glibc's TCB starts with a pointer to itself */
    return tp;
}

static void *offset_in_thread(void *arg)
{
    const struct tls_marker *m = arg;
    return (void *)(uintptr_t)((uintptr_t)&taskspy_current_task == thread_pointer() + (uintptr_t)m->tp_offset);
}

static void test_own_executable(void **state)
{
    (void)state;
    other_tls_data[1] = 2;
    struct tls_marker m;
    assert_int_equal(tls_marker_find("/proc/self/exe", &m), 1);
    assert_string_equal(m.symbol, TLS_MARKER_SYMBOL);
    assert_int_equal(m.size, 8);
    assert_true(m.tp_offset < 0);
    assert_ptr_equal((void *)&taskspy_current_task, (void *)(thread_pointer() + (uintptr_t)m.tp_offset));
    pthread_t t;
    void *same = NULL;
    assert_int_equal(pthread_create(&t, NULL, offset_in_thread, &m), 0);
    assert_int_equal(pthread_join(t, &same), 0);
    assert_true(same != NULL);
}

static void test_not_found(void **state)
{
    (void)state;
    struct tls_marker m;
    /* an ELF file without the marker: the dynamic loader has TLS of its own, but not this variable */
    int rc = tls_marker_find("/bin/true", &m);
    assert_int_equal(rc, 0);
    errno = 0;
    assert_int_equal(tls_marker_find("/proc/self/status", &m), -1);
    assert_int_equal(tls_marker_find("/nonexistent/taskspy-test", &m), -1);
    assert_int_equal(errno, ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offset_arithmetic),
        cmocka_unit_test(test_own_executable),
        cmocka_unit_test(test_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
