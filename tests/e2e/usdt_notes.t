#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# usdt_notes.t: the executor fixtures carry the USDT markers the profiler expects (checked with readelf -n):
# all six probe names under provider taskspy_demo, semaphores only where intended, a memory-operand arg0
# in executor_memarg, and the shared-library markers in libexecmarkers.so rather than executor_dl.
FIXTURES=${FIXTURES:-build/fixtures}
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }
check() { desc=$1; shift; if "$@" >/dev/null 2>&1; then ok "$desc"; else not_ok "$desc"; fi; }

echo "1..21"
probes="task__poll__start task__poll__end task__spawn task__terminate worker__thread__park worker__thread__unpark"
notes() { readelf -n "$FIXTURES/$1" 2>/dev/null; }
for bin in executor executor_fp executor_sema executor_memarg libexecmarkers.so; do
    out=$(notes "$bin")
    missing=""
    for p in $probes; do
        echo "$out" | grep -q "Name: $p\$" || missing="$missing $p"
    done
    if [ -z "$missing" ]; then ok "$bin has all six probes"; else not_ok "$bin lacks:$missing"; fi
    check "$bin probes are under provider taskspy_demo" sh -c "[ \"\$(echo \"\$1\" | grep -c 'Provider: taskspy_demo')\" -ge 6 ]" _ "$out"
    check "$bin poll-start arg0 is 8 bytes" sh -c "echo \"\$1\" | grep -A2 'Name: task__poll__start' | grep -Eq 'Arguments: -?8@'" _ "$out"
done
out=$(notes executor_sema)
check "executor_sema: every probe has a semaphore" sh -c "! echo \"\$1\" | grep -q 'Semaphore: 0x0000000000000000'" _ "$out"
out=$(notes executor)
check "executor: no semaphores" sh -c "! echo \"\$1\" | grep 'Semaphore:' | grep -vq 'Semaphore: 0x0000000000000000'" _ "$out"
out=$(notes executor_memarg)
check "executor_memarg: poll-start arg0 is a memory operand" sh -c "echo \"\$1\" | grep -A2 'Name: task__poll__start' | grep -Eq 'Arguments: -?8@-?[0-9]*\(%[a-z0-9]+\)'" _ "$out"
out=$(notes executor)
check "executor: poll-start arg0 is a register" sh -c "echo \"\$1\" | grep -A2 'Name: task__poll__start' | grep -Eq 'Arguments: -?8@%[a-z0-9]+\$'" _ "$out"
out=$(notes executor_dl)
check "executor_dl: no markers in the executable" sh -c "! echo \"\$1\" | grep -q 'Name: task__poll__start'" _ "$out"
if [ -x "$FIXTURES/executor_lld" ]; then
    check "executor_lld: text segment vaddr differs from its offset" sh -c \
        "readelf -lW '$FIXTURES/executor_lld' | awk '\$1==\"LOAD\" && / E / && \$2 != \$3 {f=1} END {exit !f}'"
else
    n=$((n + 1)); echo "ok $n # SKIP executor_lld: ld.lld not installed"
fi
exit $fail
