#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# symbolize_parity.t: symbolize/ reads DWARF itself (dwarf_lookup.c: only the units that hold the addresses
# asked for) where it read it through libbfd; every answer must stay libbfd's. The parity driver looks the same
# addresses (spread over every executable segment, in address order and in a scrambled order) up both ways in
# the real fixtures and compares function, file:line, inline chain, function start and declaration line: C
# (GCC, DWARF 5), C++, Rust on Debian's tokio and hyper (DWARF 4), on the registry's tokio with full debug
# info and with line tables only (whose inlined functions have no linkage names: libbfd names them by their
# symbols), a debug file found by .gnu_debuglink, and zlib-compressed DWARF (SHF_COMPRESSED: read through a
# copy with it inflated, elf/elf_inflate.c): the executor built with -gz=zlib, and glibc's libc.so.6 with its
# debug file from Debian's libc6-dbg (found by build id; DWARF 5, 10 MB inflated). libbfd's choice among equally short inlined ranges, and so
# which name it gives a function it meets for the first time, follows where its allocations lie on its heap: the
# driver runs twice, once with glibc's heap as it comes and once with every allocation in its own mapping
# (mmap_threshold=0: later chunks at lower addresses, the other order of its ties, as an allocator that maps its
# chunks gives; a clean-clone run of CI met that order).
source "$(dirname "$0")/lib/tap.sh"
PARITY=$(dirname "$TASKSPY")/tests/symbolize_parity
OBJECTS="executor executor_gz tls_readme_cpp tokio_plain hyper_server tokio_current tokio_current_lines tokio_current_stripped"
LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6
N=2
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
libc_id=$(readelf -n "$LIBC" 2>/dev/null | sed -n 's/^ *Build ID: *//p')
libc_debug=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
if [ -z "$libc_id" ] || [ ! -f "$libc_debug" ] || ! readelf -S -W "$libc_debug" | grep -Eq '\.debug_info +PROGBITS .* C '; then
    plan 1
    ok 1 "libc6-dbg's debug file of $LIBC is installed, its DWARF compressed ($libc_debug)"
    exit 1
fi
# 3,000 addresses an object and order: about 1,000 functions of the big ones, in seconds (libbfd reads all of
# their DWARF, about 2 s each for the Rust ones)
args=()
for o in $OBJECTS; do args+=("$FIXTURES/$o"); done
args+=("$LIBC")
# (an ASan build's driver has ASan's allocator, which glibc's tunables do not reach: one run)
runs=2
if nm "$PARITY" 2>/dev/null | grep -q ' __asan_init'; then
    runs=1
    echo "# the driver is built with ASan: its allocator is ASan's, which glibc's mmap_threshold does not change (one run)"
fi
plan $((runs * N))
"$PARITY" --addresses 3000 "${args[@]}" | grep -v '^1\.\.'
status=${PIPESTATUS[0]}
[ "$runs" = 1 ] && exit "$status"
# the same tests again, numbered after the first run's and marked
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0 "$PARITY" --addresses 3000 "${args[@]}" 2>&1 |
    awk -v n="$N" -v mark="libbfd's heap in mapped chunks" '/^1\.\./ { next }
        /^(not )?ok [0-9]+ / { k = ($1 == "not") ? 3 : 2; $k = $k + n; print $0 ", " mark; next }
        /^# Failed test [0-9]+ / { $4 = $4 + n; print $0 " (" mark ")" > "/dev/stderr"; next }
        /differs$/ || /^#   / { print > "/dev/stderr"; next }
        { print }'
second=${PIPESTATUS[0]}
[ "$status" = 0 ] && [ "$second" = 0 ]
