/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_task_groups.c: unit tests of tasks/'s grouping of one snapshot's tasks (SPEC section 3b), on snapshots
 * built here: grouping by (state, unwakeable, root, frames, leaf) and not by detail, largest group first with
 * ties by smallest id, a group's detail (the same, a range, or the first with "others differ"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tasks/tasks.h"
#include "tests/unit/tasks/task_examples.h"

static void test_groups_by_backtrace_not_detail(void **state)
{
    (void)state;
    struct task_groups g;
    assert_int_equal(task_groups_build(&g, mixed_tasks, N_MIXED), 0);
    /* sleepers (3), running spin (2), then the singles by smallest id: consume:41 (8), consume:40 (9)... */
    assert_int_equal(g.n, 5);
    assert_int_equal(g.v[0].n, 3);
    assert_int_equal(g.v[0].tasks[0]->id, 3);
    assert_int_equal(g.v[0].tasks[1]->id, 4);
    assert_int_equal(g.v[0].tasks[2]->id, 5);
    assert_int_equal(g.v[1].n, 2);
    assert_int_equal(g.v[1].tasks[0]->id, 1);
    assert_int_equal(g.v[1].tasks[0]->state, TASK_RUNNING);
    assert_int_equal(g.v[2].n, 1);
    assert_int_equal(g.v[2].tasks[0]->id, 7);
    assert_int_equal(g.v[3].tasks[0]->id, 8);      /* a different await line: its own group */
    assert_int_equal(g.v[4].tasks[0]->id, 9);
    size_t total = 0;
    for (size_t i = 0; i < g.n; i++)
        total += g.v[i].n;
    assert_int_equal(total, N_MIXED);
    task_groups_free(&g);
}

static void test_key_parts_split_groups(void **state)
{
    (void)state;
    struct task_frame other_file[] = { { .function = "my_app::park_sleep", .file = "lib.rs", .line = 17 }, { .function = "my_app::nap", .file = "main.rs", .line = 13 } };
    struct task_info tasks[] = {
        SLEEPER(1, NULL), SLEEPER(2, NULL), SLEEPER(3, NULL), SLEEPER(4, NULL), SLEEPER(5, NULL), SLEEPER(6, NULL),
    };
    tasks[1].state = TASK_SCHEDULED;                 /* state */
    tasks[2].unwakeable = true;                      /* nothing can wake it */
    tasks[3].root = "my_app::other";                 /* root */
    tasks[4].frames = other_file;                    /* a frame's file */
    tasks[5].leaf = NULL;                            /* leaf */
    struct task_groups g;
    assert_int_equal(task_groups_build(&g, tasks, 6), 0);
    assert_int_equal(g.n, 6);
    for (size_t i = 0; i < g.n; i++)                 /* all of one size: by id */
        assert_int_equal(g.v[i].tasks[0]->id, i + 1);
    task_groups_free(&g);
    tasks[1] = tasks[2] = tasks[3] = tasks[4] = tasks[5] = tasks[0];
    assert_int_equal(task_groups_build(&g, tasks, 6), 0);
    assert_int_equal(g.n, 1);
    task_groups_free(&g);
}

static void test_no_tasks(void **state)
{
    (void)state;
    struct task_groups g;
    assert_int_equal(task_groups_build(&g, NULL, 0), 0);
    assert_int_equal(g.n, 0);
    task_groups_free(&g);
}

/* The detail a group of tasks with these details shows (NULL: none). */
static const char *detail_of(const char *const *details, size_t n, char *buf, size_t len)
{
    struct task_info tasks[8];
    const struct task_info *members[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        tasks[i] = (struct task_info){ .id = i + 1, .detail = details[i] };
        members[i] = &tasks[i];
    }
    struct task_group group = { .tasks = members, .n = n };
    return task_group_detail(&group, buf, len);
}

static void test_group_detail(void **state)
{
    (void)state;
    char buf[128];
    const char *same[] = { "deadline in 2.1 ms", "deadline in 2.1 ms" };
    assert_string_equal(detail_of(same, 2, buf, sizeof(buf)), "deadline in 2.1 ms");
    const char *range[] = { "deadline in 3599.2 s", "deadline in 3598.1 s", "deadline in 3599.9 s" };
    assert_string_equal(detail_of(range, 3, buf, sizeof(buf)), "deadline in 3598.1-3599.9 s");
    const char *bare[] = { "2.5 ms", "10 ms" };
    assert_string_equal(detail_of(bare, 2, buf, sizeof(buf)), "2.5-10 ms");
    const char *past[] = { "deadline in -0.5 s", "deadline in 1.5 s" };
    assert_string_equal(detail_of(past, 2, buf, sizeof(buf)), "deadline in -0.5 to 1.5 s");
    const char *units[] = { "deadline in 3 s", "deadline in 4 ms" };      /* units differ: no range */
    assert_string_equal(detail_of(units, 2, buf, sizeof(buf)), "deadline in 3 s; others differ");
    const char *ids[] = { "waits for task 42", "waits for task 43" };    /* an id is no measure */
    assert_string_equal(detail_of(ids, 2, buf, sizeof(buf)), "waits for task 42; others differ");
    const char *glued[] = { "fd7 s", "fd8 s" };                          /* the number must start a word */
    assert_string_equal(detail_of(glued, 2, buf, sizeof(buf)), "fd7 s; others differ");
    const char *some[] = { NULL, "deadline in 1 s", "deadline in 2 s" }; /* one without: no range */
    assert_string_equal(detail_of(some, 3, buf, sizeof(buf)), "deadline in 1 s; others differ");
    const char *none[] = { NULL, NULL };
    assert_null(detail_of(none, 2, buf, sizeof(buf)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_by_backtrace_not_detail),
        cmocka_unit_test(test_key_parts_split_groups),
        cmocka_unit_test(test_no_tasks),
        cmocka_unit_test(test_group_detail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
