#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# hyper_server.t: the hyper fixture (an HTTP server on 2 tokio workers, no markers) saturated by wrk on
# 127.0.0.1 and recorded by PID at 999 Hz, dwarf: the server answers both routes and counts what it answered,
# and taskspy files the request handler's CPU (render_index) under the tasks it finds through tokio's
# raw::poll<T,S>, not under a thread root.
source "$(dirname "$0")/lib/tap.sh"
plan 8
command -v wrk > /dev/null || { echo "Bail out! wrk is not installed"; exit 1; }

"$FIXTURES/hyper_server" --seconds 60 --sleep-ms 5 > "$WORK/server.out" 2> "$WORK/server.err" &
SERVER=$!
BACKGROUND_PIDS+=("$SERVER")
wait_for 20 grep -q '^hyper_fixture pid' "$WORK/server.out"
port=$(sed -n 's/^hyper_fixture pid [0-9]* port \([0-9]*\) workers 2$/\1/p' "$WORK/server.out")
check "the server says its pid and port (${port:-none})" test -n "$port"

# /sleep through bash's /dev/tcp (HTTP/1.0: the server closes the connection after answering)
{ exec 3<> "/dev/tcp/127.0.0.1/$port" && printf 'GET /sleep HTTP/1.0\r\n\r\n' >&3 && timeout 10 cat <&3; } \
    > "$WORK/sleep.out" 2>&1
exec 3<&-
check "/sleep answers after its wait" grep -q '^slept' "$WORK/sleep.out"

wrk -t1 -c16 -d5s "http://127.0.0.1:$port/" > "$WORK/wrk.out" 2>&1 &
WRK=$!
"$TASKSPY" record -p "$SERVER" -d 3 -F 999 -o "$WORK/hyper.folded" 2> "$WORK/record.err"
ok $? "record -p under wrk: exit 0"
wait "$WRK"
kill -TERM "$SERVER"
wait "$SERVER"
ok $? "the server ends on SIGTERM with exit 0"
head -1 "$WORK/record.err" | diag
served=$(sed -n 's/^requests \/ \([0-9]*\)$/\1/p' "$WORK/server.out")
completed=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$WORK/wrk.out")
check "the server counted the requests to / (${served:-none}) that wrk completed (${completed:-none})" \
    test "${served:-0}" -gt 0 -a "${served:-0}" -ge "${completed:-1}"
check "and the one to /sleep" grep -qx 'requests /sleep 1' "$WORK/server.out"

handler=$(samples "$WORK/hyper.folded" ';hyper_fixture::render_index')
in_task=$(samples "$WORK/hyper.folded" '^task: [^;]*;.*;hyper_fixture::render_index')
check "render_index has samples ($handler)" test "${handler:-0}" -ge 50
check "render_index is filed under a task root ($in_task of $handler, >= 98%)" \
    test $((${in_task:-0} * 100)) -ge $((${handler:-0} * 98))
finish
