#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""gen_diff_folded.py: writes a BEFORE and an AFTER folded file of the same program, deterministic for a seed,
for tests of `taskspy diff`: N distinct stacks sharing prefixes (some a prefix of another), of which about a
tenth are only in BEFORE, a tenth only in AFTER, a fifth unchanged and the rest grew or shrank; some stacks
are written as two lines (a file may repeat a stack: its counts add up) and lines come in no order. Frame
names all end in "_NNN" (three digits), so no name is another's prefix and flamegraph.pl's line sort cannot
split a frame in two (it would where "f" and "f @ x" are siblings); some carry XML's special characters.
AFTER's total differs from BEFORE's, so --normalize has something to scale.

usage: gen_diff_folded.py N --seed S BEFORE.folded AFTER.folded
"""
import argparse
import random


def frame_pool(rng):
    mods = ["app::handler", "app::db", "hyper::proto", "std::io", "serde_json::de", "tokio::net"]
    pool = ["%s::fn_%03d" % (rng.choice(mods), i) for i in range(120)]
    pool += ["op<&>\"'_%03d" % i for i in range(120, 126)]       # escaped in the SVG, unescaped in titles
    return pool


def make_stacks(n, rng):
    pool = frame_pool(rng)
    roots = ["main_%03d" % i for i in range(3)] + ["worker_%03d" % i for i in range(4)]
    stacks, seen = [], set()
    while len(stacks) < n:
        if stacks and rng.random() < 0.7:
            base = rng.choice(stacks)
            frames = list(base[:rng.randint(1, len(base))])   # a prefix of a stack: shared frames
        else:
            frames = [rng.choice(roots)]
        for _ in range(rng.randint(0 if len(frames) > 1 else 1, 5)):
            if len(frames) >= 12:
                break
            frames.append(rng.choice(pool))
        key = tuple(frames)
        if key not in seen:
            seen.add(key)
            stacks.append(key)
    return stacks


def counts(stacks, rng):
    before, after = {}, {}
    for s in stacks:
        kind = rng.random()
        b = rng.randint(1, 400) if rng.random() < 0.9 else rng.randint(1, 9)
        if kind < 0.1:
            before[s] = b
        elif kind < 0.2:
            after[s] = b
        elif kind < 0.4:
            before[s] = after[s] = b
        else:
            before[s] = b
            after[s] = max(1, b + rng.randint(-b, 300))
    return before, after


def write(path, table, rng):
    lines = []
    for stack, count in table.items():
        text = ";".join(stack)
        if count > 1 and rng.random() < 0.05:                 # the same stack on two lines
            part = rng.randint(1, count - 1)
            lines += ["%s %d" % (text, part), "%s %d" % (text, count - part)]
        else:
            lines.append("%s %d" % (text, count))
    rng.shuffle(lines)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    stacks = make_stacks(a.n, rng)
    before, after = counts(stacks, rng)
    write(a.before, before, rng)
    write(a.after, after, rng)


if __name__ == "__main__":
    main()
