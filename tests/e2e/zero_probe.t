#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# zero_probe.t: issue 18's end-to-end checks of zero-probe attribution (the default where the program's task
# is a thread-local: here tokio's CONTEXT.current_task_id) against the probe route (--markers probes: uprobes
# on Harness::poll), on the plain tokio fixture and on the hyper HTTP server fixture saturated by wrk: the
# same task roots with the same shares (within 5 points), no uprobe in the target while recording and the
# summary naming the route, tokio's own small task ids, and at 999 Hz on the saturated server no sample of
# the request handler's code under a thread root. Recordings of each pair run back to back on one process.
source "$(dirname "$0")/lib/tap.sh"
plan 21

# roots FOLDED: "share root" per root (its first frame), largest first, shares in percent of all samples
roots() {
    awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); split(line, f, ";"); r[f[1]] += n; t += n }
         END { for (k in r) printf "%.1f %s\n", 100 * r[k] / t, k }' "$1" | sort -rn
}
# compare_roots LABEL ZERO PROBES: the roots holding at least 3% in either are in both, within 5 points
compare_roots() {
    roots "$2" > "$WORK/$1.zero.roots"
    roots "$3" > "$WORK/$1.probes.roots"
    sed 's/^/# zero-probe /' "$WORK/$1.zero.roots" | head -6 | cut -c1-160
    sed 's/^/# probes     /' "$WORK/$1.probes.roots" | head -6 | cut -c1-160
    awk 'FNR == NR { z[substr($0, index($0, " ") + 1)] = $1; next }
         { p[substr($0, index($0, " ") + 1)] = $1 }
         END { for (k in z) if (z[k] >= 3 || p[k] >= 3) { d = z[k] - p[k]; if (d < 0) d = -d;
                   if (d > 5) { printf "# %s: %.1f vs %.1f\n", substr(k, 1, 120), z[k], p[k]; bad++ } }
               for (k in p) if (p[k] >= 3 && !(k in z)) { printf "# only with probes: %s\n", substr(k, 1, 120); bad++ }
               exit bad > 0 }' "$WORK/$1.zero.roots" "$WORK/$1.probes.roots"
}
# uprobe_pages PID: the target's [uprobes] mappings (the kernel maps one once a uprobe in it was hit)
uprobe_pages() { grep -c '\[uprobes\]' "/proc/$1/maps" 2>/dev/null || true; }

# ---- the plain tokio fixture ---------------------------------------------------------------------------------
start_fixture tokio_plain 60
"$TASKSPY" record -p "$FIXTURE_PID" -d 8 -F 199 -o "$WORK/tokio-zero.folded" 2> "$WORK/tokio-zero.err" &
rec=$!
sleep 2
during=$(uprobe_pages "$FIXTURE_PID")
wait $rec
check "tokio, zero-probe: exit 0" test $? -eq 0
check "tokio, zero-probe: no uprobe in the target while recording ($during [uprobes] mappings)" test "${during:-0}" -eq 0
check "tokio, zero-probe: the summary names the route (tokio's CONTEXT, no probe)" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id' '$WORK/tokio-zero.err' &&
     grep -q '^taskspy: markers: no poll probes' '$WORK/tokio-zero.err'"
"$TASKSPY" record -p "$FIXTURE_PID" -d 8 -F 199 --markers probes -o "$WORK/tokio-probes.folded" 2> "$WORK/tokio-probes.err"
check "tokio, probe route: Harness::poll probed" grep -q "tokio:poll (function entry) x" "$WORK/tokio-probes.err"
after=$(uprobe_pages "$FIXTURE_PID")
check "tokio, probe route: the uprobe check sees them ($after [uprobes] mappings once probes were hit)" test "${after:-0}" -gt 0
check "tokio: the same task roots with the same shares (within 5 points)" \
    compare_roots tokio "$WORK/tokio-zero.folded" "$WORK/tokio-probes.folded"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task -o "$WORK/tokio-ids.folded" 2> /dev/null
stop_fixture
check "tokio: ids are tokio's own (small integers, no address)" \
    sh -c "grep -Eq '^task [0-9]{1,7}: tokio_fixture::' '$WORK/tokio-ids.folded' && ! grep -q '^task 0x' '$WORK/tokio-ids.folded'"

# ---- the hyper HTTP server, saturated by wrk ----------------------------------------------------------------
HANDLER=';hyper_fixture::render_index(;|$)'
start_fixture hyper_server --seconds 90
wait_for 20 lines_at_least "$WORK/hyper_server.stdout" '^hyper_fixture pid' 1
port=$(sed -n 's/^hyper_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/hyper_server.stdout")
check "hyper: the server listens (port ${port:-none})" test -n "$port"
wrk -t2 -c16 -d60s "http://127.0.0.1:${port:-1}/" > "$WORK/wrk.out" 2>&1 &
WRK=$!
BACKGROUND_PIDS+=("$WRK")
sleep 1
"$TASKSPY" record -p "$FIXTURE_PID" -d 8 -F 199 -o "$WORK/http-zero.folded" 2> "$WORK/http-zero.err" &
rec=$!
sleep 2
during=$(uprobe_pages "$FIXTURE_PID")
wait $rec
check "hyper, zero-probe: exit 0" test $? -eq 0
check "hyper, zero-probe: no uprobe in the target while recording ($during [uprobes] mappings)" test "${during:-0}" -eq 0
grep '^taskspy: \(tasks\|markers\)' "$WORK/http-zero.err" | diag
check "hyper, zero-probe: the summary names the route" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id' '$WORK/http-zero.err' &&
     grep -q '^taskspy: markers: no poll probes' '$WORK/http-zero.err'"
missing=$(sed -n 's/.* samples, \([0-9]*\) without a record and \([0-9]*\) unreadable.*/\1 \2/p' "$WORK/http-zero.err")
check "hyper, zero-probe: every sample found its record ($missing)" test "$missing" = "0 0"
"$TASKSPY" record -p "$FIXTURE_PID" -d 8 -F 199 --markers probes -o "$WORK/http-probes.folded" 2> "$WORK/http-probes.err"
check "hyper, probe route: Harness::poll probed" grep -q "tokio:poll (function entry) x" "$WORK/http-probes.err"
check "hyper: task roots" grep -q '^task: ' "$WORK/http-zero.folded"
check "hyper: the same task roots with the same shares (within 5 points)" \
    compare_roots http "$WORK/http-zero.folded" "$WORK/http-probes.folded"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --group-by task -o "$WORK/http-ids.folded" 2> /dev/null
check "hyper: ids are tokio's own (small integers, no address)" \
    sh -c "grep -Eq '^task [0-9]{1,7}: ' '$WORK/http-ids.folded' && ! grep -q '^task 0x' '$WORK/http-ids.folded'"
# 999 Hz on the saturated server: the handler's code is only ever in a task
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 999 -o "$WORK/http-999.folded" 2> "$WORK/http-999.err"
check "hyper, 999 Hz: exit 0" test $? -eq 0
grep -E 'samples, |lost' "$WORK/http-999.err" | diag
handler=$(samples "$WORK/http-999.folded" "$HANDLER")
misfiled=$(grep -E "$HANDLER" "$WORK/http-999.folded" | grep -v '^task' | grep -v '^\[unknown task\]' | awk '{ n += $NF } END { print n + 0 }')
check "hyper, 999 Hz: samples of the handler ($handler)" test "${handler:-0}" -gt 0
check "hyper, 999 Hz: none of them under a thread root ($misfiled)" test "$misfiled" -eq 0
kill "$WRK" 2> /dev/null
wait "$WRK" 2> /dev/null
stop_fixture
requests=$(sed -n 's/^total: requests \([0-9]*\) .*/\1/p' "$WORK/hyper_server.stdout")
check "hyper: the server answered requests throughout (${requests:-none})" test "${requests:-0}" -gt 1000
finish
