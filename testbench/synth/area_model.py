#!/usr/bin/env python3
"""CTest rtl.synth.area_model: the mapper's attention-tile logic model (include/kvcim/mapper/
chip.hpp, kTileLogicFixedNand2 + kTileLogicPerTokenBitNand2 x tokens x prob_bits) against the
synthesis reports of every configuration (the rtl.synth.* tests' JSON).

The logic is the tile's softmax_unit plus its control (tile_glue), in NAND2 equivalents; the K and
V macros are left out (the area model prices their cells as memory bit cells). The test fits
a + b x tokens x prob_bits by least squares and fails when a configuration's synthesis misses the
fit by more than 8%, or when the header's constants are more than 2% from the fit (refit: the
command prints the new constants).

Usage: area_model.py --header include/kvcim/mapper/chip.hpp <build>/rtl_synth/*.json
"""
import argparse
import json
import re
import sys

FIT_TOLERANCE = 0.08       # a configuration's synthesis against the fit
CONSTANT_TOLERANCE = 0.02  # the header's constants against the fit


def header_constants(text):
    out = {}
    for name in ("kTileLogicFixedNand2", "kTileLogicPerTokenBitNand2"):
        m = re.search(r"constexpr\s+double\s+" + name + r"\s*=\s*([0-9.eE+-]+)\s*;", text)
        if not m:
            raise ValueError(f"no 'constexpr double {name} = N;' in the header")
        out[name] = float(m.group(1))
    return out


def fit(points):
    """Least squares y = a + b x over (x, y) points (at least two distinct x)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        raise ValueError("every configuration has the same tokens x prob_bits: nothing to fit")
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - b * mx, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--header", required=True)
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args()
    try:
        consts = header_constants(open(a.header).read())
        rows = []
        for path in a.reports:
            r = json.load(open(path))
            p, u = r["params"], r["units"]
            logic = u["softmax_unit"]["nand2_eq"] + u["tile_glue"]["nand2_eq"]
            rows.append((r["config"], p["TOKENS"] * p["PROB_BITS"], logic))
        if len(rows) < 3:
            raise ValueError(f"{len(rows)} synthesis reports: at least 3 needed to test a 2-term fit")
        fixed, per = fit([(x, y) for _, x, y in rows])
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        sys.stderr.write(f"rtl.synth.area_model: {e}\n")
        return 1
    bad = []
    for name, x, y in rows:
        model = consts["kTileLogicFixedNand2"] + consts["kTileLogicPerTokenBitNand2"] * x
        print(f"{name:20s} tokens x prob_bits {x:5d}  synthesised {y:8d} NAND2-eq  model {model:9.0f} "
              f"({model / y - 1:+.1%})")
        if abs((fixed + per * x) / y - 1) > FIT_TOLERANCE:
            bad.append(f"{name}: synthesised {y}, fit {fixed + per * x:.0f}")
    print(f"fit: {fixed:.0f} + {per:.1f} x tokens x prob_bits NAND2-eq; header: "
          f"{consts['kTileLogicFixedNand2']:g} + {consts['kTileLogicPerTokenBitNand2']:g}")
    for name, fitted in (("kTileLogicFixedNand2", fixed), ("kTileLogicPerTokenBitNand2", per)):
        if abs(consts[name] / fitted - 1) > CONSTANT_TOLERANCE:
            bad.append(f"{name} = {consts[name]:g} in {a.header}, the synthesis fits {fitted:.4g}")
    if bad:
        sys.stderr.write("rtl.synth.area_model: " + "; ".join(bad) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
