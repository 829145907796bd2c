# Thin driver around CMake. `make demo` and `make test` are the two commands a user needs.
BUILD  ?= build
PYTHON ?= /usr/bin/python3
JOBS   ?= 2
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test clean

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

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
