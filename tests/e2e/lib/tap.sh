# SPDX-License-Identifier: GPL-3.0-or-later
# tap.sh: helpers for the bash TAP end-to-end tests: plan/ok/diag, running fixtures, and reading folded
# output (shares of frames, stack checks). Sourced by tests/e2e/*.t; needs TASKSPY and FIXTURES.
: "${TASKSPY:?TASKSPY must point at the taskspy binary}"
: "${FIXTURES:?FIXTURES must point at build/fixtures}"
TAP_N=0
TAP_FAILED=0
WORK=$(mktemp -d /tmp/taskspy-e2e.XXXXXX)
BACKGROUND_PIDS=()
cleanup_tap() {
    for p in "${BACKGROUND_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup_tap EXIT

plan() { TAP_PLAN=$1; echo "1..$1"; }
ok() {   # ok CONDITION_EXIT_STATUS DESCRIPTION
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $TAP_N - $2"; else
        echo "not ok $TAP_N - $2"; TAP_FAILED=1
        echo "# Failed test $TAP_N - $2" >&2    # (prove shows a file's stderr, not its failed lines)
    fi
}
check() { # check DESCRIPTION COMMAND...: ok if the command succeeds; returns its success, for "check ... || diag"
    local d=$1; shift
    if "$@"; then ok 0 "$d"; else ok 1 "$d"; return 1; fi
}
diag() { sed 's/^/# /' >&2; }

# wait_for SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds, for at most SECONDS (a whole
# number); returns COMMAND's last status. A bounded wait for a condition, instead of sleeping and hoping.
wait_for() {
    local tries=$(($1 * 10)) i; shift
    for ((i = 0; i < tries; i++)); do "$@" && return 0; sleep 0.1; done
    "$@"
}
# running PID EXE: PID runs EXE (its exec is done) and has used 50 ms of CPU (past the loader, its threads
# started: every fixture starts its threads first and then burns CPU)
running() {
    [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$2")" ] &&
        awk '{ exit !($14 + $15 >= 5) }' "/proc/$1/stat" 2>/dev/null
}
# attached PID: the process PID (a taskspy) has perf events open, i.e. it is recording
attached() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event'; }
# probe_sites PID EXE: "COUNT*BYTE" pairs of the first byte at each stapsdt note location in the live process
# (text vaddr == file offset in these gcc-linked PIEs, so runtime address = start of the offset-0 mapping + vaddr):
# 90 is the nop a probe site holds, cc the int3 of an attached uprobe
probe_sites() {
    local pid=$1 exe=$2 base
    base=$(awk -v exe="$exe" '$6 == exe && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$pid/maps" 2>/dev/null)
    [ -n "$base" ] || { echo "no-mapping"; return; }
    readelf -n "$exe" | awk '/Location:/ { sub(",", "", $2); print $2 }' | while read -r loc; do
        dd if="/proc/$pid/mem" bs=1 count=1 skip=$(( 0x$base + loc )) status=none 2>/dev/null | od -An -tx1 | tr -d ' \n'
        echo
    done | sort | uniq -c | awk '{ printf "%s%s*%s", (NR > 1 ? " " : ""), $1, $2 }'
}
# probes_in PID EXE: some probe site of EXE in PID holds an int3 (a uprobe is attached)
probes_in() { case "$(probe_sites "$1" "$2")" in *cc*) return 0 ;; esac; return 1; }
# probed_entries PID EXE: how many of EXE's raw::poll<T,S> copies hold an int3 at their entry in PID (the
# probe route's uprobes; PIE: runtime address = start of the offset-0 mapping + symbol value)
probed_entries() {
    local base
    base=$(awk -v exe="$2" '$6 == exe && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$1/maps")
    [ -n "$base" ] || { echo "no-mapping"; return; }
    nm --defined-only "$2" | awk '$3 ~ /3raw4poll/ { print $1 }' | while read -r at; do
        dd if="/proc/$1/mem" bs=1 count=1 skip=$(( 0x$base + 0x$at )) status=none 2>/dev/null | od -An -tx1 | tr -d ' \n'
        echo
    done | grep -c cc
}
# lines_at_least FILE PATTERN N: FILE has at least N lines matching PATTERN (grep -E)
lines_at_least() { [ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ]; }

# serving PID EXE STDOUT: PID runs EXE and has printed its listening line ("NAME pid N port P ..."): an HTTP
# fixture is ready once it listens, and an idle server may not use 50 ms of CPU for a long while
serving() {
    [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$2")" ] && grep -q ' pid [0-9]* port [0-9]*' "$3" 2>/dev/null
}
# start_fixture NAME ARGS...: run a fixture in the background and wait (up to 20 s) until it runs (a server:
# until it listens); sets FIXTURE_PID
start_fixture() {
    local name=$1; shift
    "$FIXTURES/$name" "$@" > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" &
    FIXTURE_PID=$!
    BACKGROUND_PIDS+=("$FIXTURE_PID")
    case $name in
    *_server) wait_for 20 serving "$FIXTURE_PID" "$FIXTURES/$name" "$WORK/$name.stdout" ;;
    *) wait_for 20 running "$FIXTURE_PID" "$FIXTURES/$name" ;;
    esac
}
# recorded_secs ERRFILE: the seconds recorded, as record's summary line in ERRFILE gives them
recorded_secs() { sed -n 's/^taskspy: [0-9]* samples, .* pid [0-9]*, \([0-9.]*\) s at .*/\1/p' "$1"; }
# recorded_samples ERRFILE / truncated_stacks ERRFILE: the samples record's summary counts, and the stacks it says
# were truncated (empty when it says none were)
recorded_samples() { sed -nE 's/^taskspy: ([0-9]+) samples,.*/\1/p' "$1"; }
truncated_stacks() { sed -nE 's/^taskspy: ([0-9]+) stacks were truncated.*/\1/p' "$1"; }
# pprof_total FILE SAMPLE_INDEX: the "of N total" of `go tool pprof -top` (times in nanoseconds)
pprof_total() {
    go tool pprof -sample_index="$2" -unit=ns -top "$1" 2> "$WORK/pprof.err" |
        sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)\(ns\)\{0,1\} total$/\1/p'
}
stop_fixture() { kill "$FIXTURE_PID" 2>/dev/null; wait "$FIXTURE_PID" 2>/dev/null; true; }
# wrk_latency_us WRK_OUTPUT: wrk's mean latency, in microseconds (its thread stats' line; with --latency wrk also
# prints a "Latency Distribution" heading, which once made this a second line, "0": a command to sh -c)
wrk_latency_us() {
    awk '$1 == "Latency" && $2 ~ /^[0-9]/ && !seen++ { v = $2; u = v; sub(/[a-z]+$/, "", v); sub(/^[0-9.]+/, "", u);
        print v * (u == "s" ? 1e6 : u == "ms" ? 1e3 : 1) }' "$1"
}
# timer_check LABEL STDOUT WAIT_FOLDED PATTERN WRK_OUT T_MS [BRANCHES]: an HTTP fixture's /sleep handler, awaiting a T_MS
# timer, waits at the stacks matching PATTERN about T_MS per request (the server's "requests /sleep N"): at
# least 0.9 T_MS, at most wrk's mean latency + 10% (a request waits at the timer's line within its own latency,
# and a loaded machine fires timers late: that lateness is wait at the line too)
# BRANCHES (default 1): the branches the connection task waits on at once (axum's select! of the connection and
# the graceful-shutdown watch: 2); a snapshot wait profile splits its time evenly among them, so the time at the
# timer's line is multiplied back by them
timer_check() {
    local label=$1 stdout=$2 folded=$3 pattern=$4 wrk_out=$5 t_ms=$6 branches=${7:-1} requests per_request latency
    requests=$(sed -n 's/^requests \/sleep \([0-9]*\)$/\1/p' "$stdout")
    per_request=$(ratio "$(( $(samples "$folded" "$pattern") * branches ))" "${requests:-0}")
    latency=$(wrk_latency_us "$wrk_out")
    check "$label: $requests requests of /sleep wait at the handler's timer line ($pattern) $per_request us each: at least 0.9 x $t_ms ms, at most wrk's mean latency (${latency:-?} us) + 10%" \
        between "$per_request" $((t_ms * 900)) "$(awk -v l="${latency:-0}" 'BEGIN { print l * 1.1 }')"
}
# park_line FN: the line of the await the tokio fixture's --parked task FN sits at (its "// PARK:FN" comment)
park_line() { grep -n "// PARK:$1\$" "$(dirname "${BASH_SOURCE[0]}")/../../fixtures/tokio/src/parked.rs" | cut -d: -f1; }

# share FOLDED PATTERN TOTAL_PATTERN: percentage of samples whose stack matches PATTERN among those
# matching TOTAL_PATTERN (awk regexes over the stack part of the line).
share() {
    awk -v pat="$2" -v tot="$3" '{
        n = $NF; sub(/ [0-9]+$/, "");
        if ($0 ~ tot) { t += n; if ($0 ~ pat) m += n }
    } END { if (t == 0) print "nan"; else printf "%.1f\n", 100 * m / t }' "$1"
}
# share_tol N [N2]: how far a share (%) taken from N samples may be from its truth by sampling noise alone,
# or (with N2) two shares taken from N and N2 samples from each other: 4 standard deviations of a binomial at
# its widest (p = 0.5), plus 2 points for a loaded machine's drift of the workload itself. A check against the
# workload's own design uses it, so that a recording with fewer samples (ASan, a busy machine) is held to
# what its sample count can show, and one with more to less.
share_tol() {
    awk -v a="$1" -v b="${2:-}" 'BEGIN { v = 0.25 / (a > 0 ? a : 1); if (b != "") v += 0.25 / (b > 0 ? b : 1)
        printf "%.1f\n", 400 * sqrt(v) + 2 }'
}
# PROBE_BIAS: the points a probe route's shares of a 1:2:3 fixture may lean toward equal beyond sampling noise:
# every poll pays for its probes (a trap at its start, and at its end) the same whatever its kind, and a
# sample taken in a trap counts in its poll; the fixtures' shortest polls burn a few tens of microseconds
PROBE_BIAS=3
# shares_123 LABEL FOLDED PARSE RENDER COMPRESS [EXTRA]: the check that the samples under the three task-kind
# patterns (awk regexes) of a 1:2:3 fixture (the executor's and the tokio fixture's task kinds burn 1, 2 and 3
# units a poll) split 16.7/33.3/50.0, each within share_tol of their sample count plus EXTRA points (a route's
# known bias, said where it is given). The fixture's design is the truth each recording is held to, never
# another recording. (Their order is not asked apart: within a tolerance under 8.3 points, half the design's
# gaps, it follows; above it, from a few hundred samples on a starved machine, noise alone can swap two.)
shares_123() {
    local label=$1 f=$2 pp=$3 rp=$4 cp=$5 extra=${6:-0} all n p r c tol
    all="($pp|$rp|$cp)"
    n=$(samples "$f" "$all")
    p=$(share "$f" "$pp" "$all"); r=$(share "$f" "$rp" "$all"); c=$(share "$f" "$cp" "$all")
    tol=$(awk -v t="$(share_tol "$n")" -v e="$extra" 'BEGIN { print t + e }')
    check "$label: shares parse $p% render $r% compress $c% ~ 1:2:3 (+-$tol points for $n samples)" \
        sh -c "$(declare -f within); within $p 16.7 $tol && within $r 33.3 $tol && within $c 50 $tol"
}
# within VALUE EXPECTED TOLERANCE
within() { awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { exit !(v != "nan" && v - e <= t && e - v <= t) }'; }
# samples FOLDED [PATTERN]: number of samples (of stacks matching PATTERN)
samples() { awk -v pat="${2:-.}" '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ pat) t += n } END { print t + 0 }' "$1"; }
# every_stack FOLDED SELECT REQUIRE: every stack matching SELECT also matches REQUIRE
every_stack() {
    awk -v sel="$2" -v req="$3" '{ sub(/ [0-9]+$/, ""); if ($0 ~ sel && $0 !~ req) { print "missing in: " $0; bad = 1 } }
        END { exit bad }' "$1" | diag
    return "${PIPESTATUS[0]}"
}
# most_stacks FOLDED SELECT REQUIRE PERMILLE: the samples of stacks matching SELECT but not REQUIRE are at most
# PERMILLE per thousand of those matching SELECT (each such stack is printed)
most_stacks() {
    awk -v sel="$2" -v req="$3" -v pm="$4" '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ sel) { all += n; if ($0 !~ req) { print "missing in: " $0 " " n; bad += n } } }
        END { printf "%d of %d samples\n", bad, all; exit (all == 0 || bad * 1000 > all * pm) }' "$1" | diag
    return "${PIPESTATUS[0]}"
}
# no_stack FOLDED SELECT FORBID: no stack matching SELECT matches FORBID
no_stack() {
    awk -v sel="$2" -v bad_re="$3" '{ sub(/ [0-9]+$/, ""); if ($0 ~ sel && $0 ~ bad_re) { print "found in: " $0; bad = 1 } }
        END { exit bad }' "$1" | diag
    return "${PIPESTATUS[0]}"
}
# misfiled FOLDED TASK_FRAME: samples with a frame of the task's code whose root is a thread root. Not counted:
# the tokio fixture's main future calling an async fn to build the next task's future (spawn_task ->
# parse_task on the main thread, in no task: the thread root is right there).
misfiled() {
    awk -v pat="$2" '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ pat && $0 !~ /^task/ && $0 !~ /^\[unknown task\]/ &&
        $0 !~ /;tokio_fixture::spawn_task( @ [^;]*)?;tokio_fixture::(parse|render|compress)_task( @ [^;]*)?$/) {
        m += n; if (shown++ < 3) print "# misfiled: " substr($0, 1, 300) > "/dev/stderr" } } END { print m + 0 }' "$1"
}
# the tokio fixture's task functions as frames (not as a type parameter in a frame's name)
TOKIO_TASK=';tokio_fixture::(parse|render|compress)_task( @ [^;]*)?(;|$)'
# minor_entries FOLDED: "MINOR TOTAL" for a --group-by task profile: MINOR counts the samples of each task id
# that are not under that id's main entry (one id should have one entry), TOTAL all task samples. (A stack
# that is its root alone, "task 7: ROOT 1", has its count cut off the root: it is the same entry.)
minor_entries() {
    awk '/^task [0-9a-fx]+: / { n = $NF; line = $0; sub(/ [0-9]+$/, "", line); split(line, a, ";"); root = a[1];
            split(root, r, ": "); id = r[1];
            c[id SUBSEP root] += n; if (c[id SUBSEP root] > best[id]) best[id] = c[id SUBSEP root]; all[id] += n; total += n }
         END { for (id in all) minor += all[id] - best[id]; printf "%d %d\n", minor, total }' "$1"
}
# run NAME ARGS...: taskspy with stdout/stderr in $WORK/NAME.out/.err, its status in RC, seconds taken in SECS
run() {
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    "$TASKSPY" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"
    RC=$?
    SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
}
# ratio A B: A / B to 3 decimals (nan when B is 0); between V LO HI: LO <= V <= HI as numbers (nan never)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.3f\n", a / b }'; }
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "nan" && v >= lo && v <= hi) }'; }
# lt A B: A < B as numbers
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
# finish: the file's exit status; a count of checks other than the plan's fails it too (prove says so, a file run
# alone would not)
finish() {
    if [ -n "${TAP_PLAN:-}" ] && [ "$TAP_N" -ne "$TAP_PLAN" ]; then
        echo "# planned $TAP_PLAN checks, ran $TAP_N" >&2
        exit 1
    fi
    exit $TAP_FAILED
}
