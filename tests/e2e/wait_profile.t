#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# wait_profile.t: record --wait-output --wait-mode events (SPEC section 3a, the waker events; the snapshot mode
# is wait_snapshots.t's) on real programs. The tokio fixture without markers,
# with --wait-tasks: its sleep task waits at its sleep line, mostly [suspended], its waits adding up to about
# the recording's duration; its yield task waits at its yield line; with the runtime saturated some waits are
# [runnable]; no waker machinery and no runtime frame in any wait stack; the CPU profile written as before;
# the summary's longest waits. The SDT build of the tokio program: the same checks (tokio's waker functions
# joined to the marker tasks). The C executor with a task-wake probe and --waker-symbol, and without either
# (waits unsplit at task roots, the summary says why). An HTTP server (hyper) under wrk: a handler awaiting a
# 20 ms timer waits about 20 ms per request at that line. The wait SVG in headless Chromium
# (tests/browser/wait_svg_check.js). A program without tokio or markers: one line why, exit 0, the CPU
# profile written and no wait file. Bad --wait-output names: a usage error. One task, one name: on tokio
# without markers (tasks read from tokio's CONTEXT at each sample, polls and waits from the probes' headers)
# the CPU profile's task roots, the wait profile's, the summary's and the trace's tracks name a task alike, also
# for the samples of a poll that began before the probes were attached (--long-polls).
source "$(dirname "$0")/lib/tap.sh"
plan 68

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAIN_RS=$ROOT/tests/fixtures/tokio/src/main.rs
SLEEP_LINE=$(grep -n '// WAIT:sleep_waiter:1' "$MAIN_RS" | cut -d: -f1)
YIELD_LINE=$(grep -n '// WAIT:yield_waiter:1' "$MAIN_RS" | cut -d: -f1)
SLEEP_ROOT='^task: tokio_fixture::sleep_waiter;'
YIELD_ROOT='^task: tokio_fixture::yield_waiter;'
SLEEP_AT="tokio_fixture::sleep_waiter @ main.rs:$SLEEP_LINE;"
YIELD_AT="tokio_fixture::yield_waiter @ main.rs:$YIELD_LINE;"
WAKER_MACHINERY='tokio::runtime::task::waker|clone_waker|AtomicWaker>?::register|core::task::wake::Waker'
RUNTIME_FRAMES='tokio::runtime::task::harness|tokio::runtime::scheduler|start_thread|clone3'

# ---- tokio without markers, not saturated (--fast-polls): the sleep task sleeps -----------------------------
start_fixture tokio_plain 60 --fast-polls --wait-tasks
run plain record -p "$FIXTURE_PID" -d 4 -o "$WORK/plain-cpu.folded" -o "$WORK/plain.pb.gz" \
    --wait-mode events --wait-output "$WORK/plain-wait.folded"
diag < "$WORK/plain.err"
check "tokio plain: exit 0" test "$RC" -eq 0
check "tokio plain: the CPU profile is written as before (task roots)" grep -q '^task: tokio_fixture::' "$WORK/plain-cpu.folded"
check "tokio plain: the wait profile is written" test -s "$WORK/plain-wait.folded"
check "tokio plain: every wait line ends in [suspended] or [runnable]" \
    every_stack "$WORK/plain-wait.folded" '.' ';\[(suspended|runnable)\]$'
check "tokio plain: the sleep task waits at its sleep line (main.rs:$SLEEP_LINE, >= 95%)" \
    most_stacks "$WORK/plain-wait.folded" "$SLEEP_ROOT" "$SLEEP_AT" 50
sleep_susp=$(samples "$WORK/plain-wait.folded" "$SLEEP_ROOT.*\\[suspended\\]$")
sleep_all=$(samples "$WORK/plain-wait.folded" "$SLEEP_ROOT")
secs=$(recorded_secs "$WORK/plain.err")
check "tokio plain: the sleep task is mostly [suspended] ($sleep_susp of $sleep_all us)" \
    between "$(ratio "$sleep_susp" "$sleep_all")" 0.7 1
check "tokio plain: the sleep task's waits add up to about the recording ($sleep_all us in $secs s)" \
    between "$(ratio "$sleep_all" "$(awk -v s="$secs" 'BEGIN { print s * 1e6 }')")" 0.85 1.03
check "tokio plain: the yield task waits at its yield line (main.rs:$YIELD_LINE, >= 90%)" \
    most_stacks "$WORK/plain-wait.folded" "$YIELD_ROOT" "$YIELD_AT" 100
check "tokio plain: no waker machinery at the leaves" no_stack "$WORK/plain-wait.folded" '.' "$WAKER_MACHINERY"
check "tokio plain: no runtime frames in task wait stacks" no_stack "$WORK/plain-wait.folded" '^task' "$RUNTIME_FRAMES"
check "tokio plain: the summary names the tasks that waited longest" grep -q '^taskspy: waited longest:' "$WORK/plain.err"
check "tokio plain: the summary says how many waits it counted" grep -Eq '^taskspy: waits: [1-9][0-9]* waits of' "$WORK/plain.err"
check "tokio plain: the wait file is reported" grep -q "^taskspy: wrote $WORK/plain-wait.folded" "$WORK/plain.err"

# the pprof output of the same recording carries the waits as a third sample type (go tool pprof reads it)
export GOCACHE=$WORK/gocache GOTELEMETRY=off
cpu_samples=$(samples "$WORK/plain-cpu.folded")
period=$(go tool pprof -raw "$WORK/plain.pb.gz" 2> /dev/null | sed -n 's/^Period: //p')
check "pprof: samples total = the CPU folded total ($cpu_samples)" test "$(pprof_total "$WORK/plain.pb.gz" samples)" = "$cpu_samples"
check "pprof: CPU total = folded total x period (${period:-?} ns), unchanged by the waits" \
    test "$(pprof_total "$WORK/plain.pb.gz" cpu)" = "$((cpu_samples * ${period:-0}))"
check "pprof: CPU time stays the default sample type" grep -q '^Type: cpu$' <(go tool pprof -top "$WORK/plain.pb.gz" 2> /dev/null)
wait_ns=$(pprof_total "$WORK/plain.pb.gz" wait)
wait_us=$(samples "$WORK/plain-wait.folded")
# the folded lines round each stack's time down to whole microseconds, pprof keeps nanoseconds
check "pprof: wait total ${wait_ns:-?} ns = the wait folded total $wait_us us (less than 1 ms of rounding apart)" \
    awk -v ns="${wait_ns:-x}" -v us="$wait_us" 'BEGIN { d = ns / 1000 - us; exit !(ns ~ /^[0-9]+$/ && d >= 0 && d < 1000) }'
go tool pprof -sample_index=wait -unit=ns -lines -nodecount=100000 -nodefraction=0 -top -tagfocus=task=sleep_waiter \
    "$WORK/plain.pb.gz" > "$WORK/plain-wait.lines" 2> /dev/null
sleep_task_ns=$(sed -n 's/^Showing nodes accounting for \([0-9]*\)ns, .*/\1/p' "$WORK/plain-wait.lines")
sleep_line_ns=$(awk -v at="main.rs:$SLEEP_LINE" '$0 ~ at && $0 ~ /sleep_waiter/ { sub(/ns$/, "", $4); if ($4 > m) m = $4 } END { print m + 0 }' "$WORK/plain-wait.lines")
check "pprof -lines, wait: the sleep task waits at its sleep line (main.rs:$SLEEP_LINE: $sleep_line_ns of ${sleep_task_ns:-?} ns)" \
    between "$(ratio "$sleep_line_ns" "${sleep_task_ns:-0}")" 0.95 1
go tool pprof -sample_index=wait -traces -tagfocus=task=sleep_waiter "$WORK/plain.pb.gz" > "$WORK/plain-wait.traces" 2> /dev/null
check "pprof -traces, wait: the sleep task's [suspended] leaf on its real stack (Sleep's poll, no waker machinery)" \
    awk '/^-----/ { if (leaf == "[suspended]" && sleep && !machinery) found = 1; leaf = ""; sleep = 0; machinery = 0; next }
         /^ +[0-9.]+[a-z]* +[^ ]/ && leaf == "" { leaf = $2 }
         /Sleep as core::future::future::Future>::poll/ { sleep = 1 } /clone_waker|AtomicWaker/ { machinery = 1 }
         END { if (leaf == "[suspended]" && sleep && !machinery) found = 1; exit !found }' "$WORK/plain-wait.traces"

# one task's lines never exceed the recording (group by task: one root per task)
run by-task record -p "$FIXTURE_PID" -d 2 --group-by task -o "$WORK/by-task-cpu.folded" --wait-mode events --wait-output "$WORK/by-task.folded"
secs=$(recorded_secs "$WORK/by-task.err")
over=$(awk -v limit="$(awk -v s="$secs" 'BEGIN { print (s + 0.05) * 1e6 }')" '{ n = $NF; split($0, a, ";"); t[a[1]] += n }
    END { for (r in t) if (t[r] > limit) print r, t[r] }' "$WORK/by-task.folded")
echo "$over" | diag
check "group-by task: no task's waits exceed the recording's $secs s" test -z "$over"
check "group-by task: roots are 'task 0xID: ENTRY'" grep -q '^task 0x[0-9a-f]*: tokio_fixture::sleep_waiter;' "$WORK/by-task.folded"

# one task, one name in every output (--group-by task): tokio's CONTEXT gives the samples tokio's own ids, the
# probes give the polls and waits header addresses; the samples take the probes' id for the poll they are in
# task_roots FOLDED: "SAMPLES<TAB>task ID: ENTRY" per task root
task_roots() { awk '/^task / { n = $NF; split($0, a, ";"); sub(/ [0-9]+$/, "", a[1]); t[a[1]] += n }
    END { for (r in t) print t[r] "\t" r }' "$1"; }
# named_share WHOLE CPU_ROOTS WAIT_ROOTS: "M T": of T CPU task samples, M under a root the wait profile has
# (WHOLE 1: the same "task ID: ENTRY"; 0: the same ID)
named_share() { awk -F'\t' -v whole="$1" '{ k = $2; if (!whole) sub(/:.*/, "", k) }
    NR == FNR { w[k] = 1; next } { t += $1; if (k in w) m += $1 } END { print m + 0, t + 0 }' "$3" "$2"; }
run names record -p "$FIXTURE_PID" -d 2 -F 499 --group-by task -o "$WORK/names-cpu.folded" \
    --wait-mode events --wait-output "$WORK/names-wait.folded"
task_roots "$WORK/names-cpu.folded" > "$WORK/names-cpu.roots"
task_roots "$WORK/names-wait.folded" > "$WORK/names-wait.roots"
read -r by_id task_samples <<< "$(named_share 0 "$WORK/names-cpu.roots" "$WORK/names-wait.roots")"
read -r by_name _ <<< "$(named_share 1 "$WORK/names-cpu.roots" "$WORK/names-wait.roots")"
check "one name: exit 0, at least 50 CPU samples in tasks ($task_samples)" test "$RC" -eq 0 -a "$task_samples" -ge 50
check "one name: CPU task roots by the waits' ids ($by_id of $task_samples task samples, >= 90%)" \
    between "$(ratio "$by_id" "$task_samples")" 0.9 1
between "$(ratio "$by_id" "$task_samples")" 0.9 1 || { grep '^taskspy: ' "$WORK/names.err"; cat "$WORK/names-cpu.roots"; } | diag
# a header reused by a task of another kind whose waits had no stack yet is filed under the header's last entry
check "one name: CPU task roots are wait roots, 'task ID: ENTRY' alike ($by_name of $task_samples, >= 80%)" \
    between "$(ratio "$by_name" "$task_samples")" 0.8 1
yield_cpu=$(cut -f2 "$WORK/names-cpu.roots" | grep ': tokio_fixture::yield_waiter$')
yield_wait=$(cut -f2 "$WORK/names-wait.roots" | grep ': tokio_fixture::yield_waiter$')
check "one name: the yield task has one root in both profiles ('$yield_cpu', '$yield_wait')" \
    test -n "$yield_cpu" -a "$yield_cpu" = "$yield_wait"
busiest=$(sed -n 's/^taskspy:   task \([^:]*\): [0-9]* polls.*/\1/p' "$WORK/names.err")
cpu_ids=$(cut -f2 "$WORK/names-cpu.roots" | sed 's/^task \([^:]*\):.*/\1/')
in_cpu=$(for id in $busiest; do echo "$cpu_ids" | grep -qx "$id" && echo "$id"; done | wc -l)
check "one name: the summary's busiest tasks by their CPU roots' ids ($in_cpu of $(echo $busiest | wc -w), >= 3)" \
    test "$in_cpu" -ge 3

# Samples taken in a waker probe's trap (about 1 M waker events per second here) unwind like any other: the
# kernel reports the user state before or after the probed push, with the ip at or one past the probe. Before
# both states were read, 24-38 frames per 3 s at 999 Hz landed at heap or stack addresses; now 0 in 8 runs.
run traps record -p "$FIXTURE_PID" -d 3 -F 999 -o "$WORK/traps.folded" --wait-mode events --wait-output "$WORK/traps-wait.folded"
unmapped=$(sed -n 's/^taskspy: \([0-9]*\) user frames at addresses in no mapping.*/\1/p' "$WORK/traps.err")
check "trap samples: at most 2 user frames in no mapping at 999 Hz (${unmapped:-0})" \
    test "$RC" -eq 0 -a "${unmapped:-0}" -le 2
grep '^taskspy: .* no mapping' "$WORK/traps.err" | diag

# the wait SVG, checked in the browser
run svg record -p "$FIXTURE_PID" -d 2 -o "$WORK/svg-cpu.svg" --wait-mode events --wait-output "$WORK/wait.svg"
check "wait svg: exit 0, written" test "$RC" -eq 0 -a -s "$WORK/wait.svg"
stop_fixture
if [ ! -f "$ROOT/tests/browser/node_modules/playwright-core/package.json" ]; then
    (cd "$ROOT/tests/browser" && npm ci --no-audit --no-fund --loglevel=error > "$WORK/npm.log" 2>&1) || diag < "$WORK/npm.log"
fi
mkdir -p "$ROOT/build/test-output"
node "$ROOT/tests/browser/wait_svg_check.js" "$WORK/wait.svg" "$ROOT/build/test-output/wait_svg.png" > "$WORK/browser.tap" 2>&1
browser_rc=$?
diag < "$WORK/browser.tap"
check "wait svg in Chromium: title, ms tooltips, [runnable]/[suspended] colours, zoom, search ($(grep -c '^ok' "$WORK/browser.tap") ok)" \
    test "$browser_rc" -eq 0 -a "$(grep -c '^ok' "$WORK/browser.tap")" -ge 9

# one name for samples that came before the probes named their task: a recording that begins while each worker is
# inside one of long_poller's 150-ms polls (--long-polls) has samples that tokio's CONTEXT places in the task and
# no probe yet (its poll began before they were attached); once a later poll pairs tokio's id with the task's
# header, those samples take the header as every other sample, poll and wait of the task does. A recording whose
# attach outlasted the polls under way (a loaded machine: CI's ASan pass once) has no such sample, which the summary
# then does not mention: it is recorded again, 3 times at most.
for fixture in tokio_plain tokio_current; do
    start_fixture "$fixture" 60 --long-polls --wait-tasks
    for late_try in 1 2 3; do
        run "late-$fixture" record -p "$FIXTURE_PID" -d 2 -F 499 --group-by task -o "$WORK/late-cpu.folded" \
            --wait-mode events --wait-output "$WORK/late-wait.folded"
        [ "$RC" -eq 0 ] && ! grep -q 'no poll probe had placed yet' "$WORK/late-$fixture.err" || break
        diag <<< "recording $late_try began between polls: no sample before a task's first probed poll"
    done
    stop_fixture
    renamed=$(sed -n "s/.*no poll probe had placed yet, \([0-9]*\) took the probes' id learnt after them.*/\1/p" \
        "$WORK/late-$fixture.err")
    task_roots "$WORK/late-cpu.folded" | grep ': tokio_fixture::long_poller$' > "$WORK/late-cpu.roots"
    task_roots "$WORK/late-wait.folded" | grep ': tokio_fixture::long_poller$' > "$WORK/late-wait.roots"
    check "one name, late ($fixture): exit 0; samples before their task's first probed poll took its probes' id (${renamed:-none}; recording $late_try)" \
        test "$RC" -eq 0 -a "${renamed:-0}" -ge 1
    { grep '^taskspy: tasks: ' "$WORK/late-$fixture.err"; cat "$WORK/late-cpu.roots"; } | diag
    check "one name, late ($fixture): long_poller's CPU roots are 2 tasks, each by the header id its waits carry ($(cut -f2 "$WORK/late-cpu.roots" | tr '\n' ' '))" \
        test "$(wc -l < "$WORK/late-cpu.roots")" -eq 2 -a "$(named_share 1 "$WORK/late-cpu.roots" "$WORK/late-wait.roots" | cut -d' ' -f1)" = \
            "$(named_share 1 "$WORK/late-cpu.roots" "$WORK/late-wait.roots" | cut -d' ' -f2)"
done

# ---- tokio without markers, saturated (CPU-bound polls): woken tasks wait for a worker -------------------
start_fixture tokio_plain 60 --wait-tasks
run busy record -p "$FIXTURE_PID" -d 4 -o "$WORK/busy-cpu.folded" --wait-mode events --wait-output "$WORK/busy-wait.folded"
stop_fixture
check "saturated: exit 0" test "$RC" -eq 0
runnable=$(samples "$WORK/busy-wait.folded" '\[runnable\]$')
all=$(samples "$WORK/busy-wait.folded")
check "saturated: some waits are [runnable] ($runnable of $all us)" between "$(ratio "$runnable" "$all")" 0.01 1
sleep_run=$(samples "$WORK/busy-wait.folded" "$SLEEP_ROOT.*\\[runnable\\]$")
check "saturated: the sleep task waits for a worker after its timer fires ($sleep_run us [runnable])" test "$sleep_run" -gt 0
check "saturated: the summary gives the longest [runnable] delay" \
    grep -Eq '^taskspy: longest \[runnable\] delay: [0-9.]+ ms, task 0x[0-9a-f]+ \(task: ' "$WORK/busy.err"
# the Chrome trace of a recording with waits: its CPU samples' task roots are its poll events' and wait tracks' ids
start_fixture tokio_plain 60 --wait-tasks
run trace record -p "$FIXTURE_PID" -d 1 -F 499 --group-by task -o "$WORK/trace-cpu.folded" -o "$WORK/w.trace.json" \
    --wait-mode events --wait-output "$WORK/trace-wait.folded"
stop_fixture
python3 - "$WORK/w.trace.json" > "$WORK/trace.names" 2>&1 <<'PY'
import json, re, sys
trace = json.load(open(sys.argv[1]))
frames = trace["stackFrames"]
def root(sf):
    sf = str(sf)
    while "parent" in frames[sf]:
        sf = frames[sf]["parent"]
    return frames[sf]["name"]
polls, waits, samples = set(), set(), []
for e in trace["traceEvents"]:
    if e.get("cat") == "poll" and "task_id" in e.get("args", {}):
        polls.add(e["args"]["task_id"])
    elif e.get("ph") == "M" and e["name"] == "thread_name":
        m = re.match(r"waits of task (\S+?):", e["args"]["name"])
        if m:
            waits.add(m.group(1))
    elif e.get("cat") == "sample" and "sf" in e:
        m = re.match(r"task (\S+?):", root(e["sf"]))
        if m:
            samples.append(m.group(1))
print(len(samples), sum(s in polls for s in samples), sum(s in waits for s in samples))
PY
diag < "$WORK/trace.names"
read -r tr_samples tr_polls tr_waits < "$WORK/trace.names"
check "trace: exit 0, task samples named by their polls' ids (${tr_polls:-?} of ${tr_samples:-?}, >= 90%, at least 20)" \
    awk -v rc="$RC" -v n="${tr_samples:-x}" -v m="${tr_polls:-0}" 'BEGIN { exit !(rc == 0 && n ~ /^[0-9]+$/ && n >= 20 && m >= 0.9 * n) }'
check "trace: task samples named by their wait tracks' ids (${tr_waits:-?} of ${tr_samples:-?}, >= 90%)" \
    awk -v n="${tr_samples:-x}" -v m="${tr_waits:-0}" 'BEGIN { exit !(n ~ /^[0-9]+$/ && n >= 20 && m >= 0.9 * n) }'

# ---- the SDT build (tokio_markers): tasks named by the poll markers, waits from task-poll-end to the next
# task-poll-start; tokio's waker functions are probed too, their task headers joined to the marker tasks (a
# waker clone inside a task's poll is that task's): the checks of the build without markers hold
start_fixture tokio_markers 60 --fast-polls --wait-tasks
run sdt record -p "$FIXTURE_PID" -d 4 -o "$WORK/sdt-cpu.folded" --wait-mode events --wait-output "$WORK/sdt-wait.folded"
stop_fixture
diag < "$WORK/sdt.err"
check "sdt: exit 0, a wait profile written" test "$RC" -eq 0 -a -s "$WORK/sdt-wait.folded"
check "sdt: every wait line ends in [suspended] or [runnable]" \
    every_stack "$WORK/sdt-wait.folded" '.' ';\[(suspended|runnable)\]$'
check "sdt: tokio's waker functions probed (clone, 2 wakes), no 'no waker functions' note" \
    sh -c "grep -Eq '^taskspy: waits: .*, 3 waker locations probed' '$WORK/sdt.err' && ! grep -q 'no waker functions' '$WORK/sdt.err'"
check "sdt: the sleep task waits at its sleep line (main.rs:$SLEEP_LINE, >= 90%)" \
    most_stacks "$WORK/sdt-wait.folded" "$SLEEP_ROOT" "$SLEEP_AT" 100
sleep_susp=$(samples "$WORK/sdt-wait.folded" "$SLEEP_ROOT.*\\[suspended\\]$")
sleep_all=$(samples "$WORK/sdt-wait.folded" "$SLEEP_ROOT")
secs=$(recorded_secs "$WORK/sdt.err")
check "sdt: the sleep task is mostly [suspended] ($sleep_susp of $sleep_all us)" \
    between "$(ratio "$sleep_susp" "$sleep_all")" 0.7 1
check "sdt: the sleep task's waits add up to about the recording ($sleep_all us in $secs s)" \
    between "$(ratio "$sleep_all" "$(awk -v s="$secs" 'BEGIN { print s * 1e6 }')")" 0.85 1.03
# tasks are the markers' (decimal ids), not tokio's headers (0x addresses, as without markers)
check "sdt: the summary names tasks by their marker ids" \
    sh -c "grep -Eq '^taskspy:   task [0-9]+ \\(' '$WORK/sdt.err' && ! grep -q '^taskspy:   task 0x' '$WORK/sdt.err'"
check "sdt: the yield task waits at its yield line (main.rs:$YIELD_LINE, >= 90%)" \
    most_stacks "$WORK/sdt-wait.folded" "$YIELD_ROOT" "$YIELD_AT" 100
check "sdt: no waker machinery at the leaves" no_stack "$WORK/sdt-wait.folded" '.' "$WAKER_MACHINERY"
check "sdt: no runtime frames in task wait stacks" no_stack "$WORK/sdt-wait.folded" '^task' "$RUNTIME_FRAMES"
check "sdt: the sleep and yield tasks' stacks are cut below the poll wrapper (the marker's frame)" \
    no_stack "$WORK/sdt-wait.folded" "$SLEEP_ROOT|$YIELD_ROOT" 'Instrumented'

start_fixture tokio_markers 60 --wait-tasks
run sdt-busy record -p "$FIXTURE_PID" -d 4 -o "$WORK/sdt-busy-cpu.folded" --wait-mode events --wait-output "$WORK/sdt-busy-wait.folded"
stop_fixture
diag < "$WORK/sdt-busy.err"
runnable=$(samples "$WORK/sdt-busy-wait.folded" '\[runnable\]$')
all=$(samples "$WORK/sdt-busy-wait.folded")
check "sdt saturated: some waits are [runnable] ($runnable of $all us)" between "$(ratio "$runnable" "$all")" 0.01 1
sleep_run=$(samples "$WORK/sdt-busy-wait.folded" "$SLEEP_ROOT.*\\[runnable\\]$")
check "sdt saturated: the sleep task waits for a worker after its timer fires ($sleep_run us [runnable])" \
    test "$sleep_run" -gt 0

# ---- the C executor: poll markers, task-wake where a task is queued again (right after its poll), and
# executor_waker_registered(id) named by --waker-symbol: waits split by the wakes (all but the first instants
# [runnable]: the run queue), stacks from the registrations, cut below the poll wrapper and above the symbol
run exec record -d 2 --group-by task -o "$WORK/exec-cpu.folded" --wait-mode events --wait-output "$WORK/exec-wait.folded" \
    --waker-symbol executor_waker_registered -- "$FIXTURES/executor" 3
diag < "$WORK/exec.err"
check "executor: exit 0, a wait profile written" test "$RC" -eq 0 -a -s "$WORK/exec-wait.folded"
exec_run=$(samples "$WORK/exec-wait.folded" '\[runnable\]$')
exec_all=$(samples "$WORK/exec-wait.folded")
check "executor: woken right after each poll, its tasks wait in the run queue: [runnable] ($exec_run of $exec_all us)" \
    between "$(ratio "$exec_run" "$exec_all")" 0.9 1
check "executor: waits at the registration's caller (task ID: task_KIND;task_KIND;advance)" \
    grep -Eq '^task [0-9]+: task_(parse|render|compress);task_(parse|render|compress);advance;\[runnable\] ' "$WORK/exec-wait.folded"
check "executor: no poll wrapper, worker loop or waker symbol in the wait stacks" \
    no_stack "$WORK/exec-wait.folded" '.' 'poll_task|worker_main|executor_waker_registered'
secs=$(recorded_secs "$WORK/exec.err")
over=$(awk -v limit="$(awk -v s="$secs" 'BEGIN { print (s + 0.05) * 1e6 }')" '{ n = $NF; split($0, a, ";"); t[a[1]] += n }
    END { for (r in t) if (r != "[task entry unknown]" && t[r] > limit) print r, t[r] }' "$WORK/exec-wait.folded")
echo "$over" | diag
check "executor: no task's waits exceed the recording's $secs s" test -z "$over"

# ---- a marker runtime without tokio, task-wake or --waker-symbol (the C executor built without task__wake):
# nothing splits its waits: they sit at task roots, all [suspended], and the summary says why
run nowake record -d 2 -o "$WORK/nowake-cpu.folded" --wait-mode events --wait-output "$WORK/nowake-wait.folded" -- \
    "$FIXTURES/executor_nowake" 3
diag < "$WORK/nowake.err"
check "no waker functions: exit 0, a wait profile written" test "$RC" -eq 0 -a -s "$WORK/nowake-wait.folded"
check "no waker functions: waits at task roots, [suspended] (no wake, no stack)" \
    every_stack "$WORK/nowake-wait.folded" '.' '^(task: [^;]*|\[task entry unknown\]);\[suspended\]$'
check "no waker functions: the summary says why the waits are not split" \
    grep -q '^taskspy: waits: no waker functions' "$WORK/nowake.err"

# ---- an HTTP server (hyper, no markers) under wrk: a handler awaiting a T ms timer waits T ms per request there
HYPER_RS=$ROOT/tests/fixtures/hyper/src/main.rs
HYPER_SLEEP_LINE=$(grep -n '// WAIT:sleep$' "$HYPER_RS" | cut -d: -f1)
T_MS=20
"$TASKSPY" record -o "$WORK/http-cpu.folded" --wait-mode events --wait-output "$WORK/http-wait.folded" -- \
    "$FIXTURES/hyper_server" --seconds 5 --sleep-ms "$T_MS" > "$WORK/http.stdout" 2> "$WORK/http.err" &
TASKSPY_PID=$!
BACKGROUND_PIDS+=("$TASKSPY_PID")
wait_for 20 grep -q '^hyper_fixture pid [0-9]* port [0-9]*' "$WORK/http.stdout"
port=$(sed -n 's/^hyper_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/http.stdout")
wrk -t2 -c8 -d3s "http://127.0.0.1:$port/sleep" > "$WORK/wrk.out" 2>&1
wait "$TASKSPY_PID"
check "http: exit 0 (the server ended while recorded)" test $? -eq 0
diag < "$WORK/http.err"
diag < "$WORK/wrk.out"
timer_check http "$WORK/http.stdout" "$WORK/http-wait.folded" "@ main.rs:$HYPER_SLEEP_LINE;" "$WORK/wrk.out" "$T_MS"

# ---- no tokio, no markers: nothing to record, said in one line ---------------------------------------------
run none record -d 1 -o "$WORK/none-cpu.folded" --wait-mode events --wait-output "$WORK/none-wait.folded" -- "$FIXTURES/shares_fp"
check "no tokio: exit 0" test "$RC" -eq 0
check "no tokio: the CPU profile is written" test -s "$WORK/none-cpu.folded"
check "no tokio: one line says why there is no wait profile" \
    test "$(grep -c '^taskspy: no wait profile: .*; .*none-wait.folded not written$' "$WORK/none.err")" -eq 1
check "no tokio: no wait file" test ! -e "$WORK/none-wait.folded"

# ---- bad names ----------------------------------------------------------------------------------------------
run bad record -d 1 -o "$WORK/x.folded" --wait-output "$WORK/wait.json" -- true
check "--wait-output FILE.json: usage error (exit 2), one line" \
    sh -c "test $RC -eq 2 && grep -q \"^taskspy: invalid --wait-output '.*wait.json' (a .folded or .svg file)\$\" '$WORK/bad.err'"
check "--wait-output FILE.json: nothing written" test ! -e "$WORK/x.folded" -a ! -e "$WORK/wait.json"

finish
