"""The built-in sweep evaluations of kvcim: `map` (the mapper's analytic figures) and `run` (a
simulated generation). Each takes a point document {evaluate, model, tokenizer, hardware, policy,
run} and returns a JSON-serialisable dict with the same top-level keys that the plots read:

    energy:   {"cim": {"per_token_pj", "breakdown": {component: pJ}},
               "conventional": {"per_token_pj", "breakdown"}}
    accuracy: {...}   (run only)
    figures:  {...}   (map: Placement.figures, keyed as `kvcim map --json`)
"""
from . import _core

_specs = {}


def hardware(document):
    """The HardwareSpec of a point (cached per worker: parsing reads the technology tables)."""
    import json
    hw = document.get("hardware")
    if hw is None:
        return _core.HardwareSpec.default()
    key = json.dumps(hw, sort_keys=True)
    if key not in _specs:
        _specs[key] = _core.HardwareSpec.from_dict(hw)
    return _specs[key]


def shape(document):
    """What the mapper places: run.shape (a preset name such as llama2-7b, or 'dim=...' text)
    when given, else the point's checkpoint (only its header is read)."""
    options = document.get("run") or {}
    if options.get("shape"):
        return options["shape"]
    return document.get("model") or _core.default_model_path()


def _side(ledger, per_token_divisor=1):
    return {"per_token_pj": ledger["energy_pj"] / per_token_divisor,
            "total_pj": ledger["energy_pj"],
            "breakdown": {k: v / per_token_divisor
                          for k, v in ledger["energy_pj_by_component"].items()}}


def map_point(document):
    options = document.get("run") or {}
    context = options.get("context")
    placement = _core.map(shape(document), hardware(document), document.get("policy"), context)
    figures = placement.figures
    steps = options.get("steps")
    if steps:  # a whole generation from an empty cache, per generated token
        ledgers = placement.generation_ledgers(int(steps))
        divisor = int(steps)
    else:      # one token at the placement's context
        ledgers = placement.token_ledgers()
        divisor = 1
    result = {
        "figures": figures,
        "energy": {"cim": _side(ledgers["total"], divisor),
                   "conventional": _side(ledgers["conventional"], divisor)},
        "energy_by_op_pj": {"cim": ledgers["total"]["energy_pj_by_op"],
                            "conventional": ledgers["conventional"]["energy_pj_by_op"]},
    }
    if options.get("placement"):
        placed = placement.to_dict()
        result["placement"] = {"macro_map": placed["macro_map"],
                               "kv": {k: v for k, v in placed["kv"].items()
                                      if k != "block_tables"}}
    return result


RUN_OPTIONS = {"prompt", "steps", "backends", "seed", "temperature", "top_p", "topp",
               "eval_text", "eval_text_path", "eval_tokens", "threads"}
MAP_OPTIONS = {"context", "steps", "shape", "placement"}


def run_point(document):
    from .report import run
    options = dict(document.get("run") or {})
    if "topp" in options:  # the old spelling
        options.setdefault("top_p", options.pop("topp"))
    # A sweep point evaluates accuracy on the generation only unless it asks for the evaluation
    # (eval_text, eval_text_path or eval_tokens), and runs 32 steps unless told otherwise.
    wants_eval = any(k in options for k in ("eval_text", "eval_text_path", "eval_tokens"))
    extra = {k: options[k] for k in ("prompt", "seed", "temperature", "top_p", "eval_text",
                                      "eval_text_path", "eval_tokens", "threads") if k in options}
    if not wants_eval:
        extra["eval_text_path"] = ""
    report = run(model=document.get("model"), spec=hardware(document),
                 steps=options.get("steps", 32), backends=options.get("backends"),
                 policy=document.get("policy"), tokenizer=document.get("tokenizer"), **extra)
    d = report.to_dict()
    energy = {k: v for k, v in d["energy"].items() if k != "simulated_events"}
    return {"energy": energy, "accuracy": d["accuracy"], "mapping": d["mapping"],
            "steps": d["steps"], "text": d["text"], "tokens": d["tokens"]}
