#!/bin/bash
# Guest test: a sound device another program holds is refused at once, not waited for.
# snd-dummy with one substream stands for a USB speaker (one playback substream, opened
# without naming a subdevice: plughw:CARD=Device,DEV=0). `pirate-hunter say` holds it; a
# second `say` to the same device must exit 69 ("cannot open audio device ... busy")
# within 2 s, while the first is still playing, as docs/raspberry-pi.md tells a parent who
# runs `check` beside the service. (A review feared that the blocking snd_pcm_open would
# sleep in the kernel until the holder let go; on Debian's 6.1 kernel it is refused at
# once, through plughw and with a subdevice named alike: this pins it.)
. "$VM_LIB"
PH=${PH:-$VM_REPO/.build/debug/pirate-hunter}
[ -x "$PH" ] || fail "no $PH: build it first (swift build --product pirate-hunter)"
modprobe snd-dummy pcm_substreams=1 || fail "modprobe snd-dummy failed"
wait_until 10 test -e /proc/asound/Dummy || fail "no Dummy card"
DEV=plughw:CARD=Dummy,DEV=0
PSTATUS=/proc/asound/Dummy/pcm0p/sub0/status
TEXT="The treasure be buried beneath the old oak tree by the harbour so follow the map and claim the gold"

vm_step "kernel $(uname -r); the first say holds $DEV (one substream)"
"$PH" say "$TEXT $TEXT" --device $DEV > "$VM_OUT/first.out" 2> "$VM_OUT/first.err" &
FP=$!
wait_until 20 grep -q 'state: RUNNING' $PSTATUS || fail "the first say never started playing: $(cat "$VM_OUT/first.err")"

vm_step "a second say to the same device while the first plays"
t0=$(cut -d' ' -f1 /proc/uptime)
timeout 20 "$PH" say "Ahoy" --device $DEV > "$VM_OUT/second.out" 2> "$VM_OUT/second.err"
rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
took=$(awk "BEGIN{print $t1 - $t0}")
sed 's/^/-- second say stderr: /' "$VM_OUT/second.err"
echo "-- second say: exit $rc after $took s"
kill -0 $FP 2>/dev/null || fail "the first say had ended before the second was refused: the device was not busy"
kill $FP; wait $FP 2>/dev/null
[ $rc -eq 69 ] || fail "the second say exited $rc, not 69 (124: it waited for the device until timeout killed it)"
awk "BEGIN{exit !($took < 2)}" || fail "the second say took $took s to be refused"
grep -q "cannot open audio device '$DEV'" "$VM_OUT/second.err" || fail "no 'cannot open audio device' line"
pass "a held device was refused at once (exit 69 in $took s) while its holder played on"
