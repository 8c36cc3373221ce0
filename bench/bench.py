#!/usr/bin/env python3
"""bench.py: taskspy's benchmarks (SPEC section 7), run by `make bench` through bench/run.sh.

usage: bench.py TASKSPY FIXTURES_DIR REPO_DIR OUT_MARKDOWN

Every ratio is measured in this run against a baseline run interleaved with it: U X U X ... U, each X
compared with the mean of the two baseline runs that bracket it (which cancels a linear drift of this
noisy VM), the median over BENCH_PAIRS (>= 5) pairs. The profilers attach by PID to a fixture that is
already running (both the same way), and a run's throughput is the mean of the fixture's per-second
figures after its first second. Environment (defaults in brackets):
  BENCH_PAIRS [5]   pairs per ratio            BENCH_RUN [3]   seconds measured per throughput run
  BENCH_LONG [60]   long memory run, seconds   BENCH_SHORT [10] short memory run, seconds
  BENCH_PP [10]     post-processing run, s     BENCH_PP_HZ [5000] its frequency
  BENCH_PP_RUNS [3] post-processing runs       BENCH_STACKS [1000,10000,100000] rendering sizes
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TASKSPY, FIX, REPO, OUT = sys.argv[1:5]
PAIRS = max(5, int(os.environ.get("BENCH_PAIRS", "5")))
RUN = float(os.environ.get("BENCH_RUN", "3"))
LONG = float(os.environ.get("BENCH_LONG", "60"))
SHORT = float(os.environ.get("BENCH_SHORT", "10"))
PP = float(os.environ.get("BENCH_PP", "10"))
PP_HZ = int(os.environ.get("BENCH_PP_HZ", "5000"))
PP_RUNS = int(os.environ.get("BENCH_PP_RUNS", "3"))
STACKS = [int(x) for x in os.environ.get("BENCH_STACKS", "1000,10000,100000").split(",")]
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
    {key: [(x, baseline)]} where baseline is the mean of the U runs before and after x."""
    out = {}
    last_u, pending = None, []
    for key, v in seq_runs:
        if key == "U":
            for k, x in pending:
                b = v if last_u is None else (last_u + v) / 2
                out.setdefault(k, []).append((x, b))
            pending, last_u = [], v
        else:
            pending.append((key, v))
    return out


def mean(xs):
    return sum(xs) / len(xs) if xs else None


# ---- 1. target slowdown from sampling ------------------------------------------------------------------
def bench_slowdown():
    log("1. sampling slowdown: shares fixture, %d pairs, %.0f s measured per run" % (PAIRS, RUN))
    data = os.path.join(TMP, "perf.data")
    folded = os.path.join(TMP, "slow.folded")
    for mode, binary in (("dwarf", "shares_nofp"), ("fp", "shares_fp")):
        argv = [os.path.join(FIX, binary), "%.1f" % (RUN + 1.5)]
        perf_cg = ["--call-graph", "dwarf,65528"] if mode == "dwarf" else ["--call-graph", "fp"]

        def prof(kind, hz):
            if kind == "taskspy":
                return lambda pid: [TASKSPY, "record", "-p", str(pid), "-F", str(hz), "--call-graph", mode,
                                    "-o", folded]
            return lambda pid: ["perf", "record", "-q", "-B", "-F", str(hz)] + perf_cg + \
                ["-p", str(pid), "-o", data]

        seq = []
        configs = [(k, hz) for hz in (99, 999) for k in ("taskspy", "perf")]
        for r in range(PAIRS + 1):
            seq.append(("U", mean(run_target(argv, None, r"units/s (\d+)")[0])))
            if r == PAIRS:
                break
            order = configs if r % 2 == 0 else [c for hz in (999, 99) for c in (("perf", hz), ("taskspy", hz))]
            for kind, hz in order:
                vals, _, perr, _ = run_target(argv, prof(kind, hz), r"units/s (\d+)")
                if kind == "taskspy":
                    summary_line(perr)
                seq.append(((kind, hz), mean(vals)))
        pairs = bracketed(seq, PAIRS)
        base = [v for k, v in seq if k == "U" and v]
        for hz in (99, 999):
            loss = {}
            for kind in ("taskspy", "perf"):
                loss[kind] = med([1 - x / b for x, b in pairs.get((kind, hz), []) if x and b])
            tl, pl = loss["taskspy"], loss["perf"]
            ratio = tl / pl if tl is not None and pl and pl > 0.005 else None
            rows.append(("1", "target slowdown, %d Hz %s: taskspy loss / perf loss" % (hz, mode),
                         fmt(ratio) if ratio is not None else "n/a (perf loss %s)" % fmt(pl, "%.3f"),
                         "<= 1.0"))
            pct = lambda x: fmt(None if x is None else 100 * x, "%.1f%%")
            details.append("1. %-5s %3d Hz: loss taskspy %s, perf %s (median of %d pairs; loss = 1 - units/s "
                           "profiled / mean of the bracketing unprofiled runs)"
                           % (mode, hz, pct(tl), pct(pl), len(pairs.get(("taskspy", hz), []))))
        details.append("1. %-5s unprofiled %s units/s: median %.0f, min %.0f, max %.0f (%d runs)"
                       % (mode, binary, med(base), min(base), max(base), len(base)))
        log("   %s done" % mode)
    if os.path.exists(data):
        os.unlink(data)


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


def bench_markers():
    """Both profilers launch the fixture (their uprobes are in place before it starts: attaching
    system-wide uprobes to a running process takes seconds here). Each run gets a fresh copy of the
    fixture binary: closing uprobe events costs the kernel a grace period per probe (10-20 s for the
    tokio fixture's 72 notes), and uprobes are per inode, so the profiler's teardown can go on in the
    background (it is idle waiting) while the next run, on another inode, is measured."""
    log("2. marker cost: executor and tokio_markers, %d pairs" % PAIRS)
    if not TRACEFS:
        rows.append(("2", "marker cost", "n/a (no tracefs uprobe_events)", "<= 1.2"))
        return
    kernel_probes_del_stale()
    dur = "%.1f" % (RUN + 1.5)
    fixtures = [
        ("executor", r"work units per second: (\d+)", r"^semaphores:", 2),
        ("tokio_markers", r"polls/s (\d+)", r"^units by kind", 2),
    ]
    pending = []        # (profiler process, tracefs probes to delete once it has exited)
    counter = [0]       # run number: directory and probe names
    for name, metric, last_line, workers in fixtures:
        src = os.path.join(FIX, name)
        if not os.path.exists(src):
            rows.append(("2", "marker cost, %s" % name, "n/a (fixture missing)", "<= 1.2"))
            continue
        seq, polls_seen, kcount = [], [], []

        def one(kind):
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
                    return None
                argv = ["perf", "stat", "-x,", "-o", stat_out, "-e", "%s:r%d_*" % (PROBE_GROUP, counter[0]),
                        "--", binary, dur]
            out_f = open(out_path, "w")
            err_f = open(os.path.join(d, "err.txt"), "w")
            proc = subprocess.Popen(argv, stdout=out_f, stderr=err_f)
            out_f.close()
            err_f.close()
            deadline = time.monotonic() + float(dur) + 60
            out = ""
            while time.monotonic() < deadline:     # the fixture's last line: it has exited (or is exiting)
                with open(out_path) as f:
                    out = f.read()
                if re.search(last_line, out, re.M) or proc.poll() is not None:
                    break
                time.sleep(0.02)
            if kind == "U":
                proc.wait()
            else:
                pending.append((proc, probes))
            if os.environ.get("BENCH_VERBOSE"):
                log("   %s %s" % (name, kind))
            vals = [float(v) for v in re.findall(metric, out)][1:]
            rate = mean(vals)
            if rate and "units" in metric:     # executor: polls/s = units/s * polls/unit of the run
                m = re.search(r"total: polls (\d+) work units (\d+)", out)
                rate = rate * int(m.group(1)) / int(m.group(2)) if m and int(m.group(2)) else None
            if kind == "taskspy":
                time.sleep(0.2)                 # its summary follows the target's exit
                with open(os.path.join(d, "err.txt")) as f:
                    perr = f.read()
                summary_line(perr)
                m = re.search(r"taskspy: (\d+) polls", perr)
                polls_seen.append(int(m.group(1)) if m else None)
            if kind == "kernel":
                proc.wait(timeout=60)           # perf stat writes its counts at exit
                with open(stat_out) as f:
                    kcount.append(sum(int(l.split(",")[0]) for l in f
                                      if "poll__start" in l and l.split(",")[0].isdigit()))
            return rate

        for r in range(PAIRS + 1):
            seq.append(("U", one("U")))
            if r == PAIRS:
                break
            for kind in (("taskspy", "kernel") if r % 2 == 0 else ("kernel", "taskspy")):
                seq.append((kind, one(kind)))
        pairs = bracketed(seq, PAIRS)
        ns = {}
        for kind in ("taskspy", "kernel"):
            # thread-time per poll: `workers` busy threads / polls per second
            ns[kind] = med([workers * 1e9 * (1 / x - 1 / b) for x, b in pairs.get(kind, []) if x and b])
        ratio = ns["taskspy"] / ns["kernel"] if ns["taskspy"] is not None and ns["kernel"] and ns["kernel"] > 0 else None
        rows.append(("2", "marker cost, %s: taskspy ns/poll / kernel uprobe ns/poll" % name,
                     fmt(ratio) if ratio is not None else "n/a (kernel %s ns)" % fmt(ns["kernel"], "%.0f"),
                     "<= 1.2"))
        base = [v for k, v in seq if k == "U" and v]
        details.append("2. %s: unprofiled %.0f polls/s (min %.0f, max %.0f) = %.0f ns/poll per worker "
                       "(%d workers); extra ns/poll: taskspy %s, perf stat %s; per run: polls decoded by "
                       "taskspy %s, poll starts counted by perf stat %s (medians)"
                       % (name, med(base), min(base), max(base), workers * 1e9 / med(base), workers,
                          fmt(ns["taskspy"], "%.0f"), fmt(ns["kernel"], "%.0f"),
                          fmt(med(polls_seen), "%.0f"), fmt(med(kcount), "%.0f")))
        log("   %s done" % name)
    t = time.monotonic()
    for proc, probes in pending:                # uprobe teardown of the last runs
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        kernel_probes_del(probes)
    log("   profilers' uprobe teardown: waited %.1f s more" % (time.monotonic() - t))


# ---- 3. post-processing --------------------------------------------------------------------------------
def pp_run(hz, secs, extra=()):
    """Launch shares_nofp for secs, attach taskspy at hz (dwarf); returns (samples, lost, taskspy CPU s,
    target exit -> taskspy exit s, peak RSS KB, wall s of recording)."""
    folded = os.path.join(TMP, "pp-%d-%d.folded" % (hz, os.getpid()))
    fx = subprocess.Popen([os.path.join(FIX, "shares_nofp"), "%.1f" % secs], stdout=subprocess.DEVNULL)
    time.sleep(ATTACH_DELAY)
    t_start = time.monotonic()
    ts = subprocess.Popen([TASKSPY, "record", "-p", str(fx.pid), "-F", str(hz), "--call-graph", "dwarf",
                           "-o", folded] + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    fx.wait()
    t_exit = time.monotonic()
    err = ts.stderr.read()
    _, _, ru = os.wait4(ts.pid, 0)
    t_done = time.monotonic()
    s = summary_line(err) or (0, 0)
    return s[0], s[1], ru.ru_utime + ru.ru_stime, t_done - t_exit, ru.ru_maxrss, t_exit - t_start


def bench_postprocessing():
    log("3. post-processing: %d runs of %.0f s at %d Hz, dwarf" % (PP_RUNS, PP, PP_HZ))
    res = [pp_run(PP_HZ, PP) for _ in range(PP_RUNS)]
    rate = med([s / c for s, _, c, _, _, _ in res if c > 0])
    incoming = med([s / w for s, _, _, _, _, w in res if w > 0])
    lat = med([r[3] for r in res])
    samples = med([r[0] for r in res])
    rows.append(("3", "post-processing: samples per taskspy CPU-s / samples recorded per s",
                 fmt(rate / incoming if rate and incoming else None, "%.1f"), ">= 1 (keeps up)"))
    rows.append(("3", "post-processing: target exit -> output written, %.0f samples (s)" % samples,
                 fmt(lat, "%.3f"), "< 1 s @ 100k"))
    details.append("3. %d Hz dwarf, %.0f s: samples %s, lost %s, taskspy CPU %s s -> %.0f samples/CPU-s; "
                   "recorded %.0f samples/s; exit->done %s s"
                   % (PP_HZ, PP, "/".join(str(r[0]) for r in res), "/".join(str(r[1]) for r in res),
                      "/".join("%.2f" % r[2] for r in res), rate or 0, incoming or 0,
                      "/".join("%.3f" % r[3] for r in res)))


# ---- 4. rendering --------------------------------------------------------------------------------------
def bench_rendering():
    log("4. rendering: %s stacks, flamegraph.pl %s" % (STACKS, FLAMEGRAPH_PL or "not found"))
    gen = os.path.join(REPO, "tests", "tools", "gen_folded.py")
    for n in STACKS:
        f = os.path.join(TMP, "gen-%d.folded" % n)
        subprocess.run([sys.executable, gen, str(n), "--seed", "7", "-o", f], check=True)
        svg_t, svg_p = os.path.join(TMP, "t.svg"), os.path.join(TMP, "p.svg")

        def t_taskspy():
            t = time.monotonic()
            subprocess.run([TASKSPY, "flamegraph", f, "-o", svg_t], check=True, stderr=subprocess.DEVNULL)
            return time.monotonic() - t

        def t_pl():
            t = time.monotonic()
            with open(svg_p, "w") as o:
                subprocess.run(["perl", FLAMEGRAPH_PL, f], stdout=o, stderr=subprocess.DEVNULL, check=True)
            return time.monotonic() - t

        ts, ps = [], []
        for r in range(PAIRS):
            if FLAMEGRAPH_PL and r % 2:
                ps.append(t_pl())
            ts.append(t_taskspy())
            if FLAMEGRAPH_PL and not r % 2:
                ps.append(t_pl())
        if FLAMEGRAPH_PL:
            speed = med([p / t for p, t in zip(ps, ts)])
            rows.append(("4", "render %d stacks: flamegraph.pl time / taskspy flamegraph time" % n,
                         fmt(speed, "%.1f"), ">= 20 @ 100k"))
        else:
            rows.append(("4", "render %d stacks: taskspy flamegraph (s)" % n, fmt(med(ts), "%.3f"),
                         "flamegraph.pl missing"))
        details.append("4. %6d stacks: taskspy %.3f s (%d KB svg), flamegraph.pl %s s (%s KB svg)"
                       % (n, med(ts), os.path.getsize(svg_t) // 1024, fmt(med(ps), "%.3f"),
                          os.path.getsize(svg_p) // 1024 if ps else "-"))


# ---- 5. memory -----------------------------------------------------------------------------------------
def bench_memory():
    log("5. memory: taskspy record at 999 Hz for %.0f s and %.0f s, side by side" % (SHORT, LONG))
    import threading
    res = {}

    def go(secs):
        res[secs] = pp_run(999, secs)

    th = [threading.Thread(target=go, args=(s,)) for s in (SHORT, LONG)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    s, l = res[SHORT], res[LONG]
    rows.append(("5", "memory: peak RSS %.0f s / %.0f s at 999 Hz" % (LONG, SHORT),
                 fmt(l[4] / s[4] if s[4] else None), "~1.0 (no growth)"))
    details.append("5. peak RSS %.0f s: %d KB (%d samples), %.0f s: %d KB (%d samples); exit->done of the "
                   "%.0f s run: %.3f s" % (SHORT, s[4], s[0], LONG, l[4], l[0], LONG, l[3]))


def main():
    steps = [bench_slowdown, bench_markers, bench_postprocessing, bench_rendering, bench_memory]
    only = os.environ.get("BENCH_ONLY")
    try:
        for i, step in enumerate(steps, 1):
            if only and str(i) not in only.split(","):
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
             "memory runs %.0f s / %.0f s; total %.0f s" % (os.cpu_count(), os.uname().release, clock_event,
                                                            commit, " (+local changes)" if dirty else "", PAIRS,
                                                            RUN, SHORT, LONG, time.monotonic() - T0), "",
             "| # | benchmark | ratio | contract |", "|---|---|---|---|"]
    lines += ["| %s | %s | %s | %s |" % r for r in rows]
    lines += ["", "```"] + details + ["```", ""]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
