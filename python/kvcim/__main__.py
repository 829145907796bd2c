"""The `kvcim` command of an installed package: runs the C++ tool bundled in kvcim/bin.

pip installs a console script `kvcim` calling main(); `python3 -m kvcim ...` does the same.
"""
import os
import sys
from importlib import resources


def main():
    exe = resources.files("kvcim") / "bin" / "kvcim"
    if not exe.is_file():
        sys.stderr.write(f"kvcim: command = {exe}: not in this package (only a pip-installed kvcim "
                         "bundles it; in a build tree run build/kvcim)\n")
        sys.exit(2)
    # exec, not a child process: signals, exit codes and stdio are the tool's own.
    os.execv(str(exe), [str(exe)] + sys.argv[1:])


if __name__ == "__main__":
    main()
