#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""gen_folded.py: writes N distinct folded stacks ("root;...;leaf COUNT"), deterministic for a seed, shaped
like a task-aware profile: task roots ("task: X"), thread roots, await-point frames ("f @ file.rs:LINE"),
kernel frames ("x_[k]") and stacks that share prefixes. For tests and benchmarks of `taskspy flamegraph`.
--wide draws the frames from long C++ and Rust names (templates, closures, trait impls: 40-140 bytes
each) instead of short ones, for the rendering benchmark's wide input (bench row 11, --max-depth 60).

usage: gen_folded.py N [--seed S] [--hostile] [--wide] [--max-depth D] [-o FILE]
"""
import argparse
import random
import sys


def frame_pool(rng, hostile):
    mods = ["tokio::runtime", "hyper::proto", "app::handler", "serde_json::de", "std::io", "core::ptr",
            "alloc::vec", "mio::poll", "app::db", "tracing::span"]
    pool = []
    for i in range(400):
        name = "%s::fn_%d" % (rng.choice(mods), i)
        if hostile and i % 7 == 0:
            name += rng.choice(["<T as Trait<'a>>::call", " & \"quoted\"", " <&>\"'", " caf\u00e9 \u2603",
                                "::{{closure}}", " operator<<", " ]]> --> <!-- "])
        pool.append(name)
    return pool


def wide_pool(rng):
    """400 long demangled names (40-140 bytes): Rust trait impls and closures, C++ templates and lambdas."""
    paths = ["tokio::runtime::task", "hyper::proto::h1", "tower::util", "app::orders", "serde_json::de",
             "h2::proto::streams", "sqlx_core::pool"]
    types = ["std::vector<std::string>", "std::shared_ptr<app::Session>", "absl::Span<const char>",
             "folly::Future<folly::Unit>", "std::unique_ptr<app::Conn>"]
    pool = []
    for i in range(400):
        kind = i % 4
        if kind == 0:
            name = "<%s::Conn%d<T,B> as core::future::future::Future>::poll" % (rng.choice(paths), i)
        elif kind == 1:
            name = "%s::Task%d::run::{{closure}}::h%08x" % (rng.choice(paths), i, rng.getrandbits(32))
        elif kind == 2:
            name = "app::Handler%d<%s>::operator()(%s const&)" % (i, rng.choice(types), rng.choice(types))
        else:
            name = "%s::poll_%d" % (rng.choice(paths), i)
        pool.append(name)
    return pool


def make_frame(rng, pool):
    r = rng.random()
    name = rng.choice(pool)
    if r < 0.15:
        return "%s @ %s.rs:%d" % (name, name.split("::")[-1][:12] or "lib", rng.randint(1, 900))
    if r < 0.20:
        return rng.choice(["do_syscall_64", "ksys_read", "tcp_sendmsg", "schedule", "copy_user"]) + "_[k]"
    return name


def make_root(rng, hostile):
    r = rng.random()
    if r < 0.5:
        entry = rng.choice(["serve_conn", "handle_request", "background_flush", "accept_loop", "tick"])
        if hostile and rng.random() < 0.2:
            entry += "<&>\"'"
        if rng.random() < 0.5:
            return "task: app::%s" % entry
        return "task %d: app::%s" % (rng.randint(1, 500), entry)
    return rng.choice(["tokio-runtime-worker", "main", "blocking-1", "signal-handler"])


def generate(n, seed, hostile, max_depth, wide=False):
    rng = random.Random(seed)
    pool = wide_pool(rng) if wide else frame_pool(rng, hostile)
    seen = set()
    stacks = []
    while len(stacks) < n:
        if stacks and rng.random() < 0.85:
            base = rng.choice(stacks)[0]
            cut = rng.randint(1, len(base))
            frames = list(base[:cut])
        else:
            frames = [make_root(rng, hostile)]
        for _ in range(rng.randint(1, max(1, max_depth // 3))):
            if len(frames) >= max_depth:
                break
            frames.append(make_frame(rng, pool))
        key = tuple(frames)
        if key in seen:
            continue
        seen.add(key)
        count = int(rng.paretovariate(1.2)) if rng.random() < 0.9 else rng.randint(50, 5000)
        stacks.append((key, max(1, count)))
    return stacks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hostile", action="store_true", help="names with XML-special and non-ASCII characters")
    ap.add_argument("--wide", action="store_true", help="long C++ and Rust names (40-140 bytes)")
    ap.add_argument("--max-depth", type=int, default=40)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    for frames, count in generate(args.n, args.seed, args.hostile, args.max_depth, args.wide):
        out.write("%s %d\n" % (";".join(frames), count))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
