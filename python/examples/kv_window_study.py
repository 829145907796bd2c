"""KV window study: how much of the KV cache a CIM chip must keep, and which part, measured on
the embedded model (stories260K, context 512) by simulating the windows in `kvcim run`:
sliding windows of whole 64-token attention tiles, with a sink tile (StreamingLLM), or with
heavy-hitter eviction per tile (H2O). For each, the teacher-forced accuracy against the float
reference with full attention (ΔNLL and KL with 95% bootstrap intervals) and the CIM energy per
token of KV attention (scores, softmax, weighted sum, K/V writes).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/kv_window_study.py [--out DIR]

The full-size figures are in docs/mapper.md ("Windows in kvcim run, measured"); --steps,
--eval-tokens and --windows make a quick run (the test runs it small).
"""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim.plot import interval_errorbar  # noqa: E402
from study_cli import study_parser, parse_study_args, save_figure, interval_text, finish_accuracy_energy  # noqa: E402

# the operations of KV attention in the energy breakdown (report.energy["cim"]["by_op"], pJ)
KV_OPS = ("attn_scores", "softmax", "attn_weighted_sum", "kv_write")
RULES = {"oldest": "", "sink tile": ",sinks=64", "h2o": ",evict=h2o"}


def point(window, rule, steps, eval_tokens):
    """One run: window tokens kept per stream (0: all) under a rule; its figures."""
    policy = f"window={window}{RULES[rule]}" if window else None
    report = kvcim.run(policy=policy, steps=steps, eval_tokens=eval_tokens)
    ev = report.accuracy["evaluation"]
    cim = report.energy["cim"]
    kv_pj = sum(cim["by_op"].get(op, 0.0) for op in KV_OPS) / report.energy["forward_passes"]
    return {"window": window, "rule": rule, "policy": policy or "full attention",
            "delta_nll": ev["delta_nll"], "kl_mean": ev["kl_mean"],
            "tokens": len(ev["per_token"]["kl"]), "kv_pj_per_token": kv_pj,
            "cim_pj_per_token": cim["per_token_pj"]}


def main():
    parser = study_parser(__doc__, "kv_window_study", steps=512,
                          eval_help="tokens sampled for the teacher-forced evaluation (plus the shipped text)")
    parser.add_argument("--windows", default="128,192,256,384",
                        help="window sizes in tokens (multiples of the 64-token tile)")
    args, out = parse_study_args(parser)
    windows = [int(w) for w in args.windows.split(",")]

    full = point(0, "oldest", args.steps, args.eval_tokens)
    points = [full]
    for rule in RULES:
        for w in windows:
            if rule == "sink tile" and w <= 64:
                continue  # the window must keep a tile besides the sink
            points.append(point(w, rule, args.steps, args.eval_tokens))
    (out / "results.json").write_text(json.dumps(points, indent=1) + "\n")

    print(f"{'policy':<28} {'ΔNLL nats/token (95% CI)':>30} {'KL mean':>10} {'KV pJ/token':>12} "
          f"{'CIM pJ/token':>13}")
    for p in points:
        print(f"{p['policy']:<28} {interval_text(p['delta_nll'])} "
              f"{p['kl_mean']['value']:>10.4f} {p['kv_pj_per_token']:>12.4g} {p['cim_pj_per_token']:>13.4g}")

    fig, (acc, energy) = plt.subplots(1, 2, figsize=(11, 4))
    for rule in RULES:
        pts = [p for p in points if p["rule"] == rule and p["window"]]
        if not pts:
            continue
        x = [p["window"] for p in pts]
        interval_errorbar(acc, x, [p["delta_nll"] for p in pts], marker="o", label=rule)
        energy.plot(x, [p["kv_pj_per_token"] for p in pts], marker="o", label=rule)
    finish_accuracy_energy(acc, energy, full, "kv_pj_per_token", "KV attention energy per token (pJ)",
                           f"stories260K, {args.steps} steps, sram_digital",
                           "KV tokens kept per stream (64-token tiles)", "full attention",
                           acc_ylabel="ΔNLL vs float, full attention (nats/token)")
    save_figure(fig, out / "kv_window_study.png")


if __name__ == "__main__":
    main()
