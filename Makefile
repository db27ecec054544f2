# pirate-hunter: see README.md. Every target installs what it needs first.
SWIFT ?= swift
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: deps build release test fuzz-smoke bench demo clean vm-test

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product pirate-hunter

test: deps
	$(SWIFT) test

fuzz-smoke: deps
	scripts/fuzz.sh smoke

bench: deps
	$(SWIFT) run -c release BluetoothBenchmark

# The kernel path for real: Debian's kernel in qemu (TCG) with btvirt controllers and
# snd-aloop; installs qemu & co. when missing, caches kernel+initramfs in .build/vm.
# One guest test: scripts/vm/run.sh scripts/vm/tests/NAME.sh. See docs/vm-test.md.
# The guest runs .build/debug/pirate-hunter over 9p: build it first so it is fresh.
vm-test: deps
	$(SWIFT) build --product pirate-hunter
	scripts/vm/run.sh

clean:
	rm -rf .build
