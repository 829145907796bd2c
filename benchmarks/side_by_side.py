#!/usr/bin/python3
"""kvcim against llama2.c, side by side, whole processes.

Given llama2.c's `run` (and optionally `runq`), built from ../shared/peers/llama2.c as its README
says (gcc -Ofast -march=native -o run run.c -lm; the same for runq), this driver

  * creates once, in a cache folder (default: <build>/side_by_side), random-weight checkpoints
    of the stories15M and stories110M shapes in llama2.c's float format, their Q8_0 "version 2"
    exports for runq (group size 64; written by this script's own quantiser), and a 32000-entry
    tokenizer both programs accept (3 control pieces, 256 byte pieces, printable ASCII, filler);
  * runs kvcim and llama2.c on the same checkpoint in alternation (paired runs; greedy; the
    order inside a pair alternates), N pairs per row;
  * prints per row the median wall time of each, the median of the per-pair ratios
    kvcim/llama2.c of wall time and of CPU time (user + system), and the peak RSS of each
    (/usr/bin/time's ru_maxrss of the child). On a shared machine the load average is printed
    before and after: kvcim uses a second core only when one is idle (KVCIM_THREADS=1|2
    forces it), so wall-time ratios depend on the load.

Rows: stories260K (the embedded model, 512 steps), 15M shape (256 steps), 110M shape (128
steps), float (`kvcim generate` vs `run`) and int8 (`kvcim generate --weights int8` vs `runq`).

    /usr/bin/python3 benchmarks/side_by_side.py --run path/to/run --runq path/to/runq \
        --kvcim build/kvcim --pairs 7

--smoke: the tiny check CTest runs: one small random checkpoint, asserts that kvcim and run.c
print the same greedy text on it (no timing).
"""
import argparse
import os
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROMPT = "Once upon a time"
VOCAB = 32000
BOS = 1
RSS_DIR = "."

# name: (dim, hidden, layers, heads, kv_heads, vocab, seq_len)
SHAPES = {
    "15M": (288, 768, 6, 6, 6, VOCAB, 256),
    "110M": (768, 2048, 12, 12, 12, VOCAB, 1024),
    "smoke": (64, 160, 2, 4, 2, VOCAB, 64),
}


# ---- files ----------------------------------------------------------------------------------

def write_tokenizer(path):
    """A 32000-entry llama2.c tokenizer: <unk> <s> </s>, <0x00>..<0xFF>, printable ASCII, fillers."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"]
    pieces += [b"<0x%02X>" % b for b in range(256)]
    pieces += [bytes([c]) for c in range(0x20, 0x7F)]
    n = len(pieces)
    pieces += [b"~%d" % i for i in range(n, VOCAB)]
    out = bytearray(struct.pack("<i", max(len(p) for p in pieces)))
    for i, p in enumerate(pieces):
        score = 0.0 if i < 3 else -float(i)
        out += struct.pack("<fi", score, len(p)) + p
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.replace(tmp, path)


def random_tensors(shape, seed):
    """Float32 tensors in llama2.c's order; uniform / sqrt(fan-in), norms near 1."""
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = shape
    hd = dim // heads
    kv = kv_heads * hd
    rng = np.random.default_rng(seed)

    def mat(rows, cols, n=1):
        m = rng.random((n, rows, cols), dtype=np.float32)
        m *= 2.0
        m -= 1.0
        m *= np.float32(1.0 / np.sqrt(cols))
        return m

    def norm(n, size):
        return (0.8 + 0.4 * rng.random((n, size), dtype=np.float32)).astype(np.float32)

    emb = mat(vocab, dim)[0] * np.float32(np.sqrt(dim))
    emb[BOS] = 0.0  # logit 0 for BOS: greedy decoding never stops early on random weights
    t = {
        "emb": emb,
        "rms_att": norm(layers, dim),
        "wq": mat(heads * hd, dim, layers),
        "wk": mat(kv, dim, layers),
        "wv": mat(kv, dim, layers),
        "wo": mat(dim, heads * hd, layers),
        "rms_ffn": norm(layers, dim),
        "w1": mat(hidden, dim, layers),
        "w2": mat(dim, hidden, layers),
        "w3": mat(hidden, dim, layers),
        "rms_final": norm(1, dim)[0],
    }
    return t


def write_float_checkpoint(path, shape, t):
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = shape
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<7i", dim, hidden, layers, heads, kv_heads, vocab, seq_len))
        for k in ["emb", "rms_att", "wq", "wk", "wv", "wo", "rms_ffn", "w1", "w2", "w3", "rms_final"]:
            f.write(np.ascontiguousarray(t[k], dtype=np.float32).tobytes())
        f.write(np.zeros(seq_len * (dim // heads), dtype=np.float32).tobytes())  # legacy freq_cis
    os.replace(tmp, path)


def q8_groups(w, group):
    """Symmetric int8 per group of `group` consecutive values: codes in [-127, 127], scale max|w|/127."""
    g = np.asarray(w, dtype=np.float32).reshape(-1, group)
    scale = np.abs(g).max(axis=1) / np.float32(127.0)
    safe = np.where(scale == 0, np.float32(1.0), scale)
    codes = np.round(g / safe[:, None]).astype(np.int8)
    return codes.reshape(-1), scale.astype(np.float32)


def write_q8_checkpoint(path, shape, t, group=64):
    """llama2.c's version-2 (Q8_0) layout: 256-byte header (magic "ak42", version 2, the 7 config
    ints, shared-classifier byte, group size), the float norms, then per quantised tensor its
    int8 codes followed by its float scales."""
    dim, hidden, layers, heads, kv_heads, vocab, seq_len = shape
    while dim % group:
        group //= 2
    head = struct.pack("<Ii7iBi", 0x616B3432, 2, dim, hidden, layers, heads, kv_heads, vocab,
                       seq_len, 1, group)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head + b"\0" * (256 - len(head)))
        for k in ["rms_att", "rms_ffn"]:
            f.write(t[k].astype(np.float32).tobytes())
        f.write(t["rms_final"].astype(np.float32).tobytes())
        f.write(b"".join(x.tobytes() for x in q8_groups(t["emb"], group)))
        for k in ["wq", "wk", "wv", "wo", "w1", "w2", "w3"]:
            for layer in t[k]:
                codes, scale = q8_groups(layer, group)
                f.write(codes.tobytes())
                f.write(scale.tobytes())
    os.replace(tmp, path)


def prepare(cache, name, need_q8):
    os.makedirs(cache, exist_ok=True)
    tok = os.path.join(cache, "tok32000.bin")
    if not os.path.exists(tok):
        write_tokenizer(tok)
    ck = os.path.join(cache, "random_%s.bin" % name)
    q8 = os.path.join(cache, "random_%s_q80.bin" % name)
    shape = SHAPES[name]
    if not os.path.exists(ck) or (need_q8 and not os.path.exists(q8)):
        print("creating %s (and its Q8_0 export) in %s ..." % (ck, cache), file=sys.stderr, flush=True)
        t = random_tensors(shape, seed=1234 + len(name))
        if not os.path.exists(ck):
            write_float_checkpoint(ck, shape, t)
        if need_q8 and not os.path.exists(q8):
            write_q8_checkpoint(q8, shape, t)
        del t
    return ck, q8, tok


# ---- runs -----------------------------------------------------------------------------------

def run_measured(cmd):
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system) of one whole process. The RSS comes from /usr/bin/time
    (ru_maxrss of its own child): a child spawned directly from this Python process would
    inherit Python's high-water mark in ru_maxrss."""
    rss_file = os.path.join(RSS_DIR, "rss.txt")
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode(errors="replace")))
    with open(rss_file) as f:
        rss_kb, user, sys_ = f.read().split()[-3:]
    return wall, int(rss_kb) / 1024.0, float(user) + float(sys_)


def commands(args, row):
    name, kind, steps = row
    if name == "260K":
        ck = os.path.join(ROOT, "models", "stories260K.bin")
        tok = os.path.join(ROOT, "models", "tok512.bin")
        q8 = None
    else:
        ck, q8, tok = prepare(args.cache, name, kind == "int8")
    kv = [args.kvcim, "generate", "--model", ck, "--tokenizer", tok, "--temperature", "0",
          "--steps", str(steps), "--prompt", PROMPT]
    if kind == "int8":
        kv += ["--weights", "int8"]
        ll = [args.runq, q8, "-z", tok, "-t", "0", "-n", str(steps), "-i", PROMPT]
    else:
        ll = [args.run, ck, "-z", tok, "-t", "0", "-n", str(steps), "-i", PROMPT]
    return kv, ll


def measure(args, row):
    kv, ll = commands(args, row)
    run_measured(kv), run_measured(ll)  # warm the page cache
    tk, tl, ratios, cpu_ratios, rk, rl = [], [], [], [], [], []
    for i in range(args.pairs):
        if i % 2 == 0:
            a, ra, ca = run_measured(kv)
            b, rb, cb = run_measured(ll)
        else:
            b, rb, cb = run_measured(ll)
            a, ra, ca = run_measured(kv)
        tk.append(a), tl.append(b), ratios.append(a / b), rk.append(ra), rl.append(rb)
        cpu_ratios.append(ca / max(cb, 1e-3))
    return (statistics.median(tk), statistics.median(tl), statistics.median(ratios),
            statistics.median(cpu_ratios), max(rk), max(rl))


def smoke(args):
    """kvcim and run.c print the same greedy text on one small random checkpoint."""
    ck, _, tok = prepare(args.cache, "smoke", False)
    steps = "48"
    kv = [args.kvcim, "generate", "--model", ck, "--tokenizer", tok, "--temperature", "0",
          "--steps", steps, "--prompt", PROMPT]
    ll = [args.run, ck, "-z", tok, "-t", "0", "-n", steps, "-i", PROMPT]
    a = subprocess.run(kv, capture_output=True, check=True).stdout
    b = subprocess.run(ll, capture_output=True, check=True).stdout
    if a.strip() != b.strip() or len(a.strip()) < 20:
        sys.exit("side_by_side smoke: kvcim and run.c differ\nkvcim: %r\nrun.c: %r" % (a, b))
    print("side_by_side smoke: kvcim and run.c print the same %d bytes" % len(a.strip()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="llama2.c's run (float)")
    ap.add_argument("--runq", help="llama2.c's runq (int8 Q8_0); int8 rows are skipped without it")
    ap.add_argument("--kvcim", default=os.path.join(ROOT, "build", "kvcim"))
    ap.add_argument("--cache", help="folder of the generated checkpoints (default: <kvcim's dir>/side_by_side)")
    ap.add_argument("--pairs", type=int, default=7, help="paired runs per row (median)")
    ap.add_argument("--rows", default="260K,15M,110M", help="comma-separated subset of 260K,15M,110M")
    ap.add_argument("--kinds", default="float,int8", help="float, int8 or both")
    ap.add_argument("--smoke", action="store_true", help="tiny correctness check only (CTest)")
    args = ap.parse_args()
    args.run = os.path.abspath(args.run)
    args.runq = args.runq and os.path.abspath(args.runq)
    args.kvcim = os.path.abspath(args.kvcim)
    if not args.cache:
        args.cache = os.path.join(os.path.dirname(args.kvcim), "side_by_side")
    global RSS_DIR
    RSS_DIR = args.cache
    os.makedirs(RSS_DIR, exist_ok=True)
    if args.smoke:
        return smoke(args)
    steps = {"260K": 512, "15M": 256, "110M": 128}
    rows = []
    for kind in args.kinds.split(","):
        for name in args.rows.split(","):
            if kind == "int8" and (name == "260K" or not args.runq):
                continue
            rows.append((name, kind, steps[name]))
    print("load average before: %s" % open("/proc/loadavg").read().strip())
    print("| model | steps | weights | kvcim s | llama2.c s | kvcim / llama2.c (wall) | (CPU) | kvcim RSS MB | llama2.c RSS MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        k, l, r, c, rk, rl = measure(args, row)
        peer = "runq" if row[1] == "int8" else "run"
        print("| %s | %d | %s (vs %s) | %.3f | %.3f | **%.2fx** | %.2fx | %.0f | %.0f |" %
              (row[0], row[2], row[1], peer, k, l, r, c, rk, rl), flush=True)
    print("load average after: %s" % open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
