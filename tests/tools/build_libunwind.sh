#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# build_libunwind.sh OUT.a VERSION SHA256 URL: builds libunwind's remote x86_64 unwinder (OUT.a) and beside
# it libunwind.a (the local unwinder, which holds the _Ux86_64_setcontext the remote one refers to), static
# and position-independent, from the source tarball at URL, checked against SHA256, configured with
# --disable-block-signals (why: the GNUmakefile, "libunwind"). Once per machine: a second caller waits on
# the lock and finds OUT.a built. The configure and make output goes to OUT.a's folder (build.log).
set -eu
out=$1 version=$2 sha256=$3 url=$4
dir=$(dirname "$out")
mkdir -p "$dir"
exec 9> "$dir/.lock"
flock 9
[ "$out" -nt "$0" ] && exit 0         # built while this caller waited (and after this script last changed)
echo "building libunwind $version without signal masking (log: $dir/build.log)"
src=$dir/src
rm -rf "$src" && mkdir -p "$src"
curl -sSfL --retry 3 -o "$dir/libunwind.tar.gz" "$url"
echo "$sha256  $dir/libunwind.tar.gz" | sha256sum -c --quiet -
tar xzf "$dir/libunwind.tar.gz" -C "$src" --strip-components=1
if ! (cd "$src" && ./configure --disable-shared --with-pic --disable-block-signals --disable-minidebuginfo \
        --disable-zlibdebuginfo --disable-coredump --disable-ptrace --disable-setjmp --disable-documentation \
        --disable-tests && make -j2 -C src libunwind-x86_64.la libunwind.la) > "$dir/build.log" 2>&1; then
    tail -20 "$dir/build.log" >&2
    echo "error: building libunwind $version failed (log: $dir/build.log)" >&2
    exit 1
fi
cp "$src/src/.libs/libunwind-x86_64.a" "$out.tmp"
cp "$src/src/.libs/libunwind.a" "$dir/libunwind.a"
mv "$out.tmp" "$out"
rm -rf "$src" "$dir/libunwind.tar.gz"
