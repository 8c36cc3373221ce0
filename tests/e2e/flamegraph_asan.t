#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# flamegraph_asan.t: end-to-end tests of `taskspy flamegraph` (also run under ASan/UBSan by make check):
# renders generated and hand-written folded files (hostile names, malformed lines, stdin, perf/py-spy
# styles, CRLF, a huge line, a file that shrinks while it is read), validates every SVG with xmllint, and
# checks exit codes, one-line errors and that a failure leaves neither an output nor a temporary file.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TASKSPY=${TASKSPY:-$ROOT/build/taskspy}
GEN="python3 $ROOT/tests/tools/gen_folded.py"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/taskspy-fg.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "1..47"
n=0
ok() {   # ok CONDITION_EXIT_STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
check() { "$@" >/dev/null 2>&1; echo $?; }
valid_xml() { xmllint --noout "$1" 2>"$WORK/xmllint.err"; local rc=$?; [ $rc -eq 0 ] || sed 's/^/# /' "$WORK/xmllint.err" | head -5; return $rc; }
no_leftovers() {  # no_leftovers DIR NAME: neither NAME nor a temporary file of it in DIR
    [ ! -e "$1/$2" ] && [ -z "$(find "$1" -maxdepth 1 -name ".$2*" -print -quit)" ]
}
one_error_line() {  # the stderr file has exactly one line, starting "taskspy: "
    [ "$(wc -l < "$1")" -eq 1 ] && grep -q '^taskspy: ' "$1"
}
run() {  # run OUT_STDERR ARGS...: sets rc
    "$TASKSPY" flamegraph "${@:2}" 2>"$1"
    rc=$?
}

# ---- 1-6: a generated profile -------------------------------------------------------------------------
$GEN 3000 --seed 3 -o "$WORK/gen.folded"
run "$WORK/err" "$WORK/gen.folded" -o "$WORK/gen.svg"
ok $rc "renders a generated folded file (exit 0)"
ok $(check valid_xml "$WORK/gen.svg") "generated SVG is valid XML"
total=$(awk '{s += $NF} END {print s}' "$WORK/gen.folded")
grep -q "<title>all ($total samples, 100.00%)</title>" "$WORK/gen.svg"
ok $? "root frame counts every sample ($total)"
grep -q '<script type="text/ecmascript">' "$WORK/gen.svg" && ! grep -q 'http://[^w]' "$WORK/gen.svg"
ok $? "script is embedded and nothing is fetched from the network"
grep -q '<title>task: app::' "$WORK/gen.svg" && grep -q ' @ [^ ]*\.rs:[0-9]* (' "$WORK/gen.svg"
ok $? "task roots and await points are drawn"
first_task=$(grep -o '<title>task: app::[a-z_]*' "$WORK/gen.svg" | sort | uniq -d | head -1)
[ -z "$first_task" ]
ok $? "equal task roots are merged into one frame"

# ---- 7-11: hostile names --------------------------------------------------------------------------------
$GEN 500 --seed 5 --hostile -o "$WORK/hostile.folded"
printf '%s\n' "task: <&>\"';a<b>&c;x]]>y 3" "<script>alert(1)</script>;q 2" \
    "name\"quote;'apos' 1" "ctl$(printf '\001\002')x;y 1" "bad$(printf '\377\376')utf8;z 1" >> "$WORK/hostile.folded"
run "$WORK/err" "$WORK/hostile.folded" -o "$WORK/hostile.svg" --minwidth 0 --title '<&>"'"'" --subtitle 'a&b' --countname '"<c>"'
ok $rc "renders hostile names (exit 0)"
ok $(check valid_xml "$WORK/hostile.svg") "hostile SVG is valid XML"
! grep -q '<&>\|<script>alert\|a<b>' "$WORK/hostile.svg"
ok $? "no raw hostile name in the SVG"
grep -q '<title>task: &lt;&amp;&gt;&quot;&apos;' "$WORK/hostile.svg"
ok $? "hostile root frame escaped in its tooltip"
[ "$(grep -c ']]>' "$WORK/hostile.svg")" -eq 2 ]
ok $? "']]>' in a name does not end a CDATA section"

# ---- 12-17: malformed lines -------------------------------------------------------------------------------
printf '%s\n' "good;one 5" "no_count_here" "neg;count -3" "nan;count abc" "empty;;frame 2" ";leading 1" \
    "frac 1.5" "good;two 7" > "$WORK/malformed.folded"
run "$WORK/err" "$WORK/malformed.folded" -o "$WORK/malformed.svg"
ok $rc "malformed lines are skipped (exit 0)"
ok $(check valid_xml "$WORK/malformed.svg") "SVG of the good lines is valid XML"
for l in 2 3 4 5 6 7; do grep -q "malformed.folded:$l: " "$WORK/err" || { echo "# line $l not reported"; false; }; done
ok $? "each malformed line reported with its line number"
! grep -q 'malformed.folded:[18]: ' "$WORK/err"
ok $? "good lines not reported"
grep -q '<title>all (12 samples' "$WORK/malformed.svg"
ok $? "only the good lines are counted"
printf 'good;crlf 4\r\nother;crlf 6\r\n' > "$WORK/crlf.folded"
run "$WORK/err" "$WORK/crlf.folded" -o "$WORK/crlf.svg"
[ $rc -eq 0 ] && valid_xml "$WORK/crlf.svg" && grep -q '<title>crlf (6 samples' "$WORK/crlf.svg" && [ ! -s "$WORK/err" ]
ok $? "CRLF line endings accepted"

# ---- 18-20: a huge line -------------------------------------------------------------------------------------
{ echo "before 1"; head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' 'x'; echo " 5"; echo "after;huge 2"; } > "$WORK/huge.folded"
run "$WORK/err" "$WORK/huge.folded" -o "$WORK/huge.svg"
ok $rc "a 9 MiB line does not stop the render"
grep -q 'huge.folded:2: line longer than' "$WORK/err"
ok $? "the huge line is reported with its line number"
valid_xml "$WORK/huge.svg" && grep -q '<title>all (3 samples' "$WORK/huge.svg"
ok $? "the lines around it are rendered"

# ---- 21-26: stdin, stdout, other tools' formats -----------------------------------------------------------
"$TASKSPY" flamegraph - -o "$WORK/stdin.svg" < "$WORK/gen.folded" 2>"$WORK/err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$WORK/stdin.svg" "$WORK/gen.svg"
ok $? "'-' reads stdin and gives the same SVG as the file"
"$TASKSPY" flamegraph -o "$WORK/stdin2.svg" < "$WORK/gen.folded" 2>"$WORK/err" && cmp -s "$WORK/stdin2.svg" "$WORK/gen.svg"
ok $? "no input argument reads stdin"
"$TASKSPY" flamegraph "$WORK/gen.folded" -o - > "$WORK/stdout.svg" 2>"$WORK/err" && cmp -s "$WORK/stdout.svg" "$WORK/gen.svg"
ok $? "'-o -' writes the SVG to stdout"
# stackcollapse-perf.pl output (kernel/jit annotations) and perf report -g folded,0,caller,count
printf '%s\n' "swapper;secondary_startup_64_[k];cpu_startup_entry_[k];do_idle_[k] 120" \
    "myapp;[unknown];main;compute 37" "myapp;main;java_thing_[j] 3" > "$WORK/perf.folded"
printf '%s\n' "# perf report header" "    12 myapp;[unknown];main;compute" "     4 myapp;main;io" >> "$WORK/perf.folded"
run "$WORK/err" "$WORK/perf.folded" -o "$WORK/perf.svg"
[ $rc -eq 0 ] && valid_xml "$WORK/perf.svg" && grep -q '<title>compute (49 samples' "$WORK/perf.svg" \
    && grep -q '<title>do_idle (120 samples' "$WORK/perf.svg"
ok $? "perf-style input (stackcollapse annotations, count-first lines) is read"
# py-spy --format raw and inferno-collapse output
printf '%s\n' "process 4242:\"python app.py\";thread (0x7f00aa);<module> (app.py:10);main (app.py:5);work (lib.py:22) 40" \
    "process 4242:\"python app.py\";thread (0x7f00aa);<module> (app.py:10);main (app.py:6) 10" > "$WORK/pyspy.folded"
run "$WORK/err" "$WORK/pyspy.folded" -o "$WORK/pyspy.svg"
[ $rc -eq 0 ] && valid_xml "$WORK/pyspy.svg" && grep -q '<title>&lt;module&gt; (app.py:10) (50 samples' "$WORK/pyspy.svg"
ok $? "py-spy raw output is read and its names escaped"
run "$WORK/err" "$WORK/gen.folded" -o "$WORK/opts.svg" --title 'My Title' --subtitle 'Sub' --width 900 \
    --height 20 --minwidth 2 --colors mem --inverted --reverse --countname events
[ $rc -eq 0 ] && valid_xml "$WORK/opts.svg" && grep -q '>My Title</text>' "$WORK/opts.svg" \
    && grep -q '>Sub</text>' "$WORK/opts.svg" && grep -q 'width="900"' "$WORK/opts.svg" \
    && grep -q 'height="19.0"' "$WORK/opts.svg" && grep -q "all ($total events, 100.00%)" "$WORK/opts.svg" \
    && grep -q 'data-inverted="1"' "$WORK/opts.svg"
ok $? "--title --subtitle --width --height --minwidth --colors --inverted --reverse --countname"

# ---- 27-30: minwidth, reverse -------------------------------------------------------------------------------
frames_default=$(grep -c '<g data-s=' "$WORK/gen.svg")
run "$WORK/err" "$WORK/gen.folded" -o "$WORK/min0.svg" --minwidth 0
frames_all=$(grep -c '<g data-s=' "$WORK/min0.svg")
run "$WORK/err" "$WORK/gen.folded" -o "$WORK/min5.svg" --minwidth 5
frames_wide=$(grep -c '<g data-s=' "$WORK/min5.svg")
echo "# frames drawn: minwidth 0: $frames_all, default: $frames_default, minwidth 5: $frames_wide"
[ "$frames_all" -ge "$frames_default" ] && [ "$frames_default" -gt "$frames_wide" ]
ok $? "--minwidth leaves out narrow frames"
grep -q "<title>all ($total samples" "$WORK/min5.svg"
ok $? "frames left out still count in their parents"
printf '%s\n' "a;shared_leaf 2" "b;shared_leaf 3" > "$WORK/rev.folded"
run "$WORK/err" "$WORK/rev.folded" -o "$WORK/rev.svg" --reverse
grep -q 'data-d="1"><title>shared_leaf (5 samples' "$WORK/rev.svg"
ok $? "--reverse merges stacks leaf first"
"$TASKSPY" flamegraph --help > "$WORK/help" 2>"$WORK/err"
rc=$?
[ $rc -eq 0 ] && grep -q -- '--minwidth' "$WORK/help"
ok $? "--help exits 0"

# ---- 31-38: failures leave nothing behind ---------------------------------------------------------------------
mkdir -p "$WORK/out"
printf '%s\n' "garbage" "more garbage" > "$WORK/bad.folded"
run "$WORK/err" "$WORK/bad.folded" -o "$WORK/out/bad.svg"
[ $rc -eq 1 ]
ok $? "no valid line: exit 1"
tail -1 "$WORK/err" | grep -q '^taskspy: .*no valid folded stack lines'
ok $? "no valid line: a 'taskspy: ' error line"
no_leftovers "$WORK/out" bad.svg
ok $? "no valid line: no output and no temporary file"
echo "old content" > "$WORK/out/keep.svg"
run "$WORK/err" "$WORK/bad.folded" -o "$WORK/out/keep.svg"
[ $rc -eq 1 ] && [ "$(cat "$WORK/out/keep.svg")" = "old content" ] && [ -z "$(find "$WORK/out" -name '.keep.svg*')" ]
ok $? "a failed render leaves an existing output untouched"
run "$WORK/err" "$WORK/missing.folded" -o "$WORK/out/missing.svg"
[ $rc -eq 1 ] && one_error_line "$WORK/err" && no_leftovers "$WORK/out" missing.svg
ok $? "missing input: exit 1, one error line, nothing left"
run "$WORK/err" "$WORK/gen.folded" -o "$WORK/nodir/x.svg"
[ $rc -eq 1 ] && one_error_line "$WORK/err"
ok $? "unwritable output: exit 1, one error line"
mkdir -p "$WORK/ro"; chmod 0555 "$WORK/ro"
if [ "$(id -u)" -eq 0 ]; then
    # root ignores directory permissions: use a path through a regular file instead
    run "$WORK/err" "$WORK/gen.folded" -o "$WORK/gen.folded/x.svg"
else
    run "$WORK/err" "$WORK/gen.folded" -o "$WORK/ro/x.svg"
fi
[ $rc -eq 1 ] && one_error_line "$WORK/err" && no_leftovers "$WORK/ro" x.svg
ok $? "output in a place that cannot be written: exit 1, nothing left"
run "$WORK/err" "$WORK/gen.folded" -o "$WORK/out"
[ $rc -eq 1 ] && one_error_line "$WORK/err" && [ -d "$WORK/out" ] && [ -z "$(find "$WORK" -maxdepth 1 -name '.out*')" ]
ok $? "output that is a directory: exit 1, nothing left"

# ---- 39-43: usage errors ---------------------------------------------------------------------------------------
usage_case() {  # usage_case DESCRIPTION ARGS...
    local what=$1; shift
    run "$WORK/err" "$@"
    [ $rc -eq 2 ] && one_error_line "$WORK/err" && no_leftovers "$WORK/out" u.svg
    ok $? "usage error: $what (exit 2, one line)"
}
usage_case "unknown option" "$WORK/gen.folded" -o "$WORK/out/u.svg" --bogus
usage_case "no -o" "$WORK/gen.folded"
usage_case "bad --width" "$WORK/gen.folded" -o "$WORK/out/u.svg" --width abc
usage_case "unknown --colors" "$WORK/gen.folded" -o "$WORK/out/u.svg" --colors rainbow
usage_case "two inputs" "$WORK/gen.folded" "$WORK/gen.folded" -o "$WORK/out/u.svg"

# ---- 44: 100,000 distinct stacks --------------------------------------------------------------------------------
$GEN 100000 --seed 11 -o "$WORK/big.folded"
start=$(date +%s.%N)
run "$WORK/err" "$WORK/big.folded" -o "$WORK/big.svg"
end=$(date +%s.%N)
echo "# 100,000 stacks rendered in $(awk "BEGIN {printf \"%.3f\", $end - $start}") s, $(stat -c %s "$WORK/big.svg" 2>/dev/null) bytes"
[ $rc -eq 0 ] && valid_xml "$WORK/big.svg"
ok $? "100,000 distinct stacks render to valid XML"

# ---- 45-47: an input that shrinks while it is read ------------------------------------------------------------
# taskspy reads a big regular file through a mapping of it. The copy here is cut to 4 KB as soon as taskspy has
# it mapped (/proc/PID/maps): reading on past the new end must end in one line, exit 1 and no output, never a
# crash (SIGBUS). A cut that lands after the read gives a whole graph. Tried until a cut lands during the read
# (nearly always the first try: the read takes tens of ms, the cut a few after the mapping appears).
crashes=0 hangs=0 bad_failures=0 hits=0 tries=0
while [ $tries -lt 10 ] && [ $hits -eq 0 ]; do
    tries=$((tries + 1))
    cp "$WORK/big.folded" "$WORK/shrink.folded"
    rm -f "$WORK/shrink.svg"
    "$TASKSPY" flamegraph "$WORK/shrink.folded" -o "$WORK/shrink.svg" 2>"$WORK/err" &
    pid=$!
    for _ in $(seq 2000); do
        grep -q shrink.folded "/proc/$pid/maps" 2>/dev/null && break
        kill -0 $pid 2>/dev/null || break
    done
    truncate -s 4096 "$WORK/shrink.folded"
    for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    if kill -0 $pid 2>/dev/null; then          # still reading after a minute: hung
        kill -9 $pid
        hangs=$((hangs + 1)); echo "# try $tries: still running after 60 s, killed"
    fi
    wait $pid
    rc=$?
    if [ $rc -eq 137 ] && [ $hangs -gt 0 ]; then
        :
    elif [ $rc -ge 128 ]; then
        crashes=$((crashes + 1)); echo "# try $tries: killed by signal $((rc - 128))"; sed 's/^/#   /' "$WORK/err" | head -5
    elif [ $rc -eq 1 ]; then
        if one_error_line "$WORK/err" && grep -q 'shrank while it was being read' "$WORK/err" && no_leftovers "$WORK" shrink.svg; then
            hits=$((hits + 1))
        else
            bad_failures=$((bad_failures + 1)); echo "# try $tries: exit 1 but:"; sed 's/^/#   /' "$WORK/err" | head -5
        fi
    elif [ $rc -ne 0 ] || ! valid_xml "$WORK/shrink.svg"; then
        bad_failures=$((bad_failures + 1)); echo "# try $tries: exit $rc"; sed 's/^/#   /' "$WORK/err" | head -5
    fi
done
echo "# shrinking input: $tries tries, $hits cut during the read, $crashes crashes, $hangs hangs, $bad_failures other outcomes"
[ $crashes -eq 0 ] && [ $hangs -eq 0 ]
ok $? "an input cut short while mapped neither crashes nor hangs taskspy"
[ $bad_failures -eq 0 ]
ok $? "each try ends in a whole graph, or exit 1 with one line and no output"
[ $hits -gt 0 ]
ok $? "a cut during the read is reported: 'shrank while it was being read'"
