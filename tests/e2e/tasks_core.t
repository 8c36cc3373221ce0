#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tasks_core.t: `taskspy tasks --core` (issue 41), every task's async backtrace read from a core dump.
#   gcore    the tokio fixture's --parked mode on tokio 1.24 (Debian) and on the current tokio, stopped
#            (SIGSTOP) around a live dump and gdb's gcore, then resumed: the core's dump has the same tasks (ids),
#            states, roots, frames, leaves and details as the live one (a Sleep's deadline within the seconds the
#            core took to be written: it is counted from the core file's time), the same workers and the same
#            folded file; its text the same groups
#   crash    the same fixture with TOKIO_FIXTURE_ABORT_WHEN: after a live dump the test creates the file it names,
#            a busy task calls abort() inside its next poll, and the kernel writes the core (core_pattern: a
#            plain name, written in the fixture's directory; a pattern that pipes to a program or names another
#            directory is set to this test's directory for the run, as root, and put back; else these checks are
#            skipped, and said so). Every parked task as in the live dump before the crash; the aborting task
#            running, with its worker's native stack from abort() out through the task's poll
#   what the core cannot answer: the crashing thread's stack segment emptied in a copy of the core (the kernel
#            leaves a segment empty when it does not save it): one line says so, the tasks are all shown; a
#            core whose registers carry no thread pointer (an old gdb's): threads listed through libthread_db
#            over the core, the same dump; a program moved away: one line asking for --exe, and --exe reads it
#   bad cores truncated, another program's (--exe of another build), not a core, a 32-bit core: one line, exit 1
source "$(dirname "$0")/lib/tap.sh"
plan 28

# same_dump LIVE_JSON CORE_JSON [SKIP_ROOT]: "ok", or what differs between two dumps: tasks by id with their state,
# root, frames, leaf and detail (a deadline within 30 s: the core's is counted from its file's time), the workers;
# tasks whose root contains SKIP_ROOT are left out (they ran between the two reads)
same_dump() {
    python3 - "$1" "$2" "${3:-}" << 'EOF'
import json, re, sys
live, core, skip = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
bad = []
def tasks(d):
    return {t["id"]: t for t in d["tasks"] if not (skip and skip in (t["root"] or ""))}
a, b = tasks(live), tasks(core)
if set(a) != set(b):
    bad.append(f"ids: {len(a)} live, {len(b)} in the core; only live {sorted(set(a) - set(b))[:5]}, "
               f"only core {sorted(set(b) - set(a))[:5]}")
def deadline(detail):
    m = re.match(r"deadline in (-?[0-9.]+) (s|ms)$", detail or "")
    return None if not m else float(m.group(1)) * (1 if m.group(2) == "s" else 1e-3)
for i in sorted(set(a) & set(b)):
    x, y = a[i], b[i]
    for key in ("state", "root", "frames", "leaf", "unwakeable"):
        if x[key] != y[key]:
            bad.append(f"task {i} {key}: {json.dumps(x[key])[:200]} live, {json.dumps(y[key])[:200]} in the core")
    dx, dy = deadline(x["detail"]), deadline(y["detail"])
    if (dx is None) != (dy is None) or (dx is None and x["detail"] != y["detail"]) or \
            (dx is not None and not -1 <= dx - dy <= 30):
        bad.append(f"task {i} detail: {x['detail']!r} live, {y['detail']!r} in the core")
ws = lambda d: sorted((w["tid"], w["index"], w["task"], w["local_queue"]) for w in d["workers"])
if not skip and ws(live) != ws(core):
    bad.append(f"workers: {ws(live)} live, {ws(core)} in the core")
if len(a) < 100:
    bad.append(f"only {len(a)} tasks")
print("ok" if not bad else "; ".join(bad[:4]))
EOF
}

# groups TEXT: the text dump's groups (the worker lines, a deadline's numbers and a running task's native stack,
# which a live dump does not read, left out)
# (a running task's native stack, "    at FUNCTION (FILE:LINE)" under a group of one, is left out: the live dump
# reads it from the stopped thread, the core's from the dump's registers, and the two need not stop at one frame)
groups() {
    sed -n '/^$/,$p' "$1" | sed -E 's/\(deadline in [^)]*\)/(deadline)/' | grep -v '^    at '
}

# parked_and_polled STDOUT: the parked fixture writing STDOUT has spawned every task and run a second since (its
# second "progress" line): every parked task has been polled to its await. (Right after the "parked" line some
# may not be yet: the core of a fixture stopped then, under load, showed no task at park_sleep.)
parked_and_polled() {
    wait_for 20 grep -qs '^tokio_fixture parked pid' "$1" &&
        wait_for 20 sh -c "test \$(grep -c '^progress' '$1') -ge 2"
}
# core_of PID DIR: run gcore on PID, the core in DIR/core.PID
core_of() { gcore -o "$2/core" "$1" > "$2/gcore.log" 2>&1; }

declare -A gcore_core
for fixture in tokio_plain tokio_current; do
    mkdir -p "$WORK/$fixture"
    start_fixture "$fixture" 120 --parked
    parked_and_polled "$WORK/$fixture.stdout"
    kill -STOP "$FIXTURE_PID"
    wait_for 5 sh -c "test \"\$(cut -d' ' -f3 /proc/$FIXTURE_PID/stat)\" = T"
    "$TASKSPY" tasks -p "$FIXTURE_PID" --json -o "$WORK/$fixture/live.folded" > "$WORK/$fixture/live.json" 2> /dev/null
    "$TASKSPY" tasks -p "$FIXTURE_PID" > "$WORK/$fixture/live.txt" 2> /dev/null
    t0=$(date +%s.%N)
    core_of "$FIXTURE_PID" "$WORK/$fixture"
    gcore_secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    core="$WORK/$fixture/core.$FIXTURE_PID"
    gcore_core[$fixture]=$core
    kill -CONT "$FIXTURE_PID"
    stop_fixture
    check "$fixture: gcore of the stopped fixture wrote a core (${gcore_secs} s, $(du -m "$core" 2> /dev/null | cut -f1) MB)" \
        test -s "$core" || diag < "$WORK/$fixture/gcore.log"
    run "$fixture-core" tasks --core "$core" --json -o "$WORK/$fixture/core.folded"
    check "$fixture: tasks --core exit 0 (${SECS} s), nothing the core could not answer (stderr: the -o line alone)" \
        sh -c "test $RC -eq 0 && ! grep -v '^taskspy: wrote ' '$WORK/$fixture-core.err'" || diag < "$WORK/$fixture-core.err"
    result=$(same_dump "$WORK/$fixture/live.json" "$WORK/$fixture-core.out")
    check "$fixture: the core's tasks, states, frames, leaves and workers are the live dump's ($result)" \
        test "$result" = ok
    check "$fixture: the same folded file (one count per task at its await)" \
        cmp -s "$WORK/$fixture/live.folded" "$WORK/$fixture/core.folded"
    "$TASKSPY" tasks --core "$core" > "$WORK/$fixture/core.txt" 2> /dev/null
    groups "$WORK/$fixture/live.txt" > "$WORK/$fixture/live.groups"
    groups "$WORK/$fixture/core.txt" > "$WORK/$fixture/core.groups"
    check "$fixture: the text dump's groups are the live dump's ($(grep -c '^[0-9]* tasks\? ' "$WORK/$fixture/core.groups") groups)" \
        sh -c "test -s '$WORK/$fixture/live.groups' && diff '$WORK/$fixture/live.groups' '$WORK/$fixture/core.groups' >&2"
done

# ---- a crash inside a task: the kernel's core --------------------------------------------------------------------
pattern=$(cat /proc/sys/kernel/core_pattern)
restore_pattern=""
no_crash_core=""
case "$pattern" in
    \|* | */*)
        if [ "$(id -u)" = 0 ] && echo "$WORK/crashes/core.%p" > /proc/sys/kernel/core_pattern 2> /dev/null; then
            restore_pattern=$pattern
            trap 'echo "$restore_pattern" > /proc/sys/kernel/core_pattern; cleanup_tap' EXIT
        else
            no_crash_core="core_pattern '$pattern' does not write a file here, and cannot be set (not root)"
        fi ;;
esac
( ulimit -c unlimited ) 2> /dev/null || no_crash_core="the core size limit cannot be raised (ulimit -c unlimited)"
# skip N REASON: N checks that cannot run here, said so (TAP's SKIP: not counted as passed)
skip() { local i; for ((i = 0; i < $1; i++)); do TAP_N=$((TAP_N + 1)); echo "ok $TAP_N # SKIP $2"; done; }
mkdir -p "$WORK/crashes"
crash_core=""
for fixture in tokio_plain tokio_current; do
    if [ -n "$no_crash_core" ]; then
        skip 4 "$fixture crash: $no_crash_core"
        continue
    fi
    mkdir -p "$WORK/crashes/$fixture"
    ( cd "$WORK/crashes/$fixture" && ulimit -c unlimited &&
      TOKIO_FIXTURE_ABORT_WHEN="$WORK/crashes/$fixture.abort" exec "$FIXTURES/$fixture" --parked ) \
        > "$WORK/crash-$fixture.stdout" 2>&1 &
    pid=$!
    BACKGROUND_PIDS+=("$pid")
    parked_and_polled "$WORK/crash-$fixture.stdout"
    "$TASKSPY" tasks -p "$pid" --json > "$WORK/crashes/$fixture.live.json" 2> /dev/null
    touch "$WORK/crashes/$fixture.abort"      # the busy task aborts at its next poll
    wait "$pid" 2> /dev/null
    status=$?
    core=$(ls "$WORK/crashes/$fixture"/core* "$WORK/crashes"/core."$pid" 2> /dev/null | head -1)
    check "$fixture: abort() inside a task: SIGABRT (status $status), the kernel's core written (core_pattern '$pattern'${restore_pattern:+, set to the directory of this test for the run})" \
        sh -c "test $status = 134 && grep -q '^aborting in busy_yield' '$WORK/crash-$fixture.stdout' && test -s '$core'"
    run "$fixture-crash" tasks --core "$core" --json
    check "$fixture: tasks --core on the crash's core: exit 0, nothing the core could not answer (stderr empty)" \
        sh -c "test $RC -eq 0 && ! test -s '$WORK/$fixture-crash.err'" || diag < "$WORK/$fixture-crash.err"
    result=$(same_dump "$WORK/crashes/$fixture.live.json" "$WORK/$fixture-crash.out" busy_yield)
    check "$fixture: every parked task as in a live dump before the crash ($result)" test "$result" = ok
    stack=$(python3 - "$WORK/$fixture-crash.out" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
running = [t for t in d["tasks"] if t["state"] == "running" and "busy_yield" in (t["root"] or "")]
if not running:
    print("no busy task running"); sys.exit()
for t in running:
    names = [f["function"] or "" for f in t.get("stack", [])]
    def at(pred):
        return next((i for i, n in enumerate(names) if pred(n)), None)
    abort, crash, busy = at(lambda n: n == "abort"), at(lambda n: n.endswith("crash_in_task")), \
        at(lambda n: "busy_yield" in n)
    # (cut where tokio polls the task, as a live task's stack is: its outermost frame is the task's own)
    if None not in (abort, crash, busy) and abort < crash < busy and busy == len(names) - 1:
        print(f"ok task {t['id']}: {len(names)} frames, abort #{abort}, crash_in_task #{crash}, busy_yield #{busy}")
        sys.exit()
print("no stack through abort, crash_in_task and busy_yield, cut at the task: " +
      "; ".join(str([f["function"] for f in t.get("stack", [])][:12]) for t in running))
EOF
)
    check "$fixture: the aborting task running, with its worker's native stack innermost first ($stack)" \
        sh -c "case '$stack' in ok*) true ;; *) false ;; esac"
    [ "$fixture" = tokio_current ] && crash_core=$core
done

# ---- what the core cannot answer -----------------------------------------------------------------------------------
# the crashing thread's stack segment emptied (as the kernel writes a segment it did not save)
[ -n "$crash_core" ] && python3 - "$crash_core" "$WORK/nostack.core" << 'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", d, 0x20)
phnum, = struct.unpack_from("<H", d, 0x38)
phdrs = [phoff + 56 * i for i in range(phnum)]
note = next(p for p in phdrs if struct.unpack_from("<I", d, p)[0] == 4)
off, size = struct.unpack_from("<Q", d, note + 8)[0], struct.unpack_from("<Q", d, note + 32)[0]
at, rsp = off, None
while at < off + size and rsp is None:
    namesz, descsz, ntype = struct.unpack_from("<III", d, at)
    desc = at + 12 + (namesz + 3) // 4 * 4
    if ntype == 1:                       # NT_PRSTATUS: pr_reg at 112, rsp its 20th register
        rsp = struct.unpack_from("<Q", d, desc + 112 + 19 * 8)[0]
    at = desc + (descsz + 3) // 4 * 4
for p in phdrs:
    ptype, vaddr, memsz = struct.unpack_from("<I", d, p)[0], struct.unpack_from("<Q", d, p + 16)[0], \
        struct.unpack_from("<Q", d, p + 40)[0]
    if ptype == 1 and vaddr <= rsp < vaddr + memsz:
        struct.pack_into("<Q", d, p + 32, 0)
open(sys.argv[2], "wb").write(d)
EOF
if [ -z "$crash_core" ]; then
    skip 1 "no crash core: ${no_crash_core:-none written}"
else
    run nostack tasks --core "$WORK/nostack.core" --json
    n_all=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$WORK/tokio_current-crash.out")
    n_now=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$WORK/nostack.out" 2> /dev/null)
    check "a core that did not save the crashing thread's stack: exit 0, all $n_all tasks shown (${n_now:-none}), one line saying so" \
        sh -c "test $RC -eq 0 && test '$n_all' = '${n_now:-x}' && test \$(wc -l < '$WORK/nostack.err') = 1 &&
               grep -q '^taskspy: the core did not save [0-9]* page.* anonymous memory' '$WORK/nostack.err'" ||
        diag < "$WORK/nostack.err"
fi

# no thread pointer in the registers (gdb before 8): glibc's thread list read from the core through libthread_db
python3 - "${gcore_core[tokio_current]}" "$WORK/nofsbase.core" << 'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", d, 0x20)
phnum, = struct.unpack_from("<H", d, 0x38)
for p in (phoff + 56 * i for i in range(phnum)):
    if struct.unpack_from("<I", d, p)[0] != 4:
        continue
    off, size = struct.unpack_from("<Q", d, p + 8)[0], struct.unpack_from("<Q", d, p + 32)[0]
    at = off
    while at < off + size:
        namesz, descsz, ntype = struct.unpack_from("<III", d, at)
        desc = at + 12 + (namesz + 3) // 4 * 4
        if ntype == 1:                   # NT_PRSTATUS: fs_base is pr_reg's 22nd register
            struct.pack_into("<Q", d, desc + 112 + 21 * 8, 0)
        at = desc + (descsz + 3) // 4 * 4
open(sys.argv[2], "wb").write(d)
EOF
run nofsbase tasks --core "$WORK/nofsbase.core" --json
result=$(same_dump "$WORK/tokio_current/live.json" "$WORK/nofsbase.out")
check "registers without fs_base: threads found through libthread_db over the core, the same dump ($result)" \
    sh -c "test $RC -eq 0 && test '$result' = ok" || diag < "$WORK/nofsbase.err"

# a program moved away: --exe names it
cp "$FIXTURES/tokio_current" "$WORK/moved_fixture"
"$WORK/moved_fixture" --parked > "$WORK/moved.stdout" 2>&1 &
FIXTURE_PID=$!
BACKGROUND_PIDS+=("$FIXTURE_PID")
parked_and_polled "$WORK/moved.stdout"
kill -STOP "$FIXTURE_PID"
core_of "$FIXTURE_PID" "$WORK"
kill -CONT "$FIXTURE_PID"
stop_fixture
mv "$WORK/moved_fixture" "$WORK/moved_fixture.elsewhere"
run moved tasks --core "$WORK/core.$FIXTURE_PID"
check "the core's program not where it was: exit 1, one line asking for --exe" \
    sh -c "test $RC -eq 1 && test \$(wc -l < '$WORK/moved.err') = 1 && grep -q 'moved_fixture.*give its file with --exe' '$WORK/moved.err'" ||
    diag < "$WORK/moved.err"
run moved_exe tasks --core "$WORK/core.$FIXTURE_PID" --exe "$WORK/moved_fixture.elsewhere"
check "--exe PROGRAM: read with it ($(grep -c '^[0-9]* tasks' "$WORK/moved_exe.out") groups)" \
    sh -c "test $RC -eq 0 && grep -q 'park_sleep @ parked.rs' '$WORK/moved_exe.out'" || diag < "$WORK/moved_exe.err"

# ---- bad cores -------------------------------------------------------------------------------------------------
one_line_exit1() { test "$RC" -eq 1 && test "$(wc -l < "$WORK/$1.err")" = 1 && grep -q "$2" "$WORK/$1.err"; }
core=${gcore_core[tokio_plain]}
head -c 3000000 "$core" > "$WORK/truncated.core"
run truncated tasks --core "$WORK/truncated.core"
check "a truncated core: exit 1, one line" one_line_exit1 truncated 'truncated: its segments need' ||
    diag < "$WORK/truncated.err"
run other tasks --core "$core" --exe "$FIXTURES/tokio_current"
check "another program's core (--exe of another build): exit 1, one line naming both builds" \
    one_line_exit1 other "tokio_current (build id [0-9a-f]*) is not the program of .*tokio_plain, build id [0-9a-f]*)" ||
    diag < "$WORK/other.err"
run notcore tasks --core "$FIXTURES/tokio_current"
check "not a core (an executable): exit 1, one line" one_line_exit1 notcore 'is not a core file but an ELF' ||
    diag < "$WORK/notcore.err"
run notelf tasks --core "$WORK/tokio_current/live.json"
check "not a core (a text file): exit 1, one line" one_line_exit1 notelf 'is not a core file (not ELF)'
# a 32-bit core's header: ELFCLASS32, ET_CORE, EM_386
python3 -c "import struct, sys
h = b'\x7fELF' + bytes([1, 1, 1]) + bytes(9) + struct.pack('<HHIIIIIHHHHHH', 4, 3, 1, 0, 52, 0, 0, 52, 32, 1, 0, 0, 0)
open(sys.argv[1], 'wb').write(h + struct.pack('<IIIIIIII', 4, 84, 0, 0, 0, 0, 0, 0) + bytes(64))" "$WORK/core32"
run core32 tasks --core "$WORK/core32"
check "a 32-bit core: exit 1, one line" one_line_exit1 core32 'a 32-bit core' || diag < "$WORK/core32.err"
run both tasks --core "$WORK/core32" -p 1
check "-p and --core together: usage error (exit 2)" test "$RC" -eq 2

finish
