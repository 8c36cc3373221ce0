#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# ci_table.sh STEPS LOG [TOTAL_SECONDS]: the table .ci/run prints at its end: each step of STEPS (ci_step.sh's
# "NAME<TAB>SECONDS<TAB>STATUS" lines) with its share of the run (a name indented by two spaces is a part of the
# step after it, run beside others: not added to the steps' sum), then the end-to-end files' wall times as
# prove --timer logged them in LOG ("[hh:mm:ss] tests/e2e/NAME.t .... ok  12345 ms"), the slowest first, and last
# every failed check of LOG with the diagnostic lines under it.
steps=$1 log=$2 total=${3:-}
[ -f "$steps" ] || { echo "ci_table.sh: no steps recorded in $steps" >&2; exit 1; }
echo "== where the run's time went =="
awk -F '\t' -v total="$total" '
    { name[NR] = $1; secs[NR] = $2; status[NR] = $3; if ($1 !~ /^  /) sum += $2 }
    END {
        if (total == "") total = sum
        printf "%-56s %9s %7s %s\n", "step", "seconds", "share", "status"
        for (i = 1; i <= NR; i++)
            printf "%-56s %9.1f %6.1f%% %s\n", name[i], secs[i], (total > 0 ? 100 * secs[i] / total : 0), (status[i] == 0 ? "ok" : "FAILED (" status[i] ")")
        printf "%-56s %9.1f\n", "steps together (the indented ones are parts of the next)", sum
        if (total != sum) printf "%-56s %9.1f\n", "the whole run", total
    }' "$steps"
[ -f "$log" ] || exit 0
echo "== end-to-end files, slowest first (pass: plain or asan) =="
awk '
    /# pass: / { pass = $NF }
    match($0, /tests\/e2e\/[a-z_0-9]+\.t \.+ /) {
        file = substr($0, RSTART, RLENGTH); sub(/ \.+ $/, "", file); sub(/^tests\/e2e\//, "", file)
        ms = ""; if (match($0, /[0-9]+ ms/)) { ms = substr($0, RSTART, RLENGTH); sub(/ ms/, "", ms) }
        if (ms != "") printf "%-28s %-6s %8.1f\n", file, pass == "" ? "-" : pass, ms / 1000
    }' "$log" | sort -k3 -n -r
# last, where a truncated log still shows it: each failed check with the diagnostics around it, the '#' lines
# right before it (a check that prints what it found does so before its verdict: 8 lines at most) and under it
# (16 at most); 80 lines in all at most
if grep -q '^[0-9:]* *\(not ok\|# Failed test\)' "$log"; then
    echo "== failed checks, with their diagnostics =="
    awk '/^[0-9:]* *(not ok|# Failed test)/ { for (i = 0; i < nb; i++) print before[i]; nb = 0; n = 16; print; next }
        n > 0 && /^[0-9:]* *#/ { n--; print; next }
        /^[0-9:]* *#/ { if (nb == 8) { for (i = 1; i < 8; i++) before[i - 1] = before[i]; nb = 7 } before[nb++] = $0; next }
        { n = 0; nb = 0 }' "$log" |
        head -80
fi
