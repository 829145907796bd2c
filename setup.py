"""Builds kvcim for pip: CMake compiles the module kvcim._core and the kvcim tool, and the wheel
carries them with the package's Python files and its data (pyproject.toml holds the metadata).

    pip install --no-build-isolation .

The install build is the product only (no RTL, tests or benchmarks) and portable (no
-march=native: the int8 kernels pick AVX2 / AVX-512 at run time). It happens outside the source
tree, whose build/ is the developer's CMake build: in $KVCIM_BUILD_DIR, else a folder under the
temporary directory named after the sources and the interpreter, kept for the next install.
$CMAKE_ARGS adds CMake options (e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache);
$CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs (default: the CPUs).
"""
import hashlib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
# The shipped data, found at run time through kvcim/kvcim-data-root (kvcim::data_dir()).
DATA = ["models", "configs", "testdata/eval"]
CMAKE_OPTIONS = ["-DCMAKE_BUILD_TYPE=Release", "-DKVCIM_NATIVE=OFF", "-DKVCIM_WITH_RTL=OFF",
                 "-DKVCIM_WITH_BENCHMARKS=OFF", "-DKVCIM_WITH_SANITIZER_TESTS=OFF"]


def cmake_version():
    # One version: project(kvcim VERSION x.y.z) in CMakeLists.txt, also kvcim.__version__.
    m = re.search(r"project\(kvcim VERSION ([0-9][0-9.]*)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        sys.exit("setup.py: CMakeLists.txt: project(kvcim VERSION ...) not found")
    return m.group(1)


def build_base():
    if os.environ.get("KVCIM_BUILD_DIR"):
        return pathlib.Path(os.environ["KVCIM_BUILD_DIR"]).resolve()
    key = hashlib.sha1(f"{ROOT}\0{sys.executable}".encode()).hexdigest()[:12]
    return pathlib.Path(tempfile.gettempdir()) / f"kvcim-pip-build-{key}"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(cmake_dir),
                     f"-DPython3_EXECUTABLE={sys.executable}", *CMAKE_OPTIONS,
                     *shlex.split(os.environ.get("CMAKE_ARGS", ""))]
        build = ["cmake", "--build", str(cmake_dir), "--target", "_core", "kvcim"]
        if "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            build += ["-j", str(os.cpu_count() or 2)]
        subprocess.run(configure, check=True)
        subprocess.run(build, check=True)

        core = pathlib.Path(self.get_ext_fullpath(ext.name))
        package = core.parent
        package.mkdir(parents=True, exist_ok=True)
        built = sorted((cmake_dir / "python" / "kvcim").glob("_core*.so"))
        if len(built) != 1:
            sys.exit(f"setup.py: {cmake_dir}/python/kvcim: expected one _core*.so, found {built}")
        shutil.copy2(built[0], core)
        (package / "bin").mkdir(exist_ok=True)
        shutil.copy2(cmake_dir / "kvcim", package / "bin" / "kvcim")  # mode kept: executable
        for d in DATA:
            shutil.copytree(ROOT / d, package / "data" / d, dirs_exist_ok=True)
        (package / "kvcim-data-root").write_text("data\n")


BASE = build_base()
BASE.mkdir(parents=True, exist_ok=True)
setup(
    version=cmake_version(),
    ext_modules=[Extension("kvcim._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(BASE)}, "egg_info": {"egg_base": str(BASE)}},
)
