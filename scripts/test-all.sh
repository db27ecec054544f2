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
background="bluez-extended check treasure button"
timed=$(cd scripts/vm/tests && for t in *.sh; do n=${t%.sh}; case " $background " in *" $n "*) ;; *) printf '%s ' "$n" ;; esac; done)
log=$(mktemp -d)/swift-test.log
trap 'rm -rf "$(dirname "$log")"' EXIT
# The kernel and initramfs once, before two run.sh could build them at the same time.
[ "${SKIP_VM:-0}" = 1 ] || scripts/vm/build.sh > /dev/null
status=0
# A watchdog: swift test takes 2-4 minutes here; one still running after SWIFT_TEST_LIMIT
# seconds (default 1200) is stuck (a CI run once waited out its 90 minutes on a hung test
# process). The tests it started and never finished, and every thread's stack, go in the
# log, then it is killed and the run fails.
# (Appending, both: the watchdog's report must not be written over.)
"$swift" test --skip-build --verbose >> "$log" 2>&1 &
tests=$!
limit=${SWIFT_TEST_LIMIT:-1200}
( waited=0
  while kill -0 "$tests" 2>/dev/null; do
    sleep 5; waited=$((waited + 5))
    [ "$waited" -ge "$limit" ] || continue
    echo "== swift test still running after $limit s; started and not finished:"
    sed -n 's/^◇ Test \(.*\) started\.$/\1/p' "$log" | sort > "$log.started"
    sed -n 's/^\(✔\|✘\) Test \(.*\) \(passed\|failed\) after .*/\2/p' "$log" | sed 's/ with [0-9]* test cases\{0,1\}$//' | sort -u > "$log.ended"
    comm -23 "$log.started" "$log.ended"
    xctest=$(pgrep -P "$tests" -f 'PirateHunterPackageTests.xctest' || true)
    for p in $xctest; do
      echo "== threads of $p:"
      if command -v gdb > /dev/null; then gdb -p "$p" -batch -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)'
      else for t in /proc/"$p"/task/*; do echo "$t $(cat "$t"/comm) $(cat "$t"/wchan)"; done; fi
    done
    [ -z "$xctest" ] || kill -KILL $xctest
    kill "$tests" 2>/dev/null || true
    break
  done ) >> "$log" 2>&1 < /dev/null &
watchdog=$!
wait "$tests" || status=$?
wait "$watchdog" || true
echo "== swift test (exit $status):"
# Only what ended (passed, failed, issues): the started lines are for the watchdog.
grep -v '^◇ Test .* started\.$' "$log" || true
[ "${SKIP_VM:-0}" = 1 ] && exit "$status"
nice -n 19 scripts/vm/run.sh --jobs 1 --tests "$background" &
idle=$!
more=0
scripts/vm/run.sh --jobs 1 --tests "$timed" || more=$?
vm=0
wait "$idle" || vm=$?
[ "$status" -ne 0 ] && exit "$status"
[ "$more" -ne 0 ] && exit "$more"
exit "$vm"
