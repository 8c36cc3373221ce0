#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# debuginfod.t: a stripped program whose debug file only a debuginfod server has (issue 32). The tokio fixture
# stripped (tokio_plain_stripped: objcopy --only-keep-debug, strip --strip-all, objcopy --add-gnu-debuglink) is
# copied alone into a directory, so that its debug file is in none of the local places (the build-id path, its
# debug link beside it, in .debug/, under /usr/lib/debug), and the debug file is served by Debian's debuginfod on
# loopback. With DEBUGINFOD_URLS (and a fresh DEBUGINFOD_CACHE_PATH) the profile is the unstripped build's: task
# roots from tokio's CONTEXT (its DWARF types, from the fetched file), await points on the fixture's .await
# lines, source lines in pprof, the download on the status line; attached with --markers probes, raw::poll
# found through it too. With the server stopped: exit 0 soon, one line on debuginfod, [name] frames; with a server
# that never answers, the same within DEBUGINFOD_TIMEOUT. Without DEBUGINFOD_URLS: the line naming the object and
# what was tried.
source "$(dirname "$0")/lib/tap.sh"
SRC="$(cd "$(dirname "$0")/../fixtures/tokio/src" && pwd)/main.rs"
plan 24

mkdir -p "$WORK/bin" "$WORK/served"
cp "$FIXTURES/tokio_plain_stripped" "$WORK/bin/"
cp "$FIXTURES/tokio_plain_stripped.debug" "$WORK/served/"
APP="$WORK/bin/tokio_plain_stripped"
ID=$(readelf -n "$APP" | sed -n 's/.*Build ID: *//p')
BUILD_ID_PLACE="/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug"
check "the stripped copy has a build id ($ID) and a debug link, and no symbol table" \
    sh -c "[ -n '$ID' ] && readelf -S '$APP' | grep -q '\.gnu_debuglink' && ! readelf -S '$APP' | grep -q '\.symtab'"
check "its debug file is in none of the local places" \
    sh -c "[ ! -e '$BUILD_ID_PLACE' ] && [ ! -e '$WORK/bin/tokio_plain_stripped.debug' ] &&
           [ ! -e '$WORK/bin/.debug/tokio_plain_stripped.debug' ] && [ ! -e '/usr/lib/debug$WORK/bin/tokio_plain_stripped.debug' ]"

# the server (it listens on every interface; asked on 127.0.0.1), on a port nobody holds, federating to no other;
# ready once it serves the file (asked with a fresh client cache each time: libdebuginfod remembers a "not there")
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
env -u DEBUGINFOD_URLS debuginfod -F "$WORK/served" -p "$PORT" -d "$WORK/debuginfod.sqlite" > "$WORK/debuginfod.log" 2>&1 &
SERVER=$!
BACKGROUND_PIDS+=("$SERVER")
serves() {
    rm -rf "$WORK/probe-cache"
    DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$WORK/probe-cache" debuginfod-find debuginfo "$ID" > /dev/null 2>&1
}
wait_for 60 serves || diag < "$WORK/debuginfod.log"
check "debuginfod serves the debug file on $URL" serves

# ---- with DEBUGINFOD_URLS: the recording under a pseudo-terminal (util-linux's script), for the status line
script -qfec "stty cols 200 2>/dev/null; DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH='$WORK/cache' '$TASKSPY' record \
    -d 3 -F 199 -o '$WORK/served.folded' -o '$WORK/served.pb.gz' -- '$APP' 6 > /dev/null" /dev/null \
    > "$WORK/served.tty" < /dev/null
RC=$?
tr '\r' '\n' < "$WORK/served.tty" | sed "s/$(printf '\033')\\[K//g" > "$WORK/served.err"
check "with the server: exit 0" test "$RC" -eq 0
[ "$RC" -eq 0 ] || diag < "$WORK/served.err"
grep '^taskspy: \(debuginfod\|no symbols\|tasks\|markers\)' "$WORK/served.err" | grep -v ': downloading ' | diag
check "with the server: the download shown on the status line" \
    grep -Eq '^taskspy: debuginfod: downloading the debug file of tokio_plain_stripped: [0-9.]+ of [0-9.]+ MB' "$WORK/served.err"
check "with the server: the debug file fetched into DEBUGINFOD_CACHE_PATH" \
    sh -c "[ -s '$WORK/cache/$ID/debuginfo' ] && grep -Eq '^taskspy: debuginfod: asked for the debug files of [0-9]+ objects?: 1 fetched' '$WORK/served.err'"
check "with the server: tasks from tokio's CONTEXT, its DWARF types read from the fetched file" \
    grep -q "^taskspy: tasks: from the TLS marker tokio CONTEXT.current_task_id .*; placed through the debug file $WORK/cache/$ID/debuginfo" \
    "$WORK/served.err"
check "with the server: no object without symbols" sh -c "! grep -q '^taskspy: no symbols for $APP' '$WORK/served.err'"
for kind in parse render compress; do
    check "with the server: a task root for ${kind}_task" grep -q "^task: tokio_fixture::${kind}_task;" "$WORK/served.folded"
done
# await points: each "FN @ main.rs:N" label of the fixture's async fns is on one of FN's .await lines (a parent,
# suspended in its child) or in FN's body (a leaf: its burn() call, its entry or closing brace), as in the
# unstripped build (record_tokio.t); the lines come from the fetched file's DWARF
awk '{ if (match($0, /\/\/ (AWAIT|BURN):[a-z_]+:/)) { tag = substr($0, RSTART + 3, RLENGTH - 3); split(tag, p, ":");
      print p[1] " " p[2] ":" NR } }
     /^async fn [a-z_]+\(/ { name = $3; sub(/\(.*/, "", name); start = NR }
     /^}/ && name != "" { for (i = start; i <= NR; i++) print "BODY " name ":" i; name = "" }' "$SRC" |
    sort -u > "$WORK/lines"
grep -oE 'tokio_fixture::[a-z_]+ @ main\.rs:[0-9]+' "$WORK/served.folded" | sed 's/^tokio_fixture:://; s/ @ main\.rs:/:/' |
    sort -u > "$WORK/labels"
awk 'NR == FNR { split($0, a, " "); ok[a[2]] = 1; if (a[1] == "AWAIT") at_await[a[2]] = 1; next }
     { if (!($0 in ok)) { print "# not a line of its fn: " $0; bad = 1 } else if ($0 in at_await) n++ }
     END { print n + 0; exit bad }' "$WORK/lines" "$WORK/labels" > "$WORK/at_await"
check "with the server: every await point on a line of its fn" test $? -eq 0
diag < "$WORK/at_await"
check "with the server: await points on .await lines ($(tail -n 1 "$WORK/at_await") of them, at least 4)" \
    test "$(tail -n 1 "$WORK/at_await")" -ge 4
# source lines in pprof (as go tool pprof shows them): each task kind's burn() call line
go tool pprof -lines -top -nodecount=10000 "$WORK/served.pb.gz" > "$WORK/served.lines" 2> "$WORK/pprof.err"
for fns in parse_request 'render_header|render_body' compress_response; do
    re=$(grep -nE "// BURN:($fns):" "$SRC" | cut -d: -f1 | paste -sd'|')
    check "with the server: pprof has source lines: a burn() call of $fns (main.rs:$re)" \
        grep -Eq "main\.rs:($re)( |$)" "$WORK/served.lines"
done

# attached, the probe route: tokio's raw::poll found in the fetched file (libdebuginfod's cache this time)
FIXTURES="$WORK/bin" start_fixture tokio_plain_stripped 20
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH="$WORK/cache" "$TASKSPY" record -p "$FIXTURE_PID" -d 2 -F 199 \
    --markers probes -o "$WORK/probes.folded" 2> "$WORK/probes.err"
stop_fixture
grep '^taskspy: \(markers\|debuginfod\|no symbols\)' "$WORK/probes.err" | diag
check "attached, --markers probes: raw::poll copies found through the fetched file, task roots" \
    sh -c "grep -q 'tokio:poll (function entry) x' '$WORK/probes.err' && grep -q '^task: tokio_fixture::' '$WORK/probes.folded'"

# unanswered NAME URL WHY [COUNT_FILE]: a 1 s recording with DEBUGINFOD_URLS=URL, DEBUGINFOD_TIMEOUT=2 and a fresh
# cache; exit 0 (a 120-s timeout would end it otherwise), and one line on debuginfod giving WHY for the
# executable. COUNT_FILE: the server's count of the connections it was asked on (the bound: each object asked at
# most 3 times, libdebuginfod's first try and its 2 retries, each ended by DEBUGINFOD_TIMEOUT; never a wait per
# address, nor a retry without end)
unanswered() {
    DEBUGINFOD_URLS=$2 DEBUGINFOD_CACHE_PATH="$WORK/cache-$1" DEBUGINFOD_TIMEOUT=2 \
        timeout 120 "$TASKSPY" record -d 1 -F 199 -o "$WORK/$1.folded" -- "$APP" 4 > /dev/null 2> "$WORK/$1.err"
    local rc=$?
    grep '^taskspy: \(debuginfod\|no symbols\)' "$WORK/$1.err" | diag
    if [ -n "${4:-}" ]; then
        local asked objects
        asked=$(cat "$4" 2> /dev/null)
        objects=$(sed -n 's/^taskspy: debuginfod: asked for .* \([1-9][0-9]*\) without an answer .*/\1/p' "$WORK/$1.err")
        check "$1: exit 0; the server asked ${asked:-?} times for ${objects:-?} objects (1 to 3 times each)" \
            sh -c "test $rc -eq 0 && test -n '$asked' && test -n '$objects' && test '$asked' -ge 1 && test '$asked' -le \$((3 * $objects))"
    else
        check "$1: exit 0 (no 120-s timeout)" test "$rc" -eq 0
    fi
    check "$1: one line on debuginfod, its failure ($3)" \
        sh -c "[ \$(grep -c '^taskspy: debuginfod' '$WORK/$1.err') -eq 1 ] &&
               grep -Eq '^taskspy: debuginfod: asked for .* [1-9][0-9]* without an answer \($3 for $APP; ' '$WORK/$1.err'"
}

# ---- the server stopped: one line, the program's frames unnamed, exit 0 in bounded time
kill "$SERVER"
wait "$SERVER" 2> /dev/null
unanswered stopped "$URL" "Connection refused"
check "stopped: the program's frames are [tokio_plain_stripped]" grep -q '\[tokio_plain_stripped\]' "$WORK/stopped.folded"

# ---- a server that takes the connection and never answers: given up after DEBUGINFOD_TIMEOUT (libdebuginfod alone
# would wait as long as curl and retry twice), the same one line
# (it accepts and counts each connection into silent.asked, and never answers)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64); print(s.getsockname()[1], flush=True)
held, n, end = [], 0, time.time() + 600
while time.time() < end:
    c, _ = s.accept(); held.append(c); n += 1
    open(sys.argv[1] + ".tmp", "w").write(str(n)); __import__("os").replace(sys.argv[1] + ".tmp", sys.argv[1])' \
    "$WORK/silent.asked" > "$WORK/silent.port" &
BACKGROUND_PIDS+=("$!")
wait_for 10 test -s "$WORK/silent.port"
unanswered silent "http://127.0.0.1:$(cat "$WORK/silent.port")" "timed out" "$WORK/silent.asked"

# ---- without DEBUGINFOD_URLS: the object named, with what was tried
env -u DEBUGINFOD_URLS "$TASKSPY" record -d 1 -F 199 -o "$WORK/unset.folded" -- "$APP" 4 > /dev/null 2> "$WORK/unset.err"
grep '^taskspy: no symbols' "$WORK/unset.err" | diag
check "no DEBUGINFOD_URLS: the object, its share and what was tried, in one line" \
    grep -Eq "^taskspy: no symbols for $APP \([0-9.]+% of samples; its frames show as \[tokio_plain_stripped\][^)]*\): tried $BUILD_ID_PLACE, \.gnu_debuglink tokio_plain_stripped\.debug \(beside it, \.debug/, /usr/lib/debug\), debuginfod \(DEBUGINFOD_URLS unset\); set DEBUGINFOD_URLS" \
    "$WORK/unset.err"
check "no DEBUGINFOD_URLS: no line on debuginfod" sh -c "! grep -q '^taskspy: debuginfod' '$WORK/unset.err'"
finish
