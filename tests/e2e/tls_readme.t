#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tls_readme.t: README's TLS task marker examples and the store a compiler drops (README, "TLS task marker").
# The C, C++ and Rust examples, each compiled as README shows it into a program that polls tasks
# (tests/fixtures/tls_readme.*): taskspy reads the marker at every sample, files the task code under task
# roots with the program's own ids, and prints no warning. The C program with the example as README taught
# it before (a plain __thread variable, the poll functions visible to the compiler), whose store of the id
# GCC -O2 drops (its build checks that): one line naming the likely cause, with the boundary from
# --task-boundary and from the executable's poll-start marker; none where no boundary is on any stack.
source "$(dirname "$0")/lib/tap.sh"
plan 20

TASK_CODE='poll_(parse|render|compress)'
WARNING='^taskspy: the TLS marker taskspy_current_task read 0 in all [0-9]+ samples taken inside a task boundary '\
'\(poll_task\): the compiler may have dropped the store; declare it volatile or store it with a relaxed atomic '\
'\(README, TLS task marker\)$'

# README's examples: tasks attributed, with the ids each program printed for them
for lang in c cpp rust; do
    name=tls_readme_$lang
    "$TASKSPY" record -d 3 -F 499 --task-boundary 'poll_task' --group-by task -o "$WORK/$name.folded" \
        -- "$FIXTURES/$name" 4 --log-tasks > "$WORK/$name.stdout" 2> "$WORK/$name.err"
    check "$lang example: exit 0" test $? -eq 0
    grep '^taskspy: \(tasks\|markers\|the TLS\)' "$WORK/$name.err" | diag
    # unreadable: the marker's page not present when the sample's BPF program read it (a thread's first
    # instants: BPF cannot fault a page in); a few in thousands, never a real share
    tls_line=$(grep '^taskspy: tasks: from the TLS marker taskspy_current_task (thread pointer -[0-9]*) read at each sample: ' "$WORK/$name.err")
    tls_samples=$(echo "$tls_line" | sed -n 's/.* read at each sample: \([0-9]*\) samples, .*/\1/p')
    tls_unreadable=$(echo "$tls_line" | sed -n 's/.* and \([0-9]*\) unreadable .*/\1/p')
    check "$lang example: tasks from the TLS marker, every sample with its record (${tls_unreadable:-?} of ${tls_samples:-?} unreadable), no warning" sh -c \
        "echo '$tls_line' | grep -q ' [0-9]* samples, 0 without a record and ' &&
         [ '${tls_unreadable:-x}' -le \$(( ${tls_samples:-0} / 200 )) ] 2>/dev/null &&
         ! grep -q 'read 0 in all' '$WORK/$name.err'"
    # each task id with the kind of the poll function its samples ran: one the program spawned
    sed -n "s/^task \([0-9]*\): .*poll_\(parse\|render\|compress\).*/spawn \1 \2/p" "$WORK/$name.folded" |
        sort -u > "$WORK/$name.ids"
    # (a clean-clone run once failed this with no word of which: each id the program did not print with that
    # kind is shown, with what the program printed for it and its stacks)
    grep -vxFf "$WORK/$name.stdout" "$WORK/$name.ids" | head -3 | while read -r _ id kind; do
        echo "task $id as $kind; the program printed: $(grep "^spawn $id " "$WORK/$name.stdout" || echo nothing)"
        grep "^task $id: " "$WORK/$name.folded" | cut -c1-300
    done | diag
    check "$lang example: task ids ($(wc -l < "$WORK/$name.ids")), each with its kind, are the program's" sh -c \
        "[ \$(wc -l < '$WORK/$name.ids') -gt 10 ] && ! grep -vxFf '$WORK/$name.stdout' '$WORK/$name.ids'"
    check "$lang example: no task code under a thread root" \
        no_stack "$WORK/$name.folded" '^(readme-worker|tls_readme_|\[)' "$TASK_CODE"
done

# README's example before the fix: the store of the id is gone, the marker reads 0; --task-boundary names
# the poll function
"$TASKSPY" record -d 3 -F 499 --task-boundary '^poll_task$' -o "$WORK/dropped.folded" \
    -- "$FIXTURES/tls_dropped" 4 > /dev/null 2> "$WORK/dropped.err"
check "dropped store: exit 0" test $? -eq 0
grep '^taskspy: \(tasks\|markers\|the TLS\)' "$WORK/dropped.err" | diag
check "dropped store, --task-boundary: the one line naming the cause" \
    test "$(grep -cE "$WARNING" "$WORK/dropped.err")" -eq 1
inside=$(sed -n 's/^taskspy: the TLS marker .* read 0 in all \([0-9]*\) samples .*/\1/p' "$WORK/dropped.err")
task_code=$(samples "$WORK/dropped.folded" "$TASK_CODE")
# (a stack cut short of poll_task is task code the count cannot see: allow 5%)
check "dropped store: the samples it counts ($inside) are the task code's ($task_code)" \
    sh -c "[ '${inside:-0}' -le $task_code ] && [ \$(( ${inside:-0} * 100 )) -ge \$(( $task_code * 95 )) ]"
check "dropped store: the task code is under thread roots (the marker read 0)" \
    sh -c "[ $task_code -gt 0 ] && ! grep -q '^task' '$WORK/dropped.folded'"

# the same with a poll-start USDT marker in poll_task, recorded by default (--markers auto): its frame is the
# boundary, no probe attached
"$TASKSPY" record -d 3 -F 499 -o "$WORK/dropped-marker.folded" \
    -- "$FIXTURES/tls_dropped_marker" 4 > /dev/null 2> "$WORK/dropped-marker.err"
grep '^taskspy: \(tasks\|markers\|the TLS\)' "$WORK/dropped-marker.err" | diag
check "dropped store, poll-start marker: no probe attached" \
    grep -q '^taskspy: markers: no poll probes' "$WORK/dropped-marker.err"
check "dropped store, poll-start marker: the one line naming the cause" \
    test "$(grep -cE "$WARNING" "$WORK/dropped-marker.err")" -eq 1

# no boundary on any stack (no marker frame, no --task-boundary): nothing to say the marker should be set
"$TASKSPY" record -d 2 -F 499 -o "$WORK/dropped-noboundary.folded" \
    -- "$FIXTURES/tls_dropped" 3 > /dev/null 2> "$WORK/dropped-noboundary.err"
check "dropped store, no boundary: exit 0" test $? -eq 0
check "dropped store, no boundary: no warning" sh -c \
    "grep -q '^taskspy: tasks: from the TLS marker taskspy_current_task' '$WORK/dropped-noboundary.err' &&
     ! grep -q 'read 0 in all' '$WORK/dropped-noboundary.err'"
finish
