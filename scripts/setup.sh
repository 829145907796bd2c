#!/usr/bin/env bash
# Installs the Debian packages kvcim needs, or (when not root) prints the one line that would
# (chromium: the headless browser the HTML report test renders the page in).
# Used by `make demo` and `make test`; does nothing when everything is already there.
set -eu
PKGS="cmake g++ make verilator libeigen3-dev libgtest-dev libbenchmark-dev pybind11-dev python3-dev \
python3-numpy python3-pytest python3-matplotlib python3-dask python3-distributed python3-yaml \
python3-venv python3-setuptools python3-wheel \
nlohmann-json3-dev libyaml-cpp-dev libcli11-dev clang chromium yosys"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "kvcim setup: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends $missing >/dev/null
else
  echo "kvcim setup: missing Debian packages. Run:"
  echo "  sudo apt-get update && sudo apt-get install -y$missing"
  exit 1
fi
