# txc — the README's commands. `make demo` runs the main job, `make check` every test,
# `make check-sanitize` every test again under ASan + UBSan (in build-sanitize/).
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo check check-sanitize clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

check: build
	@bash scripts/check.sh $(BUILD)

check-sanitize:
	@JOBS=$(JOBS) bash scripts/check-sanitize.sh $(SANITIZE_BUILD)

clean:
	rm -rf $(BUILD)
