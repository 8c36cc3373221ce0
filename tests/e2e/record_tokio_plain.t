#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# record_tokio_plain.t: async-aware profiles of a tokio program with no markers at all. By default
# (zero-probe attribution) taskspy reads tokio's CONTEXT.current_task_id at each sample and attaches no probe;
# the probe route (--markers probes) probes tokio's raw::poll<T,S> copies (task id from %rdi). Both cut
# task stacks at raw::poll (and the Harness::poll it may inline): task roots per async fn with shares that
# agree with the marker-instrumented build of the same program and with each other, no runtime frames in task
# stacks, the blocking pool's worker loop never a task, --group-by task (tokio's own ids, or header addresses
# with probes), Rust v0 mangling, frame pointers, a stripped binary with a separate debug file (both routes),
# boundary frames alone (no probes), --poll-times (probes for the poll events, tasks still from CONTEXT; return
# probes, whose trampoline no longer cuts the stacks: the unwinder puts the return address back).
source "$(dirname "$0")/lib/tap.sh"
plan 51

KINDS='^task: tokio_fixture::(parse|render|compress)_task'
RUNTIME_FRAMES='tokio::runtime::task::harness|tokio::runtime::scheduler|BlockingTask|Launch|start_thread|clone3'
check_plain() { # LABEL FOLDED
    local label=$1 f=$2
    for kind in parse render compress; do
        check "$label: a task root for ${kind}_task" grep -q "^task: tokio_fixture::${kind}_task" "$f"
    done
    check "$label: no runtime frame in task stacks" no_stack "$f" '^task' "$RUNTIME_FRAMES"
    check "$label: the blocking pool's worker loop is never a task" \
        sh -c "! grep -Eq '^task[^;]*(BlockingTask|Launch|blocking)' '$f'"
}

# The marker-instrumented build of the same program, and the plain one through its two routes: each held to the
# fixture's 1:2:3 burn (2 s at 999 Hz: ~3,000 samples each, shares within ~6 points by sampling noise)
start_fixture tokio_markers 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 -o "$WORK/markers.folded" 2> /dev/null
stop_fixture
shares_123 "marker build" "$WORK/markers.folded" "^task: tokio_fixture::parse_task" "^task: tokio_fixture::render_task" \
    "^task: tokio_fixture::compress_task" "$PROBE_BIAS"

start_fixture tokio_plain 60
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 --markers probes -o "$WORK/plain.folded" 2> "$WORK/plain.err"
check "plain: exit 0" test $? -eq 0
check_plain "plain" "$WORK/plain.folded"
shares_123 "plain, probe route" "$WORK/plain.folded" "^task: tokio_fixture::parse_task" "^task: tokio_fixture::render_task" \
    "^task: tokio_fixture::compress_task" "$PROBE_BIAS"
check "plain: raw::poll copies probed" grep -Eq "tokio:poll \(function entry\) x ([5-9]|[1-9][0-9])" "$WORK/plain.err"
check "plain: polls counted" grep -Eq "^taskspy: [0-9]{4,} polls" "$WORK/plain.err"

# The default: zero-probe attribution from tokio's CONTEXT.current_task_id
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 -o "$WORK/zero.folded" 2> "$WORK/zero.err" &
rec=$!
wait_for 10 attached "$rec"
probed=$(probed_entries "$FIXTURE_PID" "$FIXTURES/tokio_plain")
wait $rec
check "zero-probe: exit 0" test $? -eq 0
grep '^taskspy: \(tasks\|markers\):' "$WORK/zero.err" | diag
check "zero-probe: the summary names the route, tokio's CONTEXT" \
    grep -q "^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id" "$WORK/zero.err"
check "zero-probe: no probe in the target while recording (${probed:-?} raw::poll entries hold an int3)" test "$probed" = 0
check_plain "zero-probe" "$WORK/zero.folded"
shares_123 "zero-probe" "$WORK/zero.folded" "^task: tokio_fixture::parse_task" "^task: tokio_fixture::render_task" \
    "^task: tokio_fixture::compress_task"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task -o "$WORK/zero-ids.folded" 2> /dev/null
check "zero-probe group-by task: ids are tokio's own (small integers)" \
    sh -c "grep -Eq '^task [0-9]{1,7}: tokio_fixture::(parse|render|compress)_task' '$WORK/zero-ids.folded' && ! grep -q '^task 0x' '$WORK/zero-ids.folded'"

"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --markers probes --group-by task -o "$WORK/by-task.folded" 2> "$WORK/by-task.err" || diag < "$WORK/by-task.err"
# Through probes a task's id is its header's address: tokio reuses freed headers for new tasks, so one id
# may name successive tasks (of different kinds) over a recording; each root still names one id and entry.
ids=$(grep -oE '^task 0x[0-9a-f]+: tokio_fixture::[a-z_]+' "$WORK/by-task.folded" | sort -u)
check "group-by task: task roots by header address ($(echo "$ids" | wc -l))" test "$(echo "$ids" | wc -l)" -ge 6
grep '^task' "$WORK/by-task.folded" | grep -vE '^task 0x[0-9a-f]+: tokio_fixture::(parse|render|compress)_task' \
    > "$WORK/odd-roots"
cut -c1-200 "$WORK/odd-roots" | diag
odd=$(samples "$WORK/odd-roots"); all=$(samples "$WORK/by-task.folded" '^task')
check "group-by task: task roots are 'task 0xID: ENTRY' ($odd of $all samples otherwise, < 1%: README)" \
    test $((odd * 100)) -lt "$all"

"$TASKSPY" record -p "$FIXTURE_PID" -d 2 --markers none -o "$WORK/none.folded" 2> /dev/null
check "--markers none: an ordinary CPU profile, no task roots" \
    sh -c "! grep -q '^task' '$WORK/none.folded' && grep -q '^tokio-runtime-w;' '$WORK/none.folded'"

# No probes at all (a provider list that matches nothing): the boundary frames alone make task stacks
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 --markers no_such_provider -o "$WORK/frames.folded" 2> "$WORK/frames.err"
check_plain "boundary frames only" "$WORK/frames.folded"
check "boundary frames only: the summary says how tasks were found" grep -q "put in tasks by the runtime's task boundary frames" "$WORK/frames.err"

"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 --poll-times -o "$WORK/times.folded" 2> "$WORK/times.err"
check "--poll-times: return probes attached" grep -q "tokio:poll (return) x" "$WORK/times.err"
check "--poll-times: probes for the poll events only, tasks from CONTEXT" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT' '$WORK/times.err' && grep -q '(poll events; tasks from the TLS marker)' '$WORK/times.err'"
# A return probe's trampoline replaces the caller's return address: without its repair (the entry records the
# address and its place, the unwinder puts it back) ~95% of these stacks were truncated.
n_all=$(recorded_samples "$WORK/times.err")
n_cut=$(truncated_stacks "$WORK/times.err")
check "--poll-times: stacks not truncated (${n_cut:-0} of $n_all samples, < 5%)" \
    test $(( ${n_cut:-0} * 20 )) -lt "${n_all:-0}"
check "--poll-times: task stacks reach the task's burn loop" grep -q "^task: tokio_fixture::compress_task;.*tokio_fixture::burn" "$WORK/times.folded"
check "--poll-times: poll durations reported" grep -Eq "^taskspy:   task (0x[0-9a-f]+|[0-9]+): [0-9]+ polls, [0-9.]+ ms total" "$WORK/times.err"
check "--poll-times: task roots still right" grep -q "^task: tokio_fixture::compress_task" "$WORK/times.folded"
stop_fixture

# Rust v0 symbol mangling
start_fixture tokio_plain_v0 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 --markers probes -o "$WORK/v0.folded" 2> "$WORK/v0.err"
stop_fixture
check "v0 mangling: raw::poll copies probed" grep -q "tokio:poll (function entry) x" "$WORK/v0.err"
check_plain "v0 mangling" "$WORK/v0.folded"

# Frame pointers, fp call graphs
start_fixture tokio_plain_fp 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 --call-graph fp -o "$WORK/fp.folded" 2> /dev/null
stop_fixture
check_plain "frame pointers (fp)" "$WORK/fp.folded"

# Stripped, symbols in a separate debug file (.gnu_debuglink)
check "stripped build has no symbol table" sh -c "! readelf -S '$FIXTURES/tokio_plain_stripped' | grep -q '\.symtab'"
start_fixture tokio_plain_stripped 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 --markers probes -o "$WORK/stripped.folded" 2> "$WORK/stripped.err"
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 -o "$WORK/stripped-zero.folded" 2> "$WORK/stripped-zero.err"
stop_fixture
check "stripped: raw::poll copies found through the debug file" grep -q "tokio:poll (function entry) x" "$WORK/stripped.err"
check "stripped: task roots" grep -Eq "$KINDS" "$WORK/stripped.folded"
grep '^taskspy: \(tasks\|markers\|no TLS\)' "$WORK/stripped-zero.err" | diag
check "stripped, zero-probe: CONTEXT.current_task_id found through the debug file, no probe" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id' '$WORK/stripped-zero.err' && grep -q '^taskspy: markers: no poll probes' '$WORK/stripped-zero.err'"
check "stripped, zero-probe: task roots" grep -Eq "$KINDS" "$WORK/stripped-zero.folded"
finish
