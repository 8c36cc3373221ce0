#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tokio_current.t: issue 27's end-to-end checks on the tokio people run today, beside the Debian tokio 1.24
# fixtures the other files test: the tokio fixture's workload built against the current tokio from the crate
# registry (tokio_current, its version pinned by tests/fixtures/tokio_current/Cargo.lock) and an axum service
# (axum_server: axum 0.8 on hyper 1.x) driven by wrk on loopback.
#   ids       on both versions, the ids --group-by task reports are the ones the program printed from
#             tokio::task::id() for the same task function (tokio_plain_ids: 1.24 with --cfg tokio_unstable,
#             where task::id() is unstable; tokio_current); every export of the current tokio's recording opened
#             by its tool (go tool pprof, speedscope's schema and app, xmllint)
#   current   zero-probe task roots, await points at the source lines marked in main.rs, no runtime frame in a
#             task stack; the probe route (--markers probes: raw::poll uprobes) with the same shares, and beside
#             another recording's return probes on the same functions (the wait profile's events too); the wait
#             profile (--wait-tasks): the sleeper's waits the whole recording, every one with a stack at its
#             sleep line, most of them there
#   axum      the handler's CPU under its connection task, the /sleep handler's timer line T ms per request
#   settings  README's table of build settings: full debug info, line-tables-only, stripped with the debug file
#             found by .gnu_debuglink and (in a private mount namespace) by build id, no debug info
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BROWSER_DIR=$ROOT/tests/browser
MAIN_RS=$ROOT/tests/fixtures/tokio/src/main.rs
AXUM_RS=$ROOT/tests/fixtures/axum/src/main.rs
plan 60

if [ ! -f "$BROWSER_DIR/node_modules/speedscope/package.json" ] || [ ! -f "$BROWSER_DIR/node_modules/ajv/package.json" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error > "$WORK/npm.log" 2>&1) || diag < "$WORK/npm.log"
fi
export GOCACHE=$WORK/gocache GOTELEMETRY=off

KINDS='^task: tokio_fixture::(parse|render|compress)_task'
# a task stack's first frame below its root is the task function's own: the runtime's frames above it are cut
TASK_FIRST='^task: [^;]*(;tokio_fixture::|$)'
# cut_check LABEL FOLDED ERR: the runtime's frames are cut from task stacks: at most 5 per mille of the task samples
# may start elsewhere (each such stack is shown; on failure the summary's lines on truncated stacks and unmapped
# addresses too). What that allows: a stack unwound to garbage past the runtime's frames beside another tracer's
# return probes, which trace.t's recordings put beside this file in CI (run43, the "beside" recording: 1 sample
# in run_task after its poll returned, whose caller read as a heap address, of 1,700)
cut_check() {
    check "$1: runtime frames cut (a task stack starts at the task's own function, all but <= 5 per mille)" \
        most_stacks "$2" '^task: tokio_fixture' "$TASK_FIRST" 5 ||
        grep -E 'truncated|no mapping' "$3" | cut -c1-300 | diag
}
# lines_of MARK: the main.rs lines whose comment ends with MARK (e.g. AWAIT:render_page), as an awk regex
lines_of() { grep -n "// $1:[0-9]*\$\|// $1\$" "$2" | cut -d: -f1 | paste -sd'|'; }
# id_check LABEL FOLDED STDOUT: the task ids of FOLDED's "task ID: tokio_fixture::KIND" roots against the
# program's "task ID KIND" lines; passes when every id is one the program printed for that KIND, and at least
# 20 ids were seen
id_check() {
    local matched
    matched=$(awk 'FNR == NR { if ($1 == "task") kind[$2] = $3; next }
        /^task [0-9]+: tokio_fixture::[a-z_]+/ { split($0, a, ";"); split(a[1], r, "[ :]+"); id = r[2];
            fn = r[3] == "tokio_fixture" ? r[4] : r[3]; sub(/^tokio_fixture::/, "", fn);
            if (seen[id]++) next; if (kind[id] == fn) ok++; else { bad++; if (bad < 4) printf "# id %s: %s, printed %s\n", id, fn, kind[id] > "/dev/stderr" } }
        END { printf "%d %d\n", ok, bad }' "$3" "$2")
    read -r good bad <<< "$matched"
    check "$1: --group-by task ids are tokio's own ($good ids match the program's task::id() for their function, $bad do not)" \
        sh -c "test '$bad' = 0 && test '$good' -ge 20"
}

# ---- ids, on tokio 1.24 and on the current tokio -------------------------------------------------------------
for fixture in tokio_plain_ids tokio_current; do
    start_fixture "$fixture" 40 --print-ids
    outputs=(-o "$WORK/$fixture-ids.folded")
    [ "$fixture" = tokio_current ] && outputs+=(-o "$WORK/ids.pb.gz" -o "$WORK/ids.speedscope.json" \
        -o "$WORK/ids.trace.json" -o "$WORK/ids.svg")
    "$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task "${outputs[@]}" 2> "$WORK/$fixture-ids.err" &
    rec=$!
    wait_for 10 attached "$rec"
    probed=$(probed_entries "$FIXTURE_PID" "$FIXTURES/$fixture")
    wait "$rec"
    check "$fixture ids: exit 0" test $? -eq 0
    stop_fixture
    # (the tokio_current run writes a Chrome trace too, whose poll events come from raw::poll probes: there the
    # probes must be there, and the summary must say they serve the poll events only)
    if [ "$fixture" = tokio_current ]; then
        check "$fixture ids: tasks from tokio's CONTEXT; raw::poll probed for the trace's poll events only (${probed:-?} entries hold an int3)" \
            sh -c "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id' '$WORK/$fixture-ids.err' &&
                   grep -q '(poll events; tasks from the TLS marker)' '$WORK/$fixture-ids.err' && test '${probed:-0}' -gt 0"
    else
        check "$fixture ids: tasks from tokio's CONTEXT, no probe in the target (${probed:-?} raw::poll entries hold an int3)" \
            sh -c "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id' '$WORK/$fixture-ids.err' && test '$probed' = 0"
    fi
    id_check "$fixture" "$WORK/$fixture-ids.folded" "$WORK/$fixture.stdout"
done
total=$(samples "$WORK/tokio_current-ids.folded")
check "current exports: pprof -top total = folded total ($total)" test "$(pprof_total "$WORK/ids.pb.gz" samples)" = "$total"
go tool pprof -tags "$WORK/ids.pb.gz" 2> /dev/null | sed -n '/task_id:/,/^ *$/p' | grep -o '[0-9]\+$' | sort -u > "$WORK/pprof_ids"
grep -o '^task [0-9]*:' "$WORK/tokio_current-ids.folded" | grep -o '[0-9]*' | sort -u > "$WORK/folded_ids"
# (the task functions' ids are tokio's: id_check above. An id the program never printed, 1 (the program's tasks
# start at 3: tokio numbers something of its own first), was seen on one sample taken in tokio's
# TaskIdGuard::enter, here on 2026-11-28 and in a CI run before: shown, not failed)
unprinted=$(awk '$1 == "task" { print $2 }' "$WORK/tokio_current.stdout" | sort -u | comm -13 - "$WORK/pprof_ids" | head -3)
check "current exports: pprof's task_id labels are the folded roots' ids ($(wc -l < "$WORK/pprof_ids"))" \
    sh -c "test -s '$WORK/pprof_ids' && cmp -s '$WORK/pprof_ids' '$WORK/folded_ids'"
[ -z "$unprinted" ] ||
    for id in $unprinted; do       # what the samples of an id the program never printed were doing
        echo "id $id: $(grep -c "^task $id:" "$WORK/tokio_current-ids.folded") folded roots; its samples' stacks:"
        go tool pprof -traces -tagfocus "task_id=^$id\$" "$WORK/ids.pb.gz" 2> /dev/null | sed -n 9,60p
    done | diag
node "$BROWSER_DIR/speedscope_check.js" "$WORK/ids.speedscope.json" --total "$total" > "$WORK/ss.tap" 2>&1
check "current exports: the speedscope file passes speedscope's schema and app" test $? -eq 0 || grep -v '^ok' "$WORK/ss.tap" | diag
node "$BROWSER_DIR/speedscope_check.js" --trace "$WORK/ids.trace.json" > "$WORK/tr.tap" 2>&1
check "current exports: the Chrome trace opens in speedscope" test $? -eq 0 || grep -v '^ok' "$WORK/tr.tap" | diag
check "current exports: the SVG is valid XML" xmllint --noout "$WORK/ids.svg"

# ---- the current tokio: task roots, await points, the probe route, the wait profile ---------------------------
start_fixture tokio_current 60 --wait-tasks
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 -o "$WORK/zero.folded" 2> "$WORK/zero.err"
check "current zero-probe: exit 0" test $? -eq 0
for kind in parse render compress; do
    check "current zero-probe: a task root for ${kind}_task" grep -q "^task: tokio_fixture::${kind}_task" "$WORK/zero.folded"
done
cut_check "current zero-probe" "$WORK/zero.folded" "$WORK/zero.err"
rp_lines=$(lines_of AWAIT:render_page "$MAIN_RS")
cr_lines=$(lines_of 'BURN:compress_response' "$MAIN_RS")
# a render_page frame with a callee below it is at an await line; a sample in render_page's own code (its leaf
# frame, e.g. the state machine's dispatch at the fn line: seen once in a CI run) may be at any of its lines
check "current: render_page's frames that call on at its await lines ($rp_lines), compress_response's at its burn lines ($cr_lines)" \
    sh -c "grep -Eq 'tokio_fixture::render_page @ main\\.rs:($rp_lines);' '$WORK/zero.folded' &&
           ! grep -Eo 'tokio_fixture::render_page @ main\\.rs:[0-9]+;' '$WORK/zero.folded' | grep -Evq ':($rp_lines);\$' &&
           grep -Eq 'tokio_fixture::compress_response @ main\\.rs:($cr_lines);' '$WORK/zero.folded'"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 --markers probes -o "$WORK/probes.folded" 2> "$WORK/probes.err"
check "current probe route: exit 0" test $? -eq 0
check "current probe route: tokio's raw::poll copies probed" grep -Eq "tokio:poll \(function entry\) x [1-9]" "$WORK/probes.err"
check "current probe route: polls counted" grep -Eq "^taskspy: [0-9]{4,} polls" "$WORK/probes.err"
# each route held to the fixture's 1:2:3 burn (a CI run under load and ASan once compared them with each
# other: 19.4/36.6/44.0 against 15.7/32.6/51.7 failed a 6-point match, each being within its noise of 1:2:3)
CUR_KINDS=("^task: tokio_fixture::parse_task" "^task: tokio_fixture::render_task" "^task: tokio_fixture::compress_task")
shares_123 "current zero-probe" "$WORK/zero.folded" "${CUR_KINDS[@]}"
shares_123 "current probe route" "$WORK/probes.folded" "${CUR_KINDS[@]}" "$PROBE_BIAS"
cut_check "current probe route" "$WORK/probes.folded" "$WORK/probes.err"
# Beside another tracer's return probes: uprobes are per file, so a --poll-times recording of another process of
# the same program puts return probes on the very raw::poll entries this recording probes, and the kernel readies
# their trampoline at this process's hits too (its address in place of the poll's caller's return address on the
# stack; samples in the trampoline itself). Seen in CI with trace.t beside this file: 1,688 of 1,888 stacks cut
# at the trampoline (an [unknown] frame at 0x7fffffffe000), 27 of them shown as a task root and [unknown].
"$FIXTURES/tokio_current" 20 > "$WORK/other.stdout" 2>&1 &
OTHER_PID=$!
BACKGROUND_PIDS+=("$OTHER_PID")
wait_for 20 running "$OTHER_PID" "$FIXTURES/tokio_current"
"$TASKSPY" record -p "$OTHER_PID" -d 12 -F 99 --markers probes --poll-times -o "$WORK/other.folded" 2> "$WORK/other.err" &
other_rec=$!
# (its return probes are in when its own process has the trampoline's page)
wait_for 15 grep -q '\[uprobes\]' "/proc/$OTHER_PID/maps"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 --markers probes -o "$WORK/beside.folded" 2> "$WORK/beside.err"
check "beside another's return probes: exit 0" test $? -eq 0
beside_samples=$(recorded_samples "$WORK/beside.err")
beside_cut=$(truncated_stacks "$WORK/beside.err")
check "beside another's return probes: their trampoline was in this process ([uprobes] mapped), ${beside_cut:-0} of ${beside_samples:-?} stacks cut short (<= 1%)" \
    sh -c "grep -q '\[uprobes\]' /proc/$FIXTURE_PID/maps && test '${beside_samples:-0}' -gt 0 &&
           test \$((${beside_cut:-0} * 100)) -le '${beside_samples:-0}'" ||
    grep -E 'truncated|no mapping' "$WORK/beside.err" | cut -c1-300 | diag
cut_check "beside another's return probes" "$WORK/beside.folded" "$WORK/beside.err"
# The wait profile's events: their poll probes read the return address only once a stack cut at the trampoline
# was seen (SPEC 7's cost per hit), so the stacks unwound before that are cut (the first ~0.1 s here, while the
# first samples are unwound), and the polls begun after it unwind whole (before the reading: 1,007 of 1,120).
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 999 --markers probes -o "$WORK/beside-ev.folded" --wait-mode events \
    --wait-output "$WORK/beside-ev-wait.folded" 2> "$WORK/beside-ev.err"
check "beside another's return probes, the wait profile's events: exit 0" test $? -eq 0
ev_samples=$(recorded_samples "$WORK/beside-ev.err")
ev_cut=$(truncated_stacks "$WORK/beside-ev.err")
ev_secs=$(recorded_secs "$WORK/beside-ev.err")
read_from=$(sed -n 's/.*trampoline with no return address.*; the poll probes read it from \([0-9.]*\) s on$/\1/p' "$WORK/beside-ev.err")
ev_allowed=$(awk -v n="${ev_samples:-0}" -v t="${read_from:-99}" -v d="${ev_secs:-1}" \
    'BEGIN { f = (t + 0.2) / d; if (f > 1) f = 1; printf "%d", n * f + 10 }')
check "beside another's return probes, events: the poll probes read return addresses from ${read_from:-never} s of ${ev_secs:-?}, ${ev_cut:-0} of ${ev_samples:-?} stacks cut short (<= $ev_allowed: those before, 0.2 s more, 10)" \
    sh -c "test -n '$read_from' && test '${ev_samples:-0}' -gt 0 && test '${ev_cut:-0}' -le '$ev_allowed' &&
           awk -v t='$read_from' -v d='${ev_secs:-0}' 'BEGIN { exit !(t < d / 2) }'" ||
    grep -E 'truncated|trampoline|no mapping' "$WORK/beside-ev.err" | cut -c1-300 | diag
wait "$other_rec"
check "beside another's return probes: the other recording, with its own return probes, exit 0" test $? -eq 0
kill "$OTHER_PID" 2>/dev/null
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 99 -o "$WORK/w-cpu.folded" --wait-mode events --wait-output "$WORK/wait.folded" 2> "$WORK/wait.err"
check "current wait profile: exit 0" test $? -eq 0
secs=$(recorded_secs "$WORK/wait.err")
sleep_line=$(lines_of WAIT:sleep_waiter "$MAIN_RS")
# The sleeper's waits: every one with a stack at its sleep line; all of them together the whole recording, and
# most at the sleep line. Those before its first registration stack have its root alone: stacks come at a
# budget (first come, with an allowance for tasks with none yet), and at the start ~290 tasks have none.
SLEEPER='^task: tokio_fixture::sleep_waiter;'
at_line=$(samples "$WORK/wait.folded" "${SLEEPER}tokio_fixture::sleep_waiter @ main\\.rs:($sleep_line);.*Sleep.*\\[(suspended|runnable)\\]")
root_alone=$(samples "$WORK/wait.folded" "${SLEEPER}\\[(suspended|runnable)\\]")
sleeper_all=$(samples "$WORK/wait.folded" "$SLEEPER")
stacked=$((sleeper_all - root_alone))
check "current wait profile: the sleeper's waits with a stack are at its sleep line (main.rs:$sleep_line): $at_line of $stacked us" \
    test "$stacked" -gt 0 -a "$((at_line * 100))" -ge "$((stacked * 98))" ||
    grep "$SLEEPER" "$WORK/wait.folded" | cut -c1-300 | diag
check "current wait profile: the sleeper's waits $sleeper_all us of ${secs} s, $at_line us at its sleep line ($root_alone us under its root alone)" \
    sh -c "$(declare -f between); test -n '$secs' && between $secs 1 10 &&
           between $sleeper_all $(awk -v s="${secs:-0}" 'BEGIN { print s * 0.9e6, s * 1.01e6 }') &&
           between $at_line $(awk -v s="${secs:-0}" 'BEGIN { print s * 0.5e6, s * 1.01e6 }')" ||
    { grep "$SLEEPER" "$WORK/wait.folded" | cut -c1-300; grep 'waits:' "$WORK/wait.err"; } | diag
check "current wait profile: the yielding task is runnable at its yield line" \
    grep -Eq "^task: tokio_fixture::yield_waiter;tokio_fixture::yield_waiter @ main\\.rs:($(lines_of WAIT:yield_waiter "$MAIN_RS"));.*\\[runnable\\] [0-9]+$" "$WORK/wait.folded"
stop_fixture

# ---- axum (hyper 1.x) under wrk: CPU under the connection task, the handler's timer T ms a request -------------
T_MS=20
"$TASKSPY" record -F 499 -o "$WORK/axum-cpu.folded" --wait-mode events --wait-output "$WORK/axum-wait.folded" -- \
    "$FIXTURES/axum_server" --seconds 6 --sleep-ms "$T_MS" > "$WORK/axum.stdout" 2> "$WORK/axum.err" &
TASKSPY_PID=$!
BACKGROUND_PIDS+=("$TASKSPY_PID")
wait_for 20 grep -q '^axum_fixture pid [0-9]* port [0-9]*' "$WORK/axum.stdout"
port=$(sed -n 's/^axum_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/axum.stdout")
wrk -t1 -c2 -d4s "http://127.0.0.1:$port/" > "$WORK/wrk-index.out" 2>&1 &
wrk -t1 -c8 -d4s "http://127.0.0.1:$port/sleep" > "$WORK/wrk.out" 2>&1
wait %1 2> /dev/null
wait "$TASKSPY_PID"
check "axum: exit 0 (the server ended while recorded)" test $? -eq 0
grep '^taskspy: \(tasks\|markers\|waits\)' "$WORK/axum.err" | diag
index_line=$(grep -n 'let page = render_index' "$AXUM_RS" | cut -d: -f1)
check "axum: the index handler's CPU is under its connection task at its line (main.rs:$index_line)" \
    grep -Eq "^task: axum::serve::handle_connection;.*axum_fixture::index @ main\\.rs:$index_line;axum_fixture::render_index" "$WORK/axum-cpu.folded"
check "axum: at most 1% of the handler's samples under a thread root" \
    most_stacks "$WORK/axum-cpu.folded" 'axum_fixture::render_index' '^task: ' 10
timer_check axum "$WORK/axum.stdout" "$WORK/axum-wait.folded" "axum_fixture::sleep @ main.rs:$(lines_of WAIT:sleep "$AXUM_RS");" \
    "$WORK/wrk.out" "$T_MS"

# ---- build settings (README's table) -------------------------------------------------------------------------
# setting LABEL FIXTURE TASKS_RC [ENV-WRAPPER...]: a 3 s launch recording of the fixture (--wait-tasks) with a wait
# profile; its folded, wait and err in $WORK; then `taskspy tasks` on a --parked run of the same binary, which
# exits TASKS_RC (0: it reads the tasks, 1: one line says what the binary lacks)
setting() {
    local label=$1 fixture=$2 tasks_rc=$3; shift 3
    "$@" "$TASKSPY" record -d 3 -F 199 -o "$WORK/$label.folded" --wait-output "$WORK/$label-wait.folded" -- \
        "$fixture" 4 --wait-tasks > /dev/null 2> "$WORK/$label.err"
    check "$label: exit 0" test $? -eq 0
    grep '^taskspy: \(tasks\|markers\|tokio\)' "$WORK/$label.err" | cut -c1-200 | diag
    local kinds=0
    for kind in parse render compress; do grep -q "^task: tokio_fixture::${kind}_task" "$WORK/$label.folded" && kinds=$((kinds + 1)); done
    check "$label: task roots for the three task functions ($kinds)" test "$kinds" = 3
    if [ "$tasks_rc" = 0 ]; then
        check "$label: a wait profile, the sleeper suspended in it" \
            grep -Eq '^task: tokio_fixture::sleep_waiter;.*\[suspended\] [0-9]+$' "$WORK/$label-wait.folded"
    else   # the sleeper's async fn is inlined and unnamed: its waits are there, under another root (the
           # worker thread's: its task entry is not known), and it waits the whole recording
        local secs waiters
        secs=$(recorded_secs "$WORK/$label.err")
        waiters=$(awk '!/^task: tokio_fixture::(parse|render|compress)_task;/ && /;\[suspended\] [0-9]+$/ { n += $NF }
            END { print n + 0 }' "$WORK/$label-wait.folded")
        check "$label: a wait profile: outside the three busy kinds, at least the sleeper's whole recording suspended ($waiters us in ${secs:-?} s)" \
            sh -c "test -n '$secs' && awk -v w=$waiters -v s=$secs 'BEGIN { exit !(s > 1 && w >= 0.9e6 * s) }'"
    fi
    "$@" sh -c '"$0" --parked 20 > /dev/null & pid=$!; sleep 1.5; "$1" tasks -p $pid; rc=$?; kill $pid; exit $rc' \
        "$fixture" "$TASKSPY" > "$WORK/$label-tasks.out" 2> "$WORK/$label-tasks.err"
    local rc=$?
    if [ "$tasks_rc" = 0 ]; then
        check "$label: taskspy tasks reads the parked tasks" \
            sh -c "test $rc = 0 && grep -q '^50 tasks idle' '$WORK/$label-tasks.out'"
    else
        check "$label: taskspy tasks: exit 1, one line saying DWARF types are needed" \
            sh -c "test $rc = 1 && test \$(wc -l < '$WORK/$label-tasks.err') = 1 && grep -q 'DWARF types' '$WORK/$label-tasks.err'"
    fi
}
CONTEXT_LINE="^taskspy: tokio's CONTEXT layout needs DWARF types: .*; using poll probes"
setting lines "$FIXTURES/tokio_current_lines" 1
check "lines: one line says the CONTEXT layout needs DWARF types, tasks from probes" \
    sh -c "test \$(grep -c \"$CONTEXT_LINE\" '$WORK/lines.err') = 1 && grep -q '^taskspy: tasks: from poll probes' '$WORK/lines.err'"
# line tables name an inlined function without its path ("{async_fn#0}"): the await points of the async fns
# that keep a frame of their own (the task functions) carry their lines
check "lines: await points with source lines" grep -Eq ';tokio_fixture::(parse|render|compress)_task @ main\.rs:[0-9]+;' "$WORK/lines.folded"
setting nodebug "$FIXTURES/tokio_current_nodebug" 1
check "nodebug: the same one line, tasks from probes" \
    sh -c "test \$(grep -c \"$CONTEXT_LINE\" '$WORK/nodebug.err') = 1 && grep -q '^taskspy: tasks: from poll probes' '$WORK/nodebug.err'"
check "nodebug: no source lines (none in the binary)" sh -c "! grep -q ' @ main\\.rs:' '$WORK/nodebug.folded'"
check "stripped: no symbol table, a .gnu_debuglink" \
    sh -c "! readelf -S '$FIXTURES/tokio_current_stripped' | grep -q '\\.symtab' && readelf -S '$FIXTURES/tokio_current_stripped' | grep -q gnu_debuglink"
setting stripped "$FIXTURES/tokio_current_stripped" 0
check "stripped (debuglink): tasks from CONTEXT through the debug file, await points with lines" \
    sh -c "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id.*through the debug file' '$WORK/stripped.err' &&
           grep -Eq 'tokio_fixture::render_page @ main\\.rs:[0-9]+;' '$WORK/stripped.folded'"
# by build id only: a copy without the debuglink, its debug file under /usr/lib/debug/.build-id in a private
# mount namespace (the machine's own /usr/lib/debug is not touched)
objcopy --remove-section .gnu_debuglink "$FIXTURES/tokio_current_stripped" "$WORK/tokio_by_id"
build_id=$(readelf -n "$WORK/tokio_by_id" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
mkdir -p "$WORK/debug/.build-id/${build_id:0:2}"
cp "$FIXTURES/tokio_current_stripped.debug" "$WORK/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
mkdir -p /usr/lib/debug
in_debug_namespace() { unshare -m sh -c 'mount --bind "$0" /usr/lib/debug && exec "$@"' "$WORK/debug" "$@"; }
setting build-id "$WORK/tokio_by_id" 0 in_debug_namespace
check "stripped (build id): tasks from CONTEXT through the debug file, await points with lines" \
    sh -c "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id.*through the debug file /usr/lib/debug/.build-id/' '$WORK/build-id.err' &&
           grep -Eq 'tokio_fixture::render_page @ main\\.rs:[0-9]+;' '$WORK/build-id.folded'"

finish
