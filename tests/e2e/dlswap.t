#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dlswap.t: a mapping replaced under the profiler: the dlswap fixture burns CPU in libdlswap_a.so's
# alpha_spin (through phase_a), dlcloses it, and loads libdlswap_b.so at the same address, with beta_spin
# where alpha_spin was (through phase_b), three times. B's samples must be named from B, never from what
# was cached for A at the same addresses, and the other way round, in dwarf and fp modes. The dwarf
# recording's pprof (go tool pprof) counts alpha_spin and beta_spin as the folded file does, and has both
# libraries as mappings at the same address, each with its own build id.
source "$(dirname "$0")/lib/tap.sh"
plan 15
export GOCACHE=$WORK/gocache GOTELEMETRY=off

for mode in dwarf fp; do
    "$TASKSPY" record -F 499 --call-graph "$mode" -o "$WORK/$mode.folded" -o "$WORK/$mode.pb.gz" -- "$FIXTURES/dlswap" 0.6 3 \
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

# pprof from addresses: a location made for A's address is not reused for B's at the same address
go tool pprof -sample_index=samples -top -nodecount=1000 "$WORK/dwarf.pb.gz" > "$WORK/dwarf.top" 2> "$WORK/dwarf.top.err"
diag < "$WORK/dwarf.top.err"
flat() { awk -v name="$1" '$6 == name { print $1 }' "$WORK/dwarf.top"; }
leaf() { awk -v leaf=";$1" '{ n = $NF; sub(/ [0-9]+$/, ""); if (substr($0, length($0) - length(leaf) + 1) == leaf) s += n } END { print s + 0 }' "$WORK/dwarf.folded"; }
check "pprof: alpha_spin's samples as in the folded file ($(flat alpha_spin) = $(leaf alpha_spin))" test "$(flat alpha_spin)" = "$(leaf alpha_spin)"
check "pprof: beta_spin's samples as in the folded file ($(flat beta_spin) = $(leaf beta_spin))" test "$(flat beta_spin)" = "$(leaf beta_spin)"
go tool pprof -raw "$WORK/dwarf.pb.gz" 2> /dev/null | sed -n '/^Mappings/,$p' > "$WORK/dwarf.mappings"
a_at=$(awk '$3 ~ /libdlswap_a\.so$/ { split($2, r, "/"); print r[1] }' "$WORK/dwarf.mappings" | head -1)
b_at=$(awk '$3 ~ /libdlswap_b\.so$/ { split($2, r, "/"); print r[1] }' "$WORK/dwarf.mappings" | head -1)
a_id=$(awk '$3 ~ /libdlswap_a\.so$/ { print $4 }' "$WORK/dwarf.mappings" | head -1)
b_id=$(awk '$3 ~ /libdlswap_b\.so$/ { print $4 }' "$WORK/dwarf.mappings" | head -1)
check "pprof: both libraries mapped at the same address ($a_at, $b_at), with their own build ids" \
    sh -c "test -n '$a_at' && test '$a_at' = '$b_at' && test -n '$a_id' && test '$a_id' != '$b_id' &&
           readelf -n '$FIXTURES/libdlswap_a.so' | grep -q 'Build ID: $a_id'"
finish
