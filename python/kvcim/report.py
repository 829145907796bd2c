"""kvcim.run(): one whole generation on CIM beside the float reference, and its Report.

The Report holds what `kvcim run --json` writes (schema_version 1), read as plain dicts:
report.energy and report.accuracy are dicts with the C++ report's keys, report.steps holds the
per-step figures as numpy arrays, report.to_json() gives the JSON text back.
report.conditions says under which conditions the energy figures hold (node, tables, SRAM banks,
terms, areas, context). report.evaluation is the teacher-forced evaluation (None when none ran; then
report.accuracy["perplexity"]["cim"] is None too): its statistics as dicts {value, ci_low, ci_high}
and report.per_token its per-token arrays (nll_reference, nll_cim, kl, top1_agree) as numpy. Its
top-level statistics are those of the sequences sampled from the reference (KL is the measure
there); report.text_evaluation holds those of the human-written text apart (ΔNLL, perplexity).
"""
import copy
import json
import os
import sys

import numpy as np

from . import _core

# Per-step arrays of the report and their numpy types.
_STEP_TYPES = {"position": np.int64, "top1_agree": np.bool_, "kl": np.float64,
               "max_abs_error": np.float64, "mean_abs_error": np.float64,
               "reference_margin": np.float64}


class Report:
    """The report of a run: energy, accuracy, per-step figures, texts, tokens, mapping."""

    def __init__(self, data):
        if not isinstance(data, dict) or "schema_version" not in data:
            raise _core.Error("Report: data = not a report: expected the JSON of kvcim run "
                              "(with schema_version)")
        self._data = data
        self.steps = {k: np.asarray(v, dtype=_STEP_TYPES.get(k, np.float64))
                      for k, v in data.get("steps", {}).items()}
        evaluation = (data.get("accuracy") or {}).get("evaluation")
        self.per_token = None if evaluation is None else {
            k: np.asarray(v, dtype=np.bool_ if k == "top1_agree" else np.float64)
            for k, v in evaluation["per_token"].items()}

    @classmethod
    def from_json(cls, text_or_path):
        """A report from JSON text or from a file written by `kvcim run --json`."""
        text = text_or_path
        if isinstance(text_or_path, os.PathLike) or (isinstance(text_or_path, str)
                                                     and not text_or_path.lstrip().startswith("{")):
            path = os.fspath(text_or_path)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                raise _core.Error(f"{path}: file = unreadable: {e.strerror}") from None
        try:
            return cls(json.loads(text))
        except ValueError as e:
            raise _core.Error(f"Report.from_json: json = invalid: {e}") from None

    def to_dict(self):
        return copy.deepcopy(self._data)

    def to_json(self, indent=None):
        return json.dumps(self._data, indent=indent)

    def save(self, path):
        """Writes the JSON atomically (temporary file, then rename)."""
        path = os.fspath(path)
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self.to_json(indent=1) + "\n")
        os.replace(tmp, path)
        return path

    def to_html(self):
        """The report as one self-contained HTML page (text): what `kvcim run --html` writes."""
        return _core.html_report(json.dumps(self._data))

    def write_html(self, path):
        """Writes to_html() atomically (temporary file, then rename); returns the path."""
        path = os.fspath(path)
        page = self.to_html()
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(page)
        except OSError as e:
            raise _core.Error(f"{path}: output file = unwritable: {e.strerror}") from None
        os.replace(tmp, path)
        return path

    def __getitem__(self, key):
        return self._data[key]

    energy = property(lambda self: self._data["energy"])
    # what the energy figures assume: the comparison node, every table's node, supply and factor,
    # the baseline's SRAM banks, the terms included, both chips' areas, the positions averaged
    conditions = property(lambda self: self._data["energy"]["conditions"])
    # CIM against the conventional engine at the run's last context: each at its best throughput
    # with EDP, at equal throughput, iso-area (None when the chips hold different data); the same
    # keys as kvcim.map()'s Placement.figures["comparison"] (docs/baseline.md)
    comparison = property(lambda self: self._data.get("comparison"))
    accuracy = property(lambda self: self._data["accuracy"])
    evaluation = property(lambda self: self._data["accuracy"].get("evaluation"))
    # the human-written text's statistics, apart from the sampled sequences' (None without a text)
    text_evaluation = property(lambda self: (self.evaluation or {}).get("text"))
    mapping = property(lambda self: self._data.get("mapping"))
    spec = property(lambda self: self._data.get("spec"))
    text = property(lambda self: self._data.get("text"))
    tokens = property(lambda self: self._data["tokens"])
    reference_tokens = property(lambda self: self._data["reference_tokens"])
    schema_version = property(lambda self: self._data["schema_version"])

    def __repr__(self):
        e, a = self.energy, self.accuracy
        ratio = e.get("conventional_over_cim")
        return (f"Report(steps={a.get('steps')}, top1_agreement={a.get('top1_agreement'):.4f}, "
                f"kl_mean={a.get('kl_mean'):.3g}, cim_pj_per_token="
                f"{e['cim']['per_token_pj']:.4g}, conventional_over_cim="
                f"{'None' if ratio is None else format(ratio, '.2f')})")


def _hardware(spec):
    if isinstance(spec, _core.HardwareSpec):
        return spec
    if spec is None:
        return _core.HardwareSpec.default()
    if isinstance(spec, dict):
        return _core.HardwareSpec.from_dict(spec)
    return _core.HardwareSpec.from_yaml(spec)


def _policy(policy):
    # text (or nothing) may leave the overflow unnamed, as `kvcim run --policy`; a dict is a Policy
    if policy is None or isinstance(policy, (str, _core.Policy)):
        return policy
    if isinstance(policy, dict):
        return _core.Policy.from_dict(policy)
    raise _core.Error(f"run: policy = {policy!r}: expected a Policy, a dict or text such as "
                      "'page=16'")


def _backends(backends):
    if backends is None:
        return "cim", "cim"
    if isinstance(backends, str):
        # One name: attention on it; linear layers on CIM unless it is the reference.
        return ("reference" if backends == "reference" else "cim"), backends
    if isinstance(backends, dict):
        unknown = set(backends) - {"linear", "attention"}
        if unknown:
            raise _core.Error(f"run: backends = {sorted(unknown)[0]!r}: unknown operation class "
                              "(expected linear, attention)")
        return backends.get("linear", "cim"), backends.get("attention", "cim")
    raise _core.Error(f"run: backends = {backends!r}: expected a name (reference, cim, rtl) or "
                      "a dict {'linear': ..., 'attention': ...}")


def _eval_tokens(n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise _core.Error(f"run: eval_tokens = {n!r}: expected a whole number of tokens, at least 1")
    return int(n)


# The defaults of `kvcim run`, read from the C++ side (runtime/defaults.hpp) so they cannot drift.
_RUN = _core.defaults()["run"]
_TOP_P = round(_RUN["top_p"], 6)  # the float 0.9f as the 0.9 it was written as
_DEFAULT_EVAL = object()          # eval_text_path not given: the shipped text, as `kvcim run`


def _prompts(prompt):
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, (list, tuple)) and prompt and all(isinstance(p, str) for p in prompt):
        return list(prompt)
    raise _core.Error(f"run: prompt = {prompt!r}: expected text or a non-empty list of texts")


def _batch(batch):
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise _core.Error(f"run: batch = {batch!r}: expected a whole number of sequences, at least 1")
    return int(batch)


def _number(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _core.Error(f"run: {name} = {value!r}: expected a number")
    return float(value)


def _flag(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise _core.Error(f"run: {name} = {value!r}: expected True or False")
    return bool(value)


def run(model=None, spec=None, prompt=_RUN["prompt"], steps=_RUN["steps"], backends=None,
        policy=None, tokenizer=None, seed=_RUN["seed"], temperature=_RUN["temperature"],
        top_p=_TOP_P, eval_text=None, eval_text_path=_DEFAULT_EVAL,
        eval_tokens=_RUN["eval_tokens"], threads=_RUN["threads"], progress=None, topp=None,
        batch=1, *, node=None, fit=False, area_mm2=None, baseline="synthetic", idle="gated"):
    """Runs a whole generation on CIM beside the float reference (what `kvcim run` does, with its
    defaults).

    model: a Model, a checkpoint path or None (the embedded model). spec: a HardwareSpec, a YAML
    path, a dict or None (configs/hw/sram_digital.yaml). backends: "cim" (default), "reference",
    "rtl" (attention on the Verilated tile), or {"linear": ..., "attention": ...}. policy: a
    Policy, a dict or text. As `kvcim run --node/--fit/--area-mm2`: node (nm) prices both sides
    at that node (default: the spec's); fit=True sizes the chip for the model (macros: auto);
    area_mm2 caps it (and implies fit); a fixed spec too small for the model's weights, with no
    overflow named (policy None or text without one), is sized for the model with a UserWarning
    (the note `kvcim run` prints). The teacher-forced evaluation (docs/accuracy.md) runs by default, as
    with `kvcim run`: eval_tokens (10,000) tokens sampled from the reference plus the text of
    eval_text_path (the shipped one); eval_text gives the text itself instead of a file;
    eval_text_path="" (or None, or eval_text="") skips the evaluation, and then perplexity is
    None. top_p: the nucleus sampling threshold (topp= is the old spelling, deprecated).
    threads: 1 or 2, the threads the run uses at most (the results do not depend on it).
    progress: called as progress(done, total) after every forward pass of the generation.
    A batch (`kvcim run --batch`): prompt may be a list of texts, one sequence each, or batch=B
    sequences cycle through the prompts; sequence b samples with seed + b. The report's tokens
    and text are sequence 0's; report["batch"]["per_sequence"] has every sequence.
    baseline: a named conventional machine (kvcim.machine_names(); `kvcim run --baseline`) whose
    figures report["energy"]["baseline_machine"] gives beside the spec's synthetic engine.
    idle: idle silicon on both sides (`kvcim run --idle`), "gated" (storage holding no data leaks
    nothing) or "leaking"."""
    if topp is not None:
        print("kvcim.run: topp= is deprecated, use top_p=", file=sys.stderr)
        top_p = topp
    if eval_text_path is _DEFAULT_EVAL:
        eval_text_path = None if eval_text is not None else _core.default_eval_text_path()
    linear, attention = _backends(backends)
    text = _core._run(model, _hardware(spec), _policy(policy),
                      None if tokenizer is None else os.fspath(tokenizer), _prompts(prompt),
                      _batch(batch), int(steps),
                      linear, attention, int(seed), float(temperature), float(top_p), eval_text,
                      None if eval_text_path is None else os.fspath(eval_text_path),
                      _eval_tokens(eval_tokens), int(threads), progress, _number("node", node),
                      _flag("fit", fit), _number("area_mm2", area_mm2), str(baseline),
                      str(idle))
    return Report(json.loads(text))
