"""Evaluations of one sweep point, run inside a worker process (local pool or Dask worker).

evaluate_task(task) never raises for a failing point: it returns a record with status "error" and
the error's type and message, so one bad point is recorded and the sweep goes on. Only the death of
the process itself escapes, and the sweep driver handles that.

Built-in evaluations take the point document {evaluate, model, tokenizer, hardware, policy, run}:
  map         the mapper's analytic placement of the model on the hardware (fast, no simulation)
  run         a whole generation on the runtime (simulation): energy, accuracy, per-step figures
  perplexity  the float reference model's perplexity on run.text (needs no hardware; a check of the
              machinery)
A spec may also name any importable function as "package.module:function"; it receives the point
document and returns a JSON-serialisable dict.
"""
import importlib
import math
import os
import socket
import time
import traceback

import numpy as np

_models = {}
_tokenizers = {}

DEFAULT_TEXT = "Once upon a time, there was a little girl named Lily. She loved to play outside."


def _model(path):
    from . import _core
    key = path or ""
    if key not in _models:  # a worker keeps its models: loading is the slow part of small points
        _models[key] = _core.Model.load(path)
    return _models[key]


def _tokenizer(path, vocab_size=-1):
    from . import _core
    key = (path or "", vocab_size)
    if key not in _tokenizers:
        _tokenizers[key] = _core.Tokenizer.load(path, vocab_size)
    return _tokenizers[key]


def evaluate_perplexity(document):
    run = document.get("run") or {}
    text = run.get("text", DEFAULT_TEXT)
    model = _model(document.get("model"))
    tokenizer = _tokenizer(document.get("tokenizer"), model.config.vocab_size)
    ids = tokenizer.encode(text, bos=True, eos=False)
    max_tokens = int(run.get("max_tokens", model.config.seq_len))
    ids = ids[:max_tokens]
    if len(ids) < 2:
        from ._core import Error
        raise Error(f"perplexity: run.text = {text!r}: expected at least one token after BOS")
    logits = model.logits(ids).astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    nll = -float(np.mean([logp[i, ids[i + 1]] for i in range(len(ids) - 1)]))
    return {"tokens": len(ids), "nll": nll, "perplexity": math.exp(nll)}


def evaluate_map(document):
    from . import experiment
    return experiment.map_point(document)


def evaluate_run(document):
    from . import experiment
    return experiment.run_point(document)


BUILTIN = {"map": evaluate_map, "run": evaluate_run, "perplexity": evaluate_perplexity}


def resolve(name):
    """The function of an evaluation name (built-in, or module:function)."""
    if name in BUILTIN:
        return BUILTIN[name]
    module_name, _, function_name = name.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, function_name)


def evaluate_task(task, function=None):
    """Evaluates one point; returns its record (status ok with a result, or error)."""
    start = time.perf_counter()
    record = {"key": task["key"], "index": task["index"], "overrides": task["overrides"],
              "evaluate": task["document"]["evaluate"],
              "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        fn = function or resolve(task["document"]["evaluate"])
        result = fn(task["document"])
        if not isinstance(result, dict):
            raise TypeError(f"the evaluation returned {type(result).__name__}, expected a dict")
        record["status"] = "ok"
        record["result"] = result
    except Exception as e:  # noqa: BLE001 - every failure of a point is recorded, none stops a sweep
        record["status"] = "error"
        record["error_type"] = type(e).__name__
        record["error"] = str(e) or type(e).__name__
        record["traceback"] = traceback.format_exc(limit=8)
    record["elapsed_s"] = round(time.perf_counter() - start, 6)
    return record
