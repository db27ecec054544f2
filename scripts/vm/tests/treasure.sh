#!/bin/bash
# Guest test: `pirate-hunter treasure` on the kernel HCI path (issue 6's acceptance).
#  1. Legacy controllers (btvirt -l2 -L): `treasure --hci hci1` sends LE Set Advertising
#     Parameters (ADV_NONCONN_IND unpaired, the configured interval), Data (exactly the iBeacon's 30
#     bytes) and Enable, in that order, each answered 0x00 (command sniffer hci.py,
#     independent of pirate-hunter). The reward is never on the air in plain (issue 25): an
#     unpaired box sends none, a paired one only sealed for a verified hunter's challenge;
#     its bytes appear in no command. `scan --hci hci0 --active --json`, started after,
#     shows exactly one identity (the configured uuid/major/minor/power, hci1's address)
#     and no reward, as the raw reports on hci0 (hci.py listen) do.
#  2. `hciconfig hci1 down` while it advertises: the treasure notices ("controller
#     unavailable (adapter down: hci1)"), brings hci1 up itself (HCIDEVUP) and advertises again (a new LE Set
#     Advertising Enable 01 after the down); the time it takes is printed.
#  3. SIGTERM: exit 0 within 2 s, "advertising off" on stderr, the last LE Set Advertising
#     Enable on hci1 is 00 (answered 0x00).
#  4. Extended controllers (btvirt -l2): the same with LE Set Extended Advertising
#     Parameters/Data/Enable (set 0, legacy non-scannable PDU 0x0010 unpaired), no reward in any
#     command, and `scan --active` (extended scanning) on hci0 shows the ids and power and no reward; SIGTERM:
#     the last 0x2039 starts with 00.
#  5. A bad value: `treasure --major 70000` exits 78 naming treasure.major.
. "$VM_LIB"
PH=${PH:-$VM_REPO/.build/debug/pirate-hunter}
[ -x "$PH" ] || fail "no $PH: build it first (swift build --product pirate-hunter)"
UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
INTERVAL=250                       # ms: 400 units of 0.625 ms = 0x0190
INTERVAL_LE=9001                   # 0x0190 little-endian
uptime_s() { cut -d' ' -f1 /proc/uptime; }
since() { awk "BEGIN{printf \"%.2f\", $(uptime_s) - $1}"; }
STEP_FAILED=""
# step_fail MSG: a broken claim whose step the later ones do not depend on: reported now,
# the test goes on and fails at the end.
step_fail() { echo "FAIL: $*"; STEP_FAILED="${STEP_FAILED:+$STEP_FAILED; }$*"; }
hex_of() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
zeros() { printf '0%.0s' $(seq $1); }   # $1 hex zero digits (even)

# reward_sr TEXT: the scan response's AD structure: length, 0xFF, company 0xFFFF, UTF-8.
reward_sr() { local h; h=$(hex_of "$1"); printf '%02xffffff%s\n' $(( ${#h} / 2 + 3 )) "$h"; }

# scan_summary FILE: the distinct sightings and rewards of a scan's JSON lines, as
#   SIGHTING <kind> <uuid> <major> <minor> <power> <address> rssi=<rssi>
#   REWARD <address> <text>
scan_summary() {
    python3 -S -c '
import json, sys
seen = []
for line in open(sys.argv[1], encoding="utf-8"):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("event") == "sighting":
        s = "SIGHTING %s %s %s %s %s %s rssi=%s" % (e.get("kind"), e.get("uuid"), e.get("major"),
            e.get("minor"), e.get("power"), e.get("address"), json.dumps(e.get("rssi", "missing")))
    elif e.get("event") == "reward":
        s = "REWARD %s %s" % (e.get("address"), e.get("reward"))
    else: continue
    if s not in seen: seen.append(s)
print("\n".join(seen))' "$1"
}

# adv_sequence FILE OPCODES...: the opcodes of the sniffed commands among OPCODES, in
# order, one line each.
adv_sequence() {
    local f=$1; shift
    awk -v ops=" $* " '$1 == "CMD" { op = substr($3, 8); if (index(ops, " " op " ")) print op }' "$f"
}
# cc_status FILE OPCODE: the status of the last Command Complete for OPCODE.
cc_status() { awk -v op="$2" '$1 == "CC" && $3 == "opcode=" op {s = $4} END {sub("status=", "", s); print s}' "$1"; }
# count_cmd FILE OPCODE PARAMS_PREFIX: how many commands OPCODE with params starting so.
count_cmd() { grep -c "^CMD .* opcode=$2 params=$3" "$1"; }

# start_treasure NAME MAJOR MINOR POWER REWARD: runs the treasure on hci1 in the
# background ($TP), stdout/stderr in $VM_OUT/treasure-NAME.{json,err}.
start_treasure() {
    "$PH" treasure --hci hci1 --uuid $UUID --major "$2" --minor "$3" --power "$4" \
        --interval $INTERVAL --reward "$5" --json --no-kiosk \
        > "$VM_OUT/treasure-$1.json" 2> "$VM_OUT/treasure-$1.err" &
    TP=$!
}

# check_scan NAME MAJOR MINOR POWER REWARD SR: `scan --active` on hci0 against hci1's
# advertising (started after the treasure advertises: btvirt sends one report per scan
# enable), with hci.py listen on hci0 as the oracle; exact identities and rewards.
check_scan() {
    local name=$1 major=$2 minor=$3 power=$4 reward=$5 sr=$6 ad lp sp rc t0 want got
    ad=$(ibeacon_ad $UUID "$major" "$minor" "$power")
    $VM_HCI listen hci0 --expect "$sr" --timeout 40 > "$VM_OUT/oracle-$name.txt" 2>&1 &
    lp=$!
    wait_until 10 grep -q READY "$VM_OUT/oracle-$name.txt" || fail "hci.py listen did not start"
    t0=$(uptime_s)
    "$PH" scan --hci hci0 --active --json --duration 40 > "$VM_OUT/scan-$name.json" 2> "$VM_OUT/scan-$name.err" &
    sp=$!
    wait_until 25 grep -q '"sighting"\|"beacon"\|"uuid"' "$VM_OUT/scan-$name.json" \
        || echo "-- no sighting within 25 s"
    echo "-- scan's first sighting $(since $t0) s after scan started (process start included)"
    sleep 3   # a reward, if one were sent, would show here
    kill -INT $sp; wait $sp; rc=$?
    wait_until 10 sh -c "! kill -0 $lp" || { kill $lp 2>/dev/null; echo "-- the oracle never saw the scan response"; }
    wait $lp 2>/dev/null
    sed 's/^/-- scan stderr: /' "$VM_OUT/scan-$name.err"
    sed 's/^/-- scan stdout: /' "$VM_OUT/scan-$name.json"
    grep -E '^(ADV|IBEACON)' "$VM_OUT/oracle-$name.txt" | sed 's/^/-- oracle on hci0: /'
    [ $rc -eq 0 ] || fail "scan exited $rc on SIGINT"
    scan_summary "$VM_OUT/scan-$name.json" > "$VM_OUT/summary-$name.txt"
    want="SIGHTING ibeacon $UUID $major $minor $power $ADDR1 rssi=null"
    got=$(cat "$VM_OUT/summary-$name.txt")
    sed 's/^/-- distinct: /' "$VM_OUT/summary-$name.txt"
    [ "$got" = "$want" ] || fail "scan --active showed something else than exactly (no reward): $(echo $want)"
    grep -q "^IBEACON dev=hci0 addr=$ADDR1 uuid=$UUID major=$major minor=$minor power=$power " "$VM_OUT/oracle-$name.txt" \
        || fail "the oracle did not decode the same iBeacon from hci0's raw reports"
    grep -q "^ADV dev=hci0 .*addr=$ADDR1 .*data=$ad\$" "$VM_OUT/oracle-$name.txt" \
        || fail "the oracle saw no report with exactly the advertised bytes"
    ! grep -q "$sr" "$VM_OUT/oracle-$name.txt" || fail "the reward's bytes went over the air in plain"
}

# stop_treasure NAME CMDFILE ENABLE-OPCODE: SIGTERM; exit 0 within 2 s, "advertising off",
# last enable command on hci1 = 00 (answered 0x00).
stop_treasure() {
    local name=$1 f=$2 op=$3 t0 rc last
    t0=$(uptime_s)
    kill -TERM $TP
    wait_until 10 sh -c "! kill -0 $TP" || fail "treasure still running 10 s after SIGTERM"
    local took; took=$(since $t0)
    wait $TP; rc=$?
    sleep 0.3   # the sniffer reads the last Command Complete
    hci_commands_stop
    echo "-- treasure exited $rc, $took s after SIGTERM"
    tail -3 "$VM_OUT/treasure-$name.err" | sed 's/^/-- treasure stderr: /'
    grep -E "opcode=$op" "$f" | tail -2 | sed 's/^/-- hci1 last: /'
    last=$(hci_last_cmd "$f" $op)
    [ $rc -eq 0 ] || fail "treasure exited $rc on SIGTERM"
    awk "BEGIN{exit !($took <= 2.0)}" || fail "treasure took $took s to exit (more than 2 s)"
    grep -q 'advertising off' "$VM_OUT/treasure-$name.err" || fail "no 'advertising off' on stderr"
    [[ "$last" == 00* ]] || fail "the last $op on hci1 is '$last', not advertising off (00)"
    [ "$(cc_status "$f" $op)" = 0x00 ] || fail "the last $op was answered $(cc_status "$f" $op) (0x0c: advertising was already off before the SIGTERM)"
    pass "SIGTERM: exit 0 in $took s, 'advertising off' logged, last $op on hci1 = $last (status 0x00)"
}

vm_step "kernel $(uname -r); btvirt -l2 -L (legacy LE controllers)"
btvirt_start
hci_up hci0
hci_up hci1
ADDR1=$(hciconfig hci1 | awk '/BD Address/ {print $3}')
echo "-- hci1 is $ADDR1; $(hci_supported hci1)"

# ---------------------------------------------------------------------------------------
vm_step "1. treasure on hci1 (legacy): commands, then scan --active on hci0"
MAJOR=4660 MINOR=22136 POWER=-61 REWARD="ARRR-VM-42 ☠"
AD=$(ibeacon_ad $UUID $MAJOR $MINOR $POWER)
SR=$(reward_sr "$REWARD")
CMDS=$VM_OUT/cmds-legacy-hci1.txt
hci_commands_start hci1 "$CMDS"
t0=$(uptime_s)
start_treasure legacy $MAJOR $MINOR $POWER "$REWARD"
wait_until 30 grep -q 'opcode=0x200a params=01' "$CMDS" \
    || fail "treasure never enabled advertising on hci1: $(cat "$VM_OUT/treasure-legacy.err")"
echo "-- advertising enabled $(since $t0) s after the treasure started (process start included)"
wait_until 5 grep -q 'advertising on hci1' "$VM_OUT/treasure-legacy.err"
sed 's/^/-- treasure stderr: /' "$VM_OUT/treasure-legacy.err"
grep -E '^(CMD|CC)' "$CMDS" | sed 's/^/-- hci1: /'
seq_got=$(adv_sequence "$CMDS" 0x2006 0x2008 0x200a | tr '\n' ' ')
echo "-- advertising commands in order: $seq_got"
[[ "$seq_got" == *"0x2006 0x2008 0x200a " ]] || fail "not parameters, data, enable in that order: $seq_got"
! grep -q "$SR" "$CMDS" || fail "the reward went to hci1 in plain (a scan response anyone can read)"
# min, max, type 03 (ADV_NONCONN_IND: an unpaired box has no scan response to give), own
# public, peer type, peer address, channels 07, no filter
want_params="${INTERVAL_LE}${INTERVAL_LE}030000$(zeros 12)0700"
[ "$(hci_last_cmd "$CMDS" 0x2006)" = "$want_params" ] \
    || fail "LE Set Advertising Parameters '$(hci_last_cmd "$CMDS" 0x2006)', wanted $want_params (interval 0x0190, type 03 ADV_NONCONN_IND)"
[ "$(hci_last_cmd "$CMDS" 0x2008)" = "1e${AD}00" ] || fail "advertising data is not the iBeacon's 30 bytes: $(hci_last_cmd "$CMDS" 0x2008)"
for op in 0x2006 0x2008 0x200a; do
    [ "$(cc_status "$CMDS" $op)" = 0x00 ] || fail "$op answered $(cc_status "$CMDS" $op)"
done
pass "legacy: parameters (interval 0x0190 = $INTERVAL ms, ADV_NONCONN_IND), data = ibeacon_ad, enable; all 0x00, in order; '$REWARD' in no command (unpaired: no reward on the air)"
check_scan legacy $MAJOR $MINOR $POWER "$REWARD" "$SR"
pass "scan --active on hci0: exactly one identity ($UUID $MAJOR/$MINOR power $POWER from $ADDR1) and no reward, as the oracle decoded"

# ---------------------------------------------------------------------------------------
vm_step "2. hciconfig hci1 down while the treasure advertises"
enables_before=$(count_cmd "$CMDS" 0x200a 01)
lines_before=$(wc -l < "$VM_OUT/treasure-legacy.err")
t_down=$(uptime_s)
hciconfig hci1 down || fail "hciconfig hci1 down failed"
readvertised() { [ "$(count_cmd "$CMDS" 0x200a 01)" -gt "$enables_before" ]; }
noticed() { tail -n +$((lines_before + 1)) "$VM_OUT/treasure-legacy.err" | grep -q 'controller unavailable (adapter down: hci1)'; }
wait_until 15 readvertised; ok=$?
t_back=$(since $t_down)
noticed_ok=0; noticed && noticed_ok=1
tail -n +$((lines_before + 1)) "$VM_OUT/treasure-legacy.err" | sed 's/^/-- treasure stderr after the down: /'
echo "-- hci1 now: $(hciconfig hci1 | grep -oE '^\s+(UP|DOWN)[^ ]*' | tr -d ' \t')"
grep -E '^(CMD|CC|CS)' "$CMDS" | tail -n 40 | sed 's/^/-- hci1 (last 40): /'
# A failure here is reported, then hci1 is brought up by hand so that steps 3-5 still run
# (and tell their own result); the test fails at the end.
if [ $ok -ne 0 ]; then
    if [ $noticed_ok -eq 1 ]; then
        step_fail "the treasure noticed (controller unavailable) but did not advertise again within 15 s"
    else
        step_fail "the treasure did not notice hci1 going down within 15 s: no 'controller unavailable', no new LE Set Advertising Enable"
    fi
    hci_is_up hci1 || hci_up hci1
elif [ $noticed_ok -ne 1 ]; then
    step_fail "advertising again, but 'controller unavailable' was never logged"
elif ! hci_is_up hci1; then
    step_fail "hci1 is not up again"
else
    pass "the treasure noticed hci1 down, brought it up itself and advertised again $t_back s after the down"
fi

# ---------------------------------------------------------------------------------------
vm_step "3. SIGTERM: advertising off on hci1"
stop_treasure legacy "$CMDS" 0x200a

# ---------------------------------------------------------------------------------------
vm_step "4. extended controllers (btvirt -l2): treasure, scan --active, SIGTERM"
btvirt_stop
btvirt_start "-l2"
hci_up hci0
hci_up hci1
ADDR1=$(hciconfig hci1 | awk '/BD Address/ {print $3}')
s=$(hci_supported hci1); echo "-- hci1 is $ADDR1; $s"
[[ "$s" == *"ext-scan=1 ext-adv=1"* ]] || fail "btvirt -l2 does not offer the extended commands"
MAJOR=4661 MINOR=22137 POWER=-62 REWARD="DOUBLOONS-EXT ⚓"
AD=$(ibeacon_ad $UUID $MAJOR $MINOR $POWER)
SR=$(reward_sr "$REWARD")
CMDS=$VM_OUT/cmds-extended-hci1.txt
hci_commands_start hci1 "$CMDS"
t0=$(uptime_s)
start_treasure extended $MAJOR $MINOR $POWER "$REWARD"
wait_until 30 grep -q 'opcode=0x2039 params=01' "$CMDS" \
    || fail "treasure never enabled extended advertising on hci1: $(cat "$VM_OUT/treasure-extended.err")"
echo "-- advertising enabled $(since $t0) s after the treasure started (process start included)"
wait_until 5 grep -q 'advertising on hci1' "$VM_OUT/treasure-extended.err"
sed 's/^/-- treasure stderr: /' "$VM_OUT/treasure-extended.err"
grep -E '^(CMD|CC)' "$CMDS" | sed 's/^/-- hci1: /'
seq_got=$(adv_sequence "$CMDS" 0x203c 0x2036 0x2037 0x2039 0x2006 0x2008 0x2009 0x200a | tr '\n' ' ')
echo "-- advertising commands in order: $seq_got"
[[ "$seq_got" == *"0x203c 0x2036 0x2037 0x2039 " ]] || fail "not remove set, parameters, data, enable in that order: $seq_got"
! grep -q "$SR" "$CMDS" || fail "the reward went to hci1 in plain (a scan response anyone can read)"
[ "$(hci_last_cmd "$CMDS" 0x203c)" = 00 ] || fail "LE Remove Advertising Set is not for set 0: $(hci_last_cmd "$CMDS" 0x203c)"
case "$(cc_status "$CMDS" 0x203c)" in 0x00|0x42) ;; *) fail "LE Remove Advertising Set answered $(cc_status "$CMDS" 0x203c)" ;; esac
[[ "$seq_got" != *0x200* ]] || fail "legacy advertising commands mixed in: $seq_got"
# set 0, properties 0x0012, min, max (24 bits), channels 07, own public, peer type, peer
# address, no filter, tx power 7f (no preference), primary 1M, skip 0, secondary 1M, SID 0, no notification
# (properties 0x0010: legacy non-connectable, non-scannable: an unpaired box has no scan response)
want_params="001000${INTERVAL_LE}00${INTERVAL_LE}00070000$(zeros 12)007f0100010000"
[ "$(hci_last_cmd "$CMDS" 0x2036)" = "$want_params" ] \
    || fail "LE Set Extended Advertising Parameters '$(hci_last_cmd "$CMDS" 0x2036)', wanted $want_params (set 0, 0x0010 legacy non-scannable, 0x000190)"
[ "$(hci_last_cmd "$CMDS" 0x2037)" = "0003011e${AD}" ] || fail "extended advertising data is not set 0 + the iBeacon's 30 bytes: $(hci_last_cmd "$CMDS" 0x2037)"
[ "$(hci_last_cmd "$CMDS" 0x2039)" = 010100000000 ] || fail "enable is not set 0, no duration: $(hci_last_cmd "$CMDS" 0x2039)"
for op in 0x2036 0x2037 0x2039; do
    [ "$(cc_status "$CMDS" $op)" = 0x00 ] || fail "$op answered $(cc_status "$CMDS" $op)"
done
pass "extended: set 0 removed afresh ($(cc_status "$CMDS" 0x203c)), parameters (legacy non-scannable 0x0010, interval 0x000190), data, enable; all 0x00, in order; '$REWARD' in no command"
check_scan extended $MAJOR $MINOR $POWER "$REWARD" "$SR"
grep -q "^ADV dev=hci0 sub=0D " "$VM_OUT/oracle-extended.txt" || fail "hci0 did not get extended reports (0x0D)"
pass "scan --active (extended) on hci0: exactly one identity ($UUID $MAJOR/$MINOR power $POWER from $ADDR1) and no reward"
stop_treasure extended "$CMDS" 0x2039

# ---------------------------------------------------------------------------------------
vm_step "5. a bad value: treasure --major 70000"
"$PH" treasure --hci hci1 --major 70000 --no-kiosk > "$VM_OUT/bad.out" 2> "$VM_OUT/bad.err" < /dev/null &
BP=$!
wait_until 10 sh -c "! kill -0 $BP" || { kill -TERM $BP; fail "treasure --major 70000 still running after 10 s"; }
wait $BP; rc=$?
sed 's/^/-- stderr: /' "$VM_OUT/bad.err"
echo "-- exit status $rc"
[ $rc -eq 78 ] || fail "treasure --major 70000 exited $rc, not 78"
[ "$(wc -l < "$VM_OUT/bad.err")" -eq 1 ] || fail "not one line on stderr"
grep -q 'treasure.major' "$VM_OUT/bad.err" || fail "the message does not name treasure.major"
pass "--major 70000: exit 78, one line naming treasure.major"

btvirt_stop
[ -z "$STEP_FAILED" ] || fail "earlier: $STEP_FAILED"
vm_step "done"
