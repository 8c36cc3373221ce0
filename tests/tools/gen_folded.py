#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""gen_folded.py: writes N distinct folded stacks ("root;...;leaf COUNT"), deterministic for a seed, shaped
like a task-aware profile: task roots ("task: X"), thread roots, await-point frames ("f @ file.rs:LINE"),
kernel frames ("x_[k]") and stacks that share prefixes. For tests and benchmarks of `taskspy flamegraph`.
--wide draws the frames from long C++ and Rust names (templates, closures, trait impls: 40-140 bytes
each) instead of short ones, for the rendering benchmark's wide input (bench row 4, --max-depth 60).
--real writes what a real Rust/C++ service's profile looks like instead (bench row 4's "real names" input:
100,000 lines are ~76 MB): a call graph of 4,000 functions named as rustc and g++ name them (generic
parameters, trait impls, closures, lambdas: 40-120 characters each), call paths 30-60 frames deep from a
thread root through runtime frames into the program's, and one line per sampled leaf, at any depth of its
path (a sample lands in any frame of it), so lines share long prefixes as a real profile's do.

usage: gen_folded.py N [--seed S] [--hostile] [--wide | --real] [--max-depth D] [-o FILE]
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


# ---- --real: a real service's profile ------------------------------------------------------------------
RUST_CRATES = ["tokio::runtime::scheduler::multi_thread", "tokio::runtime::task::harness", "hyper::proto::h1::dispatch",
               "hyper::server::conn::http1", "tower::util::map_response", "axum::routing::route", "h2::proto::streams",
               "serde_json::de", "sqlx_core::pool::inner", "tracing::instrument", "app::orders::service",
               "app::inventory::repository", "reqwest::async_impl::client", "futures_util::stream::stream"]
RUST_TYPES = ["Dispatcher", "Harness", "Connection", "Instrumented", "MapResponseFuture", "Pooled", "Handler",
              "RouteFuture", "OrderService", "Deserializer", "PoolInner", "Streams", "Collect", "Then"]
RUST_ARGS = ["T", "S", "B", "T,S", "D,Bs,I,T", "F,N", "alloc::string::String", "bytes::bytes::Bytes",
             "hyper::body::incoming::Incoming", "core::pin::Pin<alloc::boxed::Box<dyn core::future::future::Future>>",
             "app::orders::Order", "serde_json::value::Value", "sqlx_postgres::Postgres"]
RUST_TRAITS = ["core::future::future::Future", "futures_core::stream::Stream", "tower_service::Service<Request>",
               "core::ops::function::FnOnce<()>", "core::iter::traits::iterator::Iterator", "serde::de::Visitor"]
RUST_METHODS = ["poll", "call", "run_task", "poll_next", "poll_ready", "handle_request", "deserialize_any",
                "fetch_optional", "encode_headers", "poll_read_buf", "spawn_inner", "with_current"]
CPP_NS = ["folly::futures::detail", "std", "boost::asio::detail", "grpc::internal", "app::net", "absl::lts_20230125",
          "seastar::internal", "app::storage::rocks"]
CPP_TYPES = ["Core<folly::Unit>", "vector<std::__cxx11::basic_string<char>, std::allocator<std::string>>",
             "executor_op<boost::asio::detail::binder0<app::Conn::on_read()::{lambda()#1}>>",
             "CallOpSet<grpc::internal::CallOpSendMessage>", "Session", "flat_hash_map<std::string, int>",
             "continuation<seastar::future<void>>", "DBImpl"]
CPP_METHODS = ["doCallback(folly::Executor::KeepAlive<folly::Executor>&&)", "_M_realloc_insert(iterator, std::string const&)",
               "do_complete(void*, boost::asio::detail::scheduler_operation*)", "FillOps(grpc::internal::Call*)",
               "on_read(std::error_code, unsigned long)", "find<std::string>(std::string const&)",
               "run_and_dispose()", "Get(rocksdb::ReadOptions const&, rocksdb::Slice const&)"]


def real_name(rng):
    """One function name as rustc or g++ (demangled) gives it, 40-120 characters."""
    while True:
        kind = rng.random()
        if kind < 0.30:
            name = "<%s::%s<%s> as %s>::%s" % (rng.choice(RUST_CRATES), rng.choice(RUST_TYPES), rng.choice(RUST_ARGS),
                                               rng.choice(RUST_TRAITS), rng.choice(RUST_METHODS))
        elif kind < 0.55:
            name = "%s::%s<%s>::%s" % (rng.choice(RUST_CRATES), rng.choice(RUST_TYPES), rng.choice(RUST_ARGS),
                                       rng.choice(RUST_METHODS))
            name += rng.choice(["", "::{{closure}}", "::{{closure}}::{{closure}}", "::{closure#0}"])
        elif kind < 0.70:
            name = "%s::%s::{{closure}}" % (rng.choice(RUST_CRATES), rng.choice(RUST_METHODS))
        elif kind < 0.90:
            name = "%s::%s::%s" % (rng.choice(CPP_NS), rng.choice(CPP_TYPES), rng.choice(CPP_METHODS))
        else:
            name = "std::_Function_handler<void (), %s::%s::{lambda()#%d}>::_M_invoke(std::_Any_data const&)" \
                % (rng.choice(CPP_NS), rng.choice(CPP_METHODS).split("(")[0], rng.randint(1, 4))
        # most real names are short: a long one is kept less often (lengths 40-120, about half under 70)
        if 40 <= len(name) <= 120 and rng.random() < ((125 - len(name)) / 85) ** 2:
            return name


def generate_real(n, seed):
    """n distinct lines: a call graph of named functions; each sample walks a path of 30-60 frames from a thread
    root and stops at a random depth of it (deep leaves likelier), as a sample lands in any frame it runs."""
    rng = random.Random(seed)
    names = sorted({real_name(rng) for _ in range(6000)})[:4000]
    rng.shuffle(names)
    runtime, program = names[:300], names[300:]
    callees = {}         # a function's callees: a few each, so paths share prefixes

    def callee(fn, pool):
        options = callees.setdefault(fn, [rng.choice(pool) for _ in range(rng.randint(2, 5))])
        return rng.choice(options)

    roots = ["tokio-runtime-worker", "main", "grpc_global_tim", "seastar-reactor", "rocksdb:low"]
    paths = []
    for _ in range(max(1, n // 8)):
        depth = rng.randint(30, 60)
        frames = [rng.choice(roots)]
        fn = rng.choice(runtime)
        for i in range(depth - 1):
            frames.append(fn)
            fn = callee(fn, runtime if i < 12 else program)
        paths.append(frames)
    seen = set()
    stacks = []
    while len(stacks) < n:
        path = rng.choice(paths)
        leaf = max(2, min(len(path), int(len(path) * rng.betavariate(1.0, 4.8)) + 1))
        frames = path[:leaf]
        if rng.random() < 0.5:          # a sample in a callee the path did not take
            frames = frames + [callee(frames[-1], program)]
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
    ap.add_argument("--real", action="store_true", help="a real service's profile: long names, paths 30-60 deep")
    ap.add_argument("--max-depth", type=int, default=40)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    stacks = generate_real(args.n, args.seed) if args.real else \
        generate(args.n, args.seed, args.hostile, args.max_depth, args.wide)
    for frames, count in stacks:
        out.write("%s %d\n" % (";".join(frames), count))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
