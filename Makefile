# pirate-hunter: see README.md. Every target installs what it needs first.
SWIFT ?= swift
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: deps build release test fuzz-smoke bench demo clean vm-test install uninstall units-check web-test web-bench

# --static-swift-stdlib when this Swift links the runtime into a binary (swift.org's
# toolchains), else nothing (Debian 13's swiftlang: the binary then needs libswiftlang).
# Worked out once, when a release build first needs it (scripts/static-stdlib.sh).
STATIC_STDLIB = $(eval STATIC_STDLIB := $$(shell PATH='$(PATH)' SWIFT='$(SWIFT)' scripts/static-stdlib.sh))$(STATIC_STDLIB)

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release $(STATIC_STDLIB) --product pirate-hunter
	@touch $(RELEASE_STAMP)

# Every test: swift test (unit, integration, end to end on the simulator) and, beside it,
# the kernel path in a VM (needs root or sudo for qemu's packages; SKIP_VM=1 leaves it out);
# then the parent's page in a browser and its defences (make web-test; SKIP_WEB=1 leaves it out).
test: deps
	SWIFT=$(SWIFT) scripts/test-all.sh
	@if [ "$(SKIP_WEB)" != 1 ]; then $(MAKE) --no-print-directory web-test; fi

# The parent's page (issue 26, docs/web.md) on the simulator, against the debug build:
# headless Chromium at phone size through Selenium (scripts/web/browser-test.py; its venv
# made by scripts/web/setup.sh; screenshots kept in .build/web-artifacts), then a plain
# HTTP client's attacks (scripts/web/security-test.py), a file mended on the page while the
# hunt waits for it (scripts/web/mend-test.py): all run, the first failure's status.
# About a minute and a half.
web-test: build
	@scripts/deps.sh --web
	@scripts/web/setup.sh
	@status=0; \
	.build/web-venv/bin/python scripts/web/browser-test.py || status=$$?; \
	.build/web-venv/bin/python scripts/web/security-test.py || { [ $$status -ne 0 ] || status=$$?; }; \
	.build/web-venv/bin/python scripts/web/mend-test.py || { [ $$status -ne 0 ] || status=$$?; }; \
	exit $$status

# The page's figures on a release build: first byte, SSE latency, RSS with 5 phones.
web-bench: deps
	python3 scripts/bench/web-bench.py

# A simulated hunt through the real pipeline, heard through the default ALSA device
# (or written to demo.wav when there is none).
demo: deps
	$(SWIFT) build -c release $(STATIC_STDLIB) --product pirate-hunter
	@touch $(RELEASE_STAMP)
	.build/release/pirate-hunter demo

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

# ---------------------------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=/stage] [UNITDIR=/etc/systemd/system]
# Builds the release binary (Swift runtime linked statically where the toolchain can) when a source is newer, so
# `make release && sudo make install` builds as the user and only copies as root.
# Never overwrites a configuration file in /etc/pirate-hunter.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/pirate-hunter
DOCDIR ?= $(PREFIX)/share/doc/pirate-hunter
SYSCONFDIR ?= /etc
UNITDIR ?= $(SYSCONFDIR)/systemd/system
RELEASE_BIN := .build/release/pirate-hunter
RELEASE_STAMP := .build/release-static.stamp
SWIFT_SOURCES := $(shell find Sources -name '*.swift' -o -name '*.h' -o -name '*.modulemap')
UNITS := pirate-hunter.service pirate-treasure.service

$(RELEASE_STAMP): Package.swift $(SWIFT_SOURCES)
	@scripts/deps.sh
	$(SWIFT) build -c release $(STATIC_STDLIB) --product pirate-hunter
	@touch $@

install: $(RELEASE_STAMP)
	@if ldd $(RELEASE_BIN) 2>/dev/null | grep libswiftCore | grep -vq ' /usr/libexec/swift/'; then \
		echo "$(RELEASE_BIN) links a Swift runtime that is not Debian's libswiftlang; run 'make release' first" >&2; exit 1; fi
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/pirate-hunter
	install -m 0755 $(RELEASE_BIN) $(DESTDIR)$(BINDIR)/pirate-hunter
	rm -rf $(DESTDIR)$(DATADIR)/voices
	cp -R voices $(DESTDIR)$(DATADIR)/voices
	chmod -R u=rwX,go=rX $(DESTDIR)$(DATADIR)/voices
	install -m 0644 docs/configuration.md docs/raspberry-pi.md $(DESTDIR)$(DOCDIR)/
	for unit in $(UNITS); do \
		sed -e 's|/usr/local/bin/pirate-hunter|$(BINDIR)/pirate-hunter|' \
		    -e 's|/usr/local/share/doc/pirate-hunter|$(DOCDIR)|' \
		    -e 's|/etc/pirate-hunter/|$(SYSCONFDIR)/pirate-hunter/|g' \
		    systemd/$$unit > $(DESTDIR)$(UNITDIR)/$$unit && chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	install -D -m 0644 systemd/pirate-hunter.avahi.service $(DESTDIR)$(SYSCONFDIR)/avahi/services/pirate-hunter.service
	for name in hunter treasure; do \
		target=$(DESTDIR)$(SYSCONFDIR)/pirate-hunter/$$name.json; \
		if [ -e $$target ]; then echo "kept $$target (not overwritten)"; \
		else install -m 0644 config/$$name.example.json $$target; fi; \
	done
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@echo
	@echo "Installed. Start the hunter now and at every boot with:"
	@echo "  sudo systemctl enable --now pirate-hunter.service"
	@echo "or, on the treasure box:"
	@echo "  sudo systemctl enable --now pirate-treasure.service"
	@echo "Settings: $(SYSCONFDIR)/pirate-hunter/hunter.json (docs: $(DOCDIR)/configuration.md)"

# Keeps /etc/pirate-hunter (your settings) and /var/cache/pirate-hunter.
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl disable --now $(UNITS) 2>/dev/null || true; fi
	rm -f $(DESTDIR)$(BINDIR)/pirate-hunter
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	for unit in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$unit; done
	rm -f $(DESTDIR)$(SYSCONFDIR)/avahi/services/pirate-hunter.service
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@echo "Removed. Kept $(SYSCONFDIR)/pirate-hunter (your settings); delete it by hand if you want."

# The units' syntax and hardening, without systemd running or anything installed: any
# message from `systemd-analyze verify` is a failure (ExecStart points at /bin/true here).
units-check:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	for unit in $(UNITS); do sed 's|/usr/local/bin/pirate-hunter|/bin/true|' systemd/$$unit > $$tmp/$$unit; done && \
	out=$$(cd $$tmp && systemd-analyze verify $(addprefix ./,$(UNITS)) 2>&1) ; \
	if [ -n "$$out" ]; then echo "$$out" >&2; exit 1; fi; \
	for unit in $(UNITS); do (cd $$tmp && systemd-analyze security --offline=yes ./$$unit 2>&1 | tail -1); done

# ---------------------------------------------------------------------------------------
# make deb: pirate-hunter_<version>_<arch>.deb (scripts/deb/build.sh, docs/packaging.md),
# then lintian on it when lintian is installed. make deb-test: built, installed into a
# fresh Debian root, run as the service user, reinstalled, purged (scripts/deb/test.sh);
# make deb-test-trixie: the same on Debian 13, built there with Debian's swiftlang.
.PHONY: deb deb-test
deb: $(RELEASE_STAMP)
	@scripts/deb/deps.sh
	@deb=$$(scripts/deb/build.sh $(RELEASE_BIN)) && echo "built $$deb" && \
	echo "lintian $$deb:" && lintian --info --tag-display-limit 0 "$$deb"

deb-test: deb
	scripts/deb/test.sh

# The same test for Debian 13: the package built with trixie's own swiftlang in a fresh
# trixie root (its runtime is libswiftlang), installed into another (scripts/trixie/run.sh).
.PHONY: deb-test-trixie
deb-test-trixie:
	scripts/deb/test.sh --dist trixie
