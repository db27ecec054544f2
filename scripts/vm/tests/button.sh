#!/bin/bash
# Guest test: the hunter's button, a GPIO line through libgpiod, on the kernel's gpio-sim
# (a simulated chip made through configfs; Debian's kernel lacks the module, so build.sh
# builds it from Debian's source of this kernel: scripts/vm/gpio-sim.sh).
#  1. A simulated chip with 32 lines goes live; `check --json` with the button on line 17
#     reports it (the chip's label, free).
#  2. `hunt` on the simulator (no beacon of the trail's steps is ever heard, so the first
#     clue stays the current one) with the button configured: it requests the line (the
#     kernel names pirate-hunter as its consumer, bias pull-up) and says the first clue.
#  3. A press (the simulated line pulled down: active low) says the clue again: one more
#     `say` `clue` in --json.
#  4. A bouncy press (five pulls down/up within a few ms, then a rattling release) says it
#     once more, only once; a press held for 2.5 s once too.
#  5. SIGTERM: exit 0, and the line is free again.
#  6. A chip that is not there: a warning, and the hunt goes on (its clue is said).
. "$VM_LIB"
PH=${PH:-$VM_REPO/.build/debug/pirate-hunter}
CACHE=/tmp/pirate-hunter-cache
[ -x "$PH" ] || fail "no $PH: build it first (swift build --product pirate-hunter)"
UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
LINE=17

clues() { grep -c '"event": "say", "event_name": "clue"' "$VM_OUT/hunt.json"; }
presses() { grep -c 'button: pressed' "$VM_OUT/hunt.err"; }
pull() { echo "pull-$1" > "$SIM/sim_gpio$LINE/pull"; }
# edges DELAY_MS...: the pull toggled once per delay (down first), from one process, timed.
edges() {
    python3 -S - "$SIM/sim_gpio$LINE/pull" "$@" <<'PY'
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
times, state = [], b"pull-down"
for delay in sys.argv[2:]:
    time.sleep(float(delay) / 1000)
    os.pwrite(fd, state, 0)
    times.append(time.monotonic())
    state = b"pull-up" if state == b"pull-down" else b"pull-down"
os.close(fd)
print("-- %d edges written; gaps (ms): %s" % (len(times), [round((b - a) * 1000, 1) for a, b in zip(times, times[1:])]))
PY
}

vm_step "kernel $(uname -r); gpio-sim through configfs"
modprobe gpio-sim || fail "no gpio-sim module (scripts/vm/gpio-sim.sh could not build it? see build.sh's output)"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || fail "cannot mount configfs"
cfg=/sys/kernel/config/gpio-sim/hunter
mkdir "$cfg" "$cfg/bank0" || fail "cannot make a gpio-sim chip in configfs"
echo 32 > "$cfg/bank0/num_lines"
echo 1 > "$cfg/live" || fail "the simulated chip did not go live"
CHIP=$(cat "$cfg/bank0/chip_name")
SIM=/sys/devices/platform/$(cat "$cfg/dev_name")/$CHIP
[ -c "/dev/$CHIP" ] || fail "no /dev/$CHIP"
[ -e "$SIM/sim_gpio$LINE/pull" ] || fail "no $SIM/sim_gpio$LINE/pull"
echo "-- simulated chip $CHIP ($(cat "$cfg/dev_name")), line $LINE: value $(cat "$SIM/sim_gpio$LINE/value"), pull $(cat "$SIM/sim_gpio$LINE/pull")"

config() {  # config CHIP: a trail whose steps are never heard, the button on CHIP line 17
    cat <<JSON
{
  "transport": "simulator",
  "hunt": { "trail": [
    { "region": "$UUID:2:2", "clue": "Look under the old oak tree." },
    { "region": "$UUID:3:3", "clue": "Now find the red door." }
  ] },
  "button": { "chip": "$1", "line": $LINE }
}
JSON
}
config "$CHIP" > "$VM_OUT/hunter.json"

# ---------------------------------------------------------------------------------------
vm_step "1. check reports the button's chip and line"
"$PH" check --json --silent --config "$VM_OUT/hunter.json" > "$VM_OUT/check.json" 2> "$VM_OUT/check.err"
grep '"check": "button"' "$VM_OUT/check.json" | sed 's/^/-- /'
grep '"check": "button"' "$VM_OUT/check.json" | grep '"status": "ok"' | grep -q "line $LINE of /dev/$CHIP (.*32 lines): free" \
    || fail "check does not report line $LINE of /dev/$CHIP as free: $(cat "$VM_OUT/check.json")"
pass "check: the button's line is there and free"

# ---------------------------------------------------------------------------------------
vm_step "2. hunt with the button: the line requested, the first clue said"
t0=$(date +%s.%N)
"$PH" hunt --config "$VM_OUT/hunter.json" --device null --json --cache-dir "$CACHE" \
    > "$VM_OUT/hunt.json" 2> "$VM_OUT/hunt.err" &
HP=$!
wait_until 90 grep -q "button: line $LINE of /dev/$CHIP" "$VM_OUT/hunt.err" \
    || fail "the hunter did not open the button: $(cat "$VM_OUT/hunt.err")"
grep 'button:' "$VM_OUT/hunt.err" | sed 's/^/-- hunt stderr: /'
wait_until 60 sh -c "[ \$(grep -c '\"event_name\": \"clue\"' '$VM_OUT/hunt.json') -ge 1 ]" \
    || fail "no first clue: $(cat "$VM_OUT/hunt.err")"
echo "-- first clue $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s after the start (voice lines synthesized included)"
sleep 1
before=$(clues)
echo "-- the line as the kernel sees it: value $(cat "$SIM/sim_gpio$LINE/value") (1: the hunter's pull-up holds it high)"
[ "$(cat "$SIM/sim_gpio$LINE/value")" = 1 ] || fail "the line is not high: the hunter's bias pull-up was not applied"
pass "the hunter holds line $LINE (pull-up) and said the first clue ($before clue line(s))"

# ---------------------------------------------------------------------------------------
vm_step "3. a press says the clue again"
tp=$(date +%s.%N)
pull down; sleep 0.2; pull up
wait_until 10 sh -c "grep -q 'button: pressed' '$VM_OUT/hunt.err'" || fail "the hunter saw no press: $(tail -5 "$VM_OUT/hunt.err")"
echo "-- the press logged $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $tp}") s after the pull (0.1 s polling)"
wait_until 20 sh -c "[ \$(grep -c '\"event_name\": \"clue\"' '$VM_OUT/hunt.json') -gt $before ]" \
    || fail "no clue after the press: $(tail -5 "$VM_OUT/hunt.err")"
echo "-- the clue again $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $tp}") s after the press (the composed line synthesized first)"
sleep 1.5
[ "$(clues)" -eq $((before + 1)) ] || fail "one press gave $(( $(clues) - before )) clues"
[ "$(presses)" -eq 1 ] || fail "$(presses) presses logged for one"
grep '"event_name": "clue"' "$VM_OUT/hunt.json" | tail -1 | sed 's/^/-- hunt stdout: /'
pass "one press, one clue again"

# ---------------------------------------------------------------------------------------
vm_step "4. a bouncy press, then a press held 2.5 s: once each"
before=$(clues)
# One python process writes them (a bash `echo` into sysfs took ~50 ms each under TCG):
# down, up, down, up, down 10 ms apart, then after 0.3 s up, down, up 10 ms apart: a
# bounce well inside the hunter's 50 ms. At 3 ms apart the emulated kernel once merged two
# of them (gpio-sim's interrupt still pending when the next came: the held press was then
# edge N+9), which says nothing of the hunter.
edges 0 10 10 10 10 300 10 10
wait_until 20 sh -c "[ \$(grep -c '\"event_name\": \"clue\"' '$VM_OUT/hunt.json') -gt $before ]" \
    || fail "no clue after the bouncy press"
sleep 2
[ "$(clues)" -eq $((before + 1)) ] || fail "a bouncy press gave $(( $(clues) - before )) clues, not 1"
pass "a bouncy press (8 edges, gaps above) said the clue once"
before=$(clues)
pull down; sleep 2.5; pull up
# A press while a clue is being said waits for its end (a clue is not cut by itself): the
# bouncy press's clue, at a child's pace, may still be playing.
wait_until 20 sh -c "[ \$(grep -c '\"event_name\": \"clue\"' '$VM_OUT/hunt.json') -gt $before ]" \
    || fail "a held press gave no clue"
sleep 2
[ "$(clues)" -eq $((before + 1)) ] || fail "a held press gave $(( $(clues) - before )) clues, not 1"
[ "$(presses)" -eq 3 ] || fail "$(presses) presses logged, not 3"
grep 'button: pressed' "$VM_OUT/hunt.err" | sed 's/^/-- hunt stderr: /'
# The first press is edge N (1, or 2 if taking the line with its pull-up made an edge),
# its release N+1, the bouncy press N+2 to N+9 (8 edges, the kernel lost none), the held
# press N+10.
edge_of() { grep 'button: pressed' "$VM_OUT/hunt.err" | sed -n "$1p" | sed 's/.*(edge \([0-9]*\) of the line.*/\1/'; }
n1=$(edge_of 1); n3=$(edge_of 3)
[ -n "$n1" ] && [ "$n3" = $((n1 + 10)) ] \
    || fail "the held press is edge $n3, not $((n1 + 10)): the kernel did not deliver the bouncy press's 8 edges"
pass "a press held 2.5 s said it once"

# ---------------------------------------------------------------------------------------
vm_step "5. SIGTERM: exit 0, the line free again"
"$PH" check --json --silent --config "$VM_OUT/hunter.json" > "$VM_OUT/check-busy.json" 2>/dev/null
grep '"check": "button"' "$VM_OUT/check-busy.json" | sed 's/^/-- check while hunting: /'
grep '"check": "button"' "$VM_OUT/check-busy.json" | grep -q 'in use by pirate-hunter' || fail "check does not see the hunter holding the line"
kill -TERM $HP; wait $HP; rc=$?
[ $rc -eq 0 ] || fail "hunt exited $rc on SIGTERM"
"$PH" check --json --silent --config "$VM_OUT/hunter.json" > "$VM_OUT/check-after.json" 2>/dev/null
grep '"check": "button"' "$VM_OUT/check-after.json" | grep -q ': free' || fail "the line is not free after the hunter's exit"
sed 's/^/-- hunt stderr: /' "$VM_OUT/hunt.err" | grep -v '"sighting"' | tail -12
pass "SIGTERM: exit 0, line $LINE free"

# ---------------------------------------------------------------------------------------
vm_step "6. a chip that is not there: a warning, the hunt goes on"
config gpiochip9 > "$VM_OUT/hunter-nochip.json"
"$PH" hunt --config "$VM_OUT/hunter-nochip.json" --device null --json --cache-dir "$CACHE" --duration 12 \
    > "$VM_OUT/nochip.json" 2> "$VM_OUT/nochip.err"
rc=$?
grep 'button' "$VM_OUT/nochip.err" | sed 's/^/-- /'
[ $rc -eq 0 ] || fail "hunt exited $rc"
grep -q 'button: open GPIO line 17 of /dev/gpiochip9: no such GPIO chip .*the hunt goes on without the button' "$VM_OUT/nochip.err" \
    || fail "no warning naming the missing chip"
grep -q '"event_name": "clue"' "$VM_OUT/nochip.json" || fail "the hunt without its button said no clue"
pass "no chip: one warning, the hunt went on and said its clue"

echo 0 > "$cfg/live"; rmdir "$cfg/bank0" "$cfg"
vm_step "done"
