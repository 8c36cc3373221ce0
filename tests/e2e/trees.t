#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# trees.t: async backtraces as trees (issue 38) on the tokio fixture's --trees mode (tests/fixtures/tokio/src/
# trees.rs: tasks that join, select, supervise a JoinSet, await FuturesUnordered, block their worker), on tokio 1.24
# (Debian) and the current tokio:
#   dump     taskspy tasks --json: every pending branch of each join!/select!/try_join! (tokio's and the futures
#            crate's), join_all, FuturesUnordered/Ordered, select_all under the frame awaiting it, the finished and
#            disabled branches left out, each with its leaf; every await at the TREE: line the program wrote, the
#            macro named; no line in a macro's own source; the JoinSet naming its children's ids; the task blocking
#            its worker running, its stack through std::thread::sleep at the BLOCK: line; the text drawn as a tree;
#            -o FOLDED splitting each task's count among its branches
#   truth    tokio's own Handle::dump() (the taskdump build): every chain of the fixture's frames it reports (the
#            macro's closure left out, as taskspy joins it to its function) is one of taskspy's branches
#   record   a CPU recording and the wait profiles (snapshots, events) of the same program, and of the axum server
#            (a select! in its connection handler) under wrk: no await point in a macro's source; the burners' and
#            handle_connection's awaits at their invocation lines with the macro named; a select!'s wait split
#            evenly among its branches
#   trace    a Chrome trace of tokio 1.24 without markers (-F 299): every poll under a task root, none under
#            [task entry unknown]
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TREES_RS=$ROOT/tests/fixtures/tokio/src/trees.rs
plan 28

# the lines of the TREE: and BLOCK: comments, as "name line" pairs for the checker
marks() { grep -no '// \(TREE\|BLOCK\):[a-z_]*$' "$TREES_RS" | sed 's|^\([0-9]*\):// \([A-Z]*:.*\)|\2 \1|'; }
marks > "$WORK/marks"

# dump_check JSON: the trees of a --trees dump against the fixture's marks; prints "ok" or what differs
dump_check() {
    python3 - "$1" "$WORK/marks" << 'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
marks = dict((n, int(l)) for n, l in (x.split() for x in open(sys.argv[2])))
line = {n[5:]: l for n, l in marks.items() if n.startswith("TREE:")}
block = {n[6:]: l for n, l in marks.items() if n.startswith("BLOCK:")}
P = "tokio_fixture::trees::"
MACRO_FILES = {"select.rs", "join.rs", "try_join.rs", "select_mod.rs", "join_mod.rs"}
bad = []
def nodes(n):
    yield n
    for c in n["children"]:
        yield from nodes(c)
def short(f):
    return f[len(P):].replace("with_futures::", "") if f and f.startswith(P) else f
def branch(c):   # a child as (function, leaf): where a branch is, what it waits for
    while c["function"] is None and len(c["children"]) == 1:
        c = c["children"][0]
    leaf = c
    while leaf["children"]:
        leaf = leaf["children"][0]
    return (short(c["function"]) if c["function"] else "", (leaf["leaf"] or "").split("<")[0])
by_root = {}
for t in d["tasks"]:
    by_root.setdefault(short(t["root"]), []).append(t)
    for n in nodes(t["tree"]) if t["tree"] else []:
        if n["file"] in MACRO_FILES:
            bad.append(f"task {t['id']}: a frame at {n['file']}:{n['line']} ({n['function']})")
S, N, O, M = "tokio::time::sleep::Sleep", "tokio::sync::notify::Notified", "tokio::sync::oneshot::Receiver", \
             "tokio::sync::mpsc::chan::Rx"
expect = {   # root -> (count, macro, [branches as (function, "" for a leaf alone; leaf type)], futures crate)
    "join_wait": (2, "join!", [("nap", S), ("wait_oneshot", O), ("wait_notify", N)], False),
    "try_join_wait": (2, "try_join!", [("nap_ok", S), ("oneshot_ok", O)], False),
    "select_wait": (3, "select!", [("tokio::sync::mpsc::bounded::{impl#0}::recv", M), ("wait_notify", N), ("nap", S)], False),
    "futures_select_wait": (2, "select!", [("nap", S), ("wait_notify", N), ("", O)], True),
    "futures_join_wait": (2, "join!", [("nap", S), ("wait_notify", N)], True),
    "join_all_wait": (2, None, [("maybe_nap", S)] * 2, True),
    "unordered_wait": (2, None, [("maybe_nap", S)] * 3, True),
    "ordered_wait": (1, None, [("maybe_nap", S)] * 2, True),
    "select_all_wait": (2, None, [("maybe_nap", S)] * 3, True),
}
for root, (count, macro, branches, _) in expect.items():
    ts = by_root.get(root, [])
    if len(ts) != count:
        bad.append(f"{root}: {len(ts)} tasks, want {count}")
    for t in ts:
        tr = t["tree"]
        got = sorted(branch(c) for c in tr["children"]) if tr else None
        want = sorted(branches)
        if t["state"] != "idle" or not tr or short(tr["function"]) != root or tr["line"] != line[root] or \
                tr["file"] != "trees.rs" or tr["macro"] != macro or tr["macro_line"] or got != want:
            bad.append(f"{root} task {t['id']}: {json.dumps(tr)[:400]}; branches {got}, want {want}")
            break
        first = [(short(f["function"]), f["line"]) for f in t["frames"]]
        if not first or first[0] != (root, line[root]):
            bad.append(f"{root}: frames {first}")
# the JoinSet's leaf names the ids of the three join_set_child tasks
children = sorted(t["id"] for t in by_root.get("join_set_child", []))
for t in by_root.get("supervise", []):
    m = re.match(r"waits for tasks ([0-9, ]+)$", t["detail"] or "")
    if not (t["leaf"] or "").startswith("tokio::task::join_set::JoinSet") or not m or \
            sorted(int(x) for x in m.group(1).split(", ")) != children or len(children) != 3:
        bad.append(f"supervise: {t['leaf']} ({t['detail']}), join_set_child tasks {children}")
# the task blocking its worker: running, its stack through std::thread::sleep at the BLOCK: line
for t in by_root.get("block_worker", []):
    st = [(f["function"], f["line"]) for f in t.get("stack", [])]
    fns = [f for f, _ in st]
    if t["state"] != "running" or not any("std::thread" in f and "sleep" in f for f in fns) or \
            (P + "block_worker", block["block_worker"]) not in st:
        bad.append(f"block_worker: {t['state']}, stack {st}")
print("ok" if not bad else "; ".join(bad[:4]))
EOF
}

for fixture in tokio_plain tokio_current; do
    start_fixture "$fixture" 120 --trees
    wait_for 20 grep -q '^tokio_fixture trees pid' "$WORK/$fixture.stdout"
    sleep 0.5           # (the tasks reach their awaits)
    # a dump that caught block_worker on a CPU between its sleeps (a running thread's native stack cannot be read:
    # a clean-clone run's 'block_worker: running, stack []') is taken again, up to 5 times
    for try in 1 2 3 4 5; do
        "$TASKSPY" tasks -p "$FIXTURE_PID" --json -o "$WORK/$fixture.folded" > "$WORK/$fixture.json" 2> "$WORK/$fixture.err"
        rc=$?
        result=$(dump_check "$WORK/$fixture.json" 2>&1)
        case $result in *"block_worker: running"*) ;; *) break ;; esac
    done
    check "$fixture --trees: tasks --json -o FOLDED: exit 0" test $rc -eq 0
    diag < "$WORK/$fixture.err"
    check "$fixture: every pending branch under its frame, at the program's lines, macros named, leaves, JoinSet ids, the blocked worker's stack ($result)" \
        test "$result" = ok
    check "$fixture: JSON schema 2" python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['schema'] != 2)" "$WORK/$fixture.json"
    # -o: each task counts the same (the stderr line says how much), split among its branches
    per_task=$(sed -n 's/.*each task counts \([0-9]*\),.*/\1/p' "$WORK/$fixture.err")
    tasks_n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$WORK/$fixture.json")
    select_line=$(grep -n '// TREE:select_wait$' "$TREES_RS" | cut -d: -f1)
    branch_counts=$(grep "^task: tokio_fixture::trees::select_wait;" "$WORK/$fixture.folded" | awk '{print $NF}' | sort -u | tr '\n' ' ')
    check "$fixture: -o FOLDED: each of $tasks_n tasks counts ${per_task:-?} ($(samples "$WORK/$fixture.folded") in all), split: each of select_wait's 3 branches holds 3 tasks x ${per_task:-?}/3 (${branch_counts% })" \
        sh -c "test -n '$per_task' && test \$(( $tasks_n * ${per_task:-0} )) = '$(samples "$WORK/$fixture.folded")' &&
               test '$branch_counts' = '$(( 3 * ${per_task:-0} / 3 )) ' &&
               grep -q '^task: tokio_fixture::trees::select_wait;tokio_fixture::trees::select_wait @ trees.rs:$select_line (select!);' '$WORK/$fixture.folded'"
    "$TASKSPY" tasks -p "$FIXTURE_PID" -o "$WORK/$fixture.svg" > "$WORK/$fixture.txt" 2>&1
    check "$fixture: -o SVG: valid XML, the split counts shown in tasks (a third of a task at a select! branch)" \
        sh -c "xmllint --noout '$WORK/$fixture.svg' && grep -q 'select_wait @ trees.rs:$select_line (select!)' '$WORK/$fixture.svg' &&
               grep -q '1.000 tasks' '$WORK/$fixture.svg'"
    check "$fixture: text: select_wait's tree drawn with its branches" \
        sh -c "grep -A7 '^3 tasks idle' '$WORK/$fixture.txt' | grep -q 'select_wait @ trees.rs:$select_line (select!)' &&
               grep -A7 '^3 tasks idle' '$WORK/$fixture.txt' | grep -q '├─ tokio::sync::mpsc::bounded' &&
               grep -A7 '^3 tasks idle' '$WORK/$fixture.txt' | grep -q '└─ tokio_fixture::trees::nap @ trees.rs'"

    # the CPU profile and both wait profiles of the same program: no await point in a macro's own source
    "$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 499 -o "$WORK/$fixture.cpu.folded" --wait-output "$WORK/$fixture.wait.folded" \
        > /dev/null 2> "$WORK/$fixture.rec.err"
    check "$fixture: record -d 2 with snapshot waits: exit 0" test $? -eq 0
    burner_line=$(grep -n '// TREE:select_burner$' "$TREES_RS" | cut -d: -f1)
    join_line=$(grep -n '// TREE:join_burner$' "$TREES_RS" | cut -d: -f1)
    check "$fixture: CPU profile: no await point in a macro file ($(grep -cE ' @ (select|join|try_join|select_mod|join_mod)\.rs:' "$WORK/$fixture.cpu.folded") stacks); the burners' at trees.rs:$burner_line (select!) and :$join_line (join!), their closures joined to them" \
        sh -c "! grep -qE ' @ (select|join|try_join|select_mod|join_mod)\.rs:' '$WORK/$fixture.cpu.folded' &&
               grep -q 'select_burner @ trees.rs:$burner_line (select!);' '$WORK/$fixture.cpu.folded' &&
               grep -q 'join_burner @ trees.rs:$join_line (join!);' '$WORK/$fixture.cpu.folded' &&
               ! grep -qE 'select_burner @ trees.rs:$burner_line \(select!\);([^;]*;)*tokio_fixture::trees::select_burner @' '$WORK/$fixture.cpu.folded'"
    # snapshots: each select_wait task's time split evenly among its three branches, the three counted once
    split=$(python3 - "$WORK/$fixture.wait.folded" << 'EOF'
import collections, sys
by = collections.defaultdict(int)
for l in open(sys.argv[1]):
    stack, n = l.rsplit(" ", 1)
    if stack.startswith("task: tokio_fixture::trees::select_wait;") and stack.endswith("[suspended]"):
        by[stack.split(";")[2]] += int(n)
v = sorted(by.values())
print(len(v), v[0] if v else 0, v[-1] if v else 0)
EOF
)
    read -r n_branches low high <<< "$split"
    secs=$(recorded_secs "$WORK/$fixture.rec.err")
    check "$fixture: snapshot waits: select_wait's time split evenly among its 3 branches ($n_branches branches, $low-$high us), each about 3 tasks x $secs s / 3" \
        sh -c "test '$n_branches' = 3 && test \$(( $high - $low )) -le 3000 &&
               awk -v h='$high' -v s='$secs' 'BEGIN { exit !(h > 0.8e6 * s && h <= 1.02e6 * s) }'"
    check "$fixture: snapshot waits: no await point in a macro file" \
        sh -c "! grep -qE ' @ (select|join|try_join|select_mod|join_mod)\.rs:' '$WORK/$fixture.wait.folded'"
    stop_fixture
done

# the events-mode wait profile (stacks unwound at waker registrations, symbolized as CPU samples): no await point in
# a macro's source, the selects' registrations at their invocation line
start_fixture tokio_plain 60 --trees
wait_for 20 grep -q '^tokio_fixture trees pid' "$WORK/tokio_plain.stdout"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -o "$WORK/events.cpu.folded" --wait-mode events --wait-output "$WORK/events.folded" \
    > /dev/null 2> "$WORK/events.err"
check "events mode: exit 0, waits recorded" sh -c "test $? -eq 0 && test -s '$WORK/events.folded'"
diag < "$WORK/events.err"
burner_line=$(grep -n '// TREE:select_burner$' "$TREES_RS" | cut -d: -f1)
check "events mode: no await point in a macro file; select_burner's waits at trees.rs:$burner_line (select!)" \
    sh -c "! grep -qE ' @ (select|join|try_join|select_mod|join_mod)\.rs:' '$WORK/events.folded' &&
           grep -q 'select_burner @ trees.rs:$burner_line (select!)' '$WORK/events.folded'"
stop_fixture

# ---- a select!-based server (axum's handle_connection) under wrk: no await point in a macro's source -------------
# (started here, not by start_fixture: an idle server uses less CPU than its wait for a running fixture asks for)
"$FIXTURES/axum_server" --seconds 20 --sleep-ms 5 > "$WORK/axum_server.stdout" 2> "$WORK/axum_server.stderr" &
FIXTURE_PID=$!
BACKGROUND_PIDS+=("$FIXTURE_PID")
wait_for 20 grep -q '^axum_fixture pid [0-9]* port [0-9]*' "$WORK/axum_server.stdout"
port=$(sed -n 's/^axum_fixture pid [0-9]* port \([0-9]*\).*/\1/p' "$WORK/axum_server.stdout")
wrk -t1 -c4 -d4s "http://127.0.0.1:$port/" > /dev/null 2>&1 &
BACKGROUND_PIDS+=($!)
wrk -t1 -c4 -d4s "http://127.0.0.1:$port/sleep" > /dev/null 2>&1 &
BACKGROUND_PIDS+=($!)
sleep 0.5
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 499 -o "$WORK/axum.folded" --wait-mode events --wait-output "$WORK/axum-wait.folded" \
    > /dev/null 2> "$WORK/axum.err"
check "axum: record exit 0" test $? -eq 0
in_macro=$(cat "$WORK/axum.folded" "$WORK/axum-wait.folded" | grep -cE ' @ (select|join|try_join|select_mod|join_mod)\.rs:')
named=$(grep -c 'axum::serve::handle_connection @ mod\.rs:[0-9]* (select!);' "$WORK/axum.folded")
check "axum: CPU and wait profiles without an await point in a macro file ($in_macro stacks); handle_connection's at its select!'s line ($named stacks)" \
    sh -c "test '$in_macro' = 0 && test '$named' -gt 0"
stop_fixture

# ---- ground truth: tokio's own Handle::dump() ----------------------------------------------------------------
start_fixture tokio_current_taskdump 120 --trees --print-ids
wait_for 20 grep -q '^tokio_fixture trees pid' "$WORK/tokio_current_taskdump.stdout"
sleep 0.5
kill -USR1 "$FIXTURE_PID"
wait_for 30 grep -q '^dump end' "$WORK/tokio_current_taskdump.stdout"
"$TASKSPY" tasks -p "$FIXTURE_PID" --json > "$WORK/truth.json" 2> "$WORK/truth.err"
check "taskdump build --trees: tasks --json exit 0" test $? -eq 0
stop_fixture
truth=$(python3 - "$WORK/truth.json" "$WORK/tokio_current_taskdump.stdout" << 'EOF'
import json, re, sys
MACRO_FILES = ("/src/macros/select.rs", "/src/macros/join.rs", "/src/macros/try_join.rs", "/async_await/select_mod.rs",
               "/async_await/join_mod.rs")
ours = {t["id"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
traces, cur = {}, None
for line in open(sys.argv[2]):
    m = re.match(r"dump task (\d+)$", line)
    if m:
        cur = int(m.group(1)); traces[cur] = []; continue
    if line.startswith("dump backtrace") and cur is not None:
        traces[cur].append([]); continue
    m = re.match(r"dump frame (tokio_fixture::\S+) (\S+):(\d+)$", line)
    if m and cur is not None and traces[cur]:
        if m.group(2).endswith(MACRO_FILES):
            continue        # the macro's closure: taskspy joins it to the function that invoked the macro
        f = (re.sub(r"::\{\{closure\}\}.*$|::h[0-9a-f]{16}$", "", m.group(1)), int(m.group(3)))
        chain = traces[cur][-1]
        if not chain or chain[-1] != f:
            chain.append(f)
def paths(n, above=()):
    here = above + (((n["function"], n["line"]),) if n["function"] and n["function"].startswith("tokio_fixture::") else ())
    if not n["children"]:
        yield here
    for c in n["children"]:
        yield from paths(c, here)
tasks = chains = matched = trees = 0
shown = []
for tid, chains_of in traces.items():
    t = ours.get(tid)
    chains_of = [list(reversed(c)) for c in chains_of if c]
    if not chains_of or not t or t["state"] != "idle" or not t["tree"] or "dump_on_signal" in (t["root"] or "") or \
            (t["root"] or "").endswith(("_burner", "block_worker")):
        continue     # (the task that took tokio's dump, and those that run between its dump and taskspy's read)
    ps = set(paths(t["tree"]))
    tasks += 1
    trees += len(t["tree"]["children"]) > 1
    for c in chains_of:
        chains += 1
        if tuple(c) in ps:
            matched += 1
        elif len(shown) < 2:
            shown.append(f"task {tid}: tokio's {c} not among {sorted(ps)[:3]}")
print(tasks, trees, chains, matched, "; ".join(shown))
EOF
)
read -r tasks trees chains matched rest <<< "$truth"
check "tokio's own dump: each of its $chains chains of $tasks tasks ($trees of them trees) is one of taskspy's branches ($matched match) $rest" \
    sh -c "test '${tasks:-0}' -ge 15 && test '${trees:-0}' -ge 8 && test '${chains:-0}' -gt '${tasks:-0}' && test '$matched' = '$chains'"

# ---- a Chrome trace of tokio 1.24 without markers: every poll named by its task's root ---------------------------------
start_fixture tokio_plain 60 --wait-tasks
wait_for 20 grep -q '^polls/s' "$WORK/tokio_plain.stdout"
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 299 -o "$WORK/plain.trace.json" > /dev/null 2> "$WORK/trace.err"
check "trace: exit 0" test $? -eq 0
named=$(python3 - "$WORK/plain.trace.json" << 'EOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = d if isinstance(d, list) else d.get("traceEvents", [])
c = collections.Counter(e["name"] for e in ev if e.get("ph") == "X")
print(sum(c.values()), c.get("[task entry unknown]", 0),
      sum(n for k, n in c.items() if k in ("task: tokio_fixture::sleep_waiter", "task: tokio_fixture::yield_waiter")))
EOF
)
read -r polls unknown waiters <<< "$named"
check "trace: every poll under a task root: $unknown of ${polls:-0} under [task entry unknown] (before: 25-35%); the waiter tasks' $waiters polls named" \
    sh -c "test '${polls:-0}' -gt 1000 && test '${unknown:-1}' = 0 && test '${waiters:-0}' -gt 0"
stop_fixture

finish
