#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tokio_fixture.t: the tokio fixtures (tests/fixtures/tokio, built by tests/fixtures/tokio.mk) are what the
# tokio tests expect: SDT poll markers under provider taskspy_tokio with a register arg0, every probe
# address on a nop, the two link layouts (rust-lld: text vaddr != offset and no .stapsdt.base; GNU ld:
# .stapsdt.base kept and named by the notes), DWARF lines for the await sites, a program that runs for
# the given seconds printing non-zero polls/s with units by kind near 1:2:3, and a plain build without
# any stapsdt note.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIXTURES=${FIXTURES:-$ROOT/build/fixtures}
SRC=$ROOT/tests/fixtures/tokio/src/main.rs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/taskspy-tokio.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "1..21"
n=0
fail=0
ok() {   # ok CONDITION_EXIT_STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
check() { local d=$1; shift; if "$@" >/dev/null 2>&1; then ok 0 "$d"; else ok 1 "$d"; fi; }
has_probe() { grep -q "Name: $2\$" "$1"; }
# regs_only NOTES: every task__poll__start/end note has arg0 "8@%REG" (and there is at least one)
regs_only() {
    grep -A2 -E 'Name: task__poll__(start|end)$' "$1" | grep 'Arguments:' > "$WORK/args"
    [ -s "$WORK/args" ] && ! grep -Evq '^ *Arguments: 8@%[a-z0-9]+$' "$WORK/args"
}
only_provider() { ! grep 'Provider:' "$1" | grep -vq 'Provider: taskspy_tokio$'; }

# probes_on_nops BIN NOTES: every note's Location is the address of a nop in BIN's disassembly
probes_on_nops() {
    objdump -d --no-show-raw-insn "$1" > "$WORK/dis" || return 1
    grep -o 'Location: 0x[0-9a-f]*' "$2" | awk '{ print $2 }' | sed 's/^0x0*//' | sort -u > "$WORK/locs"
    [ -s "$WORK/locs" ] || return 1
    awk 'NR == FNR { want[$1] = 1; next }
         { a = $1; sub(/:$/, "", a) } (a in want) && $2 == "nop" && NF == 2 { found[a] = 1 }
         END { for (a in want) if (!(a in found)) { print "no nop at " a; bad = 1 } exit bad }' "$WORK/locs" "$WORK/dis"
}
text_vaddr_ne_offset() { readelf -lW "$1" | awk '$1 == "LOAD" && / E / && $2 != $3 { f = 1 } END { exit !f }'; }
has_section() { readelf -SW "$1" | grep -q " $2 "; }
# base_matches BIN NOTES: every note's Base is the address of BIN's .stapsdt.base section
base_matches() {
    local addr; addr=$(readelf -SW "$1" | awk '$2 == ".stapsdt.base" { print $4 }')
    [ -n "$addr" ] || return 1
    ! grep -o 'Base: 0x[0-9a-f]*' "$2" | grep -vq "Base: 0x$addr\$"
}

for bin in tokio_markers tokio_markers_bfd; do
    readelf -n "$FIXTURES/$bin" > "$WORK/$bin.notes" 2>/dev/null
    check "$bin has task__poll__start and task__poll__end notes" \
        sh -c "grep -q 'Name: task__poll__start\$' '$WORK/$bin.notes' && grep -q 'Name: task__poll__end\$' '$WORK/$bin.notes'"
    check "$bin has task__spawn and task__terminate notes" \
        sh -c "grep -q 'Name: task__spawn\$' '$WORK/$bin.notes' && grep -q 'Name: task__terminate\$' '$WORK/$bin.notes'"
    check "$bin notes are all under provider taskspy_tokio" only_provider "$WORK/$bin.notes"
    check "$bin poll-start/end arg0 is a register (8@%reg)" regs_only "$WORK/$bin.notes"
    check "$bin: every probe address is a nop" probes_on_nops "$FIXTURES/$bin" "$WORK/$bin.notes"
done
check "tokio_markers (rust-lld): text segment vaddr differs from its file offset" text_vaddr_ne_offset "$FIXTURES/tokio_markers"
check "tokio_markers (rust-lld): no .stapsdt.base section" sh -c "! readelf -SW '$FIXTURES/tokio_markers' | grep -q ' .stapsdt.base '"
check "tokio_markers_bfd (GNU ld): .stapsdt.base kept and named by every note" base_matches "$FIXTURES/tokio_markers_bfd" "$WORK/tokio_markers_bfd.notes"
check "tokio_markers has DWARF line info for main.rs" sh -c "readelf --debug-dump=rawline '$FIXTURES/tokio_markers' 2>/dev/null | grep -q 'main.rs'"

# The await-site tags the tokio tests read line numbers from: one per .await of each async fn.
tags=$(grep -oE '// AWAIT:[a-z_]+:[0-9]+$' "$SRC" | sed 's|// AWAIT:||' | tr '\n' ' ')
check "source tags the await sites of every async fn" sh -c "for t in parse_request:1 render_header:1 render_body:1 render_page:1 render_page:2 compress_response:1 compress_response:2 parse_task:1 render_task:1 compress_task:1; do case ' $tags' in *\" \$t \"*) ;; *) exit 1;; esac; done"

# Running: 2 s, polls/s lines non-zero, units by kind near 1:2:3.
start=$(date +%s.%N)
timeout 20 "$FIXTURES/tokio_markers" 2 > "$WORK/run.out" 2> "$WORK/run.err"
rc=$?
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
ok "$rc" "tokio_markers 2 exits 0"
# (it stops by itself: "timeout 20" would have made the status 124; and not before its 2 s)
check "tokio_markers 2 stops by itself, not before 2 s ($elapsed s)" awk -v e="$elapsed" 'BEGIN { exit !(e >= 1.9) }'
check "tokio_markers prints non-zero polls/s every second" \
    awk '/^polls\/s [0-9]+$/ { n++; if ($2 == 0) z = 1 } END { exit !(n >= 1 && !z) }' "$WORK/run.out"
check "tokio_markers units by kind are near 1:2:3" awk '/^units by kind:/ { p = $5; r = $7; c = $9 }
    END { exit !(p > 0 && r / p > 1.6 && r / p < 2.4 && c / p > 2.4 && c / p < 3.6) }' "$WORK/run.out"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$WORK/run.out" "$WORK/run.err"

check "tokio_plain has no stapsdt notes" sh -c "! readelf -n '$FIXTURES/tokio_plain' | grep -q stapsdt"
timeout 20 "$FIXTURES/tokio_plain" 1.5 > "$WORK/plain.out" 2>&1
check "tokio_plain runs and prints non-zero polls/s" \
    awk '/^polls\/s [0-9]+$/ { n++; if ($2 == 0) z = 1 } END { exit !(n >= 1 && !z) }' "$WORK/plain.out"
exit $fail
