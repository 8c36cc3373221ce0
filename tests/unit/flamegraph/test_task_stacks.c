/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_task_stacks.c: unit tests of flamegraph/task_stacks.c: task_stacks_strip_async_suffix on Rust async frame
 * names (closures, async fn/block, nested suffixes) and on names it must leave alone; task_stacks_prepare display /
 * function / entry names (await-point labels only for async frames with await points on and a known file,
 * "_[k]" for kernel frames, ';' sanitized, runtime-boundary detection); task_stacks_add checked through
 * profile_write_folded: thread stacks kept whole, task stacks cut below the innermost poll-marker frame or else the
 * innermost runtime frame (built-in tokio boundaries or --task-boundary), rooted "task: ENTRY", "task ID: ENTRY"
 * or not at all by grouping, "[unknown task]" for unknown tasks, samples inside the poll wrapper rooted by the
 * task's learned entry (held until task_stacks_finish) and never dropped, a hook marker's learned caller used as
 * the boundary; a bad boundary regex gives NULL and a message; the samples the markers placed with task code below
 * a boundary, counted and in no task apart, and the rule that says the markers never put one in a task. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flamegraph/flamegraph.h"

/* ---- task_stacks_strip_async_suffix ------------------------------------------------------------------- */

static void expect_strip(const char *name, const char *want, bool want_rc)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", name);
    bool rc = task_stacks_strip_async_suffix(buf);
    if (rc != want_rc || strcmp(buf, want) != 0)
        fail_msg("strip('%s') = '%s' (%d), want '%s' (%d)", name, buf, rc, want, want_rc);
}

static void test_strip_async_suffix(void **state)
{
    (void)state;
    expect_strip("a::b::{{closure}}", "a::b", true);
    expect_strip("a::b::{{closure}}::{{closure}}", "a::b", true);
    expect_strip("a::b::{async_fn#0}", "a::b", true);
    expect_strip("a::b::{async_block#12}", "a::b", true);
    expect_strip("a::{closure#3}", "a", true);
    expect_strip("a::{async_block#0}::{closure#1}::{{closure}}", "a", true);
    expect_strip("a::{async_fn_env#0}", "a", true);
    expect_strip("a::{async_block_env#7}", "a", true);
    expect_strip("<app::Server as tower::Service<R>>::call::{{closure}}", "<app::Server as tower::Service<R>>::call",
                 true);
    expect_strip("demo::worker::{{closure}}", "demo::worker", true);

    /* not async: unchanged, false */
    expect_strip("a::b", "a::b", false);
    expect_strip("{{closure}}", "{{closure}}", false);
    expect_strip("::{{closure}}", "::{{closure}}", false);
    expect_strip("a::{closure#}", "a::{closure#}", false);
    expect_strip("a::{closure#x}", "a::{closure#x}", false);
    expect_strip("a::{closure#3}x", "a::{closure#3}x", false);
    expect_strip("a::{closure#3", "a::{closure#3", false);
    expect_strip("a::{{closure}}::b", "a::{{closure}}::b", false);
    expect_strip("a::{{closure}}x", "a::{{closure}}x", false);
    expect_strip("a::{shim#0}", "a::{shim#0}", false);
    expect_strip("a::{{constant}}", "a::{{constant}}", false);
    expect_strip("", "", false);
    /* strips what it can from the end, then stops at a non-async part */
    expect_strip("a::{closure#x}::{{closure}}", "a::{closure#x}", true);
}

/* ---- helpers ---------------------------------------------------------------------------------------------- */

struct env {
    struct profile *p;
    struct task_stacks *t;
    struct stack_frame frames[32];
    size_t n;
    char err[256];
};

static void env_init(struct env *e, enum task_grouping g, bool await_points, const char *boundary)
{
    memset(e, 0, sizeof(*e));
    e->p = profile_new();
    assert_non_null(e->p);
    e->t = task_stacks_new(e->p, g, await_points, boundary, e->err, sizeof(e->err));
    assert_non_null(e->t);
}

static void env_free(struct env *e)
{
    task_stacks_free(e->t);
    profile_free(e->p);
}

/* Append one frame (root first). */
static const struct stack_frame *push(struct env *e, const char *name, const char *file, unsigned line, bool kernel)
{
    assert_true(e->n < 32);
    assert_int_equal(task_stacks_prepare(e->t, name, file, line, kernel, &e->frames[e->n]), 0);
    return &e->frames[e->n++];
}

static void add(struct env *e, const char *thread, enum stack_task_state st, uint64_t task, const char *marker,
                uint64_t count)
{
    const struct stack_frame *ptrs[32];
    for (size_t i = 0; i < e->n; i++)
        ptrs[i] = &e->frames[i];
    uint32_t root = profile_intern(e->p, thread, strlen(thread));
    uint32_t mf = marker ? profile_intern(e->p, marker, strlen(marker)) : PROFILE_NO_FRAME;
    assert_int_equal(task_stacks_add(e->t, root, st, task, mf, ptrs, e->n, count), 0);
    e->n = 0;
}

static char *write_folded(struct env *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(profile_write_folded(e->p, out), 0);
    assert_int_equal(fclose(out), 0);
    return buf;
}

/* The sum of the counts of the folded output. */
static uint64_t folded_sum(struct env *e)
{
    char *buf = write_folded(e);
    uint64_t sum = 0;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        sum += strtoull(sp + 1, NULL, 10);
        line = nl + 1;
    }
    free(buf);
    return sum;
}

/* Settle held-back samples (as record does before writing) and compare the folded output. */
static void expect_folded(struct env *e, const char *want)
{
    assert_int_equal(task_stacks_finish(e->t), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(profile_write_folded(e->p, out), 0);
    assert_int_equal(fclose(out), 0);
    bool ok = strcmp(buf, want) == 0;
    if (!ok)
        print_error("folded:\n%s\nwant:\n%s\n", buf, want);
    free(buf);
    assert_true(ok);
}

static const char *name_of(struct env *e, uint32_t id)
{
    return profile_frame_name(e->p, id);
}

#define HARNESS "tokio::runtime::task::harness::Harness<T,S>::poll"
#define MARKER "tokio::runtime::task::harness::poll_future"

/* A typical tokio worker stack down to a task's code, root first. */
static void push_worker_prefix(struct env *e)
{
    push(e, "std::sys::thread::start_thread", NULL, 0, false);
    push(e, "tokio::runtime::scheduler::multi_thread::worker::run", "worker.rs", 500, false);
    push(e, HARNESS, "harness.rs", 150, false);
}

/* ---- task_stacks_prepare ---------------------------------------------------------------------------------- */

static void test_prepare_names(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    struct stack_frame f;
    /* async frame with a source position: labelled with the await point */
    assert_int_equal(task_stacks_prepare(e.t, "app::handler::{{closure}}", "main.rs", 42, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "app::handler @ main.rs:42");
    assert_string_equal(name_of(&e, f.function), "app::handler::{{closure}}");
    assert_string_equal(name_of(&e, f.entry), "app::handler");
    assert_false(f.runtime);
    /* async fn */
    assert_int_equal(task_stacks_prepare(e.t, "app::db::query::{async_fn#0}", "db.rs", 7, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "app::db::query @ db.rs:7");
    assert_string_equal(name_of(&e, f.entry), "app::db::query");
    /* file unknown or line 0: no label */
    assert_int_equal(task_stacks_prepare(e.t, "app::handler::{{closure}}", NULL, 42, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "app::handler::{{closure}}");
    assert_string_equal(name_of(&e, f.entry), "app::handler");
    assert_int_equal(task_stacks_prepare(e.t, "app::handler::{{closure}}", "main.rs", 0, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "app::handler::{{closure}}");
    /* not async: never labelled */
    assert_int_equal(task_stacks_prepare(e.t, "app::compute", "lib.rs", 9, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "app::compute");
    assert_string_equal(name_of(&e, f.function), "app::compute");
    assert_string_equal(name_of(&e, f.entry), "app::compute");
    /* kernel: suffixed, never labelled, never runtime */
    assert_int_equal(task_stacks_prepare(e.t, "do_syscall_64", "entry.c", 3, true, &f), 0);
    assert_string_equal(name_of(&e, f.display), "do_syscall_64_[k]");
    assert_string_equal(name_of(&e, f.function), "do_syscall_64");
    assert_false(f.runtime);
    assert_int_equal(task_stacks_prepare(e.t, "x::{{closure}}", "k.c", 3, true, &f), 0);
    assert_string_equal(name_of(&e, f.display), "x::{{closure}}_[k]");
    /* ';' would split a folded line: sanitized in every name */
    assert_int_equal(task_stacks_prepare(e.t, "a;b::{{closure}}", "we;ird.rs", 5, false, &f), 0);
    assert_null(strchr(name_of(&e, f.display), ';'));
    assert_null(strchr(name_of(&e, f.function), ';'));
    assert_null(strchr(name_of(&e, f.entry), ';'));
    assert_string_equal(name_of(&e, f.display), "a:b @ we:ird.rs:5");
    assert_string_equal(name_of(&e, f.entry), "a:b");
    assert_int_equal(task_stacks_prepare(e.t, "semi;colon", NULL, 0, true, &f), 0);
    assert_string_equal(name_of(&e, f.display), "semi:colon_[k]");
    /* no name */
    assert_int_equal(task_stacks_prepare(e.t, NULL, NULL, 0, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "[unknown]");
    assert_int_equal(task_stacks_prepare(e.t, "", NULL, 0, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "[unknown]");
    env_free(&e);

    /* await points off: async frames keep their symbolized name */
    env_init(&e, GROUP_BY_ENTRY, false, NULL);
    assert_int_equal(task_stacks_prepare(e.t, "app::handler::{{closure}}", "main.rs", 42, false, &f), 0);
    assert_string_equal(name_of(&e, f.display), "app::handler::{{closure}}");
    assert_string_equal(name_of(&e, f.entry), "app::handler");
    env_free(&e);
}

static void test_prepare_runtime_frames(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, "^my_rt::run_task$");
    struct stack_frame f;
    static const char *const runtime[] = {
        "tokio::runtime::task::harness::Harness<T,S>::poll",
        "tokio::runtime::task::harness::Harness<app::Fut,alloc::sync::Arc<Handle>>::poll",
        "tokio::runtime::task::raw::poll",
        "tokio::runtime::task::raw::poll::<F,S>",
        "tokio::runtime::task::harness::poll_future",
        "tokio::runtime::task::core::Core<T,S>::poll",
        "my_rt::run_task",
    };
    static const char *const not_runtime[] = {
        "tokio::runtime::task::harness::Harness<T,S>::poll_join",
        "tokio::runtime::task::harness::Harness<T,S>::complete",
        "xtokio::runtime::task::raw::poll",
        "my_rt::run_task_inner",
        "app::handler::{{closure}}",
    };
    for (size_t i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++) {
        assert_int_equal(task_stacks_prepare(e.t, runtime[i], NULL, 0, false, &f), 0);
        if (!f.runtime)
            fail_msg("'%s' is a runtime frame", runtime[i]);
        assert_int_equal(task_stacks_prepare(e.t, runtime[i], NULL, 0, true, &f), 0);
        assert_false(f.runtime);   /* a kernel frame never is */
    }
    for (size_t i = 0; i < sizeof(not_runtime) / sizeof(not_runtime[0]); i++) {
        assert_int_equal(task_stacks_prepare(e.t, not_runtime[i], NULL, 0, false, &f), 0);
        if (f.runtime)
            fail_msg("'%s' is not a runtime frame", not_runtime[i]);
    }
    env_free(&e);
}

static void test_bad_boundary_regex(void **state)
{
    (void)state;
    struct profile *p = profile_new();
    assert_non_null(p);
    char err[256] = "";
    assert_null(task_stacks_new(p, GROUP_BY_ENTRY, true, "run_task(", err, sizeof(err)));
    assert_non_null(strstr(err, "--task-boundary"));
    assert_non_null(strstr(err, "run_task("));
    err[0] = '\0';
    assert_null(task_stacks_new(p, GROUP_BY_TASK, true, "[a-", err, sizeof(err)));
    assert_true(err[0] != '\0');
    struct task_stacks *t = task_stacks_new(p, GROUP_BY_TASK, true, "a|b", err, sizeof(err));
    assert_non_null(t);
    task_stacks_free(t);
    task_stacks_free(NULL);
    profile_free(p);
}

/* ---- task_stacks_add -------------------------------------------------------------------------------------- */

static void test_thread_stack_kept_whole(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, NULL, 0, false);
    push(&e, "app::idle", NULL, 0, false);
    push(&e, "futex_wait", NULL, 0, true);
    add(&e, "tokio-runtime-w", STACK_NO_TASK, 0, MARKER, 2);
    push(&e, "main", NULL, 0, false);
    push(&e, "app::setup::{{closure}}", "main.rs", 3, false);
    add(&e, "demo", STACK_NO_TASK, 99, NULL, 1);
    expect_folded(&e, "demo;main;app::setup @ main.rs:3 1\n"
                      "tokio-runtime-w;std::sys::thread::start_thread;"
                      "tokio::runtime::scheduler::multi_thread::worker::run;" HARNESS ";" MARKER
                      ";app::idle;futex_wait_[k] 2\n");
    env_free(&e);
}

static void test_task_cut_below_marker(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    push(&e, "app::db::query::{async_fn#0}", "db.rs", 7, false);
    push(&e, "app::compute", "lib.rs", 9, false);
    push(&e, "memcpy", NULL, 0, true);
    add(&e, "tokio-runtime-w", STACK_IN_TASK, 17, MARKER, 3);
    /* the same task polled from another worker with another prefix merges */
    push(&e, "other_thread_start", NULL, 0, false);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    push(&e, "app::db::query::{async_fn#0}", "db.rs", 7, false);
    push(&e, "app::compute", "lib.rs", 9, false);
    push(&e, "memcpy", NULL, 0, true);
    add(&e, "tokio-runtime-w", STACK_IN_TASK, 18, MARKER, 4);
    expect_folded(&e, "task: app::handler;app::handler @ main.rs:42;app::db::query @ db.rs:7;app::compute;"
                      "memcpy_[k] 7\n");
    env_free(&e);
}

/* The innermost marker frame counts (a nested block_on polls inside a task). */
static void test_task_cut_below_innermost_marker(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, NULL, 0, false);
    push(&e, "app::outer::{{closure}}", "a.rs", 1, false);
    push(&e, MARKER, NULL, 0, false);
    push(&e, "app::inner::{{closure}}", "b.rs", 2, false);
    push(&e, "app::leaf", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 5, MARKER, 1);
    expect_folded(&e, "task: app::inner;app::inner @ b.rs:2;app::leaf 1\n");
    env_free(&e);
}

/* The marker's frame is matched by function name, not by display name (it may be labelled). */
static void test_task_marker_matched_by_function(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push(&e, "start", NULL, 0, false);
    push(&e, "rt::poll_task::{{closure}}", "rt.rs", 88, false);   /* displayed "rt::poll_task @ rt.rs:88" */
    push(&e, "app::work::{{closure}}", "w.rs", 4, false);
    add(&e, "w", STACK_IN_TASK, 1, "rt::poll_task::{{closure}}", 1);
    expect_folded(&e, "task: app::work;app::work @ w.rs:4 1\n");
    env_free(&e);
}

/* Marker frame absent: cut below the innermost runtime frame. */
static void test_task_cut_below_runtime_frame(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push(&e, "start_thread", NULL, 0, false);
    push(&e, "tokio::runtime::task::raw::poll", NULL, 0, false);
    push(&e, "app::wrapper", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll", NULL, 0, false);
    push(&e, "app::spawned::{async_block#3}", "s.rs", 11, false);
    push(&e, "app::spin", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 8, "hook_that_returned", 2);
    push(&e, "start_thread", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll::{{closure}}", NULL, 0, false);
    push(&e, "app::spawned::{async_block#3}", "s.rs", 12, false);
    add(&e, "w", STACK_IN_TASK, 8, NULL, 1);
    /* The runtime's own work inside the poll (completing the task) never reaches Core::poll: the sample is
     * the task's, with no frame of its own. */
    push(&e, "start_thread", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "tokio::runtime::task::harness::Harness<T,S>::complete", NULL, 0, false);
    push(&e, "core::ops::function::FnOnce::call_once", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 8, NULL, 4);
    /* Nor is Core::poll dropping the future it found ready (v0 names, as the tokio_plain_v0 build shows) */
    push(&e, "start_thread", NULL, 0, false);
    push(&e, "<tokio::runtime::task::harness::Harness<app::spawned::{closure#0}, S>>::poll", NULL, 0, false);
    push(&e, "<tokio::runtime::task::core::Core<app::spawned::{closure#0}, S>>::poll", NULL, 0, false);
    push(&e, "<tokio::runtime::task::core::Core<app::spawned::{closure#0}, S>>::drop_future_or_output", NULL, 0,
         false);
    push(&e, "<tokio::runtime::task::core::Core<app::spawned::{closure#0}, S>>::set_stage", NULL, 0, false);
    push(&e, "core::ptr::drop_in_place::<app::spawned::{closure#0}>", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 8, NULL, 3);
    /* Nor Core::poll's closure setting the task's id before the future (its TaskIdGuard, down into the
     * thread-local's access: not a task entry named LocalKey::try_with) */
    push(&e, "start_thread", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll::{{closure}}", NULL, 0, false);
    push(&e, "tokio::runtime::task::core::TaskIdGuard::enter", NULL, 0, false);
    push(&e, "tokio::runtime::context::set_current_task_id", NULL, 0, false);
    push(&e, "std::thread::local::LocalKey<T>::try_with", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 8, NULL, 5);
    expect_folded(&e, "task: app::spawned 12\n"
                      "task: app::spawned;app::spawned @ s.rs:11;app::spin 2\n"
                      "task: app::spawned;app::spawned @ s.rs:12 1\n");
    env_free(&e);
}

/* A JoinHandle dropped after its task finished: tokio drops the task's output under the task's TaskIdGuard. */
#define DROP_JOIN_HANDLE "tokio::runtime::task::harness::Harness<T,S>::drop_join_handle_slow"
#define DROP_OUTPUT "tokio::runtime::task::core::Core<T,S>::drop_future_or_output"
#define SET_STAGE "tokio::runtime::task::core::Core<T,S>::set_stage"
#define DROP_OUTPUT_FRAMES DROP_JOIN_HANDLE ";" DROP_OUTPUT ";" SET_STAGE   /* as folded shows them */

static void push_drop_output(struct env *e)
{
    push(e, DROP_JOIN_HANDLE, NULL, 0, false);
    push(e, DROP_OUTPUT, NULL, 0, false);
    push(e, SET_STAGE, NULL, 0, false);
}

/* tokio sets a task's id around dropping its output when its JoinHandle is dropped (Core::set_stage), on whatever
 * thread drops the handle: there CONTEXT.current_task_id names the dropped task. With no boundary on the
 * stack (the main thread's block_on, a JoinSet's join_next) the sample is the thread's, its stack whole. A
 * truncated task stack (no boundary, no such frame) still keeps its frames under the task's root. */
static void test_join_handle_dropped_outside_poll(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push(&e, "start_thread", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll", NULL, 0, false);
    push(&e, "app::spawned::{async_block#3}", "s.rs", 11, false);
    add(&e, "w", STACK_IN_TASK, 8, NULL, 1);
    push(&e, "_start", NULL, 0, false);
    push(&e, "main", NULL, 0, false);
    push(&e, "tokio::task::join_set::JoinSet<T>::join_next::{{closure}}", NULL, 0, false);
    push_drop_output(&e);
    push(&e, "tokio::runtime::context::set_current_task_id", NULL, 0, false);
    add(&e, "main-thread", STACK_IN_TASK, 8, NULL, 2);
    push(&e, "app::spawned::{async_block#3}", "s.rs", 11, false);
    push(&e, "app::spin", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 8, NULL, 3);
    expect_folded(&e, "main-thread;_start;main;tokio::task::join_set::JoinSet<T>::join_next::{{closure}};"
                      DROP_OUTPUT_FRAMES ";tokio::runtime::context::set_current_task_id 2\n"
                      "task: app::spawned;app::spawned @ s.rs:11 1\n"
                      "task: app::spawned;app::spawned @ s.rs:11;app::spin 3\n");
    env_free(&e);
}

/* A task's poll drops a finished child's JoinHandle: tokio sets the child's id around dropping its output. With
 * ids read from that thread-local, the sample keeps the polled task's frames under its entry alone, no id, and
 * teaches nothing about the child's id (its wrapper samples still take the child's own entry). With ids from
 * poll probes the id is the polled task's. */
static void push_parent_drops_child(struct env *e)
{
    push(e, "start_thread", NULL, 0, false);
    push(e, HARNESS, NULL, 0, false);
    push(e, "tokio::runtime::task::core::Core<T,S>::poll", NULL, 0, false);
    push(e, "app::parent::{{closure}}", "p.rs", 5, false);
    push_drop_output(e);
}

static void test_child_handle_dropped_in_poll(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_TASK, true, NULL);
    task_stacks_ids_from_thread_local(e.t, true);
    push(&e, "start_thread", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll", NULL, 0, false);
    push(&e, "app::child::{{closure}}", "c.rs", 9, false);
    add(&e, "w", STACK_IN_TASK, 9, NULL, 1);
    push_parent_drops_child(&e);
    add(&e, "w", STACK_IN_TASK, 9, NULL, 2);
    push(&e, "start_thread", NULL, 0, false);
    push(&e, HARNESS, NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 9, NULL, 4);     /* the child's wrapper: its own entry */
    expect_folded(&e, "task 9: app::child 4\n"
                      "task 9: app::child;app::child @ c.rs:9 1\n"
                      "task: app::parent;app::parent @ p.rs:5;"
                      DROP_OUTPUT_FRAMES " 2\n");
    env_free(&e);

    env_init(&e, GROUP_BY_TASK, true, NULL);
    push_parent_drops_child(&e);
    add(&e, "w", STACK_IN_TASK, 7, NULL, 2);
    expect_folded(&e, "task 7: app::parent;app::parent @ p.rs:5;"
                      DROP_OUTPUT_FRAMES " 2\n");
    env_free(&e);
}

/* --task-boundary names a runtime frame of the user's own executor. */
static void test_task_boundary_regex(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, "^my_rt::(Executor::)?run_task$");
    push(&e, "main", NULL, 0, false);
    push(&e, "my_rt::Executor::run_task", NULL, 0, false);
    push(&e, "app::job::{{closure}}", "job.rs", 5, false);
    add(&e, "main", STACK_IN_TASK, 1, NULL, 1);
    expect_folded(&e, "task: app::job;app::job @ job.rs:5 1\n");
    env_free(&e);

    /* without it the stack is not cut, and the task's entry is not known: no entry is guessed from the
     * frames, the stack stays whole under "[task entry unknown]" */
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push(&e, "main", NULL, 0, false);
    push(&e, "my_rt::Executor::run_task", NULL, 0, false);
    push(&e, "app::job::{{closure}}", "job.rs", 5, false);
    add(&e, "main", STACK_IN_TASK, 1, NULL, 1);
    expect_folded(&e, "[task entry unknown];main;my_rt::Executor::run_task;app::job @ job.rs:5 1\n");
    env_free(&e);
}

/* A sample in the poll wrapper itself (the marker frame is the leaf, no frame of the task's own): rooted by the
 * task's entry learned from its other samples, held back until task_stacks_finish when not known yet, and
 * "[task entry unknown]" if it never becomes known. */
static void push_wrapper_only(struct env *e)
{
    push_worker_prefix(e);
    push(e, MARKER, NULL, 0, false);
}

static void push_handler(struct env *e)
{
    push_worker_prefix(e);
    push(e, MARKER, NULL, 0, false);
    push(e, "app::handler::{{closure}}", "main.rs", 42, false);
}

static void test_task_sample_in_wrapper(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);     /* entry not known yet: held back */
    push_handler(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 5);     /* entry known now */
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 4, MARKER, 2);     /* task 4 never shows a frame of its own */
    expect_folded(&e, "[task entry unknown] 2\n"
                      "task: app::handler 6\n"
                      "task: app::handler;app::handler @ main.rs:42 1\n");
    env_free(&e);

    env_init(&e, GROUP_BY_TASK, true, NULL);
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    push_handler(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    expect_folded(&e, "task 3: app::handler 1\n"
                      "task 3: app::handler;app::handler @ main.rs:42 1\n");
    env_free(&e);
}

/* What a trace asks of each sample and poll: the node the sample's stack ends at (none while the sample is held
 * back), and the root that names a task's polls: its entry's root by the grouping once a sample told it,
 * "[task entry unknown]" before. */
static void test_last_node_and_task_root(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 3)), "[task entry unknown]");
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    assert_int_equal(task_stacks_last_node(e.t), PROFILE_NO_NODE);     /* held back */
    push_handler(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    uint32_t node = task_stacks_last_node(e.t);
    size_t n;
    const struct profile_node *nodes = profile_nodes(e.p, &n);
    assert_true(node < n);
    assert_string_equal(name_of(&e, nodes[node].frame), "app::handler @ main.rs:42");
    assert_string_equal(name_of(&e, nodes[nodes[node].parent].frame), "task: app::handler");
    assert_int_equal(nodes[nodes[node].parent].parent, 0);
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 3)), "task: app::handler");
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 4)), "[task entry unknown]");
    push(&e, "main", NULL, 0, false);
    add(&e, "w", STACK_NO_TASK, 0, NULL, 1);
    nodes = profile_nodes(e.p, &n);
    assert_string_equal(name_of(&e, nodes[task_stacks_last_node(e.t)].frame), "main");
    env_free(&e);

    env_init(&e, GROUP_BY_TASK, true, NULL);
    push_handler(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 3)), "task 3: app::handler");
    env_free(&e);

    env_init(&e, GROUP_BY_NONE, true, NULL);
    push_handler(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 3)), "task: app::handler");
    env_free(&e);
}

/* With --group-by none a sample inside the poll wrapper has neither a root nor a frame: it must still appear in
 * the output (the folded counts add up to the samples taken), not vanish into the profile's root. */
static void test_wrapper_sample_not_lost_without_grouping(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_NONE, true, NULL);
    push_handler(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 2);
    push_wrapper_only(&e);
    add(&e, "w", STACK_IN_TASK, 4, MARKER, 4);
    assert_int_equal(task_stacks_finish(e.t), 0);
    assert_int_equal(profile_total(e.p), 7);
    uint64_t written = folded_sum(&e);
    if (written != 7)
        print_error("folded output holds %llu of 7 samples: wrapper-only samples were added as empty stacks\n",
                    (unsigned long long)written);
    env_free(&e);
    assert_int_equal(written, 7);
}

/* A marker that fires in a hook returning before the poll: the hook's caller, learned from a stack that caught
 * the hook, is the boundary for stacks where the hook's frame is gone. */
static void test_learned_marker_caller(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push(&e, "start", NULL, 0, false);
    push(&e, "rt::run", NULL, 0, false);
    push(&e, "rt::poll_task", NULL, 0, false);
    push(&e, "rt::before_poll_hook", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 1, "rt::before_poll_hook", 1);
    push(&e, "start", NULL, 0, false);
    push(&e, "rt::run", NULL, 0, false);
    push(&e, "rt::poll_task", NULL, 0, false);
    push(&e, "app::job::{{closure}}", "j.rs", 3, false);
    push(&e, "app::leaf", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 1, "rt::before_poll_hook", 2);
    expect_folded(&e, "task: app::job 1\n"
                      "task: app::job;app::job @ j.rs:3;app::leaf 2\n");
    env_free(&e);
}

static void test_group_by_task_and_none(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_TASK, true, NULL);
    for (uint64_t task = 42; task <= 43; task++) {
        push_worker_prefix(&e);
        push(&e, MARKER, NULL, 0, false);
        push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
        add(&e, "w", STACK_IN_TASK, task, MARKER, task - 40);
    }
    push_worker_prefix(&e);
    push(&e, MARKER, NULL, 0, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    add(&e, "w", STACK_IN_TASK, 42, MARKER, 5);
    expect_folded(&e, "task 42: app::handler;app::handler @ main.rs:42 7\n"
                      "task 43: app::handler;app::handler @ main.rs:42 3\n");
    env_free(&e);

    env_init(&e, GROUP_BY_NONE, true, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, NULL, 0, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    push(&e, "app::compute", NULL, 0, false);
    add(&e, "w", STACK_IN_TASK, 42, MARKER, 2);
    push(&e, "main", NULL, 0, false);
    add(&e, "main-thread", STACK_NO_TASK, 0, NULL, 1);
    expect_folded(&e, "app::handler @ main.rs:42;app::compute 2\n"
                      "main-thread;main 1\n");
    env_free(&e);
}

/* Group by entry: different tasks with the same entry share one root; different entries get their own. */
static void test_group_by_entry_roots(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, false, NULL);
    for (uint64_t task = 1; task <= 3; task++) {
        push_worker_prefix(&e);
        push(&e, MARKER, NULL, 0, false);
        push(&e, task == 3 ? "app::other::{async_fn#0}" : "app::handler::{{closure}}", "main.rs", 42, false);
        add(&e, "w", STACK_IN_TASK, task, MARKER, 1);
    }
    /* await points off: the frame keeps its symbolized name, the root its entry */
    expect_folded(&e, "task: app::handler;app::handler::{{closure}} 2\n"
                      "task: app::other;app::other::{async_fn#0} 1\n");
    env_free(&e);
}

static void test_unknown_task(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    /* cut below the innermost runtime frame, rooted "[unknown task]" whatever the grouping */
    push_worker_prefix(&e);
    push(&e, MARKER, NULL, 0, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    add(&e, "w", STACK_UNKNOWN_TASK, 0, MARKER, 2);
    /* no runtime frame: the whole stack */
    push(&e, "main", NULL, 0, false);
    push(&e, "app::busy", NULL, 0, false);
    add(&e, "w", STACK_UNKNOWN_TASK, 0, NULL, 1);
    expect_folded(&e, "[unknown task];app::handler @ main.rs:42 2\n"
                      "[unknown task];main;app::busy 1\n");
    env_free(&e);

    env_init(&e, GROUP_BY_NONE, true, NULL);
    push(&e, HARNESS, NULL, 0, false);
    push(&e, "app::x", NULL, 0, false);
    add(&e, "w", STACK_UNKNOWN_TASK, 0, NULL, 1);
    expect_folded(&e, "[unknown task];app::x 1\n");
    env_free(&e);
}

/* An in-task sample with no frames at all still counts under some root. */
static void test_task_without_frames(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    add(&e, "w", STACK_IN_TASK, 9, MARKER, 4);
    assert_int_equal(task_stacks_finish(e.t), 0);
    assert_int_equal(folded_sum(&e), 4);
    env_free(&e);
}

/* A task no sample named (its samples all inside its poll wrapper) named from outside (its root future, from the
   raw::poll that polled it): its held-back samples go under "task: ENTRY"; a task a sample named keeps its name. */
static void test_task_named_from_outside(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    add(&e, "w", STACK_IN_TASK, 7, MARKER, 2);          /* inside the wrapper: held back */
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    add(&e, "w", STACK_IN_TASK, 8, MARKER, 1);
    assert_false(task_stacks_entry_known(e.t, 7));
    assert_true(task_stacks_entry_known(e.t, 8));
    assert_int_equal(task_stacks_name_task(e.t, 7, "app::sleeper"), 0);
    assert_int_equal(task_stacks_name_task(e.t, 8, "app::other"), 0);   /* known: kept */
    assert_true(task_stacks_entry_known(e.t, 7));
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 7)), "task: app::sleeper");
    assert_string_equal(name_of(&e, task_stacks_task_root(e.t, 8)), "task: app::handler");
    expect_folded(&e, "task: app::handler;app::handler @ main.rs:42 1\ntask: app::sleeper 2\n");
    env_free(&e);
}

/* ---- task_stacks_boundary_counts and task_boundary_never_in_task ----------------------------------------------- */

static struct task_boundary_counts counts_of(struct env *e)
{
    struct task_boundary_counts c;
    task_stacks_boundary_counts(e->t, &c);
    return c;
}

/* A C executor's stack, root first, to the leaf given (NULL: the poll wrapper poll_task is the leaf). */
static void push_executor(struct env *e, const char *leaf)
{
    push(e, "start_thread", NULL, 0, false);
    push(e, "worker_main", NULL, 0, false);
    push(e, "poll_task", NULL, 0, false);
    if (leaf)
        push(e, leaf, NULL, 0, false);
}

/* Samples below --task-boundary's frame are counted, in no task apart; the rule holds from
 * TASK_BOUNDARY_MIN_SAMPLES samples, all in no task; one sample the marker put in a task breaks it. Samples in the
 * boundary frame itself, with no boundary on the stack, or in an unknown task are not counted. */
static void test_boundary_counts_never_in_task(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, "^poll_task$");
    struct task_boundary_counts c = counts_of(&e);
    assert_int_equal(c.samples, 0);
    assert_int_equal(c.function, PROFILE_NO_FRAME);
    assert_false(task_boundary_never_in_task(&c));
    push_executor(&e, "poll_parse");
    add(&e, "w", STACK_NO_TASK, 0, NULL, TASK_BOUNDARY_MIN_SAMPLES - 1);
    push_executor(&e, NULL);                               /* in the wrapper itself: a 0 there is right */
    add(&e, "w", STACK_NO_TASK, 0, NULL, 5);
    push(&e, "start_thread", NULL, 0, false);              /* no boundary on the stack */
    push(&e, "worker_main", NULL, 0, false);
    add(&e, "w", STACK_NO_TASK, 0, NULL, 7);
    push_executor(&e, "poll_render");                       /* no marker record: not read */
    add(&e, "w", STACK_UNKNOWN_TASK, 0, NULL, 3);
    c = counts_of(&e);
    assert_int_equal(c.samples, TASK_BOUNDARY_MIN_SAMPLES - 1);
    assert_int_equal(c.no_task, TASK_BOUNDARY_MIN_SAMPLES - 1);
    assert_string_equal(name_of(&e, c.function), "poll_task");
    assert_false(task_boundary_never_in_task(&c));         /* too few to say */
    push_executor(&e, "poll_compress");
    add(&e, "w", STACK_NO_TASK, 0, NULL, 1);
    c = counts_of(&e);
    assert_int_equal(c.samples, TASK_BOUNDARY_MIN_SAMPLES);
    assert_true(task_boundary_never_in_task(&c));
    push_executor(&e, "poll_parse");                        /* the marker was set once: not never */
    add(&e, "w", STACK_IN_TASK, 4, NULL, 1);
    c = counts_of(&e);
    assert_int_equal(c.samples, TASK_BOUNDARY_MIN_SAMPLES + 1);
    assert_int_equal(c.no_task, TASK_BOUNDARY_MIN_SAMPLES);
    assert_false(task_boundary_never_in_task(&c));
    env_free(&e);
}

/* The poll marker's frame is a boundary too (its function comes with samples in no task as well), and so is a
 * runtime's; with runtime boundaries alone (no markers) nothing is counted: no marker said "no task". */
static void test_boundary_counts_marker_and_runtime(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_executor(&e, "poll_parse");
    add(&e, "w", STACK_NO_TASK, 0, NULL, 3);               /* no boundary known: not counted */
    push_executor(&e, "poll_parse");
    add(&e, "w", STACK_NO_TASK, 0, "poll_task", 2);
    struct task_boundary_counts c = counts_of(&e);
    assert_int_equal(c.samples, 2);
    assert_int_equal(c.no_task, 2);
    assert_string_equal(name_of(&e, c.function), "poll_task");
    push_worker_prefix(&e);                                 /* tokio's Harness::poll, a task's code below */
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll", NULL, 0, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    add(&e, "w", STACK_NO_TASK, 0, NULL, 1);
    push_worker_prefix(&e);                                 /* tokio's own work in the poll: no task code */
    push(&e, "tokio::runtime::task::harness::Harness<T,S>::complete", NULL, 0, false);
    add(&e, "w", STACK_NO_TASK, 0, NULL, 1);
    c = counts_of(&e);
    assert_int_equal(c.samples, 3);
    assert_string_equal(name_of(&e, c.function), HARNESS);
    env_free(&e);

    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    task_stacks_use_runtime_boundaries(e.t, true);
    push_worker_prefix(&e);
    push(&e, "tokio::runtime::task::core::Core<T,S>::poll", NULL, 0, false);
    push(&e, "app::handler::{{closure}}", "main.rs", 42, false);
    add(&e, "w", STACK_NO_TASK, 0, NULL, TASK_BOUNDARY_MIN_SAMPLES);
    c = counts_of(&e);
    assert_int_equal(c.samples, 0);
    assert_false(task_boundary_never_in_task(&c));
    assert_int_equal(task_stacks_boundary_samples(e.t), TASK_BOUNDARY_MIN_SAMPLES);
    env_free(&e);
}

/* ---- an await inside a macro --------------------------------------------------------------------------------- */

static const struct stack_frame *push_in_macro(struct env *e, const char *name, const char *file, unsigned line,
                                               const char *macro)
{
    assert_true(e->n < 32);
    assert_int_equal(task_stacks_prepare_in_macro(e->t, name, file, line, false, macro, &e->frames[e->n]), 0);
    return &e->frames[e->n++];
}

/* The closure tokio's select! polls its branches in (positioned in select.rs) joins the frame of the function
   that invoked select!, named with the macro; alone, or not below its function, it says its line is the
   macro's own; a frame in a macro that is not async is left as it is. */
static void test_macro_closure_joins_its_function(void **state)
{
    (void)state;
    struct env e;
    env_init(&e, GROUP_BY_ENTRY, true, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::run::{{closure}}", "server.rs", 338, false);
    push(&e, "<tokio::future::poll_fn::PollFn<F> as core::future::future::Future>::poll", "poll_fn.rs", 58, false);
    push_in_macro(&e, "app::run::{{closure}}::{{closure}}", "select.rs", 746, "select!");
    push(&e, "app::read::{{closure}}", "server.rs", 90, false);
    push(&e, "app::parse", "server.rs", 12, false);
    add(&e, "w", STACK_IN_TASK, 1, MARKER, 3);
    /* the closure alone (the function's frame cut off): kept, its line said to be the macro's */
    push_in_macro(&e, "app::run::{{closure}}::{{closure}}", "select.rs", 746, "select!");
    push(&e, "app::parse", "server.rs", 12, false);
    add(&e, "w", STACK_UNKNOWN_TASK, 0, NULL, 1);
    /* another function's frame above: not its function, kept */
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::other::{{closure}}", "other.rs", 5, false);
    push_in_macro(&e, "app::run::{{closure}}::{{closure}}", "select.rs", 746, "select!");
    add(&e, "w", STACK_IN_TASK, 2, MARKER, 1);
    /* not an async frame: no await, nothing joined */
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::run::{{closure}}", "server.rs", 338, false);
    push_in_macro(&e, "tokio::macros::support::thread_rng_n", "select.rs", 700, "select!");
    add(&e, "w", STACK_IN_TASK, 3, MARKER, 1);
    expect_folded(&e,
        "[unknown task];app::run @ select.rs:746 (select!, its own line);app::parse 1\n"
        "task: app::other;app::other @ other.rs:5;app::run @ select.rs:746 (select!, its own line) 1\n"
        "task: app::run;app::run @ server.rs:338 (select!);<tokio::future::poll_fn::PollFn<F> as "
        "core::future::future::Future>::poll;app::read @ server.rs:90;app::parse 3\n"
        "task: app::run;app::run @ server.rs:338;tokio::macros::support::thread_rng_n 1\n");
    env_free(&e);
    /* without await points: the closure still joins its function, no macro named */
    env_init(&e, GROUP_BY_ENTRY, false, NULL);
    push_worker_prefix(&e);
    push(&e, MARKER, "harness.rs", 480, false);
    push(&e, "app::run::{{closure}}", "server.rs", 338, false);
    push_in_macro(&e, "app::run::{{closure}}::{{closure}}", "select.rs", 746, "select!");
    push(&e, "app::parse", "server.rs", 12, false);
    add(&e, "w", STACK_IN_TASK, 1, MARKER, 1);
    expect_folded(&e, "task: app::run;app::run::{{closure}};app::parse 1\n");
    env_free(&e);
}

static void test_await_point_names(void **state)
{
    (void)state;
    char buf[128];
    await_point_name(buf, sizeof(buf), "a::run", "s.rs", 3, NULL, false);
    assert_string_equal(buf, "a::run @ s.rs:3");
    await_point_name(buf, sizeof(buf), "a::run", "s.rs", 3, "select!", false);
    assert_string_equal(buf, "a::run @ s.rs:3 (select!)");
    await_point_name(buf, sizeof(buf), "a::run", "select.rs", 746, "select!", true);
    assert_string_equal(buf, "a::run @ select.rs:746 (select!, its own line)");
    await_point_name(buf, sizeof(buf), "a::run", NULL, 0, "join!", false);
    assert_string_equal(buf, "a::run (join!)");
    static const struct {
        const char *name;
        size_t at;
    } cases[] = {
        { "a::run @ s.rs:3 (select!)", 15 },
        { "a::run @ s.rs:3 (select!, its own line)", 15 },
        { "a::run @ s.rs:3 (macro)", 15 },
        { "a::run @ s.rs:3", 15 },
        { "f(x) (a b!)", 11 },           /* not a macro's name: kept */
        { "Foo<(u8, u16)>", 14 },
        { "(select!)", 9 },              /* nothing before it */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(await_point_macro_at(cases[i].name, strlen(cases[i].name)), cases[i].at);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_async_suffix),
        cmocka_unit_test(test_prepare_names),
        cmocka_unit_test(test_prepare_runtime_frames),
        cmocka_unit_test(test_bad_boundary_regex),
        cmocka_unit_test(test_thread_stack_kept_whole),
        cmocka_unit_test(test_task_cut_below_marker),
        cmocka_unit_test(test_task_cut_below_innermost_marker),
        cmocka_unit_test(test_task_marker_matched_by_function),
        cmocka_unit_test(test_task_cut_below_runtime_frame),
        cmocka_unit_test(test_task_boundary_regex),
        cmocka_unit_test(test_join_handle_dropped_outside_poll),
        cmocka_unit_test(test_child_handle_dropped_in_poll),
        cmocka_unit_test(test_task_sample_in_wrapper),
        cmocka_unit_test(test_last_node_and_task_root),
        cmocka_unit_test(test_wrapper_sample_not_lost_without_grouping),
        cmocka_unit_test(test_learned_marker_caller),
        cmocka_unit_test(test_group_by_task_and_none),
        cmocka_unit_test(test_group_by_entry_roots),
        cmocka_unit_test(test_unknown_task),
        cmocka_unit_test(test_task_without_frames),
        cmocka_unit_test(test_task_named_from_outside),
        cmocka_unit_test(test_boundary_counts_never_in_task),
        cmocka_unit_test(test_boundary_counts_marker_and_runtime),
        cmocka_unit_test(test_macro_closure_joins_its_function),
        cmocka_unit_test(test_await_point_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
