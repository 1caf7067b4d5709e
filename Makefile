# ortqual: the README's two commands are `make run` and `make test`.
#   make run      install what is missing, build, run the main job (report in ortqual-out/)
#   make test     install what is missing, build twice (plain, ASan+UBSan), run the suite in both
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
ORT_ROOT ?=
CMAKE_ORT := $(if $(ORT_ROOT),-DORT_ROOT=$(abspath $(ORT_ROOT)),)
OUTDIR ?= ortqual-out/demo

.PHONY: all deps build run test test-plain test-asan install clean bench
all: build

deps:
	@ORT_ROOT="$(ORT_ROOT)" ./scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/ortqual validate --outdir $(OUTDIR) --force $(if $(filter 1,$(ORTQUAL_GPU)),--gpu)

test: deps
	$(MAKE) --no-print-directory test-plain test-asan

test-plain:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DORTQUAL_SANITIZE=ON $(CMAKE_ORT) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@ls $(BUILD)/bench/

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
