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
#            its probes there; in both modes the sleeper and the yielder wait at their lines about the whole
#            recording (their design: they do nothing else)
#   http     hyper 0.14 (tokio 1.24) and axum (hyper 1.x, tokio 1.54) launched under taskspy, driven by wrk on
#            /sleep: the handler's timer line T ms a request (at least 0.9 T, at most wrk's mean latency + 10%);
#            on hyper attached, snapshots and events back to back, each the same per request
#   choice   a program without tokio: one line says the waits come from waker events, and they do;
#            --wait-mode snapshots there: exit 1, one line; --wait-mode without --wait-output: usage error
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAIN_RS=$ROOT/tests/fixtures/tokio/src/main.rs
plan 29

wait_line() { grep -n "// $1\$" "$2" | cut -d: -f1; }
export GOCACHE=$WORK/gocache GOTELEMETRY=off

# text_differs PID EXE [REGEX]: "DIFFERING BYTES FUNCTIONS" over EXE's tokio raw::poll and waker functions (or
# those whose symbol matches REGEX), the bytes of the running process (/proc/PID/mem) against the file's (an
# attached uprobe is an int3 written into the text)
cat > "$WORK/text_differs.py" << 'EOF'
import os, re, subprocess, sys
pid, exe = sys.argv[1], os.path.realpath(sys.argv[2])     # as /proc/PID/maps names it
wanted = sys.argv[3] if len(sys.argv) > 3 else r"3raw4poll|5waker\w*(clone_waker|wake_by_val|wake_by_ref)"
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
        if len(f) != 4 or f[2] not in "tT" or not re.search(wanted, f[3]):
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
text_differs() { python3 "$WORK/text_differs.py" "$@" 2> "$WORK/text_differs.err"; }
WAKER_FUNCTIONS='5waker\w*(clone_waker|wake_by_val|wake_by_ref)'


# ---- parked tasks on both tokio versions ------------------------------------------------------------------------
parked() {
    local label=$1 fixture=$2
    start_fixture "$fixture" --parked 60
    wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/$fixture.stdout"
    "$TASKSPY" record -p "$FIXTURE_PID" -d 3 -o "$WORK/$label-cpu.folded" -o "$WORK/$label.pb.gz" \
        -o "$WORK/$label.trace.json" --wait-output "$WORK/$label-wait.folded" 2> "$WORK/$label.err" &
    local rec=$! wakers
    wait_for 10 attached "$rec"
    sleep 1
    wakers=$(text_differs "$FIXTURE_PID" "$FIXTURES/$fixture" "$WAKER_FUNCTIONS")
    wait "$rec"
    RC=$?
    stop_fixture
    grep '^taskspy: \(waits\|stuck\|nothing\|markers\)' "$WORK/$label.err" | cut -c1-200 | diag
    check "$label: exit 0, the waits from snapshots at 49 Hz, no probe" \
        sh -c "test $RC = 0 && grep -Eq '^taskspy: waits: from [0-9]+ task snapshots at 49 Hz .*, no probe' '$WORK/$label.err'"
    # (the trace's poll events probe raw::poll: only the waker functions are compared)
    read -r w_differ w_bytes w_funcs <<< "$wakers"
    check "$label: no waker probe: no byte of tokio's waker functions differs from the file while recording (${w_differ:-?} of ${w_bytes:-?} bytes in ${w_funcs:-?} functions)" \
        test "${w_differ:-x}" = 0 -a "${w_funcs:-0}" -ge 3
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
# The fixtures whose text is compared run from copies of their own (another inode): a uprobe on a file is
# written into every process that maps it, also one another test file records at the same time (make e2e
# runs two at a time; the event mode's waker registration probes are system-wide events whose BPF filter
# keeps the target's hits: README, known limitations).
OWN=$WORK/own
mkdir -p "$OWN" && cp "$FIXTURES/tokio_plain" "$FIXTURES/tokio_current" "$OWN/"
FIXTURES=$OWN parked plain tokio_plain
FIXTURES=$OWN parked current tokio_current

# ---- the waiters (saturated), snapshots then events back to back; the target's text while recording --------------
SLEEP_LINE=$(wait_line WAIT:sleep_waiter:1 "$MAIN_RS")
YIELD_LINE=$(wait_line WAIT:yield_waiter:1 "$MAIN_RS")
FIXTURES=$OWN start_fixture tokio_plain 60 --wait-tasks
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
    text_differs "$FIXTURE_PID" "$OWN/tokio_plain" > "$WORK/$label.text"
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
# The waiters' design is the truth each mode is held to (the two modes were once compared with each other: 20%
# apart under load, each near its design): the sleeper sleeps and the yielder yields all the time, doing
# nothing else, so each waits at its line about the whole recording
about_all() { between "$(ratio "$1" "$(awk -v s="${2:-0}" 'BEGIN { print s * 1e6 }')")" "$3" 1.03; }
check "waiters, events: the sleeper at its sleep line about the recording too ($ev_sleep us in $secs_ev s)" \
    about_all "$ev_sleep" "$secs_ev" 0.85
check "waiters: the yielder at its yield line (main.rs:$YIELD_LINE) about the recording in both modes ($snap_yield us in $secs s, $ev_yield us in $secs_ev s)" \
    sh -c "$(declare -f about_all between ratio); about_all '$snap_yield' '$secs' 0.8 && about_all '$ev_yield' '$secs_ev' 0.8"

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

# hyper attached under a steady wrk (8 connections on /sleep, for both recordings): snapshots, then events; in
# each, the handler's timer line holds about the 8 connections' whole recording, as much of it as their
# requests spend in the T-ms timer (at least 0.9 T of wrk's mean latency, at most all of it)
HYPER_LINE=$(wait_line WAIT:sleep "$ROOT/tests/fixtures/hyper/src/main.rs")
start_fixture hyper_server --seconds 60 --sleep-ms "$T_MS"
port=$(sed -n 's/^hyper_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/hyper_server.stdout")
wrk -t1 -c8 -d40s --latency "http://127.0.0.1:$port/sleep" > "$WORK/hyper-wrk.out" 2>&1 &
WRK=$!
BACKGROUND_PIDS+=("$WRK")
sleep 0.5
run hs record -p "$FIXTURE_PID" -d 3 -o "$WORK/hs-cpu.folded" --wait-output "$WORK/hs-wait.folded"
hs_rc=$RC
run he record -p "$FIXTURE_PID" -d 3 -o "$WORK/he-cpu.folded" --wait-output "$WORK/he-wait.folded" --wait-mode events
kill -INT "$WRK" 2> /dev/null   # (wrk prints its statistics on SIGINT)
wait "$WRK"
stop_fixture
hs=$(samples "$WORK/hs-wait.folded" "@ main\\.rs:$HYPER_LINE;")
he=$(samples "$WORK/he-wait.folded" "@ main\\.rs:$HYPER_LINE;")
hs_secs=$(recorded_secs "$WORK/hs.err")
he_secs=$(recorded_secs "$WORK/he.err")
for f in hs he; do
    [ "$(sed -n 's/^taskspy: waits: .*//p' "$WORK/$f.err" | wc -l)" -gt 0 ] || sed -n '1,3p' "$WORK/$f.err" | diag
done
latency=$(wrk_latency_us "$WORK/hyper-wrk.out")
# connections_at_line US SECS: US at the line is 8 connections x SECS x (0.9 T / latency) at least, x 1.02 at most
connections_at_line() {
    awk -v us="$1" -v s="${2:-0}" -v t="$T_MS" -v l="${latency:-0}" \
        'BEGIN { exit !(s > 1 && l > 0 && us >= 8 * s * 1e6 * 0.9 * t * 1000 / l && us <= 8 * s * 1e6 * 1.02) }'
}
check "hyper attached: snapshots and events (exit $hs_rc, $RC) each hold 8 connections x the recording x 0.9 T / wrk's latency (${latency:-?} us) at the handler's line ($hs us in $hs_secs s, $he us in $he_secs s)" \
    sh -c "test $hs_rc = 0 && test $RC = 0 && $(declare -f connections_at_line); T_MS=$T_MS latency=$latency
           connections_at_line '$hs' '$hs_secs' && connections_at_line '$he' '$he_secs'"

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
