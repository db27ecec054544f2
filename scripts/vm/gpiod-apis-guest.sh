#!/bin/bash
# Guest side of scripts/vm/gpiod-apis.sh (args: the v1 build, the Debian 13 root): the v1
# build (host root) and the v2 build
# (chrooted into the Debian 13 root, with /dev, /sys and /proc: libgpiod 2 checks the chip
# through sysfs) on line 3 of one gpio-sim chip.
. "$VM_LIB"
V1=${1:?the v1 build} R=${2:?the Debian 13 root}
modprobe gpio-sim || fail "no gpio-sim module"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
cfg=/sys/kernel/config/gpio-sim/apis
mkdir "$cfg" "$cfg/bank0"; echo 8 > "$cfg/bank0/num_lines"; echo 1 > "$cfg/live" || fail "chip not live"
CHIP=$(cat "$cfg/bank0/chip_name"); SIM=/sys/devices/platform/$(cat "$cfg/dev_name")/$CHIP
mount --bind /dev "$R/dev" && mount --bind /sys "$R/sys" && mount -t proc proc "$R/proc" || fail "cannot bind /dev, /sys, /proc into $R"
for api in v1 v2; do
    vm_step "$api"
    echo pull-down > "$SIM/sim_gpio3/pull"   # the program's pull-up must win
    if [ $api = v1 ]; then "$V1" "/dev/$CHIP" 3 2 > "$VM_OUT/$api.txt" 2>&1 &
    else chroot "$R" /build/edges-v2 "/dev/$CHIP" 3 2 > "$VM_OUT/$api.txt" 2>&1 & fi
    P=$!
    sleep 2; echo pull-down > "$SIM/sim_gpio3/pull"; sleep 0.3; echo pull-up > "$SIM/sim_gpio3/pull"
    wait $P; rc=$?
    sed "s/^/-- $api: /" "$VM_OUT/$api.txt"
    [ $rc -eq 0 ] || fail "$api: exit $rc"
    grep -q "(${api} API)" "$VM_OUT/$api.txt" || fail "$api: built with the other API"
    grep -q 'used 1 by gpiod-edges' "$VM_OUT/$api.txt" || fail "$api: the line is not requested under its consumer name"
    grep -q 'bias applied 1, value 0, read with none waiting: 0' "$VM_OUT/$api.txt" || fail "$api: bias, value or the non-blocking read"
    grep -q 'edge 1: active' "$VM_OUT/$api.txt" && grep -q 'edge 2: inactive' "$VM_OUT/$api.txt" || fail "$api: edges"
    pass "$api: pull-up applied, nothing read when nothing waits, press = active edge, release = inactive edge"
done
