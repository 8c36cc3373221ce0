#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# kill_safety.t: SPEC section 6, "taskspy never leaves a probe behind in the target, even when killed".
# taskspy is SIGKILLed mid-recording with markers attached, on executor_sema (semaphore-gated probes, the
# default way: BPF programs on uprobe_multi links) and executor_memarg (markers as perf samples of tracefs
# uprobe_events in group taskspy_<pid>).
# Sensible afterwards: every probe site in the target's text is its original nop again (it was an int3 while
# recorded, which proves the check can see a probe: a leftover uprobe is an int3 at its site), the semaphores
# are 0, tracefs stays mounted where the code mounts it, no taskspy_<pid> group belongs to a live taskspy, and
# the next `taskspy record` removes the dead one's group and still works (task roots). Also: SIGINT writes a
# whole file. (How fast the target runs is not checked here: no wall-clock assertions in `make check`.)
source "$(dirname "$0")/lib/tap.sh"
plan 19

TRACEFS=/sys/kernel/tracing
[ -w "$TRACEFS/uprobe_events" ] || TRACEFS=/sys/kernel/debug/tracing

# live_groups: taskspy_<pid> groups in uprobe_events whose pid is a running taskspy started by this script
# (other test runs on the machine may have live groups of their own)
live_groups() {
    grep -o '^p:taskspy_[0-9]*' "$TRACEFS/uprobe_events" 2>/dev/null | sed 's/^p:taskspy_//' | sort -u | while read -r g; do
        [ "$(cat "/proc/$g/comm" 2>/dev/null)" = taskspy ] && [ "$(awk '/^PPid:/ { print $2 }' "/proc/$g/status" 2>/dev/null)" = $$ ] && echo "$g"
    done
}

# all_nops PID EXE: every probe site of EXE in PID holds its nop
all_nops() { probe_sites "$1" "$2" | grep -qx '[0-9]*\*90'; }

# (the probe route chosen: --markers auto takes the executor's TLS marker and attaches no probe at all)
MARKER_ROUTE=(--markers probes)    # (+ --debug-marker-records=... for the records below)
kill_scenario() { # kill_scenario FIXTURE
    local fx=$1 exe="$FIXTURES/$1" out="$WORK/$1.stdout"
    start_fixture "$fx" 60
    local sites_before; sites_before=$(probe_sites "$FIXTURE_PID" "$exe")
    "$TASKSPY" record "${MARKER_ROUTE[@]}" -p "$FIXTURE_PID" -d 60 -o "$WORK/$fx-killed.folded" 2> "$WORK/$fx-killed.err" &
    local rec=$!
    # wait (up to 20 s on a loaded machine) until the probes are in the target's text
    wait_for 20 probes_in "$FIXTURE_PID" "$exe"
    local sites_during; sites_during=$(probe_sites "$FIXTURE_PID" "$exe")
    sleep 1      # record a while
    kill -USR1 "$FIXTURE_PID"        # the fixture prints its semaphores
    wait_for 20 lines_at_least "$out" '^semaphores:' 1
    kill -9 "$rec"
    wait "$rec" 2>/dev/null
    KILLED_PID=$rec
    # the kernel removes the probes as the killed process's files close: wait (bounded) for the nops
    wait_for 20 all_nops "$FIXTURE_PID" "$exe"
    local sites_after; sites_after=$(probe_sites "$FIXTURE_PID" "$exe")
    kill -USR1 "$FIXTURE_PID"
    wait_for 20 lines_at_least "$out" '^semaphores:' 2
    check "$fx: probe sites are nops before recording ($sites_before)" sh -c "echo '$sites_before' | grep -qx '[0-9]*\*90'"
    check "$fx: probe sites are int3 while recorded ($sites_during)" sh -c "echo '$sites_during' | grep -q '\*cc'"
    check "$fx: probe sites are nops again after kill -9 ($sites_after)" sh -c "echo '$sites_after' | grep -qx '[0-9]*\*90'"
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
MARKER_ROUTE=(--markers probes --debug-marker-records=perf)
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
MARKER_ROUTE=(--markers probes)

# 3. SIGINT mid-recording with markers: a whole, valid SVG
start_fixture executor_sema 30
"$TASKSPY" record "${MARKER_ROUTE[@]}" -p "$FIXTURE_PID" -d 60 -o "$WORK/int.svg" 2> "$WORK/int.err" &
rec=$!
wait_for 20 probes_in "$FIXTURE_PID" "$FIXTURES/executor_sema"
sleep 1      # record a while
kill -INT "$rec"
wait "$rec"
check "SIGINT with markers: exit 0" test $? -eq 0
check "SIGINT with markers: the SVG is valid XML with task roots" \
    sh -c "xmllint --noout '$WORK/int.svg' && grep -q 'task: task_' '$WORK/int.svg'"
stop_fixture
finish
