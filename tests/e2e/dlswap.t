#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dlswap.t: a mapping replaced under the profiler: the dlswap fixture burns CPU in libdlswap_a.so's
# alpha_spin (through phase_a), dlcloses it, and loads libdlswap_b.so at the same address, with beta_spin
# where alpha_spin was (through phase_b), three times. B's samples must be named from B, never from what
# was cached for A at the same addresses, and the other way round, in dwarf and fp modes.
source "$(dirname "$0")/lib/tap.sh"
plan 12

for mode in dwarf fp; do
    "$TASKSPY" record -F 499 --call-graph "$mode" -o "$WORK/$mode.folded" -- "$FIXTURES/dlswap" 0.6 3 \
        > "$WORK/$mode.out" 2> "$WORK/$mode.err"
    rc=$?
    [ $rc -eq 0 ] || diag < "$WORK/$mode.err"
    f=$WORK/$mode.folded
    check "$mode: exit 0" test $rc -eq 0
    check "$mode: B was loaded where A was, every round" test "$(grep -c '^same address$' "$WORK/$mode.out")" -eq 3
    a=$(samples "$f" ';phase_a;.*;alpha_spin$'); b=$(samples "$f" ';phase_b;.*;beta_spin$')
    check "$mode: A's samples show alpha_spin ($a)" test "$a" -ge 50
    check "$mode: B's samples show beta_spin ($b)" test "$b" -ge 50
    check "$mode: no sample of B is named from A" no_stack "$f" ';phase_b;' 'alpha_spin'
    check "$mode: no sample of A is named from B" no_stack "$f" ';phase_a;' 'beta_spin'
done
finish
