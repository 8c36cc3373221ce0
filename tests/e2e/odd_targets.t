#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# odd_targets.t: binaries and processes that are unusual to symbolize (SPEC section 5).
#  (a) 100,000 functions: the three hot ones named exactly (not a neighbour). (How soon the output follows
#      the target's exit is measured by `make bench`, not asserted here.)
#  (b) stripped of every symbol and debug section: output written; the executable's frames are "[OBJNAME]"
#      (what cli/record.c frames_of writes for an address in a known object without a symbol), never a
#      wrong name; libc's frames still named.
#  (c) the executable was deleted after start: SPEC 5 says deleted files are symbolized, so burn_a etc.
#      must be named and stacks unwound (the mapping is still readable via /proc/PID/map_files or /proc/PID/exe).
#  (d) a target in a private mount namespace, from a directory that exists only there: symbols resolved
#      through /proc/PID/root.
#  (e) stacks 3,000 frames deep: dwarf keeps the innermost frames (leaf and its callers), the summary counts
#      truncated stacks; --stack-size 4096 keeps fewer frames but still the leaf.
source "$(dirname "$0")/lib/tap.sh"
plan 19

# depth FOLDED PATTERN: the most frames of a stack matching PATTERN (root included)
depth() { awk -v pat="$2" '{ s = $0; sub(/ [0-9]+$/, "", s); if (s ~ pat) { n = split(s, a, ";"); if (n > m) m = n } } END { print m + 0 }' "$1"; }

# (a) 100,000 symbols: runs 3 s, recorded until it exits
run many record -d 30 -F 199 -o "$WORK/many.folded" -- "$FIXTURES/fault_manysyms" 3
check "(a) 100k symbols: exit 0" test "$RC" -eq 0
for f in 12345 55555 99998; do
    check "(a) 100k symbols: hot gen_fn_$f named, called from main" grep -q "main;gen_fn_$f [0-9]*$" "$WORK/many.folded"
done
# (main also calls three trivial functions, gen_fn_12344, gen_fn_12346 and gen_fn_00000, a few instructions
# each against the hot ones' 20,000 rounds: a sample in one is rare but right (a clean-clone run had one of 600).
# A hot function's samples named after a neighbour would be a share of its samples; the hot three's other
# neighbours are never called at all.)
grep -v 'main;gen_fn_\(12345\|55555\|99998\) [0-9]*$' "$WORK/many.folded" |
    grep 'gen_fn_\|\[unknown\]\|\[fault_manysyms\]' > "$WORK/many.odd"
diag < "$WORK/many.odd"
called=$(samples "$WORK/many.odd" 'main;gen_fn_(12344|12346|00000)$')
all=$(samples "$WORK/many.folded")
check "(a) 100k symbols: no neighbour's name, no unknown (only the hot three, and the called trivial three in $called of $all samples, <= 1%)" \
    test "$(grep -cv 'main;gen_fn_\(12344\|12346\|00000\) [0-9]*$' "$WORK/many.odd")" -eq 0 -a $((called * 100)) -le "$all"

# (b) stripped executable
run stripped record -d 2 -o "$WORK/stripped.folded" -- "$FIXTURES/shares_stripped" 3
check "(b) stripped: exit 0 and samples" sh -c "[ $RC -eq 0 ] && [ $(samples "$WORK/stripped.folded") -gt 20 ]"
check "(b) stripped: the executable's frames are [shares_stripped]" grep -q '\[shares_stripped\]' "$WORK/stripped.folded"
check "(b) stripped: no name from the executable, no bare [unknown]" \
    sh -c "! grep -q 'burn_\|work_loop\|worker_main\|;main;\|\[unknown\]' '$WORK/stripped.folded'"
check "(b) stripped: libc frames still named" \
    sh -c "grep -q '^shares_stripped;.*__libc_start_main' '$WORK/stripped.folded' && grep -q '^shares-worker;.*start_thread;' '$WORK/stripped.folded'"

# (c) deleted executable
cp "$FIXTURES/shares_nofp" "$WORK/deleted_shares"
"$WORK/deleted_shares" 30 > /dev/null &
FIXTURE_PID=$!; BACKGROUND_PIDS+=("$FIXTURE_PID"); wait_for 20 running "$FIXTURE_PID" "$WORK/deleted_shares"
rm "$WORK/deleted_shares"
run deleted record -p "$FIXTURE_PID" -d 2 -o "$WORK/deleted.folded"
stop_fixture
check "(c) deleted executable: exit 0 and samples" sh -c "[ $RC -eq 0 ] && [ $(samples "$WORK/deleted.folded") -gt 20 ]"
check "(c) deleted executable: its functions named (burn_a/b/c)" \
    sh -c "grep -q 'work_loop;burn_c' '$WORK/deleted.folded' && ! grep -q '\[deleted_shares\]' '$WORK/deleted.folded'"
check "(c) deleted executable: stacks unwound to the thread start" grep -q '^shares-worker;__GI___clone3;start_thread;worker_main;' "$WORK/deleted.folded"

# (d) private mount namespace: the fixture's directory exists only inside it
mkdir -p "$WORK/nsonly"
unshare --mount --propagation private sh -c \
    "mount -t tmpfs none '$WORK/nsonly' && cp '$FIXTURES/shares_nofp' '$WORK/nsonly/' && exec '$WORK/nsonly/shares_nofp' 30" \
    > /dev/null 2>&1 &
FIXTURE_PID=$!; BACKGROUND_PIDS+=("$FIXTURE_PID"); wait_for 20 running "$FIXTURE_PID" "$WORK/nsonly/shares_nofp"
check "(d) mount namespace: the binary is not visible from outside" test ! -e "$WORK/nsonly/shares_nofp"
run mntns record -p "$FIXTURE_PID" -d 2 -o "$WORK/mntns.folded"
stop_fixture
check "(d) mount namespace: exit 0, burn_a/b/c named through /proc/PID/root" \
    sh -c "[ $RC -eq 0 ] && grep -q 'work_loop;burn_a' '$WORK/mntns.folded' && grep -q 'burn_b;mix_inline' '$WORK/mntns.folded'"
check "(d) mount namespace: nothing unknown" sh -c "! grep -q '\[unknown\]\|\[shares_nofp\]' '$WORK/mntns.folded'"

# (e) 3,000 frames deep, ~270 bytes each
run deep record -d 2.5 -o "$WORK/deep.folded" -- "$FIXTURES/fault_deep" 3
d=$(depth "$WORK/deep.folded" 'deep_recurse;deep_leaf$')
check "(e) deep, dwarf 64 KiB: exit 0, leaf kept under its callers ($d frames)" \
    sh -c "[ $RC -eq 0 ] && [ $d -gt 100 ]"
check "(e) deep, dwarf 64 KiB: rooted at the thread names" \
    sh -c "grep -q '^fault-deep;deep_recurse;' '$WORK/deep.folded' && grep -q '^fault_deep;deep_recurse;' '$WORK/deep.folded'"
check "(e) deep, dwarf 64 KiB: truncated stacks reported" grep -q '^taskspy: [1-9][0-9]* stacks were truncated' "$WORK/deep.err"
run deep4k record -d 2.5 --stack-size 4096 -o "$WORK/deep4k.folded" -- "$FIXTURES/fault_deep" 3
d4=$(depth "$WORK/deep4k.folded" 'deep_recurse;deep_leaf$')
check "(e) deep, dwarf 4 KiB: leaf kept, fewer frames ($d4 < $d), truncation reported" \
    sh -c "[ $RC -eq 0 ] && [ $d4 -gt 3 ] && [ $d4 -lt $d ] && grep -q 'stacks were truncated (deeper than the 4096-byte copy' '$WORK/deep4k.err'"
finish
