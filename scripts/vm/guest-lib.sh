# Helpers for guest tests (bash), sourced with: . "$VM_LIB"
# Runs inside the VM (root, the host's / as an overlay, no bluetoothd). Each helper
# fails the test (exit 1, "FAIL: ..." on the console) when what it waits for never comes.
set -uo pipefail
VM_DIR=$(dirname "$VM_LIB")
VM_HCI="python3 -S $VM_DIR/hci.py"  # -S: no site import, faster start under TCG
BTVIRT_PID=""

vm_step() { printf '== [%6.2fs] %s\n' "$(cut -d' ' -f1 /proc/uptime)" "$*"; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "PASS: $*"; }

# wait_until SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
wait_until() {
    local t=$1; shift
    local end=$(( $(date +%s%N) + t * 1000000000 ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s%N)" -lt "$end" ] || return 1
        sleep 0.1
    done
}

hci_present() { [ -e "/sys/class/bluetooth/$1" ]; }
hci_absent() { [ ! -e "/sys/class/bluetooth/$1" ]; }
hci_is_up() { hciconfig "$1" 2>/dev/null | grep -q "^\s*UP "; }

# btvirt_start [ARGS]: starts BlueZ's emulator (default: two LE-only controllers,
# hci0 and hci1) and waits for both adapters to exist.
btvirt_start() {
    local args=${1:--l2 -L}
    btvirt $args > "$VM_OUT/btvirt.log" 2>&1 &
    BTVIRT_PID=$!
    wait_until 10 hci_present hci0 && wait_until 10 hci_present hci1 \
        || fail "btvirt $args did not create hci0 and hci1 within 10 s"
}

# btvirt_stop: kills the emulator and waits for its adapters to disappear.
btvirt_stop() {
    [ -n "$BTVIRT_PID" ] || return 0
    kill "$BTVIRT_PID" 2>/dev/null
    wait "$BTVIRT_PID" 2>/dev/null
    BTVIRT_PID=""
    wait_until 10 hci_absent hci0 || fail "hci0 still present 10 s after btvirt was killed"
}

# hci_up DEV: brings the adapter up (HCIDEVUP, as hciconfig does) and checks it is UP.
hci_up() {
    hciconfig "$1" up || fail "hciconfig $1 up failed"
    wait_until 5 hci_is_up "$1" || fail "$1 not UP"
}

# hcitool_cmd DEV OGF OCF [BYTE...]: sends one command with BlueZ's hcitool and reads
# the status byte of the Command Complete it prints into $HCI_STATUS (lower-case hex);
# fails the test unless the status is 00 or listed in $HCI_TOLERATE (e.g. "0c").
hcitool_cmd() {
    local dev=$1; shift
    local out
    out=$(hcitool -i "$dev" cmd "$@" 2>&1) || fail "hcitool -i $dev cmd $* failed: $out"
    # Output: "< HCI Command: ogf 0x08, ocf 0x0008, plen 32\n ...\n> HCI Event: 0x0e plen 4\n  01 08 20 00"
    HCI_STATUS=$(printf '%s\n' "$out" | awk '/> HCI Event: 0x0e/ {ev=1; next} ev && NF {print tolower($4); exit}')
    if [ "$HCI_STATUS" != "00" ] && [[ " ${HCI_TOLERATE:-} " != *" $HCI_STATUS "* ]]; then
        fail "hcitool -i $dev cmd $*: status ${HCI_STATUS:-missing} (output: $(echo $out))"
    fi
}

# ibeacon_ad UUID MAJOR MINOR POWER: the 31 advertising data bytes (hex, no spaces):
# flags 02 01 06, then 1A FF 4C 00 02 15 <uuid> <major BE> <minor BE> <power i8>.
ibeacon_ad() {
    local uuid=${1//-/} major=$2 minor=$3 power=$4
    printf '0201061aff4c000215%s%04x%04x%02x\n' "${uuid,,}" "$major" "$minor" $(( power & 0xff ))
}

# spaced HEX: "0a1b" -> "0a 1b"
spaced() { echo "$1" | sed 's/../& /g; s/ $//'; }

# advertise_ibeacon DEV UUID MAJOR MINOR POWER [SCANRSP_HEX]: as a foreign peer would,
# with hcitool: advertising off (0x0C tolerated), parameters (100 ms, ADV_NONCONN_IND, or
# ADV_SCAN_IND when a scan response is given), data, scan response data, enable.
advertise_ibeacon() {
    local dev=$1 ad sr=${6:-} type=03; ad=$(ibeacon_ad "$2" "$3" "$4" "$5")
    [ -z "$sr" ] || type=02
    HCI_TOLERATE=0c hcitool_cmd "$dev" 0x08 0x000a 00
    hcitool_cmd "$dev" 0x08 0x0006 a0 00 a0 00 $type 00 00 00 00 00 00 00 00 07 00
    hcitool_cmd "$dev" 0x08 0x0008 1e $(spaced "$ad") 00
    [ -z "$sr" ] || hcitool_cmd "$dev" 0x08 0x0009 $(printf '%02x' $(( ${#sr} / 2 ))) \
        $(spaced "$sr") $(printf '00 %.0s' $(seq $(( 31 - ${#sr} / 2 ))))
    hcitool_cmd "$dev" 0x08 0x000a 01
}
# name_ad TEXT: an AD structure "Complete Local Name" (0x09) carrying TEXT, as hex.
name_ad() {
    local h; h=$(printf '%s' "$1" | od -An -tx1 | tr -d ' \n')
    printf '%02x09%s\n' $(( ${#h} / 2 + 1 )) "$h"
}
advertise_off() { HCI_TOLERATE=0c hcitool_cmd "$1" 0x08 0x000a 00; }

# hci_commands_start DEV FILE: records every command sent to DEV (hci.py commands) into
# FILE until hci_commands_stop; hci_last_cmd FILE OPCODE prints the params of the last
# command with that opcode (e.g. 0x200c LE Set Scan Enable: "0000" = scanning off).
hci_commands_start() {
    $VM_HCI commands "$1" --timeout 600 > "$2" 2>&1 &
    HCI_COMMANDS_PID=$!
    wait_until 10 grep -q READY "$2" || fail "hci.py commands $1 did not start"
}
hci_commands_stop() { kill "$HCI_COMMANDS_PID" 2>/dev/null; wait "$HCI_COMMANDS_PID" 2>/dev/null; }
hci_last_cmd() { awk -v op="$2" '$1 == "CMD" && $3 == "opcode=" op {p = $4} END {sub("params=", "", p); print p}' "$1"; }

# hci_supported DEV: Read Local Supported Commands (hcitool), printed as the families
# a program must choose between (field guide: octet 37 bits 0x20/0x40 extended scan
# parameters/enable; octet 36 bits 0x04/0x08/0x20 extended advertising
# parameters/data/enable; octet 26 bits 0x04/0x08 legacy scan parameters/enable).
hci_supported() {
    local out b
    out=$(hcitool -i "$1" cmd 0x04 0x0002 2>&1) || fail "hcitool -i $1 cmd 0x04 0x0002 failed"
    # After "> HCI Event: 0x0e plen 68": ncmd, opcode (2 bytes), status, 64 octets.
    b=($(printf '%s\n' "$out" | sed -n '/> HCI Event: 0x0e/,$p' | tail -n +2))
    [ ${#b[@]} -ge 68 ] && [ "${b[3]}" = 00 ] || fail "Read Local Supported Commands on $1: $(echo $out)"
    oct() { echo $(( 16#${b[$((4 + $1))]} )); }
    echo "SUPPORTED dev=$1 legacy-scan=$(( ($(oct 26) & 0x0c) == 0x0c ))" \
         "ext-scan=$(( ($(oct 37) & 0x60) == 0x60 )) ext-adv=$(( ($(oct 36) & 0x2c) == 0x2c ))"
}
