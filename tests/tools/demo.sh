#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# demo.sh TASKSPY FIXTURES: the `make demo` job: start the bundled demo executor (a C program whose two
# worker threads poll three kinds of tasks and mark each poll with USDT probes), record it for a few
# seconds, and write demo.folded and demo.svg in the current directory.
set -eu
taskspy=$1
fixtures=$2
"$fixtures/executor" 12 > /dev/null &
demo_pid=$!
trap 'kill $demo_pid 2>/dev/null || true' EXIT INT TERM
sleep 1
echo "demo: recording the demo executor (pid $demo_pid) for 4 seconds..."
"$taskspy" record -p "$demo_pid" -d 4 -F 199 -o demo.folded
"$taskspy" flamegraph demo.folded -o demo.svg --title "taskspy demo: C executor with poll markers" \
    --subtitle "one tower per task kind, merged across worker threads"
echo
echo "demo: folded stacks, busiest first:"
awk '{ print $NF "\t" $0 }' demo.folded | sort -nr | head -8 | cut -f2- | sed 's/^/  /'
echo
echo "demo: wrote $(pwd)/demo.folded"
echo "demo: wrote $(pwd)/demo.svg (open it in a browser)"
