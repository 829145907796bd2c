"""Sweep specifications: what to evaluate, on which base hardware, over which grid of changes.

A spec (a YAML file or a dict):

    evaluate: map                 # map | run | perplexity | package.module:function
    model: null                   # checkpoint path (default: the embedded model)
    tokenizer: null               # tokenizer path (default: the embedded tokenizer)
    hardware: ../configs/hw/x.yaml  # the base hardware spec: a path (relative to the spec file)
                                    # or an inline mapping
    policy: null                  # mapper policy (map and run): text "overflow=spill,page=16"
                                  # or a mapping of Policy fields {tokens_per_page: 16}
    run: {prompt: "Once upon a time", steps: 16}   # options of the evaluation
    grid:                         # every combination of these values is one point
      hardware.macro.adc_bits: [4, 6, 8]
      macro.rows: [64, 128]       # a path that does not start with a point field is a hardware path
      policy.tokens_per_page: [8, 64]   # (with a mapping policy)
    points:                       # optional: extra points, each a mapping of path -> value
      - {hardware.macro.adc_bits: 3}

A point is a plain document: {evaluate, model, tokenizer, hardware, policy, run} with the grid's
values written in. Its key is a hash of that document, so the same point is recognised in any later
run (and a changed base hardware file makes new points rather than reusing stale results).
"""
import copy
import hashlib
import itertools
import json
import os
import re

from ._core import Error

POINT_FIELDS = ("evaluate", "model", "tokenizer", "hardware", "policy", "run")
SPEC_FIELDS = POINT_FIELDS + ("grid", "points", "name", "description", "max_attempts")
BUILTIN_EVALUATIONS = ("map", "run", "perplexity")
_CALLABLE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
MAX_POINTS = 1_000_000


class SpecError(Error):
    """A sweep specification that cannot be used; the message names the file, field and value."""


def _fail(where, field, value, expected):
    raise SpecError(f"{where}: {field} = {_short(value)}: {expected}")


def _unknown(key, allowed):
    """'unknown ...; did you mean X?' when a known name is close (as the C++ spec parser says)."""
    import difflib
    close = difflib.get_close_matches(str(key), sorted(allowed), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"{hint}(expected one of {', '.join(allowed)})"


def _short(value):
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _run_options(evaluate):
    """The options a built-in evaluation reads from `run` (None: any, for custom ones)."""
    from . import experiment
    return {"map": experiment.MAP_OPTIONS, "run": experiment.RUN_OPTIONS,
            "perplexity": {"text", "max_tokens"}}.get(evaluate)


class Point:
    """One point of a sweep: its document, the changes that made it, and its key."""

    __slots__ = ("index", "document", "overrides", "key")

    def __init__(self, index, document, overrides):
        self.index = index
        self.document = document
        self.overrides = overrides
        self.key = point_key(document)

    def task(self):
        """What a worker needs (plain data, picklable)."""
        return {"index": self.index, "key": self.key, "document": self.document,
                "overrides": self.overrides}

    def __repr__(self):
        return f"Point({self.index}, {self.key}, {self.overrides})"


def point_key(document):
    """A stable key: the first 16 hex digits of the SHA-256 of the canonical JSON document."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class SweepSpec:
    """A validated sweep specification. Build with SweepSpec.load(path) or SweepSpec.from_dict(d)."""

    def __init__(self, data, where, base_dir):
        self.where = where
        self.base_dir = base_dir
        self.raw = data
        self._validate(data)

    @classmethod
    def load(cls, path):
        path = os.fspath(path)
        try:
            import yaml
        except ImportError:  # pragma: no cover - Debian: python3-yaml
            raise SpecError(f"{path}: reader = missing: kvcim.sweep reads YAML with PyYAML "
                            "(apt-get install python3-yaml)") from None
        try:
            with open(path, encoding="utf-8") as f:
                data = yaml.safe_load(f)
        except FileNotFoundError:
            raise SpecError(f"{path}: file = missing: no such sweep spec") from None
        except OSError as e:
            raise SpecError(f"{path}: file = unreadable: {e.strerror}") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            at = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            raise SpecError(f"{path}: yaml = {at}: not valid YAML ({problem})") from None
        return cls(data, path, os.path.dirname(os.path.abspath(path)))

    @classmethod
    def from_dict(cls, data, where="sweep spec", base_dir=None):
        return cls(copy.deepcopy(data), where, base_dir or os.getcwd())

    # --- validation -------------------------------------------------------------------------

    def _validate(self, data):
        w = self.where
        if not isinstance(data, dict):
            _fail(w, "spec", data, "expected a mapping with at least 'evaluate' and 'grid'")
        unknown = [k for k in data if k not in SPEC_FIELDS]
        if unknown:
            _fail(w, unknown[0], data[unknown[0]],
                  "unknown field; " + _unknown(unknown[0], SPEC_FIELDS))
        evaluate = data.get("evaluate")
        if not isinstance(evaluate, str) or not (evaluate in BUILTIN_EVALUATIONS
                                                 or _CALLABLE.match(evaluate)):
            _fail(w, "evaluate", evaluate,
                  "expected one of " + ", ".join(BUILTIN_EVALUATIONS) + " or module:function")
        self.evaluate = evaluate
        for field in ("model", "tokenizer"):
            value = data.get(field)
            if value is not None and not isinstance(value, str):
                _fail(w, field, value, "expected a file path or null (the embedded default)")
        self.model = self._resolve_path(data.get("model"), "model")
        self.tokenizer = self._resolve_path(data.get("tokenizer"), "tokenizer")
        self.hardware = self._load_hardware(data.get("hardware"))
        if evaluate in ("map", "run") and self.hardware is None:
            _fail(w, "hardware", None, f"evaluate: {evaluate} needs a base hardware spec "
                  "(a YAML path or an inline mapping)")
        self.policy = data.get("policy")
        run = data.get("run", {})
        if run is None:
            run = {}
        if not isinstance(run, dict):
            _fail(w, "run", run, "expected a mapping of evaluation options")
        self.run = run
        allowed = _run_options(evaluate)
        if allowed is not None:
            for key in run:
                if key not in allowed:
                    _fail(w, f"run.{key}", run[key], f"unknown option of evaluate: {evaluate}; "
                          + _unknown(key, sorted(allowed)))
        self.max_attempts = data.get("max_attempts", 2)
        if (not isinstance(self.max_attempts, int) or isinstance(self.max_attempts, bool)
                or not 1 <= self.max_attempts <= 10):
            _fail(w, "max_attempts", self.max_attempts, "expected an integer from 1 to 10")

        grid = data.get("grid", {})
        if grid is None:
            grid = {}
        if not isinstance(grid, dict):
            _fail(w, "grid", grid, "expected a mapping of path -> list of values")
        self.grid = {}
        for path, values in grid.items():
            if not isinstance(path, str) or not path:
                _fail(w, "grid key", path, "expected a dotted path such as macro.adc_bits")
            if not isinstance(values, list) or not values:
                _fail(w, f"grid.{path}", values, "expected a non-empty list of values")
            self.grid[self._normalise_path(path, f"grid.{path}")] = values
        extra = data.get("points", [])
        if extra is None:
            extra = []
        if not isinstance(extra, list):
            _fail(w, "points", extra, "expected a list of mappings of path -> value")
        self.extra_points = []
        for i, p in enumerate(extra):
            if not isinstance(p, dict):
                _fail(w, f"points[{i}]", p, "expected a mapping of path -> value")
            self.extra_points.append({self._normalise_path(k, f"points[{i}].{k}"): v
                                      for k, v in p.items()})
        size = 1
        for values in self.grid.values():
            size *= len(values)
        if size > MAX_POINTS:
            _fail(w, "grid", f"{size} points", f"expected at most {MAX_POINTS} points")
        # Every path must reach a field of the point document; checked on the first point so
        # that a misspelt path is a spec error, not one failed point after another.
        self.points()

    def _resolve_path(self, value, field):
        if value is None:
            return None
        path = value if os.path.isabs(value) else os.path.join(self.base_dir, value)
        if not os.path.isfile(path):
            _fail(self.where, field, value, f"no such file ({path})")
        return os.path.normpath(path)

    def _load_hardware(self, value):
        if value is None:
            return None
        if isinstance(value, dict):
            hw, base_dir, label = copy.deepcopy(value), self.base_dir, "hardware"
        elif isinstance(value, str):
            path = self._resolve_path(value, "hardware")
            import yaml
            try:
                with open(path, encoding="utf-8") as f:
                    hw = yaml.safe_load(f)
            except yaml.YAMLError as e:
                _fail(self.where, "hardware", value, f"not valid YAML ({str(e).splitlines()[0]})")
            if not isinstance(hw, dict):
                _fail(self.where, "hardware", value, "expected the file to hold a mapping")
            base_dir, label = os.path.dirname(path), value
        else:
            _fail(self.where, "hardware", value, "expected a YAML file path or a mapping")
        return self._complete_hardware(hw, base_dir, label)

    def _complete_hardware(self, hw, base_dir, label):
        """The base spec through the C++ parser: validated now (a bad base is a spec error, not
        one failed point after another), every default written out and technology paths made
        absolute, so that each point document is complete and self-contained."""
        from . import _core
        try:
            return _core.HardwareSpec.from_dict(hw, base_dir).to_dict()
        except Error as e:
            _fail(self.where, "hardware", label, f"invalid hardware spec ({e})")

    def _normalise_path(self, path, field):
        parts = path.split(".")
        if any(not p for p in parts):
            _fail(self.where, field, path, "expected a dotted path such as macro.adc_bits")
        if parts[0] not in POINT_FIELDS:
            parts = ["hardware"] + parts
        if parts[0] in ("evaluate",):
            _fail(self.where, field, path, "the evaluation is fixed for a whole sweep")
        if parts[0] == "run" and len(parts) > 1:
            allowed = _run_options(self.evaluate)
            if allowed is not None and parts[1] not in allowed:
                _fail(self.where, field, path, f"unknown option of evaluate: {self.evaluate}; "
                      + _unknown(parts[1], sorted(allowed)))
        if parts[0] in ("model", "tokenizer") and len(parts) > 1:
            _fail(self.where, field, path, f"{parts[0]} is a single value, not a mapping")
        if parts[0] == "hardware" and self.hardware is None:
            _fail(self.where, field, path, "a hardware path needs a base hardware spec")
        return ".".join(parts)

    # --- points -----------------------------------------------------------------------------

    def base_document(self):
        return {"evaluate": self.evaluate, "model": self.model, "tokenizer": self.tokenizer,
                "hardware": copy.deepcopy(self.hardware), "policy": copy.deepcopy(self.policy),
                "run": copy.deepcopy(self.run)}

    def _apply(self, document, path, value, field):
        parts = path.split(".")
        node = document
        if parts[0] == "hardware" and len(parts) > 1:
            self._check_hardware_path(parts[1:], field)
        for i, part in enumerate(parts[:-1]):
            child = node.get(part) if isinstance(node, dict) else None
            if child is None and isinstance(node, dict) and (i >= 1 or part in ("run", "policy")):
                # A section the base omits (its defaults apply) may be created, so long as the
                # hardware spec then accepts the field (checked when the point is evaluated).
                child = node[part] = {}
            if not isinstance(child, dict):
                _fail(self.where, field, path,
                      f"'{'.'.join(parts[:i + 1])}' is not a mapping in the base point")
            node = child
        node[parts[-1]] = copy.deepcopy(value)

    def _check_hardware_path(self, parts, field):
        # The completed base lists every field the parser knows (the ADC fields only for an
        # analog macro), so a path missing from it is misspelt or meaningless here.
        node = self.hardware
        for i, part in enumerate(parts):
            if not isinstance(node, dict) or part not in node:
                where = "hardware" + "".join("." + p for p in parts[:i])
                known = ", ".join(sorted(node)) if isinstance(node, dict) else "(not a mapping)"
                _fail(self.where, field, ".".join(parts),
                      f"no field '{part}' in {where} of the base hardware (known: {known})")
            node = node[part]

    def points(self):
        """Every point: the grid's combinations in order (last path varying fastest), then the
        extra points; duplicates (same key) kept once."""
        paths = list(self.grid)
        combos = itertools.product(*(self.grid[p] for p in paths)) if paths else [()]
        overrides_list = [dict(zip(paths, combo)) for combo in combos]
        overrides_list += self.extra_points
        seen, out = set(), []
        for overrides in overrides_list:
            document = self.base_document()
            for path, value in overrides.items():
                self._apply(document, path, value, f"grid.{path}")
            point = Point(len(out), document, overrides)
            if point.key in seen:
                continue
            seen.add(point.key)
            out.append(point)
        return out
