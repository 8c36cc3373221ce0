#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# flamegraph_pl_parity.t: SPEC section 4, "frame-name annotations that flamegraph.pl strips (_[k], _[j], _[i],
# _[w]) colour the frame and are not shown in its title". A generated 3,000-stack folded file whose frames
# carry all four annotations is rendered by taskspy and by flamegraph.pl; the titles of the annotated frames
# must be the same (counts compared without flamegraph.pl's thousands separators). Only those: where a name
# such as "f" is followed by both "f NN" and "f @ x.rs:1" lines, flamegraph.pl's line sort splits "f" in two
# frames, which taskspy (merging whole stacks) does not, so unannotated titles may differ in counts.
# The flamegraph.pl Debian ships (libdevel-nytprof-perl's copy, from 2013) predates the stripping: where its
# titles still carry the annotations, upstream's rule (flamegraph.pl: s/_\[[kwij]\]$// on the name, in
# titles and labels) is applied to them before comparing, and the test says so.
source "$(dirname "$0")/lib/tap.sh"
plan 6

FLAMEGRAPH_PL=
for p in /usr/bin/flamegraph.pl /usr/share/perl5/Devel/NYTProf/flamegraph.pl; do
    [ -f "$p" ] && { FLAMEGRAPH_PL=$p; break; }
done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# 3,000 stacks with annotated frames: gen_folded.py writes kernel frames (_[k]); every frame whose name's
# checksum says so gets _[j], _[i] or _[w] (deterministic)
python3 "$ROOT/tests/tools/gen_folded.py" 3000 --seed 19 -o "$WORK/plain.folded"
python3 - "$WORK/plain.folded" > "$WORK/annotated.folded" <<'EOF'
import sys, zlib
for line in open(sys.argv[1], encoding="utf-8"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    for i in range(1, len(frames)):
        if frames[i].endswith("_[k]"):
            continue
        h = zlib.crc32(frames[i].encode()) % 20
        if h < 3:
            frames[i] += "_[" + "jiw"[h] + "]"
    print(";".join(frames), count)
EOF
annotated=$(grep -o '_\[[kjiw]\]' "$WORK/annotated.folded" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')
check "the input has frames of all four annotations ($annotated)" \
    sh -c "echo '$annotated' | grep -q '_\[k\]' && echo '$annotated' | grep -q '_\[j\]' && echo '$annotated' | grep -q '_\[i\]' && echo '$annotated' | grep -q '_\[w\]'"

"$TASKSPY" flamegraph "$WORK/annotated.folded" -o "$WORK/taskspy.svg" 2> "$WORK/taskspy.err"
check "taskspy renders it" test $? -eq 0
check "flamegraph.pl is installed (Debian package libdevel-nytprof-perl)" test -n "$FLAMEGRAPH_PL"
[ -n "$FLAMEGRAPH_PL" ] && perl "$FLAMEGRAPH_PL" "$WORK/annotated.folded" > "$WORK/pl.svg" 2> "$WORK/pl.err"

# annotated_titles FILE: the titles of annotated frames, unescaped, one a line (flamegraph.pl's "1,234" counts
# as "1234"): frames whose name, annotation stripped, is the name of an annotated frame of the input (the
# input's annotations are a function of the name: the script fails otherwise)
annotated_titles() {
    python3 - "$1" "$WORK/annotated.folded" <<'EOF'
import html, re, sys
annotation = re.compile(r"_\[[kjiw]\]$")
annotated, plain = set(), set()
for line in open(sys.argv[2], encoding="utf-8"):
    for f in line.rsplit(" ", 1)[0].split(";")[1:]:
        (annotated if annotation.search(f) else plain).add(annotation.sub("", f))
if annotated & plain:
    sys.exit("names both annotated and not: %s" % sorted(annotated & plain)[:3])
text = open(sys.argv[1], encoding="utf-8").read()
for t in re.findall(r"<title>(.*?)</title>", text, re.S):
    m = re.match(r"^(.*) \(([0-9,]+) (samples, .*)\)$", html.unescape(t), re.S)
    if m and annotation.sub("", m.group(1)) in annotated:
        print("%s (%s %s)" % (m.group(1), m.group(2).replace(",", ""), m.group(3)))
EOF
}
annotated_titles "$WORK/taskspy.svg" > "$WORK/taskspy.unsorted"
rc=$?
check "taskspy's annotated frames are found ($(wc -l < "$WORK/taskspy.unsorted"))" \
    test $rc -eq 0 -a -s "$WORK/taskspy.unsorted"
sort "$WORK/taskspy.unsorted" > "$WORK/taskspy.titles"
touch "$WORK/pl.titles"
[ -f "$WORK/pl.svg" ] && annotated_titles "$WORK/pl.svg" | sort > "$WORK/pl.titles"

check "taskspy shows no annotation in titles or labels" \
    sh -c "! grep -q '_\[[kjiw]\] (' '$WORK/taskspy.svg' && ! grep -q '_\[[kjiw]\]<' '$WORK/taskspy.svg'"

if grep -q '_\[[kjiw]\] (' "$WORK/pl.titles"; then
    echo "$FLAMEGRAPH_PL predates flamegraph.pl's annotation stripping: applying upstream's rule s/_\\[[kwij]\\]\$// to its titles" | diag
    sed -i 's/_\[[kwij]\] (\([0-9]* samples, \)/ (\1/' "$WORK/pl.titles"
    sort -o "$WORK/pl.titles" "$WORK/pl.titles"
fi
frames=$(wc -l < "$WORK/pl.titles")
differ=$(comm -3 "$WORK/taskspy.titles" "$WORK/pl.titles" | wc -l)
comm -3 "$WORK/taskspy.titles" "$WORK/pl.titles" | head -5 | diag
check "the titles of all $frames annotated frames match flamegraph.pl's ($differ differ)" \
    test "$frames" -gt 100 -a "$differ" -eq 0
finish
