#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# valgrind.t: end-to-end recordings under valgrind memcheck with no errors (invalid reads/writes, uses of
# uninitialised values, definite leaks; tests/valgrind.supp names the one leak inside libbfd 2.40): a
# launched 1:2:3 fixture in dwarf mode, and the C executor with poll markers by PID.
source "$(dirname "$0")/lib/tap.sh"
SUPP="$(cd "$(dirname "$0")/.." && pwd)/valgrind.supp"
plan 6
command -v valgrind > /dev/null || { echo "Bail out! valgrind is not installed"; exit 1; }
vg() { valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
          --show-leak-kinds=definite --suppressions="$SUPP" "$@"; }

vg "$TASKSPY" record -d 2 -F 99 -o "$WORK/launch.folded" -- "$FIXTURES/shares_nofp" 4 > /dev/null 2> "$WORK/launch.err"
rc=$?
grep -E "ERROR SUMMARY|Invalid|uninitialised|definitely lost" "$WORK/launch.err" | head -5 | diag
check "memcheck, launch, dwarf: exit 0 (99 would be memcheck errors)" test "$rc" -eq 0
check "memcheck, launch, dwarf: no errors" grep -q "ERROR SUMMARY: 0 errors" "$WORK/launch.err"
check "memcheck, launch, dwarf: a real profile" test "$(samples "$WORK/launch.folded" burn_c)" -gt 20

start_fixture executor 30
vg "$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 99 -o "$WORK/markers.folded" 2> "$WORK/markers.err"
rc=$?
stop_fixture
grep -E "ERROR SUMMARY|Invalid|uninitialised|definitely lost" "$WORK/markers.err" | head -5 | diag
check "memcheck, markers by pid: exit 0" test "$rc" -eq 0
check "memcheck, markers by pid: no errors" grep -q "ERROR SUMMARY: 0 errors" "$WORK/markers.err"
check "memcheck, markers by pid: task roots" grep -q "^task: task_" "$WORK/markers.folded"
finish
