#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# make_seeds.py: regenerates the binary seed corpora (usdt_notes, elf_file, perf_records, core_file) under
# tests/fuzz/corpus/ from the built fixtures (run `make fixtures` first; core_file's from a `sleep` dumped by gdb's
# gcore and by the kernel, which needs gdb and root). The text corpora (usdt_args,
# proc_maps, folded, demangle) are written by hand and kept as they are.
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "build", "fixtures")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def elf_parts(path):
    data = open(path, "rb").read()
    (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
    (phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHHHH", data, 0x36)
    phdrs = [data[phoff + i * phentsize: phoff + (i + 1) * phentsize] for i in range(phnum)]
    shdrs = []
    for i in range(shnum):
        shdrs.append(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
    strtab = shdrs[shstrndx]
    names = data[strtab[4]: strtab[4] + strtab[5]]
    secs = {}
    for sh in shdrs:
        name = names[sh[0]: names.index(b"\0", sh[0])].decode()
        secs[name] = sh
    return data, phdrs, secs


def stapsdt_notes(path):
    with tempfile.NamedTemporaryFile() as tmp:
        subprocess.run(["objcopy", "--dump-section", ".note.stapsdt=" + tmp.name, path, os.devnull], check=True)
        return open(tmp.name, "rb").read()


def write(target, name, blob):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(blob)


def usdt_notes_seeds():
    for fx in ["executor", "executor_lld", "executor_sema", "executor_memarg", "libexecmarkers.so"]:
        path = os.path.join(FIX, fx)
        data, phdrs, secs = elf_parts(path)
        loads = [p for p in phdrs if struct.unpack_from("<I", p, 0)[0] == 1][:7]
        notes = stapsdt_notes(path)
        base = secs[".stapsdt.base"][3] if ".stapsdt.base" in secs else 0
        head = bytes([(1 if base else 0) | (len(loads) << 1)]) + struct.pack("<Q", base)
        write("usdt_notes", fx, head + b"".join(loads) + notes)
        # the same notes without .stapsdt.base, and with only the first note
        write("usdt_notes", fx + "-nobase", bytes([len(loads) << 1]) + struct.pack("<Q", 0) + b"".join(loads) + notes)
    # tokio: many notes; keep the first few
    path = os.path.join(FIX, "tokio_markers")
    if os.path.exists(path):
        data, phdrs, secs = elf_parts(path)
        loads = [p for p in phdrs if struct.unpack_from("<I", p, 0)[0] == 1][:7]
        notes = stapsdt_notes(path)[:1024]
        base = secs[".stapsdt.base"][3] if ".stapsdt.base" in secs else 0
        write("usdt_notes", "tokio_markers", bytes([1 | (len(loads) << 1)]) + struct.pack("<Q", base)
              + b"".join(loads) + notes)


def mini_elf(src):
    """A small ELF: the fixture's program headers (PT_LOAD/PT_NOTE kept, offsets as in the original),
    a build-id note, .stapsdt.base, .note.stapsdt and .shstrtab, all re-packed into a few KiB."""
    data, phdrs, secs = elf_parts(src)
    notes = stapsdt_notes(src)
    bid_sh = secs.get(".note.gnu.build-id")
    bid = data[bid_sh[4]: bid_sh[4] + bid_sh[5]] if bid_sh else b""
    shstr = b"\0.note.gnu.build-id\0.stapsdt.base\0.note.stapsdt\0.shstrtab\0"
    name_off = {n: shstr.index(n.encode() + b"\0") for n in [".note.gnu.build-id", ".stapsdt.base",
                                                             ".note.stapsdt", ".shstrtab"]}
    keep = [p for p in phdrs if struct.unpack_from("<I", p, 0)[0] in (1, 4)]
    body_off = 64 + 56 * len(keep)
    layout = []
    off = (body_off + 7) & ~7
    blobs = b""
    for name, blob in [(".note.gnu.build-id", bid), (".stapsdt.base", b"\0"), (".note.stapsdt", notes),
                       (".shstrtab", shstr)]:
        pad = (-len(blobs) - off) % 8
        blobs += b"\0" * pad
        layout.append((name, off + len(blobs), len(blob)))
        blobs += blob
    shoff = (off + len(blobs) + 7) & ~7
    # program headers: PT_NOTE points at our build-id copy; PT_LOADs keep their vaddrs (filesz clipped)
    ph = b""
    for p in keep:
        (ptype, flags, poff, vaddr, paddr, filesz, memsz, align) = struct.unpack("<IIQQQQQQ", p)
        if ptype == 4:
            poff, filesz = layout[0][1], layout[0][2]
        ph += struct.pack("<IIQQQQQQ", ptype, flags, poff, vaddr, paddr, filesz, memsz, align)
    sh = b"\0" * 64
    for i, (name, o, n) in enumerate(layout):
        t = {".note.gnu.build-id": 7, ".stapsdt.base": 1, ".note.stapsdt": 7, ".shstrtab": 3}[name]
        addr = secs[name][3] if name in secs else 0
        sh += struct.pack("<IIQQQQIIQQ", name_off[name], t, 0, addr, o, n, 0, 0, 4 if t == 7 else 1, 0)
    ehdr = bytearray(data[:64])
    struct.pack_into("<QQ", ehdr, 0x20, 64, shoff)
    struct.pack_into("<HHHHH", ehdr, 0x36, 56, len(keep), 64, len(layout) + 1, len(layout))
    img = bytes(ehdr) + ph
    img += b"\0" * (off - len(img)) + blobs
    img += b"\0" * (shoff - len(img)) + sh
    return img


def elf_file_seeds():
    for fx in ["executor", "executor_lld", "executor_sema", "libexecmarkers.so"]:
        write("elf_file", "mini-" + fx, mini_elf(os.path.join(FIX, fx)))
    # one whole (stripped) real binary
    with tempfile.NamedTemporaryFile() as tmp:
        subprocess.run(["strip", "-o", tmp.name, os.path.join(FIX, "executor_sema")], check=True)
        write("elf_file", "stripped-executor_sema", open(tmp.name, "rb").read())
    # a debug file whose DWARF is zlib-compressed (elf_file_inflated)
    with tempfile.NamedTemporaryFile() as tmp:
        subprocess.run(["objcopy", "--only-keep-debug", os.path.join(FIX, "executor_gz"), tmp.name], check=True)
        write("elf_file", "debug-executor_gz", open(tmp.name, "rb").read())


def rec(rtype, misc, body):
    body += b"\0" * ((-len(body) - 8) % 8)
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def perf_records_seeds():
    PERF_CONTEXT_KERNEL = (1 << 64) - 128
    PERF_CONTEXT_USER = (1 << 64) - 512
    ident, ip, pidtid, time = 0x1234, 0x55555555a000, (4242 << 32) | 4242, 1000000
    chain = [PERF_CONTEXT_KERNEL, 0xffffffff81000000, PERF_CONTEXT_USER, ip, ip + 0x40]
    # layout 0 of fuzz_perf_records.c: IDENTIFIER|IP|TID|TIME|CALLCHAIN
    sample0 = rec(9, 2, struct.pack("<QQQQQ", ident, ip, pidtid, time, len(chain)) + struct.pack("<5Q", *chain))
    # layout 1: ... + REGS_USER (mask 0x1ff00ff: 16 regs) + STACK_USER (64 bytes, dyn 48)
    regs = struct.pack("<Q", 2) + struct.pack("<16Q", *range(0x7ffc0000, 0x7ffc0010))
    stack = struct.pack("<Q", 64) + bytes(range(64)) + struct.pack("<Q", 48)
    sample1 = rec(9, 2, struct.pack("<QQQQQ", ident, ip, pidtid, time, len(chain)) + struct.pack("<5Q", *chain)
                  + regs + stack)
    # layout 3: IDENTIFIER|TID|TIME|RAW
    raw = struct.pack("<I", 12) + struct.pack("<HBBI", 1234, 0, 0, 4242) + struct.pack("<I", 7)
    sample3 = rec(9, 2, struct.pack("<QQQ", ident, pidtid, time) + raw)
    mmap2 = rec(10, 2, struct.pack("<IIQQQIIQQII", 4242, 4242, 0x555555554000, 0x2000, 0x1000, 8, 1, 123456, 0,
                                  5, 2) + b"/usr/bin/executor\0" + struct.pack("<Q", ident))
    comm = rec(3, 0x2000, struct.pack("<II", 4242, 4243) + b"worker-1\0" + struct.pack("<Q", ident))
    fork = rec(7, 0, struct.pack("<IIIIQ", 4242, 4242, 4244, 4242, time))
    exit_ = rec(4, 0, struct.pack("<IIIIQ", 4242, 4242, 4244, 4242, time + 5))
    lost = rec(2, 0, struct.pack("<QQ", ident, 17))
    write("perf_records", "sample-fp", b"\0" + sample0 + sample0)
    write("perf_records", "sample-dwarf-wrap", b"\x05" + sample1 + comm)
    write("perf_records", "marker-raw", b"\x41" + sample3 + sample3 + lost)
    write("perf_records", "mixed", b"\x3f" + mmap2 + comm + fork + sample0 + exit_ + lost + sample1)
    write("perf_records", "keep-first", b"\x80" + comm + sample0)


def trimmed_core(data):
    """A core's headers and notes with each PT_LOAD cut to its first 64 saved bytes: every note the core has, in
    a few KiB (cores are MBs; the fuzzer reads 64 KB)."""
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    (phnum,) = struct.unpack_from("<H", data, 0x38)
    out = bytearray(data[:phoff + 56 * phnum])
    for k in range(phnum):
        at = phoff + 56 * k
        (ptype, _flags, off) = struct.unpack_from("<IIQ", data, at)
        (filesz,) = struct.unpack_from("<Q", data, at + 32)
        keep = filesz if ptype == 4 else min(filesz, 64)
        struct.pack_into("<Q", out, at + 8, len(out))
        struct.pack_into("<Q", out, at + 32, keep)
        out += data[off:off + keep]
    return bytes(out)


def core_file_seeds():
    with tempfile.TemporaryDirectory() as tmp:
        sleeper = subprocess.Popen(["sleep", "60"], cwd=tmp)
        subprocess.run(["gcore", "-o", os.path.join(tmp, "gcore"), str(sleeper.pid)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sleeper.kill()
        sleeper.wait()
        write("core_file", "gcore_sleep", trimmed_core(open(os.path.join(tmp, "gcore.%d" % sleeper.pid), "rb").read()))
        # the kernel's own: SIGABRT with a core limit, the core written where core_pattern says ("core": here)
        pattern = open("/proc/sys/kernel/core_pattern").read().strip()
        if pattern.startswith("|") or "/" in pattern:
            print("core_pattern is %r: no kernel core seed" % pattern, file=sys.stderr)
            return
        sleeper = subprocess.Popen(["sh", "-c", "ulimit -c unlimited && exec sleep 60"], cwd=tmp)
        time.sleep(0.2)
        os.kill(sleeper.pid, signal.SIGABRT)
        sleeper.wait()
        cores = [f for f in os.listdir(tmp) if f.startswith("core")]
        if cores:
            write("core_file", "kernel_sleep", trimmed_core(open(os.path.join(tmp, cores[0]), "rb").read()))


if __name__ == "__main__":
    if not os.path.exists(os.path.join(FIX, "executor")):
        sys.exit("make fixtures first")
    usdt_notes_seeds()
    elf_file_seeds()
    perf_records_seeds()
    core_file_seeds()
