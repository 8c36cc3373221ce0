#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# faults.t: the target misbehaves while recorded; each case has a defined result.
#  (a) it exits (launch and -p): exit 0, the samples written, "the target exited during the recording".
#  (b) it execs another program (same pid): the recording follows the pid through the exec: samples of the
#      old image under its old name, of the new image with the new program's symbols; ends when it exits.
#  (c) it forks child processes that burn CPU: children are not the target (-p is "every thread of PID",
#      SPEC 1), so none of their samples may appear; every stack is rooted at the target's one thread.
#  (d) it creates ~2000 short-lived threads per second: no crash, exit 0, the short threads' function in
#      the profile under the threads' names (never a nameless "[thread]"), lost samples reported.
#  (e) it is SIGSTOPped (and continued, or left stopped): taskspy ends at its duration, exit 0, output
#      written (possibly without samples, then said so).
source "$(dirname "$0")/lib/tap.sh"
plan 30

# roots FOLDED: the distinct root frames
roots() { cut -d';' -f1 "$1" | sed 's/ [0-9]*$//' | sort -u | tr '\n' ' '; }

# (a) exits mid-recording
run exit_launch record -d 20 -o "$WORK/exit.folded" -- "$FIXTURES/shares_nofp" 1.5
secs=$(recorded_secs "$WORK/exit_launch.err")
check "(a) exits, launch: exit 0, says so, ended with it (${secs:-?} s recorded of -d 20)" \
    sh -c "[ $RC -eq 0 ] && grep -q 'the target exited during the recording' '$WORK/exit_launch.err' && $(declare -f lt); lt '${secs:-99}' 20"
check "(a) exits, launch: samples written" test "$(samples "$WORK/exit.folded" 'burn_[abc]')" -gt 20
start_fixture shares_nofp 2
run exit_pid record -p "$FIXTURE_PID" -d 20 -o "$WORK/exit-pid.folded"
secs=$(recorded_secs "$WORK/exit_pid.err")
check "(a) exits, -p: exit 0, says so, ended with it (${secs:-?} s recorded of -d 20)" \
    sh -c "[ $RC -eq 0 ] && grep -q 'the target exited during the recording' '$WORK/exit_pid.err' && $(declare -f lt); lt '${secs:-99}' 20"
check "(a) exits, -p: samples written" test "$(samples "$WORK/exit-pid.folded" 'burn_[abc]')" -gt 10
stop_fixture

# (b) execs another program after 1.5 s (launch), after 2 s (-p)
run exec_launch record -d 20 -o "$WORK/exec.folded" -- "$FIXTURES/fault_exec" 1.5 "$FIXTURES/shares_nofp" 2
secs=$(recorded_secs "$WORK/exec_launch.err")
check "(b) exec, launch: exit 0, ends when the new program exits (${secs:-?} s recorded of -d 20)" \
    sh -c "[ $RC -eq 0 ] && grep -q 'the target exited during the recording' '$WORK/exec_launch.err' && $(declare -f lt); lt '${secs:-99}' 20"
check "(b) exec, launch: the old image's samples, under its name" \
    grep -q '^fault_exec;_start;.*main;before_exec_burn ' "$WORK/exec.folded"
check "(b) exec, launch: the new image followed and symbolized" \
    sh -c "grep -q '^shares_nofp;_start;.*main;work_loop;burn_c' '$WORK/exec.folded' && grep -q '^shares-worker;.*worker_main;work_loop;burn_' '$WORK/exec.folded'"
check "(b) exec, launch: no unknown frames" sh -c "! grep -q '\[unknown\]\|\[fault_exec\]\|\[shares_nofp\]' '$WORK/exec.folded'"
"$FIXTURES/fault_exec" 2 "$FIXTURES/shares_nofp" 2 > /dev/null &
FIXTURE_PID=$!; BACKGROUND_PIDS+=("$FIXTURE_PID"); wait_for 20 running "$FIXTURE_PID" "$FIXTURES/fault_exec"
run exec_pid record -p "$FIXTURE_PID" -d 20 -o "$WORK/exec-pid.folded"
check "(b) exec, -p: exit 0, old and new image symbolized" \
    sh -c "[ $RC -eq 0 ] && grep -q 'before_exec_burn ' '$WORK/exec-pid.folded' && grep -q '^shares-worker;.*burn_' '$WORK/exec-pid.folded'"
stop_fixture

# (c) forks children that burn CPU: after 0.3 s two children (fork only); then one that execs shares_nofp
run fork record -d 10 -o "$WORK/fork.folded" -- "$FIXTURES/fault_fork" 2.5 2
check "(c) fork: exit 0, the parent's samples" sh -c "[ $RC -eq 0 ] && grep -q 'main;parent_burn' '$WORK/fork.folded'"
check "(c) fork: no sample of the child processes (child_burn)" \
    test "$(samples "$WORK/fork.folded" child_burn)" -eq 0
check "(c) fork: every stack rooted at the target's only thread (roots: $(roots "$WORK/fork.folded"))" \
    test "$(roots "$WORK/fork.folded")" = "fault_fork "
check "(c) fork: one thread counted" grep -q ' 1 threads,' "$WORK/fork.err"
run forkexec record -d 10 -o "$WORK/forkexec.folded" -- "$FIXTURES/fault_fork" 2.5 1 0.3 "$FIXTURES/shares_nofp" 2.5
check "(c) fork+exec: exit 0, the parent's samples" sh -c "[ $RC -eq 0 ] && grep -q 'main;parent_burn' '$WORK/forkexec.folded'"
check "(c) fork+exec: every stack rooted at the target's thread, none [unknown] (roots: $(roots "$WORK/forkexec.folded"))" \
    sh -c "[ '$(roots "$WORK/forkexec.folded")' = 'fault_fork ' ] && ! grep -q '\[unknown\]' '$WORK/forkexec.folded'"

# (d) ~2000 short-lived threads per second, each burning ~0.3 ms of CPU. Per-thread cpu-clock periods start
# afresh in each thread, so the frequency must be high for a 0.3 ms thread to be sampled at all.
run threads record -d 4 -F 4999 -o "$WORK/threads.folded" -- "$FIXTURES/fault_threads" 6 2000
check "(d) thread storm: exit 0" test "$RC" -eq 0
# (whole: through start_thread; once in a while every sample showed start_thread (under clone3) as
# [unknown], a symbolization miss of one libc address, cause not found: not what this checks)
full=$(samples "$WORK/threads.folded" '(start_thread|__GI___clone3;\\[unknown\\]);short_main;short_burn')
[ "$full" -gt 100 ] || { sort -t' ' -k2 -nr "$WORK/threads.folded" | head -5; cat "$WORK/threads.err"; } | diag
# (when it happens, the summary tells where that address lies: the first in no mapping taskspy knew of)
grep -q '\[unknown\]' "$WORK/threads.folded" && grep 'in no mapping taskspy knew of' "$WORK/threads.err" | diag
check "(d) thread storm: the short threads' function sampled ($full of $(samples "$WORK/threads.folded" short_burn) with whole stacks)" \
    test "$full" -gt 100
nthreads=$(sed -n 's/^taskspy: [0-9]* samples, [0-9]* lost, \([0-9]*\) threads.*/\1/p' "$WORK/threads.err")
check "(d) thread storm: short-lived threads counted (${nthreads:-?})" test "${nthreads:-0}" -gt 1000
check "(d) thread storm: lost samples reported" grep -q '^taskspy: [0-9]* samples, [0-9]* lost,' "$WORK/threads.err"
# A thread created between the /proc listing and the start of its events, and gone before its samples are
# read, has no name record: at most a few per ten thousand samples, at the recording's edges.
unnamed=$(samples "$WORK/threads.folded" '^\[thread\];.*short_burn')
short=$(samples "$WORK/threads.folded" short_burn)
check "(d) thread storm: short threads rooted at their names ($unnamed of $short under [thread], <= 0.5%)" \
    test $((unnamed * 200)) -le "$short"
check "(d) thread storm: no stack without frames" sh -c "! grep -q '^[^;]* [0-9]*$' '$WORK/threads.folded'"

# (e) SIGSTOP during the recording. "At its duration": the seconds recorded (the summary's) reach -d, so
# the stop was neither taken for an exit nor waited out.
# record_in_background NAME ARGS...: taskspy record in the background (stderr in $WORK/NAME.err), waiting
# until it records; sets REC
record_in_background() {
    local name=$1; shift
    "$TASKSPY" record "$@" > /dev/null 2> "$WORK/$name.err" &
    REC=$!
    wait_for 20 attached "$REC"
}
# exit0_at_duration ERRFILE SECS: the last record exited 0 and recorded (its summary says) at least SECS
exit0_at_duration() { [ "$RC" -eq 0 ] && awk -v s="$(recorded_secs "$1")" -v d="$2" 'BEGIN { exit !(s != "" && s + 0 >= d) }'; }
start_fixture shares_nofp 30
record_in_background stopcont -p "$FIXTURE_PID" -d 3 -o "$WORK/stopcont.folded"
sleep 1; kill -STOP "$FIXTURE_PID"; sleep 1; kill -CONT "$FIXTURE_PID"   # stopped for the middle second
wait "$REC"; RC=$?
stopcont_ok() { exit0_at_duration "$WORK/stopcont.err" 3 && [ "$(samples "$WORK/stopcont.folded" burn_)" -gt 10 ]; }
check "(e) stopped 1 s then continued: exit 0 at its duration ($(recorded_secs "$WORK/stopcont.err") s), samples" stopcont_ok
check "(e) stopped 1 s then continued: the target is still running" sh -c "kill -0 $FIXTURE_PID && ! grep -q exited '$WORK/stopcont.err'"
record_in_background stopped -p "$FIXTURE_PID" -d 3 -o "$WORK/stopped.folded"
sleep 1; kill -STOP "$FIXTURE_PID"      # a second recorded, then stopped until the end
wait "$REC"; RC=$?
check "(e) stopped until the end: exit 0 at its duration ($(recorded_secs "$WORK/stopped.err") s)" \
    exit0_at_duration "$WORK/stopped.err" 3
check "(e) stopped until the end: the second before the stop is written" test "$(samples "$WORK/stopped.folded" burn_)" -gt 5
check "(e) stopped until the end: not mistaken for an exit" sh -c "! grep -q exited '$WORK/stopped.err'"
run stopped_all record -p "$FIXTURE_PID" -d 2 -o "$WORK/stopped-all.svg"
check "(e) stopped all along: exit 0 at its duration ($(recorded_secs "$WORK/stopped_all.err") s)" \
    exit0_at_duration "$WORK/stopped_all.err" 2
check "(e) stopped all along: says there were no samples" grep -q 'warning: no samples' "$WORK/stopped_all.err"
check "(e) stopped all along: a valid (empty) SVG written" xmllint --noout "$WORK/stopped-all.svg"
kill -CONT "$FIXTURE_PID"
stop_fixture
check "no taskspy process left running" sh -c "! pgrep -x taskspy -P $$ > /dev/null"
finish
