#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# wait_markers.t: the wait profile of a marker runtime (SPEC section 3a) on the C executor fixture, which fires
# task-wake(id) where a task is made runnable again (pushed back on the run queue right after its poll) and
# calls executor_waker_registered(id) when a poll returns pending. With --waker-symbol: the task-wake probes
# and the symbol are probed, registration stacks are taken, waits are split (mostly [runnable]: a task waits
# in the queue, not for an event) and part of them sit below the task root, never in runtime frames. Without
# it: task-wake still splits the waits and every wait stack is the task root alone.
source "$(dirname "$0")/lib/tap.sh"
plan 10

RUNTIME_FRAMES='worker_main|start_thread|clone|poll_task|rq_pop|rq_push'
# ratio A B: A / B (0 when B is 0)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b == 0 ? 0 : a / b }'; }

start_fixture executor 40
run sym record -p "$FIXTURE_PID" -d 3 -F 99 -o "$WORK/sym-cpu.folded" --wait-output "$WORK/sym.folded" \
    --waker-symbol executor_waker_registered
check "--waker-symbol: exit 0" test "$RC" -eq 0
check "--waker-symbol: task-wake (2 sites) and the symbol probed" \
    grep -Eq '^taskspy: waits: .*, 3 waker locations probed' "$WORK/sym.err"
check "--waker-symbol: registration stacks taken" grep -Eq '^taskspy: waits: .*; [1-9][0-9]* registration stacks' "$WORK/sym.err"
all=$(samples "$WORK/sym.folded" '^task: task_')
runnable=$(samples "$WORK/sym.folded" '^task: task_.*;\[runnable\]$')
check "--waker-symbol: task-wake splits the waits, mostly [runnable] ($runnable of $all us, >= 90%)" \
    lt 0.9 "$(ratio "$runnable" "$all")"
below=$(samples "$WORK/sym.folded" '^task: task_([a-z]+);task_')
check "--waker-symbol: waits below the task root, at the registering poll ($below of $all us, >= 20%)" \
    lt 0.2 "$(ratio "$below" "$all")"
check "--waker-symbol: no runtime frame in a task's wait stack" no_stack "$WORK/sym.folded" '^task' "$RUNTIME_FRAMES"

run plain record -p "$FIXTURE_PID" -d 2 -F 99 -o "$WORK/plain-cpu.folded" --wait-output "$WORK/plain.folded"
check "task-wake only: exit 0" test "$RC" -eq 0
check "task-wake only: 2 waker locations, no registration stacks" \
    grep -Eq '^taskspy: waits: .*; 0 registration stacks .*, 2 waker locations probed' "$WORK/plain.err"
check "task-wake only: [runnable] waits" test "$(samples "$WORK/plain.folded" '^task: task_.*;\[runnable\]$')" -gt 0
check "task-wake only: every task wait stack is the task root" \
    every_stack "$WORK/plain.folded" '^task: ' '^task: [^;]+;\[(suspended|runnable)\]$'
stop_fixture
finish
