#!/usr/bin/env bash
# `make test`: everything is built once, then `swift test` and the VM's guest tests run side
# by side (the guests mostly wait on real time, swift test mostly computes). swift test's
# output is shown when it ends (the guests' consoles stream live); the status is the first
# failure's. SKIP_VM=1: swift test only.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
"$swift" build --build-tests
if [ "${SKIP_VM:-0}" = 1 ]; then exec "$swift" test --skip-build; fi
log=$(mktemp -d)/swift-test.log
trap 'rm -rf "$(dirname "$log")"' EXIT
"$swift" test --skip-build > "$log" 2>&1 &
unit=$!
vm=0
scripts/vm/run.sh || vm=$?
status=0
wait "$unit" || status=$?
echo "== swift test (exit $status):"
cat "$log"
[ "$status" -ne 0 ] && exit "$status"
exit "$vm"
