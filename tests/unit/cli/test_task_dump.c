/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_task_dump.c: unit tests of what `taskspy tasks` prints of one snapshot (SPEC section 3b), on snapshots
 * built here (tests/unit/tasks/task_examples.h; their grouping: tests/unit/tasks/test_task_groups.c): the text
 * dump (summary line, worker lines, group blocks, -v's task lines, control characters); the JSON object (every
 * field, nulls, escapes, bytes that are not UTF-8); the folded stacks of -o ("task: ROOT", "NAME @ FILE:LINE"
 * frames, leaf, "[state]", one count per task, ';' kept out of names). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/task_dump.h"
#include "cli/task_stack_names.h"
#include "flamegraph/flamegraph.h"

#include "tests/unit/tasks/task_examples.h"

/* What a writer wrote into a memory stream. */
#define CAPTURE(text, call)                                                                                   \
    do {                                                                                                      \
        size_t capture_len_ = 0;                                                                              \
        FILE *capture_ = open_memstream(&(text), &capture_len_);                                             \
        assert_non_null(capture_);                                                                            \
        assert_int_equal((call), 0);                                                                          \
        assert_int_equal(fclose(capture_), 0);                                                                \
    } while (0)
#define OUT capture_

/* The text dump of snap (grouped here), to free. */
static char *text_dump(pid_t pid, const struct task_snapshot *snap, bool verbose)
{
    struct task_groups g;
    assert_int_equal(task_groups_build(&g, snap->tasks, snap->n_tasks), 0);
    char *text = NULL;
    CAPTURE(text, task_dump_text(OUT, pid, snap, &g, verbose));
    task_groups_free(&g);
    return text;
}

static void test_text(void **state)
{
    (void)state;
    struct task_snapshot snap = mixed_snapshot();
    char *text = text_dump(1234, &snap, false);
    assert_string_equal(text,
        "tokio 1.24.2, pid 1234: 8 tasks read\n"
        "worker 0 tid 1235 tokio-runtime-w: polling task 2, 3 in its local queue\n"
        "worker 1 tid 1236 tokio-runtime-w: polling task 1, 0 in its local queue\n"
        "thread tid 1234 my_app (not a worker: the runtime's block_on): not polling a task\n"
        "\n"
        "3 tasks idle\n"
        "    my_app::park_sleep @ main.rs:17\n"
        "    my_app::nap @ main.rs:13\n"
        "    tokio::time::sleep::Sleep (deadline in 3598.1-3599.9 s)\n"
        "\n"
        "2 tasks running\n"
        "    my_app::spin\n"
        "\n"
        "1 task idle, nothing can wake it\n"
        "    my_app::stuck\n"
        "    my_app::Never\n"
        "\n"
        "1 task idle\n"
        "    my_app::consume @ main.rs:41\n"
        "    tokio::sync::mpsc::Receiver\n"
        "\n"
        "1 task idle\n"
        "    my_app::consume @ main.rs:40\n"
        "    tokio::sync::mpsc::Receiver\n");
    free(text);
    text = text_dump(1234, &snap, true);
    const char *sleepers =
        "3 tasks idle\n"
        "    my_app::park_sleep @ main.rs:17\n"
        "    my_app::nap @ main.rs:13\n"
        "    tokio::time::sleep::Sleep (deadline in 3598.1-3599.9 s)\n"
        "  task 3: deadline in 3598.1 s\n"
        "  task 4: deadline in 3599.2 s\n"
        "  task 5: deadline in 3599.9 s\n"
        "\n"
        "2 tasks running\n"
        "    my_app::spin\n"
        "  task 1 on tid 1236\n"
        "  task 2 on tid 1235\n";
    if (!strstr(text, sleepers))
        fail_msg("-v's groups are not as expected:\n%s", text);
    assert_non_null(strstr(text, "\n    tokio::sync::mpsc::Receiver\n  task 9\n"));
    free(text);
}

static void test_text_partial_and_odd(void **state)
{
    (void)state;
    struct task_frame unknown[] = { { .function = "my_app::handle", .file = NULL, .line = 0 }, { .function = NULL, .file = "x.rs", .line = 3 } };
    struct task_info tasks[] = {
        { .id = 1, .state = TASK_IDLE, .root = NULL, .frames = unknown, .n_frames = 2, .detail = "odd\ndetail" },
    };
    struct task_worker workers[] = { { .tid = 5, .name = "bad\nname", .index = 0, .local_queue = -1 } };
    struct task_snapshot snap = { .runtime = NULL, .workers = workers, .n_workers = 1, .tasks = tasks, .n_tasks = 1,
                                  .listed = 1, .list_truncated = true, .target_gone = true };
    char *text = text_dump(77, &snap, false);
    assert_string_equal(text,
        "runtime, pid 77: 1 task read; the walk of the task list stopped early (its bound, or a link that "
        "changed); the target exited during the dump\n"
        "worker 0 tid 5 bad?name: not polling a task\n"
        "\n"
        "1 task idle\n"
        "    [task entry unknown]\n"
        "    my_app::handle\n"
        "    [unknown] @ x.rs:3\n"
        "    (odd?detail)\n");
    free(text);
}

static void test_json(void **state)
{
    (void)state;
    struct task_snapshot snap = mixed_snapshot();
    snap.n_tasks = 2;          /* the receiver at :40 and one sleeper */
    snap.n_workers = 2;
    snap.workers = &mixed_workers[1];
    char *text = NULL;
    CAPTURE(text, task_dump_json(OUT, 1234, &snap));
    assert_string_equal(text,
        "{\"schema\": 2, \"pid\": 1234, \"runtime\": \"tokio 1.24.2\", \"listed\": 8, \"truncated\": false, \"target_exited\": false,\n"
        " \"workers\": [\n"
        "  {\"tid\": 1236, \"name\": \"tokio-runtime-w\", \"index\": 1, \"task\": 1, \"local_queue\": 0},\n"
        "  {\"tid\": 1234, \"name\": \"my_app\", \"index\": null, \"task\": null, \"local_queue\": null}\n"
        " ],\n"
        " \"tasks\": [\n"
        "  {\"id\": 9, \"state\": \"idle\", \"unwakeable\": false, \"root\": \"my_app::consume\", \"frames\": "
        "[{\"function\": \"my_app::consume\", \"file\": \"main.rs\", \"line\": 40}], \"leaf\": "
        "\"tokio::sync::mpsc::Receiver\", \"detail\": null, \"tree\": {\"function\": \"my_app::consume\", \"file\": "
        "\"main.rs\", \"line\": 40, \"macro\": null, \"macro_line\": false, \"leaf\": \"tokio::sync::mpsc::Receiver\", "
        "\"detail\": null, \"children\": []}, \"tree_truncated\": false},\n"
        "  {\"id\": 5, \"state\": \"idle\", \"unwakeable\": false, \"root\": \"my_app::park_sleep\", \"frames\": "
        "[{\"function\": \"my_app::park_sleep\", \"file\": \"main.rs\", \"line\": 17}, {\"function\": "
        "\"my_app::nap\", \"file\": \"main.rs\", \"line\": 13}], \"leaf\": \"tokio::time::sleep::Sleep\", "
        "\"detail\": \"deadline in 3599.9 s\", \"tree\": {\"function\": \"my_app::park_sleep\", \"file\": \"main.rs\", "
        "\"line\": 17, \"macro\": null, \"macro_line\": false, \"leaf\": null, \"detail\": null, \"children\": "
        "[{\"function\": \"my_app::nap\", \"file\": \"main.rs\", \"line\": 13, \"macro\": null, \"macro_line\": false, "
        "\"leaf\": \"tokio::time::sleep::Sleep\", \"detail\": \"deadline in 3599.9 s\", \"children\": []}]}, "
        "\"tree_truncated\": false}\n"
        " ]}\n");
    free(text);
}

static void test_json_escapes(void **state)
{
    (void)state;
    /* a comm cut inside a UTF-8 sequence ("\xc3" of "é"), quotes, backslash, control characters, 4-byte UTF-8,
       an overlong form and a surrogate (not UTF-8: U+FFFD each byte) */
    struct task_worker workers[] = { { .tid = 1, .name = "caf\xc3", .index = 0, .local_queue = 1 } };
    struct task_frame frames[] = { { .function = "a\"b\\c", .file = NULL, .line = 0 } };
    struct task_info tasks[] = { { .id = 3, .state = TASK_CHANGING, .unwakeable = true, .root = "tab\there\x01",
                                   .frames = frames, .n_frames = 1, .leaf = "\xf0\x9f\xa6\x80 \xc0\xaf \xed\xa0\x80",
                                   .detail = "caf\xc3\xa9" } };
    struct task_snapshot snap = { .runtime = "tokio", .workers = workers, .n_workers = 1, .tasks = tasks, .n_tasks = 1,
                                  .listed = 1, .list_truncated = true };
    char *text = NULL;
    CAPTURE(text, task_dump_json(OUT, 1, &snap));
    assert_non_null(strstr(text, "\"truncated\": true"));
    assert_non_null(strstr(text, "\"name\": \"caf\\ufffd\""));
    assert_non_null(strstr(text, "\"function\": \"a\\\"b\\\\c\", \"file\": null, \"line\": null"));
    assert_non_null(strstr(text, "\"root\": \"tab\\u0009here\\u0001\""));
    assert_non_null(strstr(text, "\"leaf\": \"\xf0\x9f\xa6\x80 \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd\""));
    assert_non_null(strstr(text, "\"detail\": \"caf\xc3\xa9\""));
    assert_non_null(strstr(text, "\"state\": \"changing\", \"unwakeable\": true"));
    free(text);
    struct task_snapshot empty = { .runtime = "tokio" };
    CAPTURE(text, task_dump_json(OUT, 1, &empty));
    assert_string_equal(text, "{\"schema\": 2, \"pid\": 1, \"runtime\": \"tokio\", \"listed\": 0, \"truncated\": false, "
                              "\"target_exited\": false,\n \"workers\": [],\n \"tasks\": []}\n");
    free(text);
}

static void test_folded(void **state)
{
    (void)state;
    struct task_snapshot snap = mixed_snapshot();
    struct profile *p = profile_new();
    assert_non_null(p);
    uint64_t per_task = 0;
    assert_int_equal(task_stack_add_snapshot(p, &snap, &per_task), 0);
    assert_int_equal(per_task, 1);
    assert_int_equal(profile_total(p), N_MIXED);
    char *text = NULL;
    CAPTURE(text, profile_write_folded(p, OUT));
    assert_string_equal(text,
        "task: my_app::consume;my_app::consume @ main.rs:40;tokio::sync::mpsc::Receiver;[idle] 1\n"
        "task: my_app::consume;my_app::consume @ main.rs:41;tokio::sync::mpsc::Receiver;[idle] 1\n"
        "task: my_app::park_sleep;my_app::park_sleep @ main.rs:17;my_app::nap @ main.rs:13;"
        "tokio::time::sleep::Sleep;[idle] 3\n"
        "task: my_app::spin;[running] 2\n"
        "task: my_app::stuck;my_app::Never;[idle] 1\n");
    free(text);
    profile_free(p);
}

static void test_folded_names_safe(void **state)
{
    (void)state;
    struct task_frame frames[] = { { .function = "f<[u8; 4]>", .file = "a.rs", .line = 2 }, { .function = "g", .file = "b.rs", .line = 0 }, { .function = "h", .file = NULL, .line = 9 } };
    struct task_info task = { .id = 1, .state = TASK_SCHEDULED, .root = NULL, .frames = frames, .n_frames = 3,
                              .leaf = "Leaf\nType" };
    struct profile *p = profile_new();
    assert_non_null(p);
    struct task_stack_ids ids = { 0 };
    assert_int_equal(task_stack_ids(p, &task, "[runnable]", &ids), 0);
    const char *want[] = { "[task entry unknown]", "f<[u8: 4]> @ a.rs:2", "g", "h", "Leaf Type", "[runnable]" };
    assert_int_equal(ids.n, 6);
    for (size_t i = 0; i < ids.n; i++)
        assert_string_equal(profile_frame_name(p, ids.v[i]), want[i]);
    task.root = "r";
    assert_int_equal(task_stack_ids(p, &task, NULL, &ids), 0);     /* replaces, no state frame */
    assert_int_equal(ids.n, 5);
    assert_string_equal(profile_frame_name(p, ids.v[0]), "task: r");
    free(ids.v);
    profile_free(p);
}

/* A select! over three futures: a channel's recv (an async fn and its leaf), a Notify (a leaf alone) and a nap
   (an async fn and its Sleep), as future_decode builds it: preorder, the leaves on their frames. */
#define SELECT_NODES(deadline_)                                                                                   \
    {                                                                                                         \
        { .frame = { .function = "app::run", .file = "server.rs", .line = 338, .macro = "select!" },         \
          .parent = TASK_NO_NODE, .n_children = 3, .subtree = 5 },                                            \
        { .frame = { .function = "app::read", .file = "server.rs", .line = 90 },                              \
          .leaf = "tokio::sync::mpsc::chan::Rx<u64>", .parent = 0, .subtree = 1 },                             \
        { .leaf = "tokio::sync::notify::Notified", .detail = "waiting for a Notify", .parent = 0, .subtree = 1 }, \
        { .frame = { .function = "app::nap", .file = "server.rs", .line = 12 }, .parent = 0, .n_children = 1,   \
          .subtree = 2 },                                                                                     \
        { .leaf = "tokio::time::sleep::Sleep", .detail = (deadline_), .parent = 3, .subtree = 1 },               \
    }
static struct task_node select_a[] = SELECT_NODES("deadline in 2.0 s");
static struct task_node select_b[] = SELECT_NODES("deadline in 3.0 s");
static struct task_frame select_path[] = { { .function = "app::run", .file = "server.rs", .line = 338,
                                             .macro = "select!" },
                                           { .function = "app::read", .file = "server.rs", .line = 90 } };
/* a join! of two naps, its line the macro's own (the program's not in the DWARF) */
static struct task_node join_nodes[] = {
    { .frame = { .function = "app::both", .file = "join.rs", .line = 207, .macro = "join!", .macro_line = true },
      .parent = TASK_NO_NODE, .n_children = 2, .subtree = 3 },
    { .frame = { .function = "app::nap", .file = "server.rs", .line = 12 }, .leaf = "tokio::time::sleep::Sleep",
      .parent = 0, .subtree = 1 },
    { .frame = { .function = "app::nap", .file = "server.rs", .line = 12 }, .leaf = "tokio::time::sleep::Sleep",
      .parent = 0, .subtree = 1 },
};

#define TREE_TASK(task_id, nodes_, n_)                                                                         \
    { .id = (task_id), .state = TASK_IDLE, .root = "app::run", .nodes = (nodes_), .n_nodes = (n_),             \
      .frames = select_path, .n_frames = 2, .leaf = "tokio::sync::mpsc::chan::Rx<u64>" }

static void test_trees_grouped_and_drawn(void **state)
{
    (void)state;
    struct task_info tasks[] = { TREE_TASK(4, select_a, 5), TREE_TASK(6, select_b, 5),
                                 { .id = 9, .state = TASK_IDLE, .root = "app::both", .nodes = join_nodes, .n_nodes = 3,
                                   .frames = join_nodes[0].frame.function ? &join_nodes[1].frame : NULL, .n_frames = 1,
                                   .leaf = "tokio::time::sleep::Sleep" } };
    struct task_groups g;
    assert_int_equal(task_groups_build(&g, tasks, 3), 0);
    assert_int_equal(g.n, 2);               /* the two selects differ only in a detail: one group */
    assert_int_equal(g.v[0].n, 2);
    task_groups_free(&g);
    struct task_snapshot snap = { .runtime = "tokio 1.54.1", .tasks = tasks, .n_tasks = 3, .listed = 3 };
    char *text = text_dump(1, &snap, false);
    assert_string_equal(text,
        "tokio 1.54.1, pid 1: 3 tasks read\n"
        "\n"
        "2 tasks idle\n"
        "    app::run @ server.rs:338 (select!)\n"
        "    ├─ app::read @ server.rs:90\n"
        "    │  tokio::sync::mpsc::chan::Rx<u64>\n"
        "    ├─ tokio::sync::notify::Notified (waiting for a Notify)\n"
        "    └─ app::nap @ server.rs:12\n"
        "       tokio::time::sleep::Sleep (deadline in 2.0-3.0 s)\n"
        "\n"
        "1 task idle\n"
        "    app::both @ join.rs:207 (join!: the macro's own line, the program's not in the DWARF)\n"
        "    ├─ app::nap @ server.rs:12\n"
        "    │  tokio::time::sleep::Sleep\n"
        "    └─ app::nap @ server.rs:12\n"
        "       tokio::time::sleep::Sleep\n");
    free(text);
    /* a tree that differs in shape is another group */
    struct task_node other[5];
    memcpy(other, select_a, sizeof(other));
    other[3].frame.line = 13;
    tasks[1].nodes = other;
    assert_int_equal(task_groups_build(&g, tasks, 3), 0);
    assert_int_equal(g.n, 3);
    task_groups_free(&g);
}

static void test_tree_json(void **state)
{
    (void)state;
    struct task_info tasks[] = { TREE_TASK(4, select_a, 5) };
    struct task_snapshot snap = { .runtime = "tokio", .tasks = tasks, .n_tasks = 1, .listed = 1 };
    char *text = NULL;
    CAPTURE(text, task_dump_json(OUT, 1, &snap));
    const char *tree =
        "\"tree\": {\"function\": \"app::run\", \"file\": \"server.rs\", \"line\": 338, \"macro\": \"select!\", "
        "\"macro_line\": false, \"leaf\": null, \"detail\": null, \"children\": ["
        "{\"function\": \"app::read\", \"file\": \"server.rs\", \"line\": 90, \"macro\": null, \"macro_line\": false, "
        "\"leaf\": \"tokio::sync::mpsc::chan::Rx<u64>\", \"detail\": null, \"children\": []}, "
        "{\"function\": null, \"file\": null, \"line\": null, \"macro\": null, \"macro_line\": false, "
        "\"leaf\": \"tokio::sync::notify::Notified\", \"detail\": \"waiting for a Notify\", \"children\": []}, "
        "{\"function\": \"app::nap\", \"file\": \"server.rs\", \"line\": 12, \"macro\": null, \"macro_line\": false, "
        "\"leaf\": null, \"detail\": null, \"children\": [{\"function\": null, \"file\": null, \"line\": null, "
        "\"macro\": null, \"macro_line\": false, \"leaf\": \"tokio::time::sleep::Sleep\", \"detail\": "
        "\"deadline in 2.0 s\", \"children\": []}]}]}, \"tree_truncated\": false}";
    if (!strstr(text, tree))
        fail_msg("no tree as expected in:\n%s", text);
    assert_non_null(strstr(text, "\"frames\": [{\"function\": \"app::run\", \"file\": \"server.rs\", \"line\": 338}, "
                                 "{\"function\": \"app::read\", \"file\": \"server.rs\", \"line\": 90}]"));
    assert_null(strstr(text, "\"stack\""));          /* only running tasks have one */
    free(text);
    struct task_frame stack[] = { { .function = "std::thread::sleep", .file = "thread.rs", .line = 9 },
                                  { .function = "app::block", .file = "main.rs", .line = 5 } };
    struct task_info running[] = { { .id = 2, .state = TASK_RUNNING, .root = "app::block", .stack = stack,
                                     .n_stack = 2 } };
    snap.tasks = running;
    CAPTURE(text, task_dump_json(OUT, 1, &snap));
    assert_non_null(strstr(text, "\"tree\": null, \"tree_truncated\": false, \"stack\": [{\"function\": "
                                 "\"std::thread::sleep\", \"file\": \"thread.rs\", \"line\": 9}, {\"function\": "
                                 "\"app::block\", \"file\": \"main.rs\", \"line\": 5}]}"));
    free(text);
}

static void test_tree_folded_split(void **state)
{
    (void)state;
    /* the select's three branches and the join's two: each task counts lcm(3, 2) = 6, 2 a select branch, 3 a
       join branch */
    struct task_info tasks[] = { TREE_TASK(4, select_a, 5),
                                 { .id = 9, .state = TASK_IDLE, .root = "app::both", .nodes = join_nodes, .n_nodes = 3,
                                   .frames = &join_nodes[1].frame, .n_frames = 1, .leaf = "tokio::time::sleep::Sleep" } };
    struct task_snapshot snap = { .tasks = tasks, .n_tasks = 2, .listed = 2 };
    assert_int_equal(task_stack_paths(&tasks[0]), 3);
    assert_int_equal(task_stack_paths(&tasks[1]), 2);
    struct profile *p = profile_new();
    assert_non_null(p);
    uint64_t per_task = 0;
    assert_int_equal(task_stack_add_snapshot(p, &snap, &per_task), 0);
    assert_int_equal(per_task, 6);
    assert_int_equal(profile_total(p), 12);
    char *text = NULL;
    CAPTURE(text, profile_write_folded(p, OUT));
    assert_string_equal(text,
        "task: app::both;app::both @ join.rs:207 (join!, its own line);app::nap @ server.rs:12;"
        "tokio::time::sleep::Sleep;[idle] 6\n"
        "task: app::run;app::run @ server.rs:338 (select!);app::nap @ server.rs:12;tokio::time::sleep::Sleep;[idle] 2\n"
        "task: app::run;app::run @ server.rs:338 (select!);app::read @ server.rs:90;"
        "tokio::sync::mpsc::chan::Rx<u64>;[idle] 2\n"
        "task: app::run;app::run @ server.rs:338 (select!);tokio::sync::notify::Notified;[idle] 2\n");
    free(text);
    profile_free(p);
    /* an uneven count: 10 over three branches is 4, 3, 3 (the first branch added last: the last leaf its) */
    p = profile_new();
    struct task_stack_ids ids = { 0 };
    assert_int_equal(task_stack_add(p, &tasks[0], "[suspended]", 10, &ids), 0);
    assert_int_equal(profile_total(p), 10);
    assert_string_equal(profile_frame_name(p, ids.v[ids.n - 2]), "tokio::sync::mpsc::chan::Rx<u64>");
    CAPTURE(text, profile_write_folded(p, OUT));
    assert_non_null(strstr(text, "app::read @ server.rs:90;tokio::sync::mpsc::chan::Rx<u64>;[suspended] 4\n"));
    assert_non_null(strstr(text, "tokio::sync::notify::Notified;[suspended] 3\n"));
    assert_non_null(strstr(text, "tokio::time::sleep::Sleep;[suspended] 3\n"));
    free(text);
    /* 1 over three: the first branch only (shares of 0 left out) */
    profile_free(p);
    p = profile_new();
    assert_int_equal(task_stack_add(p, &tasks[0], "[suspended]", 1, &ids), 0);
    assert_int_equal(profile_total(p), 1);
    assert_int_equal(profile_distinct_stacks(p), 1);
    free(ids.v);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_partial_and_odd),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_escapes),
        cmocka_unit_test(test_folded),
        cmocka_unit_test(test_folded_names_safe),
        cmocka_unit_test(test_trees_grouped_and_drawn),
        cmocka_unit_test(test_tree_json),
        cmocka_unit_test(test_tree_folded_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
