# pirate-hunter: see README.md. Every target installs what it needs first.
SWIFT ?= swift
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: deps build release test fuzz-smoke bench demo clean

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

clean:
	rm -rf .build
