#!/usr/bin/env bash
# CI beside the bookworm run: the project built and tested with Debian 13's own Swift
# (swiftlang 6.0.3 from apt) in a fresh trixie root (scripts/trixie/run.sh), the README's
# two commands as a parent on Raspberry Pi OS would run them, then the package:
#   scripts/deps.sh   nothing to install when the root is right (it has swiftlang)
#   make test         with SKIP_VM=1: the VM's guest tests (scripts/vm) need qemu and a
#                     kernel image; they run on the host in `make test` already, against
#                     the same sources (the guest runs a binary built on the host); and
#                     SKIP_WEB=1: the page's browser and security tests (make web-test)
#                     need chromium, and run on the host in `make test` already
#   make demo         the simulated hunt, written to demo.wav (no sound card in the root)
#   make deb          built with swiftlang: the runtime is libswiftlang's (Depends)
# The package is copied to .build/trixie/ for scripts/deb/test.sh --dist trixie.
# Usage: scripts/trixie/test.sh   (needs root; re-runs itself with sudo)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"
started=$(date +%s)
out=.build/trixie
rm -rf "$out"
mkdir -p "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
scripts/trixie/run.sh --out "$out" '
    step() { local t=$SECONDS; echo "== $*"; "$@"; echo "== $* took $((SECONDS - t)) s"; }
    swift --version 2>&1 | head -1
    step scripts/deps.sh
    SKIP_VM=1 SKIP_WEB=1 step make test
    step make demo
    python3 -c "import wave; w = wave.open(\"demo.wav\"); print(\"   demo.wav: %.0f s of speech\" % (w.getnframes() / w.getframerate()))"
    step make deb
' 2>&1 | tee "$log" || status=$?
echo "[trixie] $(grep -E '^== .* took ' "$log" | sed 's/^== //' | paste -sd ';' | sed 's/;/; /g')"
echo "[trixie] swift test: $(grep -aE '(✔|✘) Test run with' "$log" | tail -1 | sed 's/^[^T]*//')"
echo "[trixie] $( [ "$status" -eq 0 ] && echo PASS || echo "FAIL (exit $status)") in $(( $(date +%s) - started )) s; package: $(ls "$out" 2>/dev/null | paste -sd ' ')"
exit "$status"
