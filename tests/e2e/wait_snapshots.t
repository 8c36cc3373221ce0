#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# wait_snapshots.t: record --wait-output in snapshot mode (issue 29, SPEC section 3a): every task's async
# backtrace read from the target's memory 49 times a second, no probe.
#   parked   the tokio fixture's --parked mode on tokio 1.24 (tokio_plain) and 1.54 (tokio_current), attached
#            after its tasks are parked: the 50 sleepers fill about 50 x the recording's duration at
#            park_sleep;nap;Sleep (within 10%); the summary names the stuck tasks (the sleepers' await first)
#            and the one task nothing can wake (park_forever); no waker probe; the same recording's pprof
#            (wait/nanoseconds, go tool pprof: the folded total) and Chrome trace (per-task [suspended] spans
#            that never overlap, within the recording)
#   waiters  the tokio fixture's --wait-tasks (saturated): the sleeper at its sleep line about the recording's
#            duration; while recording, no byte of tokio's raw::poll and waker functions in the target differs
#            from the executable (read from /proc/PID/mem), where the event mode's recording right after has
#            its probes there; the two modes back to back agree within 20% at the waiters' await lines
#   http     hyper 0.14 (tokio 1.24) and axum (hyper 1.x, tokio 1.54) launched under taskspy, driven by wrk on
#            /sleep: the handler's timer line T ms a request (at least 0.9 T, at most wrk's mean latency + 10%);
#            on hyper attached, snapshots and events back to back agree within 20% at that line
#   choice   a program without tokio: one line says the waits come from waker events, and they do;
#            --wait-mode snapshots there: exit 1, one line; --wait-mode without --wait-output: usage error
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAIN_RS=$ROOT/tests/fixtures/tokio/src/main.rs
plan 29

wait_line() { grep -n "// $1\$" "$2" | cut -d: -f1; }
export GOCACHE=$WORK/gocache GOTELEMETRY=off

# text_differs PID EXE: "DIFFERING of BYTES" over EXE's tokio raw::poll and waker functions, the bytes of the
# running process (/proc/PID/mem) against the file's (an attached uprobe is an int3 written into the text)
cat > "$WORK/text_differs.py" << 'EOF'
import os, re, subprocess, sys
pid, exe = sys.argv[1], os.path.realpath(sys.argv[2])     # as /proc/PID/maps names it
sections = []
for line in subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m:
        sections.append((int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)))
pie = " DYN " in subprocess.run(["readelf", "-hW", exe], capture_output=True, text=True).stdout
base = 0
if pie:
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        if len(f) >= 6 and f[5] == exe and int(f[2], 16) == 0:
            base = int(f[0].split("-")[0], 16)
            break
differ = total = funcs = 0
with open(exe, "rb") as file, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) != 4 or f[2] not in "tT" or not re.search(r"3raw4poll|5waker\w*(clone_waker|wake_by_val|wake_by_ref)", f[3]):
            continue
        addr, size = int(f[0], 16), int(f[1], 16)
        sec = next((s for s in sections if s[0] <= addr < s[0] + s[2]), None)
        if not sec or size == 0:
            continue
        file.seek(addr - sec[0] + sec[1])
        mem.seek(base + addr)
        a, b = file.read(size), mem.read(size)
        funcs += 1
        total += size
        differ += sum(x != y for x, y in zip(a, b))
print(differ, total, funcs)
EOF
text_differs() { python3 "$WORK/text_differs.py" "$1" "$2" 2> "$WORK/text_differs.err"; }

# ---- parked tasks on both tokio versions ------------------------------------------------------------------------
parked() {
    local label=$1 fixture=$2
    start_fixture "$fixture" --parked 60
    wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/$fixture.stdout"
    run "$label" record -p "$FIXTURE_PID" -d 3 -o "$WORK/$label-cpu.folded" -o "$WORK/$label.pb.gz" \
        -o "$WORK/$label.trace.json" --wait-output "$WORK/$label-wait.folded"
    stop_fixture
    grep '^taskspy: \(waits\|stuck\|nothing\|markers\)' "$WORK/$label.err" | cut -c1-200 | diag
    check "$label: exit 0, the waits from snapshots at 49 Hz, no probe" \
        sh -c "test $RC = 0 && grep -Eq '^taskspy: waits: from [0-9]+ task snapshots at 49 Hz .*, no probe' '$WORK/$label.err'"
    check "$label: no waker probe attached" sh -c "! grep -q 'waker locations probed' '$WORK/$label.err'"
    local secs sleepers
    secs=$(recorded_secs "$WORK/$label.err")
    sleepers=$(samples "$WORK/$label-wait.folded" "^task: tokio_fixture::parked::park_sleep;tokio_fixture::parked::park_sleep @ parked\\.rs:$(park_line park_sleep);tokio_fixture::parked::nap @ parked\\.rs:$(park_line nap);tokio::time::sleep::Sleep;\\[suspended\\]\$")
    check "$label: the 50 sleepers fill 50 x the recording at park_sleep;nap;Sleep ($sleepers us in $secs s, within 10%)" \
        between "$(ratio "$sleepers" "$(awk -v s="${secs:-0}" 'BEGIN { print 50 * s * 1e6 }')")" 0.9 1.1
    check "$label: the summary's stuck tasks: the 50 sleepers' await first" \
        sh -c "grep -A1 '^taskspy: stuck: [0-9]* tasks at one await in all' '$WORK/$label.err' | tail -1 |
               grep -q '^taskspy:   50 tasks (task: tokio_fixture::parked::park_sleep) at tokio_fixture::parked::nap @ parked.rs:$(park_line nap) -> tokio::time::sleep::Sleep: '"
    check "$label: nothing can wake exactly one task, park_forever at its await" \
        sh -c "grep -q '^taskspy: nothing can wake 1 task ' '$WORK/$label.err' &&
               grep -A1 '^taskspy: nothing can wake' '$WORK/$label.err' | tail -1 |
               grep -Eq '^taskspy:   task [0-9]+ \\(task: tokio_fixture::parked::park_forever\\) at tokio_fixture::parked::park_forever @ parked.rs:$(park_line park_forever): '"
    local wait_us wait_ns
    wait_us=$(samples "$WORK/$label-wait.folded")
    wait_ns=$(pprof_total "$WORK/$label.pb.gz" wait)
    check "$label: pprof's wait/nanoseconds is the wait profile's total (${wait_ns:-?} ns, $wait_us us)" \
        test "${wait_ns:-x}" = "${wait_us}000"
    python3 - "$WORK/$label.trace.json" > "$WORK/$label.spans" 2>&1 << 'EOF'
import collections, json, sys
trace = json.load(open(sys.argv[1]))
spans = collections.defaultdict(list)
end_us = 0
for e in trace["traceEvents"]:
    if e.get("cat") == "wait":
        spans[e["args"]["task_id"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    elif e.get("ph") == "X" and e.get("name") == "recording":
        end_us = e["ts"] + e["dur"]
bad = sum(b[0] < a[1] - 0.01 for s in spans.values() for a, b in zip(sorted(s), sorted(s)[1:]))
late = sum(end > end_us + 1000 or start < -1000 for s in spans.values() for start, end, _ in s)
sleeping = sum(1 for s in spans.values() if any(n.startswith("task: tokio_fixture::parked::park_sleep [suspended]") for *_, n in s))
print(len(spans), sleeping, bad, late)
EOF
    diag < "$WORK/$label.spans"
    read -r tasks sleeping overlaps late < "$WORK/$label.spans"
    check "$label: the trace's wait tracks: ${tasks:-?} tasks, the 50 sleepers [suspended], no overlap, none outside the recording" \
        test "${sleeping:-0}" = 50 -a "${overlaps:-1}" = 0 -a "${late:-1}" = 0
}
parked plain tokio_plain
parked current tokio_current

# ---- the waiters (saturated), snapshots then events back to back; the target's text while recording --------------
SLEEP_LINE=$(wait_line WAIT:sleep_waiter:1 "$MAIN_RS")
YIELD_LINE=$(wait_line WAIT:yield_waiter:1 "$MAIN_RS")
start_fixture tokio_plain 60 --wait-tasks
# at_lines FOLDED: "SLEEP YIELD" microseconds at the waiters' await lines
at_lines() {
    echo "$(samples "$1" "^task: tokio_fixture::sleep_waiter;tokio_fixture::sleep_waiter @ main\\.rs:$SLEEP_LINE;")" \
         "$(samples "$1" "^task: tokio_fixture::yield_waiter;tokio_fixture::yield_waiter @ main\\.rs:$YIELD_LINE;")"
}
# record_during LABEL ARGS...: a 3 s recording of the fixture, the target's text compared while it records
record_during() {
    local label=$1; shift
    "$TASKSPY" record -p "$FIXTURE_PID" -d 3 -o "$WORK/$label-cpu.folded" --wait-output "$WORK/$label-wait.folded" \
        "$@" 2> "$WORK/$label.err" &
    local rec=$!
    wait_for 10 attached "$rec"
    sleep 1
    text_differs "$FIXTURE_PID" "$FIXTURES/tokio_plain" > "$WORK/$label.text"
    wait $rec
    RC=$?
}
record_during snap
read -r snap_differ snap_bytes snap_funcs < "$WORK/snap.text"
snap_rc=$RC
record_during events --wait-mode events
read -r ev_differ ev_bytes ev_funcs < "$WORK/events.text"
stop_fixture
diag < "$WORK/text_differs.err"
check "waiters, snapshots: exit 0, from snapshots" \
    sh -c "test $snap_rc = 0 && grep -q '^taskspy: waits: from [0-9]* task snapshots' '$WORK/snap.err'"
check "waiters, snapshots: no byte of tokio's raw::poll and waker functions differs from the file (${snap_differ:-?} of ${snap_bytes:-?} bytes in ${snap_funcs:-?} functions)" \
    test "${snap_differ:-x}" = 0 -a "${snap_funcs:-0}" -ge 10
check "waiters, events: the same comparison sees the event mode's probes (${ev_differ:-?} bytes differ)" \
    test "$RC" = 0 -a "${ev_differ:-0}" -gt 0
secs=$(recorded_secs "$WORK/snap.err")
read -r snap_sleep snap_yield <<< "$(at_lines "$WORK/snap-wait.folded")"
read -r ev_sleep ev_yield <<< "$(at_lines "$WORK/events-wait.folded")"
check "waiters, snapshots: the sleeper at its sleep line (main.rs:$SLEEP_LINE) about the recording ($snap_sleep us in $secs s)" \
    between "$(ratio "$snap_sleep" "$(awk -v s="${secs:-0}" 'BEGIN { print s * 1e6 }')")" 0.85 1.03
secs_ev=$(recorded_secs "$WORK/events.err")
# per second of each recording, at each await line: snapshots / events
agree() { between "$(awk -v a="$1" -v sa="$2" -v b="$3" -v sb="$4" 'BEGIN { if (b == 0 || sa == 0) print "nan"; else printf "%.3f", (a / sa) / (b / sb) }')" 0.8 1.2; }
check "waiters: snapshots and events agree at the sleep line within 20% ($snap_sleep us in $secs s, $ev_sleep us in $secs_ev s)" \
    agree "$snap_sleep" "$secs" "$ev_sleep" "$secs_ev"
check "waiters: ... and at the yield line ($snap_yield us, $ev_yield us)" \
    agree "$snap_yield" "$secs" "$ev_yield" "$secs_ev"

# ---- HTTP: hyper 0.14 and axum under wrk, launched under taskspy ------------------------------------------------
T_MS=20
# http LABEL FIXTURE RS [BRANCHES]: a launched recording of the server while wrk drives /sleep; checks the time at
# the handler's timer line per request (BRANCHES: those its connection task waits on at once, timer_check)
http() {
    local label=$1 fixture=$2 rs=$3 branches=${4:-1} line
    line=$(wait_line WAIT:sleep "$rs")
    "$TASKSPY" record -o "$WORK/$label-cpu.folded" --wait-output "$WORK/$label-wait.folded" -- \
        "$FIXTURES/$fixture" --seconds 5 --sleep-ms "$T_MS" > "$WORK/$label.stdout" 2> "$WORK/$label.err" &
    local rec=$!
    BACKGROUND_PIDS+=("$rec")
    wait_for 20 grep -q '^[a-z]*_fixture pid [0-9]* port [0-9]*' "$WORK/$label.stdout"
    local port
    port=$(sed -n 's/^[a-z]*_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/$label.stdout")
    wrk -t1 -c8 -d3s "http://127.0.0.1:$port/sleep" > "$WORK/$label-wrk.out" 2>&1
    wait "$rec"
    check "$label: exit 0 (the server ended while recorded), waits from snapshots" \
        sh -c "test $? = 0 && grep -q '^taskspy: waits: from [0-9]* task snapshots' '$WORK/$label.err'"
    grep '^taskspy: waits' "$WORK/$label.err" | diag
    timer_check "$label" "$WORK/$label.stdout" "$WORK/$label-wait.folded" "@ main\\.rs:$line;" "$WORK/$label-wrk.out" "$T_MS" \
        "$branches"
}
http hyper hyper_server "$ROOT/tests/fixtures/hyper/src/main.rs"
# (axum's connection task waits in a select! on its connection and the graceful-shutdown watch: snapshots split its
# time between the two, half of it at the handler's timer line)
http axum axum_server "$ROOT/tests/fixtures/axum/src/main.rs" 2

# hyper attached under a steady wrk: snapshots, then events, at the handler's line per second of recording
HYPER_LINE=$(wait_line WAIT:sleep "$ROOT/tests/fixtures/hyper/src/main.rs")
start_fixture hyper_server --seconds 30 --sleep-ms "$T_MS"
wait_for 20 grep -q '^hyper_fixture pid [0-9]* port [0-9]*' "$WORK/hyper_server.stdout"
port=$(sed -n 's/^hyper_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/hyper_server.stdout")
wrk -t1 -c8 -d8s "http://127.0.0.1:$port/sleep" > /dev/null 2>&1 &
WRK=$!
BACKGROUND_PIDS+=("$WRK")
sleep 0.5
run hs record -p "$FIXTURE_PID" -d 3 -o "$WORK/hs-cpu.folded" --wait-output "$WORK/hs-wait.folded"
hs_rc=$RC
run he record -p "$FIXTURE_PID" -d 3 -o "$WORK/he-cpu.folded" --wait-output "$WORK/he-wait.folded" --wait-mode events
wait "$WRK"
stop_fixture
hs=$(samples "$WORK/hs-wait.folded" "@ main\\.rs:$HYPER_LINE;")
he=$(samples "$WORK/he-wait.folded" "@ main\\.rs:$HYPER_LINE;")
hs_secs=$(recorded_secs "$WORK/hs.err")
he_secs=$(recorded_secs "$WORK/he.err")
for f in hs he; do
    [ "$(sed -n 's/^taskspy: waits: .*//p' "$WORK/$f.err" | wc -l)" -gt 0 ] || sed -n '1,3p' "$WORK/$f.err" | diag
done
agree "$hs" "$hs_secs" "$he" "$he_secs"
check "hyper attached: snapshots and events (exit $hs_rc, $RC) agree at the handler's line within 20% ($hs us in $hs_secs s, $he us in $he_secs s)" \
    test $? = 0 -a "$hs_rc" = 0 -a "$RC" = 0

# ---- where the waits come from ---------------------------------------------------------------------------------
run noreader record -d 1 -o "$WORK/nr-cpu.folded" --wait-output "$WORK/nr-wait.folded" -- "$FIXTURES/executor" 2
check "no tokio: exit 0, one line says the waits come from waker events (and why)" \
    sh -c "test $RC = 0 && test \$(grep -c '^taskspy: waits: from waker events: task backtraces cannot be read (.*)\$' '$WORK/noreader.err') = 1"
check "no tokio: the event mode's wait profile written" \
    sh -c "test -s '$WORK/nr-wait.folded' && grep -q 'waker locations probed' '$WORK/noreader.err'"
run forced record -d 1 -o "$WORK/f-cpu.folded" --wait-output "$WORK/f-wait.folded" --wait-mode snapshots -- "$FIXTURES/executor" 2
check "--wait-mode snapshots without tokio: exit 1, one line, nothing written" \
    sh -c "test $RC = 1 && test \$(wc -l < '$WORK/forced.err') = 1 &&
           grep -q '^taskspy: --wait-mode snapshots: cannot read the tasks' '$WORK/forced.err' && test ! -e '$WORK/f-wait.folded'"
run usage record -d 1 -o "$WORK/u.folded" --wait-mode events -- true
check "--wait-mode without --wait-output: usage error (exit 2)" \
    sh -c "test $RC = 2 && grep -q 'are for the wait profile: give --wait-output FILE too' '$WORK/usage.err'"
finish
