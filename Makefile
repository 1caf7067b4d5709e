# ortqual: the README's two commands are `make run` and `make test`.
#   make run      install what is missing, build, run the main job (report in ortqual-out/)
#   make test     install what is missing, build four times (plain, ASan+UBSan, clang libFuzzer,
#                 Release), run the suite in the first two, replay and briefly fuzz every harness in
#                 the third; the fourth only compiles (-O3 and _FORTIFY_SOURCE warn where -O2
#                 does not, and -Werror)
#   make fuzz     build the libFuzzer harnesses (build-fuzz/) and fuzz each for FUZZ_SECONDS
#   make build    just build (build/ortqual)
#   make install PREFIX=/usr/local
# ORT_ROOT=/path uses an official ONNX Runtime layout (include/, lib/) instead of the npm one.
# ORTQUAL_GPU=1 make run: also installs ORT's CUDA execution provider and requires the demo's
#   CUDA configurations (ORTQUAL_ORT_CUDA_DIR=DIR takes it from unpacked libraries in DIR).

# Sub-makes (cmake --build) stay quiet about entering directories.
MAKEFLAGS += --no-print-directory
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_RELEASE ?= build-release
# make fuzz: seconds per harness; make test: seconds per harness in its fuzz/run tests
FUZZ_SECONDS ?= 600
FUZZ_TEST_SECONDS ?= 10
ORT_ROOT ?=
CMAKE_ORT := $(if $(ORT_ROOT),-DORT_ROOT=$(abspath $(ORT_ROOT)),)
OUTDIR ?= ortqual-out/demo

.PHONY: all deps build run test test-plain test-asan test-fuzz test-release fuzz fuzz-build install clean bench
all: build

deps:
	@ORT_ROOT="$(ORT_ROOT)" ./scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/ortqual validate --outdir $(OUTDIR) --force $(if $(filter 1,$(ORTQUAL_GPU)),--gpu)

test: deps
	$(MAKE) --no-print-directory test-plain test-asan test-fuzz test-release

test-plain:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# intercept_tls_get_addr=0: with it, LeakSanitizer's exit-time scan read a garbage dynamic-TLS
# record of ORT's process (GCC 12's sanitizer on glibc 2.36) and died ("Tracer caught signal
# 11"), depending on memory layout: e2e/old_ort one day, e2e/doctor another. Dynamic TLS blocks
# are heap blocks the thread's DTV points at, so their pointers are still scanned.
test-asan:
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DORTQUAL_SANITIZE=ON $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# A user's `cmake -DCMAKE_BUILD_TYPE=Release` build: compiled only, for -O3's own warnings, with
# a distribution packager's hardening (glibc's _FORTIFY_SOURCE adds its own truncation warnings).
RELEASE_CFLAGS = -D_FORTIFY_SOURCE=2 -fstack-protector-strong -Wformat -Werror=format-security
test-release:
	@cmake -S . -B $(BUILD_RELEASE) -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$(RELEASE_CFLAGS)" $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD_RELEASE) -j $(JOBS)

# The harnesses under clang with libFuzzer, ASan and UBSan (docs/reliability.md).
fuzz-build: deps
	@CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORTQUAL_FUZZ=ON \
	  -DFUZZ_TEST_SECONDS=$(FUZZ_TEST_SECONDS) $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_all

# Every seed and regression file once, then each harness fuzzed FUZZ_TEST_SECONDS.
test-fuzz: fuzz-build
	cd $(BUILD_FUZZ) && UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) -L fuzz

# Each harness in turn for FUZZ_SECONDS (new inputs kept in build-fuzz/fuzz/work/<name>/corpus).
fuzz: fuzz-build
	@for h in $(BUILD_FUZZ)/fuzz/fuzz_*; do n=$${h##*/fuzz_}; echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 fuzz/run.sh $$h $(FUZZ_SECONDS) \
	    $(BUILD_FUZZ)/fuzz/work/$$n fuzz/corpus/$$n $$(ls -d fuzz/regressions/$$n 2>/dev/null) || exit 1; done

# The prefix is configured, not only installed to: a program linked with the installed static
# library finds the ORT installed there by it (include/ortqual/runtime.h).
install: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(abspath $(PREFIX)) $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cmake --install $(BUILD)

bench: build
	@ls $(BUILD)/bench/

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_RELEASE)
