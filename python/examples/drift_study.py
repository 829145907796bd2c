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

    PYTHONPATH=build/python /usr/bin/python3 python/examples/drift_study.py [--out DIR]

The full-size figures are in docs/cim_macro.md ("Drift"); --steps, --eval-tokens and --times make
a quick run (the test runs it small).
"""
import argparse
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim.plot import interval_errorbar  # noqa: E402

SPEC = pathlib.Path(kvcim.default_hardware_spec_path()).parent / "reram_analog.yaml"
TIMES = {"1 s": 1.0, "1 h": 3600.0, "1 day": 86400.0, "1 year": 3.156e7}


def point(time_s, compensation, nu, nu_sigma, steps, eval_tokens):
    spec = kvcim.HardwareSpec.from_yaml(SPEC).to_dict()
    spec["macro"].update(drift_nu=nu, drift_nu_sigma=nu_sigma, drift_t0_s=1.0, drift_time_s=time_s,
                         drift_compensation=compensation)
    report = kvcim.run(spec=spec, steps=steps, eval_tokens=eval_tokens)
    ev = report.accuracy["evaluation"]
    return {"time_s": time_s, "compensation": compensation, "delta_nll": ev["delta_nll"],
            "kl_mean": ev["kl_mean"], "top1": ev["top1_agreement"], "tokens": ev["tokens"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="drift_study", help="output folder")
    parser.add_argument("--steps", type=int, default=64, help="generated positions per run")
    parser.add_argument("--eval-tokens", type=int, default=10000,
                        help="tokens sampled for the teacher-forced evaluation (plus the shipped text)")
    parser.add_argument("--times", default=",".join(TIMES), help="times after programming, of: " + ", ".join(TIMES))
    parser.add_argument("--nu", type=float, default=0.01, help="mean drift exponent (assumption)")
    parser.add_argument("--nu-sigma", type=float, default=0.005, help="its spread across cells (assumption)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    times = [t.strip() for t in args.times.split(",")]

    fresh = point(0.0, True, args.nu, args.nu_sigma, args.steps, args.eval_tokens)
    points = [dict(fresh, label="just programmed")]
    for comp in (False, True):
        for t in times:
            p = point(TIMES[t], comp, args.nu, args.nu_sigma, args.steps, args.eval_tokens)
            points.append(dict(p, label=t))
    (out / "results.json").write_text(json.dumps(points, indent=1) + "\n")

    print(f"drift nu ~ N({args.nu}, {args.nu_sigma}), t0 = 1 s")
    print(f"{'time':>16} {'compensation':>13} {'ΔNLL nats/token (95% CI)':>30} {'KL mean':>9} {'top-1':>7}")
    for p in points:
        d = p["delta_nll"]
        print(f"{p['label']:>16} {'global' if p['compensation'] else 'none':>13} {d['value']:>+10.4f} "
              f"[{d['ci_low']:+.4f}, {d['ci_high']:+.4f}] {p['kl_mean']['value']:>9.4f} "
              f"{p['top1']['value']:>7.4f}")

    fig, ax = plt.subplots(figsize=(7, 4))
    for comp, label in ((False, "no compensation"), (True, "global drift compensation")):
        pts = [p for p in points[1:] if p["compensation"] == comp]
        x = [p["time_s"] for p in pts]
        interval_errorbar(ax, x, [p["delta_nll"] for p in pts], marker="o", label=label)
    ax.axhline(fresh["delta_nll"]["value"], color="gray", linestyle="--", label="just programmed")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_xlabel("time after programming (s)")
    ax.set_ylabel("ΔNLL vs float (nats/token, 95% CI)")
    ax.set_title(f"stories260K on reram_analog, nu ~ N({args.nu}, {args.nu_sigma})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "drift_study.png", dpi=120)
    print(f"\nwrote {out / 'drift_study.png'}")


if __name__ == "__main__":
    main()
