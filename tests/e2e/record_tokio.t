#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# record_tokio.t: task-aware profiles of the tokio fixture (2 workers, tasks wrapped in a future whose
# poll fires SDT poll markers; three task kinds burning 1:2:3): task roots per async fn, shares, tokio's
# scheduler frames cut, await points "NAME @ main.rs:LINE" on the lines of the fixture's .awaits (or of
# the call the leaf async frame is in), --group-by task, and both link layouts (rust-lld and GNU ld).
source "$(dirname "$0")/lib/tap.sh"
SRC="$(cd "$(dirname "$0")/../fixtures/tokio/src" && pwd)/main.rs"
plan 23

# A parent async frame (one whose next frame is another async fn of the fixture) is suspended in its child's
# .await, so it must show one of its fn's .await lines (tagged "// AWAIT:fn:n" in the source). A leaf async
# frame may be anywhere in its fn's body (a burn() call, the fn's entry or its closing brace).
awk '{ if (match($0, /\/\/ AWAIT:[a-z_]+:/)) { tag = substr($0, RSTART, RLENGTH); split(tag, p, ":");
      print p[2] ":" NR } }' "$SRC" | sort -u > "$WORK/await_lines"
awk '/^async fn [a-z_]+\(/ { name = $3; sub(/\(.*/, "", name); start = NR }
     /^}/ && name != "" { for (i = start; i <= NR; i++) print name ":" i; name = "" }' "$SRC" | sort -u > "$WORK/body_lines"

RUNTIME_FRAMES='tokio::runtime::task::harness|tokio::runtime::scheduler::multi_thread::worker::(run|Context)|Instrumented<|start_thread|clone3'
check_tokio() { # LABEL FOLDED
    local label=$1 f=$2
    for kind in parse render compress; do
        check "$label: a task root for ${kind}_task" grep -q "^task: tokio_fixture::${kind}_task;" "$f"
    done
    shares_123 "$label" "$f" '^task: tokio_fixture::parse_task;' '^task: tokio_fixture::render_task;' \
        '^task: tokio_fixture::compress_task;' "$PROBE_BIAS"
    # Rarely (about one sample in a thousand) a sample just after a poll still counts as the task's: see
    # README's known issues. Allow at most 1% of task samples, and show them.
    local bad total
    bad=$(samples "$f" "^task.*($RUNTIME_FRAMES)")
    total=$(samples "$f" '^task')
    no_stack "$f" '^task' "$RUNTIME_FRAMES" 2>&1 | cut -c1-200 | diag
    check "$label: scheduler/poll-wrapper frames in task stacks: $bad of $total samples (< 1%)" \
        test $((bad * 100)) -lt "$total"
    # await labels of the task kinds' async fns, split into parents and leaves
    grep '^task' "$f" | sed 's/ [0-9]*$//' | awk -F';' '{
        for (i = 1; i <= NF; i++) if (match($i, /^tokio_fixture::[a-z_]+ @ main\.rs:[0-9]+$/)) {
            split($i, a, " @ main.rs:"); name = a[1]; sub(/^tokio_fixture::/, "", name)
            parent = (i < NF && $(i + 1) ~ /^tokio_fixture::[a-z_]+ @ main\.rs:/)
            print (parent ? "parent " : "leaf ") name ":" a[2] } }' | sort -u > "$WORK/seen"
    grep '^parent ' "$WORK/seen" | cut -d' ' -f2 > "$WORK/parents"
    grep '^leaf ' "$WORK/seen" | cut -d' ' -f2 > "$WORK/leaves"
    check "$label: await points shown ($(wc -l < "$WORK/parents") parent, $(wc -l < "$WORK/leaves") leaf)" \
        test "$(wc -l < "$WORK/parents")" -ge 5
    check "$label: every parent async frame is at one of its fn's .await lines" \
        sh -c "! grep -vxFf '$WORK/await_lines' '$WORK/parents' | sed 's/^/# not an .await line: /' | grep ."
    check "$label: every leaf async frame is inside its fn" \
        sh -c "! grep -vxFf '$WORK/body_lines' '$WORK/leaves' | sed 's/^/# outside its fn: /' | grep ."
    local first_await second_await
    first_await=$(grep -n '// AWAIT:render_page:1$' "$SRC" | cut -d: -f1)
    second_await=$(grep -n '// AWAIT:render_page:2$' "$SRC" | cut -d: -f1)
    check "$label: nested awaits: render_page shown at both of its .awaits ($first_await, $second_await)" \
        sh -c "grep -qx 'render_page:$first_await' '$WORK/parents' && grep -qx 'render_page:$second_await' '$WORK/parents'"
}

start_fixture tokio_markers 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 199 -o "$WORK/tokio.folded" 2> "$WORK/tokio.err"
check "record the tokio fixture (rust-lld layout): exit 0" test $? -eq 0
check_tokio "lld" "$WORK/tokio.folded"
# one location per Instrumented<F> monomorphization (the fixture's --wait-tasks adds two): as many as notes
poll_starts=$(readelf -n "$FIXTURES/tokio_markers" | grep -cE 'Name: task__poll__start$')
check "summary: poll markers attached at every location ($poll_starts)" \
    grep -q "taskspy_tokio:task__poll__start x $poll_starts\b" "$WORK/tokio.err"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task -o "$WORK/by-task.folded" 2> "$WORK/by-task.err" || diag < "$WORK/by-task.err"
ids=$(grep -oE '^task [0-9]+: [^;]*' "$WORK/by-task.folded" | sort -u)
check "group-by task: many task roots ($(echo "$ids" | wc -l))" test "$(echo "$ids" | wc -l)" -gt 20
# each task id under one entry: samples under any other entry of an id are the rare late attribution (README,
# known limitations), at most 1% of the task samples
read -r minor total <<< "$(minor_entries "$WORK/by-task.folded")"
check "group-by task: each task id under one entry ($minor of $total samples elsewhere, < 1%)" test $((minor * 100)) -lt "$total"
stop_fixture
start_fixture tokio_markers 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --await-points off -o "$WORK/noawait.folded" 2> "$WORK/noawait.err" || diag < "$WORK/noawait.err"
check "--await-points off: task roots, no await labels" sh -c "grep -q '^task: tokio_fixture::' '$WORK/noawait.folded' && ! grep -q ' @ main.rs:' '$WORK/noawait.folded'"
stop_fixture

start_fixture tokio_markers_bfd 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 199 -o "$WORK/tokio-bfd.folded" 2> /dev/null
stop_fixture
check_tokio "GNU ld" "$WORK/tokio-bfd.folded"
finish
