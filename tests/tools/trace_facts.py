#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""trace_facts.py: reads a taskspy Chrome trace (.trace.json) with Python's json module and prints what the
end-to-end tests check, one "NAME VALUE" line each:

  json 1                   the file parses, traceEvents is a list and stackFrames an object (else exit 1)
  polls N                  complete events of category "poll"
  bad_polls N              polls without a name, ts, dur >= 0, pid, tid or args.task_id
  overlaps N               polls that start before the previous poll of their thread (pid, tid) ended
  waits N                  complete events of category "wait" (a task's [suspended] / [runnable] spans)
  bad_waits N              waits without a name ending in " [suspended]" or " [runnable]", ts, dur >= 0,
                           args.task_id, or on a track that has polls
  wait_overlaps N          waits that start before the previous wait of their task (args.task_id) ended
  wait_poll_overlaps N     waits that overlap a poll of their task
  wait_tasks N             tasks with waits; wait_tracks N: the tracks they are on (one per task)
  wait_us X                the waits' total duration (microseconds)
  samples N                instant events of category "sample"
  sf_missing N             samples whose "sf" is absent or not in stackFrames, or whose chain of parents breaks
  threads A,B,...          the thread_name metadata, sorted
  recording_us X           duration of the "recording" complete event (microseconds), -1 when absent
  stacks_match 0|1         with --folded: the samples' stacks (root first, joined by ';') are the folded lines
  named_polls N            with --spawn-log: polls named "task: task_KIND" (a known entry)
  misnamed N               ... of which the log gives the task another kind
  share_KIND P             with --spawn-log: percentage of the poll time of the logged tasks spent in KIND
                           (wall time: a poll whose thread was preempted counts its whole span)
  in_poll_share_KIND P     with --spawn-log: of the samples that fall inside a poll of a logged task on their
                           thread (by ts), the percentage inside polls of KIND (on-CPU, so preemption-proof)
  in_poll_samples N        ... how many samples fell inside such polls
  in_poll_mismatch N       ... of which the stack's root is not "task: task_KIND" for the poll's KIND
  sample_share_KIND P      with --folded: percentage of task-rooted samples under "task: task_KIND"
  root_poll_share_R P      with --roots R1,R2,...: percentage of the poll time of polls named by those roots
                           spent in polls named R (as a poll is named: its task root, e.g. "task: f")
  root_in_poll_share_R P   with --roots: of the samples inside polls named by those roots, the percentage
                           inside polls named R; root_in_poll_samples N, root_in_poll_mismatch N (stack
                           root other than the poll's name) as above
  root_sample_share_R P    with --roots and --folded: percentage of the samples under those roots that are
                           under R (spaces in R written as "_" in the fact's name)

usage: trace_facts.py TRACE [--folded FOLDED] [--spawn-log LOG] [--roots R1,R2,...]
  LOG: the C executor fixture's --log-tasks output ("spawn ID KIND" lines).
"""
import argparse
import bisect
import collections
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list) or \
            not isinstance(doc.get("stackFrames"), dict):
        raise ValueError("not a trace object with traceEvents and stackFrames")
    return doc


def ns(us):
    """Microseconds (as written, three decimals) to integer nanoseconds."""
    return int(round(us * 1000))


def poll_facts(polls, out):
    bad = 0
    by_thread = collections.defaultdict(list)
    for e in polls:
        args = e.get("args") or {}
        if not isinstance(e.get("name"), str) or not isinstance(e.get("ts"), (int, float)) or \
                not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0 or "pid" not in e or \
                "tid" not in e or "task_id" not in args:
            bad += 1
            continue
        by_thread[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    overlaps = 0
    for spans in by_thread.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            if start < end:
                overlaps += 1
    out["bad_polls"] = bad
    out["overlaps"] = overlaps


def overlapping(spans_a, spans_b, examples=None):
    """How many spans of spans_a overlap some span of spans_b (both lists of (start, end), each sorted); the
    first few pairs appended to examples."""
    n = j = 0
    for start, end in spans_a:
        while j < len(spans_b) and spans_b[j][1] <= start:
            j += 1
        if j < len(spans_b) and spans_b[j][0] < end:
            n += 1
            if examples is not None and len(examples) < 5:
                examples.append(((start, end), spans_b[j]))
    return n


def wait_facts(waits, polls, out):
    bad = 0
    by_task = collections.defaultdict(list)
    tracks = set()
    poll_tracks = {(e.get("pid"), e.get("tid")) for e in polls}
    for e in waits:
        args = e.get("args") or {}
        name = e.get("name")
        if not isinstance(name, str) or not (name.endswith(" [suspended]") or name.endswith(" [runnable]")) or \
                not isinstance(e.get("ts"), (int, float)) or not isinstance(e.get("dur"), (int, float)) or \
                e["dur"] < 0 or "task_id" not in args or (e.get("pid"), e.get("tid")) in poll_tracks:
            bad += 1
            continue
        by_task[str(args["task_id"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
        tracks.add((e.get("pid"), e.get("tid")))
    polls_of = collections.defaultdict(list)
    for e in polls:
        if "task_id" in (e.get("args") or {}) and isinstance(e.get("dur"), (int, float)):
            polls_of[str(e["args"]["task_id"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    overlaps = with_polls = 0
    for task, spans in by_task.items():
        spans.sort()
        overlaps += sum(1 for (_, end), (start, _) in zip(spans, spans[1:]) if start < end)
        examples = []
        with_polls += overlapping(spans, sorted(polls_of.get(task, [])), examples)
        for (ws, we), (ps, pe) in examples:
            print("wait of task %s [%d, %d] ns overlaps its poll [%d, %d] ns" % (task, ws, we, ps, pe), file=sys.stderr)
    out["bad_waits"] = bad
    out["wait_overlaps"] = overlaps
    out["wait_poll_overlaps"] = with_polls
    out["wait_tasks"] = len(by_task)
    out["wait_tracks"] = len(tracks)
    out["wait_us"] = "%.3f" % (sum(ns(e["dur"]) for e in waits if isinstance(e.get("dur"), (int, float))) / 1000.0)


def stack_of(frames, sf):
    names = []
    seen = set()
    key = str(sf)
    while key is not None:
        if key not in frames or key in seen:
            return None
        seen.add(key)
        names.append(frames[key]["name"])
        parent = frames[key].get("parent")
        key = None if parent is None else str(parent)
    return ";".join(reversed(names))


def folded_counts(path):
    counts = collections.Counter()
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            counts[stack] += int(count)
    return counts


def in_poll_samples(polls, samples, frames, label_of):
    """The samples that fall inside a poll on their thread: a Counter of (the poll's label, the sample's stack
    root) over polls whose label_of(poll) is not None."""
    spans = collections.defaultdict(list)
    for e in polls:
        label = label_of(e)
        if label is not None and isinstance(e.get("dur"), (int, float)):
            spans[(e.get("pid"), e.get("tid"))].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), label))
    starts = {}
    for key, lst in spans.items():
        lst.sort()
        starts[key] = [start for start, _, _ in lst]
    pairs = collections.Counter()
    for e in samples:
        key = (e.get("pid"), e.get("tid"))
        if key not in spans or not isinstance(e.get("ts"), (int, float)):
            continue
        t = ns(e["ts"])
        i = bisect.bisect_right(starts[key], t) - 1
        if i >= 0 and t <= spans[key][i][1]:
            stack = stack_of(frames, e["sf"]) if "sf" in e else None
            pairs[(spans[key][i][2], stack.split(";")[0] if stack else None)] += 1
    return pairs


def in_poll_facts(pairs, labels, prefix, root_of_label, out):
    """Facts PREFIX_share_LABEL, PREFIX_samples and PREFIX_mismatch from in_poll_samples' pairs."""
    total = sum(pairs.values())
    for label in labels:
        n = sum(c for (lab, _), c in pairs.items() if lab == label)
        out[prefix + "_share_" + label.replace(" ", "_")] = "%.1f" % (100.0 * n / total) if total else "nan"
    out[prefix + "_samples"] = total
    out[prefix + "_mismatch"] = sum(c for (lab, root), c in pairs.items() if root != root_of_label(lab))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--folded")
    ap.add_argument("--spawn-log")
    ap.add_argument("--roots")
    a = ap.parse_args()
    try:
        doc = load(a.trace)
    except (OSError, ValueError) as e:
        print("json 0")
        print("error %s" % e, file=sys.stderr)
        return 1
    out = collections.OrderedDict(json=1)
    events = doc["traceEvents"]
    frames = doc["stackFrames"]
    polls = [e for e in events if e.get("ph") == "X" and e.get("cat") == "poll"]
    samples = [e for e in events if e.get("ph") == "i" and e.get("cat") == "sample"]
    out["polls"] = len(polls)
    poll_facts(polls, out)
    waits = [e for e in events if e.get("ph") == "X" and e.get("cat") == "wait"]
    out["waits"] = len(waits)
    wait_facts(waits, polls, out)
    out["samples"] = len(samples)
    stacks = collections.Counter()
    missing = 0
    for e in samples:
        stack = stack_of(frames, e["sf"]) if "sf" in e else None
        if stack is None:
            missing += 1
        else:
            stacks[stack] += 1
    out["sf_missing"] = missing
    out["threads"] = ",".join(sorted(e["args"]["name"] for e in events
                                     if e.get("ph") == "M" and e.get("name") == "thread_name"))
    rec = [e for e in events if e.get("ph") == "X" and e.get("cat") == "recording"]
    out["recording_us"] = rec[0]["dur"] if rec else -1
    kinds = ("parse", "render", "compress")
    if a.folded:
        folded = folded_counts(a.folded)
        out["stacks_match"] = int(folded == stacks)
        in_tasks = {k: sum(n for s, n in folded.items() if s.split(";")[0] == "task: task_" + k) for k in kinds}
        total = sum(in_tasks.values())
        for k in kinds:
            out["sample_share_" + k] = "%.1f" % (100.0 * in_tasks[k] / total) if total else "nan"
    if a.spawn_log:
        kind_of = {}
        with open(a.spawn_log) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == "spawn":
                    kind_of[w[1]] = w[2]
        time = collections.Counter()
        named = misnamed = 0
        for e in polls:
            task = str(e.get("args", {}).get("task_id"))
            kind = kind_of.get(task)
            if kind:
                time[kind] += ns(e["dur"])
            if e["name"].startswith("task: task_"):
                named += 1
                if kind != e["name"][len("task: task_"):]:
                    misnamed += 1
        out["named_polls"] = named
        out["misnamed"] = misnamed
        total = sum(time.values())
        for k in kinds:
            out["share_" + k] = "%.1f" % (100.0 * time[k] / total) if total else "nan"
        pairs = in_poll_samples(polls, samples, frames, lambda e: kind_of.get(str(e.get("args", {}).get("task_id"))))
        in_poll_facts(pairs, kinds, "in_poll", lambda k: "task: task_" + k, out)
    if a.roots:
        roots = a.roots.split(",")
        poll_time = collections.Counter()
        for e in polls:
            if e["name"] in roots:
                poll_time[e["name"]] += ns(e["dur"])
        total = sum(poll_time.values())
        for r in roots:
            out["root_poll_share_" + r.replace(" ", "_")] = "%.1f" % (100.0 * poll_time[r] / total) if total else "nan"
        pairs = in_poll_samples(polls, samples, frames, lambda e: e["name"] if e.get("name") in roots else None)
        in_poll_facts(pairs, roots, "root_in_poll", lambda r: r, out)
        if a.folded:
            under = {r: sum(n for st, n in folded_counts(a.folded).items() if st.split(";")[0] == r) for r in roots}
            total = sum(under.values())
            for r in roots:
                out["root_sample_share_" + r.replace(" ", "_")] = "%.1f" % (100.0 * under[r] / total) if total else "nan"
    for k, v in out.items():
        print(k, v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
