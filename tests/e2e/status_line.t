#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# status_line.t: the recording status of `taskspy record` (issue 19). Under a pseudo-terminal (util-linux's
# script), stderr shows a one-line status rewritten in place ("\r", the text, "clear to end of line"):
# elapsed / duration (elapsed alone without -d), samples, lost, polls (where poll probes are attached: the
# probe route here), tasks; it is erased before the summary. Zero-probe attribution counts tasks, no polls.
# With stderr a file or a pipe there is none of it: no "\r" and no status text. Counts of updates are not
# timed: a 3 s recording with an update about every 250 ms is asked for two at least.
source "$(dirname "$0")/lib/tap.sh"
plan 12

ESC=$'\033'
CR=$'\r'

# on_tty NAME ARGS...: taskspy ARGS under a pseudo-terminal (stdout, the target's too, to /dev/null); what the
# terminal showed goes to $WORK/NAME.tty, the exit status to RC
on_tty() {
    local name=$1; shift
    local cmd; cmd=$(printf "'%s' " "$TASKSPY" "$@")
    # a wide terminal, so that the status is never cut to its width (a unit test covers the cut)
    script -qfec "stty cols 200 2>/dev/null; $cmd > /dev/null" /dev/null > "$WORK/$name.tty" < /dev/null
    RC=$?
}
# statuses FILE: each status as shown (one per line; the terminal's own line ends dropped)
statuses() { tr '\r' '\n' < "$1" | grep -a '^taskspy: recording' | sed "s/${ESC}\\[K.*//"; }

on_tty timed record -d 3 -F 199 --markers probes -o "$WORK/timed.folded" -- "$FIXTURES/executor" 4
check "terminal, -d 3: exit 0" test "$RC" -eq 0
statuses "$WORK/timed.tty" > "$WORK/timed.statuses"
n=$(wc -l < "$WORK/timed.statuses")
tail -n 2 "$WORK/timed.statuses" | diag
check "terminal: the status is updated ($n times, at least 2)" test "$n" -ge 2
check "terminal: every status is rewritten in place (\\r before it, clear to end of line after it)" \
    test "$n" -ge 1 -a "$(grep -ao "${CR}taskspy: recording[^${CR}]*${ESC}\\[K" "$WORK/timed.tty" | wc -l)" -eq "$n"
check "terminal: elapsed / duration, samples, lost, polls, tasks" \
    grep -Eq '^taskspy: recording [0-9]+\.[0-9] s / 3\.0 s, [0-9]+ samples, [0-9]+ lost, [0-9]+ polls, [0-9]+ tasks$' \
    "$WORK/timed.statuses"
last=$(tail -n 1 "$WORK/timed.statuses")
check "terminal: samples and polls are counted while recording ($last)" \
    sh -c "echo '$last' | grep -Eq ', [1-9][0-9]* samples, .*, [1-9][0-9]* polls, [1-9][0-9]* tasks$'"
check "terminal: the status is erased before the summary" \
    grep -aq "${CR}${ESC}\\[Ktaskspy: [0-9]* samples, [0-9]* lost, " "$WORK/timed.tty"
check "terminal: the summary lines follow as usual" grep -aq "^taskspy: wrote $WORK/timed.folded" "$WORK/timed.tty"

# zero-probe attribution (the default here): no polls to count, the tasks the samples were in
on_tty zero record -d 2 -F 199 -o "$WORK/zero.folded" -- "$FIXTURES/executor" 3
last=$(statuses "$WORK/zero.tty" | tail -n 1)
check "terminal, zero-probe: samples and tasks counted, no polls ($last)" \
    sh -c "echo '$last' | grep -Eq '^taskspy: recording [0-9.]+ s / 2\.0 s, [1-9][0-9]* samples, [0-9]+ lost, [1-9][0-9]* tasks$'"

on_tty open record -F 199 -o "$WORK/open.folded" -- "$FIXTURES/executor" 2
statuses "$WORK/open.tty" > "$WORK/open.statuses"
check "terminal, no -d: elapsed alone" \
    sh -c "[ $RC -eq 0 ] && grep -Eq '^taskspy: recording [0-9]+\.[0-9] s, [0-9]+ samples' '$WORK/open.statuses' &&
           ! grep -q ' / ' '$WORK/open.statuses'"

"$TASKSPY" record -d 1 -F 199 -o "$WORK/file.folded" -- "$FIXTURES/executor" 2 > /dev/null 2> "$WORK/file.err"
check "stderr a file: exit 0 and the summary" sh -c "[ $? -eq 0 ] && grep -q '^taskspy: wrote ' '$WORK/file.err'"
check "stderr a file: no \\r and no status text" sh -c "! grep -q '$CR' '$WORK/file.err' && ! grep -q '$ESC' '$WORK/file.err' && ! grep -q 'recording' '$WORK/file.err'"
"$TASKSPY" record -d 1 -F 199 -o "$WORK/pipe.folded" -- "$FIXTURES/executor" 2 2>&1 > /dev/null | cat > "$WORK/pipe.err"
check "stderr a pipe: no \\r and no status text" \
    sh -c "grep -q '^taskspy: wrote ' '$WORK/pipe.err' && ! grep -q '$CR' '$WORK/pipe.err' && ! grep -q 'recording' '$WORK/pipe.err'"
finish
