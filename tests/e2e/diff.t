#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# diff.t: `taskspy diff BEFORE AFTER -o FILE` (issue 31). The folded output must be difffolded.pl's lines
# (compared sorted: difffolded.pl prints in Perl's hash order) on generated inputs, on taskspy-shaped ones
# (task roots, await points, kernel frames) and on two recordings of the shares fixture, with and without
# -n. No Debian package ships Brendan Gregg's difffolded.pl: the comparison is with inferno's port of it
# (inferno-diff-folded, crates.io; make e2e installs it and sets DIFF_FOLDED). (Four checks against the real
# script ran only where DIFFFOLDED_PL named a copy, which neither CI nor make check ever had: they printed
# "ok # skip" on every run. No registry this project installs from ships difffolded.pl, so they are gone.)
# The SVG must be valid XML
# (xmllint) and draw what flamegraph.pl draws from the same lines (Debian's, libdevel-nytprof-perl's copy,
# which has the differential mode): every frame's name, samples, change and fill colour; in headless
# Chromium (tests/browser/diff_svg_check.js) red and blue where the lines say, tooltips with both counts,
# search and zoom. `go tool pprof -top -diff_base` on pprof files of the same inputs must show the same
# changes per function (flat and cum) as the folded diff: the generated files converted by `taskspy
# flamegraph -o X.pb.gz`, and the two recordings' own pprof files (record writes folded and pprof from one
# recording). Error cases: an empty input, a total of 0, a missing file, a format a diff has no form in, a
# missing operand: one line, the right exit status, no output left behind.
source "$(dirname "$0")/lib/tap.sh"
plan 30

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GEN_DIFF="python3 $ROOT/tests/tools/gen_diff_folded.py"
GEN="python3 $ROOT/tests/tools/gen_folded.py"
DIFF_FOLDED=${DIFF_FOLDED:-$ROOT/build/tools/bin/inferno-diff-folded}
FLAMEGRAPH_PL=
for p in /usr/bin/flamegraph.pl /usr/share/perl5/Devel/NYTProf/flamegraph.pl; do
    [ -f "$p" ] && { FLAMEGRAPH_PL=$p; break; }
done
export LC_ALL=C

# ---- the inputs: generated, taskspy-shaped, recorded ----
$GEN_DIFF 3000 --seed 31 "$WORK/gen.before" "$WORK/gen.after"
# taskspy-shaped: gen_folded.py's stacks; AFTER drops every 7th line, doubles every 5th, adds 300 stacks
$GEN 3000 --seed 32 -o "$WORK/shaped.before"
$GEN 300 --seed 33 -o "$WORK/shaped.extra"
awk 'NR % 7 == 0 { next } NR % 5 == 0 { $NF = $NF * 2 } { print }' "$WORK/shaped.before" |
    cat - "$WORK/shaped.extra" > "$WORK/shaped.after"
# two recordings of the shares fixture, folded and pprof from each; different lengths: different counts
for run in 1 2; do
    "$TASKSPY" record -d "$run" -F 199 -o "$WORK/rec$run.folded" -o "$WORK/rec$run.pb.gz" -- \
        "$FIXTURES/shares_nofp" > /dev/null 2> "$WORK/rec$run.err"
done
check "two recordings of shares_nofp, folded and pprof each" \
    test -s "$WORK/rec1.folded" -a -s "$WORK/rec2.folded" -a -s "$WORK/rec1.pb.gz" -a -s "$WORK/rec2.pb.gz"

# ---- the folded lines against difffolded.pl's rules ----
check "inferno-diff-folded (difffolded.pl's port, crates.io) is installed at $DIFF_FOLDED" test -x "$DIFF_FOLDED"
# same_as ORACLE NAME [-n]: taskspy diff's lines equal ORACLE's (sorted) on the pair NAME
same_as() {
    local oracle=$1 name=$2 n=${3:-}
    "$TASKSPY" diff $n "$WORK/$name.before" "$WORK/$name.after" -o "$WORK/$name$n.diff.folded" 2> "$WORK/$name.diff.err" ||
        { diag < "$WORK/$name.diff.err"; return 1; }
    $oracle $n "$WORK/$name.before" "$WORK/$name.after" 2> "$WORK/$name.oracle.err" | sort > "$WORK/$name$n.oracle" ||
        return 1
    [ -s "$WORK/$name$n.oracle" ] || return 1
    diff "$WORK/$name$n.oracle" "$WORK/$name$n.diff.folded" > "$WORK/$name$n.delta" ||
        { head -5 "$WORK/$name$n.delta" | diag; return 1; }
}
for f in 1 2; do cp "$WORK/rec$f.folded" "$WORK/rec.$([ $f = 1 ] && echo before || echo after)"; done
for name in gen shaped rec; do
    for n in "" -n; do
        check "$name${n:+ $n}: the same lines as inferno-diff-folded${n:+ $n} ($(wc -l < "$WORK/$name.before" 2>/dev/null) and $(wc -l < "$WORK/$name.after" 2>/dev/null) input lines)" \
            same_as "$DIFF_FOLDED" "$name" $n
    done
done
# the pairs' contents say what they should: stacks in one only, grown, shrunk, unchanged; -n scaled
check "the generated pair has stacks only before, only after, grown, shrunk and unchanged" awk '
    $2 == 0 { a++ } $3 == 0 { b++ } $2 > 0 && $3 > $2 { g++ } $3 > 0 && $3 < $2 { s++ } $2 == $3 { u++ }
    END { exit !(a > 100 && b > 100 && g > 100 && s > 100 && u > 100) }' "$WORK/gen.diff.folded"
check "-n scales BEFORE to AFTER's total (rounded down)" awk '
    { b += $(NF - 1); a += $NF } END { exit !(b <= a && b > a - NR) }' "$WORK/gen-n.diff.folded"
"$TASKSPY" diff "$WORK/gen.before" "$WORK/gen.after" -o - > "$WORK/stdout.folded" 2> /dev/null
check "-o - writes the same lines to stdout" cmp -s "$WORK/stdout.folded" "$WORK/gen.diff.folded"

# ---- the SVG: valid, and what flamegraph.pl draws from the same lines ----
"$TASKSPY" diff "$WORK/gen.before" "$WORK/gen.after" -o "$WORK/gen.svg" 2> "$WORK/svg.err"
check "taskspy diff -o FILE.svg writes the graph" test $? -eq 0 -a -s "$WORK/gen.svg"
check "the SVG is valid XML (xmllint)" xmllint --noout "$WORK/gen.svg"
check "flamegraph.pl is installed (Debian package libdevel-nytprof-perl)" test -n "$FLAMEGRAPH_PL"
[ -n "$FLAMEGRAPH_PL" ] && perl "$FLAMEGRAPH_PL" "$WORK/gen.oracle" > "$WORK/gen.pl.svg" 2> "$WORK/gen.pl.err"
python3 "$ROOT/tests/tools/diff_svg_parity.py" "$WORK/gen.svg" "$WORK/gen.pl.svg" "$WORK/gen.oracle" > "$WORK/parity" 2>&1
parity_rc=$?
check "every frame as flamegraph.pl draws it: name, samples, share, change, colour ($(tail -1 "$WORK/parity"))" \
    test $parity_rc -eq 0
head -6 "$WORK/parity" | diag
python3 "$ROOT/tests/tools/diff_deepest.py" "$WORK/gen.svg" "$WORK/gen.diff.folded" > "$WORK/deepest" 2>&1
deepest_rc=$?
check "red frames and blue frames both drawn, the deepest red and blue for the largest change ($(tail -1 "$WORK/deepest"))" \
    test $deepest_rc -eq 0

# ---- in the browser ----
BROWSER_DIR=$ROOT/tests/browser
if [ ! -f "$BROWSER_DIR/node_modules/playwright-core/package.json" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error > "$WORK/npm.log" 2>&1) || tail -20 "$WORK/npm.log" | diag
fi
mkdir -p "$ROOT/build/test-output"
node "$BROWSER_DIR/diff_svg_check.js" "$WORK/gen.svg" "$WORK/gen.diff.folded" "$ROOT/build/test-output/diff.png" \
    > "$WORK/browser.tap" 2>&1
browser_rc=$?
sed 's/^/# browser: /' "$WORK/browser.tap" | grep -v '^# browser: 1\.\.' | diag
check "diff_svg_check.js in headless Chromium: $(grep -c '^ok' "$WORK/browser.tap") checks passed, $(grep -c '^not ok' "$WORK/browser.tap") failed" \
    sh -c "test $browser_rc -eq 0 && grep -q '^ok' '$WORK/browser.tap' && ! grep -q '^not ok' '$WORK/browser.tap'"

# ---- go tool pprof -diff_base shows the same changes ----
# folded_changes DIFF.folded SKIP_ROOT: "FUNCTION FLAT CUM" per function with a change: flat from the stacks
# ending in it, cum from those through it (once per stack), AFTER - BEFORE; SKIP_ROOT 1: a stack's root
# frame is no function (a recording's thread name: a label in its pprof). Names as pprof shows them: it
# leaves out what is between '<' and '>' (C++ template arguments)
folded_changes() {
    awk -v skip="$2" '{
        d = $NF - $(NF - 1); sub(/ [0-9]+ [0-9]+$/, ""); gsub(/<[^;>]*>/, ""); n = split($0, f, ";"); flat[f[n]] += d
        delete seen
        for (i = 1 + skip; i <= n; i++) if (!(f[i] in seen)) { seen[f[i]] = 1; cum[f[i]] += d }
    } END { for (x in cum) if (flat[x] != 0 || cum[x] != 0) print x, flat[x] + 0, cum[x] }' "$1" | sort
}
# pprof_changes BEFORE.pb.gz AFTER.pb.gz: the same from go tool pprof -top -diff_base (samples)
pprof_changes() {
    go tool pprof -sample_index=samples -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
        -diff_base="$1" "$2" 2> "$WORK/pprof.err" |
        awk 'started { name = $6; for (i = 7; i <= NF; i++) name = name " " $i; sub(/ \(inline\)$/, "", name)
                       if ($1 != 0 || $4 != 0) print name, $1, $4 } / flat  flat% /{ started = 1 }' | sort
}
"$TASKSPY" flamegraph "$WORK/gen.before" -o "$WORK/gen.before.pb.gz" 2> /dev/null &&
"$TASKSPY" flamegraph "$WORK/gen.after" -o "$WORK/gen.after.pb.gz" 2> /dev/null
check "taskspy flamegraph converts the generated pair to pprof" test $? -eq 0
folded_changes "$WORK/gen.diff.folded" 0 > "$WORK/gen.changes"
pprof_changes "$WORK/gen.before.pb.gz" "$WORK/gen.after.pb.gz" > "$WORK/gen.pprof.changes"
diff "$WORK/gen.changes" "$WORK/gen.pprof.changes" > "$WORK/pprof.delta"
check "pprof -diff_base of the converted pair: every function's flat and cum change as the folded diff's ($(wc -l < "$WORK/gen.changes") functions)" \
    sh -c "test \$(wc -l < '$WORK/gen.changes') -gt 100 && ! test -s '$WORK/pprof.delta'"
head -6 "$WORK/pprof.delta" | diag
folded_changes "$WORK/rec.diff.folded" 1 > "$WORK/rec.changes"
pprof_changes "$WORK/rec1.pb.gz" "$WORK/rec2.pb.gz" > "$WORK/rec.pprof.changes"
diff "$WORK/rec.changes" "$WORK/rec.pprof.changes" > "$WORK/rec.delta"
check "pprof -diff_base of the two recordings' pprof files: the same changes as the diff of their folded files ($(wc -l < "$WORK/rec.changes") functions: $(tr '\n' ',' < "$WORK/rec.changes" | cut -c1-200))" \
    sh -c "grep -q '^spin' '$WORK/rec.changes' && ! test -s '$WORK/rec.delta'"
head -6 "$WORK/rec.delta" | diag

# ---- errors: one line, exit status, nothing left behind ----
mkdir -p "$WORK/out"
: > "$WORK/empty.folded"
printf 'a;b 0\nc 0\n' > "$WORK/zero.folded"
# refused STATUS PATTERN DESCRIPTION ARGS...: taskspy diff ARGS -o $WORK/out/x.EXT exits STATUS with one stderr
# line matching PATTERN, and $WORK/out stays empty
refused() {
    local status=$1 pattern=$2 description=$3; shift 3
    "$TASKSPY" diff "$@" > /dev/null 2> "$WORK/refused.err"
    local rc=$?
    local lines; lines=$(wc -l < "$WORK/refused.err")
    if [ "$rc" -eq "$status" ] && [ "$lines" -eq 1 ] && grep -Eq "$pattern" "$WORK/refused.err" &&
        [ -z "$(ls -A "$WORK/out")" ]; then
        ok 0 "$description: exit $rc, \"$(cat "$WORK/refused.err")\""
    else
        ok 1 "$description (exit $rc, $lines lines)"
        { cat "$WORK/refused.err"; ls -A "$WORK/out"; } | diag
    fi
}
refused 1 'empty.folded is empty' "an empty BEFORE" "$WORK/empty.folded" "$WORK/gen.after" -o "$WORK/out/x.folded"
refused 1 'empty.folded is empty' "an empty AFTER" "$WORK/gen.before" "$WORK/empty.folded" -o "$WORK/out/x.svg"
refused 1 'zero.folded has a total of 0' "a BEFORE whose counts are all 0" "$WORK/zero.folded" "$WORK/gen.after" -o "$WORK/out/x.svg"
refused 1 'zero.folded has a total of 0' "an AFTER whose counts are all 0, -n" -n "$WORK/gen.before" "$WORK/zero.folded" -o "$WORK/out/x.folded"
refused 1 'cannot open .*missing.folded' "a missing file" "$WORK/gen.before" "$WORK/missing.folded" -o "$WORK/out/x.folded"
refused 2 'a diff is written as .folded' "an output a diff has no form in (pprof)" "$WORK/gen.before" "$WORK/gen.after" -o "$WORK/out/x.pb.gz"
refused 2 'give two folded files' "one operand" "$WORK/gen.before" -o "$WORK/out/x.folded"
refused 2 'no output' "no -o" "$WORK/gen.before" "$WORK/gen.after"
refused 1 'cannot|No such' "an output in a directory that does not exist" "$WORK/gen.before" "$WORK/gen.after" -o "$WORK/out/no/x.svg"
"$TASKSPY" diff --help > "$WORK/help" 2>&1
check "--help names the command, -o, --normalize and --title" \
    sh -c "grep -q 'usage: taskspy diff BEFORE AFTER -o FILE' '$WORK/help' && grep -q -- '--normalize' '$WORK/help' && grep -q -- '--title' '$WORK/help'"
finish
