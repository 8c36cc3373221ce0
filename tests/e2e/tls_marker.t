#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tls_marker.t: zero-probe task attribution through the TLS task marker (README, "TLS task marker"): the C
# executor keeps its task id in the thread-local taskspy_current_task, which a BPF program reads at every
# sample. --markers tls attaches no probe at all: task roots with the 1:2:3 shares of record_markers.t, no
# task code under a thread root, no uprobe in the target while recording, the summary naming the route;
# ids are the executor's own; auto (the default) takes the marker with no probe, cutting stacks at the place
# of the executable's one poll-start marker (not attached), by PID and at launch, and attaches probes only
# for poll events (a Chrome trace); at 999 Hz on
# short polls (--fast-polls) no task sample is filed under a thread root; a program without the marker
# falls back to poll probes and says so, and so does a recording without BPF. The marker in a shared library
# loaded at start (static TLS), at launch and by PID; dlopen()ed (dynamic TLS): said once, poll probes. A tokio program with no
# marker at all: --markers tls reads tokio's own CONTEXT.current_task_id (placed through DWARF), no probe,
# the same task shares as the probe route, tokio's own small ids, no task code under a thread root.
source "$(dirname "$0")/lib/tap.sh"
plan 43

TASK_CODE='task_(parse|render|compress)|parse_|render_|compress_|burn'
RUNTIME_FRAMES='worker_main|start_thread|clone|poll_task|rq_pop|rq_push'
check_shares() { # check_shares LABEL FOLDED
    shares_123 "$1" "$2" '^task: task_parse;' '^task: task_render;' '^task: task_compress;'
}

# --markers tls: no probe; the stack is cut at the poll wrapper named by --task-boundary (499 Hz: enough
# samples for the shares on a busy machine)
start_fixture executor 30 --log-tasks
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 499 --markers tls --task-boundary '^poll_task$' \
    -o "$WORK/tls.folded" 2> "$WORK/tls.err" &
rec=$!
wait_for 10 attached "$rec"
sleep 1
sites=$(probe_sites "$FIXTURE_PID" "$FIXTURES/executor")
wait $rec
check "--markers tls: exit 0" test $? -eq 0
cat "$WORK/tls.err" | diag
check "--markers tls: no uprobe in the target while recording ($sites)" sh -c "! echo '$sites' | grep -q cc"
check "--markers tls: summary names the TLS route" \
    grep -q "^taskspy: tasks: from the TLS marker taskspy_current_task (thread pointer -8) read at each sample" "$WORK/tls.err"
check "--markers tls: summary says no poll probes" grep -q "^taskspy: markers: no poll probes" "$WORK/tls.err"
missing=$(sed -n 's/.* samples, \([0-9]*\) without a record and \([0-9]*\) unreadable.*/\1 \2/p' "$WORK/tls.err")
check "--markers tls: every sample found its record ($missing)" test "$missing" = "0 0"
for kind in parse render compress; do
    check "--markers tls: a task root for task_$kind" grep -q "^task: task_$kind;" "$WORK/tls.folded"
done
check_shares "--markers tls" "$WORK/tls.folded"
check "--markers tls: no task code under a thread root" no_stack "$WORK/tls.folded" '^exec-worker' "$TASK_CODE"
check "--markers tls: no runtime frame in any task stack" no_stack "$WORK/tls.folded" '^task' "$RUNTIME_FRAMES"

# --group-by task: the ids are the executor's own (each one it spawned, with its kind)
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --markers tls --task-boundary '^poll_task$' --group-by task \
    -o "$WORK/ids.folded" 2> /dev/null
grep -o '^task [0-9]*: task_[a-z]*' "$WORK/ids.folded" | sort -u |
    sed 's/^task \([0-9]*\): task_\(.*\)/spawn \1 \2/' > "$WORK/ids"
check "group-by task: task ids ($(wc -l < "$WORK/ids"))" test "$(wc -l < "$WORK/ids")" -gt 10
check "group-by task: every id and kind is one the executor spawned" \
    sh -c "! grep -vxFf '$WORK/executor.stdout' '$WORK/ids'"

# auto: the marker gives the tasks and nothing needs poll events: no probe; stacks cut at poll_task, where the
# executable's poll-start marker is
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 499 -o "$WORK/auto.folded" 2> "$WORK/auto.err"
check "auto: the TLS route" grep -q "^taskspy: tasks: from the TLS marker taskspy_current_task" "$WORK/auto.err"
check "auto: no poll probes" grep -q "^taskspy: markers: no poll probes" "$WORK/auto.err"
check_shares "auto" "$WORK/auto.folded"
check "auto: no runtime frame in any task stack" no_stack "$WORK/auto.folded" '^task' "$RUNTIME_FRAMES"
check "auto: no warning of a marker that read 0 (tls_readme.t has the program that gets it)" \
    sh -c "! grep -q 'read 0 in all' '$WORK/auto.err'"
# a Chrome trace shows polls: the probes are attached for their events, the tasks still come from the marker
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 499 -o "$WORK/auto-trace.folded" -o "$WORK/auto.trace.json" 2> "$WORK/auto-trace.err"
stop_fixture
check "auto with a trace: tasks from the TLS marker, probes for poll events only" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker taskspy_current_task' '$WORK/auto-trace.err' &&
     grep -q 'taskspy_demo:task__poll__start x 1.*(poll events; tasks from the TLS marker)' '$WORK/auto-trace.err'"
check "auto with a trace: poll events in the trace" grep -q '"ph":"X"' "$WORK/auto.trace.json"

# auto at launch: the executable's mapping (and so the poll frame) comes as a perf record
"$TASKSPY" record -d 2 -F 499 -o "$WORK/launch.folded" -- "$FIXTURES/executor" 5 > /dev/null 2> "$WORK/launch.err"
check "auto at launch: no poll probes" grep -q "^taskspy: markers: no poll probes" "$WORK/launch.err"
check "auto at launch: no runtime frame in any task stack" no_stack "$WORK/launch.folded" '^task' "$RUNTIME_FRAMES"
check "auto at launch: task roots" grep -q "^task: task_compress;" "$WORK/launch.folded"

# 999 Hz on polls of a few hundred nanoseconds: every task sample is in a task
"$TASKSPY" record -d 3 -F 999 --markers tls --task-boundary '^poll_task$' -o "$WORK/fast.folded" \
    -- "$FIXTURES/executor" 10 --fast-polls > /dev/null 2> "$WORK/fast.err"
grep '^taskspy: tasks:' "$WORK/fast.err" | diag
check "999 Hz, fast polls: no task code under a thread root" no_stack "$WORK/fast.folded" '^executor|^exec-worker' "$TASK_CODE"

# The marker in a shared library linked at start (libtaskmarker.so; the executable stores to it initial-exec):
# its block is in static TLS, placed from the DT_NEEDED order at launch and from the dynamic linker's link_map
# by PID; ids are the executor's own, shares 1:2:3, no probe. dlopen()ed: a dynamic block, one line, probes.
"$TASKSPY" record -d 3 -F 499 --group-by task -o "$WORK/lib-ids.folded" -- "$FIXTURES/executor_tlslib" 10 --log-tasks \
    > "$WORK/tlslib.stdout" 2> "$WORK/lib-launch.err"
grep '^taskspy: \(tasks\|markers\|TLS\)' "$WORK/lib-launch.err" | diag
check "library, launch: the summary names the library's marker, no probe" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker taskspy_current_task in .*/libtaskmarker.so' '$WORK/lib-launch.err' &&
     grep -q '^taskspy: markers: no poll probes' '$WORK/lib-launch.err'"
grep -o '^task [0-9]*: task_[a-z]*' "$WORK/lib-ids.folded" | sort -u |
    sed 's/^task \([0-9]*\): task_\(.*\)/spawn \1 \2/' > "$WORK/lib-ids"
check "library, launch: task ids ($(wc -l < "$WORK/lib-ids"))" test "$(wc -l < "$WORK/lib-ids")" -gt 10
check "library, launch: every id and kind is one the executor spawned" \
    sh -c "! grep -vxFf '$WORK/tlslib.stdout' '$WORK/lib-ids'"
start_fixture executor_tlslib 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 499 -o "$WORK/lib.folded" 2> "$WORK/lib.err"
stop_fixture
check "library, by PID: the library's marker, no probe" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker taskspy_current_task in .*/libtaskmarker.so' '$WORK/lib.err' &&
     grep -q '^taskspy: markers: no poll probes' '$WORK/lib.err'"
check_shares "library, by PID" "$WORK/lib.folded"
check "library, by PID: no task code under a thread root" no_stack "$WORK/lib.folded" '^exec-worker' "$TASK_CODE"
start_fixture executor_tlsdl 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 -o "$WORK/libdl.folded" 2> "$WORK/libdl.err"
stop_fixture
check "library dlopen()ed: one line naming the dynamic block, then poll probes" sh -c \
    "test \$(grep -c 'libtaskmarker.so, loaded after start (dlopen): its TLS block is dynamic); tasks come from poll probes' '$WORK/libdl.err') -eq 1 &&
     grep -q '^taskspy: tasks: from poll probes' '$WORK/libdl.err'"
check "library dlopen()ed: task roots from the probes" grep -q '^task: task_compress;' "$WORK/libdl.folded"

# no marker in the program: --markers tls falls back to the poll probes, with a warning
"$TASKSPY" record -d 2 -F 199 --markers tls -o "$WORK/nomarker.folded" -- "$FIXTURES/shares_fp" 5 \
    > /dev/null 2> "$WORK/nomarker.err"
check "no TLS marker: warning, then poll probes" \
    grep -q "^taskspy: no TLS task marker (taskspy_current_task) in .*; tasks come from poll probes" "$WORK/nomarker.err"

# tokio: CONTEXT.current_task_id, no probe, its shares held to the fixture's 1:2:3 burn
start_fixture tokio_plain 60
# (2 s at 999 Hz: ~3,000 samples, sampling noise within ~4 points)
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 --markers tls -o "$WORK/tokio-tls.folded" 2> "$WORK/tokio-tls.err"
check "tokio --markers tls: exit 0" test $? -eq 0
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --markers tls --group-by task -o "$WORK/tokio-ids.folded" 2> /dev/null
stop_fixture
grep '^taskspy: \(tasks\|markers\):' "$WORK/tokio-tls.err" | diag
check "tokio --markers tls: summary names tokio's CONTEXT.current_task_id" \
    grep -q "^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id" "$WORK/tokio-tls.err"
check "tokio --markers tls: no probe attached" grep -q "^taskspy: markers: no poll probes" "$WORK/tokio-tls.err"
for kind in parse render compress; do
    check "tokio --markers tls: a task root for ${kind}_task" grep -q "^task: tokio_fixture::${kind}_task" "$WORK/tokio-tls.folded"
done
shares_123 "tokio --markers tls" "$WORK/tokio-tls.folded" "^task: tokio_fixture::parse_task" \
    "^task: tokio_fixture::render_task" "^task: tokio_fixture::compress_task"
check "tokio --markers tls: ids are tokio's own (small integers)" \
    sh -c "grep -Eq '^task [0-9]{1,7}: tokio_fixture::' '$WORK/tokio-ids.folded' && ! grep -q '^task 0x' '$WORK/tokio-ids.folded'"
# (a thread root may hold the task's future being built, or its cell being freed: not task code)
bad=$(misfiled "$WORK/tokio-tls.folded" "$TOKIO_TASK")
check "tokio --markers tls: no task code under a thread root ($bad)" test "$bad" -eq 0

# without BPF (capabilities dropped): the route says why, once, and the probes take over
if command -v capsh > /dev/null; then
    capsh --drop=cap_sys_admin,cap_bpf,cap_perfmon -- -c \
        "'$TASKSPY' record -d 1 -F 199 --markers tls -o '$WORK/nobpf.folded' -- '$FIXTURES/executor' 2" \
        > /dev/null 2> "$WORK/nobpf.err"
    check "no BPF: one warning naming why, then poll probes" sh -c \
        "test \$(grep -c '^taskspy: TLS task marker found but not readable at samples (.*not permitted); tasks come from poll probes' '$WORK/nobpf.err') -eq 1"
else
    ok 0 "no BPF: # SKIP capsh not installed"
fi
finish
