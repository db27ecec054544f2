#!/bin/bash
# Guest test: `pirate-hunter check` on a machine that has what a Pi has (issue 14).
#  1. btvirt's LE controllers (hci0 up, hci1 down), snd-aloop (Loopback) and snd-dummy
#     (Dummy, which has a hardware mixer): check --json plays its test line on the
#     Loopback card and is all green (exit 0; the service is only "not installed": no
#     systemd here). The cards it lists are the kernel's (/proc/asound/cards), found
#     through snd_card_next/snd_ctl_card_info; LE and the supported-commands bits are read
#     from the controller.
#  2. The Dummy card's Master turned down to 5 % (amixer): check names the control and
#     the level through ALSA's mixer API and gives the amixer line; that very line, run,
#     makes it green again. Muted (when the control has a switch): a failure, exit 69.
#  3. No test line without --silent failing: a device that does not exist is a failure
#     naming it, with its fix, exit 69.
#  4. say --device auto with only Loopback and Dummy: ALSA's default, and the log line
#     names the cards it passed over.
. "$VM_LIB"
PH=${PH:-$VM_REPO/.build/debug/pirate-hunter}
[ -x "$PH" ] || fail "no $PH: build it first (swift build --product pirate-hunter)"

# json_get FILE SECTION CHECK KEY: one field of one checklist line ("" when absent).
json_get() {
    python3 -S -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("section") == sys.argv[2] and o.get("check") == sys.argv[3]:
        print(o.get(sys.argv[4], "")); break
' "$@"
}

vm_step "kernel $(uname -r); btvirt, snd-aloop, snd-dummy"
btvirt_start
hci_up hci0
modprobe snd-dummy || fail "modprobe snd-dummy"
wait_until 5 grep -q Dummy /proc/asound/cards || fail "no Dummy card"
cat /proc/asound/cards | sed 's/^/-- /'

vm_step "1. paired (check --new-game, pair), then check --json --device plughw:CARD=Loopback,DEV=0: all green"
# An unpaired Pi is a warning ("game key"): pair this one's own settings file first.
code=$("$PH" check --new-game | grep -oE '([A-Z2-7]{4}-){12}[A-Z2-7]{4}' | head -1)
[ -n "$code" ] || fail "check --new-game printed no code"
config="$VM_OUT/hunter.json"
# pair changes a file that is there (a --config that is not is a typo: 66).
printf '{}\n' > "$config"
"$PH" pair "$code" --config "$config" > /dev/null || fail "pair $code --config $config failed"
"$PH" check --json --config "$config" --device plughw:CARD=Loopback,DEV=0 > "$VM_OUT/check1.json" 2> "$VM_OUT/check1.err"
rc=$?
sed 's/^/-- /' "$VM_OUT/check1.json"
python3 -S - "$VM_OUT/check1.json" <<'PY' || fail "check is not all green"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
bad = [l for l in lines[:-1] if l["status"] not in ("ok", "skip") and not (l["section"] == "service" and l["detail"] == "not installed")]
assert not bad, bad
assert lines[-1]["exit"] == 0 and lines[-1]["failed"] == 0, lines[-1]
by = {(l.get("section"), l.get("check")): l for l in lines}
assert by[("audio", "test line")]["status"] == "ok", by[("audio", "test line")]
assert by[("bluetooth", "hci0 LE")]["status"] == "ok"
assert "extended" in by[("bluetooth", "hci0 commands")]["detail"], by[("bluetooth", "hci0 commands")]
assert by[("bluetooth", "hci1")]["detail"].startswith("down: the hunter brings it up"), by[("bluetooth", "hci1")]
PY
[ $rc -eq 0 ] || fail "check exited $rc: $(cat "$VM_OUT/check1.err")"
cards=$(json_get "$VM_OUT/check1.json" audio cards detail)
sed -n 's/^ *\([0-9]*\) \[\([^ ]*\) *\].*/\1 \2/p' /proc/asound/cards > "$VM_OUT/kernel-cards.txt"
[ -s "$VM_OUT/kernel-cards.txt" ] || fail "no card in /proc/asound/cards"
while read -r index id; do
    [[ "$cards" == *"card $index '"* ]] || fail "check does not list card $index $id ($cards)"
    echo "-- kernel card $index [$id]: listed"
done < "$VM_OUT/kernel-cards.txt"
[[ "$cards" == *"(Loopback) other"* && "$cards" == *"(Dummy) other"* ]] || fail "drivers: $cards"
pass "all green: $cards"

vm_step "2. the Dummy card's Master at 5 %: named, with the amixer line that fixes it"
amixer -q -c Dummy sset Master 5% || fail "amixer could not set Master"
"$PH" check --json --silent --config "$config" --device plughw:CARD=Dummy,DEV=0 > "$VM_OUT/check2.json"
mixer=$(json_get "$VM_OUT/check2.json" audio mixer detail)
status=$(json_get "$VM_OUT/check2.json" audio mixer status)
fix=$(json_get "$VM_OUT/check2.json" audio mixer fix)
echo "-- mixer: $status: $mixer"
echo "-- fix: $fix"
[ "$status" = warn ] && [[ "$mixer" == *"Master 5%"* ]] || fail "a quiet Master not reported ($status: $mixer)"
first_fix=${fix%%;*}
[[ "$first_fix" == "amixer -c 1 sset 'Master' 80%"* ]] || fail "fix: $fix"
eval "$first_fix" > /dev/null || fail "the fix '$first_fix' failed"
"$PH" check --json --silent --config "$config" --device plughw:CARD=Dummy,DEV=0 > "$VM_OUT/check3.json"
[ "$(json_get "$VM_OUT/check3.json" audio mixer status)" = ok ] || fail "still not ok after the fix: $(json_get "$VM_OUT/check3.json" audio mixer detail)"
pass "quiet found, fixed by its own fix line: $(json_get "$VM_OUT/check3.json" audio mixer detail)"
if amixer -c Dummy sget Master | grep -q '\[on\]'; then
    amixer -q -c Dummy sset Master mute
    "$PH" check --json --silent --config "$config" --device plughw:CARD=Dummy,DEV=0 > "$VM_OUT/check4.json"; rc=$?
    [ "$(json_get "$VM_OUT/check4.json" audio mixer status)" = fail ] && [ $rc -eq 69 ] \
        || fail "a muted Master is not a failure (rc $rc)"
    pass "muted: $(json_get "$VM_OUT/check4.json" audio mixer fix)"
else
    echo "-- the Dummy card's Master has no playback switch: mute not tested here (unit-tested)"
fi

vm_step "3. a device that does not exist"
"$PH" check --json --config "$config" --device plughw:CARD=Nope,DEV=0 > "$VM_OUT/check5.json"; rc=$?
[ $rc -eq 69 ] || fail "exit $rc"
[[ "$(json_get "$VM_OUT/check5.json" audio "test line" detail)" == *"plughw:CARD=Nope,DEV=0"* ]] || fail "the device is not named"
[ -n "$(json_get "$VM_OUT/check5.json" audio "test line" fix)" ] || fail "no fix"
pass "a missing device: exit 69, named, with its fix"
vm_step "4. say --device auto: no USB card here, so ALSA's default, and the log says why"
"$PH" say "Ahoy" --device auto 2> "$VM_OUT/say-auto.err" || fail "say --device auto: $(cat "$VM_OUT/say-auto.err")"
sed 's/^/-- /' "$VM_OUT/say-auto.err"
grep -q "^audio: opened 'default' (auto: no USB audio card that plays among card 0 'Loopback' (Loopback), card 1 'Dummy' (Dummy), so ALSA's default)$" "$VM_OUT/say-auto.err" \
    || fail "say --device auto did not log the card it opened and why"
pass "auto logged its choice"
btvirt_stop
