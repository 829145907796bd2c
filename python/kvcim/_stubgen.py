"""The type stub of kvcim._core (python/kvcim/_core.pyi), made from the module itself: pybind11
writes every function's signature on the first line(s) of its docstring. Run after changing a
binding, from the source folder:

    PYTHONPATH=build/python /usr/bin/python3 -m kvcim._stubgen > python/kvcim/_core.pyi

python/tests/test_stub.py checks that the committed stub names every public function and class of
the module with their parameter names, so a stale stub fails the tests.
"""
import ast
import enum
import inspect
import re
import sys

HEADER = '''"""Type stub of kvcim._core, the compiled core (pybind11). Made by kvcim._stubgen from the
module's own signatures; python/tests/test_stub.py keeps it in step with the module."""
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload

import numpy
'''


def signatures(obj, name):
    """The pybind11 signature lines of a function or method: 'name(a: int, b: str = ...) -> T'."""
    doc = getattr(obj, "__doc__", None) or ""
    lines = [ln.strip() for ln in doc.splitlines()]
    sigs = [ln for ln in lines if ln.startswith(name + "(")]
    # overloads: "1. name(...)"
    sigs += [re.sub(r"^\d+\.\s*", "", ln) for ln in lines if re.match(r"^\d+\.\s*" + re.escape(name) + r"\(", ln)]
    return sigs


def split_params(text):
    """Parameters of 'a: T, b: U = x' at top level (brackets and quotes respected)."""
    out, depth, cur, quote = [], 0, "", None
    for ch in text:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def clean_type(t):
    t = t.strip().replace("kvcim._core.", "")
    try:
        ast.parse(t, mode="eval")
        return t
    except SyntaxError:
        return "Any"


def parse_signature(sig, name):
    """(params [(name, type, has_default)], return type) of one pybind11 signature line."""
    inner = sig[len(name) + 1:]
    depth, i = 1, 0
    while i < len(inner) and depth:
        depth += {"(": 1, ")": -1}.get(inner[i], 0)
        i += 1
    params_text, rest = inner[:i - 1], inner[i:]
    ret = clean_type(rest.split("->", 1)[1]) if "->" in rest else "Any"
    params = []
    for p in split_params(params_text):
        if p in ("*", "/") or p.startswith("*"):
            params.append((p, None, False))
            continue
        default = "=" in p
        head = p.split("=", 1)[0].strip()
        pname, _, ptype = head.partition(":")
        params.append((pname.strip(), clean_type(ptype) if ptype else None, default))
    return params, ret


def param_names(obj, name):
    """Parameter names of every overload of a pybind11 function (self included for methods)."""
    return [[p for p, _, _ in parse_signature(s, name)[0]] for s in signatures(obj, name)]


def emit_def(name, sig, indent, is_static=False, overloaded=False):
    params, ret = parse_signature(sig, name)
    parts = []
    for pname, ptype, default in params:
        if ptype is None:
            parts.append(pname + (" = ..." if default else ""))
        else:
            parts.append(f"{pname}: {ptype}" + (" = ..." if default else ""))
    lines = []
    if overloaded:
        lines.append(indent + "@overload")
    if is_static:
        lines.append(indent + "@staticmethod")
    lines.append(f"{indent}def {name}({', '.join(parts)}) -> {ret}: ...")
    return lines


def emit_function(obj, name, indent="", is_static=False):
    sigs = signatures(obj, name)
    if not sigs:
        return [f"{indent}def {name}(*args: Any, **kwargs: Any) -> Any: ..."]
    out = []
    for s in sigs:
        out += emit_def(name, s, indent, is_static, overloaded=len(sigs) > 1)
    return out


def emit_class(cls, name):
    bases = [b.__name__ for b in cls.__bases__ if b.__module__ == cls.__module__]
    if issubclass(cls, Exception):
        return [f"class {name}(RuntimeError, ValueError): ..."]
    out = [f"class {name}{'(' + ', '.join(bases) + ')' if bases else ''}:"]
    body = []
    members = getattr(cls, "__members__", None)
    if isinstance(members, dict):
        for m in members:
            body.append(f"    {m}: {name}")
    for attr, value in sorted(vars(cls).items()):
        if attr.startswith("_") and attr not in ("__init__", "__call__", "__len__", "__getitem__",
                                                 "__iter__", "__eq__"):
            continue
        if members and attr in members:
            continue
        if isinstance(value, property):
            getter_sig = signatures(value.fget, "")  # pybind11 names getters "(self: X) -> T"
            ret = "Any"
            doc = (value.fget.__doc__ or "") if value.fget else ""
            m = re.match(r"\(self: [^)]*\) -> (.*)", doc.strip().splitlines()[0] if doc.strip() else "")
            if m:
                ret = clean_type(m.group(1))
            del getter_sig
            body.append(f"    {attr}: {ret}")
        elif isinstance(value, staticmethod) or type(value).__name__ == "builtin_function_or_method":
            body += emit_function(getattr(cls, attr), attr, "    ", is_static=True)
        elif callable(value):
            body += emit_function(value, attr, "    ")
        elif isinstance(value, (int, float, str)):
            body.append(f"    {attr}: {type(value).__name__}")
    return out + (body or ["    ..."])


def public_names(module):
    return sorted(n for n in dir(module) if not n.startswith("_") or n == "__version__")


def stub(module):
    out = [HEADER]
    for name in public_names(module):
        obj = getattr(module, name)
        if inspect.isclass(obj):
            out += emit_class(obj, name) + [""]
        elif callable(obj):
            out += emit_function(obj, name) + [""]
        elif isinstance(obj, (bool, int, float, str)) and not isinstance(obj, enum.Enum):
            out += [f"{name}: {type(obj).__name__}", ""]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    from kvcim import _core
    sys.stdout.write(stub(_core))
