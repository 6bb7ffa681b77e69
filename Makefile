# Courier MPI: the two commands a newcomer needs, and a few more.
#
#   make demo                  build everything and run the demo programs
#   make check                 build everything and run all tests
#
#   make                       build (into build/)
#   make install PREFIX=DIR    install bin/, include/, lib/ under DIR
#   make check-sanitize        build with AddressSanitizer + UndefinedBehaviorSanitizer and test
#   make check-tsan            build with ThreadSanitizer and run the multithreaded tests
#   make regen                 regenerate include/mpi.h; make regen-check verifies it is current
#   make bench                 run the benchmarks side by side with other MPIs (see bench/)
#   make conformance           install into build-conformance/prefix and run MPICH's own test
#                              suite against it (test/conformance/; fails on any test that does
#                              not do what test/conformance/expected-failures.txt expects)
#
# CMake and Ninja do the work; this file only picks directories and options. The generators
# need the MPI Forum's API data (PyPI package pympistandard): when Python cannot import it,
# it is installed into build/pydeps (not into your Python).

BUILD ?= build
SAN_BUILD ?= build-sanitize
TSAN_BUILD ?= build-tsan
CONF_BUILD ?= build-conformance
PREFIX ?= /usr/local
JOBS ?= 2
PYMPISTANDARD = pympistandard==0.2.0
PYDEPS = $(CURDIR)/build-pydeps
CMAKE_OPTS = -G Ninja -DCOURIER_PYDEPS=$(PYDEPS) $(if $(COURIER_WERROR),-DCOURIER_WERROR=ON)
CTEST_OPTS = --output-on-failure -j $(JOBS) $(if $(TESTS),-R '$(TESTS)')

.PHONY: all demo check check-sanitize check-tsan install regen regen-check bench conformance clean pydeps

all: $(BUILD)/build.ninja pydeps
	cmake --build $(BUILD) -j $(JOBS)

pydeps:
	@python3 -c 'import pympistandard' 2>/dev/null || PYTHONPATH=$(PYDEPS) python3 -c 'import pympistandard' 2>/dev/null || \
	  { echo "Installing $(PYMPISTANDARD) into $(PYDEPS)"; python3 -m pip install --quiet --target $(PYDEPS) $(PYMPISTANDARD); }

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) $(CMAKE_OPTS)

$(SAN_BUILD)/build.ninja:
	cmake -S . -B $(SAN_BUILD) $(CMAKE_OPTS) -DCOURIER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

demo: all
	cmake --build $(BUILD) --target demo

check: all
	cd $(BUILD) && ctest $(CTEST_OPTS)

check-sanitize: $(SAN_BUILD)/build.ninja pydeps
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ctest $(CTEST_OPTS) -LE no-sanitize

$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) $(CMAKE_OPTS) -DCOURIER_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo

check-tsan: $(TSAN_BUILD)/build.ninja pydeps
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target thread-tests
	cd $(TSAN_BUILD) && ctest $(CTEST_OPTS) -L threads

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

regen: $(BUILD)/build.ninja pydeps
	cmake --build $(BUILD) --target regen

regen-check: $(BUILD)/build.ninja pydeps
	cmake --build $(BUILD) --target regen-check

bench: all
	python3 bench/compare.py --markdown $(BUILD)/bench.md

# Installs build/ (built by `make check` first in CI, so no second build of the library and
# tests: minutes of the CI's hour) into a prefix of its own; the suite is fetched once into
# ~/.cache/courier-conformance (Debian's mpich source package).
conformance:
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(CONF_BUILD))/prefix
	JOBS=$(JOBS) test/conformance/run.sh $(abspath $(CONF_BUILD))/prefix $(abspath $(CONF_BUILD))

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD) $(CONF_BUILD)
