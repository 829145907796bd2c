"""Drift study: non-volatile weight cells drift after programming, G(t) = G0 (t / t0)^-nu, with nu
spread from cell to cell. How much accuracy is left a second, an hour, a day and a year after the
weights were written? Measured on the embedded model (stories260K) by simulating the ReRAM macros
of configs/hw/reram_analog.yaml in `kvcim run`, every weight cell drifted to the chosen time,
with and without global drift compensation (the reads rescaled by the mean drift, as aihwkit
compensates; only the spread of nu is then left). nu's mean (0.01) and spread (0.005) are an
assumption (energy-numbers.md has no drift row): a fifth of the drift exponents reported for
phase-change memory (~0.05), for ReRAM, whose conductance relaxes less; --nu and --nu-sigma change
them. Accuracy: the teacher-forced ΔNLL and KL against the float reference, with 95%
bootstrap intervals.

The KV cache drifts too when its cells are non-volatile (ReRAM or PCM KV cells): each token's K
and V cells drift with the time since THAT token was written. Second part: the analog KV tile of
configs/hw/gain_cell_kv.yaml with non-volatile cells of the same nu (kv.drift_nu,
kv.drift_nu_sigma; its energy stays the gain-cell table's), its weights digital SRAM (so only the
KV drifts). A context spans the time t: one token every t / 512 (the model's context), so the
oldest token a position reads is up to t old and the newest just written (tokens younger than
t0 = 1 s do not drift: at 1 s nothing has). Each with and without global compensation (each
token's reads rescaled by its mean drift, knowing its write time), and uncompensated with every
token re-programmed every --kv-refresh-s (its clock restarts; the rewrites are counted as cell
writes).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/drift_study.py [--out DIR]

The full-size figures are in docs/cim_macro.md ("Drift"); --steps, --eval-tokens and --times make
a quick run (the test runs it small); the KV part's figures are in docs/attention_tile.md
("Drift of non-volatile KV cells").
"""
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim.plot import interval_errorbar  # noqa: E402
from study_cli import (study_parser, parse_study_args, save_figure, accuracy_text,  # noqa: E402
                       ACCURACY_HEADINGS, finish_axes)

SPEC = pathlib.Path(kvcim.default_hardware_spec_path()).parent / "reram_analog.yaml"
KV_SPEC = pathlib.Path(kvcim.default_hardware_spec_path()).parent / "gain_cell_kv.yaml"
KV_OPS = ("attn_scores", "softmax", "attn_weighted_sum", "kv_write")
CONTEXT = 512  # stories260K's context: a context of tokens spans the time t
TIMES = {"1 s": 1.0, "1 h": 3600.0, "1 day": 86400.0, "1 year": 3.156e7}


def point(time_s, compensation, nu, nu_sigma, steps, eval_tokens, options):
    spec = kvcim.HardwareSpec.from_yaml(SPEC).to_dict()
    spec["macro"].update(drift_nu=nu, drift_nu_sigma=nu_sigma, drift_t0_s=1.0, drift_time_s=time_s,
                         drift_compensation=compensation)
    report = kvcim.run(spec=spec, steps=steps, eval_tokens=eval_tokens, **options)
    ev = report.accuracy["evaluation"]
    return {"time_s": time_s, "compensation": compensation, "delta_nll": ev["delta_nll"],
            "kl_mean": ev["kl_mean"], "top1": ev["top1_agreement"], "tokens": ev["tokens"]}


def kv_point(time_s, compensation, refresh_s, nu, nu_sigma, steps, eval_tokens, options):
    """KV cells drifting: a context spans time_s (0: the cells without drift); refresh_s: every
    token re-programmed that often (0: never)."""
    spec = kvcim.HardwareSpec.from_yaml(KV_SPEC).to_dict()
    spec["kv"].update(drift_nu=nu if time_s else 0.0, drift_nu_sigma=nu_sigma if time_s else 0.0,
                      drift_t0_s=1.0, drift_compensation=compensation,
                      token_interval_ns=(time_s or 1.0) * 1e9 / CONTEXT, refresh_ns=refresh_s * 1e9)
    report = kvcim.run(spec=spec, steps=steps, eval_tokens=eval_tokens, **options)
    ev = report.accuracy["evaluation"]
    energy = report.energy
    writes = energy["simulated_events"]["by_op"]
    kv_writes = sum(writes.get(op, {}).get("cell_write", 0) for op in KV_OPS) / energy["forward_passes"]
    return {"time_s": time_s, "compensation": compensation, "refresh_s": refresh_s,
            "delta_nll": ev["delta_nll"], "kl_mean": ev["kl_mean"], "top1": ev["top1_agreement"],
            "tokens": ev["tokens"], "kv_cell_writes_per_token": kv_writes}


def main():
    parser = study_parser(__doc__, "drift_study", steps=64,
                          eval_help="tokens sampled for the teacher-forced evaluation (plus the shipped text)")
    parser.add_argument("--times", default=",".join(TIMES), help="times after programming, of: " + ", ".join(TIMES))
    parser.add_argument("--nu", type=float, default=0.01, help="mean drift exponent (assumption)")
    parser.add_argument("--nu-sigma", type=float, default=0.005, help="its spread across cells (assumption)")
    parser.add_argument("--kv-refresh-s", type=float, default=3600.0,
                        help="KV part: re-program every token this often (the refreshed runs)")
    parser.add_argument("--eval-text", default=None,
                        help="evaluation text (default: the shipped one; an empty string: none)")
    parser.add_argument("--replot", action="store_true",
                        help="no runs: print and plot the results.json and kv_results.json in --out")
    args, out = parse_study_args(parser)
    times = [t.strip() for t in args.times.split(",")]

    if args.replot:
        points = json.loads((out / "results.json").read_text())
        kv_points = json.loads((out / "kv_results.json").read_text())
    else:
        points, kv_points = run_all(args, out, times)
    show(args, out, points, kv_points)


def run_all(args, out, times):
    options = {} if args.eval_text is None else {"eval_text_path": args.eval_text}
    fresh = point(0.0, True, args.nu, args.nu_sigma, args.steps, args.eval_tokens, options)
    points = [dict(fresh, label="just programmed")]
    for comp in (False, True):
        for t in times:
            p = point(TIMES[t], comp, args.nu, args.nu_sigma, args.steps, args.eval_tokens, options)
            points.append(dict(p, label=t))
    (out / "results.json").write_text(json.dumps(points, indent=1) + "\n")

    kv_fresh = kv_point(0.0, True, 0.0, args.nu, args.nu_sigma, args.steps, args.eval_tokens, options)
    kv_points = [dict(kv_fresh, label="just written")]
    for comp, refresh in ((False, 0.0), (True, 0.0), (False, args.kv_refresh_s)):
        for t in times:
            p = kv_point(TIMES[t], comp, refresh, args.nu, args.nu_sigma, args.steps, args.eval_tokens, options)
            kv_points.append(dict(p, label=t))
    (out / "kv_results.json").write_text(json.dumps(kv_points, indent=1) + "\n")
    return points, kv_points


def show(args, out, points, kv_points):
    fresh, kv_fresh = points[0], kv_points[0]

    print(f"drift nu ~ N({args.nu}, {args.nu_sigma}), t0 = 1 s")
    print(f"{'time':>16} {'compensation':>13} {ACCURACY_HEADINGS} {'top-1':>7}")
    for p in points:
        print(f"{p['label']:>16} {'global' if p['compensation'] else 'none':>13} {accuracy_text(p)} "
              f"{p['top1']['value']:>7.4f}")
    print(f"\nKV cells (gain_cell_kv's analog tile, non-volatile), nu ~ N({args.nu}, {args.nu_sigma}), "
          f"t0 = 1 s, a context of {CONTEXT} tokens spanning the time")
    print(f"{'time':>16} {'compensation':>13} {'refresh':>8} {ACCURACY_HEADINGS} "
          f"{'top-1':>7} {'KV cell writes/token':>21}")
    for p in kv_points:
        refresh = f"{p['refresh_s']:g} s" if p["refresh_s"] else "none"
        print(f"{p['label']:>16} {'global' if p['compensation'] else 'none':>13} {refresh:>8} "
              f"{accuracy_text(p)} "
              f"{p['top1']['value']:>7.4f} {p['kv_cell_writes_per_token']:>21.4g}")

    fig, (ax, kv_ax) = plt.subplots(1, 2, figsize=(13, 4))
    for comp, label in ((False, "no compensation"), (True, "global drift compensation")):
        pts = [p for p in points[1:] if p["compensation"] == comp]
        x = [p["time_s"] for p in pts]
        interval_errorbar(ax, x, [p["delta_nll"] for p in pts], marker="o", label=label)
    ax.axhline(fresh["delta_nll"]["value"], color="gray", linestyle="--", label="just programmed")
    ax.set_yscale("symlog", linthresh=0.1)
    finish_axes(ax, "time after programming (s)", "ΔNLL vs float (nats/token, 95% CI)",
                f"stories260K on reram_analog, nu ~ N({args.nu}, {args.nu_sigma})", xscale="log")
    for comp, refresh, label in ((False, 0.0, "no compensation"), (True, 0.0, "global drift compensation"),
                                 (False, args.kv_refresh_s, f"re-programmed every {args.kv_refresh_s:g} s")):
        pts = [p for p in kv_points[1:] if p["compensation"] == comp and p["refresh_s"] == refresh]
        interval_errorbar(kv_ax, [p["time_s"] for p in pts], [p["delta_nll"] for p in pts], marker="o",
                          label=label)
    kv_ax.axhline(kv_fresh["delta_nll"]["value"], color="gray", linestyle="--", label="no drift")
    finish_axes(kv_ax, f"time a context spans (s; one token every t / {CONTEXT})",
                "ΔNLL vs float (nats/token, 95% CI)",
                f"drifting KV cells (gain_cell_kv tile), nu ~ N({args.nu}, {args.nu_sigma})", xscale="log")
    save_figure(fig, out / "drift_study.png")


if __name__ == "__main__":
    main()
