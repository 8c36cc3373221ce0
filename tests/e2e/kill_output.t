#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# kill_output.t: SPEC section 6, "nothing half-written is left under the output name ... even kill -9 leaves
# nothing behind". taskspy record writes into an empty directory; once it surely runs (its output is open
# as an unnamed file in that directory, its perf events are open and the target it launched or attached to
# is printing under it) it is SIGKILLed: the directory must still be empty, and an output that existed
# before must be unchanged.
# A recording that ends normally leaves exactly its output file. An output that is a device (-o /dev/null) is
# written as it is, never replaced by a file. Every wait is bounded (polls, 30 s at most).
source "$(dirname "$0")/lib/tap.sh"
plan 14

# wait_until SECONDS COMMAND...: poll COMMAND every 0.1 s until it succeeds; fails after SECONDS
wait_until() {
    local limit=$(( $1 * 10 )) i; shift
    for (( i = 0; i < limit; i++ )); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
# holds_output PID DIR: PID has a file in DIR open (O_TMPFILE shows as "DIR/#INODE (deleted)")
holds_output() {
    local fd
    for fd in /proc/"$1"/fd/*; do
        case "$(readlink "$fd" 2>/dev/null)" in "$2"/*) return 0 ;; esac
    done
    return 1
}
# samples_target PID: PID has perf events open (the recording is armed: sampler_open is done)
samples_target() { ls -l /proc/"$1"/fd 2>/dev/null | grep -q 'anon_inode:\[perf_event\]'; }
# printed_lines FILE N: FILE has at least N lines
printed_lines() { [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]; }
listing() { ls -A "$1" | tr '\n' ' '; }

# 1. launch a command (-o FILE.svg -- CMD): kill -9 while the command runs under the profiler
dir=$WORK/launch
mkdir "$dir"
"$TASKSPY" record -d 60 -o "$dir/out.svg" -- "$FIXTURES/executor" 60 > "$WORK/launch.stdout" 2> "$WORK/launch.err" &
rec=$!
BACKGROUND_PIDS+=("$rec")
check "launch: record holds its output open in the directory" wait_until 30 holds_output "$rec" "$dir"
check "launch: record has its perf events open" wait_until 30 samples_target "$rec"
check "launch: the profiled command runs (prints its rates)" wait_until 30 printed_lines "$WORK/launch.stdout" 2
launched=$(pgrep -P "$rec")     # the executor taskspy launched: outlives a SIGKILLed taskspy
check "launch: record is still running when killed" kill -9 "$rec"
wait "$rec" 2>/dev/null
check "launch: after kill -9 the output directory is empty ($(listing "$dir"))" test -z "$(ls -A "$dir")"
[ -n "$launched" ] && kill -9 $launched 2>/dev/null

# 2. attach (-p PID -o FILE.folded) over an existing output: kill -9 leaves the old file as it was
dir=$WORK/attach
mkdir "$dir"
echo "old;stack 1" > "$dir/out.folded"
start_fixture executor 60
"$TASKSPY" record -p "$FIXTURE_PID" -d 60 -o "$dir/out.folded" 2> "$WORK/attach.err" &
rec=$!
BACKGROUND_PIDS+=("$rec")
check "attach: record holds its output open in the directory" wait_until 30 holds_output "$rec" "$dir"
check "attach: record has its perf events open" wait_until 30 samples_target "$rec"
lines_before=$(wc -l < "$WORK/executor.stdout")
check "attach: the target keeps running while attached" wait_until 30 printed_lines "$WORK/executor.stdout" $(( lines_before + 2 ))
kill -9 "$rec"
wait "$rec" 2>/dev/null
check "attach: after kill -9 only the old output is there ($(listing "$dir"))" test "$(ls -A "$dir")" = out.folded
check "attach: the old output is unchanged" test "$(cat "$dir/out.folded")" = "old;stack 1"

# 3. a recording that ends normally leaves exactly its output, whole
"$TASKSPY" record -p "$FIXTURE_PID" -d 1 -o "$dir/out.folded" 2> "$WORK/normal.err"
check "normal end: exit 0" test $? -eq 0
check "normal end: only the new output, with stacks ($(listing "$dir"))" \
    sh -c "test \"\$(ls -A '$dir')\" = out.folded && grep -q ' [0-9]*\$' '$dir/out.folded' && ! grep -q '^old;stack' '$dir/out.folded'"
stop_fixture
# ---- a device as the output: written as it is, never replaced (as root, a file linked over /dev/null would
# stay there for every later reader; put back here if that ever happens, so the machine survives the check)
devnull_ok() { test -c /dev/null; }
printf 'main;work 3\n' > "$WORK/one.folded"
"$TASKSPY" flamegraph "$WORK/one.folded" -o /dev/null 2> "$WORK/devnull.err"
check "flamegraph -o /dev/null: exit 0, /dev/null still the null device" sh -c "test $? -eq 0 && test -c /dev/null"
devnull_ok || { rm -f /dev/null; mknod -m 666 /dev/null c 1 3; }
"$TASKSPY" record -d 1 -f folded -o /dev/null -- sleep 1.2 2> "$WORK/devnull-record.err"
check "record -o /dev/null: exit 0, /dev/null still the null device" sh -c "test $? -eq 0 && test -c /dev/null"
devnull_ok || { rm -f /dev/null; mknod -m 666 /dev/null c 1 3; }
finish
