# Thin driver around CMake. `make demo` and `make test` are the two commands a user needs;
# `make test-deep` (CI runs it after `make test`) adds the slow checks.
BUILD  ?= build
PYTHON ?= /usr/bin/python3
JOBS   ?= 2
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test test-deep clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The demo needs the kvcim command only: no tests, benchmarks, Python module or RTL coverage.
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target kvcim
	$(BUILD)/kvcim run

# Every test suite, the Python tests, the RTL co-simulation and synthesis, the fuzz corpora replayed.
# --timeout: the watchdog of any test without a TIMEOUT of its own (a hang fails, never waits).
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE deep --timeout 900

# The checks that build the project again (CTest label `deep`): the suites under clang's
# ASan/UBSan, each fuzz target for KVCIM_FUZZ_SECONDS, and a pip install into a fresh venv.
test-deep: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L deep --timeout 1800

clean:
	rm -rf $(BUILD)
