#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench.py: taskspy's benchmarks (SPEC section 7), run by `make bench` through bench/run.sh.

usage: bench.py TASKSPY FIXTURES_DIR REPO_DIR OUT_MARKDOWN

Every ratio is measured in this run against baseline runs interleaved with it (U X Y U Y X U ...), each
profiled run compared with the mean of the two baseline runs that bracket it, the median over BENCH_PAIRS
(>= 5) pairs; pairs whose two baselines disagree by > 20% are dropped while >= 3 remain (this VM's speed
flips between full and half with other tenants' load). Sampling runs attach both profilers by PID to an
already running fixture; marker runs launch the fixture under both (see marker_jobs). A run's throughput
is the mean of the fixture's per-second figures after its first second. Marker cost is also measured in
CPU time, steadier on a shared host: the fixture's own CPU per poll (it prints it at exit; the uprobe traps
and the kernel's writing of samples run in its context) plus taskspy's in-process CPU for reading the
marker records, against the fixture's CPU per poll under perf stat; perf record sampling every hit is run
beside them as the floor any reader of per-hit samples starts from. Environment (defaults in brackets):
  BENCH_PAIRS [5]   pairs per ratio            BENCH_RUN [2]   seconds measured per throughput run
  BENCH_LONG [60]   long memory run, seconds   BENCH_SHORT [10] short memory run, seconds
  BENCH_PP [11]     post-processing run, s     BENCH_PP_HZ [5000] its frequency
  BENCH_PP_RUNS [2] post-processing runs       BENCH_STACKS [1000,10000,100000] rendering sizes
  BENCH_HTTP [4]    seconds of wrk per run   BENCH_HTTP_PAIRS [5] row 8's rounds (>= 3)
  BENCH_WAIT_TRIPLES [5] row 10's triples (>= 3)
  BENCH_WIDE [100000] row 4's wide input (long C++/Rust names, 60 deep; 0: none)
  BENCH_REAL [100000] row 4's input with a real service's names and shape (gen_folded.py --real; 0: none)
  BENCH_FIRST_PAUSE [3] row 4: seconds idle before each tool's first run on an input
  BENCH_REC_ROUNDS [5] row 11's rounds (>= 3)
  BENCH_TOP_ROUNDS [31] row 13's rounds (>= 3; its rounds spread over 10-20 points: the median of 15 has a standard
                   error of ~1.5 points, against a contract of 1%; 31 rounds take ~11 minutes)
  BENCH_TOP_VIEW [600] row 13's memory view, seconds
  BENCH_TOOLS       where make bench installed samply and inferno (bin/), default REPO/build/bench-tools
  BENCH_ONLY        comma list of rows to run (1 to 13; 1 and 2 run together)
Row 8 is a saturated HTTP server (the hyper fixture driven by wrk on loopback) recorded by taskspy and by
perf record --call-graph dwarf,65528: lost samples, requests/s lost and requests per target CPU-s lost (each
profiler's loss against the bracketing unprofiled runs, stated as a ratio only beyond the unprofiled runs'
noise), processing CPU per sample, RSS.
Row 9 is zero-probe attribution (issue 18): a poll's cost with the TLS store vs a USDT probe vs no marker on
the C executor, and tokio's throughput loss under zero-probe attribution vs the probe route vs perf record.
Row 10 is the wait profile's cost (issues 16 and 29): the same server recorded with --wait-output from waker
events and from task snapshots vs CPU-only vs not at all, in requests/s and requests per target CPU-s, with
the waker events and stacks per second the event mode takes and the snapshots' own CPU.
Row 4 renders generated inputs (BENCH_STACKS, a wide one and one with a real service's long names) with taskspy
flamegraph, inferno-flamegraph and flamegraph.pl: wall time, CPU time and peak RSS, the medians and each tool's
first run after a pause. Row 11 records the saturated HTTP server of row 8 at 999 Hz
with taskspy, perf record and samply (with and without its symbols), each stopped by SIGINT as wrk ends:
lost samples, requests per target CPU-s lost, the profiler's CPU and peak RSS, the time to its output
written and the output's size.
Row 13 is taskspy top (issue 39): at its defaults on the saturated server of row 8 against CPU-only sampling with
the same settings, in requests per target CPU-s; and its RSS over a long view of the server under wrk with a new
connection per request (tasks come and go), extrapolated to 10 minutes.
Rows 6 (Chromium zooming a 100,000-stack SVG) and 7 (output latency of a 100,000-symbol target) are the
timings that used to be assertions of make check; the tests there check the behaviour only.
"""
import contextlib
import gzip
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TASKSPY, FIX, REPO, OUT = sys.argv[1:5]
PAIRS = max(5, int(os.environ.get("BENCH_PAIRS", "5")))
RUN = float(os.environ.get("BENCH_RUN", "2"))
LONG = float(os.environ.get("BENCH_LONG", "60"))
SHORT = float(os.environ.get("BENCH_SHORT", "10"))
PP = float(os.environ.get("BENCH_PP", "11"))
PP_HZ = int(os.environ.get("BENCH_PP_HZ", "5000"))
PP_RUNS = int(os.environ.get("BENCH_PP_RUNS", "2"))
STACKS = [int(x) for x in os.environ.get("BENCH_STACKS", "1000,10000,100000").split(",")]
HTTP = float(os.environ.get("BENCH_HTTP", "4"))
DUMP_RUNS = int(os.environ.get("BENCH_DUMP_RUNS", "5"))          # row 12: dumps of 10,000 tasks
DUMP_ROUNDS = int(os.environ.get("BENCH_DUMP_ROUNDS", "4"))      # row 12: interleaved HTTP rounds
HTTP_PAIRS = max(3, int(os.environ.get("BENCH_HTTP_PAIRS", "5")))
WAIT_TRIPLES = max(3, int(os.environ.get("BENCH_WAIT_TRIPLES", "5")))
WIDE = int(os.environ.get("BENCH_WIDE", "100000"))
REAL = int(os.environ.get("BENCH_REAL", "100000"))
# Row 4's first run of each tool on an input comes after this long idle: what a user's one run meets. (This VM
# reports memory free for ~2 s to its host, which takes it back (free page reporting): touching such memory again
# waits for the host, 3.2 ms/MB against 0.5 ms/MB for memory freed just before (a 4 GB touch, 2026-11-29); a run
# right after another reuses what the one before freed.)
FIRST_PAUSE = float(os.environ.get("BENCH_FIRST_PAUSE", "3"))
REC_ROUNDS = max(3, int(os.environ.get("BENCH_REC_ROUNDS", "5")))
TOP_ROUNDS = max(3, int(os.environ.get("BENCH_TOP_ROUNDS", "31")))
TOP_VIEW = float(os.environ.get("BENCH_TOP_VIEW", "600"))
TOP_WARM = 120.0          # row 13: the view's first seconds, when its DWARF and symbols are first read, not counted
PL_LONG = 5.0           # flamegraph.pl runs longer than this (s) are PL_LONG_RUNS, the first counted
PL_LONG_RUNS = 3
# samply and inferno, built from crates.io by make bench (GNUmakefile: BENCH_TOOLS)
BENCH_TOOLS = os.environ.get("BENCH_TOOLS", os.path.join(REPO, "build", "bench-tools"))
SAMPLY, INFERNO = (p if os.access(p, os.X_OK) else None for p in
                   (os.path.join(BENCH_TOOLS, "bin", t) for t in ("samply", "inferno-flamegraph")))
ATTACH_DELAY = 0.3          # fixture threads are up; the attach falls in the discarded first second
FLAMEGRAPH_PL = next((p for p in ("/usr/bin/flamegraph.pl", "/usr/share/perl5/Devel/NYTProf/flamegraph.pl")
                      if os.path.exists(p)), None)
TMP = tempfile.mkdtemp(prefix="taskspy-bench.")
T0 = time.monotonic()
rows = []       # (id, what, ratio text, contract)
details = []    # absolute figures, printed under the table
clock_event = "?"


def log(msg):
    print("[%5.0fs] %s" % (time.monotonic() - T0, msg), file=sys.stderr, flush=True)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec="%.2f"):
    return "n/a" if x is None else spec % x


def summary_line(text):
    """taskspy's summary: (samples, lost, clock event) or None."""
    global clock_event
    m = re.search(r"taskspy: (\d+) samples, (\d+) lost, .*\(([\w-]+), (\w+)\)", text)
    if not m:
        return None
    clock_event = m.group(3)
    return int(m.group(1)), int(m.group(2))


def run_target(argv, profiler=None, metric=None):
    """Start fixture argv, attach profiler(pid) -> argv after ATTACH_DELAY, wait for both. Returns
    (per-second figures after the first, whole fixture stdout, profiler stderr, profiler rusage)."""
    fx = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    prof = None
    if profiler:
        time.sleep(ATTACH_DELAY)
        prof = subprocess.Popen(profiler(fx.pid), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    out = fx.communicate()[0]
    if os.environ.get("BENCH_VERBOSE"):
        log("   %s %s" % (os.path.basename(argv[0]), profiler(fx.pid)[:2] if profiler else "unprofiled"))
    perr, ru = "", None
    if prof:
        perr = prof.stderr.read()
        _, status, ru = os.wait4(prof.pid, 0)
        prof.returncode = os.waitstatus_to_exitcode(status)
        if prof.returncode != 0:
            log("profiler %s exited %d: %s" % (profiler(fx.pid)[0], prof.returncode, perr.strip()[-300:]))
    vals = [float(v) for v in re.findall(metric, out)] if metric else []
    return vals[1:], out, perr, ru


def bracketed(seq_runs, n):
    """seq_runs: list of ('U', value) / (key, value) in run order, baselines first and last. Returns
    {key: [(x, baseline)]}, baseline the mean of the U runs before and after x. This host's speed flips
    between full and about half (other tenants): pairs whose two baselines differ by more than STABLE are
    dropped (the load changed mid-pair), unless fewer than 3 pairs of a key would be left."""
    out, alls = {}, {}
    last_u, pending = None, []
    for key, v in seq_runs:
        if key == "U":
            for k, x in pending:
                b = v if last_u is None or v is None else (last_u + v) / 2
                alls.setdefault(k, []).append((x, b))
                if last_u is not None and v and last_u and abs(last_u - v) / b <= STABLE:
                    out.setdefault(k, []).append((x, b))
            pending, last_u = [], v
        else:
            pending.append((key, v))
    for k in alls:
        if len(out.get(k, [])) < 3:
            out[k] = alls[k]
    return out


STABLE = 0.2


def mean(xs):
    return sum(xs) / len(xs) if xs else None


# ---- 1. target slowdown from sampling ------------------------------------------------------------------
def slowdown_jobs():
    """Jobs (one fixture run each, in order) and the function that makes rows of their results."""
    data = os.path.join(TMP, "perf.data")
    folded = os.path.join(TMP, "slow.folded")
    jobs, finishers = [], []
    for mode, binary in (("dwarf", "shares_nofp"), ("fp", "shares_fp")):
        argv = [os.path.join(FIX, binary), "%.1f" % (RUN + 1.5)]   # figures at 1 .. RUN+1 s, first dropped
        perf_cg = ["--call-graph", "dwarf,65528"] if mode == "dwarf" else ["--call-graph", "fp"]
        seq, cpu = [], {}

        def job(key, mode=mode, argv=argv, perf_cg=perf_cg, seq=seq, cpu=cpu):
            def run():
                if key == "U":
                    prof = None
                elif key[0] == "taskspy":
                    prof = lambda pid: [TASKSPY, "record", "-p", str(pid), "-F", str(key[1]), "--call-graph",
                                        mode, "-o", folded]
                else:
                    prof = lambda pid: ["perf", "record", "-q", "-B", "-F", str(key[1])] + perf_cg + \
                        ["-p", str(pid), "-o", data]
                vals, _, perr, ru = run_target(argv, prof, r"units/s (\d+)")
                if prof and key[0] == "taskspy":
                    summary_line(perr)
                if ru:
                    cpu.setdefault(key, []).append(ru.ru_utime + ru.ru_stime)
                seq.append((key, mean(vals)))
            return run

        # U T P U P T U ... for each frequency in turn: each profiled run next to a baseline run
        for r in range(PAIRS):
            for i, hz in enumerate((99, 999) if r % 2 == 0 else (999, 99)):
                jobs.append(job("U"))
                kinds = ("taskspy", "perf") if (r + i) % 2 == 0 else ("perf", "taskspy")
                jobs += [job((k, hz)) for k in kinds]
        jobs.append(job("U"))

        def finish(mode=mode, binary=binary, seq=seq, cpu=cpu):
            pairs = bracketed(seq, PAIRS)
            base = [v for k, v in seq if k == "U" and v]
            # how far two unprofiled runs in a row differ: a loss difference below it is noise
            noise = med([abs(a - b) / ((a + b) / 2) for a, b in zip(base, base[1:])])
            for hz in (99, 999):
                loss = {}
                for kind in ("taskspy", "perf"):
                    loss[kind] = med([1 - x / b for x, b in pairs.get((kind, hz), []) if x and b])
                tl, pl = loss["taskspy"], loss["perf"]
                ratio = tl / pl if tl is not None and pl and pl > 0.005 else None
                text = fmt(ratio) if ratio is not None else "n/a (perf loss %s)" % fmt(pl, "%.3f")
                if tl is not None and pl is not None and noise is not None:
                    text += " (%+.1f points, %s noise %.1f)" % (100 * (tl - pl), "within" if abs(tl - pl) <= noise
                                                               else "beyond", 100 * noise)
                rows.append(("1", "target slowdown, %d Hz %s: taskspy loss / perf loss" % (hz, mode), text,
                             "<= 1.0"))
                pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")
                tp = [t / p for (t, _), (p, _) in zip(pairs.get(("taskspy", hz), []), pairs.get(("perf", hz), []))
                      if t and p]
                details.append("1. %-5s %3d Hz: loss taskspy %s, perf %s (median of %d/%d pairs); units/s taskspy/perf "
                               "%s; profiler CPU per run: taskspy %s s, perf %s s"
                               % (mode, hz, pct(tl), pct(pl), len(pairs.get(("taskspy", hz), [])),
                                  len(pairs.get(("perf", hz), [])), fmt(med(tp), "%.3f"),
                                  fmt(med(cpu.get(("taskspy", hz), [])), "%.3f"),
                                  fmt(med(cpu.get(("perf", hz), [])), "%.3f")))
            details.append("1. %-5s unprofiled %s units/s: median %.0f, min %.0f, max %.0f (%d runs); loss = 1 - "
                           "profiled / mean of the two bracketing unprofiled runs; noise = median difference of "
                           "consecutive unprofiled runs, %s"
                           % (mode, binary, med(base) or 0, min(base or [0]), max(base or [0]), len(base),
                              fmt(None if noise is None else 100 * noise, "%.1f%%")))
        finishers.append(finish)

    def finish_all():
        for f in finishers:
            f()
        if os.path.exists(data):
            os.unlink(data)
    return jobs, finish_all


# ---- 2. marker cost ------------------------------------------------------------------------------------
def sdt_notes(binary):
    """[(provider, name, pc, semaphore)] of binary's stapsdt notes, addresses adjusted by .stapsdt.base."""
    notes = subprocess.run(["readelf", "-nW", binary], capture_output=True, text=True).stdout
    sections = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout
    m = re.search(r"\]\s+\.stapsdt\.base\s+\S+\s+([0-9a-f]+)", sections)
    base_addr = int(m.group(1), 16) if m else None
    out = []
    for prov, name, loc, base, sem in re.findall(r"Provider: (\S+)\s+Name: (\S+)\s+Location: (0x[0-9a-f]+), "
                                                 r"Base: (0x[0-9a-f]+), Semaphore: (0x[0-9a-f]+)", notes):
        loc, base, sem = int(loc, 16), int(base, 16), int(sem, 16)
        if base_addr is not None and base:
            loc += base_addr - base
            if sem:
                sem += base_addr - base
        out.append((prov, name, loc, sem))
    return out


def vaddr_to_offset(binary, vaddr):
    segs = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    for off, va, filesz in re.findall(r"LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)", segs):
        off, va, filesz = int(off, 16), int(va, 16), int(filesz, 16)
        if va <= vaddr < va + filesz:
            return vaddr - va + off
    return None


TRACEFS = next((d for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
                if os.path.exists(d + "/uprobe_events")), None)


def kernel_probes_add(binary, tag):
    """One kernel uprobe (tracefs uprobe_events, by file offset, semaphore through ref_ctr_offset) per SDT
    note of binary: the probes taskspy attaches, for perf stat to count. (perf probe's sdt_ events are not
    used: perf 6.x places them at the note's virtual address as if it were the file offset, which is wrong
    for binaries whose text vaddr differs from its offset, such as rust-lld's tokio_markers, and it
    refuses the 57 task__spawn locations of one name without -f.) Returns [tracefs event names]."""
    names = []
    try:
        for i, (prov, name, pc, sem) in enumerate(sdt_notes(binary)):
            off = vaddr_to_offset(binary, pc)
            sem_off = vaddr_to_offset(binary, sem) if sem else None
            ev = "%s_%s_%s_%d" % (tag, prov, name, i)
            spec = "p:%s/%s %s:0x%x" % (PROBE_GROUP, ev, binary, off)
            if sem_off:
                spec += "(0x%x)" % sem_off
            uprobe_events_write(spec)
            names.append("%s/%s" % (PROBE_GROUP, ev))
    except OSError as e:
        log("uprobe_events: %s" % e)
        kernel_probes_del(names)
        return []
    return names


PROBE_GROUP = "taskspy_bench"


def uprobe_events_write(line):
    # O_APPEND without a seek (Python's "a" mode seeks, which tracefs refuses), one definition per write
    fd = os.open(TRACEFS + "/uprobe_events", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def kernel_probes_del(names):
    for n in names:
        try:
            uprobe_events_write("-:%s" % n)
        except OSError as e:
            log("removing uprobe %s: %s" % (n, e))


def kernel_probes_del_stale():
    if TRACEFS:
        with open(TRACEFS + "/uprobe_events") as f:     # left by an interrupted run
            kernel_probes_del([l.split()[0][2:] for l in f if l.startswith("p:%s/" % PROBE_GROUP)])


def marker_jobs():
    """Jobs [(needs_uprobes, run)] and the function that makes rows of their results. Both profilers
    launch the fixture, so their uprobes are in place before it starts (attaching system-wide uprobes to a
    running process takes seconds here). Closing uprobe events costs the kernel a grace period per probe,
    under a mutex that creating probes also takes (10-20 s for the tokio fixture's 72 notes); the
    scheduler in main() runs other benchmarks' jobs meanwhile. Each run gets a fresh copy of the fixture:
    uprobes are per inode, so a profiler's ongoing teardown never traps the next run's process."""
    jobs, finishers = [], []
    if not TRACEFS:
        rows.append(("2", "marker cost", "n/a (no tracefs uprobe_events)", "<= 1.2"))
        return jobs, lambda: None
    kernel_probes_del_stale()
    dur = "%.1f" % (RUN + 1.5)
    fixtures = [
        ("executor", r"work units per second: (\d+)", r"^semaphores:", 2),
        ("tokio_markers", r"polls/s (\d+)", r"^units by kind", 2),
    ]
    counter = [0]       # run number: directory and probe names
    for name, metric, last_line, workers in fixtures:
        src = os.path.join(FIX, name)
        if not os.path.exists(src):
            rows.append(("2", "marker cost, %s" % name, "n/a (fixture missing)", "<= 1.2"))
            continue
        seq, seq_cpu, polls_seen, kcount, precorded, reading = [], [], [], [], [], []

        def job(kind, name=name, metric=metric, last_line=last_line, src=src, seq=seq, seq_cpu=seq_cpu,
                polls_seen=polls_seen, kcount=kcount, precorded=precorded, reading=reading):
            def run():
                counter[0] += 1
                d = os.path.join(TMP, "m%d" % counter[0])
                os.mkdir(d)
                binary = os.path.join(d, name)
                shutil.copy2(src, binary)
                out_path, stat_out = os.path.join(d, "out.txt"), os.path.join(d, "stat.csv")
                probes = []
                if kind == "U":
                    argv = [binary, dur]
                elif kind == "taskspy":
                    argv = [TASKSPY, "record", "-o", os.path.join(d, "t.folded"), "--", binary, dur]
                else:
                    probes = kernel_probes_add(binary, "r%d" % counter[0])
                    if not probes:
                        seq.append((kind, None))
                        return
                    events = "%s:r%d_*" % (PROBE_GROUP, counter[0])
                    if kind == "kernel":
                        argv = ["perf", "stat", "-x,", "-o", stat_out, "-e", events, "--", binary, dur]
                    else:       # every hit sampled and written to a file: the floor of any sampling reader
                        argv = ["perf", "record", "-q", "-B", "-c", "1", "-m", "2048", "-o",
                                os.path.join(d, "perf.data"), "-e", events, "--", binary, dur]
                with open(out_path, "w") as out_f, open(os.path.join(d, "err.txt"), "w") as err_f:
                    proc = subprocess.Popen(argv, stdout=out_f, stderr=err_f)
                deadline = time.monotonic() + float(dur) + 120
                out = ""
                while time.monotonic() < deadline:     # the fixture's last line: it has exited
                    with open(out_path) as f:
                        out = f.read()
                    if re.search(last_line, out, re.M) or proc.poll() is not None:
                        break
                    time.sleep(0.02)
                if os.environ.get("BENCH_VERBOSE"):
                    log("   %s %s" % (name, kind))
                vals = [float(v) for v in re.findall(metric, out)][1:]
                rate = mean(vals)
                if rate and "units" in metric:     # executor: polls/s = units/s * polls/unit of the run
                    m = re.search(r"total: polls (\d+) work units (\d+)", out)
                    rate = rate * int(m.group(1)) / int(m.group(2)) if m and int(m.group(2)) else None
                seq.append((kind, rate))
                # the fixture's own CPU time per poll (user + system: the uprobe traps and the kernel's
                # writing of samples run in the target's context), free of other tenants' load
                m = re.search(r"total: polls (\d+) .* cpu ([\d.]+)", out)
                run_polls = int(m.group(1)) if m else 0
                seq_cpu.append((kind, float(m.group(2)) * 1e9 / run_polls if run_polls else None))
                if kind == "U":
                    proc.wait()
                    return

                def done():                            # once the profiler has exited
                    with open(os.path.join(d, "err.txt")) as f:
                        perr = f.read()
                    if kind == "taskspy":
                        summary_line(perr)
                        m = re.search(r"taskspy: (\d+) polls", perr)
                        polls_seen.append(int(m.group(1)) if m else None)
                        m = re.search(r"processing: .*; markers ([\d.]+) CPU-s", perr)
                        reading.append(float(m.group(1)) * 1e9 / run_polls if m and run_polls else None)
                    elif kind == "perfrec":
                        data = os.path.join(d, "perf.data")
                        if os.path.exists(data):
                            precorded.append(os.path.getsize(data) / 1e6)
                            os.unlink(data)
                    elif os.path.exists(stat_out):
                        with open(stat_out) as f:
                            kcount.append(sum(int(l.split(",")[0]) for l in f
                                              if "poll__start" in l and l.split(",")[0].isdigit()))
                    kernel_probes_del(probes)
                PENDING.append((proc, done))
            return run

        for r in range(PAIRS + 1):
            jobs.append((False, job("U")))
            if r == PAIRS:
                break
            order = ("taskspy", "kernel", "perfrec")
            jobs += [(True, job(order[(r + i) % 3])) for i in range(3)]

        def finish(name=name, workers=workers, seq=seq, seq_cpu=seq_cpu, polls_seen=polls_seen, kcount=kcount,
                   precorded=precorded, reading=reading):
            pairs = bracketed(seq, PAIRS)
            cpu_pairs = bracketed(seq_cpu, PAIRS)
            if os.environ.get("BENCH_VERBOSE"):
                log("   %s CPU ns/poll per run: %s" % (name, " ".join("%s=%.0f" % (k[0], v) if v else k[0]
                                                                     for k, v in seq_cpu)))
            cpu = {k: med([x - b for x, b in cpu_pairs.get(k, []) if x and b])
                   for k in ("taskspy", "kernel", "perfrec")}
            read_ns = med(reading)
            cpu_ratio = (cpu["taskspy"] + read_ns) / cpu["kernel"] if None not in (cpu["taskspy"], read_ns) \
                and cpu["kernel"] and cpu["kernel"] > 0 else None
            ns = {}
            for kind in ("taskspy", "kernel", "perfrec"):
                # thread-time per poll: `workers` busy threads / polls per second
                ns[kind] = med([workers * 1e9 * (1 / x - 1 / b) for x, b in pairs.get(kind, []) if x and b])
            ratio = ns["taskspy"] / ns["kernel"] if ns["taskspy"] is not None and ns["kernel"] and ns["kernel"] > 0 \
                else None
            rows.append(("2", "marker cost, %s: taskspy ns/poll / kernel uprobe ns/poll" % name,
                         fmt(ratio) if ratio is not None else "n/a (kernel %s ns)" % fmt(ns["kernel"], "%.0f"),
                         "<= 1.2"))
            floor = ns["perfrec"] / ns["kernel"] if ns["perfrec"] is not None and ns["kernel"] and \
                ns["kernel"] > 0 else None
            rows.append(("2", "(reference) %s: perf record sampling every hit ns/poll / kernel uprobe ns/poll"
                         % name, fmt(floor) if floor is not None else "n/a", "-"))
            rows.append(("2", "marker cost in CPU time, %s: (target + taskspy reading) / target under perf stat, "
                         "extra CPU ns/poll" % name, fmt(cpu_ratio), "<= 1.2"))
            base = [v for k, v in seq if k == "U" and v] or [float("nan")]
            details.append("2. %s: unprofiled %.0f polls/s (min %.0f, max %.0f) = %.0f ns/poll per worker "
                           "(%d workers); extra ns/poll: taskspy %s, perf stat %s, perf record -c 1 %s; per run: "
                           "polls decoded by taskspy %s, poll starts counted by perf stat %s, perf.data %s MB "
                           "(medians)"
                           % (name, med(base), min(base), max(base), workers * 1e9 / med(base), workers,
                              fmt(ns["taskspy"], "%.0f"), fmt(ns["kernel"], "%.0f"), fmt(ns["perfrec"], "%.0f"),
                              fmt(med(polls_seen), "%.0f"), fmt(med(kcount), "%.0f"), fmt(med(precorded), "%.0f")))
            base_cpu = [v for k, v in seq_cpu if k == "U" and v] or [float("nan")]
            details.append("2. %s CPU time: unprofiled %.0f CPU ns/poll (target); extra CPU ns/poll of the target: "
                           "taskspy %s, perf stat %s, perf record -c 1 %s; taskspy's reading and applying of "
                           "the marker records %s CPU ns/poll (in-process timing) (medians)"
                           % (name, med(base_cpu), fmt(cpu["taskspy"], "%.0f"), fmt(cpu["kernel"], "%.0f"),
                              fmt(cpu["perfrec"], "%.0f"), fmt(read_ns, "%.0f")))
        finishers.append(finish)

    def finish_all():
        for f in finishers:
            f()
    return jobs, finish_all


PENDING = []    # (profiler still tearing its uprobes down, what to do once it has exited)


def reap(block=False):
    """Finish the pending profilers that have exited (all of them if block). True if none is left."""
    for item in list(PENDING):
        proc, done = item
        if block:
            try:
                proc.wait(timeout=180)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.poll() is not None:
            PENDING.remove(item)
            done()
    return not PENDING


def bench_slowdown_and_markers():
    """Sections 1 and 2, their runs in each section's own order, interleaved in time: while a marker run's
    profiler is still tearing its uprobes down (idle in the kernel, holding the mutex that the next
    marker run's probes need), the sampling runs (no uprobes) go on."""
    only = set(os.environ.get("BENCH_ONLY", "1,2").split(","))
    s1, finish1 = slowdown_jobs() if "1" in only else ([], lambda: None)
    s2, finish2 = marker_jobs() if "2" in only else ([], lambda: None)
    log("1+2. sampling slowdown (shares: %d runs) and marker cost (executor, tokio_markers: %d runs), "
        "%d pairs, %.0f s measured per run" % (len(s1), len(s2), PAIRS, RUN))
    t = time.monotonic()
    n1 = len(s1)
    while s2:
        needs_uprobes, run = s2[0]
        if needs_uprobes and not reap() and s1:
            s1.pop(0)()
            continue
        if needs_uprobes:
            reap(block=True)
        s2.pop(0)[1]()
    log("   marker runs done; %d of %d sampling runs left" % (len(s1), n1))
    for run in s1:
        run()
    reap(block=True)
    finish1()
    finish2()
    log("   done in %.0f s" % (time.monotonic() - t))


# ---- 3. post-processing --------------------------------------------------------------------------------
def status_kb(pid, field):
    """A /proc/PID/status field in KB (VmHWM: the peak RSS so far), or None once the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pp_run(hz, secs, extra=(), hwm_at=None):
    """Launch shares_nofp for secs, attach taskspy at hz (dwarf); returns (samples, lost, taskspy CPU s,
    target exit -> taskspy exit s, peak RSS KB, wall s of recording, CPU s of the processing stage as
    taskspy times it in-process: ring buffers to aggregated, symbolized stacks). hwm_at: seconds into the
    recording at which taskspy's peak RSS so far is read (VmHWM), filled in as a dict of seconds to KB."""
    folded = os.path.join(TMP, "pp-%d-%d.folded" % (hz, os.getpid()))
    fx = subprocess.Popen([os.path.join(FIX, "shares_nofp"), "%.1f" % secs], stdout=subprocess.DEVNULL)
    time.sleep(ATTACH_DELAY)
    t_start = time.monotonic()
    ts = subprocess.Popen([TASKSPY, "record", "-p", str(fx.pid), "-F", str(hz), "--call-graph", "dwarf",
                           "-o", folded] + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for at in sorted(hwm_at or {}):
        time.sleep(max(0.0, t_start + at - time.monotonic()))
        hwm_at[at] = status_kb(ts.pid, "VmHWM")
    fx.wait()
    t_exit = time.monotonic()
    err = ts.stderr.read()
    _, _, ru = os.wait4(ts.pid, 0)
    t_done = time.monotonic()
    s = summary_line(err) or (0, 0)
    m = re.search(r"processing: \d+ samples and \d+ marker records in ([0-9.]+) CPU-s", err)
    return (s[0], s[1], ru.ru_utime + ru.ru_stime, t_done - t_exit, ru.ru_maxrss, t_exit - t_start,
            float(m.group(1)) if m else None)


def bench_postprocessing():
    log("3. post-processing: %d runs of %.0f s at %d Hz, dwarf" % (PP_RUNS, PP, PP_HZ))
    res = [pp_run(PP_HZ, PP) for _ in range(PP_RUNS)]
    rate = med([r[0] / r[6] for r in res if r[6]])          # in-process timing of the stage
    whole = med([r[0] / r[2] for r in res if r[2] > 0])     # the whole process, startup and exit included
    incoming = med([r[0] / r[5] for r in res if r[5] > 0])
    lat = med([r[3] for r in res])
    samples = med([r[0] for r in res])
    rows.append(("3", "post-processing: samples per CPU-s of the stage (in-process) / samples recorded per s",
                 fmt(rate / incoming if rate and incoming else None, "%.1f"), ">= 1 (keeps up)"))
    rows.append(("3", "post-processing: target exit -> output written, %.0f samples (s)" % samples,
                 fmt(lat, "%.3f"), "< 1 s @ 100k"))
    details.append("3. %d Hz dwarf, %.0f s: samples %s, lost %s; processing stage CPU %s s (in-process) -> "
                   "%.0f samples/CPU-s; whole taskspy CPU %s s -> %.0f samples/CPU-s; recorded %.0f samples/s; "
                   "exit->done %s s"
                   % (PP_HZ, PP, "/".join(str(r[0]) for r in res), "/".join(str(r[1]) for r in res),
                      "/".join("%.2f" % r[6] if r[6] else "?" for r in res), rate or 0,
                      "/".join("%.2f" % r[2] for r in res), whole or 0, incoming or 0,
                      "/".join("%.3f" % r[3] for r in res)))


# ---- 4. rendering --------------------------------------------------------------------------------------
def measured(argv):
    """argv run under GNU time, which writes the command's peak RSS (KB) to a file (read by measured_rss). A
    peak RSS from Python's own wait4 would start at Python's: a child forked from it keeps its parent's
    high-water mark through exec, which GNU time's small process does not have. (CPU time is wait4's on
    GNU time, which counts the command it waited for, in microseconds rather than GNU time's 10 ms.)
    Returns (argv to run, that file)."""
    fd, path = tempfile.mkstemp(dir=TMP, suffix=".time")
    os.close(fd)
    return ["/usr/bin/time", "-o", path, "-f", "%M"] + argv, path


def measured_rss(path):
    """The peak RSS KB from measured's file, or None. Its last line: a command killed by a signal gets a line
    of its own before it."""
    try:
        with open(path) as f:
            return int(f.read().split("\n")[-2])
    except (OSError, ValueError, IndexError):
        return None
    finally:
        os.unlink(path)


def timed_run(argv, stdout_path):
    """Run argv to the end, its stdout into stdout_path: (wall s, CPU s, peak RSS KB)."""
    run, times = measured(argv)
    t = time.monotonic()
    with open(stdout_path, "w") as out:
        proc = subprocess.Popen(run, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss = measured_rss(times)
    if proc.returncode != 0:
        raise RuntimeError("%s exited %d" % (" ".join(argv[:2]), proc.returncode))
    return wall, ru.ru_utime + ru.ru_stime, rss


def rendering_inputs():
    """[(label, gen_folded.py arguments)]: BENCH_STACKS stacks of the usual generated shape, then BENCH_WIDE
    stacks of long C++ and Rust names up to 60 deep (none when BENCH_WIDE is 0), then BENCH_REAL stacks of a real
    service's names and shape (gen_folded.py --real: names of 40-120 characters with generics and closures, call
    paths 30-60 deep; 100,000 lines are ~76 MB; none when BENCH_REAL is 0)."""
    inputs = [("%d stacks" % n, [str(n), "--seed", "7"]) for n in STACKS]
    if WIDE:
        inputs.append(("%d wide stacks" % WIDE, [str(WIDE), "--seed", "7", "--wide", "--max-depth", "60"]))
    if REAL:
        inputs.append(("%d real-name stacks" % REAL, [str(REAL), "--seed", "7", "--real"]))
    return inputs


def holds(ok):
    return "n/a" if ok is None else "holds" if ok else "misses"


def read_through(path):
    """Read a file once, so that its pages are in the page cache. This VM runs a DAMON scheme that pages out memory
    left idle for about a minute (kdamond: pageout, 12 aggregations of 5 s), file pages included. Without this, the
    tool that runs first on an input (taskspy) would alone read back whatever of it was paged out, and the others
    would find it cached."""
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def bench_rendering():
    """Each input rendered by taskspy flamegraph, inferno-flamegraph (BENCH_TOOLS) and flamegraph.pl. The input
    is written and fsynced; each tool then runs once after the input is read through (read_through) and FIRST_PAUSE
    s idle (its first run: the one a user waits for, reported beside the median and as a ratio of its own), then
    PAIRS runs back to back; the ratios of the medians, in wall time (what the user waits for; inferno uses both
    cores) and in CPU time. flamegraph.pl runs PAIRS times only where its first run took under PL_LONG s; longer
    runs (the wide inputs: 12-30 s) are PL_LONG_RUNS, the first counted."""
    log("4. rendering: %s, flamegraph.pl %s, inferno-flamegraph %s"
        % (", ".join(l for l, _ in rendering_inputs()), FLAMEGRAPH_PL or "not found", INFERNO or "not built"))
    t0 = time.monotonic()
    gen = os.path.join(REPO, "tests", "tools", "gen_folded.py")
    tools = [("taskspy", lambda f, o: [TASKSPY, "flamegraph", f, "-o", o], None)]
    if INFERNO:
        tools.append(("inferno", lambda f, o: [INFERNO, f], None))
    if FLAMEGRAPH_PL:
        tools.append(("flamegraph.pl", lambda f, o: ["perl", FLAMEGRAPH_PL, f], PL_LONG))
    for label, gen_args in rendering_inputs():
        f = os.path.join(TMP, "render.folded")
        subprocess.run([sys.executable, gen] + gen_args + ["-o", f], check=True)
        fd = os.open(f, os.O_RDONLY)
        os.fsync(fd)                    # written back: its pages are clean page cache, as a file a user renders
        os.close(fd)
        big = gen_args[0] == "100000"
        res, sizes = {}, {}
        for name, argv, long_after in tools:
            svg = os.path.join(TMP, "render-%s.svg" % name.split(".")[0])
            sink = os.devnull if name == "taskspy" else svg
            read_through(f)             # the input cached for every tool's first run alike (below)
            time.sleep(FIRST_PAUSE)
            first = timed_run(argv(f, svg), sink)
            runs = [first] + [timed_run(argv(f, svg), sink) for _ in range(PL_LONG_RUNS - 1)] \
                if long_after is not None and first[0] >= long_after else \
                [timed_run(argv(f, svg), sink) for _ in range(PAIRS)]
            res[name] = tuple(med([r[i] for r in runs]) for i in range(3)) + (first[0], len(runs), first[1])
            sizes[name] = os.path.getsize(svg)
        t = res["taskspy"]
        for peer, goal in (("inferno", 2), ("flamegraph.pl", 50)):
            if peer not in res:
                rows.append(("4", "render %s: %s" % (label, peer), "n/a (%s missing)" % peer,
                             ">= %d @ 100k" % goal))
                continue
            for which, at, what in (("median", 0, "time"), ("first run", 3, "first run")):
                wall = res[peer][at] / t[at]
                cpu = res[peer][1] / t[1] if which == "median" else res[peer][5] / t[5]
                verdict = "; %s" % holds(wall >= goal) if big else ""
                if big and wall < goal:
                    verdict += ": %s takes %.3f s, taskspy %.3f s" % (peer, res[peer][at], t[at])
                rows.append(("4", "render %s: %s %s / taskspy flamegraph %s (CPU time)" % (label, peer, what, what),
                             "%.1f (%.1f)%s" % (wall, cpu, verdict), ">= %d @ 100k" % goal))
        details.append("4. %s (%d MB folded): " % (label, os.path.getsize(f) >> 20) + "; ".join(
            "%s %.3f s, %.3f CPU-s, %.0f MB peak RSS, %d KB svg (medians of %d runs; first run %.3f s, %.3f CPU-s, "
            "after %.0f s idle)" % (name, r[0], r[1], r[2] / 1024, sizes[name] // 1024, r[4], r[3], r[5], FIRST_PAUSE)
            for name, r in res.items()))
        os.unlink(f)
    log("   done in %.0f s" % (time.monotonic() - t0))


# ---- 5. memory -----------------------------------------------------------------------------------------
def bench_memory():
    log("5. memory: taskspy record at 999 Hz for %.0f s and %.0f s, side by side" % (SHORT, LONG))
    import threading
    res = {}

    # the long run's peak so far at a third and two thirds of it: how much it still grows once the journal has
    # replayed at least once (at 999 Hz, every ~12 s; the short run ends before its first), which loads the
    # symbols and DWARF while the sampler's buffers are still there
    hwm = {LONG / 3: None, 2 * LONG / 3: None}

    def go(secs):
        res[secs] = pp_run(999, secs, hwm_at=hwm if secs == LONG else None)

    th = [threading.Thread(target=go, args=(s,)) for s in (SHORT, LONG)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    s, l = res[SHORT], res[LONG]
    rows.append(("5", "memory: peak RSS %.0f s / %.0f s at 999 Hz" % (LONG, SHORT),
                 fmt(l[4] / s[4] if s[4] else None), "~1.0 (no growth)"))
    third = hwm[LONG / 3]
    rows.append(("5", "memory: the %.0f s run's peak RSS at its end / at %.0f s (after the journal's first replay)"
                 % (LONG, LONG / 3), fmt(l[4] / third if third else None), "~1.0 (no growth)"))
    details.append("5. peak RSS %.0f s: %d KB (%d samples), %.0f s: %d KB (%d samples; peak so far %s); exit->done "
                   "of the %.0f s run: %.3f s" % (SHORT, s[4], s[0], LONG, l[4], l[0], ", ".join(
                       "%s KB at %.0f s" % (v, k) for k, v in sorted(hwm.items())), LONG, l[3]))


# ---- 6. the SVG in a browser ----------------------------------------------------------------------------
def bench_browser_zoom():
    """Chromium zooming a 100,000-stack graph (bench/svg_zoom.js); the behaviour is tested by make check."""
    runs = PAIRS
    log("6. browser: load, zoom and unzoom a 100,000-stack SVG in headless Chromium, %d runs" % runs)
    browser_dir = os.path.join(REPO, "tests", "browser")
    if not os.path.exists(os.path.join(browser_dir, "node_modules", "playwright-core", "package.json")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=browser_dir, check=True,
                       stdout=subprocess.DEVNULL)
    f, svg = os.path.join(TMP, "zoom.folded"), os.path.join(TMP, "zoom.svg")
    subprocess.run([sys.executable, os.path.join(REPO, "tests", "tools", "gen_folded.py"), "100000", "--seed", "23",
                    "-o", f], check=True)
    subprocess.run([TASKSPY, "flamegraph", f, "-o", svg], check=True, stderr=subprocess.DEVNULL)
    out = subprocess.run(["node", os.path.join(REPO, "bench", "svg_zoom.js"), svg, str(runs)], check=True,
                         capture_output=True, text=True).stdout
    t = json.loads(out.strip().splitlines()[-1])
    zoom, unzoom = med(t["zoom_ms"]), med(t["unzoom_ms"])
    rows.append(("6", "browser: zoom, unzoom of a 100,000-stack graph (ms, median of %d)" % runs,
                 "%s, %s" % (fmt(zoom, "%.0f"), fmt(unzoom, "%.0f")), "< 1000 each"))
    details.append("6. %d frames drawn; load %s ms, zoom %s ms, unzoom %s ms (per run)"
                   % (t["frames"], "/".join("%d" % x for x in t["load_ms"]),
                      "/".join("%.0f" % x for x in t["zoom_ms"]), "/".join("%.0f" % x for x in t["unzoom_ms"])))


# ---- 7. symbolizing a large binary ---------------------------------------------------------------------
def bench_many_symbols():
    """fault_manysyms (100,000 functions) runs 3 s under taskspy -p: target exit -> output written."""
    runs = 3
    log("7. 100,000-symbol target: target exit -> output written, %d runs" % runs)
    lats = []
    for r in range(runs):
        folded = os.path.join(TMP, "many-%d.folded" % r)
        fx = subprocess.Popen([os.path.join(FIX, "fault_manysyms"), "3"], stdout=subprocess.DEVNULL)
        time.sleep(ATTACH_DELAY)
        ts = subprocess.Popen([TASKSPY, "record", "-p", str(fx.pid), "-F", "199", "-o", folded],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        fx.wait()
        t_exit = time.monotonic()
        ts.wait()
        lats.append(time.monotonic() - t_exit)
    rows.append(("7", "100,000-symbol target: target exit -> output written (s, median of %d)" % runs,
                 fmt(med(lats), "%.2f"), "< 4 s"))
    details.append("7. exit->done %s s" % "/".join("%.2f" % x for x in lats))


# ---- 8. a saturated HTTP server ------------------------------------------------------------------------
WRK_CONNECTIONS = 32
HTTP_SETTLE = 1.0       # profiler attached (perf's dwarf setup, taskspy's first objects) before wrk starts


def perf_counts(data):
    """(samples, samples lost) of a perf.data: SAMPLE records and the sum of its LOST records' counts
    (perf's own LOST_SAMPLES records count the same losses again, read from the event at the end)."""
    out = subprocess.run(["perf", "script", "-i", data, "--show-lost-events", "-F", "pid"], capture_output=True,
                         text=True).stdout
    lost = sum(int(n) for n in re.findall(r"PERF_RECORD_LOST lost (\d+)", out))
    samples = sum(1 for l in out.splitlines() if l.strip() and "PERF_RECORD" not in l)
    return samples, lost


def child_rss_kb(parent):
    """The resident set (KB, VmRSS) of the process whose parent is parent (the profiler GNU time runs), or
    None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) != parent:
                    continue
            with open("/proc/%s/status" % entry) as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, ValueError, IndexError, StopIteration):
            continue
    return None


def samply_counts(profile, err):
    """(samples, samples lost) of a samply recording: the samples of its saved profile's threads (the Firefox
    profiler's processed format, gzipped JSON) and the events samply's stderr says were lost ("Lost N
    events.", printed only when some were: the kernel's LOST records, which count its context switch
    records as well as samples)."""
    try:
        with gzip.open(profile, "rt") as f:
            threads = json.load(f).get("threads", [])
        samples = sum(t["samples"].get("length", len(t["samples"].get("stack", []))) for t in threads)
    except (OSError, ValueError, KeyError):
        samples = None
    m = re.search(r"^Lost (\d+) events\.", err, re.M)
    return samples, int(m.group(1)) if m else 0


def proc_cpu_s(pid):
    """The user + system CPU seconds process pid has used so far (/proc/PID/stat), or None when it is gone."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()     # after the command name: state is fields[0]
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_hyper(seconds):
    """hyper_server started for seconds: (the process, its pid, its port) once it has said them."""
    server = subprocess.Popen([os.path.join(FIX, "hyper_server"), "--seconds", "%.0f" % seconds],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = server.stdout.readline()
    m = re.match(r"hyper_fixture pid (\d+) port (\d+)", first)
    if not m:
        server.kill()
        server.wait()
        raise RuntimeError("hyper_server did not start: %r" % first)
    return server, m.group(1), m.group(2)


@contextlib.contextmanager
def paranoid_at_most(level):
    """kernel.perf_event_paranoid at most level inside the block, as it was after. samply (0.13) gives up when
    the hardware cycles event is refused and the setting is above 1, even as root, instead of falling back to
    the cpu-clock event as it does at 1 (this VM has no hardware PMU); it checks only while it attaches, so
    the block need only cover that."""
    path = "/proc/sys/kernel/perf_event_paranoid"
    with open(path) as f:
        before = f.read().strip()
    lowered = int(before) > level
    if lowered:
        with open(path, "w") as f:
            f.write("%d\n" % level)
    try:
        yield
    finally:
        if lowered:
            with open(path, "w") as f:
                f.write(before + "\n")


class DumpLoop:
    """`taskspy tasks -p PID` every 1/hz s on a thread while it runs (row 12): dumps taken, their CPU-s."""

    def __init__(self, pid, hz):
        self.pid, self.period, self.dumps, self.cpu = pid, 1.0 / hz, 0, 0.0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stop.is_set():
            t = time.monotonic()
            proc = subprocess.Popen([TASKSPY, "tasks", "-p", self.pid], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status) == 0:
                self.dumps += 1
                self.cpu += ru.ru_utime + ru.ru_stime
            self.stop.wait(max(0.0, self.period - (time.monotonic() - t)))

    def end(self):
        self.stop.set()
        self.thread.join()


def http_run(kind, hz, wait=False, probe_events=(), stop=False, dump_hz=0, stack_size=None):
    """One run of the hyper fixture saturated by wrk on 127.0.0.1 for HTTP seconds; kind "U" (unprofiled),
    "taskspy" (with --wait-output too when wait: "events" or "snapshots", its --wait-mode), "perf" (perf record)
    or "probes" (perf stat counting the
    tracefs uprobe events probe_events, "group/name"), attached HTTP_SETTLE s before wrk starts and
    recording until it ends. Returns a dict: rps (wrk's requests/s), requests and wrk_s (wrk's count and
    duration), tcpu (the server's CPU-s during wrk's run), served (the server's own count), and for a
    profiled run samples, lost, cpu (profiler CPU-s, rusage), rss (KB), proc (taskspy's processing CPU-s,
    in-process); with wait "events" the summary's waker events (registrations, wakes), polls and registration
    stacks (stacks, skipped, stacks_lost); with wait "snapshots" its snapshots (snapshots, missed, failed,
    snap_tasks, readings) and their CPU (snap_ms per snapshot, snap_us per task); for probes, hits (perf stat's
    counts added up).
    With stop (row 11) the profiler (kind "samply" too) records with no set length and is sent SIGINT as
    wrk ends: stop_s is the time from then to its exit (its output written), out_bytes its output's size."""
    server, pid, port = start_hyper(HTTP + HTTP_SETTLE + 10)
    res = {}
    prof = None
    length = "%.1f" % (HTTP + HTTP_SETTLE + 0.3)
    data = os.path.join(TMP, "http-perf.data")
    output = {"taskspy": os.path.join(TMP, "http.folded"), "perf": data, "samply": os.path.join(TMP, "samply.json.gz"),
              "samply+syms": os.path.join(TMP, "samply.json.gz")}.get(kind)
    # what samply --unstable-presymbolicate writes beside its profile: the symbols of every frame's address
    sidecar = os.path.join(TMP, "samply.json.syms.json")
    argv = None
    if kind == "taskspy":
        argv = [TASKSPY, "record", "-p", pid] + ([] if stop else ["-d", length]) + \
            ["-F", str(hz), "--call-graph", "dwarf", "-o", output] + \
            (["--stack-size", str(stack_size)] if stack_size else []) + \
            (["--wait-output", os.path.join(TMP, "http.wait.folded"), "--wait-mode", wait] if wait else [])
    elif kind == "top":                 # its defaults; a frame a second, as JSON, to the end of wrk's run
        argv = [TASKSPY, "top", "-p", pid, "-b", "--json", "-n", "%d" % (HTTP + HTTP_SETTLE + 1.5)]
    elif kind == "probes":
        argv = ["perf", "stat", "-x", ",", "-e", ",".join(e.replace("/", ":") for e in probe_events), "-p", pid,
                "--", "sleep", length]
    elif kind == "perf":
        argv = ["perf", "record", "-q", "-F", str(hz), "--call-graph", "dwarf,65528", "-p", pid, "-o", data] + \
            ([] if stop else ["--", "sleep", length])
    elif kind.startswith("samply"):     # its default unwinding; saved, no browser, no server
        argv = [SAMPLY, "record", "--save-only", "-r", str(hz), "-o", output, "-p", pid] + \
            (["--unstable-presymbolicate"] if kind == "samply+syms" else [])
    if argv:
        # in a session of its own: SIGINT to the group reaches the profiler; GNU time ignores it while it waits
        run, times = measured(argv)
        with paranoid_at_most(1) if kind.startswith("samply") else contextlib.nullcontext():
            prof = subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            time.sleep(HTTP_SETTLE)
    dumper = DumpLoop(pid, dump_hz) if dump_hz else None
    cpu_before = proc_cpu_s(pid)
    wrk = subprocess.run(["wrk", "-t1", "-c%d" % WRK_CONNECTIONS, "-d%.0fs" % HTTP, "http://127.0.0.1:%s/" % port],
                         capture_output=True, text=True).stdout
    cpu_after = proc_cpu_s(pid)
    if dumper:
        dumper.end()
        res["dumps"], res["dump_cpu"] = dumper.dumps, dumper.cpu
    res["tcpu"] = cpu_after - cpu_before if None not in (cpu_before, cpu_after) else None
    m = re.search(r"Requests/sec:\s+([0-9.]+)", wrk)
    res["rps"] = float(m.group(1)) if m else None
    m = re.search(r"(\d+) requests in ([0-9.]+)s,", wrk)
    res["requests"], res["wrk_s"] = (int(m.group(1)), float(m.group(2))) if m else (None, None)
    if prof and stop:
        res["rss_rec"] = child_rss_kb(prof.pid)
        t_stop = time.monotonic()
        os.killpg(prof.pid, signal.SIGINT)
    if prof:
        err = prof.stderr.read()
        _, status, ru = os.wait4(prof.pid, 0)
        code = prof.returncode = os.waitstatus_to_exitcode(status)
        if code != 0 and not (stop and code == 128 + signal.SIGINT):     # perf record dies of the SIGINT it gets
            log("%s exited %d: %s" % (kind, code, err.strip()[-300:]))
        res["cpu"], res["rss"] = ru.ru_utime + ru.ru_stime, measured_rss(times)
        if stop:
            res["stop_s"] = time.monotonic() - t_stop
            res["out_bytes"] = os.path.getsize(output) + (os.path.getsize(sidecar) if os.path.exists(sidecar) else 0) \
                if os.path.exists(output) else None
        if kind == "taskspy":
            res["samples"], res["lost"] = summary_line(err) or (None, None)
            m = re.search(r"processing: \d+ samples and \d+ marker records in ([0-9.]+) CPU-s", err)
            res["proc"] = float(m.group(1)) if m else None
            m = re.search(r"; ([0-9.]+) CPU-s of it symbolizing", err)
            res["symbolize"] = float(m.group(1)) if m else None
            if wait == "snapshots":
                m = re.search(r"waits: from (\d+) task snapshots at \d+ Hz \((\d+) missed, (\d+) failed\), no probe: "
                              r"(\d+) tasks", err)
                res["snapshots"], res["missed"], res["failed"], res["snap_tasks"] = \
                    tuple(int(g) for g in m.groups()) if m else (None,) * 4
                m = re.search(r"snapshots cost ([0-9.]+) ms of taskspy CPU each, ([0-9.]+) us per task \((\d+) task "
                              r"readings", err)
                res["snap_ms"], res["snap_us"], res["readings"] = \
                    (float(m.group(1)), float(m.group(2)), int(m.group(3))) if m else (None,) * 3
            elif wait:
                m = re.search(r"waits: (\d+) waker events \((\d+) registrations, (\d+) wakes\)", err)
                res["events"], res["registrations"], res["wakes"] = \
                    tuple(int(g) for g in m.groups()) if m else (None, None, None)
                m = re.search(r"; (\d+) registration stacks \((\d+) skipped by the budget, (\d+) lost\)", err)
                res["stacks"], res["skipped"], res["stacks_lost"] = \
                    tuple(int(g) for g in m.groups()) if m else (None, None, None)
                m = re.search(r"^taskspy: (\d+) polls,", err, re.M)
                res["polls"] = int(m.group(1)) if m else None
        elif kind == "top":
            pass                            # (its frames went to /dev/null; its CPU and RSS are above)
        elif kind == "probes":
            counts = [int(line.split(",")[0]) for line in err.splitlines() if re.match(r"\d+,", line)]
            res["hits"] = sum(counts) if len(counts) == len(probe_events) else None
        elif kind.startswith("samply"):
            res["samples"], res["lost"] = samply_counts(output, err)
            for f in (output, sidecar):
                if os.path.exists(f):
                    os.unlink(f)
        else:
            res["samples"], res["lost"] = perf_counts(data)
            os.unlink(data)
    server.terminate()
    out = server.communicate()[0]
    m = re.search(r"^requests / (\d+)", out, re.M)
    res["served"] = int(m.group(1)) if m else None
    if os.environ.get("BENCH_VERBOSE"):
        log("   http %s %s: %s" % (kind, hz, res))
    return res


def requests_per_cpu_s(res):
    """The requests the server answered (its own count) per second of its CPU over wrk's run: what a request
    costs inside the server, which other load on the host (and a profiler's own CPU) does not move."""
    requests = res.get("served") or res.get("requests")
    return requests / res["tcpu"] if requests and res.get("tcpu") else None


def interleaved_http(blocks, rounds, run):
    """Rows 8 and 10: rounds x blocks of hyper_server runs, each block an unprofiled run ("U") followed by the
    block's modes, the blocks' order and each block's modes rotating from round to round, and a last "U".
    run(mode) -> http_run's dict. Returns ({mode: [dicts]}, [(mode, requests/s)], [(mode, requests per
    target CPU-s)]) in run order."""
    runs, seq, per_cpu = {}, [], []

    def one(mode):
        res = run(mode)
        runs.setdefault(mode, []).append(res)
        seq.append((mode, res.get("rps")))
        per_cpu.append((mode, requests_per_cpu_s(res)))

    for r in range(rounds):
        for i, block in enumerate(blocks[r % len(blocks):] + blocks[:r % len(blocks)]):
            one("U")
            k = (r + i) % len(block)
            for mode in block[k:] + block[:k]:
                one(mode)
    one("U")
    return runs, seq, per_cpu


def bracketed_losses(sequence, modes, rounds):
    """({mode: median of 1 - x / mean of the two unprofiled runs bracketing x}, pairs kept for the mode with
    fewest) of an interleaved_http sequence."""
    pairs = bracketed(sequence, rounds)
    loss = {m: med([1 - x / b for x, b in pairs.get(m, []) if x and b]) for m in modes}
    return loss, min(len(pairs.get(m, [])) for m in modes)


def unprofiled_noise(sequence):
    """The median relative difference of consecutive unprofiled runs: a loss below it is not measured."""
    base = [v for k, v in sequence if k == "U" and v]
    return med([abs(a - b) / ((a + b) / 2) for a, b in zip(base, base[1:])])


def loss_ratio_text(tl, pl, noise):
    """taskspy's loss / perf's loss, stated as a ratio only when both losses are beyond noise; else which are
    within it (losses in points)."""
    if None in (tl, pl, noise):
        return "n/a (taskspy %s, perf %s)" % (fmt(tl, "%.3f"), fmt(pl, "%.3f"))
    pts = lambda x: "%+.1f" % (100 * x)
    if tl > noise and pl > noise:
        return "%.2f (taskspy %s, perf %s points; %s apart, %s noise %.1f)" % (
            tl / pl, pts(tl), pts(pl), pts(tl - pl), "within" if abs(tl - pl) <= noise else "beyond", 100 * noise)
    if tl <= noise and pl <= noise:
        return "within noise (%.1f points): taskspy %s, perf %s" % (100 * noise, pts(tl), pts(pl))
    return "taskspy %s points, %s noise; perf %s, %s (noise %.1f points)" % (
        pts(tl), "beyond" if tl > noise else "within", pts(pl), "beyond" if pl > noise else "within", 100 * noise)


def bench_http():
    """hyper_server (2 workers, no markers) saturated by wrk on loopback, recorded by taskspy and by perf
    record --call-graph dwarf,65528 at 99 and 999 Hz, interleaved with unprofiled runs (U T P U P T ... at
    one frequency, then the other, the order rotating per round). Two losses each: requests/s (raw
    throughput: the profiler's own CPU competes with the server for the 2 cores) and requests per target
    CPU-s (the server's own count over its CPU from /proc/PID/stat during wrk's run: the cost inside the
    server, which neither the profiler's CPU elsewhere nor other tenants' load moves much)."""
    log("8. saturated HTTP: hyper_server under wrk -c%d, %d rounds, %.0f s per run, 99 and 999 Hz dwarf"
        % (WRK_CONNECTIONS, HTTP_PAIRS, HTTP))
    blocks = [(("taskspy", hz), ("perf", hz)) for hz in (99, 999)]
    runs, seq, per_cpu = interleaved_http(blocks, HTTP_PAIRS, lambda mode: http_run(*mode) if mode != "U"
                                          else http_run("U", 0))
    modes = [m for b in blocks for m in b]
    rps_loss, rps_n = bracketed_losses(seq, modes, HTTP_PAIRS)
    cpu_loss, cpu_n = bracketed_losses(per_cpu, modes, HTTP_PAIRS)
    noise, cpu_noise = unprofiled_noise(seq), unprofiled_noise(per_cpu)
    base = [v for k, v in seq if k == "U" and v]
    pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")
    for hz in (99, 999):
        lost = {}
        for kind in ("taskspy", "perf"):
            rs = runs.get((kind, hz), [])
            counted = [r for r in rs if r.get("samples") is not None]     # all runs' losses over all their samples
            total = sum(r["samples"] + r["lost"] for r in counted)
            lost[kind] = sum(r["lost"] for r in counted) / total if total else None
        tl, pl = lost["taskspy"], lost["perf"]
        rows.append(("8", "saturated HTTP, %d Hz dwarf: lost samples, taskspy vs perf" % hz,
                     "%s vs %s" % (pct(tl), pct(pl)), "<= perf + 0.5 points"))
        tx, px = rps_loss[("taskspy", hz)], rps_loss[("perf", hz)]
        cx, cp = cpu_loss[("taskspy", hz)], cpu_loss[("perf", hz)]
        rows.append(("8", "saturated HTTP, %d Hz dwarf: requests/s loss (raw throughput, the profilers' own CPU "
                     "competing on 2 cores), taskspy / perf" % hz, loss_ratio_text(tx, px, noise), "<= 1.0"))
        rows.append(("8", "saturated HTTP, %d Hz dwarf: loss of requests per target CPU-s (the cost inside the "
                     "server), taskspy / perf" % hz, loss_ratio_text(cx, cp, cpu_noise), "<= 1.0"))
        ts = runs.get(("taskspy", hz), [])
        per_sample = med([1e6 * r["proc"] / r["samples"] for r in ts if r.get("proc") and r.get("samples")])
        whole = med([1e6 * r["cpu"] / r["samples"] for r in ts if r.get("samples")])
        rss = med([r["rss"] / 1024 for r in ts if r.get("rss")])
        rows.append(("8", "saturated HTTP, %d Hz dwarf: taskspy processing CPU-us per sample; peak RSS MB" % hz,
                     "%s; %s" % (fmt(per_sample, "%.0f"), fmt(rss, "%.1f")), "-"))
        ps = runs.get(("perf", hz), [])
        per_req = lambda mode: med([1e6 * r["tcpu"] / (r.get("served") or r["requests"]) for r in runs.get(mode, [])
                                    if r.get("tcpu") and (r.get("served") or r.get("requests"))])
        rps = lambda mode: med([r.get("rps") for r in runs.get(mode, [])])
        details.append("8. %3d Hz: lost taskspy %s, perf %s (of all runs' samples; per run lost/samples: %s | %s); "
                       "requests/s (medians) taskspy %s, perf %s, loss %s, %s; target CPU-us per request taskspy %s, "
                       "perf %s, loss of requests per target CPU-s %s, %s (medians of %d/%d kept pairs); taskspy: "
                       "samples %s, processing %s CPU-s, whole process %s CPU-us per sample, %s CPU-s, RSS %s KB; "
                       "perf record: CPU %s s, RSS %s KB (medians)"
                       % (hz, pct(tl), pct(pl), " ".join("%s/%s" % (r.get("lost"), r.get("samples")) for r in ts),
                          " ".join("%s/%s" % (r.get("lost"), r.get("samples")) for r in ps),
                          fmt(rps(("taskspy", hz)), "%.0f"), fmt(rps(("perf", hz)), "%.0f"), pct(tx), pct(px),
                          fmt(per_req(("taskspy", hz)), "%.1f"), fmt(per_req(("perf", hz)), "%.1f"), pct(cx), pct(cp),
                          rps_n, cpu_n, fmt(med([r.get("samples") for r in ts]), "%.0f"),
                          fmt(med([r.get("proc") for r in ts]), "%.3f"), fmt(whole, "%.0f"),
                          fmt(med([r["cpu"] for r in ts]), "%.3f"), fmt(med([r.get("rss") for r in ts]), "%.0f"),
                          fmt(med([r["cpu"] for r in ps]), "%.3f"), fmt(med([r.get("rss") for r in ps]), "%.0f")))
    # the stage's CPU has a fixed part (loading the 18 MB binary's symbols and unwind tables on first use):
    # the cost of one more sample is the difference between the two frequencies' medians
    proc = {hz: (med([r.get("proc") for r in runs.get(("taskspy", hz), [])]),
                 med([r.get("samples") for r in runs.get(("taskspy", hz), [])])) for hz in (99, 999)}
    (p99, n99), (p999, n999) = proc[99], proc[999]
    if None not in (p99, n99, p999, n999) and n999 > n99:
        details.append("8. taskspy processing: %.3f CPU-s for %.0f samples at 99 Hz, %.3f for %.0f at 999 Hz: %.1f "
                       "CPU-us per additional sample, %.3f CPU-s fixed" % (p99, n99, p999, n999,
                                                                          1e6 * (p999 - p99) / (n999 - n99),
                                                                          p99 - n99 * (p999 - p99) / (n999 - n99)))
    cpu_base = [1e6 / v for k, v in per_cpu if k == "U" and v]
    details.append("8. unprofiled: requests/s median %.0f, min %.0f, max %.0f; target CPU-us per request median %s, "
                   "min %s, max %s (%d runs, wrk -t1 -c%d on 127.0.0.1, %.0f s; requests: the server's own count); "
                   "noise = median difference of consecutive unprofiled runs: requests/s %s, requests per target "
                   "CPU-s %s; a loss is 1 - profiled / mean of the two bracketing unprofiled runs, median over the "
                   "%d rounds' pairs"
                   % (med(base) or 0, min(base or [0]), max(base or [0]), fmt(med(cpu_base), "%.1f"),
                      fmt(min(cpu_base) if cpu_base else None, "%.1f"), fmt(max(cpu_base) if cpu_base else None, "%.1f"),
                      len(base), WRK_CONNECTIONS, HTTP, pct(noise), pct(cpu_noise), HTTP_PAIRS))
    names = {"U": "U", "taskspy": "T", "perf": "P"}
    details.append("8. per run requests/s and CPU-us per request, in run order: " +
                   " ".join("%s %s/%s" % (names[m] if m == "U" else "%s%d" % (names[m[0]], m[1]), fmt(v, "%.0f"),
                                          fmt(1e6 / c if c else None, "%.1f"))
                            for (m, v), (_, c) in zip(seq, per_cpu)))


# ---- 11. recording beside samply ----------------------------------------------------------------------
REC_HZ = 999


def peer_verdict(values, unit, slack=0.0, lower_is_better=True, goal_peers=("samply",)):
    """"holds" when taskspy's value is no worse than each peer's in goal_peers (slack allowed: the noise),
    else "misses" and who wins with the numbers; "n/a" without taskspy's or every peer's value."""
    t = values.get("taskspy")
    peers = [(p, values.get(p)) for p in goal_peers if values.get(p) is not None]
    if t is None or not peers:
        return "n/a"
    worse = [(p, v) for p, v in peers if (t > v + slack if lower_is_better else t < v - slack)]
    if not worse:
        return "holds"
    return "misses: " + ", ".join("%s wins, %s against taskspy's %s" % (p, unit % v, unit % t) for p, v in worse)


def bench_recording_peers():
    """Row 11 (issue 30, SPEC 7's "recording costs no more than samply's"): hyper_server saturated by wrk as in
    row 8, recorded at 999 Hz by taskspy (dwarf), perf record --call-graph dwarf,65528, samply record -p (its
    default unwinding, --save-only) and samply with --unstable-presymbolicate (the symbols of every address
    written beside the profile: what taskspy's symbolized output costs), in rounds interleaved with
    unprofiled runs (U T P S Y U P S Y T ...). Each profiler records with no set length and gets SIGINT
    when wrk ends; the time from then to its exit is the time to the output written. Per profiler: lost
    samples, the loss of requests per target CPU-s against the bracketing unprofiled runs, its own CPU and
    peak RSS (rusage), that stop time and the output's size. The outputs hold different things: taskspy's
    folded stacks are unwound and symbolized; perf.data holds raw stack copies (perf script unwinds and
    symbolizes later); samply's profile holds unwound stacks of addresses, symbolized when it is opened
    (by samply's server), or from the sidecar file with --unstable-presymbolicate. Goals on the profiler's
    own cost are against samply with symbols, the same work; plain samply's figures are given beside."""
    modes = ("taskspy", "perf") + (("samply", "samply+syms") if SAMPLY else ())
    log("11. recording beside samply: hyper_server under wrk -c%d, %d rounds of %s, %.0f s per run, %d Hz"
        % (WRK_CONNECTIONS, REC_ROUNDS, "/".join(modes), HTTP, REC_HZ))
    t0 = time.monotonic()
    runs, seq, per_cpu = interleaved_http([modes], REC_ROUNDS, lambda mode: http_run(
        mode, REC_HZ if mode != "U" else 0, stop=mode != "U"))
    cpu_loss, cpu_n = bracketed_losses(per_cpu, modes, REC_ROUNDS)
    rps_loss, rps_n = bracketed_losses(seq, modes, REC_ROUNDS)
    noise = unprofiled_noise(per_cpu)
    pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")
    of = lambda mode, key: med([r.get(key) for r in runs.get(mode, [])])
    each = lambda values, show: " / ".join(show(values.get(m)) for m in modes)
    names = " / ".join(modes)
    own_cost_peer = ("samply+syms",)
    lost = {}
    for mode in modes:
        counted = [r for r in runs.get(mode, []) if r.get("samples") is not None]
        total = sum(r["samples"] + r["lost"] for r in counted)
        lost[mode] = sum(r["lost"] for r in counted) / total if total else None
    # samples kept per sample due: the server's CPU-s during wrk's run x the frequency (cpu-clock sampling;
    # the server idles before and after): a check on the lost counts, which samply's mix with other records
    kept = {m: med([r["samples"] / (r["tcpu"] * REC_HZ) for r in runs.get(m, []) if r.get("samples") and r.get("tcpu")])
            for m in modes}
    rows.append(("11", "saturated HTTP, %d Hz: lost samples (samply: lost records, its context switch records "
                 "too); samples kept per sample due (target CPU-s x %d), %s" % (REC_HZ, REC_HZ, names),
                 "%s; %s; %s" % (each(lost, pct), each(kept, lambda v: fmt(v, "%.2f")),
                                 peer_verdict(lost, "%.4f", slack=0.005, goal_peers=modes[1:])),
                 "taskspy <= each peer + 0.5 points"))
    rows.append(("11", "saturated HTTP, %d Hz: loss of requests per target CPU-s vs no recording, %s"
                 % (REC_HZ, names), "%s; %s" % (each(cpu_loss, pct), peer_verdict(
                     cpu_loss, "%.3f", slack=noise or 0.0, goal_peers=modes[1:])),
                 "taskspy <= each peer + noise (%s)" % pct(noise)))
    cpu = {m: of(m, "cpu") for m in modes}
    per_k = {m: med([1e6 * r["cpu"] / r["samples"] for r in runs.get(m, []) if r.get("samples")]) for m in modes}
    rows.append(("11", "saturated HTTP, %d Hz: profiler CPU-s per run (CPU-us per sample), %s" % (REC_HZ, names),
                 "%s (%s); %s" % (each(cpu, lambda v: fmt(v, "%.2f")), each(per_k, lambda v: fmt(v, "%.0f")),
                                  peer_verdict(cpu, "%.2f CPU-s", goal_peers=own_cost_peer)),
                 "taskspy <= samply+syms"))
    rss = {m: None if of(m, "rss") is None else of(m, "rss") / 1024 for m in modes}
    rss_rec = {m: None if of(m, "rss_rec") is None else of(m, "rss_rec") / 1024 for m in modes}
    rows.append(("11", "saturated HTTP, %d Hz: profiler peak RSS MB (RSS as recording stops), %s" % (REC_HZ, names),
                 "%s (%s); %s" % (each(rss, lambda v: fmt(v, "%.0f")), each(rss_rec, lambda v: fmt(v, "%.0f")),
                                  peer_verdict(rss, "%.0f MB", goal_peers=own_cost_peer)),
                 "taskspy <= samply+syms"))
    stop = {m: of(m, "stop_s") for m in modes}
    verdict = holds(None if stop["taskspy"] is None else stop["taskspy"] < 1.0)
    quicker = [m for m in modes[1:] if None not in (stop[m], stop["taskspy"]) and stop[m] < stop["taskspy"]]
    if quicker:
        verdict += "; quicker: " + ", ".join("%s %.3f s" % (m, stop[m]) for m in quicker)
    rows.append(("11", "saturated HTTP, %d Hz: end of recording (SIGINT) -> output written, s, %s" % (REC_HZ, names),
                 "%s; %s" % (each(stop, lambda v: fmt(v, "%.3f")), verdict), "taskspy < 1 s"))
    size = {m: None if of(m, "out_bytes") is None else of(m, "out_bytes") / 1e6 for m in modes}
    rows.append(("11", "saturated HTTP, %d Hz: output MB, %s" % (REC_HZ, names), each(size, lambda v: fmt(v, "%.2f")),
                 "-"))
    details.append("11. samples per run (medians) %s: %s; lost/samples per run: %s; requests/s loss vs no recording "
                   "%s (medians of %d/%d kept pairs, requests/s / per CPU-s); unprofiled: %.0f requests/s (median of "
                   "%d runs), noise of requests per target CPU-s %s; wrk -t1 -c%d, %.0f s per run"
                   % (names, each({m: of(m, "samples") for m in modes}, lambda v: fmt(v, "%.0f")),
                      " | ".join("%s %s" % (m, " ".join("%s/%s" % (r.get("lost"), r.get("samples"))
                                                         for r in runs.get(m, []))) for m in modes),
                      each(rps_loss, pct), rps_n, cpu_n, med([v for k, v in seq if k == "U" and v]) or 0,
                      len(runs.get("U", [])), pct(noise), WRK_CONNECTIONS, HTTP))
    details.append("11. outputs: taskspy's folded stacks are unwound and symbolized (function, await point file:line, "
                   "inline frames); perf.data holds the raw stack copies (perf script unwinds and symbolizes later); "
                   "samply's profile.json.gz holds unwound stacks of addresses, symbolized when the profile is opened, "
                   "or (samply+syms) from the .syms.json that --unstable-presymbolicate writes beside it; samply "
                   "copies 32000 bytes of stack per sample, taskspy and perf 65528")
    details.append("11. taskspy's own cost (medians): %s CPU-s processing, %s CPU-s of it symbolizing after sampling "
                   "stopped (reading the server's symbols and DWARF: the time to the output written), %s MB peak "
                   "RSS, %s MB as recording stopped; samply+syms over samply: %s CPU-s, %s MB"
                   % (fmt(of("taskspy", "proc"), "%.3f"), fmt(of("taskspy", "symbolize"), "%.3f"),
                      fmt(rss.get("taskspy"), "%.0f"), fmt(rss_rec.get("taskspy"), "%.0f"),
                      fmt(None if None in (cpu.get("samply+syms"), cpu.get("samply")) else
                          cpu["samply+syms"] - cpu["samply"], "%.2f"),
                      fmt(None if None in (rss.get("samply+syms"), rss.get("samply")) else
                          rss["samply+syms"] - rss["samply"], "%.0f")))
    letters = {"U": "U", "taskspy": "T", "perf": "P", "samply": "S", "samply+syms": "Y"}
    details.append("11. per run requests/s and CPU-us per request, in run order: " +
                   " ".join("%s %s/%s" % (letters[m], fmt(v, "%.0f"), fmt(1e6 / c if c else None, "%.1f"))
                            for (m, v), (_, c) in zip(seq, per_cpu)))
    log("   done in %.0f s" % (time.monotonic() - t0))


def tool_versions():
    """The peers' versions: samply's and inferno's as cargo installed them into BENCH_TOOLS (its .crates.toml;
    inferno-flamegraph has no --version), perf's as it reports it, flamegraph.pl's as its Debian package's."""
    out = []
    try:
        with open(os.path.join(BENCH_TOOLS, ".crates.toml")) as f:
            installed = dict(re.findall(r'^"(samply|inferno) (\S+) ', f.read(), re.M))
    except OSError:
        installed = {}
    for name in ("samply", "inferno"):
        out.append("%s %s" % (name, installed.get(name, "not built")))
    out.append(subprocess.run(["perf", "--version"], capture_output=True, text=True).stdout.strip())
    if FLAMEGRAPH_PL:
        v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libdevel-nytprof-perl"], capture_output=True,
                           text=True).stdout.strip()
        out.append("flamegraph.pl of libdevel-nytprof-perl %s" % (v or "?"))
    return ", ".join(out)


# ---- 9. zero-probe attribution ---------------------------------------------------------------------
def bench_zero_probe():
    """Row 9 (issue 18). (a) What a poll costs the C executor (--fast-polls: polls of a few hundred ns), in
    the fixture's own CPU ns per poll (cpu / polls it prints at exit): with no marker (executor_notls),
    with the TLS store (executor, unprofiled: the store is all zero-probe attribution adds to a poll), and
    with the poll markers probed (taskspy --markers probes at 1 Hz: the uprobe traps and their BPF
    programs). (b) tokio_plain's throughput loss at 99 and 999 Hz (dwarf) under taskspy's zero-probe
    attribution (the default), its probe route (--markers probes: raw::poll uprobes) and perf record,
    each against the bracketing unprofiled runs."""
    log("9. zero-probe attribution: per-poll cost (executor), tokio throughput loss; %d pairs" % PAIRS)
    t = time.monotonic()
    folded = os.path.join(TMP, "zero.folded")
    data = os.path.join(TMP, "zero.data")
    per_poll = {}
    kinds = ("none", "tls", "usdt")
    for r in range(PAIRS):
        for kind in kinds[r % 3:] + kinds[:r % 3]:
            binary = "executor_notls" if kind == "none" else "executor"
            argv = [os.path.join(FIX, binary), "%.1f" % (RUN + 1.5), "--fast-polls"]
            prof = (lambda pid: [TASKSPY, "record", "-p", str(pid), "-F", "1", "--markers", "probes", "-o", folded]) \
                if kind == "usdt" else None
            _, out, _, _ = run_target(argv, prof)
            m = re.search(r"total: polls (\d+) .* cpu ([0-9.]+)", out)
            if m and int(m.group(1)) > 0:
                per_poll.setdefault(kind, []).append(float(m.group(2)) * 1e9 / int(m.group(1)))
    none, tls, usdt = (med(per_poll.get(k, [])) for k in kinds)
    rows.append(("9", "per-poll cost, executor --fast-polls: TLS store / USDT probe (ns per poll over none)",
                 "%s / %s" % (fmt(None if tls is None or none is None else tls - none, "%+.1f ns"),
                              fmt(None if usdt is None or none is None else usdt - none, "%+.0f ns")),
                 "store < 10 ns"))
    details.append("9. executor CPU ns per poll (median of %d runs each): no marker %s, TLS store %s, USDT probe "
                   "(uprobe + BPF, taskspy --markers probes -F 1) %s"
                   % (PAIRS, fmt(none, "%.1f"), fmt(tls, "%.1f"), fmt(usdt, "%.1f")))
    argv = [os.path.join(FIX, "tokio_plain"), "%.1f" % (RUN + 1.5)]
    seq, per_cpu, notes = [], [], {}

    def tokio_run(prof):
        """(units/s after the first second, units per CPU-second of the whole run)"""
        vals, out, perr, _ = run_target(argv, prof, r"units/s (\d+)")
        m = re.search(r"total: polls \d+ units (\d+) .* cpu ([0-9.]+)", out)
        return mean(vals), (int(m.group(1)) / float(m.group(2)) if m and float(m.group(2)) > 0 else None), perr

    profilers = {
        "zero-probe": lambda hz: lambda pid: [TASKSPY, "record", "-p", str(pid), "-F", str(hz), "-o", folded],
        "probes": lambda hz: lambda pid: [TASKSPY, "record", "-p", str(pid), "-F", str(hz), "--markers", "probes",
                                          "-o", folded],
        "perf": lambda hz: lambda pid: ["perf", "record", "-q", "-B", "-F", str(hz), "--call-graph", "dwarf,65528",
                                        "-p", str(pid), "-o", data],
    }
    names = list(profilers)
    for r in range(PAIRS):
        for hz in ((99, 999) if r % 2 == 0 else (999, 99)):
            wall, cpu, _ = tokio_run(None)
            seq.append(("U", wall))
            per_cpu.append(("U", cpu))
            for name in names[r % 3:] + names[:r % 3]:
                wall, cpu, perr = tokio_run(profilers[name](hz))
                seq.append(((name, hz), wall))
                per_cpu.append(((name, hz), cpu))
                if name != "perf" and "tasks:" in perr:
                    notes[(name, hz)] = next(l for l in perr.splitlines() if l.startswith("taskspy: tasks:"))[:140]
    wall, cpu, _ = tokio_run(None)
    seq.append(("U", wall))
    per_cpu.append(("U", cpu))
    pairs, cpu_pairs = bracketed(seq, PAIRS), bracketed(per_cpu, PAIRS)
    base = [v for k, v in seq if k == "U" and v]
    cpu_base = [v for k, v in per_cpu if k == "U" and v]
    pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")
    for hz in (99, 999):
        loss = {n: med([1 - x / b for x, b in pairs.get((n, hz), []) if x and b]) for n in names}
        cpu_loss = {n: med([1 - x / b for x, b in cpu_pairs.get((n, hz), []) if x and b]) for n in names}
        # the work per CPU-second of the target: what profiling costs it, whatever else runs on the host
        rows.append(("9", "tokio_plain loss of work per target CPU-s, %d Hz dwarf: zero-probe / probe route / perf"
                     % hz, "%s / %s / %s" % (pct(cpu_loss["zero-probe"]), pct(cpu_loss["probes"]),
                                             pct(cpu_loss["perf"])), "zero-probe <= probes"))
        details.append("9. %d Hz throughput (units/s) loss: zero-probe %s, probe route %s, perf %s" %
                       (hz, pct(loss["zero-probe"]), pct(loss["probes"]), pct(loss["perf"])))
        for n in ("zero-probe", "probes"):
            if (n, hz) in notes:
                details.append("9. %d Hz %s: %s" % (hz, n, notes[(n, hz)]))
    details.append("9. tokio_plain unprofiled: units/s median %.0f, units per CPU-s median %.0f (%d runs); loss = 1 - "
                   "profiled / mean of the two bracketing unprofiled runs, median over the pairs; the throughput "
                   "loss follows the host's load (other tenants), the per-CPU-s loss does not"
                   % (med(base) or 0, med(cpu_base) or 0, len(base)))
    for f in (folded, data):
        if os.path.exists(f):
            os.unlink(f)
    log("   done in %.0f s" % (time.monotonic() - t))


# ---- 10. the wait profile's cost -------------------------------------------------------------------------
WAIT_HZ = 99            # taskspy record's default frequency


TRACEFS = "/sys/kernel/tracing"
PROBE_GROUP = "taskspy_bench"


def wait_probe_locations():
    """Where `taskspy record --wait-output` probes hyper_server, as the kernel lists it while taskspy records:
    its uprobe_multi links' fdinfo (path and offsets) and its tracefs uprobe events (the registration stacks').
    Returns sorted [(path, file offset)], empty when the kernel shows none."""
    server, pid, _ = start_hyper(10)
    found = set()
    ts = subprocess.Popen([TASKSPY, "record", "-p", pid, "-d", "3", "-o", os.path.join(TMP, "where.folded"),
                           "--wait-output", os.path.join(TMP, "where.wait.folded"), "--wait-mode", "events"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.0)
    fdinfo = "/proc/%d/fdinfo" % ts.pid
    for fd in os.listdir(fdinfo) if os.path.isdir(fdinfo) else []:
        try:
            with open(os.path.join(fdinfo, fd)) as f:
                text = f.read()
        except OSError:
            continue
        path = re.search(r"^path:\s+(\S+)$", text, re.M)
        if re.search(r"^link_type:\s+uprobe_multi$", text, re.M) and path:
            for off in re.findall(r"^\d+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s*$", text, re.M):
                found.add((path.group(1), int(off, 16)))
    with open(os.path.join(TRACEFS, "uprobe_events")) as f:
        for line in f:
            e = re.match(r"p:taskspy_%d/\S+ (\S+):(0x[0-9a-f]+)$" % ts.pid, line.strip())
            if e:
                found.add((re.sub(r"^/proc/\d+/root", "", e.group(1)), int(e.group(2), 16)))
    ts.wait()
    server.terminate()
    server.communicate()
    return sorted(found)


def probe_events_edit(lines):
    """Each line written to tracefs's uprobe_events by a write of its own (the kernel parses one definition
    per write). Returns whether all were taken."""
    ok = True
    for line in lines:
        try:   # os.open: Python's append mode seeks to the end, which tracefs refuses
            fd = os.open(os.path.join(TRACEFS, "uprobe_events"), os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, (line + "\n").encode())
            finally:
                os.close(fd)
        except OSError:
            ok = False
    return ok


def remove_probe_events(names):
    """Remove tracefs uprobe events by name ("group/name")."""
    probe_events_edit(["-:%s" % n for n in names])


def define_probe_events(locations):
    """A tracefs uprobe event (no program, no fetch arguments) at each location, in PROBE_GROUP, after removing
    the group's events a killed run left. Returns the events' names ("group/name"), empty when the kernel
    refused."""
    with open(os.path.join(TRACEFS, "uprobe_events")) as f:
        remove_probe_events([line.split()[0][2:] for line in f if line.startswith("p:%s/" % PROBE_GROUP)])
    names = ["%s/p%d" % (PROBE_GROUP, i) for i in range(len(locations))]
    if not probe_events_edit(["p:%s %s:0x%x" % (n, path, off) for n, (path, off) in zip(names, locations)]):
        remove_probe_events(names)
        return []
    return names


def bench_wait():
    """Row 10 (issue 16, SPEC sections 3a and 7): hyper_server saturated by wrk as in row 8, recorded by taskspy
    with --wait-output (waker probes, poll return probes, registration stacks), by taskspy CPU-only (the
    same record without --wait-output) and not at all, in triples interleaved with unprofiled runs
    (U C W U W C U ...). Each mode's throughput loss against the two bracketing unprofiled runs, in
    requests/s and in requests per target CPU-s (the server's own CPU over wrk's run, which other load on
    the host does not move); --wait-output's extra over CPU-only is taken within each triple. Waker events
    and registration stacks per second of wrk's run come from the record summary's counts. A fourth mode in
    each round measures the floor any uprobe design pays: the locations --wait-output probes (as the kernel
    lists them while taskspy records) as plain tracefs uprobe events that perf stat counts, the kernel's own
    uprobe cost SPEC 7 measures marker overhead against. A fifth, the snapshot mode (issue 29: --wait-output
    --wait-mode snapshots, no probe; SPEC 7: within 1% of no recording in requests per target CPU-s), with
    its snapshots taken and missed and taskspy's CPU per snapshot and per task read. "wait" is the event
    mode (--wait-mode events)."""
    log("10. wait profile cost: hyper_server under wrk -c%d, %d rounds, %.0f s per run, %d Hz dwarf"
        % (WRK_CONNECTIONS, WAIT_TRIPLES, HTTP, WAIT_HZ))
    t = time.monotonic()
    locations = wait_probe_locations()
    events = define_probe_events(locations) if locations else []
    modes = ("cpu-only", "wait", "snapshots") + (("probes",) if events else ())
    try:
        runs, seq, per_cpu = interleaved_http([modes], WAIT_TRIPLES, lambda mode: http_run(
            {"U": "U", "probes": "probes"}.get(mode, "taskspy"), WAIT_HZ,
            wait={"wait": "events", "snapshots": "snapshots"}.get(mode, False), probe_events=events))
    finally:
        remove_probe_events(events)
    pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")

    def losses(sequence, mode="wait"):
        """({mode: median loss against the bracketing unprofiled runs}, median loss of mode against cpu-only
        in the same round, pairs kept)"""
        loss, kept = bracketed_losses(sequence, modes, WAIT_TRIPLES)
        extra, triple = [], {}
        for m, v in sequence:
            if m == "U":
                if triple.get(mode) and triple.get("cpu-only"):
                    extra.append(1 - triple[mode] / triple["cpu-only"])
                triple = {}
            else:
                triple[m] = v
        return loss, med(extra), kept

    rps_loss, rps_extra, rps_n = losses(seq)
    cpu_loss, cpu_extra, cpu_n = losses(per_cpu)
    _, snap_rps_extra, _ = losses(seq, "snapshots")
    _, snap_cpu_extra, _ = losses(per_cpu, "snapshots")
    rows.append(("10", "saturated HTTP, --wait-output (events): requests/s loss vs no recording (CPU-only; extra over it)",
                 "%s (%s; %s)" % (pct(rps_loss["wait"]), pct(rps_loss["cpu-only"]), pct(rps_extra)), "<= 10%"))
    rows.append(("10", "saturated HTTP, --wait-output (events): loss of requests per target CPU-s vs no recording "
                 "(CPU-only; extra over it)",
                 "%s (%s; %s)" % (pct(cpu_loss["wait"]), pct(cpu_loss["cpu-only"]), pct(cpu_extra)), "<= 10%"))
    rows.append(("10", "saturated HTTP, --wait-output (snapshots, 49 Hz): loss of requests per target CPU-s vs no "
                 "recording (extra over CPU-only; requests/s loss, extra)",
                 "%s (%s; %s, %s), %s" % (pct(cpu_loss["snapshots"]), pct(snap_cpu_extra), pct(rps_loss["snapshots"]),
                                          pct(snap_rps_extra),
                                          holds(None if snap_cpu_extra is None else snap_cpu_extra <= 0.01)),
                 "snapshots' own cost (extra over CPU-only) <= 1%"))
    ss = runs.get("snapshots", [])
    rows.append(("10", "saturated HTTP, --wait-output (snapshots): taskspy CPU per snapshot; per task read; "
                 "snapshots taken; missed (medians per run)",
                 "%s ms; %s us; %s; %s" % (fmt(med([r.get("snap_ms") for r in ss]), "%.2f"),
                                           fmt(med([r.get("snap_us") for r in ss]), "%.1f"),
                                           fmt(med([r.get("snapshots") for r in ss]), "%.0f"),
                                           fmt(med([r.get("missed") for r in ss]), "%.0f")), "-"))
    ws = runs.get("wait", [])
    rate = lambda key: med([r[key] / r["wrk_s"] for r in ws if r.get(key) is not None and r.get("wrk_s")])
    rows.append(("10", "saturated HTTP, --wait-output: waker events/s; registration stacks/s taken; skipped",
                 "%s; %s; %s" % (fmt(rate("events"), "%.0f"), fmt(rate("stacks"), "%.0f"), fmt(rate("skipped"), "%.0f")),
                 "-"))
    per_req = {m: med([1e6 * r["tcpu"] / r["requests"] for r in runs.get(m, []) if r.get("tcpu") and r.get("requests")])
               for m in ("U",) + modes}
    rps = {m: med([r.get("rps") for r in runs.get(m, [])]) for m in ("U",) + modes}
    details.append("10. requests/s (medians): none %s, CPU-only %s, --wait-output events %s, snapshots %s; target "
                   "CPU-us per request: none %s, CPU-only %s, events %s, snapshots %s (%d runs of none, %d rounds, "
                   "wrk -t1 -c%d for %.0f s; losses are medians of %d/%d kept pairs, requests/s / per CPU-s)"
                   % (fmt(rps["U"], "%.0f"), fmt(rps["cpu-only"], "%.0f"), fmt(rps["wait"], "%.0f"),
                      fmt(rps["snapshots"], "%.0f"), fmt(per_req["U"], "%.1f"), fmt(per_req["cpu-only"], "%.1f"),
                      fmt(per_req["wait"], "%.1f"), fmt(per_req["snapshots"], "%.1f"),
                      len(runs.get("U", [])), WAIT_TRIPLES, WRK_CONNECTIONS, HTTP, rps_n, cpu_n))
    details.append("10. snapshots per run (medians): %s taken, %s missed, %s failed, %s tasks seen, %s task readings; "
                   "taskspy %s CPU-s per run (CPU-only %s, rusage), %s ms per snapshot, %s us per task read"
                   % (tuple(fmt(med([r.get(k) for r in ss]), f) for k, f in (
                       ("snapshots", "%.0f"), ("missed", "%.0f"), ("failed", "%.0f"), ("snap_tasks", "%.0f"),
                       ("readings", "%.0f"), ("cpu", "%.2f"))) +
                      (fmt(med([r.get("cpu") for r in runs.get("cpu-only", [])]), "%.2f"),
                       fmt(med([r.get("snap_ms") for r in ss]), "%.2f"), fmt(med([r.get("snap_us") for r in ss]), "%.1f"))))
    details.append("10. --wait-output per second of wrk's run (medians): %s registrations, %s wakes, %s stacks taken, "
                   "%s skipped by the budget, %s lost; taskspy processing %s CPU-s per run (CPU-only %s)"
                   % (fmt(rate("registrations"), "%.0f"), fmt(rate("wakes"), "%.0f"), fmt(rate("stacks"), "%.0f"),
                      fmt(rate("skipped"), "%.0f"), fmt(rate("stacks_lost"), "%.1f"),
                      fmt(med([r.get("proc") for r in ws]), "%.3f"),
                      fmt(med([r.get("proc") for r in runs.get("cpu-only", [])]), "%.3f")))
    # What one probe hit costs the target: --wait-output's extra target CPU per request over CPU-only, over the
    # probe hits per request (poll entries, registrations and wakes, the summary's counts over the server's own
    # request count: both cover the whole recording, wrk's run being all of its load)
    hits = med([(r["polls"] + r["events"]) / r["served"] for r in ws
                if r.get("polls") is not None and r.get("events") is not None and r.get("served")])
    per_hit = (per_req["wait"] - per_req["cpu-only"]) / hits \
        if hits and per_req["wait"] is not None and per_req["cpu-only"] is not None else None
    details.append("10. probe hits per request (poll entries, registrations, wakes; medians): %s; target CPU-us per "
                   "hit: %s (--wait-output's extra CPU-us per request over CPU-only, %s, divided by the hits)"
                   % (fmt(hits, "%.2f"), fmt(per_hit, "%.2f"),
                      fmt(None if per_req["wait"] is None or per_req["cpu-only"] is None
                          else per_req["wait"] - per_req["cpu-only"], "%.1f")))
    if events:
        k_hits = med([r["hits"] / r["served"] for r in runs.get("probes", []) if r.get("hits") and r.get("served")])
        k_extra = per_req["probes"] - per_req["U"] if None not in (per_req["probes"], per_req["U"]) else None
        k_loss, w_loss = cpu_loss.get("probes"), cpu_loss.get("wait")
        k_ratio = w_loss / k_loss if None not in (k_loss, w_loss) and k_loss > 0 else None
        rows.append(("10", "saturated HTTP, the same probes counted by perf stat (the kernel's own uprobe cost, no "
                     "program, no sampling): loss of requests per target CPU-s vs no recording (requests/s); "
                     "--wait-output events' loss / this one",
                     "%s (%s); %s, %s" % (pct(cpu_loss["probes"]), pct(rps_loss["probes"]), fmt(k_ratio, "%.2fx"),
                                          holds(None if k_ratio is None else k_ratio <= 1.2)),
                     "events <= 1.2x the kernel's counting"))
        details.append("10. the kernel's own cost: the %d locations --wait-output probes, as the kernel lists them "
                       "while taskspy records (%s), as tracefs uprobe events counted by perf stat -p: %s hits per "
                       "request, target CPU-us per request %s (%s over none, %s per hit)"
                       % (len(locations), ", ".join("%s:0x%x" % (os.path.basename(p), o) for p, o in locations),
                          fmt(k_hits, "%.2f"), fmt(per_req["probes"], "%.1f"), fmt(k_extra, "%.1f"),
                          fmt(k_extra / k_hits if k_extra is not None and k_hits else None, "%.2f")))
    else:
        details.append("10. the kernel's own cost of the probes: not measured (no probe location found while taskspy "
                       "recorded, or tracefs refused the events)")
    details.append("10. per run requests/s and CPU-us per request, in run order: " +
                   " ".join("%s %s/%s" % ({"U": "U", "cpu-only": "C", "wait": "W", "probes": "K", "snapshots": "S"}[m],
                                          fmt(v, "%.0f"),
                                          fmt(1e6 / c if c else None, "%.1f"))
                            for (m, v), (_, c) in zip(seq, per_cpu)))
    log("   done in %.0f s" % (time.monotonic() - t))


def bench_task_dump():
    """Row 12 (issue 28, SPEC 7): `taskspy tasks` reads 10,000 tasks (the tokio fixture's --parked mode with
    9,942 sleepers) in under 0.1 CPU-s; dumping the saturated HTTP server at 10 Hz costs it under 1% of its
    requests per CPU-second (interleaved rounds, medians)."""
    fixture = os.path.join(FIX, "tokio_current")
    proc = subprocess.Popen([fixture, "--parked", "600", "--sleepers", "9942"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    first = proc.stdout.readline()
    m = re.match(r"tokio_fixture parked pid (\d+) tasks (\d+)", first)
    runs = []
    try:
        if not m:
            raise RuntimeError("tokio_current --parked did not start: %r" % first)
        for _ in range(DUMP_RUNS):
            out = os.path.join(TMP, "dump.txt")
            runs.append(timed_run([TASKSPY, "tasks", "-p", m.group(1)], out))
        with open(out) as f:
            read = re.match(r".*: (\d+) tasks read", f.readline())
    finally:
        proc.kill()
        proc.wait()
    cpu = med([r[1] for r in runs])
    ok = cpu is not None and cpu < 0.1
    rows.append(("12", "taskspy tasks: CPU per dump of %s tasks (whole command)" % (read.group(1) if read else "?"),
                 "%.3f CPU-s, %s" % (cpu, holds(ok)), "< 0.1 CPU-s"))
    details.append("12. taskspy tasks on %s tasks: CPU %s s, wall %s s, peak RSS %s KB (medians of %d runs)" % (
        read.group(1) if read else "?", fmt(cpu, "%.3f"), fmt(med([r[0] for r in runs]), "%.3f"),
        fmt(med([r[2] for r in runs]), "%.0f"), len(runs)))
    runs_by_mode, _, per_cpu = interleaved_http([["D"]], DUMP_ROUNDS,
                                                lambda mode: http_run("U", 0, dump_hz=10 if mode == "D" else 0))
    loss, pairs = bracketed_losses(per_cpu, ["D"], DUMP_ROUNDS)
    noise = unprofiled_noise(per_cpu)
    dumped = [r for r in runs_by_mode.get("D", []) if r]
    dps = med([r["dumps"] / HTTP for r in dumped if r.get("dumps") is not None])
    ok = loss["D"] is not None and loss["D"] < 0.01
    rows.append(("12", "dumped at 10 Hz: requests per target CPU-s lost", "%s%% (noise %s%%), %s" % (
        fmt(100 * loss["D"] if loss["D"] is not None else None, "%.1f"),
        fmt(100 * noise if noise is not None else None, "%.1f"), holds(ok)), "< 1%"))
    details.append("12. hyper_server under wrk, dumped at 10 Hz: %s dumps/s, taskspy %s CPU-s per dump; requests "
                   "per target CPU-s lost %s (median of %d bracketed pairs, unprofiled noise %s)" % (
                       fmt(dps, "%.1f"), fmt(med([r["dump_cpu"] / r["dumps"] for r in dumped if r.get("dumps")]),
                                              "%.3f"),
                       fmt(loss["D"], "%.4f"), pairs, fmt(noise, "%.4f")))


TOP_STACK = 8192           # taskspy top's user stack copy per sample (cli/top_cmd.c TOP_STACK_BYTES)


def memory_kb(pid):
    """(RSS, anonymous) of process pid in KB (/proc/PID/smaps_rollup: its resident pages, and of them those not
    backed by a file: the heap; the rest are pages of the files it maps, the program's debug info, which come and
    go with the page cache), or None when it is gone."""
    try:
        with open("/proc/%s/smaps_rollup" % pid) as f:
            fields = dict((l.split(":")[0], int(l.split()[1])) for l in f if l.split(":")[0] in ("Rss", "Anonymous"))
        return fields["Rss"], fields["Anonymous"]
    except (OSError, KeyError, ValueError, IndexError):
        return None


def top_memory_view():
    """taskspy top (batch, JSON frames to a file) on hyper_server under wrk with a new connection per request for
    TOP_VIEW s: its memory every 2 s. Returns ([(s, RSS KB, anonymous KB)], the last frame's spawned count, its exit
    status)."""
    server, pid, port = start_hyper(TOP_VIEW + 30)
    frames = os.path.join(TMP, "top-view.json")
    with open(frames, "w") as out:
        top = subprocess.Popen([TASKSPY, "top", "-p", pid, "-b", "--json", "-n", "%d" % (TOP_VIEW + 5)], stdout=out,
                               stderr=subprocess.DEVNULL)
    time.sleep(HTTP_SETTLE)
    wrk = subprocess.Popen(["wrk", "-t1", "-c%d" % WRK_CONNECTIONS, "-d%.0fs" % TOP_VIEW, "-H", "Connection: close",
                            "http://127.0.0.1:%s/" % port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0, samples = time.monotonic(), []
    while wrk.poll() is None:
        kb = memory_kb(top.pid)
        if kb:
            samples.append((time.monotonic() - t0,) + kb)
        time.sleep(2)
    top.send_signal(signal.SIGINT)
    code = top.wait()
    server.terminate()
    server.communicate()
    spawned = None
    with open(frames) as f:
        lines = f.read().splitlines()
    if lines:
        with contextlib.suppress(ValueError, KeyError):
            spawned = json.loads(lines[-1])["spawned"]
    return samples, spawned, code


def bench_top():
    """Row 13 (issue 39, SPEC 7): taskspy top at its defaults (99 Hz, 10 task snapshots a second, a frame a second
    printed as JSON) against CPU-only sampling with the same settings (taskspy record -F 99 --call-graph dwarf
    --stack-size 8192: what top samples with), both on row 8's saturated hyper_server, in rounds interleaved with
    unprofiled runs (U C T U T C U ...): each mode's loss in requests per target CPU-s against the bracketing
    unprofiled runs, and top's loss against CPU-only in the same round (the contract: <= 1%). Then top's memory: its
    RSS every 2 s over a view of TOP_VIEW s (10 minutes) of the server under wrk with a new connection per request (a
    task per connection: tasks come and go all the time); after the first TOP_WARM s (the DWARF and symbols each new
    code path needs are read once: the heap grows in steps then, as massif showed), the least-squares slope of its
    anonymous memory (the heap; its RSS also counts the program's debug info it maps, page cache), extrapolated to a
    10-minute view (flat: < 1 MB in 10 minutes)."""
    log("13. taskspy top: hyper_server under wrk -c%d, %d rounds, %.0f s per run; memory over a %.0f s view"
        % (WRK_CONNECTIONS, TOP_ROUNDS, HTTP, TOP_VIEW))
    t = time.monotonic()
    modes = ("cpu-only", "top")
    runs, seq, per_cpu = interleaved_http([modes], TOP_ROUNDS, lambda mode: http_run(
        {"U": "U", "top": "top"}.get(mode, "taskspy"), 99, stack_size=TOP_STACK))
    loss, kept = bracketed_losses(per_cpu, modes, TOP_ROUNDS)
    extra, block = [], {}
    for m, v in per_cpu + [("U", None)]:
        if m == "U":
            if block.get("top") and block.get("cpu-only"):
                extra.append(1 - block["top"] / block["cpu-only"])
            block = {}
        else:
            block[m] = v
    top_extra, noise = med(extra), unprofiled_noise(per_cpu)
    # the median's standard error (1.2533 sd / sqrt(n) for a roughly normal spread): what one run can tell apart
    spread = statistics.stdev(extra) * 1.2533 / len(extra) ** 0.5 if len(extra) >= 3 else None
    pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")
    rows.append(("13", "taskspy top (defaults) vs CPU-only sampling: requests per target CPU-s lost",
                 "%s (unprofiled noise %s), %s" % (pct(top_extra), pct(noise),
                                                   holds(None if top_extra is None else top_extra <= 0.01)), "<= 1%"))
    tops = [r for r in runs.get("top", []) if r]
    details.append("13. hyper_server under wrk, requests per target CPU-s lost against the bracketing unprofiled runs: "
                   "CPU-only %s, top %s (%d pairs); top over CPU-only in the same round: %s (median of %d: %s); "
                   "top's own CPU %s s and peak RSS %s KB per %.0f s run (medians)" % (
                       pct(loss["cpu-only"]), pct(loss["top"]), kept, pct(top_extra), len(extra),
                       " ".join(pct(x) for x in extra) + "; mean %s, the median's standard error %s points" % (
                           pct(statistics.mean(extra) if extra else None),
                           fmt(None if spread is None else 100 * spread, "%.1f")),
                       fmt(med([r.get("cpu") for r in tops]), "%.2f"),
                       fmt(med([r.get("rss") for r in tops]), "%.0f"), HTTP + HTTP_SETTLE))
    details.append("13. per run requests per target CPU-s, in run order: " +
                   " ".join("%s %s" % ({"U": "U", "cpu-only": "C", "top": "T"}[m], fmt(v, "%.0f")) for m, v in per_cpu))
    samples, spawned, code = top_memory_view()
    late = [(s, anon) for s, _, anon in samples if s >= TOP_WARM]
    slope = None
    if len(late) >= 3:
        mx, my = statistics.mean(s for s, _ in late), statistics.mean(kb for _, kb in late)
        den = sum((s - mx) ** 2 for s, _ in late)
        slope = sum((s - mx) * (kb - my) for s, kb in late) / den if den else None
    growth = None if slope is None else slope * 600
    rows.append(("13", "taskspy top: heap growth over a 10-minute view (the slope after %.0f s of a %.0f s view)"
                 % (TOP_WARM, TOP_VIEW),
                 "%s KB%s, %s" % (fmt(growth, "%+.0f"), "" if code in (0, None) else " (top exited %s)" % code,
                                  holds(None if growth is None else growth < 1024)), "flat (< 1 MB / 10 min)"))
    at = lambda t, k: fmt(next((x[k] for x in samples if x[0] >= t), None), "%d")
    details.append("13. top's memory over a %.0f s view of hyper_server under wrk -H 'Connection: close' (%s tasks "
                   "spawned in the view): anonymous (heap) %s KB at 10 s, %s KB at %.0f s, %s KB at the end; slope after "
                   "%.0f s %s KB/min (least squares over %d samples every 2 s), %s KB over 10 minutes; RSS (the heap and "
                   "the pages of the files it maps: the program's debug info, page cache that comes and goes) %s KB at "
                   "10 s, %s KB at the end, max %s KB; every 60 s, anonymous/RSS: %s" % (
                       TOP_VIEW, fmt(spawned, "%d"), at(10, 2), at(TOP_WARM, 2), TOP_WARM,
                       fmt(samples[-1][2] if samples else None, "%d"), TOP_WARM,
                       fmt(None if slope is None else slope * 60, "%+.1f"), len(late), fmt(growth, "%+.0f"),
                       at(10, 1), fmt(samples[-1][1] if samples else None, "%d"),
                       fmt(max(x[1] for x in samples) if samples else None, "%d"),
                       " ".join("%d/%d" % (x[2], x[1]) for x in samples[::30])))
    log("   done in %.0f s" % (time.monotonic() - t))


def main():
    steps = [("1,2", bench_slowdown_and_markers), ("3", bench_postprocessing), ("4", bench_rendering),
             ("5", bench_memory), ("6", bench_browser_zoom), ("7", bench_many_symbols), ("8", bench_http),
             ("9", bench_zero_probe), ("10", bench_wait), ("11", bench_recording_peers), ("12", bench_task_dump),
             ("13", bench_top)]
    only = os.environ.get("BENCH_ONLY")
    try:
        for step_rows, step in steps:
            if only and not set(only.split(",")) & set(step_rows.split(",")):
                continue
            step()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    lines = ["## %s" % time.strftime("%Y-%m-%d %H:%M %Z"), "",
             "machine: nproc %s, kernel %s, clock event %s; commit %s%s; pairs %d, %.0f s per throughput run, "
             "memory runs %.0f s / %.0f s; total %.0f s%s" % (os.cpu_count(), os.uname().release, clock_event,
                                                              commit, " (+local changes)" if dirty else "", PAIRS,
                                                              RUN, SHORT, LONG, time.monotonic() - T0,
                                                              "; rows %s only" % only if only else ""), "",
             "peers: %s" % tool_versions(), "",
             "| # | benchmark | ratio | contract |", "|---|---|---|---|"]
    lines += ["| %s | %s | %s | %s |" % r for r in rows]
    lines += ["", "```"] + details + ["```", ""]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
