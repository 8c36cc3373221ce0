#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# help.t: SPEC section 1, "taskspy --help | --version: usage on stdout, exit 0". --help and -h of the
# command and of each subcommand print usage to stdout (nothing on stderr) and exit 0, also after other
# options; the subcommands' help lists their options; --version prints "taskspy VERSION", VERSION being
# `git describe --always --dirty` of the checkout it was built from (a commit of this repository) or the
# fixed fallback; no command, or an unknown one, is a usage error (exit 2, usage on stderr); `taskspy tasks`
# refuses a missing -p, a bad PID, an unknown option and an output it cannot write as a usage error (exit 2,
# one line), a PID with no process as a runtime error (exit 1, one line), before reading any task.
source "$(dirname "$0")/lib/tap.sh"
plan 25
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# helps NAME ARGS...: taskspy ARGS exits 0, prints a usage on stdout and nothing on stderr
helps() {
    local name=$1; shift
    run "$name" "$@"
    [ "$RC" -eq 0 ] && grep -q '^usage: taskspy' "$WORK/$name.out" && [ ! -s "$WORK/$name.err" ] ||
        { echo "exit $RC"; cat "$WORK/$name.out" "$WORK/$name.err"; } | diag
}
check "taskspy --help: usage on stdout, exit 0" helps top --help
check "taskspy -h: the same" helps top_h -h
check "taskspy --help names the three commands" sh -c "grep -q 'taskspy record' '$WORK/top.out' && grep -q 'taskspy flamegraph' '$WORK/top.out' && grep -q 'taskspy tasks -p PID' '$WORK/top.out'"
check "taskspy record --help: usage on stdout, exit 0" helps record record --help
check "taskspy record -h: the same" helps record_h record -h
check "taskspy record -p 1 --help: help wins over the options before it" helps record_late record -p 1 --help
missing=""
for opt in --pid --duration --frequency --output --format --call-graph --stack-size --group-by --await-points \
           --markers --kernel --title --wait-output --wait-mode --wait-frequency --help; do
    grep -q -- "$opt" "$WORK/record.out" || missing="$missing $opt"
done
check "record's help lists every option of SPEC section 1 (missing:${missing:- none})" test -z "$missing"
check "taskspy flamegraph --help: usage on stdout, exit 0" helps flamegraph flamegraph --help
check "taskspy flamegraph -h: the same" helps flamegraph_h flamegraph -h
missing=""
for opt in --output --title --subtitle --width --height --minwidth --colors --inverted --reverse --countname; do
    grep -q -- "$opt" "$WORK/flamegraph.out" || missing="$missing $opt"
done
check "flamegraph's help lists its options and palettes (missing:${missing:- none})" \
    sh -c "test -z '$missing' && grep -q 'taskspy, hot, mem' '$WORK/flamegraph.out'"

check "taskspy tasks --help: usage on stdout, exit 0" helps tasks tasks --help
missing=""
for opt in --pid --json --verbose --output --help; do
    grep -q -- "$opt" "$WORK/tasks.out" || missing="$missing $opt"
done
check "tasks' help lists its options (missing:${missing:- none})" test -z "$missing"
check "taskspy top --help: usage on stdout, exit 0" helps topcmd top --help
missing=""
for opt in --pid --interval --frequency --batch --frames --json --tasks --sort --help; do
    grep -q -- "$opt" "$WORK/topcmd.out" || missing="$missing $opt"
done
check "top's help lists its options (missing:${missing:- none}) and its keys" \
    sh -c "test -z '$missing' && grep -q 'Keys: c n w i' '$WORK/topcmd.out' && grep -q 'taskspy top -p PID' '$WORK/top.out'"
# refused NAME STATUS MESSAGE ARGS...: taskspy ARGS exits STATUS with one "taskspy: " line holding MESSAGE
# on stderr and nothing on stdout
refused() {
    local name=$1 status=$2 message=$3; shift 3
    run "$name" "$@"
    [ "$RC" -eq "$status" ] && [ ! -s "$WORK/$name.out" ] && [ "$(wc -l < "$WORK/$name.err")" -eq 1 ] &&
        grep -q "^taskspy: .*$message" "$WORK/$name.err" || { echo "exit $RC"; cat "$WORK/$name.err"; } | diag
}
check "tasks without -p: exit 2, one line" refused tasks_nopid 2 "give -p PID" tasks --json
check "tasks -p with a bad PID: exit 2, named" refused tasks_badpid 2 "invalid PID '12x'" tasks -p 12x
check "tasks with an unknown option: exit 2, named" refused tasks_badopt 2 "unknown option '--frob'" tasks -p 1 --frob
check "tasks -o with a format it cannot write: exit 2, named" \
    refused tasks_badout 2 "cannot write the tasks as 'x.pb.gz'" tasks -p 1 -o x.pb.gz
check "tasks -p with no such process: exit 1, one line" refused tasks_nosuch 1 "no such process: 4194304" tasks -p 4194304

run version --version
check "taskspy --version: exit 0, one line on stdout" \
    sh -c "[ $RC -eq 0 ] && [ \$(wc -l < '$WORK/version.out') -eq 1 ] && [ ! -s '$WORK/version.err' ]"
version=$(sed -n 's/^taskspy //p' "$WORK/version.out")
if git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
    # git describe --always: TAG-N-gHASH, TAG or HASH, with -dirty when built from a changed tree
    hash=$(echo "$version" | sed -E 's/-dirty$//; s/^.*-g([0-9a-f]+)$/\1/')
    check "the version ($version) is git describe of a commit of this checkout" \
        sh -c "git -C '$ROOT' rev-parse -q --verify '$hash^{commit}' > /dev/null"
else
    check "not a git checkout: the fixed fallback version ($version)" test "$version" = 0.1
fi

run none
check "no command: exit 2, usage on stderr" sh -c "[ $RC -eq 2 ] && grep -q '^usage: taskspy' '$WORK/none.err' && [ ! -s '$WORK/none.out' ]"
run unknown frobnicate
check "unknown command: exit 2, named on stderr" \
    sh -c "[ $RC -eq 2 ] && grep -q \"unknown command 'frobnicate'\" '$WORK/unknown.err' && [ ! -s '$WORK/unknown.out' ]"
run badopt record --frobnicate
check "unknown record option: exit 2, named, nothing on stdout" \
    sh -c "[ $RC -eq 2 ] && grep -q \"unknown option '--frobnicate'\" '$WORK/badopt.err' && [ ! -s '$WORK/badopt.out' ]"
run badflag flamegraph --inverted=yes -o x.svg
check "a flag given a value: exit 2, said so" \
    sh -c "[ $RC -eq 2 ] && grep -q \"option '--inverted' takes no value\" '$WORK/badflag.err'"
finish
