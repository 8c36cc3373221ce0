#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# help.t: SPEC section 1, "taskspy --help | --version: usage on stdout, exit 0". --help and -h of the
# command and of each subcommand print usage to stdout (nothing on stderr) and exit 0, also after other
# options; the subcommands' help lists their options; --version prints "taskspy VERSION", VERSION being
# `git describe --always --dirty` of the checkout it was built from (a commit of this repository) or the
# fixed fallback; no command, or an unknown one, is a usage error (exit 2, usage on stderr).
source "$(dirname "$0")/lib/tap.sh"
plan 16
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
check "taskspy --help names both commands" sh -c "grep -q 'taskspy record' '$WORK/top.out' && grep -q 'taskspy flamegraph' '$WORK/top.out'"
check "taskspy record --help: usage on stdout, exit 0" helps record record --help
check "taskspy record -h: the same" helps record_h record -h
check "taskspy record -p 1 --help: help wins over the options before it" helps record_late record -p 1 --help
missing=""
for opt in --pid --duration --frequency --output --format --call-graph --stack-size --group-by --await-points \
           --markers --kernel --title --help; do
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
