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

# A simulated hunt through the real pipeline, heard through the default ALSA device
# (or written to demo.wav when there is none).
demo: deps
	$(SWIFT) build -c release --product pirate-hunter
	.build/release/pirate-hunter demo

fuzz-smoke: deps
	scripts/fuzz.sh smoke

bench: deps
	$(SWIFT) run -c release BluetoothBenchmark

# The kernel path for real: Debian's kernel in qemu (TCG) with btvirt controllers and
# snd-aloop; installs qemu & co. when missing, caches kernel+initramfs in .build/vm.
# One guest test: scripts/vm/run.sh scripts/vm/tests/NAME.sh. See docs/vm-test.md.
vm-test:
	scripts/vm/run.sh

clean:
	rm -rf .build
