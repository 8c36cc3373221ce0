#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/run.sh: `make bench` — taskspy's performance contracts (SPEC section 7) as ratios measured in one
# run against interleaved baselines; prints the table and appends it to bench/RESULTS.md.
# usage: sh bench/run.sh ABS_TASKSPY ABS_FIXTURES_DIR
# Durations and pair counts come from the environment (see bench/bench.py): BENCH_PAIRS, BENCH_RUN,
# BENCH_LONG (60), BENCH_SHORT (10), BENCH_PP, BENCH_PP_HZ, BENCH_PP_RUNS, BENCH_STACKS, BENCH_HTTP,
# BENCH_HTTP_PAIRS, BENCH_WAIT_TRIPLES, BENCH_WIDE, BENCH_REC_ROUNDS; BENCH_TOOLS is where make bench built
# samply and inferno (build/bench-tools). BENCH_ONLY=3,5,8 runs only those rows (scenarios), e.g.
# `BENCH_ONLY=8 make bench` for the saturated HTTP server alone, `BENCH_ONLY=10 make bench` for the wait
# profile's cost on it, `BENCH_ONLY=4,11 make bench` for the peers (inferno, samply).
set -eu
if [ $# -ne 2 ]; then
    echo "usage: sh bench/run.sh ABS_TASKSPY ABS_FIXTURES_DIR" >&2
    exit 2
fi
taskspy=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
for tool in perf python3 perl readelf wrk /usr/bin/time; do
    command -v "$tool" >/dev/null 2>&1 || { echo "bench: $tool not found" >&2; exit 1; }
done
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt -1 ]; then
    echo "bench: needs root (system-wide uprobes, perf probe)" >&2
    exit 1
fi
out=$(mktemp /tmp/taskspy-bench-section.XXXXXX)
# The marker benchmark's kernel uprobes (group taskspy_bench) are deleted by bench.py; this catches an
# interrupted run.
cleanup() {
    rm -f "$out"
    for ev in /sys/kernel/tracing/uprobe_events /sys/kernel/debug/tracing/uprobe_events; do
        [ -w "$ev" ] || continue
        grep '^p:taskspy_bench/' "$ev" 2>/dev/null | while read -r spec _; do
            echo "-:${spec#p:}" >> "$ev" || true
        done
        break
    done
}
trap cleanup EXIT INT TERM
echo "bench: ${BENCH_LONG:-60} s memory run (BENCH_LONG), ${BENCH_PAIRS:-5} pairs (BENCH_PAIRS), ${BENCH_RUN:-2} s per throughput run (BENCH_RUN)"
python3 "$here/bench.py" "$taskspy" "$fixtures" "$repo" "$out"
cat "$out"
results=$here/RESULTS.md
if [ ! -f "$results" ]; then
    printf '# taskspy benchmark results\n\nAppended by `make bench` (bench/run.sh); newest last. Ratios are measured in one run against interleaved baselines (median of the pairs); absolute figures under each table.\n\n' > "$results"
fi
cat "$out" >> "$results"
echo "bench: appended to $results"
