#!/usr/bin/python3
"""The RTL tile at any geometry against the C-model tile, through `kvcim run`.

For each head_dim and KV width asked for: a random llama2.c checkpoint of that head_dim (2 layers,
dim = 2 * head_dim, vocab 512 for the embedded tokenizer), the default hardware spec with the KV
width changed, run with --attention-backend cim and twice with --attention-backend rtl (the first
run builds the tile into the cache unless it is prebuilt, the second loads it). The whole --json
reports (tokens, texts, each step's KL and logit errors, the evaluation on a one-line text plus 16
sampled tokens, every event count and the energy priced from them) are compared, the backend's
name aside; the table goes to stdout.

  scripts/rtl_any_geometry.py [--kvcim build/kvcim] [--head-dims 128,80,64,48,32,16]
                              [--kv-bits 2,4,8] [--cache DIR] [--work DIR]

Exit 0 when every pair is identical, 1 otherwise. KVCIM_RTL_CACHE is set to --cache, by default a
folder under --work emptied first, so that first runs build. CTest runs it as rtl.any_geometry
(label deep: `make test-deep`).
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import random
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_checkpoint(path, head_dim, seed):
    """A llama2.c checkpoint with random weights (scaled by 1/sqrt(fan-in); norms near 1)."""
    dim, hidden, layers, heads, vocab, seq = 2 * head_dim, 4 * head_dim, 2, 2, 512, 128
    rng = random.Random(seed)

    def mat(rows, cols):
        scale = 1.0 / cols ** 0.5
        return array("f", (rng.uniform(-1, 1) * scale for _ in range(rows * cols)))

    def norm(n):
        return array("f", (1 + 0.1 * rng.uniform(-1, 1) for _ in range(n)))

    parts = [mat(vocab, dim)]
    parts += [norm(dim) for _ in range(layers)]
    for shape in [(dim, dim), (dim, dim), (dim, dim), (dim, dim)]:  # wq, wk, wv, wo
        parts += [mat(*shape) for _ in range(layers)]
    parts += [norm(dim) for _ in range(layers)]
    for shape in [(hidden, dim), (dim, hidden), (hidden, dim)]:  # w1, w2, w3
        parts += [mat(*shape) for _ in range(layers)]
    parts += [norm(dim), array("f", bytes(4 * seq * head_dim))]  # rms_final, legacy freq_cis
    with open(path, "wb") as f:
        f.write(struct.pack("7i", dim, hidden, layers, heads, heads, vocab, seq))
        for p in parts:
            f.write(p.tobytes())


def write_spec(path, kv_bits):
    base = os.path.join(ROOT, "configs", "hw", "sram_digital.yaml")
    text = open(base).read()
    text, n = re.subn(r"(\n\s*kv_bits:\s*)\d+", r"\g<1>%d" % kv_bits, text, count=1)
    assert n == 1, "kv_bits not found in " + base
    # the spec's technology tables are relative to its folder
    text = re.sub(r"(technology:\s*)\.\./", r"\g<1>" + os.path.join(ROOT, "configs") + "/", text)
    with open(path, "w") as f:
        f.write(text)


EVAL_TEXT = ""  # a short evaluation text (main() writes it): the evaluation's sequences stay few


# 80 steps: two 64-token tiles per stream (the checkpoints' context is 128)
def run(kvcim, model, spec, backend, out, env):
    cmd = [kvcim, "run", "--model", model, "--hw", spec, "--attention-backend", backend, "--steps", "80",
           "--eval-tokens", "16", "--eval-text", EVAL_TEXT, "--quiet", "--json", out]
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + p.stderr.strip())
    with open(out) as f:
        return json.load(f), seconds


def essentials(report):
    """The whole report but the backend's name: tokens, texts, each step's KL and errors, every
    event count and the energy priced from them must all agree."""
    report = json.loads(json.dumps(report))
    del report["options"]["attention_backend"]
    return report


def cached(cache):
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvcim", default=os.path.join(ROOT, "build", "kvcim"))
    ap.add_argument("--head-dims", default="128,80,64,48,32,16")
    ap.add_argument("--kv-bits", default="2,4,8")
    ap.add_argument("--work", default="/tmp/kvcim_rtl_any_geometry")
    ap.add_argument("--cache", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    global EVAL_TEXT
    EVAL_TEXT = os.path.join(a.work, "eval.txt")
    with open(EVAL_TEXT, "w") as f:
        f.write("Lily saw a big dog. The dog was happy.\n")
    env = dict(os.environ)
    env["KVCIM_RTL_CACHE"] = a.cache or os.path.join(a.work, "cache")
    if not a.cache:  # the work folder's own cache starts empty, so that first runs build
        shutil.rmtree(env["KVCIM_RTL_CACHE"], ignore_errors=True)
    print("cache: " + env["KVCIM_RTL_CACHE"], flush=True)
    print("| head_dim | KV bits | tile | identical (tokens, KL, events) | C model run s | RTL 1st run s | RTL 2nd run s |")
    print("|---|---|---|---|---|---|---|", flush=True)
    ok = True
    for hd in [int(x) for x in a.head_dims.split(",")]:
        model = os.path.join(a.work, "hd%d.bin" % hd)
        write_checkpoint(model, hd, seed=hd)
        for kv in [int(x) for x in a.kv_bits.split(",")]:
            spec = os.path.join(a.work, "kv%d.yaml" % kv)
            write_spec(spec, kv)
            tile = "hd%d_t64_kv%d_p12" % (hd, kv)
            try:
                c, tc = run(a.kvcim, model, spec, "cim", os.path.join(a.work, "cim.json"), env)
                before = cached(env["KVCIM_RTL_CACHE"])
                r1, t1 = run(a.kvcim, model, spec, "rtl", os.path.join(a.work, "rtl1.json"), env)
                built = "built" if cached(env["KVCIM_RTL_CACHE"]) != before else "prebuilt"
                r2, t2 = run(a.kvcim, model, spec, "rtl", os.path.join(a.work, "rtl2.json"), env)
            except RuntimeError as e:
                ok = False
                print("| %d | %d | %s | error: %s | | | |" % (hd, kv, tile, e), flush=True)
                continue
            same = essentials(c) == essentials(r1) == essentials(r2) 
            ok = ok and same
            print("| %d | %d | %s | %s | %.1f | %.1f (%s) | %.1f |" % (hd, kv, tile, "yes" if same else "NO", tc, t1,
                                                                    built, t2),
                  flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
