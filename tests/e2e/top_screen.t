#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# top_screen.t: `taskspy top`'s full-screen view (issue 39), driven for real inside tmux (send-keys types,
# capture-pane reads the screen) on the tokio fixture's --parked tasks (tokio 1.24, multi-thread; the current tokio
# on a current-thread runtime): the table shows every parked group with its count, sorted by CPU (the busy tasks
# first) and by count (park_sleep's 50 first); Enter shows a group's tree at the fixture's PARK lines and, on the
# busy tasks, their hottest on-CPU frame (burn); t shows a row per task, / filters them; q exits 0 and leaves the
# terminal as it was (the shell's lines back on the screen, the same stty settings); so do Ctrl-C and the target's
# exit.
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PARKED_RS=$ROOT/tests/fixtures/tokio/src/parked.rs
plan 14

SESSION=top
export TMUX_TMPDIR=$WORK              # tmux servers of this test's own, a new one (socket) for each start
RUN=0
tm() { tmux -L "run$RUN" "$@"; }
tmux_stop() { tm kill-server 2> /dev/null; }
trap 'tmux_stop; cleanup_tap' EXIT
screen() { tm capture-pane -p -t "$SESSION"; }
# shows TEXT...: the screen holds every TEXT (fixed strings), within 10 s
has_all() { local s; s=$(screen); for t in "$@"; do grep -qF -- "$t" <<< "$s" || return 1; done; }
shows() { wait_for 10 has_all "$@" || { screen | diag; return 1; }; }
# row_first PATTERN: the table's first row (after its header line) matches PATTERN (grep -E)
first_row() { screen | grep -A1 '^ *COUNT \| *ID ' | sed -n 2p | grep -Eq -- "$1"; }
line_of() { grep -n "// PARK:$1\$" "$PARKED_RS" | cut -d: -f1; }

# start FIXTURE ARGS...: the fixture, then a shell in tmux (80x200 is wide enough for a row's await point) that prints
# a line, saves its stty settings, runs top and says how it ended
start() {
    local fixture=$1; shift
    "$FIXTURES/$fixture" 60 --parked "$@" > "$WORK/fixture.out" 2>&1 &
    FIXTURE_PID=$!
    BACKGROUND_PIDS+=("$FIXTURE_PID")
    wait_for 20 grep -q '^tokio_fixture parked pid' "$WORK/fixture.out"
    tmux_stop
    RUN=$((RUN + 1))
    tm new-session -d -s "$SESSION" -x 200 -y 50 "bash --norc --noprofile"
    tm send-keys -t "$SESSION" "echo BEFORE-TOP; stty -g > $WORK/stty.before; '$TASKSPY' top -p $FIXTURE_PID -i 0.5; echo EXIT=\$?; stty -g > $WORK/stty.after" Enter
}
# restored: top ended with exit 0, the shell's line back on the screen, the terminal's settings as before
restored() {
    shows "EXIT=0" && has_all BEFORE-TOP && ! has_all "taskspy top: pid" && cmp -s "$WORK/stty.before" "$WORK/stty.after"
}

# ---- tokio 1.24, multi-thread ------------------------------------------------------------------------------------
start tokio_plain
check "the table: every parked group with its count, the lost waker warned, the warnings panel" \
    shows "taskspy top: pid $FIXTURE_PID, tokio 1.24.2" "tasks 108: " "[sort cpu, rows groups]" \
          "tokio_fixture::parked::park_sleep | tokio_fixture::parked::nap @ parked.rs:$(line_of nap)" \
          "park_channel @ parked.rs:$(line_of park_channel)" "park_oneshot @ parked.rs:$(line_of park_oneshot)" \
          "lost-waker  tokio_fixture::parked::park_forever" "warnings (1):" \
          "This task has lost its waker, and will never be woken again."
counts() {
    local s; s=$(screen)
    grep -Eq '^ +50 +50 +0 +0 .*park_sleep \|' <<< "$s" && grep -Eq '^ +20 +20 .*park_channel \|' <<< "$s" &&
        grep -Eq '^ +10 +10 .*park_join \|' <<< "$s" && grep -Eq '^ +5 +5 .*park_oneshot \|' <<< "$s" &&
        grep -Eq '^ +1 +1 .*park_forever \|' <<< "$s"
}
check "the counts: 50 sleepers, 20 channel waiters, 10 joiners, 5 oneshot waiters, 1 never woken" counts
check "sorted by CPU (the default): the busy tasks first" wait_for 10 first_row 'busy_yield'
tm send-keys -t "$SESSION" n
by_count() { wait_for 10 first_row '^ +50 +50 .*park_sleep' && shows '[sort count, rows groups]'; }
check "n: sorted by count, park_sleep's 50 first" by_count
tm send-keys -t "$SESSION" Enter
check "Enter: the group's tree at the fixture's PARK lines" \
    shows "50 tasks of tokio_fixture::parked::park_sleep" "async backtrace (tree):" \
          "    tokio_fixture::parked::park_sleep @ parked.rs:$(line_of park_sleep)" \
          "    tokio_fixture::parked::nap @ parked.rs:$(line_of nap)" "    tokio::time::sleep::Sleep" "hottest on-CPU frames"
tm send-keys -t "$SESSION" Escape
tm send-keys -t "$SESSION" c
wait_for 10 first_row 'busy_yield'
tm send-keys -t "$SESSION" Enter
burn_row() { screen | grep -Eq '^ +[0-9]+  tokio_fixture::burn$'; }
hot() { shows 'of tokio_fixture::parked::busy_yield' 'hottest on-CPU frames' && wait_for 10 burn_row; }
check "Enter on the busy tasks: their hottest on-CPU frame is burn (its samples counted)" hot
tm send-keys -t "$SESSION" Escape
tm send-keys -t "$SESSION" t
check "t: a row per task (108 tasks' ids)" shows "[sort cpu, rows tasks]" "    ID IDLE SCHED"
tm send-keys -t "$SESSION" / park_forever Enter
filtered() {
    shows 'filter "park_forever"' && first_row 'lost-waker +tokio_fixture::parked::park_forever' &&
        test "$(screen | grep -cE '^ +[0-9]+ +[0-9]+ .*tokio_fixture::parked::')" = 1
}
check "/: filtered to the one task nothing can wake" filtered
tm send-keys -t "$SESSION" q
check "q: exit 0, the terminal as it was (the shell's lines back, the same stty settings)" restored

# ---- Ctrl-C, and the target's exit (the current tokio on a current-thread runtime) ---------------------------------
start tokio_current --current-thread
check "current-thread: the table, the runtime's one thread polling" \
    shows "tokio 1.54.1" "workers: block_on $FIXTURE_PID" "park_sleep | tokio_fixture::parked::nap @ parked.rs:$(line_of nap)"
tm send-keys -t "$SESSION" C-c
check "Ctrl-C: exit 0, the terminal as it was" restored
tm send-keys -t "$SESSION" "clear; echo BEFORE-TOP; stty -g > $WORK/stty.before; '$TASKSPY' top -p $FIXTURE_PID -i 0.5; echo EXIT=\$?; stty -g > $WORK/stty.after" Enter
shows "taskspy top: pid $FIXTURE_PID"
kill "$FIXTURE_PID"
check "the target exits: top exits 0 by itself, the terminal as it was" restored
check "... and says the process exited" shows "taskspy: process $FIXTURE_PID exited"

# ---- no terminal -------------------------------------------------------------------------------------------------
start tokio_plain
tmux_stop
run noterm top -p "$FIXTURE_PID" < /dev/null
check "without a terminal: exit 1, one line that says to use -b" \
    sh -c "test $RC = 1 && test \$(wc -l < '$WORK/noterm.err') = 1 && grep -q 'needs a terminal.*top -b' '$WORK/noterm.err'"
finish
