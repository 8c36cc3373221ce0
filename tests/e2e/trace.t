#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# trace.t: the Chrome trace export (-o FILE.trace.json), read back with Python's json module
# (tests/tools/trace_facts.py). One recording of the C executor fixture (with --log-tasks: "spawn ID KIND")
# written as folded stacks and a trace: polls as complete events, never two overlapping on a thread; the
# samples' stacks from the stackFrames table are exactly the folded file's lines; polls named by a task
# root name the kind the fixture logged for that id; the samples that fall inside a poll's span on its thread
# carry that poll's task at their root, and a kind's share of them is its share of the samples (5 points). Marker hits as perf samples (the
# route without BPF) give polls too; -f chrometrace; the tokio fixture with markers, and without (poll slices by
# default, stacks whole); an idle recording still
# gives a valid trace; `taskspy flamegraph` refuses a trace output; speedscope imports the trace through
# #profileURL= in headless Chromium, and a truncated trace fails that check. Never skips.
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BROWSER_DIR=$ROOT/tests/browser
FACTS=$ROOT/tests/tools/trace_facts.py
plan 71

if [ ! -f "$BROWSER_DIR/node_modules/speedscope/package.json" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error > "$WORK/npm.log" 2>&1) || diag < "$WORK/npm.log"
fi
# fact FACTS_FILE NAME: a value trace_facts.py printed
fact() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# speedscope_ok NAME FILE: the browser check of a trace passes (its TAP shown when it does not)
speedscope_ok() {
    node "$BROWSER_DIR/speedscope_check.js" --trace "$2" > "$WORK/$1.tap" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || grep -v '^ok' "$WORK/$1.tap" | head -20 | diag
    return $rc
}

# ---- the executor: polls, samples, shares ------------------------------------------------------------------
start_fixture executor 30 --log-tasks
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 499 -o "$WORK/x.folded" -o "$WORK/x.trace.json" 2> "$WORK/x.err"
check "record with -o x.folded -o x.trace.json: exit 0" test $? -eq 0
stop_fixture    # (its log of spawned tasks is complete once it has exited)
check "record: a 'wrote' line for the trace with its polls and samples" \
    grep -Eq "^taskspy: wrote $WORK/x.trace.json \([0-9]+ polls, [0-9]+ samples\)$" "$WORK/x.err"
python3 "$FACTS" "$WORK/x.trace.json" --folded "$WORK/x.folded" --spawn-log "$WORK/executor.stdout" > "$WORK/x.facts" 2> "$WORK/facts.err"
check "the trace is JSON with traceEvents and stackFrames" test "$(fact "$WORK/x.facts" json)" = 1
diag < "$WORK/facts.err"
polls=$(fact "$WORK/x.facts" polls)
check "polls as complete events ($polls)" test "${polls:-0}" -gt 1000
check "every poll has a name, ts, dur >= 0, pid, tid and args.task_id" test "$(fact "$WORK/x.facts" bad_polls)" = 0
check "per thread, polls never overlap" test "$(fact "$WORK/x.facts" overlaps)" = 0
check "the trace's poll count is the summary's" grep -q "^taskspy: wrote $WORK/x.trace.json ($polls polls," "$WORK/x.err"
total=$(samples "$WORK/x.folded")
check "samples as instant events: as many as in the folded file ($total)" test "$(fact "$WORK/x.facts" samples)" = "$total"
check "every sample's sf is in stackFrames" test "$(fact "$WORK/x.facts" sf_missing)" = 0
check "the samples' stacks (stackFrames) are the folded file's lines" test "$(fact "$WORK/x.facts" stacks_match)" = 1
check "thread_name metadata for both workers" grep -q '^threads .*exec-worker-0,exec-worker-1' "$WORK/x.facts"
check "a 'recording' event of about 2 s" awk '$1 == "recording_us" { exit !($2 > 1.8e6 && $2 < 4e6) }' "$WORK/x.facts"
named=$(fact "$WORK/x.facts" named_polls)
check "polls named by their task root ($named)" test "${named:-0}" -gt 0
check "... each naming the kind the fixture logged for its id" test "$(fact "$WORK/x.facts" misnamed)" = 0
# The polls' spans, timed by the markers, hold the samples of their task: samples are on-CPU time, so a
# worker preempted inside a poll (a loaded machine) adds wall time to the poll's span but no samples to it
in_poll=$(fact "$WORK/x.facts" in_poll_samples) mismatch=$(fact "$WORK/x.facts" in_poll_mismatch)
check "most samples fall inside a poll of a logged task on their thread (${in_poll:-0} of $total, >= 80%)" \
    test $(( ${in_poll:-0} * 5 )) -ge $(( total * 4 ))
check "... and name that poll's task at their root (${mismatch:-?} do not, < 10%)" \
    test $(( ${mismatch:-999999} * 10 )) -lt "${in_poll:-0}"
for kind in parse render compress; do
    p=$(fact "$WORK/x.facts" "in_poll_share_$kind") s=$(fact "$WORK/x.facts" "sample_share_$kind")
    check "task_$kind: share of the samples inside its polls $p% ~ of the task-rooted samples $s% (within 5 points)" \
        within "$p" "$s" 5
done
grep -E '^(share|sample_share|in_poll_share)_' "$WORK/x.facts" | diag   # (share_: wall time, for the reader)

# ---- marker hits as perf samples (no BPF), -f chrometrace ----------------------------------------------------
start_fixture executor 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --debug-marker-records=perf -f chrometrace -o "$WORK/perf.json" \
    -o "$WORK/perf.folded" 2> "$WORK/perf.err"
check "hits as perf samples, -f chrometrace -o perf.json: exit 0" test $? -eq 0
stop_fixture
check "... the summary says hits came as perf samples" grep -q '; hits as perf samples$' "$WORK/perf.err"
python3 "$FACTS" "$WORK/perf.json" --folded "$WORK/perf.folded" > "$WORK/perf.facts" 2> /dev/null
check "... a trace with polls ($(fact "$WORK/perf.facts" polls))" test "$(fact "$WORK/perf.facts" polls)" -gt 100
check "... never overlapping on a thread" test "$(fact "$WORK/perf.facts" overlaps)" = 0
check "... its samples' stacks are the folded lines" test "$(fact "$WORK/perf.facts" stacks_match)" = 1

# ---- tokio with markers -------------------------------------------------------------------------------------
start_fixture tokio_markers 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 -o "$WORK/tokio.folded" -o "$WORK/tokio.trace.json" 2> "$WORK/tokio.err"
check "record the tokio fixture to a trace: exit 0" test $? -eq 0
stop_fixture
python3 "$FACTS" "$WORK/tokio.trace.json" --folded "$WORK/tokio.folded" > "$WORK/tokio.facts" 2> /dev/null
check "tokio: polls ($(fact "$WORK/tokio.facts" polls))" test "$(fact "$WORK/tokio.facts" polls)" -gt 100
check "tokio: never overlapping on a thread" test "$(fact "$WORK/tokio.facts" overlaps)" = 0
check "tokio: the samples' stacks are the folded lines" test "$(fact "$WORK/tokio.facts" stacks_match)" = 1
check "tokio: polls named by async entries" \
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1]));
sys.exit(not any(e.get("cat") == "poll" and e["name"].startswith("task: tokio_fixture::") for e in d["traceEvents"]))' \
    "$WORK/tokio.trace.json"

# ---- tokio without markers: poll slices by default (return probes on raw::poll), stacks still whole ------
# Debian's tokio 1.24 and the crate registry's current tokio: the same workload, the same facts
PLAIN_ROOTS="task: tokio_fixture::parse_task,task: tokio_fixture::render_task,task: tokio_fixture::compress_task"
for build in tokio_plain tokio_current; do
    start_fixture "$build" 40
    "$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 499 -o "$WORK/$build.folded" -o "$WORK/$build.trace.json" \
        2> "$WORK/$build.err"
    check "record $build to a trace (no --poll-times): exit 0" test $? -eq 0
    stop_fixture
    python3 "$FACTS" "$WORK/$build.trace.json" --folded "$WORK/$build.folded" --roots "$PLAIN_ROOTS" \
        > "$WORK/$build.facts" 2> /dev/null
    check "$build: polls ($(fact "$WORK/$build.facts" polls))" test "$(fact "$WORK/$build.facts" polls)" -gt 100
    check "$build: never overlapping on a thread" test "$(fact "$WORK/$build.facts" overlaps)" = 0
    n_all=$(recorded_samples "$WORK/$build.err")
    n_cut=$(truncated_stacks "$WORK/$build.err")
    # The polls (tokio's own poll function, no markers) hold the samples of the task they are named by
    in_poll=$(fact "$WORK/$build.facts" root_in_poll_samples) mismatch=$(fact "$WORK/$build.facts" root_in_poll_mismatch)
    check "$build: samples inside polls named by the three roots (${in_poll:-0})" test "${in_poll:-0}" -gt 100
    check "... name that poll's root at their own root (${mismatch:-?} do not, < 10%)" \
        test $(( ${mismatch:-999999} * 10 )) -lt "${in_poll:-0}"
    for kind in parse render compress; do
        p=$(fact "$WORK/$build.facts" "root_in_poll_share_task:_tokio_fixture::${kind}_task")
        s=$(fact "$WORK/$build.facts" "root_sample_share_task:_tokio_fixture::${kind}_task")
        check "$build ${kind}_task: share of the samples inside its polls $p% ~ of the root's samples $s% (within 5 points)" \
            within "$p" "$s" 5
    done
    grep -E '^root_(poll|sample|in_poll)_share_' "$WORK/$build.facts" | diag
    check "$build: stacks not cut by poll-end probes (${n_cut:-0} of $n_all truncated, < 5%)" \
        test $(( ${n_cut:-0} * 20 )) -lt "${n_all:-0}"
done

# ---- tokio without markers, --wait-output: each task's waits on a track of its own ------------------------------
SLEEP_LINE=$(grep -n '// WAIT:sleep_waiter:1' "$ROOT/tests/fixtures/tokio/src/main.rs" | cut -d: -f1)
start_fixture tokio_plain 40 --wait-tasks
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 199 -o "$WORK/waits.folded" -o "$WORK/waits.trace.json" \
    --wait-mode events --wait-output "$WORK/waits-wait.folded" 2> "$WORK/waits.err"
check "record tokio_plain --wait-output to a trace: exit 0" test $? -eq 0
# a second, 1-s recording of the same for speedscope's import below: the 4-s trace's ~300,000 wait spans took
# speedscope 60-110 s to import under SwiftShader, a third of this file's time
"$TASKSPY" record -p "$FIXTURE_PID" -d 1 -F 199 -o "$WORK/waits-1s.trace.json" --wait-mode events \
    --wait-output "$WORK/waits-1s-wait.folded" 2> "$WORK/waits-1s.err"
check "record tokio_plain --wait-output for 1 s to a trace: exit 0" test $? -eq 0
stop_fixture
python3 "$FACTS" "$WORK/waits.trace.json" --folded "$WORK/waits.folded" > "$WORK/waits.facts" 2> "$WORK/waits.facts.err"
check "waits: [suspended] and [runnable] spans as complete events ($(fact "$WORK/waits.facts" waits))" \
    test "$(fact "$WORK/waits.facts" waits)" -gt 100
check "waits: the 'wrote' line counts them" \
    grep -Eq "^taskspy: wrote $WORK/waits.trace.json \([0-9]+ polls, [0-9]+ samples, $(fact "$WORK/waits.facts" waits) wait spans(; [0-9]+ polls a wait of their task overlaps left out \(records between their start and end lost\))?\)$" "$WORK/waits.err"
# a poll whose start and end records were two polls' (those between lost: marker records are lost when the
# reader falls behind, as an ASan build at 1 M records/s does) overlaps a wait of its task: left out, and rare
read -r written contradicted <<< "$(sed -n 's/^taskspy: wrote .*waits.trace.json (\([0-9]*\) polls.*; \([0-9]*\) polls a wait.*/\1 \2/p; s/^taskspy: wrote .*waits.trace.json (\([0-9]*\) polls.*/\1 0/p' "$WORK/waits.err" | head -1)"
check "waits: polls a wait of their task overlaps are left out, at most 1% (${contradicted:-?} of ${written:-?} written)" \
    test -n "$written" -a "${contradicted:-1}" -le "$(( ${written:-0} / 100 ))"
grep '^taskspy: .*lost' "$WORK/waits.err" | diag
check "waits: each named 'ROOT [state]' with ts, dur and task_id, none on a thread's track" test "$(fact "$WORK/waits.facts" bad_waits)" = 0
check "waits: one track per task ($(fact "$WORK/waits.facts" wait_tasks) tasks)" \
    test "$(fact "$WORK/waits.facts" wait_tracks)" = "$(fact "$WORK/waits.facts" wait_tasks)"
check "waits: a task's spans never overlap each other" test "$(fact "$WORK/waits.facts" wait_overlaps)" = 0
check "waits: nor any poll of their task" test "$(fact "$WORK/waits.facts" wait_poll_overlaps)" = 0 ||
    head -20 "$WORK/waits.facts.err" | diag
check "waits: polls still never overlap on a thread" test "$(fact "$WORK/waits.facts" overlaps)" = 0
trace_wait_us=$(fact "$WORK/waits.facts" wait_us)
folded_wait_us=$(samples "$WORK/waits-wait.folded")
check "waits: their total ${trace_wait_us:-?} us is the wait profile's $folded_wait_us us (less than 1 ms of rounding apart)" \
    awk -v t="${trace_wait_us:-x}" -v f="$folded_wait_us" 'BEGIN { d = t - f; exit !(t ~ /^[0-9.]+$/ && d >= 0 && d < 1000) }'
# (a wait before the task's first registration stack was taken has only the task root: stacks come at a
# budget shared with the busy tasks' registrations, so on a loaded machine the first may come late)
check "waits: the sleep task's spans carry its await point (main.rs:$SLEEP_LINE) in args, >= 80% of their time" \
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1]));
w = [e for e in d["traceEvents"] if e.get("cat") == "wait" and e["name"].startswith("task: tokio_fixture::sleep_waiter ")]
at = sum(e["dur"] for e in w if e["args"].get("await") == "tokio_fixture::sleep_waiter @ main.rs:" + sys.argv[2])
sys.exit(not (w and at >= 0.8 * sum(e["dur"] for e in w)))' \
    "$WORK/waits.trace.json" "$SLEEP_LINE"

# ---- idle: no samples, no polls, still a trace ----------------------------------------------------------------
"$TASKSPY" record -d 1 -o "$WORK/idle.trace.json" -o "$WORK/idle.folded" -- sleep 3 2> "$WORK/idle.err"
check "an idle target: exit 0" test $? -eq 0
python3 "$FACTS" "$WORK/idle.trace.json" --folded "$WORK/idle.folded" > "$WORK/idle.facts" 2> "$WORK/idle.facts.err"
check "idle: the trace is JSON" test "$(fact "$WORK/idle.facts" json)" = 1
diag < "$WORK/idle.facts.err"
check "idle: no polls" test "$(fact "$WORK/idle.facts" polls)" = 0
check "idle: samples = folded total ($(samples "$WORK/idle.folded"))" \
    test "$(fact "$WORK/idle.facts" samples)" = "$(samples "$WORK/idle.folded")"
check "idle: a 'recording' event" awk '$1 == "recording_us" { exit !($2 > 0) }' "$WORK/idle.facts"

# ---- the flamegraph command has no times: it refuses a trace ----------------------------------------------------
"$TASKSPY" flamegraph "$WORK/x.folded" -o "$WORK/conv.trace.json" 2> "$WORK/conv.err"
check "taskspy flamegraph -o x.trace.json: exit 2" test $? -eq 2
check "... one line saying why" sh -c "test \$(wc -l < '$WORK/conv.err') -eq 1 && grep -q 'Chrome trace needs the times' '$WORK/conv.err'"
check "... and no file" test ! -e "$WORK/conv.trace.json"

# ---- speedscope imports the traces ------------------------------------------------------------------------------
# (the executor's 2-s trace of the perf-sample route: ~35,000 polls; a 4-s one of the BPF route had ~85,000,
# which speedscope took 20-36 s to import under SwiftShader: the same writer, only longer)
check "speedscope imports the executor's trace (#profileURL=, $(fact "$WORK/perf.facts" polls) polls)" speedscope_ok perf "$WORK/perf.json"
check "speedscope imports the idle trace" speedscope_ok idle "$WORK/idle.trace.json"
check "speedscope imports a trace with wait spans (1 s: $(grep -o '[0-9]* wait spans' "$WORK/waits-1s.err"))" \
    speedscope_ok waits "$WORK/waits-1s.trace.json"
head -c 300 "$WORK/x.trace.json" > "$WORK/truncated.trace.json"
check "the check fails on a truncated trace" sh -c "! node '$BROWSER_DIR/speedscope_check.js' --trace '$WORK/truncated.trace.json' > /dev/null 2>&1"
finish
