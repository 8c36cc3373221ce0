#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# top.t: `taskspy top -b` (issue 39, SPEC section 3c), its text and JSON frames against the tokio fixture, on
# Debian's tokio 1.24 (tokio_plain) and the crate registry's current tokio (tokio_current), each on a multi-thread
# and a current-thread runtime (--current-thread):
#   parked  the --parked tasks: one row per await point with its exact count, at the PARK line the fixture marks;
#           the task nothing can wake warned (tokio-console's words); the busy tasks' CPU share against the
#           process's own CPU time (/proc/PID/stat) over the same frames, within what the sample count allows
#   trees   the --trees tasks with --leak: the task that holds its worker in std::thread::sleep warned with its
#           BLOCK line, the task it wakes first (starved_waiter: in its worker's LIFO slot, or on a current-thread
#           runtime in its one queue) warned starved, big_state's 20,000-byte root future warned (boxed by the
#           current tokio, held inline by 1.24), the leaked_waiter tasks growing at their LEAK line warned a leak;
#           the text frame's header and rows
#   errors  no such process, no -p, --json without -b: one line each
# Two fixtures and two views run at once (a multi-thread and a current-thread one), 0.5 s frames.
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/fixtures/tokio/src
plan 22

mark_line() { grep -n "// $1\$" "$SRC/$2" | cut -d: -f1; }   # mark_line MARK FILE: the line its comment marks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null; }

# parked_check JSON_LINES TICKS_FILE: the parked groups, the lost waker, the busy tasks' CPU (the process's CPU ticks
# and the time before and after the view in TICKS_FILE); "ok" or what differs
parked_check() {
    python3 - "$1" "$2" "$(getconf CLK_TCK)" "$SRC/parked.rs" << 'EOF'
import json, math, re, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
(t0, w0), (_, t1, w1) = [[float(x) for x in l.split()] for l in open(sys.argv[2])]
hz = float(sys.argv[3])
line = {m.group(2): int(n) + 1 for n, l in enumerate(open(sys.argv[4]))
        for m in [re.search(r"// (PARK):(\w+)$", l)] if m}
P = "tokio_fixture::parked::"
expect = {"park_sleep": (50, "nap"), "park_channel": (20, "park_channel"), "park_mutex": (10, "park_mutex"),
          "joined_sleeper": (10, "joined_sleeper"), "park_join": (10, "park_join"), "park_oneshot": (5, "park_oneshot"),
          "park_forever": (1, "park_forever")}
bad = []
last = frames[-1]
rows = {r["root"][len(P):]: r for r in last["rows"] if (r["root"] or "").startswith(P)}
for root, (count, at) in expect.items():
    r = rows.get(root)
    a = (r or {}).get("await") or {}
    if not r or r["count"] != count or r["states"]["idle"] != count or a.get("function") != P + at or \
            a.get("line") != line[at] or a.get("file") != "parked.rs":
        bad.append(f"{root}: {json.dumps(r)[:300]}")
if rows.get("park_forever", {}).get("warnings") != ["lost-waker"] or \
        [r["root"] for r in last["rows"] if "lost-waker" in r["warnings"]] != [P + "park_forever"]:
    bad.append("lost-waker rows: " + str([(r["root"], r["warnings"]) for r in last["rows"] if r["warnings"]]))
if not any(w["kind"] == "lost-waker" and "This task has lost its waker, and will never be woken again." in w["text"]
           and f"parked.rs:{line['park_forever']}" in w["text"] for w in last["warnings"]):
    bad.append(f"no lost-waker warning line: {last['warnings']}")
# the busy tasks: running, or at their yield (a row of its own while a task was never seen at an await)
busy = [r for r in last["rows"] if r["root"] == P + "busy_yield"]
if sum(r["count"] for r in busy) != 2 or any(r["states"]["complete"] + r["states"]["changing"] for r in busy):
    bad.append(f"busy_yield: {json.dumps(busy)[:300]}")
# CPU: the busy tasks' share over the frames against the process's CPU time while viewed (a steady load: rates
# compared); the samples' binomial noise (4 sd), 5 points of drift
wall = sum(f["interval_s"] for f in frames)
sampled = sum(sum((r["cpu_percent"] or 0) for r in f["rows"] if r["root"] == P + "busy_yield") * f["interval_s"]
              for f in frames) / wall
def rate(key):
    return sum(f[key] * f["interval_s"] for f in frames) / wall
whole, in_tasks, unlisted = rate("cpu_percent"), rate("cpu_in_tasks_percent"), rate("cpu_unlisted_percent")
proc = 100 * (t1 - t0) / hz / (w1 - w0)
n = whole / 100 * wall * frames[0]["sample_frequency"]
tol = 400 * math.sqrt(max(n, 1)) / max(n, 1) * whole / 100 + 5
others = max((r["cpu_percent"] or 0) for f in frames for r in f["rows"] if r["root"] != P + "busy_yield")
# the rows' shares and the samples outside tasks (the scheduler's own code) make the process's, which is /proc's
if abs(whole - proc) > tol or abs(in_tasks - unlisted - sampled) > 0.5 or others > 2 or sampled < 0.7 * whole:
    bad.append(f"cpu: busy_yield {sampled:.1f}% of the {in_tasks:.1f}% in tasks ({unlisted:.1f}% unlisted) of the "
               f"process's {whole:.1f}%, /proc says {proc:.1f}% (+-{tol:.1f}), other rows at most {others:.1f}%")
print("ok" if not bad else "; ".join(bad)[:1500])
print(f"sampled: the process {whole:.1f}%, busy_yield {sampled:.1f}%, in tasks {in_tasks:.1f}%; /proc {proc:.1f}% "
      f"(tolerance {tol:.1f})", file=sys.stderr)
EOF
}

# trees_check JSON_LINES VERSION: blocking with its line, starved, the big future, the leak; "ok" or what differs
trees_check() {
    python3 - "$1" "$2" "$SRC" << 'EOF'
import json, re, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
current, src = sys.argv[2] == "current", sys.argv[3]
def mark(name, f):
    for n, l in enumerate(open(f"{src}/{f}")):
        if l.rstrip().endswith("// " + name):
            return n + 1
last = frames[-1]
T, M = "tokio_fixture::trees::", "tokio_fixture::"
rows = {r["root"]: r for r in last["rows"]}
notes = last["warnings"]
bad = []
block = mark("BLOCK:block_worker", "trees.rs")
if "blocking" not in rows.get(T + "block_worker", {}).get("warnings", []) or not any(
        w["kind"] == "blocking" and f"at {T}block_worker @ trees.rs:{block}" in w["text"] for w in notes):
    bad.append(f"blocking at trees.rs:{block}: {[w for w in notes if w['kind'] == 'blocking']}")
starve = mark("TREE:starved_waiter", "trees.rs")
r = rows.get(T + "starved_waiter", {})
if "starved" not in r.get("warnings", []) or (r.get("await") or {}).get("line") != starve or not any(
        w["kind"] == "starved" and f"starved_waiter @ trees.rs:{starve}" in w["text"] for w in notes):
    bad.append(f"starved at trees.rs:{starve}: {json.dumps(r)[:200]}")
big = rows.get(T + "big_state", {}).get("warnings", [])
if big != (["boxed"] if current else ["large"]):
    bad.append(f"big_state: {big}")
if current and not any(w["kind"] == "boxed" and "auto-boxed by the runtime when spawning" in w["text"] for w in notes):
    bad.append("no boxed line")
leak = mark("LEAK:leaked_waiter", "main.rs")
r = next((r for r in last["rows"] if r["root"] == M + "leaked_waiter" and (r["await"] or {}).get("line") == leak), {})
counts = [next((x["count"] for x in f["rows"] if x["root"] == M + "leaked_waiter" and (x["await"] or {}).get("line") == leak), 0)
          for f in frames]
if "leak" not in r.get("warnings", []) or counts != sorted(counts) or counts[-1] <= counts[0]:
    bad.append(f"leak at main.rs:{leak}: counts {counts}, {r.get('warnings')}")
print("ok" if not bad else "; ".join(bad)[:1500])
EOF
}

# view NAME FIXTURE MODE...: the fixture running MODE, its view for 7 frames of 0.5 s as JSON (NAME.json) while its
# CPU ticks are read before and after (NAME.ticks); in the background: wait_views waits for them all
VIEWS=()
BIG_LINE=$(grep -n '// TREE:big_state$' "$SRC/trees.rs" | cut -d: -f1)
view() {
    local name=$1 fixture=$2 pid; shift 2
    "$FIXTURES/$fixture" 60 "$@" > "$WORK/$name.fixture" 2>&1 &
    pid=$!
    BACKGROUND_PIDS+=("$pid")
    wait_for 20 grep -qs '^tokio_fixture \(parked\|trees\) pid' "$WORK/$name.fixture"
    # --trees: the view begins once big_state has had its first poll (its tree at its TREE line): before it, on a
    # current-thread runtime whose one worker block_worker holds, it waits in the queue, starved, as top says
    # (warnings stay for the view), and the check below asks for its size warning alone
    case " $* " in
    *" --trees "*) wait_for 20 sh -c "'$TASKSPY' tasks -p $pid 2> /dev/null | grep -q 'trees::big_state @ trees.rs:$BIG_LINE\$'" ;;
    esac
    ( echo "$(cpu_ticks "$pid") $(date +%s.%N)" > "$WORK/$name.ticks"
      "$TASKSPY" top -p "$pid" -b -n 7 -i 0.5 --json > "$WORK/$name.json" 2> "$WORK/$name.err"
      echo "$? $(cpu_ticks "$pid") $(date +%s.%N)" >> "$WORK/$name.ticks"
      kill "$pid" 2> /dev/null ) &
    VIEWS+=($!)
}
wait_views() { wait "${VIEWS[@]}"; VIEWS=(); }

for fixture in tokio_plain tokio_current; do
    version=$([ "$fixture" = tokio_current ] && echo current || echo debian)
    view "$fixture-parked" "$fixture" --parked
    view "$fixture-trees-ct" "$fixture" --trees --leak --current-thread
    wait_views
    view "$fixture-parked-ct" "$fixture" --parked --current-thread
    view "$fixture-trees" "$fixture" --trees --leak
    wait_views
    for run in parked parked-ct; do
        name=$fixture-$run
        read -r rc _ < <(tail -1 "$WORK/$name.ticks")
        check "$fixture --$run: top -b -n 7 --json: exit 0, 7 frames" \
            sh -c "test '$rc' = 0 && test \$(wc -l < '$WORK/$name.json') = 7" || diag < "$WORK/$name.err"
        result=$(parked_check "$WORK/$name.json" "$WORK/$name.ticks" 2> "$WORK/$name.check")
        diag < "$WORK/$name.check"
        check "$fixture --$run: every parked group's count at its PARK line, the lost waker warned, the busy tasks' CPU share as /proc's ($result)" \
            test "$result" = ok
    done
    for run in trees trees-ct; do
        name=$fixture-$run
        read -r rc _ < <(tail -1 "$WORK/$name.ticks")
        check "$fixture --$run: exit 0, 7 frames" sh -c "test '$rc' = 0 && test \$(wc -l < '$WORK/$name.json') = 7" ||
            diag < "$WORK/$name.err"
        result=$(trees_check "$WORK/$name.json" "$version" 2>&1)
        check "$fixture --$run: blocking at its BLOCK line, starved_waiter starved, big_state $([ $version = current ] && echo boxed || echo large), the leaked_waiter tasks a leak ($result)" \
            test "$result" = ok
    done
done

# the text frame: its header and rows, the workers of a current-thread runtime
start_fixture tokio_current 30 --parked --current-thread
wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/tokio_current.stdout"
run text top -p "$FIXTURE_PID" -b -n 2 -i 0.5
stop_fixture
check "text: exit 0, two frames, the header's lines" \
    sh -c "test $RC = 0 && test \$(grep -c '^taskspy top: pid $FIXTURE_PID, tokio 1\.54\.1, frame' '$WORK/text.out') = 2 &&
           grep -q '^tasks: 108 (' '$WORK/text.out' && grep -q '^thread tid $FIXTURE_PID .*(block_on): ' '$WORK/text.out' &&
           grep -q '^global queue [0-9]*; blocking threads [0-9]* ([0-9]* idle)$' '$WORK/text.out' &&
           grep -q '^cpu: [0-9.]*% of one CPU' '$WORK/text.out'" || diag < "$WORK/text.out"
check "text: park_sleep's row (50 idle, at nap's PARK line), the lost waker's row and warning line" \
    sh -c "grep -Eq '^ +50 +50 +0 +0 .* -  +tokio_fixture::parked::park_sleep \| tokio_fixture::parked::nap @ parked.rs:$(mark_line PARK:nap parked.rs) \| tokio::time::sleep::Sleep \(deadline in' '$WORK/text.out' &&
           grep -Eq '^ +1 +1 +0 +0 .* lost-waker +tokio_fixture::parked::park_forever ' '$WORK/text.out' &&
           grep -q '^  lost-waker: task [0-9]* at tokio_fixture::parked::park_forever @ parked.rs:$(mark_line PARK:park_forever parked.rs): This task has lost its waker' '$WORK/text.out'"

# ---- errors ----------------------------------------------------------------------------------------------------
run nosuch top -p 4194304 -b -n 1
check "no such process: exit 1, one line" sh -c "test $RC = 1 && test \$(wc -l < '$WORK/nosuch.err') = 1 && grep -q 'no such process: 4194304' '$WORK/nosuch.err'"
run nopid top -b
check "no -p: exit 2, one line" sh -c "test $RC = 2 && grep -q 'give -p PID' '$WORK/nopid.err'"
run jsonscreen top -p 1 --json
check "--json without -b: exit 2, one line" sh -c "test $RC = 2 && grep -q 'give it with -b' '$WORK/jsonscreen.err'"
run notokio top -p $$ -b -n 1
check "a process without tokio: exit 1, one line naming what is missing" \
    sh -c "test $RC = 1 && test \$(wc -l < '$WORK/notokio.err') = 1 && grep -q 'no tokio runtime' '$WORK/notokio.err'"
finish
