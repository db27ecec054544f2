#!/bin/bash
# Guest test: the Bluetooth 5 extended path, with BlueZ's own tools only.
#  1. `btvirt -l2` gives dual-mode controllers whose supported-commands bits offer the
#     extended scan and advertising commands (`btvirt -l2 -L` offers legacy only).
#  2. hci1 advertises an iBeacon with extended advertising commands (set 0, legacy
#     ADV_NONCONN_IND PDU, 100 ms): parameters 0x2036, data 0x2037, enable 0x2039.
#     hci0 scans with extended commands (0x2041 passive 1M, 0x2042 no duplicate filter);
#     a raw socket on hci0 receives it as LE Extended Advertising Report (subevent 0x0D)
#     with exactly the advertised bytes.
#     (Note, not a claim: btvirt accepts a legacy command after extended ones, where
#     real controllers answer 0x0C; the 0x0C handling must be unit-tested.)
#  3. Switching off: extended scan and advertising disable, seen by the command sniffer.
. "$VM_LIB"
UUID=FDA50693-A4E2-4FB1-AFCF-C6EB07647825
MAJOR=10001 MINOR=19641 POWER=-65

vm_step "btvirt -l2: dual-mode 5.x controllers"
btvirt_start "-l2"
hci_up hci0
hci_up hci1
for d in hci0 hci1; do
    s=$(hci_supported $d); echo "-- $s"
    [[ "$s" == *"ext-scan=1 ext-adv=1"* ]] || fail "$d does not offer the extended commands"
done
pass "extended scanning and advertising offered"

vm_step "hci0 scans (extended), hci1 advertises (extended)"
ad=$(ibeacon_ad $UUID $MAJOR $MINOR $POWER)
hci_commands_start hci0 "$VM_OUT/cmds-hci0.txt"; P0=$HCI_COMMANDS_PID
hci_commands_start hci1 "$VM_OUT/cmds-hci1.txt"; P1=$HCI_COMMANDS_PID
$VM_HCI listen hci0 --expect "$ad" --timeout 20 > "$VM_OUT/adv.txt" 2>&1 &
lp=$!
wait_until 10 grep -q READY "$VM_OUT/adv.txt" || fail "hci.py listen did not start"
# LE Set Extended Scan Parameters: own public, accept all, PHY 1M: passive, 0x0010, 0x0010
hcitool_cmd hci0 0x08 0x0041 00 00 01 00 10 00 10 00
# LE Set Extended Scan Enable: on, duplicates kept, no duration, no period
hcitool_cmd hci0 0x08 0x0042 01 00 00 00 00 00
# LE Set Extended Advertising Parameters: set 0, legacy ADV_NONCONN_IND (0x0010),
# interval 0x0000a0 both, channels 37-39, own public, no peer, no filter, tx 0x7f (any),
# primary 1M, skip 0, secondary 1M, SID 0, no scan request notification
hcitool_cmd hci1 0x08 0x0036 00 10 00 a0 00 00 a0 00 00 07 00 00 00 00 00 00 00 00 00 7f 01 00 01 00 00
# LE Set Extended Advertising Data: set 0, complete, no fragmentation, 30 bytes
hcitool_cmd hci1 0x08 0x0037 00 03 01 1e $(spaced "$ad")
# LE Set Extended Advertising Enable: on, 1 set: handle 0, no duration, no max events
hcitool_cmd hci1 0x08 0x0039 01 01 00 00 00 00
wait $lp; rc=$?
echo "-- advertised on hci1: $ad"
sed 's/^/-- hci0 raw: /' "$VM_OUT/adv.txt"
[ $rc -eq 0 ] || fail "hci0 never reported the advertised bytes"
grep -q "^ADV dev=hci0 sub=0D .* data=$ad\$" "$VM_OUT/adv.txt" || fail "not an extended report (0x0D)"
grep -q "^IBEACON dev=hci0 .* uuid=$UUID major=$MAJOR minor=$MINOR power=$POWER " "$VM_OUT/adv.txt" \
    || fail "decoded iBeacon differs"
pass "extended report 0x0D with the right bytes"

HCI_TOLERATE=0c hcitool_cmd hci1 0x08 0x000a 00
echo "-- note: legacy LE Set Advertising Enable after extended commands: status 0x$HCI_STATUS" \
     "(real controllers: 0x0c)"

vm_step "switching off"
hcitool_cmd hci0 0x08 0x0042 00 00 00 00 00 00
hcitool_cmd hci1 0x08 0x0039 00 00
sleep 0.5
HCI_COMMANDS_PID=$P0 hci_commands_stop; HCI_COMMANDS_PID=$P1 hci_commands_stop
grep -E 'opcode=0x204[12]' "$VM_OUT/cmds-hci0.txt" | sed 's/^/-- seen on hci0: /'
grep -E 'opcode=0x20(36|37|39|0a)' "$VM_OUT/cmds-hci1.txt" | sed 's/^/-- seen on hci1: /'
[[ "$(hci_last_cmd "$VM_OUT/cmds-hci0.txt" 0x2042)" == 00* ]] || fail "extended scanning not switched off"
[[ "$(hci_last_cmd "$VM_OUT/cmds-hci1.txt" 0x2039)" == 00* ]] || fail "extended advertising not switched off"
pass "extended scanning and advertising switched off"

btvirt_stop
vm_step "done"
