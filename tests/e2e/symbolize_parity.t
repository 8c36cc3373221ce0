#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# symbolize_parity.t: symbolize/ reads DWARF itself (dwarf_lookup.c: only the units that hold the addresses
# asked for) where it read it through libbfd; every answer must stay libbfd's. The parity driver looks the same
# addresses (spread over every executable segment, in address order and in a scrambled order) up both ways in
# the real fixtures and compares function, file:line, inline chain, function start and declaration line: C
# (GCC, DWARF 5), C++, Rust on Debian's tokio and hyper (DWARF 4), on the registry's tokio with full debug
# info and with line tables only (whose inlined functions have no linkage names: libbfd names them by their
# symbols), and a debug file found by .gnu_debuglink.
source "$(dirname "$0")/lib/tap.sh"
PARITY=$(dirname "$TASKSPY")/tests/symbolize_parity
OBJECTS="executor tls_readme_cpp tokio_plain hyper_server tokio_current tokio_current_lines tokio_current_stripped"
N=0
for o in $OBJECTS; do N=$((N + 2)); done
if [ ! -x "$PARITY" ]; then
    plan 1
    ok 1 "the parity driver is built ($PARITY: make fixtures builds it)"
    exit 1
fi
missing=""
for o in $OBJECTS; do [ -f "$FIXTURES/$o" ] || missing="$missing $o"; done
if [ -n "$missing" ]; then
    plan 1
    ok 1 "the fixtures are built (missing:$missing)"
    exit 1
fi
# 3,000 addresses an object and order: about 1,000 functions of the big ones, in seconds (libbfd reads all of
# their DWARF, about 2 s each for the Rust ones)
args=()
for o in $OBJECTS; do args+=("$FIXTURES/$o"); done
"$PARITY" --addresses 3000 "${args[@]}"
