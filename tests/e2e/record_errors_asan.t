#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# record_errors_asan.t: the failure behaviour of SPEC section 6 for taskspy record: each error is one line
# on stderr with a non-zero exit and leaves no output (and no temporary) file; a target that exits while
# recorded, and SIGINT, still write a complete output. Also run with the ASan/UBSan build.
source "$(dirname "$0")/lib/tap.sh"
plan 36

out_dir="$WORK/out"
mkdir -p "$out_dir"
empty_dir() { [ -z "$(ls -A "$out_dir")" ] || { ls -A "$out_dir" | diag; return 1; }; }
one_line() { [ "$(wc -l < "$1")" -eq 1 ] || { diag < "$1"; return 1; }; }

# No such PID (pid_max is at most 4194304)
run nopid record -p 4194303 -d 1 -o "$out_dir/a.folded"
check "no such pid: exit 1" test "$RC" -eq 1
check "no such pid: says so" grep -q "no such process: 4194303" "$WORK/nopid.err"
check "no such pid: one line" one_line "$WORK/nopid.err"
check "no such pid: no file left" empty_dir

# Unknown option, missing output, bad values
run badopt record --frobnicate -p 1 -o "$out_dir/a.folded"
check "unknown option: exit 2" test "$RC" -eq 2
check "unknown option: named" grep -q "unknown option '--frobnicate'" "$WORK/badopt.err"
run noout record -p 1
check "missing -o: exit 2 and a message" sh -c "[ $RC -eq 2 ] && grep -q 'no output file' '$WORK/noout.err'"
run badext record -p 1 -o "$out_dir/a.png"
check "unknown output extension: exit 2" test "$RC" -eq 2
run badfreq record -p 1 -F 0 -o "$out_dir/a.folded"
check "bad frequency: exit 2 and a message" sh -c "[ $RC -eq 2 ] && grep -q 'invalid frequency' '$WORK/badfreq.err'"
check "usage errors leave no file" empty_dir

# Unwritable output: a missing directory, and a directory we may not write
run unwritable record -d 1 -o /nonexistent-dir/x.folded -- "$FIXTURES/shares_nofp" 1
check "unwritable output: exit 1" test "$RC" -eq 1
check "unwritable output: says why" grep -q "cannot write /nonexistent-dir/x.folded" "$WORK/unwritable.err"
check "unwritable output: the command was not run" test ! -s "$WORK/unwritable.out"

# A command that cannot be run
run noexec record -d 1 -o "$out_dir/a.folded" -- /nonexistent/program
check "command not found: exit 1" test "$RC" -eq 1
check "command not found: says so" grep -q "cannot run '/nonexistent/program'" "$WORK/noexec.err"
check "command not found: no file left" empty_dir

# No permission: an unprivileged user, perf_event_paranoid 2, a root-owned target
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 2 > /proc/sys/kernel/perf_event_paranoid
sleep 30 & victim=$!
BACKGROUND_PIDS+=("$victim")
chmod 711 "$WORK"; chmod 777 "$out_dir"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$TASKSPY" record -p "$victim" -d 1 -o "$out_dir/a.folded" \
    > /dev/null 2> "$WORK/perm.err"
RC=$?
echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
check "no permission: exit 1" test "$RC" -eq 1
check "no permission: names perf_event_paranoid and its value" grep -q "perf_event_paranoid is 2" "$WORK/perm.err"
check "no permission: names CAP_PERFMON" grep -q "CAP_PERFMON" "$WORK/perm.err"
check "no permission: one line" one_line "$WORK/perm.err"
check "no permission: no file left" empty_dir

# The target exits while recorded (launch): what was gathered is written, and that is said.
# (999 Hz: the samples of a 1.5-s target are counted, and at 99 Hz a starved CI machine once left fewer than 50)
run exits record -d 20 -F 999 -o "$out_dir/exit.folded" -- "$FIXTURES/shares_nofp" 1.5
check "target exits (launch): exit 0" test "$RC" -eq 0
check "target exits (launch): says so" grep -q "the target exited during the recording" "$WORK/exits.err"
secs=$(recorded_secs "$WORK/exits.err")
check "target exits (launch): recording ended with it (${secs:-?} s recorded of -d 20)" lt "${secs:-99}" 20
check "target exits (launch): output has the samples" test "$(samples "$out_dir/exit.folded" burn_)" -gt 50

# The target exits while recorded (-p)
start_fixture shares_nofp 2.5
run exits_pid record -p "$FIXTURE_PID" -d 20 -F 999 -o "$out_dir/exit-pid.folded"
check "target exits (-p): exit 0 and says so" sh -c "[ $RC -eq 0 ] && grep -q 'exited during the recording' '$WORK/exits_pid.err'"
check "target exits (-p): output has the samples" test "$(samples "$out_dir/exit-pid.folded" burn_)" -gt 30

# SIGINT mid-recording: a complete output
start_fixture shares_nofp 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 60 -o "$out_dir/int.svg" 2> "$WORK/int.err" &
rec=$!
wait_for 20 attached "$rec"
sleep 1      # record a while
kill -INT "$rec"
wait "$rec"
RC=$?
stop_fixture
check "SIGINT: exit 0" test "$RC" -eq 0
check "SIGINT: the SVG is complete and valid XML" xmllint --noout "$out_dir/int.svg"
check "SIGINT: the SVG has samples" grep -q "burn_c" "$out_dir/int.svg"

# SIGTERM while the target is still starting up (launch) ends both
"$TASKSPY" record -d 60 -o "$out_dir/term.folded" -- "$FIXTURES/shares_nofp" 60 > /dev/null 2> "$WORK/term.err" &
rec=$!
wait_for 20 attached "$rec"
sleep 1      # record a little: the target has run a second of its 60
kill -TERM "$rec"
wait "$rec"
RC=$?
check "SIGTERM (launch): exit 0 and output written" sh -c "[ $RC -eq 0 ] && [ -s '$out_dir/term.folded' ]"
wait_for 20 sh -c "! pgrep -f '[s]hares_nofp 60' > /dev/null"
check "SIGTERM (launch): the launched target was ended too" sh -c "! pgrep -f '[s]hares_nofp 60' > /dev/null"

# A marker whose argument spec cannot be decoded (%rip-relative): named, that object's markers left out, the
# program profiled as usual
run badmarker record -d 2 -o "$out_dir/bad.folded" -- "$FIXTURES/bad_marker" 3
check "undecodable marker: exit 0 and a profile" sh -c "[ $RC -eq 0 ] && grep -q 'burn_bad_marker' '$out_dir/bad.folded'"
check "undecodable marker: the marker and its spec are named" \
    grep -q "marker bad_marker:task__poll__start in .*bad_marker has an argument taskspy cannot decode ('8@current_task(%rip)')" "$WORK/badmarker.err"
check "undecodable marker: no task roots from it" sh -c "! grep -q '^task' '$out_dir/bad.folded'"

# No temporary files anywhere in the output directory
check "no temporary files left behind" sh -c "! ls -A '$out_dir' | grep -q '^\.'"
finish
