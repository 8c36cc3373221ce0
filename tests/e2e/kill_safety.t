#!/usr/bin/env bash
# kill_safety.t: SPEC section 6, "taskspy never leaves a probe behind in the target, even when killed".
# taskspy is SIGKILLed mid-recording with markers attached, on executor_sema (semaphore-gated probes, the
# default way: BPF programs on uprobe_multi links) and executor_memarg (markers as perf samples of tracefs
# uprobe_events in group taskspy_<pid>).
# Sensible afterwards: every probe site in the target's text is its original nop again (it was an int3 while
# recorded, which proves the check can see a probe), the target's polls run at their normal speed (--fast-polls
# makes a uprobe cost dominate: a leftover probe is a >10x slowdown; at least half the rate before recording is required, since a 2-core machine under load varies by 30% on its own), the semaphores are 0, tracefs stays
# mounted where the code mounts it, no taskspy_<pid> group belongs to a live taskspy, and the next
# `taskspy record` removes the dead one's group and still works (task roots). Also: SIGINT writes a whole file.
source "$(dirname "$0")/lib/tap.sh"
plan 21

TRACEFS=/sys/kernel/tracing
[ -w "$TRACEFS/uprobe_events" ] || TRACEFS=/sys/kernel/debug/tracing

# probe_sites PID EXE: "COUNT BYTE" pairs of the first byte at each stapsdt note location in the live process
# (text vaddr == file offset in these gcc-linked PIEs, so runtime address = start of the offset-0 mapping + vaddr)
probe_sites() {
    local pid=$1 exe=$2 base
    base=$(awk -v exe="$exe" '$6 == exe && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$pid/maps")
    [ -n "$base" ] || { echo "no-mapping"; return; }
    readelf -n "$exe" | awk '/Location:/ { sub(",", "", $2); print $2 }' | while read -r loc; do
        dd if="/proc/$pid/mem" bs=1 count=1 skip=$(( 0x$base + loc )) status=none 2>/dev/null | od -An -tx1 | tr -d ' \n'
        echo
    done | sort | uniq -c | awk '{ printf "%s%s*%s", (NR > 1 ? " " : ""), $1, $2 }'
}
# best_rate FILE FROM TO: the highest "work units per second" among lines FROM..TO of FILE
best_rate() {
    sed -n "$2,$3p" "$1" | awk '/^work units per second:/ { if ($5 > m) m = $5 } END { print m + 0 }'
}
lines() { wc -l < "$1"; }
# live_groups: taskspy_<pid> groups in uprobe_events whose pid is a running taskspy started by this script
# (other test runs on the machine may have live groups of their own)
live_groups() {
    grep -o '^p:taskspy_[0-9]*' "$TRACEFS/uprobe_events" 2>/dev/null | sed 's/^p:taskspy_//' | sort -u | while read -r g; do
        [ "$(cat "/proc/$g/comm" 2>/dev/null)" = taskspy ] && [ "$(awk '/^PPid:/ { print $2 }' "/proc/$g/status" 2>/dev/null)" = $$ ] && echo "$g"
    done
}

MARKER_ROUTE=()    # (--debug-marker-records=... for the records below; empty: the default route)
kill_scenario() { # kill_scenario FIXTURE
    local fx=$1 exe="$FIXTURES/$1" out="$WORK/$1.stdout"
    start_fixture "$fx" 60 --fast-polls
    sleep 3.2
    local b0=2 b1 ; b1=$(lines "$out")
    local before_rate; before_rate=$(best_rate "$out" $b0 "$b1")
    local sites_before; sites_before=$(probe_sites "$FIXTURE_PID" "$exe")
    "$TASKSPY" record "${MARKER_ROUTE[@]}" -p "$FIXTURE_PID" -d 60 -o "$WORK/$fx-killed.folded" 2> "$WORK/$fx-killed.err" &
    local rec=$!
    # wait (up to 20 s on a loaded machine) until the probes are in the target's text
    local sites_during="" i
    for i in $(seq 40); do
        sleep 0.5
        sites_during=$(probe_sites "$FIXTURE_PID" "$exe")
        case "$sites_during" in *cc*) break ;; esac
    done
    sleep 1
    kill -USR1 "$FIXTURE_PID"
    sleep 0.3
    kill -9 "$rec"
    wait "$rec" 2>/dev/null
    KILLED_PID=$rec
    sleep 0.5
    local a0; a0=$(( $(lines "$out") + 2 ))
    sleep 5.7   # five rate lines: the best of them, against the best of three before (a noisy machine)
    local sites_after; sites_after=$(probe_sites "$FIXTURE_PID" "$exe")
    local after_rate; after_rate=$(best_rate "$out" $a0 '$')
    kill -USR1 "$FIXTURE_PID"
    sleep 0.5
    check "$fx: probe sites are nops before recording ($sites_before)" sh -c "echo '$sites_before' | grep -qx '[0-9]*\*90'"
    check "$fx: probe sites are int3 while recorded ($sites_during)" sh -c "echo '$sites_during' | grep -q '\*cc'"
    check "$fx: probe sites are nops again after kill -9 ($sites_after)" sh -c "echo '$sites_after' | grep -qx '[0-9]*\*90'"
    check "$fx: target runs at its normal speed after kill -9 ($after_rate vs $before_rate units/s)" \
        awk -v a="$after_rate" -v b="$before_rate" 'BEGIN { exit !(b > 0 && a >= 0.5 * b) }'
    check "$fx: the target is still alive" kill -0 "$FIXTURE_PID"
}

# 1. semaphore-gated probes (BPF programs on uprobe_multi links with ref_ctr_offsets)
kill_scenario executor_sema
during=$(grep '^semaphores:' "$WORK/executor_sema.stdout" | sed -n 1p)
after=$(grep '^semaphores:' "$WORK/executor_sema.stdout" | sed -n 2p)
check "executor_sema: semaphores raised while recorded ($during)" sh -c "echo '$during' | grep -q 'task__poll__start=[1-9]'"
check "executor_sema: semaphores back to 0 after kill -9 ($after)" \
    sh -c "echo '$after' | grep -q 'task__poll__start=0 task__poll__end=0 task__spawn=0 task__terminate=0 worker__thread__park=0 worker__thread__unpark=0'"
stop_fixture

# 2. tracefs uprobe_events definitions in group taskspy_<pid>: markers as perf samples of tracefs events
# (scenario 1 ran the default way, BPF programs on uprobe_multi links, which defines nothing in tracefs)
MARKER_ROUTE=(--debug-marker-records=perf)
kill_scenario executor_memarg
check "tracefs is mounted where taskspy mounts it" \
    sh -c "mountpoint -q /sys/kernel/tracing || mountpoint -q /sys/kernel/debug/tracing"
check "no uprobe_events group of a live taskspy remains ($(live_groups | tr '\n' ' '))" test -z "$(live_groups)"
check "the killed taskspy's group is dormant in uprobe_events (expected until the next start)" \
    grep -q "^p:taskspy_$KILLED_PID/" "$TRACEFS/uprobe_events"
"$TASKSPY" record "${MARKER_ROUTE[@]}" -p "$FIXTURE_PID" -d 2 -F 199 -o "$WORK/next.folded" 2> "$WORK/next.err" &
next=$!
wait "$next"
check "the next record: exit 0" test $? -eq 0
check "the next record removed the dead taskspy's group" sh -c "! grep -q '^p:taskspy_$KILLED_PID/' '$TRACEFS/uprobe_events'"
check "the next record removed its own group at exit" sh -c "! grep -q '^p:taskspy_$next/' '$TRACEFS/uprobe_events'"
check "the next record works: task roots" grep -q '^task: task_' "$WORK/next.folded"
stop_fixture
MARKER_ROUTE=()

# 3. SIGINT mid-recording with markers: a whole, valid SVG
start_fixture executor_sema 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 60 -o "$WORK/int.svg" 2> "$WORK/int.err" &
rec=$!
sleep 2.5
kill -INT "$rec"
wait "$rec"
check "SIGINT with markers: exit 0" test $? -eq 0
check "SIGINT with markers: the SVG is valid XML with task roots" \
    sh -c "xmllint --noout '$WORK/int.svg' && grep -q 'task: task_' '$WORK/int.svg'"
stop_fixture
finish
