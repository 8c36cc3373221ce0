#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# ci_step.sh NAME COMMAND...: runs COMMAND and appends "NAME<TAB>SECONDS<TAB>STATUS" to $CI_STEPS (default
# build/ci-steps.tsv), so that .ci/run can print where a run's time went (tests/tools/ci_table.sh). Exits
# with COMMAND's status.
steps=${CI_STEPS:-build/ci-steps.tsv}
name=$1
shift
start=$(date +%s.%N)
"$@"
status=$?
mkdir -p "$(dirname "$steps")"
printf '%s\t%s\t%s\n' "$name" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$status" >> "$steps"
exit $status
