#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# exports.t: the speedscope and pprof exports checked by their real consumers. One recording of the C
# executor fixture written to every format at once (-o repeated): `go tool pprof` totals (samples and CPU
# nanoseconds) equal the folded total, -tags shows the task, task_id and (with --markers none) thread labels;
# tests/browser/speedscope_check.js validates the speedscope file against the schema of the speedscope npm
# package, checks its weights add up to the folded total and imports it in the speedscope app (headless
# Chromium). The tokio fixture's await points show as file:line in `pprof -lines` and in speedscope's frame
# table; `taskspy flamegraph` converts a folded file (inline chains marked "_[i]" become one pprof
# location whose -raw lines list the chain); empty folded files and empty recordings give files both tools
# open; a broken speedscope file fails the check; an unwritable -o fails before recording, leaving nothing.
# Never skips: no go, no node or no Chromium is "not ok".
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BROWSER_DIR=$ROOT/tests/browser
OUT_DIR=$ROOT/build/test-output      # the speedscope screenshot is kept there (for the README)
mkdir -p "$OUT_DIR"
plan 45

command -v go > /dev/null || echo "# go is missing: install Debian's golang-go (make check does)" | diag
if [ ! -f "$BROWSER_DIR/node_modules/speedscope/package.json" ] || [ ! -f "$BROWSER_DIR/node_modules/ajv/package.json" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error > "$WORK/npm.log" 2>&1) || diag < "$WORK/npm.log"
fi
export GOCACHE=$WORK/gocache GOTELEMETRY=off

# pprof_total FILE SAMPLE_INDEX: the "of N total" of `go tool pprof -top` (CPU in nanoseconds)
pprof_total() {
    go tool pprof -sample_index="$2" -unit=ns -top "$1" 2> "$WORK/pprof.err" |
        sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)\(ns\)\{0,1\} total$/\1/p'
}
# speedscope_ok NAME FILE [ARGS]: the browser check passes (its TAP shown when it does not)
speedscope_ok() {
    local name=$1; shift
    node "$BROWSER_DIR/speedscope_check.js" "$@" > "$WORK/$name.tap" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || grep -v '^ok' "$WORK/$name.tap" | head -20 | diag
    return $rc
}
# roots FOLDED: the distinct root frames, sorted
roots() { sed 's/ [0-9]*$//; s/;.*//' "$1" | LC_ALL=C sort -u; }

# ---- one recording, every format ------------------------------------------------------------------------
start_fixture executor 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 4 -F 199 --group-by task -o "$WORK/rec.folded" -o "$WORK/rec.svg" \
    -o "$WORK/rec.speedscope.json" -o "$WORK/rec.pb.gz" -o "$WORK/rec.pprof" 2> "$WORK/rec.err"
check "record with five -o: exit 0" test $? -eq 0
stop_fixture
check "record: a 'wrote' line for each output" test "$(grep -c '^taskspy: wrote ' "$WORK/rec.err")" -eq 5
total=$(samples "$WORK/rec.folded")
check "record: samples in the folded file ($total)" test "$total" -gt 0
check "the .pb.gz and the .pprof are the same file" cmp -s "$WORK/rec.pb.gz" "$WORK/rec.pprof"
check "the SVG is well-formed XML" xmllint --noout "$WORK/rec.svg"
got=$(pprof_total "$WORK/rec.pb.gz" samples)
check "pprof -top: samples total $got = folded total $total" test "${got:-x}" = "$total"
diag < "$WORK/pprof.err"
got=$(pprof_total "$WORK/rec.pb.gz" cpu)
want=$((total * (1000000000 / 199)))
check "pprof -top: CPU total ${got}ns = folded total x period (${want}ns)" test "${got:-x}" = "$want"
go tool pprof -tags "$WORK/rec.pb.gz" > "$WORK/tags" 2> "$WORK/tags.err"
for kind in parse render compress; do
    check "pprof -tags: task label task_$kind" grep -Eq "^ +[0-9.]+[a-z]* \( *[0-9.]+%\): task_$kind$" "$WORK/tags"
done
ids=$(sed -n '/^ task_id: /,/^$/p' "$WORK/tags" | grep -c '%): [0-9]*$')
check "pprof -tags: task_id labels ($ids ids)" test "$ids" -gt 10
check "pprof -raw: samples labelled task and task_id" grep -Eq '^ +task:\[task_[a-z]+\] task_id:\[[0-9]+\]$' \
    <(go tool pprof -raw "$WORK/rec.pb.gz" 2> /dev/null)
check "speedscope: schema, weights = $total, the app imports it" \
    speedscope_ok rec "$WORK/rec.speedscope.json" --total "$total" --screenshot "$OUT_DIR/speedscope.png"
node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
         for (const n of [...new Set(d.profiles.map((p) => p.name))].sort()) console.log(n);' \
    "$WORK/rec.speedscope.json" | LC_ALL=C sort > "$WORK/profile_names"
roots "$WORK/rec.folded" > "$WORK/roots"
check "speedscope: one profile per root frame of the folded file ($(wc -l < "$WORK/roots"))" \
    cmp -s "$WORK/profile_names" "$WORK/roots"

# ---- thread labels: without markers every stack is rooted at its thread -----------------------------------
start_fixture executor 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 --markers none -o "$WORK/threads.folded" -o "$WORK/threads.pb.gz" 2> /dev/null
check "--markers none: exit 0" test $? -eq 0
stop_fixture
go tool pprof -tags "$WORK/threads.pb.gz" > "$WORK/thread_tags" 2> /dev/null
check "pprof -tags: thread labels of the worker threads" grep -Eq '%\): exec-worker-[01]$' "$WORK/thread_tags"
check "pprof -tags: no task label without markers" sh -c "! grep -q '^ task:' '$WORK/thread_tags'"
got=$(pprof_total "$WORK/threads.pb.gz" samples)
check "pprof -top: samples total $got = folded total" test "${got:-x}" = "$(samples "$WORK/threads.folded")"

# ---- await points: file:line in pprof -lines and in speedscope's frame table -------------------------------
start_fixture tokio_markers 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 -o "$WORK/tokio.folded" -o "$WORK/tokio.pb.gz" \
    -o "$WORK/tokio.speedscope.json" 2> "$WORK/tokio.err"
check "record the tokio fixture: exit 0" test $? -eq 0
stop_fixture
grep -o '[A-Za-z0-9_:]* @ main\.rs:[0-9]*' "$WORK/tokio.folded" | sed 's/ @ / /' | LC_ALL=C sort -u > "$WORK/await_points"
check "the folded file has await points ($(wc -l < "$WORK/await_points"))" test -s "$WORK/await_points"
go tool pprof -lines -nodecount=100000 -nodefraction=0 -top "$WORK/tokio.pb.gz" 2> /dev/null |
    grep -o '[A-Za-z0-9_:]* main\.rs:[0-9]*$' | LC_ALL=C sort -u > "$WORK/pprof_lines"
check "pprof -lines: every await point as NAME main.rs:LINE" cmp -s "$WORK/await_points" "$WORK/pprof_lines"
diff "$WORK/await_points" "$WORK/pprof_lines" | head -5 | diag
node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
         for (const f of d.shared.frames) if (f.file === "main.rs") console.log(`${f.name.split(" @ ")[0]} ${f.file}:${f.line}`);' \
    "$WORK/tokio.speedscope.json" | LC_ALL=C sort -u > "$WORK/speedscope_lines"
check "speedscope: every await point has file and line in the frame table" \
    cmp -s "$WORK/await_points" "$WORK/speedscope_lines"
diff "$WORK/await_points" "$WORK/speedscope_lines" | head -5 | diag
check "pprof -top: tokio samples total = folded total" \
    test "$(pprof_total "$WORK/tokio.pb.gz" samples)" = "$(samples "$WORK/tokio.folded")"

# ---- conversion by `taskspy flamegraph` ---------------------------------------------------------------------
for ext in speedscope.json pb.gz folded svg; do
    "$TASKSPY" flamegraph "$WORK/rec.folded" -o "$WORK/conv.$ext" 2> "$WORK/conv.err"
    check "taskspy flamegraph converts to .$ext: exit 0" test $? -eq 0
done
check "converted .folded: the same lines" cmp -s "$WORK/rec.folded" "$WORK/conv.folded"
check "converted .svg: an SVG" grep -q '<svg' "$WORK/conv.svg"
got=$(pprof_total "$WORK/conv.pb.gz" samples)
check "converted .pb.gz: pprof -top total $got = folded total $total" test "${got:-x}" = "$total"
check "converted .speedscope.json: schema, weights, the app" speedscope_ok conv "$WORK/conv.speedscope.json" --total "$total"
# inferno/perf-style inline annotations: leaf_fn and mid_fn inlined into outer_fn make one location
printf '%s\n' "app;main;outer_fn;mid_fn_[i];leaf_fn_[i];memcpy 6" "app;main;outer_fn 2" "app;main;mid_fn 1" > "$WORK/inline.folded"
"$TASKSPY" flamegraph "$WORK/inline.folded" -o "$WORK/inline.pb.gz" 2> /dev/null
go tool pprof -raw "$WORK/inline.pb.gz" > "$WORK/inline.raw" 2> /dev/null
if awk '/^ +[0-9]+: 0x[0-9a-f]+ M=1 leaf_fn / { a = NR } /^ +mid_fn / && NR == a + 1 { b = NR }
        /^ +outer_fn / && NR == b + 1 && b { found = 1 } END { exit !found }' "$WORK/inline.raw"; then
    ok 0 "pprof -raw: the inline chain leaf_fn, mid_fn, outer_fn is one location"
else
    ok 1 "pprof -raw: the inline chain leaf_fn, mid_fn, outer_fn is one location"
    sed -n '/^Locations/,/^Mappings/p' "$WORK/inline.raw" | head -12 | diag
fi
check "pprof -top: inlined functions marked (inline), total 9" \
    sh -c "go tool pprof -top '$WORK/inline.pb.gz' 2>/dev/null | grep -q 'leaf_fn (inline)' &&
           go tool pprof -top '$WORK/inline.pb.gz' 2>/dev/null | grep -q 'of 9 total'"

# ---- empty: files the tools open --------------------------------------------------------------------------
: > "$WORK/empty.folded"
"$TASKSPY" flamegraph "$WORK/empty.folded" -o "$WORK/empty.pb.gz" 2> /dev/null &&
    "$TASKSPY" flamegraph "$WORK/empty.folded" -o "$WORK/empty.speedscope.json" 2> /dev/null
check "an empty folded file converts: exit 0" test $? -eq 0
check "empty .pb.gz: pprof -top opens it (0 total)" test "$(pprof_total "$WORK/empty.pb.gz" samples)" = 0
check "empty .speedscope.json: schema, the app opens it" speedscope_ok empty "$WORK/empty.speedscope.json" --total 0
"$TASKSPY" record -d 1 -o "$WORK/idle.pb.gz" -o "$WORK/idle.speedscope.json" -o "$WORK/idle.folded" -- sleep 3 2> /dev/null
check "an idle target (no samples): exit 0" test $? -eq 0
check "no samples: pprof -top opens the file" test "$(pprof_total "$WORK/idle.pb.gz" samples)" = "$(samples "$WORK/idle.folded")"
check "no samples: the speedscope file opens" speedscope_ok idle "$WORK/idle.speedscope.json" --total "$(samples "$WORK/idle.folded")"

# ---- a broken file fails the check ------------------------------------------------------------------------
head -c 200 "$WORK/rec.speedscope.json" > "$WORK/truncated.speedscope.json"
check "speedscope check fails on a truncated file" sh -c "! node '$BROWSER_DIR/speedscope_check.js' '$WORK/truncated.speedscope.json' > /dev/null 2>&1"
# valid against the schema, but a sample names a frame that is not in the table: the app fails to import it
node -e 'const fs = require("fs"); const d = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
         d.profiles[d.activeProfileIndex || 0].samples[0] = [d.shared.frames.length + 5];
         fs.writeFileSync(process.argv[2], JSON.stringify(d));' "$WORK/rec.speedscope.json" "$WORK/badframe.speedscope.json"
node "$BROWSER_DIR/speedscope_check.js" "$WORK/badframe.speedscope.json" > "$WORK/badframe.tap" 2>&1
check "speedscope check fails on a frame index out of the table" test $? -ne 0
check "... and the app itself reports the error" grep -q '^not ok [0-9]* - no error view' "$WORK/badframe.tap"

# ---- an unwritable output fails before recording, leaving nothing --------------------------------------------
mkdir "$WORK/out"
"$TASKSPY" record -d 1 -o "$WORK/out/a.folded" -o "$WORK/missing/b.pb.gz" -- sleep 2 2> "$WORK/unwritable.err"
check "an unwritable second -o: exit 1" test $? -eq 1
check "... one 'cannot write' line naming it" grep -q "^taskspy: cannot write $WORK/missing/b.pb.gz" "$WORK/unwritable.err"
check "... and no file left from the first -o" test -z "$(ls -A "$WORK/out")"
finish
