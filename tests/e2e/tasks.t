#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tasks.t: `taskspy tasks` (issue 28), every task's async backtrace read from outside with nothing stopped.
#   parked   the tokio fixture's --parked mode (tasks at known awaits, tests/fixtures/tokio/src/parked.rs) on
#            tokio 1.24 (Debian) and on the current tokio: the number of tasks per backtrace exact, each await
#            at the line its PARK comment marks, the leaves named (Sleep with its deadline, JoinHandle with the
#            id of a joined_sleeper task, channels, the Mutex's semaphore), the never-woken task the only one
#            nothing can wake, busy tasks running or scheduled; the ids tokio's own (task::id()); folded and SVG
#   truth    tokio's own Handle::dump() (the taskdump build, on SIGUSR1) against taskspy's read of the same
#            process: each task's chain of the fixture's async fns and their lines, task by task
#   running  ten dumps in a row: the target's progress counter advances, and it is never stopped (state T)
#   http     the axum service: a request's connection task at the handler's await line (through hyper's
#            structs and axum's boxed futures), an idle keep-alive connection at its socket
#   errors   no tokio, no DWARF types (line-tables-only), no such process: one line, exit 1
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AXUM_RS=$ROOT/tests/fixtures/axum/src/main.rs
plan 24


# parked_check LABEL JSON STDOUT: the groups of a parked dump, as exact counts; prints "ok" or what differs
parked_check() {
    python3 - "$2" "$3" "$(park_line park_sleep)" "$(park_line nap)" "$(park_line park_channel)" \
        "$(park_line park_mutex)" "$(park_line joined_sleeper)" "$(park_line park_join)" "$(park_line park_oneshot)" \
        "$(park_line park_forever)" "$(park_line busy_yield)" << 'EOF'
import collections, json, re, sys
d = json.load(open(sys.argv[1]))
printed = collections.defaultdict(set)
for line in open(sys.argv[2]):
    m = re.match(r"task (\d+) (\w+)$", line)
    if m:
        printed[m.group(2)].add(int(m.group(1)))
ln = dict(zip(["park_sleep", "nap", "park_channel", "park_mutex", "joined_sleeper", "park_join", "park_oneshot",
               "park_forever", "busy_yield"], map(int, sys.argv[3:])))
P = "tokio_fixture::parked::"
def own(t):
    return [(f["function"][len(P):], f["line"]) for f in t["frames"] if f["function"].startswith(P)]
expect = {  # kind -> (count, fixture frames, leaf prefix)
    "park_sleep": (50, [("park_sleep", ln["park_sleep"]), ("nap", ln["nap"])], "tokio::time::sleep::Sleep"),
    "park_channel": (20, [("park_channel", ln["park_channel"])], "tokio::sync::mpsc::"),
    "park_mutex": (10, [("park_mutex", ln["park_mutex"])], "tokio::sync::batch_semaphore::Acquire"),
    "joined_sleeper": (10, [("joined_sleeper", ln["joined_sleeper"])], "tokio::time::sleep::Sleep"),
    "park_join": (10, [("park_join", ln["park_join"])], "tokio::runtime::task::join::JoinHandle"),
    "park_oneshot": (5, [("park_oneshot", ln["park_oneshot"])], "tokio::sync::oneshot::Receiver"),
    "park_forever": (1, [("park_forever", ln["park_forever"])], None),
}
bad = []
by_root = collections.defaultdict(list)
for t in d["tasks"]:
    by_root[t["root"][len(P):] if t["root"] and t["root"].startswith(P) else t["root"]].append(t)
joined = {t["id"] for t in by_root["joined_sleeper"]}
for kind, (count, frames, leaf) in expect.items():
    ts = by_root[kind]
    good = [t for t in ts if t["state"] == "idle" and own(t) == frames and
            (leaf is None or (t["leaf"] or "").startswith(leaf))]
    if len(ts) != count or len(good) != count:
        bad.append(f"{kind}: {len(good)} of {len(ts)} as expected, want {count}; e.g. " +
                   json.dumps(next((t for t in ts if t not in good), None))[:300])
for t in by_root["park_sleep"] + by_root["joined_sleeper"]:
    m = re.match(r"deadline in ([0-9.]+) s$", t["detail"] or "")
    if not m or not 3000 < float(m.group(1)) <= 3600:
        bad.append(f"sleep detail {t['detail']!r}")
        break
for t in by_root["park_join"]:
    m = re.match(r"waits for task (\d+)$", t["detail"] or "")
    if not m or int(m.group(1)) not in joined:
        bad.append(f"join detail {t['detail']!r} not a joined_sleeper ({sorted(joined)[:3]}...)")
        break
unwakeable = [t["root"] for t in d["tasks"] if t.get("unwakeable")]
if unwakeable != [P + "park_forever"]:
    bad.append(f"unwakeable: {unwakeable}")
# a busy task is running or scheduled; or idle at its yield line: tokio (1.25 on) defers yield_now's wake until
# its worker looks for other work, and the task is idle in between (seen once in a check-asan run)
busy = by_root["busy_yield"]
if len(busy) != 2 or any(t["state"] not in ("running", "scheduled") and
                         not (t["state"] == "idle" and own(t) == [("busy_yield", ln["busy_yield"])]) for t in busy):
    bad.append(f"busy: {[(t['state'], own(t)) for t in busy]}")
if not printed:
    bad.append("the program printed no task ids (--print-ids): tokio's ids not compared")
else:
    for kind, ts in by_root.items():
        if kind in expect and {t["id"] for t in ts} != printed[kind]:
            bad.append(f"{kind}: ids {sorted(t['id'] for t in ts)[:4]}... printed {sorted(printed[kind])[:4]}...")
print("ok" if not bad else "; ".join(bad))
EOF
}

# ---- parked tasks on tokio 1.24 and on the current tokio ------------------------------------------------------
# (tokio 1.24's task::id() needs --cfg tokio_unstable: the tokio_plain_ids build of the same program)
for fixture in tokio_plain_ids tokio_current; do
    start_fixture "$fixture" 120 --parked --print-ids
    wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/$fixture.stdout"
    "$TASKSPY" tasks -p "$FIXTURE_PID" --json -o "$WORK/$fixture.folded" > "$WORK/$fixture.json" 2> "$WORK/$fixture.err"
    check "$fixture: tasks --json -o FOLDED: exit 0" test $? -eq 0
    diag < "$WORK/$fixture.err"
    result=$(parked_check "$fixture" "$WORK/$fixture.json" "$WORK/$fixture.stdout" 2>&1)
    check "$fixture: every parked group exact, awaits at their PARK lines, leaves and details right ($result)" \
        test "$result" = ok
    check "$fixture: the runtime named, the workers listed" \
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['runtime'].startswith('tokio 1.') and
                    sum(1 for w in d['workers'] if w['index'] is not None) == 2))" "$WORK/$fixture.json"
    tasks_n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$WORK/$fixture.json")
    check "$fixture: the folded file counts one per task ($(samples "$WORK/$fixture.folded") of $tasks_n)" \
        test "$(samples "$WORK/$fixture.folded")" = "$tasks_n"
    check "$fixture: folded lines are task roots, await frames and a state" \
        grep -Eq "^task: tokio_fixture::parked::park_sleep;tokio_fixture::parked::park_sleep @ parked\.rs:$(park_line park_sleep);tokio_fixture::parked::nap @ parked\.rs:$(park_line nap);tokio::time::sleep::Sleep;\[idle\] 50$" "$WORK/$fixture.folded"
    "$TASKSPY" tasks -p "$FIXTURE_PID" > "$WORK/$fixture.txt" 2>&1
    check "$fixture: text: the largest group first, its frames at their lines" \
        sh -c "grep -A3 -m1 '^[0-9]* tasks' '$WORK/$fixture.txt' | tr -s ' ' | tr '\n' '|' |
               grep -q '^50 tasks idle| tokio_fixture::parked::park_sleep @ parked.rs:$(park_line park_sleep)| tokio_fixture::parked::nap @ parked.rs:$(park_line nap)| tokio::time::sleep::Sleep (deadline in'"
    stop_fixture
done

# an SVG of where the tasks are: valid XML, its title the command
start_fixture tokio_current 60 --parked
wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/tokio_current.stdout"
"$TASKSPY" tasks -p "$FIXTURE_PID" -o "$WORK/tasks.svg" > /dev/null 2> "$WORK/svg.err"
svg_rc=$?
check "-o FILE.svg: exit 0 ($svg_rc), valid XML, the tasks' frames in it" \
    sh -c "test $svg_rc = 0 && xmllint --noout '$WORK/tasks.svg' && grep -q 'park_sleep @ parked.rs' '$WORK/tasks.svg'"

# ---- nothing stopped: ten dumps in a row ------------------------------------------------------------------------
before=$(grep -c '^progress' "$WORK/tokio_current.stdout")
first=$(grep '^progress' "$WORK/tokio_current.stdout" | tail -1 | cut -d' ' -f2)
( while kill -0 "$FIXTURE_PID" 2> /dev/null; do cut -d' ' -f3 "/proc/$FIXTURE_PID/stat"; sleep 0.01; done ) > "$WORK/states" 2> /dev/null &
watcher=$!
failed=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$TASKSPY" tasks -p "$FIXTURE_PID" > /dev/null 2>&1 || failed=$((failed + 1))
done
wait_for 5 test "$(grep -c '^progress' "$WORK/tokio_current.stdout")" -gt "$((before + 1))"
last=$(grep '^progress' "$WORK/tokio_current.stdout" | tail -1 | cut -d' ' -f2)
kill "$watcher" 2> /dev/null
check "ten dumps in a row: each exit 0 ($failed failed)" test "$failed" = 0
check "the target kept working meanwhile (its progress counter ${first:-?} -> ${last:-?})" \
    sh -c "test '${last:-0}' -gt '${first:-0}'"
check "the target was never stopped (state T) while dumped ($(sort "$WORK/states" | uniq -c | tr '\n' ' '))" \
    sh -c "test -s '$WORK/states' && ! grep -q '^[tT]$' '$WORK/states'"
stop_fixture

# ---- ground truth: tokio's own Handle::dump() -------------------------------------------------------------------
start_fixture tokio_current_taskdump 120 --parked --print-ids
wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/tokio_current_taskdump.stdout"
kill -USR1 "$FIXTURE_PID"
wait_for 30 grep -q '^dump end' "$WORK/tokio_current_taskdump.stdout"
"$TASKSPY" tasks -p "$FIXTURE_PID" --json > "$WORK/truth.json" 2> "$WORK/truth.err"
check "taskdump build: tasks --json exit 0" test $? -eq 0
stop_fixture
truth=$(python3 - "$WORK/truth.json" "$WORK/tokio_current_taskdump.stdout" << 'EOF'
import json, re, sys
ours = {t["id"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
truth, cur = {}, None
for line in open(sys.argv[2]):
    m = re.match(r"dump task (\d+)$", line)
    if m:
        cur = int(m.group(1)); truth[cur] = []; continue
    m = re.match(r"dump frame (tokio_fixture::\S+) \S+:(\d+)$", line)
    if m and cur is not None:   # innermost first; async suffixes and the hash removed
        truth[cur].append((re.sub(r"::\{\{closure\}\}.*$|::h[0-9a-f]{16}$", "", m.group(1)), int(m.group(2))))
same = differ = 0
shown = []
for tid, frames in truth.items():
    t = ours.get(tid)
    if not frames or not t or t["state"] not in ("idle", "scheduled") or "dump_on_signal" in (t["root"] or ""):
        continue      # tokio saw no leaf of its own (the never-woken future), taskspy saw it running, or it is
                      # the task that took tokio's dump (it has moved on since)
    mine = [(f["function"], f["line"]) for f in t["frames"] if f["function"].startswith("tokio_fixture::")]
    if mine == list(reversed(frames)):
        same += 1
    else:
        differ += 1
        shown.append(f"{tid}: {mine} vs tokio's {list(reversed(frames))}")
print(same, differ, len(truth), "; ".join(shown[:2]))
EOF
)
read -r same differ listed rest <<< "$truth"
check "tokio's own dump ($listed tasks): taskspy's await chains match task by task ($same same, $differ differ) $rest" \
    sh -c "test '${differ:-1}' = 0 && test '${same:-0}' -ge 100"

# ---- the HTTP service: a request at its handler's await, a keep-alive connection at its socket ------------------
start_fixture axum_server --seconds 60 --sleep-ms 3000
wait_for 20 grep -q '^axum_fixture pid' "$WORK/axum_server.stdout"
port=$(sed -n 's/^axum_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/axum_server.stdout")
wrk -t1 -c3 -d6s --timeout 8s "http://127.0.0.1:$port/sleep" > /dev/null 2>&1 &
BACKGROUND_PIDS+=($!)
python3 -c "import socket, sys, time
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(b'GET / HTTP/1.1\r\nHost: t\r\n\r\n'); s.recv(4096); time.sleep(8)" "$port" &
BACKGROUND_PIDS+=($!)
sleep 1.5
"$TASKSPY" tasks -p "$FIXTURE_PID" --json > "$WORK/http.json" 2> "$WORK/http.err"
check "http: exit 0" test $? -eq 0
sleep_line=$(grep -n '// WAIT:sleep$' "$AXUM_RS" | cut -d: -f1)
http=$(python3 - "$WORK/http.json" "$sleep_line" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
at_handler = idle_socket = 0
for t in d["tasks"]:
    fr = [(f["function"], f["line"]) for f in t["frames"]]
    if fr and fr[0][0] == "axum::serve::handle_connection":
        if ("axum_fixture::sleep", int(sys.argv[2])) in fr and (t["leaf"] or "").startswith("tokio::time::sleep::Sleep"):
            at_handler += 1
        elif len(fr) == 1 and (t["leaf"] or "").startswith("tokio::net::tcp::stream::TcpStream") and \
                (t["detail"] or "").startswith("fd "):
            idle_socket += 1
print(at_handler, idle_socket)
EOF
)
read -r at_handler idle_socket <<< "$http"
check "http: the requests' connection tasks wait at the handler's timer line (main.rs:$sleep_line) ($at_handler of 3)" \
    test "${at_handler:-0}" -ge 2
check "http: the idle keep-alive connection waits at its socket, its fd named ($idle_socket)" test "${idle_socket:-0}" = 1
stop_fixture

# ---- errors -----------------------------------------------------------------------------------------------------
start_fixture shares_fp 30
run notokio tasks -p "$FIXTURE_PID"
check "no tokio: exit 1, one line naming what is missing" \
    sh -c "test $RC -eq 1 && test \$(wc -l < '$WORK/notokio.err') = 1 && grep -q '^taskspy: .*no tokio runtime' '$WORK/notokio.err'"
stop_fixture
start_fixture tokio_current_lines 30 --parked
run lines tasks -p "$FIXTURE_PID"
check "line-tables-only: exit 1, one line saying DWARF types are needed" \
    sh -c "test $RC -eq 1 && test \$(wc -l < '$WORK/lines.err') = 1 && grep -q 'DWARF types' '$WORK/lines.err'"
stop_fixture
run nopid tasks -p 4194300
check "no such process: exit 1, one line" sh -c "test $RC -eq 1 && test \$(wc -l < '$WORK/nopid.err') = 1"

finish
