#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# exports.t: the speedscope, pprof and trace exports checked by their real consumers. One recording of the C
# executor fixture written to every format at once (-o repeated): `go tool pprof` totals (samples and CPU
# nanoseconds) equal the folded total, -tags shows the task, task_id and thread labels, -lines file:line and
# -raw each function's start line (its declaration in the fixture's source); with --markers none, thread
# labels only. A recording of shares_nofp: one location per real address, mix_inline's inline chain into
# burn_b as one location's lines, the mappings with the build ids readelf reads from the same files, the
# program itself as pprof's main binary.
# tests/browser/speedscope_check.js validates the speedscope file against the schema of the speedscope npm
# package, checks its weights add up to the folded total and imports it in the speedscope app (headless
# Chromium). The tokio fixture's await points show as file:line in `pprof -lines` and in speedscope's frame
# table; `taskspy flamegraph` converts a folded file (inline chains marked "_[i]" become one pprof
# location whose -raw lines list the chain); empty folded files and a recording with zero samples give
# files the tools open (pprof, speedscope, the trace in speedscope); malformed folded lines are skipped, and
# a file with none valid is an error that leaves no file; a broken speedscope file fails the check; an
# unwritable -o fails before recording, leaving nothing.
# Never skips: no go, no node or no Chromium is "not ok".
source "$(dirname "$0")/lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BROWSER_DIR=$ROOT/tests/browser
OUT_DIR=$ROOT/build/test-output      # the speedscope screenshot is kept there (for the README)
mkdir -p "$OUT_DIR"
plan 64

command -v go > /dev/null || echo "# go is missing: install Debian's golang-go (make check does)" | diag
if [ ! -f "$BROWSER_DIR/node_modules/speedscope/package.json" ] || [ ! -f "$BROWSER_DIR/node_modules/ajv/package.json" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error > "$WORK/npm.log" 2>&1) || diag < "$WORK/npm.log"
fi
export GOCACHE=$WORK/gocache GOTELEMETRY=off

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
check "pprof -tags: thread labels beside the task labels" grep -Eq '%\): exec-worker-[01]$' "$WORK/tags"
go tool pprof -raw "$WORK/rec.pb.gz" > "$WORK/rec.raw" 2> /dev/null
check "pprof -raw: samples labelled task, task_id and thread" \
    grep -Eq '^ +task:\[task_[a-z]+\] task_id:\[[0-9]+\] thread:\[exec-worker-[01]\]$' "$WORK/rec.raw"
go tool pprof -lines -nodecount=100000 -nodefraction=0 -top "$WORK/rec.pb.gz" > "$WORK/rec.lines" 2> /dev/null
parse_line=$(grep -n '^__attribute__((noinline)) enum poll_result task_parse' "$ROOT/tests/fixtures/executor.c" | cut -d: -f1)
check "pprof -lines: file:line of the fixture's functions (task_parse in executor.c)" \
    grep -Eq ' task_parse /[^ ]*/executor\.c:[0-9]+$' "$WORK/rec.lines"
check "pprof -raw: task_parse's start line is its declaration's ($parse_line)" \
    grep -Eq " task_parse /[^ ]*/executor\.c:[0-9]+ s=$parse_line$" "$WORK/rec.raw"
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

# ---- addresses: one location per address, inline chains, mappings with their build ids ----------------------
# shares.c: burn_b reaches spin through mix_inline, always inlined (built -O2)
start_fixture shares_nofp 30
"$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 499 -o "$WORK/shares.folded" -o "$WORK/shares.pb.gz" 2> /dev/null
check "record shares_nofp to .folded and .pb.gz: exit 0" test $? -eq 0
stop_fixture
go tool pprof -raw "$WORK/shares.pb.gz" > "$WORK/shares.raw" 2> "$WORK/shares.raw.err"
diag < "$WORK/shares.raw.err"
shares_total=$(samples "$WORK/shares.folded")
check "pprof -top: samples total = folded total ($shares_total)" test "$(pprof_total "$WORK/shares.pb.gz" samples)" = "$shares_total"
burn_b_line=$(grep -n '^__attribute__((noinline)) uint64_t burn_b' "$ROOT/tests/fixtures/shares.c" | cut -d: -f1)
if awk -v s="$burn_b_line" '/^ +[0-9]+: 0x[0-9a-f]+ M=1 mix_inline [^ ]*\/shares\.c:[0-9]+ s=0$/ { a = NR }
        $1 == "burn_b" && $2 ~ /\/shares\.c:[0-9]+$/ && $3 == "s=" s && NR == a + 1 { found = 1 }
        END { exit !found }' "$WORK/shares.raw"; then
    ok 0 "pprof -raw: a location whose lines are mix_inline inlined into burn_b (start line $burn_b_line)"
else
    ok 1 "pprof -raw: a location whose lines are mix_inline inlined into burn_b (start line $burn_b_line)"
    sed -n '/^Locations/,/^Mappings/p' "$WORK/shares.raw" | head -20 | diag
fi
check "pprof -top: the main binary is the recorded program (File: shares_nofp)" \
    grep -q '^File: shares_nofp$' <(go tool pprof -top "$WORK/shares.pb.gz" 2> /dev/null)
# one location per address: no address twice among the locations
dups=$(sed -n '/^Locations/,/^Mappings/p' "$WORK/shares.raw" | awk '$2 ~ /^0x/ { print $2 }' | sort | uniq -d | wc -l)
check "pprof -raw: each address is one location ($dups repeated)" test "$dups" -eq 0
check "pprof -raw: locations at the fixture's real addresses (PIE, far above 0x400000)" \
    grep -Eq '^ +[0-9]+: 0x5[0-9a-f]{11} M=1 spin' "$WORK/shares.raw"
for object in "$FIXTURES/shares_nofp" "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)"; do
    id=$(readelf -n "$object" | sed -n 's/^ *Build ID: //p')
    check "pprof -raw: mapping of $(basename "$object") with its build id from readelf (${id:-none})" \
        grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*$(basename "$object") ${id:-x} \[FN\]" "$WORK/shares.raw"
done

# ---- await points: file:line in pprof -lines and in speedscope's frame table -------------------------------
start_fixture tokio_markers 40
"$TASKSPY" record -p "$FIXTURE_PID" -d 3 -F 199 -o "$WORK/tokio.folded" -o "$WORK/tokio.pb.gz" \
    -o "$WORK/tokio.speedscope.json" 2> "$WORK/tokio.err"
check "record the tokio fixture: exit 0" test $? -eq 0
stop_fixture
grep -o '[A-Za-z0-9_:]* @ main\.rs:[0-9]*' "$WORK/tokio.folded" | sed 's/ @ / /' | LC_ALL=C sort -u > "$WORK/await_points"
check "the folded file has await points ($(wc -l < "$WORK/await_points"))" test -s "$WORK/await_points"
# pprof's lines are every frame's (full path, function names with their async suffixes, "(inline)" marks),
# the await points a part of them
go tool pprof -lines -nodecount=100000 -nodefraction=0 -top "$WORK/tokio.pb.gz" 2> /dev/null |
    sed 's/ (inline)$//; s/::{{closure}}//g; s/::{async_fn#0}//g; s/::{async_block#0}//g' | grep -o '[A-Za-z0-9_:]* [^ ]*/main\.rs:[0-9]*$' | sed 's| [^ ]*/main\.rs:| main.rs:|' | LC_ALL=C sort -u > "$WORK/pprof_lines"
check "pprof -lines: every await point as NAME .../main.rs:LINE" \
    test -z "$(LC_ALL=C comm -23 "$WORK/await_points" "$WORK/pprof_lines")"
LC_ALL=C comm -23 "$WORK/await_points" "$WORK/pprof_lines" | head -5 | diag
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

# ---- empty or malformed input: files the tools open, never a broken one ---------------------------------------
: > "$WORK/empty.folded"
"$TASKSPY" flamegraph "$WORK/empty.folded" -o "$WORK/empty.pb.gz" 2> /dev/null &&
    "$TASKSPY" flamegraph "$WORK/empty.folded" -o "$WORK/empty.speedscope.json" 2> /dev/null
check "an empty folded file converts: exit 0" test $? -eq 0
check "empty .pb.gz: pprof -top opens it (0 total)" test "$(pprof_total "$WORK/empty.pb.gz" samples)" = 0
check "empty .pb.gz: pprof -raw reads it" go tool pprof -raw "$WORK/empty.pb.gz"
check "empty .speedscope.json: schema, the app opens it" speedscope_ok empty "$WORK/empty.speedscope.json" --total 0
# a process that uses no CPU while recorded: zero samples, every format still written and opened
sleep 30 &
idle_pid=$!
BACKGROUND_PIDS+=("$idle_pid")
"$TASKSPY" record -p "$idle_pid" -d 1 -o "$WORK/idle.pb.gz" -o "$WORK/idle.speedscope.json" -o "$WORK/idle.folded" \
    -o "$WORK/idle.trace.json" 2> "$WORK/idle.err"
check "an idle target: exit 0" test $? -eq 0
kill "$idle_pid" 2> /dev/null
check "an idle target: zero samples, and record says so" \
    sh -c "test ! -s '$WORK/idle.folded' && grep -q 'warning: no samples' '$WORK/idle.err'"
check "no samples: pprof -top opens the file (0 total)" test "$(pprof_total "$WORK/idle.pb.gz" samples)" = 0
check "no samples: pprof -raw reads it" go tool pprof -raw "$WORK/idle.pb.gz"
check "no samples: the speedscope file opens" speedscope_ok idle "$WORK/idle.speedscope.json" --total 0
check "no samples: the trace opens in speedscope" speedscope_ok idle_trace --trace "$WORK/idle.trace.json"
# malformed folded lines: skipped with a warning, the rest converted; nothing valid: an error and no file
printf '%s\n' "main;work 3" "no count here" "main;-5" "main;idle 2" > "$WORK/partly.folded"
"$TASKSPY" flamegraph "$WORK/partly.folded" -o "$WORK/partly.pb.gz" 2> "$WORK/partly.err"
check "a partly malformed folded file converts: exit 0, the bad lines named" \
    sh -c "grep -q 'partly.folded:2: ' '$WORK/partly.err' && grep -q 'partly.folded:3: ' '$WORK/partly.err'"
check "... pprof -top total = the valid lines' (5)" test "$(pprof_total "$WORK/partly.pb.gz" samples)" = 5
printf '%s\n' "no count here" "main;-5" > "$WORK/bad.folded"
"$TASKSPY" flamegraph "$WORK/bad.folded" -o "$WORK/bad.pb.gz" 2> "$WORK/bad.err"
bad_rc=$?
check "a folded file with no valid line: non-zero exit ($bad_rc)" test "$bad_rc" -ne 0
check "... an error line, and no file left" sh -c "grep -q '^taskspy: .*no valid' '$WORK/bad.err' && test ! -e '$WORK/bad.pb.gz'"
grep -v 'line skipped' "$WORK/bad.err" | diag

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
