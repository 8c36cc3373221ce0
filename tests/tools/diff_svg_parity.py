#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""diff_svg_parity.py: compares taskspy's differential SVG with flamegraph.pl's drawing of the same
difffolded.pl lines, frame by frame: name, samples, share, change and fill colour. Every frame flamegraph.pl
draws must be drawn alike by taskspy. taskspy may draw a frame flamegraph.pl loses only where flamegraph.pl's
frame key ("name;depth;end time") collides with a zero-width frame of a stack that AFTER lacks, starting
where the lost frame ends (flamegraph.pl then keeps the zero-width one's start and prunes it): its merge is
replayed to find those, and each extra frame must be one. Debian's flamegraph.pl (libdevel-nytprof-perl's copy) turns '<' and '>' in
stacks into '(' and ')' (tr/<>/()/) before anything else: names are compared, and its line sort replayed,
that way. Prints what it compared; exits 1 on a difference.

usage: diff_svg_parity.py TASKSPY.svg FLAMEGRAPH_PL.svg DIFF.folded
"""
import collections
import html
import re
import sys

TITLE = re.compile(r"^(.*) \(([0-9,]+) samples, ([0-9.]+)%(?:; before [0-9]+, after [0-9]+)?(?:; ([-+]?[0-9.]+)%)?\)$",
                   re.S)


def pl_name(name):
    return name.translate(str.maketrans("<>", "()"))


def frames(path):
    """(key, s, n, d) per frame; key = (name, samples, share, change, (r, g, b)); s/n/d from data- attributes
    (None where the file has none)."""
    text = open(path, encoding="utf-8").read()
    out = []
    for g, title, fill in re.findall(r'<g([^>]*)>\s*<title>(.*?)</title>\s*<rect[^>]*?fill="([^"]*)"', text, re.S):
        m = TITLE.match(html.unescape(title))
        if not m:
            sys.exit("%s: unexpected title: %s" % (path, html.unescape(title)))
        if fill.startswith("#"):
            rgb = tuple(int(fill[k:k + 2], 16) for k in (1, 3, 5))
        else:
            rgb = tuple(int(v) for v in re.findall(r"\d+", fill))
        share = m.group(3) if "." in m.group(3) else m.group(3) + ".00"   # flamegraph.pl's "all": "100%"
        key = (pl_name(m.group(1)), int(m.group(2).replace(",", "")), share, m.group(4) or "", rgb)
        attrs = dict(re.findall(r'data-([snd])="(\d+)"', g))
        out.append((key, *(int(attrs[k]) if k in attrs else None for k in "snd")))
    return out


def lost_frames(diff_path):
    """Counter of (name, samples) of the frames flamegraph.pl loses: its merge replayed (lines sorted bytewise
    after tr/<>/()/, each line's frames opened where it departs from the line before and closed where the
    next departs, at the sum of AFTER's samples so far), a frame whose key (name, depth, end) a zero-width
    frame closed later shares."""
    lines = []
    for line in open(diff_path, encoding="utf-8"):
        stack, before, after = line.rstrip("\n").rsplit(" ", 2)
        lines.append((pl_name(stack) + " " + before + " " + after).encode())
    lines.sort()
    closed = []                                  # (name, depth, start, end) in the order closed
    open_frames, at = [], 0                      # [(name, start)] from depth 1
    for raw in lines + [None]:
        names = raw.decode().rsplit(" ", 2)[0].split(";") if raw is not None else []
        same = 0
        while same < min(len(names), len(open_frames)) and open_frames[same][0] == names[same]:
            same += 1
        while len(open_frames) > same:
            name, start = open_frames.pop()
            closed.append((name, len(open_frames) + 1, start, at))
        open_frames += [(name, at) for name in names[same:]]
        if raw is not None:
            at += int(raw.decode().rsplit(" ", 1)[1])
    zero = {(n, d, e) for n, d, s, e in closed if s == e}
    return collections.Counter((n, e - s) for n, d, s, e in closed if s < e and (n, d, e) in zero)


def main():
    ours, theirs = frames(sys.argv[1]), frames(sys.argv[2])
    ours_keys = collections.Counter(f[0] for f in ours)
    theirs_keys = collections.Counter(f[0] for f in theirs)
    missing = theirs_keys - ours_keys
    for key in list(missing)[:5]:
        print("flamegraph.pl draws, taskspy does not: %s" % (key,))
    extra = ours_keys - theirs_keys
    lost = lost_frames(sys.argv[3])
    unexplained = []
    for key, count in extra.items():
        if lost[(key[0], key[1])] < count:
            unexplained.append(key)
        lost[(key[0], key[1])] -= count
    for key in unexplained[:5]:
        print("taskspy draws, flamegraph.pl does not (and no key collision explains it): %s" % (key,))
    print("%d frames compared: %d drawn alike, %d that flamegraph.pl loses to its key collision" %
          (len(theirs), sum((theirs_keys & ours_keys).values()), sum(extra.values())))
    sys.exit(1 if missing or unexplained or not theirs else 0)


if __name__ == "__main__":
    main()
