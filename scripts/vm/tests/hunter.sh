#!/bin/bash
# Guest test: pirate-hunter's kernel HCI path for real (btvirt controllers, snd-aloop).
#  1. `scan --hci hci0 --json` reports the iBeacon BlueZ's hcitool advertises on hci1 with
#     exactly its UUID/major/minor/power, address hci1's and rssi null (btvirt sends 127);
#     a raw socket (hci.py) decodes the same values; SIGINT ends scan with 0.
#  2. `hunt --hci hci0 --region UUID --device hw:Loopback,0` enters the region and plays
#     the "arrr": the enter event and the sound event are in its JSON, and the arrr's
#     waveform (voices/arrr.wav) is found in what arecord captured from hw:Loopback,1.
#     btvirt sends ONE report per advertising enable, while the ranging engine wants 2
#     packets within 1.5 s and 3 within 3 s to enter: a loop here toggles hci1's
#     advertising off/on (hcitool, ~every 0.3 s), each enable giving hci0 a new report.
#  3. Killing btvirt while hunting: the hunter logs "adapter lost" once (and, the outage
#     lasting over 5 s, says the adapter-missing line), keeps running; btvirt restarted: it brings hci0 up itself
#     (HCIDEVUP), scans again (its LE Set Scan Enable on the new hci0), hears the beacon
#     again and says the adapter-back line. The outage itself is no silence of the beacon
#     (the ranging holds its silences while the adapter is gone); the beacon kept silent
#     after the resume, the region is left, and it is entered again when the beacon
#     advertises (btvirt gives no RSSI, so no ranges are printed to show it is heard).
#  4. SIGTERM: hunt exits 0 and its last LE Set Scan Enable on hci0 is 00 (scanning off).
#  5. As user nobody without capabilities: `scan` exits 77 and its one-line error names
#     the fix (setcap ... or the systemd unit): the kernel refuses LE commands (OGF 0x08)
#     from a raw socket without CAP_NET_RAW with EPERM, which scan maps to 77.
#     The same user with only the ambient CAP_NET_RAW and CAP_NET_ADMIN (what the systemd
#     unit grants) scans and sees the iBeacon.
. "$VM_LIB"
PH=${PH:-$VM_REPO/.build/debug/pirate-hunter}
UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
MAJOR=1234 MINOR=5678 POWER=-59
CACHE=/tmp/pirate-hunter-cache   # guest tmpfs: the lines are synthesized once, in step 2
[ -x "$PH" ] || fail "no $PH: build it first (swift build --product pirate-hunter)"
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# json_check FILE PYEXPR: true when some JSON line `e` of FILE satisfies PYEXPR.
json_check() {
    python3 -S -c '
import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if eval("(" + sys.argv[2] + ")"): sys.exit(0)
sys.exit(1)' "$1" "$2"
}

# adv_pulses_start / adv_pulses_stop: hci1's advertising toggled off and on in a loop,
# so that btvirt sends hci0 one new report per enable (it sends one per enable only).
adv_pulses_start() {
    ( n=0; while :; do
        hcitool -i hci1 cmd 0x08 0x000a 00 >/dev/null 2>&1
        hcitool -i hci1 cmd 0x08 0x000a 01 >/dev/null 2>&1 && n=$((n + 1)) && echo $n > "$VM_OUT/pulses.txt"
        sleep 0.3
    done ) &
    PULSES_PID=$!
}
adv_pulses_stop() { kill "$PULSES_PID" 2>/dev/null; wait "$PULSES_PID" 2>/dev/null; advertise_off hci1; }

vm_step "kernel $(uname -r); btvirt -l2 -L (legacy LE controllers)"
btvirt_start
hci_up hci0
hci_up hci1
ADDR1=$(hciconfig hci1 | awk '/BD Address/ {print $3}')
echo "-- hci1 is $ADDR1"

# ---------------------------------------------------------------------------------------
vm_step "1. scan --hci hci0 --json sees hcitool's iBeacon on hci1"
hci_commands_start hci0 "$VM_OUT/cmds-scan.txt"
AD=$(ibeacon_ad $UUID $MAJOR $MINOR $POWER)
$VM_HCI listen hci0 --expect "$AD" --timeout 30 > "$VM_OUT/oracle-scan.txt" 2>&1 &
LP=$!
wait_until 10 grep -q READY "$VM_OUT/oracle-scan.txt" || fail "hci.py listen did not start"
t0=$(uptime_s)
"$PH" scan --hci hci0 --json --duration 60 > "$VM_OUT/scan.json" 2> "$VM_OUT/scan.err" &
SP=$!
wait_until 20 grep -q 'opcode=0x200c params=01' "$VM_OUT/cmds-scan.txt" \
    || fail "scan never enabled scanning on hci0: $(cat "$VM_OUT/scan.err")"
echo "-- scan's scanning on after $(awk "BEGIN{print $(uptime_s) - $t0}") s (process start included)"
advertise_ibeacon hci1 $UUID $MAJOR $MINOR $POWER
wait_until 15 grep -q '"sighting"' "$VM_OUT/scan.json" || fail "scan printed no sighting"
wait $LP || fail "the oracle (hci.py listen) never saw the advertised bytes"
kill -INT $SP; wait $SP; rc=$?
advertise_off hci1
hci_commands_stop
sed 's/^/-- scan stdout: /' "$VM_OUT/scan.json"
sed 's/^/-- scan stderr: /' "$VM_OUT/scan.err"
grep '^IBEACON' "$VM_OUT/oracle-scan.txt" | sed 's/^/-- oracle: /'
grep -E 'opcode=0x200[bc]' "$VM_OUT/cmds-scan.txt" | sed 's/^/-- hci0 command: /'
grep -q "^IBEACON dev=hci0 addr=$ADDR1 .*uuid=$UUID major=$MAJOR minor=$MINOR power=$POWER " "$VM_OUT/oracle-scan.txt" \
    || fail "the oracle decoded something else"
json_check "$VM_OUT/scan.json" "e.get('event') == 'sighting' and e.get('kind') == 'ibeacon'
    and e.get('uuid') == '$UUID' and e.get('major') == $MAJOR and e.get('minor') == $MINOR
    and e.get('power') == $POWER and e.get('rssi', 0) is None and e.get('address') == '$ADDR1'" \
    || fail "scan's sighting differs from uuid=$UUID major=$MAJOR minor=$MINOR power=$POWER rssi=null address=$ADDR1"
[ $rc -eq 0 ] || fail "scan exited $rc on SIGINT"
[ "$(hci_last_cmd "$VM_OUT/cmds-scan.txt" 0x200c)" = 0000 ] || fail "scan left scanning on"
pass "scan saw uuid=$UUID major=$MAJOR minor=$MINOR power=$POWER rssi=null from $ADDR1 (as the oracle); SIGINT: exit 0, scanning off"

# ---------------------------------------------------------------------------------------
vm_step "2. hunt enters the region and plays the arrr (captured from hw:Loopback,1)"
hci_commands_start hci0 "$VM_OUT/cmds-hunt.txt"; CP_HUNT=$HCI_COMMANDS_PID
arecord -q -D hw:Loopback,1,0 -f S16_LE -c 1 -r 22050 -t raw "$VM_OUT/hunt-capture.raw" 2> "$VM_OUT/arecord.err" &
RP=$!
wait_until 10 grep -q 'state: RUNNING' /proc/asound/Loopback/pcm1c/sub0/status \
    || fail "arecord never started capturing: $(cat "$VM_OUT/arecord.err")"
cap0=$(uptime_s)
t0=$(uptime_s)
"$PH" hunt --hci hci0 --region $UUID --device hw:Loopback,0,0 --json --cache-dir "$CACHE" \
    > "$VM_OUT/hunt.json" 2> "$VM_OUT/hunt.err" &
HP=$!
wait_until 60 grep -q 'opcode=0x200c params=01' "$VM_OUT/cmds-hunt.txt" \
    || fail "hunt never enabled scanning: $(cat "$VM_OUT/hunt.err")"
echo "-- hunt's scanning on after $(awk "BEGIN{print $(uptime_s) - $t0}") s (voice lines synthesized included)"
grep 'voice ready' "$VM_OUT/hunt.err" | sed 's/^/-- hunt stderr: /'
advertise_ibeacon hci1 $UUID $MAJOR $MINOR $POWER
adv_pulses_start
# grep polls (a python start under TCG costs 1-2 s of CPU); json_check confirms once.
wait_until 30 grep -q '"event": "sound", "name": "arrr"' "$VM_OUT/hunt.json"
json_check "$VM_OUT/hunt.json" "e.get('event') == 'sound' and e.get('name') == 'arrr'" \
    || fail "hunt never played the arrr: $(cat "$VM_OUT/hunt.json")"
sleep 2   # the arrr (0.57 s) and the enter line reach the loopback
kill -INT $RP; wait $RP 2>/dev/null
adv_pulses_stop
echo "-- advertising enables sent by the loop: $(cat "$VM_OUT/pulses.txt" 2>/dev/null)"
sed 's/^/-- hunt stdout: /' "$VM_OUT/hunt.json"
json_check "$VM_OUT/hunt.json" "e.get('event') == 'enter' or (e.get('event') == 'state' and e.get('state') == 'inside')" \
    || fail "hunt never entered the region"
json_check "$VM_OUT/hunt.json" "e.get('event') == 'sighting' or e.get('event') == 'range'" >/dev/null || true
# Where the arrr should be: the PCM's latency from play() to the loopback capture is
# unknown under TCG (1.5 to 5 s seen on a loaded host), so the capture is anchored on the
# start-up line, the first sound it holds: the arrr comes (t_sound - t_startup) after it.
# (no process substitution: the guest has no /dev/fd)
times=$(python3 -S -c '
import json, sys
t = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "say" and e.get("event_name") == "startup": t.setdefault("startup", e["t"])
    if e.get("event") == "sound": t.setdefault("sound", e["t"])
print(t.get("startup", 0), t.get("sound", 0))' "$VM_OUT/hunt.json")
t_startup=${times% *}
t_sound=${times#* }
expect=$(awk "BEGIN{print $t_sound - $t_startup}")
echo "-- start-up line at t=$t_startup, arrr at t=$t_sound: $expect s apart"
python3 -S - "$VM_OUT/hunt-capture.raw" voices/arrr.wav "$expect" <<'PY' || fail "the arrr is not in the capture"
# argv[3]: seconds from the start-up line's onset in the capture to the arrr.
# Pure python (the guest's python3 has no numpy): normalized cross-correlation of
# voices/arrr.wav against the capture, coarse on 16-sample means, then exact around the peak.
import array, math, sys, wave
from operator import mul
cap = array.array("h"); cap.frombytes(open(sys.argv[1], "rb").read())
with wave.open(sys.argv[2]) as w:
    rate = w.getframerate()
    assert rate == 22050 and w.getnchannels() == 1 and w.getsampwidth() == 2
    ref = array.array("h"); ref.frombytes(w.readframes(w.getnframes()))
# The start-up line's onset: the first 10 ms with an RMS over 300.
W = rate // 100
onset = next((i for i in range(0, len(cap) - W, W)
              if math.sqrt(sum(v * v for v in cap[i:i + W]) / W) > 300), None)
if onset is None:
    print("-- the capture is silent"); sys.exit(1)
expect = onset / rate + float(sys.argv[3])
print(f"-- capture: {len(cap) / rate:.2f} s, peak {max(map(abs, cap)) if cap else 0}; start-up line "
      f"heard {onset / rate:.2f} s in; arrr expected about {expect:.2f} s in")
def ncc_search(x, r, lags):
    """(lag, normalized correlation) of r against x at its best lag among lags."""
    e = [0]
    for v in x: e.append(e[-1] + v * v)  # running energy: each window's in O(1)
    rr = math.sqrt(sum(map(mul, r, r))); n = len(r)
    def c(k):
        d = math.sqrt(e[k + n] - e[k]) * rr
        return sum(map(mul, x[k:k + n], r)) / d if d > 0 else 0.0
    return max(((k, c(k)) for k in lags), key=lambda kc: kc[1])
D = 16
dec = lambda x: [sum(x[i:i + D]) / D for i in range(0, len(x) - D + 1, D)]
cd, rd = dec(cap), dec(ref)
lo = max(0, int((expect - 0.5) * rate / D)); hi = min(len(cd) - len(rd), int((expect + 1.5) * rate / D))
if hi < lo:
    print("-- the capture ends before the arrr could be in it"); sys.exit(1)
best, _ = ncc_search(cd, rd, range(lo, hi + 1))
k, c = ncc_search(cap, ref, range(max(0, best * D - D), min(len(cap) - len(ref), best * D + D) + 1))
seg = cap[k:k + len(ref)]
rms = math.sqrt(sum(map(mul, seg, seg)) / len(seg))
print(f"-- arrr found {k / rate:.2f} s into the capture: normalized correlation {c:.3f} with "
      f"voices/arrr.wav (1.0 = identical; speech mixed in lowers it), RMS there {rms:.0f}")
sys.exit(0 if c > 0.5 and rms > 300 else 1)
PY
pass "hunt entered the region, printed the sound event and the arrr came out of hw:Loopback"

# ---------------------------------------------------------------------------------------
vm_step "3. adapter lost: kill btvirt while hunting, then restart it"
HCI_COMMANDS_PID=$CP_HUNT hci_commands_stop
scans_before=$(grep -c 'scanning on hci0' "$VM_OUT/hunt.err")
btvirt_stop
t_lost=$(uptime_s)
wait_until 10 grep -q 'adapter lost' "$VM_OUT/hunt.err" || fail "hunt did not log the adapter lost"
# Several retries (backoff 0.25 .. 1.5 s) with no adapter; the line is said after 5 s.
wait_until 15 grep -q '"event_name": "adapter-missing"' "$VM_OUT/hunt.json" || true
echo "-- $(awk "BEGIN{print $(uptime_s) - $t_lost}") s of outage so far"
kill -0 $HP 2>/dev/null || fail "hunt died when the adapter went away"
lost_lines=$(grep -c 'adapter lost' "$VM_OUT/hunt.err")
grep 'adapter lost' "$VM_OUT/hunt.err" | sed 's/^/-- hunt stderr: /'
[ "$lost_lines" -eq 1 ] || fail "adapter lost logged $lost_lines times, not once"
json_check "$VM_OUT/hunt.json" "e.get('event') == 'say' and e.get('event_name') == 'adapter-missing'" \
    || fail "no adapter-missing line said"
pass "adapter lost logged once, the adapter-missing line said (after 5 s of outage), hunt still running after its retries"
# The silence is the radio's, not the beacon's: the ranging engine holds every silence
# while the adapter is gone (issue 22's fourteenth round, ReceiverHearing), so the region is
# not left for it. (It was, before: 3-15 s in.) What the resume brings is checked below by
# the beacon's new reports.
grep '"event": "exit"' "$VM_OUT/hunt.json" | sed 's/^/-- hunt stdout: /' || true

rescanned() { [ "$(grep -c 'scanning on hci0' "$VM_OUT/hunt.err")" -gt "$scans_before" ]; }
lines_back=$(wc -l < "$VM_OUT/hunt.json")
btvirt_start
t_back=$(uptime_s)
wait_until 15 rescanned \
    || fail "hunt did not resume scanning on the returned hci0: $(tail -5 "$VM_OUT/hunt.err")"
echo "-- hunt scanning again $(awk "BEGIN{print $(uptime_s) - $t_back}") s after btvirt's adapters were back (0.1 s polling)"
# The sniffer can only bind once hci0 exists and python starts slowly under TCG: it may
# miss the re-arm, but sees everything from here on (the SIGTERM check below).
hci_commands_start hci0 "$VM_OUT/cmds-resume.txt"
# btvirt's reports carry no RSSI (127), so the hunt prints no ranges: what shows that it
# hears the beacon again is the region entered again. The beacon (hci1, down since the
# restart) stays silent until the region is left: with the adapter back its silence counts
# again (no other advertiser here holds it), so the exit comes within the learned silence
# (at most `maximum_silence`, 60 s). Advertising at once instead raced that exit: a CI run
# under TCG heard the beacon back before its silence ran out, printed nothing new, and the
# check below found no report. The beacon's advertising in step 2 ends with that step, so
# under TCG the region may also have been left before the adapter went (another CI run:
# the exit 5 s after step 2, before the kill); what is waited for is the region's last
# word being an exit, whenever it came.
region_left() {
    grep -E '"event": "(enter|exit|state)"' "$VM_OUT/hunt.json" | tail -n 1 | grep -q '"exit"\|"outside"'
}
wait_until 75 region_left \
    || fail "the region was not left while the beacon stayed silent after the resume: $(tail -n +$((lines_back + 1)) "$VM_OUT/hunt.json")"
if tail -n +$((lines_back + 1)) "$VM_OUT/hunt.json" | grep -q '"exit"'; then
    echo "-- region left $(awk "BEGIN{print $(uptime_s) - $t_back}") s after btvirt's adapters were back, the beacon silent"
else
    echo "-- region left before the resume (the beacon silent since step 2), not entered since"
fi
hci_up hci1
advertise_ibeacon hci1 $UUID $MAJOR $MINOR $POWER
lines_before=$(wc -l < "$VM_OUT/hunt.json")
adv_pulses_start
# New reports of the beacon: an enter (or ranges, where a controller gives RSSI). Up to 45 s
# under TCG beside `swift test`; the wait ends at the first report.
wait_until 45 sh -c "tail -n +$((lines_before + 1)) '$VM_OUT/hunt.json' | grep -q '\"enter\"\|\"inside\"\|\"range\"'" || true
adv_pulses_stop
$VM_HCI devinfo hci0 | sed 's/^/-- /'
sed 's/^/-- hunt stderr: /' "$VM_OUT/hunt.err"
grep -E 'opcode=0x200[bc]' "$VM_OUT/cmds-resume.txt" | sed 's/^/-- new hci0 command: /'
hci_is_up hci0 || fail "hci0 is not up (hunt did not bring it up)"
json_check "$VM_OUT/hunt.json" "e.get('event') == 'say' and e.get('event_name') == 'adapter-back'" \
    || fail "no adapter-back line said"
tail -n +$((lines_before + 1)) "$VM_OUT/hunt.json" | sed 's/^/-- hunt stdout after the resume: /'
tail -n +$((lines_before + 1)) "$VM_OUT/hunt.json" | grep -q '"enter"\|"inside"\|"range"' \
    || fail "no report of the beacon after the resume"
pass "hunt brought hci0 up, scanned again, said adapter-back and heard the beacon again"

# ---------------------------------------------------------------------------------------
vm_step "4. SIGTERM: hunt exits 0 and leaves scanning off"
kill -TERM $HP; wait $HP; rc=$?
sleep 0.5
hci_commands_stop
tail -2 "$VM_OUT/hunt.err" | sed 's/^/-- hunt stderr: /'
grep -E 'opcode=0x200c' "$VM_OUT/cmds-resume.txt" | tail -2 | sed 's/^/-- hci0 last: /'
[ $rc -eq 0 ] || fail "hunt exited $rc on SIGTERM"
[ "$(hci_last_cmd "$VM_OUT/cmds-resume.txt" 0x200c)" = 0000 ] || fail "the last LE Set Scan Enable on hci0 is not 00"
pass "SIGTERM: exit 0, last LE Set Scan Enable on hci0 = 0000"

# ---------------------------------------------------------------------------------------
vm_step "5. no CAP_NET_RAW: scan exits 77 naming the fix"
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    "$PH" scan --hci hci0 --json --duration 10 > "$VM_OUT/nocaps.json" 2> "$VM_OUT/nocaps.err"
rc=$?
sed 's/^/-- scan as nobody stderr: /' "$VM_OUT/nocaps.err"
echo "-- exit status $rc"
[ $rc -eq 77 ] || fail "scan without CAP_NET_RAW exited $rc, not 77"
[ "$(wc -l < "$VM_OUT/nocaps.err")" -eq 1 ] || fail "not one line on stderr"
grep -q 'setcap cap_net_raw,cap_net_admin+ep' "$VM_OUT/nocaps.err" && grep -q 'systemd' "$VM_OUT/nocaps.err" \
    || fail "the message does not name the fix"
pass "without CAP_NET_RAW: exit 77 with the setcap / systemd unit fix"

vm_step "5b. user nobody with only CAP_NET_RAW and CAP_NET_ADMIN (the unit's set) scans"
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+net_raw,+net_admin \
    --ambient-caps=+net_raw,+net_admin \
    "$PH" scan --hci hci0 --json --duration 60 > "$VM_OUT/caps.json" 2> "$VM_OUT/caps.err" &
SP=$!
wait_until 20 grep -q 'scanning on hci0' "$VM_OUT/caps.err" || fail "scan as nobody+caps did not scan: $(cat "$VM_OUT/caps.err")"
advertise_ibeacon hci1 $UUID $MAJOR 77 $POWER
wait_until 15 grep -q '"sighting"' "$VM_OUT/caps.json"
kill -INT $SP; wait $SP; rc=$?
advertise_off hci1
sed 's/^/-- scan as nobody+caps stdout: /' "$VM_OUT/caps.json"
json_check "$VM_OUT/caps.json" "e.get('event') == 'sighting' and e.get('minor') == 77 and e.get('uuid') == '$UUID'" \
    || fail "scan as nobody with CAP_NET_RAW+CAP_NET_ADMIN saw no iBeacon"
[ $rc -eq 0 ] || fail "scan as nobody+caps exited $rc on SIGINT"
pass "user nobody with the ambient CAP_NET_RAW and CAP_NET_ADMIN scans and sees the iBeacon (minor 77)"

btvirt_stop
vm_step "done"
