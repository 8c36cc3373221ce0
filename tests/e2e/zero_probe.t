#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# zero_probe.t: issue 18's end-to-end checks of zero-probe attribution (the default where the program's task
# is a thread-local: here tokio's CONTEXT.current_task_id) against the probe route (--markers probes: uprobes
# on raw::poll, the task vtable's poll entry), on the plain tokio fixture and on the hyper HTTP server fixture
# saturated by wrk: on the fixture, each route's task roots share the samples as the fixture burns (1:2:3,
# shares_123); on the server, whose split has no design, the same roots with the same shares within what the
# two recordings' sample counts allow (share_tol of both, and PROBE_BIAS); no uprobe in the target while recording and the
# summary naming the route, tokio's own small task ids, and at 999 Hz on the saturated server no sample of
# the request handler's code under a thread root. Recordings of each pair run back to back on one process.
source "$(dirname "$0")/lib/tap.sh"
plan 21

# roots FOLDED: "share root" per root (its first frame), largest first, shares in percent of all samples
roots() {
    awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); split(line, f, ";"); r[f[1]] += n; t += n }
         END { for (k in r) printf "%.1f %s\n", 100 * r[k] / t, k }' "$1" | sort -rn
}
# compare_roots LABEL ZERO PROBES TOLERANCE: the roots holding at least 3% in either are in both, within TOLERANCE
# points
compare_roots() {
    roots "$2" > "$WORK/$1.zero.roots"
    roots "$3" > "$WORK/$1.probes.roots"
    sed 's/^/# zero-probe /' "$WORK/$1.zero.roots" | head -6 | cut -c1-160
    sed 's/^/# probes     /' "$WORK/$1.probes.roots" | head -6 | cut -c1-160
    awk 'FNR == NR { z[substr($0, index($0, " ") + 1)] = $1; next }
         { p[substr($0, index($0, " ") + 1)] = $1 }
         END { for (k in z) if (z[k] >= 3 || p[k] >= 3) { d = z[k] - p[k]; if (d < 0) d = -d;
                   if (d > tol) { printf "# %s: %.1f vs %.1f\n", substr(k, 1, 120), z[k], p[k]; bad++ } }
               for (k in p) if (p[k] >= 3 && !(k in z)) { printf "# only with probes: %s\n", substr(k, 1, 120); bad++ }
               exit bad > 0 }' tol="$4" "$WORK/$1.zero.roots" "$WORK/$1.probes.roots"
}
# record_zero LABEL EXE: 2 s at 999 Hz of the default route on the fixture, its probed raw::poll entries counted
# meanwhile; checks the exit status, that count and the summary's route
record_zero() {
    "$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 -o "$WORK/$1-zero.folded" 2> "$WORK/$1-zero.err" &
    local rec=$! during
    wait_for 10 attached "$rec"
    during=$(probed_entries "$FIXTURE_PID" "$2")
    wait $rec
    check "$1, zero-probe: exit 0" test $? -eq 0
    check "$1, zero-probe: no uprobe in the target while recording ($during raw::poll entries probed)" \
        test "$during" = 0
    grep '^taskspy: \(tasks\|markers\)' "$WORK/$1-zero.err" | diag
    check "$1, zero-probe: the summary names the route (tokio's CONTEXT, no probe)" sh -c \
        "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id' '$WORK/$1-zero.err' &&
         grep -q '^taskspy: markers: no poll probes' '$WORK/$1-zero.err'"
}

# ---- the plain tokio fixture ---------------------------------------------------------------------------------
start_fixture tokio_plain 60
record_zero tokio "$FIXTURES/tokio_plain"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 --markers probes -o "$WORK/tokio-probes.folded" 2> "$WORK/tokio-probes.err" &
rec=$!
wait_for 10 attached "$rec"
sleep 0.5
probed=$(probed_entries "$FIXTURE_PID" "$FIXTURES/tokio_plain")
wait $rec
check "tokio, probe route: raw::poll probed" grep -q "tokio:poll (function entry) x" "$WORK/tokio-probes.err"
check "tokio, probe route: the uprobe check sees them ($probed entries probed)" test "${probed:-0}" -gt 0
TOKIO_KINDS=("^task: tokio_fixture::parse_task" "^task: tokio_fixture::render_task" "^task: tokio_fixture::compress_task")
shares_123 "tokio, zero-probe" "$WORK/tokio-zero.folded" "${TOKIO_KINDS[@]}"
shares_123 "tokio, probe route" "$WORK/tokio-probes.folded" "${TOKIO_KINDS[@]}" "$PROBE_BIAS"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task -o "$WORK/tokio-ids.folded" 2> /dev/null
stop_fixture
check "tokio: ids are tokio's own (small integers, no address)" \
    sh -c "grep -Eq '^task [0-9]{1,7}: tokio_fixture::' '$WORK/tokio-ids.folded' && ! grep -q '^task 0x' '$WORK/tokio-ids.folded'"

# ---- the hyper HTTP server, saturated by wrk ----------------------------------------------------------------
HANDLER=';hyper_fixture::render_index(;|$)'
start_fixture hyper_server --seconds 90
wait_for 20 lines_at_least "$WORK/hyper_server.stdout" '^hyper_fixture pid' 1
port=$(sed -n 's/^hyper_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/hyper_server.stdout")
check "http: the server listens (port ${port:-none})" test -n "$port"
wrk -t2 -c16 -d60s "http://127.0.0.1:${port:-1}/" > "$WORK/wrk.out" 2>&1 &
WRK=$!
BACKGROUND_PIDS+=("$WRK")
sleep 1
record_zero http "$FIXTURES/hyper_server"
missing=$(sed -n 's/.* samples, \([0-9]*\) without a record and \([0-9]*\) unreadable.*/\1 \2/p' "$WORK/http-zero.err")
check "http, zero-probe: every sample found its record ($missing)" test "$missing" = "0 0"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 999 --markers probes -o "$WORK/http-probes.folded" 2> "$WORK/http-probes.err"
check "http, probe route: raw::poll probed" grep -q "tokio:poll (function entry) x" "$WORK/http-probes.err"
check "http: task roots" grep -q '^task: ' "$WORK/http-zero.folded"
tol=$(awk -v t="$(share_tol "$(samples "$WORK/http-zero.folded")" "$(samples "$WORK/http-probes.folded")")" \
    -v b="$PROBE_BIAS" 'BEGIN { print t + b }')
check "http: the same task roots with the same shares (within $tol points: the two sample counts, the probes' bias)" \
    compare_roots http "$WORK/http-zero.folded" "$WORK/http-probes.folded" "$tol"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task -o "$WORK/http-ids.folded" 2> /dev/null
check "http: ids are tokio's own (small integers, no address)" \
    sh -c "grep -Eq '^task [0-9]{1,7}: ' '$WORK/http-ids.folded' && ! grep -q '^task 0x' '$WORK/http-ids.folded'"
# 999 Hz on the saturated server: the handler's code is only ever in a task
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 999 -o "$WORK/http-999.folded" 2> "$WORK/http-999.err"
check "http, 999 Hz: exit 0" test $? -eq 0
grep -E 'samples, |lost' "$WORK/http-999.err" | diag
handler=$(samples "$WORK/http-999.folded" "$HANDLER")
misfiled=$(grep -E "$HANDLER" "$WORK/http-999.folded" | grep -v '^task' | grep -v '^\[unknown task\]' | awk '{ n += $NF } END { print n + 0 }')
check "http, 999 Hz: samples of the handler ($handler)" test "${handler:-0}" -gt 0
check "http, 999 Hz: none of them under a thread root ($misfiled)" test "$misfiled" -eq 0
kill "$WRK" 2> /dev/null
wait "$WRK" 2> /dev/null
stop_fixture
requests=$(sed -n 's/^total: requests \([0-9]*\) .*/\1/p' "$WORK/hyper_server.stdout")
check "http: the server answered requests throughout (${requests:-none})" test "${requests:-0}" -gt 1000
finish
