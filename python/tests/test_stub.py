"""The type stub python/kvcim/_core.pyi names every public function and class of kvcim._core,
every public method and attribute of each class, with the parameter names of every overload, as
the module itself says (pybind11 signatures); so the stub cannot go stale. It ships with the
package (pyproject.toml package-data)."""
import ast
import inspect
import pathlib
import tomllib

import kvcim
from kvcim import _core
from kvcim._stubgen import param_names, public_names, signatures

SOURCE = pathlib.Path(__file__).resolve().parents[2]
STUB = SOURCE / "python" / "kvcim" / "_core.pyi"


def arg_names(args):
    """A stub def's parameter names as param_names gives them: keyword-only ones after '*'."""
    names = [a.arg for a in args.args]
    if args.kwonlyargs:
        names += ["*"] + [a.arg for a in args.kwonlyargs]
    return names


def stub_tree():
    tree = ast.parse(STUB.read_text())
    functions, classes = {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.setdefault(node.name, []).append(arg_names(node.args))
        elif isinstance(node, ast.ClassDef):
            members = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.setdefault(item.name, []).append(arg_names(item.args))
                elif isinstance(item, ast.AnnAssign):
                    members[item.target.id] = None
            classes[node.name] = members
        elif isinstance(node, ast.AnnAssign):
            functions[node.target.id] = None
    return functions, classes


def test_stub_names_every_public_function_and_class_with_its_parameters():
    functions, classes = stub_tree()
    missing, wrong = [], []
    for name in public_names(_core):
        obj = getattr(_core, name)
        if inspect.isclass(obj):
            if name not in classes:
                missing.append(name)
                continue
            if issubclass(obj, Exception):
                continue
            for attr, value in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if attr not in classes[name]:
                    missing.append(f"{name}.{attr}")
                elif classes[name][attr] is not None and signatures(getattr(obj, attr), attr):
                    expected = param_names(getattr(obj, attr), attr)
                    if classes[name][attr] != expected:
                        wrong.append((f"{name}.{attr}", classes[name][attr], expected))
        elif callable(obj):
            if name not in functions:
                missing.append(name)
            elif functions[name] != param_names(obj, name):
                wrong.append((name, functions[name], param_names(obj, name)))
        elif name not in functions:
            missing.append(name)
    regenerate = "regenerate: PYTHONPATH=build/python python3 -m kvcim._stubgen > " + str(STUB)
    assert not missing, f"not in the stub: {missing}; {regenerate}"
    assert not wrong, f"parameters differ (stub, module): {wrong}; {regenerate}"


def test_stub_knows_new_parameters():
    # the parameters this branch added are in the stub under their names
    functions, _ = stub_tree()
    assert functions["html_report"] == [["report_json"]]
    assert functions["cosim"] == param_names(_core.cosim, "cosim")
    assert "top_p" in param_names(_core._run, "_run")[0]


def test_stub_ships_with_the_package():
    data = tomllib.loads((SOURCE / "pyproject.toml").read_text())
    assert "_core.pyi" in data["tool"]["setuptools"]["package-data"]["kvcim"]
    assert (pathlib.Path(kvcim.__file__).parent / "_core.pyi").exists()  # copied with the package
