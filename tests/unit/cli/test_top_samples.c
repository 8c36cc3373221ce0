/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_top_samples.c: cli/top_samples, the sampler's side of `taskspy top`, on this test program's own code: a
 * sample is told with its innermost frame outside Rust's standard library (here a C function: the leaf itself); a
 * minute of samples later the symbol state is renewed, the mappings told again, and the same address gives the
 * same name (the same pointer: the names live on); a sample in no task is told without a frame; a frame in the C
 * library is passed over for its caller in the program's executable. */
#include "cli/top_samples.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <limits.h>
#include <unistd.h>

/* The function the samples land in (kept out of line, with a frame of its own). */
__attribute__((noinline)) int top_samples_test_leaf(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x * 3 + 1;
}

/* The executable mappings of this process whose file is path (exact), or whose name holds part (when path is NULL),
 * told as the sampler tells them; the file's path into file (file_len bytes). */
static void tell_mappings(struct top_samples *k, const char *path, const char *part, char *file, size_t file_len)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    char line[PATH_MAX + 128];
    bool told = false;
    while (fgets(line, sizeof(line), maps)) {
        unsigned long long start, end, pgoff;
        char perms[8], name[PATH_MAX];
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &pgoff, name) != 5)
            continue;
        if (perms[2] != 'x' || (path ? strcmp(name, path) != 0 : strstr(name, part) == NULL))
            continue;
        snprintf(file, file_len, "%s", name);
        top_samples_mapping(k, &(struct sampler_mapping){ .start = start, .end = end, .pgoff = pgoff, .path = name,
                                                          .root = "", .executable = true });
        told = true;
    }
    fclose(maps);
    assert_true(told);
}

/* This program's executable, as /proc/self/exe names it. */
static void own_executable(char *path, size_t path_len)
{
    ssize_t n = readlink("/proc/self/exe", path, path_len - 1);
    assert_true(n > 0);
    path[n] = '\0';
}

static struct sampler_sample sample_at(const uint64_t *ips, uint64_t time_ns, bool in_task)
{
    return (struct sampler_sample){ .pid = getpid(), .tid = getpid(), .time_ns = time_ns, .user_ips = ips,
                                    .n_user = 1, .task_state = in_task ? SAMPLER_IN_TASK : SAMPLER_NOT_IN_TASK,
                                    .task_id = in_task ? 7 : 0 };
}

/* A view's model and its samples' side (this program the target's executable when named), told this program's
 * mapping and the C library's. */
static struct top_samples *open_view(struct task_top **model, bool name_executable)
{
    *model = task_top_new(&(struct task_top_options){ .sample_hz = 99 });
    assert_non_null(*model);
    char path[PATH_MAX], file[PATH_MAX];
    own_executable(path, sizeof(path));
    struct top_samples *k = top_samples_new(*model, name_executable ? path : NULL);
    assert_non_null(k);
    tell_mappings(k, path, NULL, file, sizeof(file));
    tell_mappings(k, NULL, "/libc.so", file, sizeof(file));
    return k;
}

static void test_frames_survive_renewal(void **state)
{
    (void)state;
    assert_int_equal(top_samples_test_leaf(2), 7);
    struct task_top *model;
    struct top_samples *k = open_view(&model, true);
    const uint64_t ips[1] = { (uint64_t)(uintptr_t)&top_samples_test_leaf + 1 };
    const uint64_t t0 = 1000000000ull;

    struct sampler_sample s = sample_at(ips, t0, true);
    const char *before = top_samples_frame(k, &s);
    assert_non_null(before);
    assert_non_null(strstr(before, "top_samples_test_leaf"));
    top_samples_sample(k, &s);
    assert_int_equal(top_samples_renewals(k), 0);

    s = sample_at(ips, t0 + 30000000000ull, true);           /* half a minute on: the same state */
    top_samples_sample(k, &s);
    assert_int_equal(top_samples_renewals(k), 0);
    s = sample_at(ips, t0 + 61000000000ull, false);          /* a minute on: renewed, whatever the sample */
    top_samples_sample(k, &s);
    assert_int_equal(top_samples_renewals(k), 1);

    s = sample_at(ips, t0 + 62000000000ull, true);
    const char *after = top_samples_frame(k, &s);
    assert_ptr_equal(after, before);                          /* the mapping told again, the name kept */
    top_samples_sample(k, &s);
    s = sample_at(ips, t0 + 125000000000ull, true);
    top_samples_sample(k, &s);
    assert_int_equal(top_samples_renewals(k), 2);
    assert_ptr_equal(top_samples_frame(k, &s), before);

    top_samples_free(k);
    task_top_free(model);
}

/* A mapping that covers an earlier one replaces it, for the renewed state too: an address in it then resolves
 * in the later object (here: none, so no frame of its own at all; every object's frames count here, so that
 * it is the lookup that finds none). */
static void test_replaced_mapping(void **state)
{
    (void)state;
    struct task_top *model;
    struct top_samples *k = open_view(&model, false);
    const uint64_t ips[1] = { (uint64_t)(uintptr_t)&top_samples_test_leaf + 1 };
    struct sampler_sample s = sample_at(ips, 1000000000ull, true);
    assert_non_null(top_samples_frame(k, &s));
    top_samples_sample(k, &s);
    top_samples_mapping(k, &(struct sampler_mapping){ .start = ips[0] & ~0xfffull, .end = (ips[0] | 0xfffull) + 1,
                                                      .pgoff = 0, .path = "/nonexistent/replaced.so", .root = "",
                                                      .executable = true });
    s = sample_at(ips, 70000000000ull, true);                 /* renewed: the mappings told again, in order */
    top_samples_sample(k, &s);
    assert_int_equal(top_samples_renewals(k), 1);
    const char *after = top_samples_frame(k, &s);
    assert_true(after == NULL || strstr(after, "top_samples_test_leaf") == NULL);
    top_samples_free(k);
    task_top_free(model);
}

/* A sample whose leaf is in the C library (getpid) under a function of this program: the program's function is
 * its frame, the C library's never looked up; without the executable named, the C library's function is. */
static void test_other_objects_passed_over(void **state)
{
    (void)state;
    const uint64_t ips[2] = { (uint64_t)(uintptr_t)&getpid + 1, (uint64_t)(uintptr_t)&top_samples_test_leaf + 1 };
    for (int named = 1; named >= 0; named--) {
        struct task_top *model;
        struct top_samples *k = open_view(&model, named);
        struct sampler_sample s = sample_at(ips, 1000000000ull, true);
        s.n_user = 2;
        const char *frame = top_samples_frame(k, &s);
        assert_non_null(frame);
        if (named)
            assert_non_null(strstr(frame, "top_samples_test_leaf"));
        else
            assert_null(strstr(frame, "top_samples_test_leaf"));
        top_samples_free(k);
        task_top_free(model);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames_survive_renewal),
        cmocka_unit_test(test_replaced_mapping),
        cmocka_unit_test(test_other_objects_passed_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
