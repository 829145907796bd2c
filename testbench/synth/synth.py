#!/usr/bin/env python3
"""Synthesises the attention tile with Yosys to generic cells and reports, for the tile and each
unit in it, cells, flip-flops, logic depth and an area estimate (CTest rtl.synth;
docs/attention_tile.md, "Synthesis").

Fails (exit 1) on any latch, combinational loop, undriven net or multiple driver (`check -assert`
on the hierarchical and on the flattened netlist, `select -assert-none t:$dlatch t:$_DLATCH*`), or
a Yosys error.

Method (one Yosys run):
  * `synth -top cim_attention_tile` (hierarchy kept): generic gates ($_AND_, $_MUX_, $_XOR_, ...)
    and $_DFF_* flops, per module: the tile's glue, softmax_unit, the K and the V cim_macro;
    then `flatten` for the whole tile.
  * levels: `ltp -noff`, the longest path in gate levels between flops and ports (per module, and
    across modules on the flattened tile).
  * area: `stat -tech cmos` counts CMOS transistors of the generic gates; NAND2 equivalents =
    transistors / 4; um^2 = NAND2 equivalents x NAND2_UM2 (an assumed 28 nm-class NAND2X1).
    The macros' storage cells are counted as flip-flops (a real macro would use 6T/8T bit cells),
    so the area is an upper bound on the logic.

Usage: synth.py --yosys yosys --pkg <kvcim_tile_pkg.sv> --rtl <rtl dir> --out <report.json>
                [--netlist <file.v>]   (also write the gate-level netlist, hierarchical)
"""
import argparse
import json
import os
import re
import subprocess
import sys

NAND2_UM2 = 0.49  # um^2 per NAND2 equivalent: a 28 nm-class NAND2X1 (an assumption, documented)


def sections(text):
    """Yosys `stat` output split into {module name: section text}."""
    out = {}
    parts = re.split(r"^=== (.*?) ===$", text, flags=re.M)
    for i in range(1, len(parts) - 1, 2):
        out[parts[i].strip()] = parts[i + 1]
    return out


def figures(stat, cmos):
    cells = int(re.search(r"Number of cells:\s+(\d+)", stat).group(1))
    flops = sum(int(n) for n in re.findall(r"^\s+\$_S?DFFE?\w*\s+(\d+)", stat, flags=re.M))
    trans = int(re.search(r"Estimated number of transistors:\s+(\d+)", cmos).group(1))
    return {"cells": cells, "flip_flops": flops, "transistors": trans,
            "nand2_eq": round(trans / 4.0), "area_um2": round(trans / 4.0 * NAND2_UM2)}


def unit_name(module, p):
    if module == "cim_attention_tile":
        return "tile_glue"
    if "softmax_unit" in module:
        return "softmax_unit"
    if "cim_macro" in module:
        m = re.search(r"ROWS=s32'([01]+)", module)
        rows = int(m.group(1), 2) if m else None
        return "k_macro" if rows == p["HEAD_DIM"] else "v_macro"
    return module


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yosys", default="yosys")
    ap.add_argument("--pkg", required=True)
    ap.add_argument("--rtl", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--netlist")
    a = ap.parse_args()
    p = {m.group(1): int(m.group(2)) for m in
         re.finditer(r"localparam int (\w+) = (-?\d+);", open(a.pkg).read())}
    work = os.path.splitext(a.out)[0] + ".d"
    os.makedirs(work, exist_ok=True)
    src = [a.pkg] + [os.path.join(a.rtl, f) for f in
                     ("cim_macro.sv", "softmax_unit.sv", "cim_attention_tile.sv")]
    w = lambda n: os.path.join(work, n)
    script = [
        "read_verilog -defer -sv " + " ".join(src),
        "hierarchy -check -top cim_attention_tile",
        "synth -top cim_attention_tile",
        "check -assert",
        "select -assert-none t:$dlatch t:$_DLATCH*",
        f"tee -q -o {w('hier.stat')} stat",
        f"tee -q -o {w('hier.cmos')} stat -tech cmos",
        f"tee -q -o {w('hier.ltp')} ltp -noff",
    ]
    if a.netlist:
        script.append(f"write_verilog -noattr {a.netlist}")
    script += [
        "flatten",
        "check -assert",
        f"tee -q -o {w('flat.stat')} stat",
        f"tee -q -o {w('flat.cmos')} stat -tech cmos",
        f"tee -q -o {w('flat.ltp')} ltp -noff",
    ]
    with open(w("synth.ys"), "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run([a.yosys, "-q", "-l", w("yosys.log"), "-s", w("synth.ys")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"rtl.synth: yosys failed (log {w('yosys.log')}):\n{r.stdout[-4000:]}\n")
        return 1
    report = {"method": {"flow": "yosys 0.23 synth (generic gates), hierarchical, then flatten",
                         "levels": "ltp -noff (gate levels between flops/ports)",
                         "nand2_eq": "stat -tech cmos transistors / 4", "nand2_um2": NAND2_UM2},
              "params": {k: p[k] for k in ("HEAD_DIM", "TOKENS", "KV_BITS", "EXP_FRAC", "PROB_BITS")},
              "units": {}}
    stat = sections(open(w("hier.stat")).read())
    cmos = sections(open(w("hier.cmos")).read())
    ltp = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"Longest topological path in (\S+) \(length=(\d+)\)", open(w("hier.ltp")).read())}
    for module, text in stat.items():
        if module == "design hierarchy" or module not in cmos:
            continue
        name = unit_name(module.lstrip("\\"), p)
        res = figures(text, cmos[module])
        res["levels"] = next((v for k, v in ltp.items() if k.lstrip("\\") == module.lstrip("\\")), 0)
        report["units"][name] = res
    flat = figures(open(w("flat.stat")).read(), open(w("flat.cmos")).read())
    flat["levels"] = int(re.search(r"\(length=(\d+)\)", open(w("flat.ltp")).read()).group(1))
    report["units"]["cim_attention_tile"] = flat
    order = ["k_macro", "v_macro", "softmax_unit", "tile_glue", "cim_attention_tile"]
    for name in sorted(report["units"], key=lambda n: order.index(n) if n in order else 99):
        u = report["units"][name]
        print(f"{name:20s} cells {u['cells']:8d}  flops {u['flip_flops']:7d}  levels "
              f"{u['levels']:4d}  NAND2-eq {u['nand2_eq']:8d}  ~{u['area_um2']} um^2")
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"report: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
