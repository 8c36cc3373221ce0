#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# attribution_load.sh: lost samples, lost marker records and task samples filed outside their task, under
# load: the executor fixture with --fast-polls and the tokio fixture (both workers busy), recorded at 999 Hz.
# Usage: TASKSPY=build/taskspy FIXTURES=build/fixtures bench/attribution_load.sh [SECONDS] [EXTRA RECORD OPTIONS]
set -u
secs=${1:-5}; shift || true
work=$(mktemp -d); trap '[ -n "${KEEP:-}" ] || rm -rf "$work"; echo "$work" > /tmp/h7/lastwork' EXIT
# misfiled FOLDED TASK_FRAMES: samples with a task frame on the stack whose root is not a task root
misfiled() { awk -v pat="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ pat) { t += n
    if ($0 !~ /^task/ && $0 !~ /^\[unknown task\]/) m += n; if ($0 ~ /^\[unknown task\]/) u += n } }
    END { printf "task-code samples %d, under a thread root %d, [unknown task] %d\n", t, m, u }' "$1"; }
run() { # LABEL FIXTURE TASK_FRAMES FIXTURE_ARGS...
    local label=$1 fixture=$2 frames=$3; shift 3
    "$FIXTURES/$fixture" "$@" > /dev/null 2>&1 & local pid=$!
    sleep 1
    "$TASKSPY" record -p "$pid" -d "$secs" -F 999 "${EXTRA[@]}" -o "$work/$label.folded" 2> "$work/$label.err"
    kill "$pid"; wait "$pid" 2>/dev/null
    echo "== $label"
    grep -E 'samples, .* lost|lost marker|throttled|dropped|queue' "$work/$label.err"
    misfiled "$work/$label.folded" "$frames"
}
EXTRA=("$@")
run executor executor ';task_(parse|render|compress)(;|$)' 60 --fast-polls
run tokio tokio_markers ';tokio_fixture::(parse|render|compress)_task( @ [^;]*)?(;|$)' 60 --fast-polls
