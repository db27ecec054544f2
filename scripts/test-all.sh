#!/usr/bin/env bash
# `make test`: everything is built once, then swift test and the VM's guest tests.
# The host is CPU-bound (two cores) and the guests mostly wait on real time, so the work
# is arranged by priority, not only by order:
#  - swift test first, alone (it computes, and some of its tests run on real time);
#  - then the guests that time speech and sound (bluez-smoke, hunter, underrun), one at a
#    time, at normal priority: two guests at a time (or swift test beside one) starved the
#    hunter's guest into playback underruns, its arrr distorted in 2 of 4 CI runs;
#  - beside those, the guests whose checks survive a slow guest (bluez-extended, check,
#    treasure, button: generous waits, nothing timed to the millisecond) at the lowest priority
#    (nice 19), one at a time: they take the CPU the timed guest leaves idle.
# swift test's output is shown when it ends (the guests' consoles stream live); the status
# is the first failure's.
# SKIP_VM=1: swift test only.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
"$swift" build --build-tests
if [ "${SKIP_VM:-0}" = 1 ]; then exec "$swift" test --skip-build; fi
background="bluez-extended check treasure button"
timed=$(cd scripts/vm/tests && for t in *.sh; do n=${t%.sh}; case " $background " in *" $n "*) ;; *) printf '%s ' "$n" ;; esac; done)
log=$(mktemp -d)/swift-test.log
trap 'rm -rf "$(dirname "$log")"' EXIT
# The kernel and initramfs once, before two run.sh could build them at the same time.
scripts/vm/build.sh > /dev/null
status=0
"$swift" test --skip-build > "$log" 2>&1 || status=$?
echo "== swift test (exit $status):"
cat "$log"
nice -n 19 scripts/vm/run.sh --jobs 1 --tests "$background" &
idle=$!
more=0
scripts/vm/run.sh --jobs 1 --tests "$timed" || more=$?
vm=0
wait "$idle" || vm=$?
[ "$status" -ne 0 ] && exit "$status"
[ "$more" -ne 0 ] && exit "$more"
exit "$vm"
