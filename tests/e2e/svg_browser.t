#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# svg_browser.t: the interactive SVG in a real browser: renders folded files with taskspy, then
# tests/browser/svg_check.js drives Debian's headless Chromium over them (zoom, search percentages against
# the folded counts, URL state, escaping, a 100,000-stack graph) and prints the TAP. Installs playwright-core
# from npm into tests/browser/node_modules when missing. Never skips: no Chromium or no npm is "not ok".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TASKSPY=${TASKSPY:-$ROOT/build/taskspy}
BROWSER_DIR=$ROOT/tests/browser
OUT_DIR=$ROOT/build/test-output
WORK=$(mktemp -d "${TMPDIR:-/tmp}/taskspy-svg-browser.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT_DIR"

fail_all() {
    echo "1..1"
    echo "not ok 1 - $1"
    exit 1
}

if [ ! -f "$BROWSER_DIR/node_modules/playwright-core/package.json" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error >"$WORK/npm.log" 2>&1) ||
        { sed 's/^/# /' "$WORK/npm.log" | tail -20; fail_all "npm ci installs playwright-core in tests/browser"; }
fi
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || fail_all "Chromium is installed at ${CHROMIUM:-/usr/bin/chromium} (Debian package chromium)"

GEN="python3 $ROOT/tests/tools/gen_folded.py"
$GEN 300 --seed 21 --max-depth 12 -o "$WORK/graph.folded" &&
$GEN 300 --seed 22 --hostile --max-depth 8 -o "$WORK/hostile.folded" &&
$GEN 100000 --seed 23 -o "$WORK/big.folded" || fail_all "gen_folded.py generates the inputs"
# --minwidth 0: every frame is drawn, so the page's percentages must equal the folded counts exactly
"$TASKSPY" flamegraph "$WORK/graph.folded" -o "$WORK/graph.svg" --minwidth 0 --title "svg_browser.t" &&
"$TASKSPY" flamegraph "$WORK/hostile.folded" -o "$WORK/hostile.svg" --minwidth 0 &&
"$TASKSPY" flamegraph "$WORK/big.folded" -o "$WORK/big.svg" || fail_all "taskspy flamegraph renders the inputs"

node "$BROWSER_DIR/svg_check.js" "$WORK/graph.svg" "$WORK/graph.folded" 'fn_1[0-9]$|serve' \
    "$WORK/hostile.svg" "$WORK/hostile.folded" "$WORK/big.svg" "$OUT_DIR/svg_browser.png"
exit $?
