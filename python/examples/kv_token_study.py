"""KV eviction at token granularity: how much accuracy StreamingLLM (4 sink tokens plus the newest
ones), H2O (heavy hitters by accumulated attention plus the newest half) and a plain sliding
window cost, per token kept, on the embedded model (stories260K, context 512), each simulated in
`kvcim run` (an evicted token's slot in its attention tile is overwritten in place by the new
token). For each recipe and window, the teacher-forced evaluation against the float reference
with full attention: KL and ΔNLL on the sequences sampled from the reference, and ΔNLL on the
human-written text, each with its 95% bootstrap interval, beside full attention (CIM's own cost).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/kv_token_study.py [--out DIR]

The full-size figures are in docs/mapper.md ("Token-granular eviction, measured"); --steps,
--eval-tokens, --eval-text and --windows make a quick run (the test runs it small).
"""
import json

import kvcim
from study_cli import study_parser, parse_study_args  # noqa: E402

# window W tokens per stream, sinks included (policy keys: docs/mapper.md, "Policies")
RECIPES = {"window": "window={w},granularity=token",
           "streamingllm": "window={w},sinks=4,granularity=token",
           "h2o": "window={w},evict=h2o,granularity=token"}


def point(recipe, window, args):
    """One run: a recipe keeping `window` tokens per stream (0: full attention); its figures."""
    policy = RECIPES[recipe].format(w=window) if window else None
    options = {"eval_tokens": args.eval_tokens}
    if args.eval_text:
        options["eval_text_path"] = args.eval_text
    ev = kvcim.run(policy=policy, steps=args.steps, **options).evaluation
    text = ev["text"] or {}
    return {"recipe": recipe if window else "full attention", "window": window,
            "policy": policy or "full attention", "kl_mean": ev["kl_mean"],
            "delta_nll": ev["delta_nll"], "sampled_tokens": ev["sampled_tokens"],
            "text_delta_nll": text.get("delta_nll"), "text_tokens": text.get("tokens", 0)}


def shown(i):
    return f"{i['value']:+.4f} [{i['ci_low']:+.4f}, {i['ci_high']:+.4f}]" if i else "-"


def main():
    parser = study_parser(__doc__, "kv_token_study", steps=512,
                          eval_help="tokens sampled for the teacher-forced evaluation")
    parser.add_argument("--eval-text", default="",
                        help="human-written text to evaluate (default: the shipped one)")
    parser.add_argument("--windows", default="32,64,128", help="tokens kept per stream")
    args, out = parse_study_args(parser)

    points = [point("window", 0, args)]
    for w in (int(x) for x in args.windows.split(",")):
        points += [point(recipe, w, args) for recipe in RECIPES]
    (out / "results.json").write_text(json.dumps(points, indent=1) + "\n")

    print(f"{'policy':<44} {'KL mean (sampled)':>30} {'ΔNLL sampled':>30} {'ΔNLL text':>30}")
    for p in points:
        print(f"{p['policy']:<44} {shown(p['kl_mean']):>30} {shown(p['delta_nll']):>30} "
              f"{shown(p['text_delta_nll']):>30}")
    print(f"(nats per token, 95% intervals; {points[0]['sampled_tokens']} sampled tokens, "
          f"{points[0]['text_tokens']} of human-written text; {args.steps} steps)")


if __name__ == "__main__":
    main()
