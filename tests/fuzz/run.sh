#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# run.sh SECONDS: builds every libFuzzer target (tests/fuzz/fuzz_*.c) into build/fuzz/, replays the saved
# crashers under tests/fuzz/regressions/<target>/, then fuzzes each target for SECONDS on a working copy
# of its seed corpus (build/fuzz/corpus-<target>; new inputs stay there, out of git). Prints one summary
# line per target and exits non-zero if any target crashed, timed out or failed to build.
# FUZZ_TARGETS="a b" limits the run to some targets; SECONDS=0 only builds and replays regressions.
set -u
cd "$(dirname "$0")/../.." || exit 2
SECS=${1:-60}
OUT=build/fuzz
CC_FUZZ=${CC_FUZZ:-clang}
CFLAGS_FUZZ="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
  -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -I. -I$OUT/gen -I/usr/include/x86_64-linux-gnu"
ALL="usdt_notes usdt_args elf_file proc_maps folded perf_records demangle task_decode core_file"
TARGETS=${FUZZ_TARGETS:-$ALL}

# project sources and extra flags per target (ELF_READER: elf/ without its debug-file lookup, which needs zlib)
ELF_READER="elf/elf_file.c elf/elf_notes.c elf/elf_segments.c elf/elf_symbols.c base/vec.c"
srcs() {
    case $1 in
    usdt_notes)   echo sampler/probes/usdt_notes.c $ELF_READER sampler/probes/usdt_args.c ;;
    usdt_args)    echo sampler/probes/usdt_args.c sampler/probes/usdt_notes.c $ELF_READER ;;
    elf_file)     echo $ELF_READER elf/elf_inflate.c elf/debug_file.c elf/debug_files.c elf/debuginfod_fetch.c sampler/probes/usdt_notes.c \
                       sampler/probes/runtime_probes.c ;;
    proc_maps)    echo sampler/target/proc_maps.c base/vec.c ;;
    folded)       echo flamegraph/*.c base/*.c ;;   # the whole layer: it depends on libc, zlib and base/ only
    perf_records) echo sampler/perf/perf_records.c sampler/perf/ring_buffer.c ;;
    demangle)     echo symbolize/demangle.c flamegraph/*.c base/*.c ;;
    core_file)    echo elf/elf_core.c $ELF_READER ;;
    task_decode)  echo tasks/future_decode.c tasks/future_leaves.c tasks/tokio_layout.c dwarf/*.c symbolize/demangle.c \
                       symbolize/macro_source.c \
                       flamegraph/*.c base/*.c elf/elf_file.c elf/elf_notes.c elf/elf_segments.c elf/elf_symbols.c ;;
    esac
}
libs() { case $1 in demangle) echo -liberty -lz ;; task_decode) echo -ldw -lelf -liberty -lz ;;
         elf_file) echo -ldl -lz -ldeflate ;; folded) echo -lz ;; *) echo ;; esac; }
maxlen() { case $1 in elf_file|task_decode|core_file) echo 65536 ;; folded) echo 16384 ;; perf_records) echo 8192 ;; *) echo 4096 ;; esac; }

mkdir -p "$OUT/gen" "$OUT/logs" || exit 2
sh tests/tools/js_to_c.sh flamegraph/svg_script.js > "$OUT/gen/svg_script.js.inc.tmp" &&
    mv "$OUT/gen/svg_script.js.inc.tmp" "$OUT/gen/svg_script.js.inc" || exit 2

# build (in parallel; a target is rebuilt only when one of its inputs is newer than it)
pids=""
for t in $TARGETS; do
    bin=$OUT/fuzz_$t
    inputs="tests/fuzz/fuzz_$t.c $(srcs "$t") $(find base elf dwarf tasks sampler flamegraph symbolize -name "*.h") tests/fuzz/run.sh"
    stale=1
    if [ -x "$bin" ]; then
        stale=0
        for f in $inputs; do [ "$f" -nt "$bin" ] && stale=1; done
    fi
    [ "$stale" = 1 ] || continue
    # shellcheck disable=SC2046
    ( $CC_FUZZ $CFLAGS_FUZZ "tests/fuzz/fuzz_$t.c" $(srcs "$t") $(libs "$t") -o "$bin.tmp" \
        > "$OUT/logs/build-$t.log" 2>&1 && mv "$bin.tmp" "$bin" ) &
    pids="$pids $!"
done
for p in $pids; do wait "$p"; done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fail=0
summary=""
for t in $TARGETS; do
    bin=$OUT/fuzz_$t
    if [ ! -x "$bin" ] || [ "tests/fuzz/fuzz_$t.c" -nt "$bin" ]; then
        cat "$OUT/logs/build-$t.log" >&2
        summary="$summary
fuzz $t: BUILD FAILED (see $OUT/logs/build-$t.log)"
        fail=1
        continue
    fi
    # saved crashers: each must now run clean
    reg=tests/fuzz/regressions/$t
    regs=0 regfail=0
    if [ -d "$reg" ]; then
        for f in "$reg"/*; do
            [ -f "$f" ] || continue
            regs=$((regs + 1))
            if ! "$bin" -runs=1 "$f" > "$OUT/logs/regression-$t-$(basename "$f").log" 2>&1; then
                regfail=$((regfail + 1))
                echo "fuzz $t: regression $f fails (log: $OUT/logs/regression-$t-$(basename "$f").log)" >&2
            fi
        done
    fi
    execs=0 status=0
    if [ "$SECS" -gt 0 ]; then
        work=$OUT/corpus-$t
        mkdir -p "$work" "$OUT/artifacts/$t"
        [ -d "tests/fuzz/corpus/$t" ] && cp -n tests/fuzz/corpus/$t/* "$work"/ 2>/dev/null
        dict=""
        [ -f "tests/fuzz/dict/$t.dict" ] && dict="-dict=tests/fuzz/dict/$t.dict"
        log=$OUT/logs/fuzz-$t.log
        # shellcheck disable=SC2086
        "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len="$(maxlen "$t")" \
            -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t/" $dict "$work" > "$log" 2>&1
        status=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        [ -n "$execs" ] || execs=0
        if [ "$status" != 0 ]; then
            echo "fuzz $t: exit status $status; last lines of $log:" >&2
            tail -n 40 "$log" >&2
        fi
    fi
    state=ok
    { [ "$status" != 0 ] || [ "$regfail" != 0 ]; } && state=FAILED && fail=1
    summary="$summary
fuzz $t: $state, $execs executions in ${SECS}s, exit status $status, corpus $(ls "$OUT/corpus-$t" 2>/dev/null | wc -l), regressions $((regs - regfail))/$regs pass"
done
echo "$summary" | sed '/^$/d'
exit $fail
