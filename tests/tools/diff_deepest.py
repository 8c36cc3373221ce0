#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""diff_deepest.py: the colours of a differential SVG against the change they stand for, computed from the
diff's folded lines (difffolded.pl's "stack before after"), independently of taskspy's own palette code: the
deepest red (#ff0000) is drawn on a frame exactly when its own samples (its change less its children's) grew by
the largest change of any stack (within flamegraph.pl's 1/210 colour step), the deepest blue (#0000ff) when
they shrank by it, the frame that changed most is one of those, and lighter reds and blues are drawn too.
Prints what it found; exits 1 on a difference.

usage: diff_deepest.py DIFF.svg DIFF.folded
"""
import html, re, sys
svg, folded = sys.argv[1], sys.argv[2]
deltas = []
for line in open(folded):
    f = line.split()
    if len(f) >= 3:
        deltas.append(int(f[-1]) - int(f[-2]))
max_delta = max(max(deltas), -min(deltas))
frames = []   # (depth, start, samples, change, fill)
for attrs, title, fill in re.findall(r'<g([^>]*)>\s*<title>(.*?)</title>\s*<rect[^>]*?fill="([^"]*)"', open(svg).read(), re.S):
    m = re.search(r'; before ([0-9]+), after ([0-9]+)', html.unescape(title))
    a = dict(re.findall(r'data-([snd])="([0-9]+)"', attrs))
    if m and len(a) == 3:
        frames.append([int(a["d"]), int(a["s"]), int(a["n"]), int(m.group(2)) - int(m.group(1)), fill.lower()])
# a frame's own change: its change less its children's (the frames one deeper inside its span)
own = [f[3] for f in frames]
by_depth = {}
for i, f in enumerate(frames):
    by_depth.setdefault(f[0], []).append(i)
for i, f in enumerate(frames):
    for j in by_depth.get(f[0] - 1, []):
        p = frames[j]
        if p[1] <= f[1] <= p[1] + p[2] and (f[2] == 0 or f[1] + f[2] <= p[1] + p[2]):
            own[j] -= f[3]
            break
problems = []
deep_red = [own[i] for i, f in enumerate(frames) if f[4] == "#ff0000"]
deep_blue = [own[i] for i, f in enumerate(frames) if f[4] == "#0000ff"]
if max(deltas) == max_delta and not deep_red: problems.append("no #ff0000 frame, though a stack grew by the largest change")
if -min(deltas) == max_delta and not deep_blue: problems.append("no #0000ff frame, though a stack shrank by the largest change")
# flamegraph.pl's scale: the other two channels int(210 * (max - |change|) / max), 0 for a change within
# max / 210 of the largest
deepest = max_delta * (1 - 1 / 210)
problems += ["a #ff0000 frame's own samples changed by %+d" % d for d in deep_red if d < deepest]
problems += ["a #0000ff frame's own samples changed by %+d" % d for d in deep_blue if d > -deepest]
biggest = max(range(len(frames)), key=lambda i: abs(own[i]))
if abs(own[biggest]) == max_delta and frames[biggest][4] not in ("#ff0000", "#0000ff"):
    problems.append("the frame whose own samples changed most (%+d) is %s" % (own[biggest], frames[biggest][4]))
light_red = sum(1 for f in frames if re.fullmatch(r"#ff([0-9a-f]{2})\1", f[4]) and f[4] not in ("#ffffff", "#ff0000"))
light_blue = sum(1 for f in frames if re.fullmatch(r"#([0-9a-f]{2})\1ff", f[4]) and f[4] not in ("#ffffff", "#0000ff"))
if not light_red or not light_blue:
    problems.append("lighter reds %d, lighter blues %d" % (light_red, light_blue))
print("largest change of a stack %d: %d frames deepest red, %d deepest blue, %d lighter red, %d lighter blue%s"
      % (max_delta, len(deep_red), len(deep_blue), light_red, light_blue, "; " + "; ".join(problems[:3]) if problems else ""))
sys.exit(1 if problems else 0)
