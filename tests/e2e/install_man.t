#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# install_man.t: `make install` puts the binary and the man page under DESTDIR and PREFIX, the man page
# renders without warnings (man-db and groff), and it documents every long option the command's sources
# define (cli/*.c option tables; hidden --debug-* options excepted).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/tap.sh"
plan 10
# a make started by prove inside `make check` must not try to join that make's jobserver
make_install() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$ROOT" install "$@"; }

make_install DESTDIR="$WORK/dest" > "$WORK/install.out" 2>&1
ok $? "make install DESTDIR=...: exit 0"
check "the binary is installed executable under PREFIX=/usr/local" test -x "$WORK/dest/usr/local/bin/taskspy"
check "the man page is installed under /usr/local/share/man/man1" \
    cmp -s "$ROOT/taskspy.1" "$WORK/dest/usr/local/share/man/man1/taskspy.1"
check "the installed binary runs (--version)" sh -c "'$WORK/dest/usr/local/bin/taskspy' --version > /dev/null"

make_install DESTDIR="$WORK/dest2" PREFIX=/usr > "$WORK/install2.out" 2>&1
check "PREFIX=/usr: bin/taskspy and share/man/man1/taskspy.1 under it" \
    test -x "$WORK/dest2/usr/bin/taskspy" -a -f "$WORK/dest2/usr/share/man/man1/taskspy.1"

MANWIDTH=80 man --warnings -l "$WORK/dest/usr/local/share/man/man1/taskspy.1" > "$WORK/man.txt" 2> "$WORK/man.err"
check "man -l renders the installed page without warnings" sh -c "[ -s '$WORK/man.txt' ] && [ ! -s '$WORK/man.err' ]"
diag < "$WORK/man.err"
groff -ww -man -Tutf8 -z "$ROOT/taskspy.1" 2> "$WORK/groff.err"
check "groff -ww finds nothing to warn about" test ! -s "$WORK/groff.err"
diag < "$WORK/groff.err"

# The long options of the option tables in cli/ (record's, flamegraph's, tasks' and top's; getopt's struct option rows
# { "name", required_argument, ... } or option_spec rows { .name = "name", ... .kind = OPTION_... }), hidden
# --debug-* ones excepted, and those the commands' --help lists, must all be in the rendered page.
MANWIDTH=1000 man -l "$ROOT/taskspy.1" 2> /dev/null > "$WORK/man-wide.txt"
{ grep -ohE '\{ *"[a-z][a-z0-9-]*", *(no|required|optional)_argument' "$ROOT"/cli/*.c
  grep -hE '\.name = "[a-z][a-z0-9-]*".*OPTION_' "$ROOT"/cli/*.c | grep -oE '\.name = "[a-z][a-z0-9-]*"'
} | sed -E 's/^[^"]*"([^"]*)".*/\1/' | grep -v '^debug-' | sort -u > "$WORK/options"
{ "$TASKSPY" record --help; "$TASKSPY" flamegraph --help; "$TASKSPY" tasks --help; "$TASKSPY" top --help; } 2> /dev/null |
    grep -oE -- '--[a-z][a-z0-9-]+' | sed 's/^--//' | sort -u > "$WORK/help-options"
absent() { while read -r o; do grep -qe "--$o\b" "$WORK/man-wide.txt" || printf ' --%s' "$o"; done < "$1"; }
missing=$(absent "$WORK/options")
n=$(wc -l < "$WORK/options")
check "the sources' long options were found ($n)" test "$n" -ge 20
check "every long option of the sources is in the man page${missing:+ (missing:$missing)}" test -z "$missing"
missing=$(absent "$WORK/help-options")
n=$(wc -l < "$WORK/help-options")
check "every option the commands' --help lists ($n) is in the man page${missing:+ (missing:$missing)}" \
    test "$n" -ge 20 -a -z "$missing"
finish
