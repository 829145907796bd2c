"""KV retention study: gain-cell KV tiles lose charge, so a K or V level written at w reads at t
as level x exp(-(t - w) / tau). How long must the cells hold their charge, and what does refresh
cost? Measured on the embedded model (stories260K) by simulating the analog gain-cell tile of
configs/hw/gain_cell_kv.yaml in `kvcim run`, one token every `--interval-ns` (an assumption: a
decode step of 1 us), with the retention time constant tau a multiple of that interval, with no
refresh and with every token written back each tau/10 (its decay then stays above exp(-0.1)).
For each: the teacher-forced accuracy against the float reference (ΔNLL and KL with 95%
bootstrap intervals), the KV attention energy per token (it also moves with the generation's
length: a run whose story ends early attends over shorter contexts) and the cell writes with
their energy, appends and refreshes (the refresh's cost).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/kv_retention_study.py [--out DIR]

The full-size figures are in docs/attention_tile.md ("Retention and refresh"); --steps,
--eval-tokens and --taus make a quick run (the test runs it small).
"""
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim.plot import interval_errorbar  # noqa: E402
from study_cli import (study_parser, parse_study_args, save_figure, accuracy_text,  # noqa: E402
                       ACCURACY_HEADINGS, finish_accuracy_energy)

KV_OPS = ("attn_scores", "softmax", "attn_weighted_sum", "kv_write")
SPEC = pathlib.Path(kvcim.default_hardware_spec_path()).parent / "gain_cell_kv.yaml"


def point(tau_tokens, refresh, interval_ns, steps, eval_tokens):
    """One run: retention tau (in token intervals; 0: no decay), refresh each tau/10 or none."""
    spec = kvcim.HardwareSpec.from_yaml(SPEC).to_dict()
    tau_ns = tau_tokens * interval_ns
    spec["kv"].update(retention_ns=tau_ns, refresh_ns=tau_ns / 10 if refresh and tau_ns else 0.0,
                      token_interval_ns=interval_ns)
    report = kvcim.run(spec=spec, steps=steps, eval_tokens=eval_tokens)
    ev = report.accuracy["evaluation"]
    energy = report.energy
    passes = energy["forward_passes"]
    kv_pj = sum(energy["cim"]["by_op"].get(op, 0.0) for op in KV_OPS) / passes
    writes = energy["simulated_events"]["by_op"]
    kv_writes = sum(writes.get(op, {}).get("cell_write", 0) for op in KV_OPS) / passes
    write_pj = energy["cim"]["breakdown"]["cell_write"] / passes  # K/V appends and refreshes
    return {"tau_tokens": tau_tokens, "refresh": bool(refresh and tau_ns),
            "kv_write_pj_per_token": write_pj,
            "delta_nll": ev["delta_nll"], "kl_mean": ev["kl_mean"],
            "tokens": len(ev["per_token"]["kl"]), "kv_pj_per_token": kv_pj,
            "kv_cell_writes_per_token": kv_writes}


def main():
    parser = study_parser(__doc__, "kv_retention_study", steps=256,
                          eval_help="tokens sampled for the teacher-forced evaluation (plus the shipped text)")
    parser.add_argument("--taus", default="1000,300,100,30,10",
                        help="retention time constants in token intervals")
    parser.add_argument("--interval-ns", type=float, default=1000.0,
                        help="time between two tokens of a sequence (assumption)")
    args, out = parse_study_args(parser)
    taus = [float(t) for t in args.taus.split(",")]

    base = point(0, False, args.interval_ns, args.steps, args.eval_tokens)
    points = [base] + [point(t, r, args.interval_ns, args.steps, args.eval_tokens)
                       for r in (False, True) for t in taus]
    (out / "results.json").write_text(json.dumps(points, indent=1) + "\n")

    print(f"{'tau (tokens)':>12} {'refresh':>8} {ACCURACY_HEADINGS} "
          f"{'KV pJ/token':>12} {'KV cell writes/token':>21} {'writes pJ/token':>16}")
    for p in points:
        tau = f"{p['tau_tokens']:g}" if p["tau_tokens"] else "no decay"
        print(f"{tau:>12} {'tau/10' if p['refresh'] else 'none':>8} {accuracy_text(p)} "
              f"{p['kv_pj_per_token']:>12.4g} {p['kv_cell_writes_per_token']:>21.4g} "
              f"{p['kv_write_pj_per_token']:>16.4g}")

    fig, (acc, energy) = plt.subplots(1, 2, figsize=(11, 4))
    for refresh, label in ((False, "no refresh"), (True, "refresh every tau/10")):
        pts = [p for p in points if p["tau_tokens"] and p["refresh"] == refresh]
        x = [p["tau_tokens"] for p in pts]
        interval_errorbar(acc, x, [p["delta_nll"] for p in pts], marker="o", label=label)
        energy.plot(x, [p["kv_write_pj_per_token"] for p in pts], marker="o", label=label)
    xlabel = f"retention time constant (token intervals of {args.interval_ns:g} ns)"
    finish_accuracy_energy(acc, energy, base, "kv_write_pj_per_token", "K/V cell writes per token (pJ)",
                           f"stories260K, gain-cell KV tile, {args.steps} steps", xlabel, "no decay",
                           xscale="log")
    save_figure(fig, out / "kv_retention_study.png")


if __name__ == "__main__":
    main()
