"""Plots of kvcim results with matplotlib (Agg backend: files only, no display needed).

    python3 -m kvcim.plot results.jsonl --out DIR [--format png|svg]   # a sweep's results
    python3 -m kvcim.plot report.json   --out DIR                      # a run report / placement

Figures:
  energy_breakdown    energy per token by component, CIM against conventional compute
  accuracy_vs_adc     accuracy (top-1 agreement, KL) against ADC bits, one line per other setting
  pareto              the energy-accuracy Pareto front of a sweep
  utilisation         a map of macro utilisation for a placement
Each function takes plain data (dicts as kvcim writes them) and an output path whose extension
(.png or .svg) picks the format, and returns the path.
"""
import argparse
import math
import os
import sys

from . import explain_plot
from ._core import Error
from .figure_file import plt, save as _save

# Where each figure's numbers live in a result (flattened dotted keys), most specific first.
ENERGY_KEYS = ("energy.cim.per_token_pj", "energy.per_token_pj", "cim.energy_per_token_pj",
               "energy_per_token_pj", "energy.cim.total_pj", "energy_pj")
CONVENTIONAL_KEYS = ("energy.conventional.per_token_pj", "conventional.energy_per_token_pj",
                     "energy.conventional.total_pj")
ACCURACY_KEYS = ("accuracy.top1_agreement", "top1_agreement", "accuracy.kl_mean", "kl_mean",
                 "perplexity")
# Accuracy figures where lower is better.
LOWER_IS_BETTER = ("kl_mean", "kl_max", "perplexity", "nll", "max_abs_error", "mean_abs_error")


# --- data helpers (pure, tested) ---------------------------------------------------------------

def flatten(value, prefix=""):
    """{"a": {"b": 1}} -> {"a.b": 1}; lists are kept whole."""
    out = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = value
    return out


def pick(metrics, candidates):
    """The first candidate key present with a finite number: (key, value) or (None, None)."""
    for key in candidates:
        v = metrics.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return key, float(v)
    return None, None


def lower_is_better(key):
    return key is not None and key.split(".")[-1] in LOWER_IS_BETTER


def pareto_front(points, minimise_y=False):
    """Indices of the Pareto-optimal (x, y) points: x (energy) minimised, y (accuracy) maximised
    (or minimised), in order of increasing x. Ties in x keep the better y."""
    order = sorted(range(len(points)),
                   key=lambda i: (points[i][0], points[i][1] if minimise_y else -points[i][1]))
    front, best = [], None
    for i in order:
        y = points[i][1]
        if best is None or (y < best if minimise_y else y > best):
            front.append(i)
            best = y
    return front


def interval_errorbar(ax, x, intervals, **kwargs):
    """Points at x with their 95% intervals as error bars; intervals are the report's
    {"value", "ci_low", "ci_high"} dicts (e.g. accuracy.evaluation.delta_nll)."""
    y = [i["value"] for i in intervals]
    err = [[i["value"] - i["ci_low"] for i in intervals], [i["ci_high"] - i["value"] for i in intervals]]
    kwargs.setdefault("capsize", 3)
    return ax.errorbar(x, y, yerr=err, **kwargs)


def ok_records(records):
    return [r for r in records if r.get("status") == "ok" and isinstance(r.get("result"), dict)]


def _label(overrides, skip=()):
    parts = [f"{k.split('.')[-1]}={v}" for k, v in sorted(overrides.items()) if k not in skip]
    return ", ".join(parts) or "base"


# --- figures -------------------------------------------------------------------------------------

def _breakdown_of(side, per_token=True):
    """A {component: pJ} dict from a report's energy side (several shapes accepted); per
    generated token when the side gives both total_pj and per_token_pj."""
    if not isinstance(side, dict):
        return {}
    scale = 1.0
    total, each = side.get("total_pj"), side.get("per_token_pj")
    if per_token and isinstance(total, (int, float)) and isinstance(each, (int, float)) and total:
        scale = each / total
    for key in ("breakdown", "by_component", "energy_pj_by_component", "per_token_breakdown"):
        b = side.get(key)
        if isinstance(b, dict):
            out = {}
            for name, v in b.items():
                if isinstance(v, dict):
                    _, v = pick(v, ("per_token_pj", "total_pj", "energy_pj", "pj"))
                if isinstance(v, (int, float)) and v is not None:
                    out[name] = float(v) * scale
            return out
    return {}


def energy_breakdown(report, out, title=None):
    """Stacked bars of energy per token by component, CIM against conventional compute.

    report: a run report (its "energy" holds "cim" and "conventional", each with totals and a
    breakdown by component), or a mapping {label: {component: pJ}} of bars to draw (many bars
    are drawn horizontally, one labelled row each)."""
    energy = report.get("energy", report)
    if isinstance(energy, dict) and any(isinstance(energy.get(k), dict) and
                                        ("total_pj" in energy[k] or "breakdown" in energy[k])
                                        for k in ("cim", "conventional")):
        bars = {name: _breakdown_of(energy[name]) for name in ("cim", "conventional")
                if name in energy}
    else:
        bars = {k: v for k, v in energy.items() if isinstance(v, dict)}
    if not bars or not any(bars.values()):
        raise Error("plot: energy = missing: expected energy.cim / energy.conventional with a "
                    "breakdown by component")
    components = []
    for b in bars.values():
        components += [c for c in b if c not in components]
    labels = list(bars)
    horizontal = len(labels) > 3
    if horizontal:
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.42 * len(labels)))
    else:
        fig, ax = plt.subplots(figsize=(max(4.5, 1.6 * len(bars) + 3), 4.2))
    starts = [0.0] * len(bars)
    colours = plt.get_cmap("tab10" if len(components) <= 10 else "tab20")
    positions = range(len(labels))
    for ci, comp in enumerate(components):
        values = [bars[b].get(comp, 0.0) for b in labels]
        if horizontal:
            ax.barh(positions, values, left=starts, label=comp, color=colours(ci % 20))
        else:
            ax.bar(positions, values, bottom=starts, label=comp, color=colours(ci % 20))
        starts = [b + v for b, v in zip(starts, values)]
    for i, total in enumerate(starts):
        if horizontal:
            ax.annotate(f" {total:.3g} pJ", (total, i), ha="left", va="center", fontsize=7)
        else:
            ax.annotate(f"{total:.3g} pJ", (i, total), ha="center", va="bottom", fontsize=8)
    if horizontal:
        ax.set_yticks(list(positions), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("energy per token (pJ)")
        ax.set_xlim(0, max(starts) * 1.18)
    else:
        ax.set_xticks(list(positions), labels)
        ax.set_ylabel("energy per token (pJ)")
    if len(starts) == 2 and min(starts) > 0:
        ratio = max(starts) / min(starts)
        ax.set_title(title or f"Energy per token by component ({ratio:.1f}x between the two)")
    else:
        ax.set_title(title or "Energy per token by component")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, out)


def accuracy_vs_adc(records, out, accuracy_key=None, adc_key=None):
    """Accuracy against ADC bits, one line per combination of the other swept settings."""
    recs = ok_records(records)
    if adc_key is None:
        adc_keys = sorted({k for r in recs for k in r.get("overrides", {})
                           if k.endswith("adc_bits")})
        if not adc_keys:
            raise Error("plot: overrides = no adc_bits: the sweep does not vary ADC bits")
        adc_key = adc_keys[0]
    lines = {}
    ylabel = None
    for r in recs:
        ov = r.get("overrides", {})
        if adc_key not in ov:
            continue
        key, y = pick(flatten(r["result"]), (accuracy_key,) if accuracy_key else ACCURACY_KEYS)
        if key is None:
            continue
        ylabel = ylabel or key
        lines.setdefault(_label(ov, skip=(adc_key,)), []).append((ov[adc_key], y))
    if not lines:
        raise Error("plot: result = no accuracy: expected an accuracy figure such as "
                    "accuracy.top1_agreement in the sweep's results")
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for label, pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xlabel(adc_key.split(".")[-1].replace("_", " "))
    ax.set_ylabel(ylabel)
    ax.set_title("Accuracy against ADC resolution")
    ax.grid(True, alpha=0.3)
    if len(lines) > 1:
        ax.legend(fontsize=7, loc="best")
    return _save(fig, out)


def pareto(records, out, energy_key=None, accuracy_key=None):
    """Energy per token against accuracy for every point; the Pareto front drawn and labelled."""
    recs = ok_records(records)
    pts, labels, ek, ak = [], [], None, None
    for r in recs:
        m = flatten(r["result"])
        k1, x = pick(m, (energy_key,) if energy_key else ENERGY_KEYS)
        k2, y = pick(m, (accuracy_key,) if accuracy_key else ACCURACY_KEYS)
        if k1 is None or k2 is None:
            continue
        ek, ak = ek or k1, ak or k2
        pts.append((x, y))
        labels.append(_label(r.get("overrides", {})))
    if not pts:
        raise Error("plot: result = no energy and accuracy: the Pareto front needs both (a "
                    "sweep of evaluate: run)")
    minimise = lower_is_better(ak)
    front = pareto_front(pts, minimise_y=minimise)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], color="0.6", s=18, label="points")
    fx = [pts[i][0] for i in front]
    fy = [pts[i][1] for i in front]
    ax.plot(fx, fy, color="C3", marker="o", label="Pareto front")
    for i in front[:12]:
        ax.annotate(labels[i], pts[i], fontsize=6, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel(ek)
    ax.set_ylabel(ak + (" (lower is better)" if minimise else ""))
    ax.set_title(f"Energy-accuracy trade-off ({len(front)} of {len(pts)} points optimal)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, out)


def _macros_of(placement):
    for key in ("macro_map", "macros", "macro_utilisation", "utilisation_per_macro"):
        v = placement.get(key)
        if isinstance(v, list) and v:
            return v
    return None


def utilisation_map(placement, out, title=None):
    """A heat map of macro utilisation (fraction of cells holding data), macros laid out on a
    near-square grid in index order; unused macros show as 0."""
    import numpy as np
    macros = _macros_of(placement)
    if macros is None:
        raise Error("plot: placement = no macros: expected a placement dict with a 'macros' list")
    util = []
    for m in macros:
        if isinstance(m, dict):
            _, u = pick(m, ("utilisation", "utilization", "used_fraction"))
            util.append(u if u is not None else 0.0)
        else:
            util.append(float(m))
    n = len(util)
    cols = int(math.ceil(math.sqrt(n)))
    rows = int(math.ceil(n / cols))
    grid = np.full((rows, cols), np.nan)
    grid.flat[:n] = util
    fig, ax = plt.subplots(figsize=(min(12, 1.5 + 0.35 * cols), min(10, 1.2 + 0.35 * rows)))
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
    fig.colorbar(image, ax=ax, label="utilisation")
    ax.set_title(title or f"Macro utilisation ({n} macros, mean {np.mean(util):.0%})")
    ax.set_xticks([])
    ax.set_yticks([])
    return _save(fig, out)


# --- command line --------------------------------------------------------------------------------

def plot_file(path, out_dir, fmt="png"):
    """Every figure the file supports; returns the paths written."""
    from . import results
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise Error(f"{path}: file = missing: no such results file")
    written, reasons = [], []

    def attempt(fn, *args):
        try:
            written.append(fn(*args))
        except Error as e:
            reasons.append(str(e))

    if path.endswith(".jsonl"):
        records = results.load(path)
        if not records:
            raise Error(f"{path}: records = 0: no sweep records in the file")
        attempt(pareto, records, os.path.join(out_dir, f"pareto.{fmt}"))
        attempt(accuracy_vs_adc, records, os.path.join(out_dir, f"accuracy_vs_adc.{fmt}"))
        # CIM per point (at most 16, cheapest first), then the conventional engine once.
        bars, conventional = {}, None
        recs = [r for r in ok_records(records) if isinstance(r["result"].get("energy"), dict)]
        recs.sort(key=lambda r: pick(flatten(r["result"]), ENERGY_KEYS)[1] or 0.0)
        for r in recs[:16]:
            energy = r["result"]["energy"]
            b = _breakdown_of(energy.get("cim"))
            if b:
                bars["CIM " + _label(r.get("overrides", {}))] = b
            conventional = conventional or _breakdown_of(energy.get("conventional"))
        if bars and conventional:
            bars["conventional compute"] = conventional
        if bars:
            attempt(energy_breakdown, bars, os.path.join(out_dir, f"energy_breakdown.{fmt}"))
        placements = [r["result"]["placement"] for r in ok_records(records)
                      if isinstance(r["result"].get("placement"), dict)]
        if placements:
            attempt(utilisation_map, placements[0], os.path.join(out_dir, f"utilisation.{fmt}"))
    else:
        import json
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except ValueError as e:
            raise Error(f"{path}: json = invalid: {e}") from None
        if not isinstance(data, dict):
            raise Error(f"{path}: json = {type(data).__name__}: expected an object")
        if explain_plot.is_explain(data):
            for fig in (explain_plot.attention_heatmap, explain_plot.kv_and_traffic,
                        explain_plot.energy_per_step):
                attempt(fig, data, os.path.join(out_dir, f"{fig.__name__}.{fmt}"))
        elif "energy" in data:
            attempt(energy_breakdown, data, os.path.join(out_dir, f"energy_breakdown.{fmt}"))
        placement = data.get("placement", data)
        if isinstance(placement, dict) and _macros_of(placement):
            attempt(utilisation_map, placement, os.path.join(out_dir, f"utilisation.{fmt}"))
    if not written:
        raise Error(f"{path}: figures = none: nothing to plot"
                    + (f" ({reasons[0]})" if reasons else ""))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m kvcim.plot",
                                     description="Plot kvcim results to PNG or SVG files.")
    parser.add_argument("input", help="sweep results (.jsonl), a run report or placement (.json)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--format", choices=("png", "svg"), default="png")
    args = parser.parse_args(argv)
    try:
        for path in plot_file(args.input, args.out, args.format):
            print(path)
    except Error as e:
        print(f"kvcim.plot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
