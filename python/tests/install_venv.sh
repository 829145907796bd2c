#!/usr/bin/env bash
# python.install_venv: `pip install --no-build-isolation --no-index` of the sources into a fresh
# venv (system site packages: numpy, setuptools and wheel come from Debian), then, from another
# folder, `import kvcim; kvcim.run(steps=8)` and the installed `kvcim` command.
# Usage: install_venv.sh SOURCE_DIR [PYTHON]. Writes only under a temporary folder: the pip build
# goes to $KVCIM_BUILD_DIR there, and the source tree's `git status` must not change.
set -euo pipefail
src=$(cd "$1" && pwd)
python=${2:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT  # a CTest timeout still removes the folder
fail() { echo "install_venv: $*" >&2; exit 1; }

status_before=$(git -C "$src" status --porcelain 2>/dev/null || true)
"$python" -m venv --system-site-packages "$tmp/venv"
venv_python=$tmp/venv/bin/python

export KVCIM_BUILD_DIR=$tmp/build PIP_DISABLE_PIP_VERSION_CHECK=1
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
# ccache when the machine has it (a developer's); CI's fresh machine compiles from scratch.
if command -v ccache >/dev/null && [ -z "${CMAKE_ARGS:-}" ]; then
  export CMAKE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
fi
unset PYTHONPATH KVCIM_DATA_DIR
start=$SECONDS
"$venv_python" -m pip install -q --no-build-isolation --no-index --no-cache-dir "$src" \
  > "$tmp/pip.log" 2>&1 || { tail -40 "$tmp/pip.log"; fail "pip install failed"; }
echo "install_venv: pip install took $((SECONDS - start)) s"

# The install build: no -march=native anywhere in its compile flags.
if grep -rl --include=flags.make -e "-march=native" "$KVCIM_BUILD_DIR" >/dev/null; then
  fail "the install build compiles with -march=native"
fi

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
"$venv_python" - "$tmp/venv" "$src" <<'PY'
import importlib.metadata, pathlib, sys
venv, src = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
import kvcim

pkg = pathlib.Path(kvcim.__file__).resolve().parent
assert venv in pkg.parents, f"kvcim imported from {pkg}, not from the venv {venv}"
assert kvcim.__version__ == importlib.metadata.version("kvcim"), kvcim.__version__
data = pathlib.Path(kvcim._core.data_dir()).resolve()
assert data == pkg / "data", f"data root {data}, expected the package's {pkg / 'data'}"
for path in (kvcim.default_model_path(), kvcim.default_tokenizer_path(),
             kvcim.default_hardware_spec_path(), kvcim._core.default_eval_text_path()):
    assert pathlib.Path(path).resolve().is_relative_to(data) and pathlib.Path(path).is_file(), path
# No path of the source tree compiled into what was installed.
for binary in [*pkg.glob("_core*.so"), pkg / "bin" / "kvcim"]:
    assert str(src).encode() not in binary.read_bytes(), f"{binary} holds {src}"

r = kvcim.run(steps=8, eval_tokens=64)   # the evaluation reads the packaged text
assert len(r.tokens) == 8 and r.text["cim"].startswith("Once upon a time"), (r.tokens, r.text)
assert 0.5 <= r.accuracy["top1_agreement"] <= 1.0, r.accuracy
assert r.energy["cim"]["per_token_pj"] > 0 and r.energy["conventional_over_cim"] > 1, r.energy
assert r.to_dict()["inputs"]["eval_text"].startswith(str(pkg / "data")), r.to_dict()["inputs"]
print(f"install_venv: kvcim {kvcim.__version__} from {pkg}: run(steps=8) top-1 "
      f"{r.accuracy['top1_agreement']:.3f}, {r.energy['conventional_over_cim']:.2f}x")
PY

kvcim=$tmp/venv/bin/kvcim
[ "$("$kvcim" --version)" = "$("$venv_python" -c 'import kvcim; print(kvcim.__version__)')" ] \
  || fail "kvcim --version differs from the package's version"
"$kvcim" run --steps 8 --eval-text '' > run.txt || fail "kvcim run: exit $?"
grep -q "energy per token" run.txt || fail "kvcim run: no energy table: $(head -5 run.txt)"
"$kvcim" map > map.txt || fail "kvcim map: exit $?"
grep -q "sram_digital" map.txt || fail "kvcim map: no shipped spec named: $(head -5 map.txt)"
# A data root named by the environment that is not a folder: one line naming both, exit 2.
rc=0; KVCIM_DATA_DIR=$tmp/missing "$kvcim" map > /dev/null 2> err.txt || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q "KVCIM_DATA_DIR.*$tmp/missing" err.txt \
  || fail "KVCIM_DATA_DIR=missing: exit $rc, stderr: $(cat err.txt)"

[ "$(git -C "$src" status --porcelain 2>/dev/null || true)" = "$status_before" ] \
  || fail "the install changed the source tree: $(git -C "$src" status --porcelain)"
echo "install_venv: ok in $((SECONDS - start)) s"
