#!/usr/bin/env bash
# Runs guest tests inside Debian's kernel under qemu (TCG), see docs/vm-test.md.
#   scripts/vm/run.sh                     every scripts/vm/tests/*.sh, one boot each
#   scripts/vm/run.sh TEST [ARGS...]      one guest test (a bash script; path on the host)
# Options (before TEST): --timeout SECONDS (per test, default 240; env VM_TIMEOUT),
#   --smp N (guest CPUs, default 2; env VM_SMP), --jobs N (guests at once for the whole
#   suite, default 1; env VM_JOBS; 2 halves the time but starves audio guests), --tests "A B" (only those of the suite, by name).
#   Env VM_CPU: qemu -cpu model (default max).
# Each test's console log and files go to .build/vm/out/<test>/ (VM_OUT inside the guest).
# Exit status: 0 when every test passed, else the failing test's status (124 timeout,
# 70 the VM died without a result, 64 usage).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
timeout_s=${VM_TIMEOUT:-240}
smp=${VM_SMP:-2}
jobs=${VM_JOBS:-1}
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) [ $# -ge 2 ] || { echo "vm: --timeout needs a number of seconds" >&2; exit 64; }
                   timeout_s=$2; shift 2 ;;
        --smp) [ $# -ge 2 ] || { echo "vm: --smp needs a number" >&2; exit 64; }
               smp=$2; shift 2 ;;
        --jobs) [ $# -ge 2 ] || { echo "vm: --jobs needs a number" >&2; exit 64; }
                jobs=$2; shift 2 ;;
        --tests) [ $# -ge 2 ] || { echo "vm: --tests needs names" >&2; exit 64; }
                 only=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        --) shift; break ;;
        -*) echo "vm: unknown option $1 (see --help)" >&2; exit 64 ;;
        *) break ;;
    esac
done
case "$timeout_s" in ''|*[!0-9]*) echo "vm: --timeout must be whole seconds, got '$timeout_s'" >&2; exit 64 ;; esac
case "$smp" in ''|*[!0-9]*|0) echo "vm: --smp must be a positive number, got '$smp'" >&2; exit 64 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "vm: --jobs must be a positive number, got '$jobs'" >&2; exit 64 ;; esac

if [ $# -gt 0 ] && [ ! -f "$1" ]; then echo "vm: no such guest test: $1" >&2; exit 66; fi
t0=$(date +%s.%N)
mapfile -t img < <("$here/build.sh")
[ ${#img[@]} -eq 2 ] || { echo "vm: build.sh did not give a kernel and an initramfs" >&2; exit 70; }
kernel=${img[0]}; initrd=${img[1]}
cache=$(dirname "$initrd")
t1=$(date +%s.%N)
echo "vm: kernel+initramfs ready in $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s" >&2

# Runs one test in a fresh VM; prints its console live; returns its status.
run_one() {
    local test=$1; shift
    [ -f "$test" ] || { echo "vm: no such guest test: $test" >&2; return 66; }
    test=$(cd "$(dirname "$test")" && pwd)/$(basename "$test")
    local name; name=$(basename "$test" .sh)
    local out=$cache/out/$name
    rm -rf "$out"; mkdir -p "$out"
    {
        echo '#!/bin/bash'
        echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
        echo 'export HOME=/root LANG=C.UTF-8 TERM=dumb VM_GUEST=1'
        printf 'export VM_OUT=%q VM_REPO=%q VM_LIB=%q\n' "$out" "$repo" "$here/guest-lib.sh"
        printf 'cd %q\n' "$repo"
        printf 'exec /bin/bash %q' "$test"; printf ' %q' "$@"; echo
    } > "$out/job.sh"
    local s; s=$(date +%s.%N)
    echo "vm: booting for $name" >&2
    set +e
    timeout --kill-after=10 $((timeout_s + 60)) \
        qemu-system-x86_64 -accel tcg -cpu ${VM_CPU:-max} -smp "$smp" -m 1024 \
            -nographic -no-reboot -nic none \
            -kernel "$kernel" -initrd "$initrd" \
            -append "console=ttyS0 quiet loglevel=3 panic=-1 vmjob=$out/job.sh vmout=$out vmtimeout=$timeout_s" \
            -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
            -virtfs "local,path=$out,mount_tag=out,security_model=none" \
            < /dev/null 2>&1 | tr -d '\r' | sed -u 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' \
            | tee "$out/console.log" | sed -u "s/^/  $name | /"
    local qrc=${PIPESTATUS[0]}
    set -e
    local e; e=$(date +%s.%N)
    local secs; secs=$(awk "BEGIN{printf \"%.1f\", $e-$s}")
    local rc
    rc=$(sed -n 's/^VM-RESULT: \([0-9]*\)$/\1/p' "$out/console.log" | tail -1)
    if [ -z "$rc" ]; then
        if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
            echo "vm: $name timed out after ${secs} s (log: $out/console.log)" >&2; rc=124
        else
            echo "vm: $name: the VM ended (qemu status $qrc) without a result (log: $out/console.log)" >&2; rc=70
        fi
    elif [ "$rc" -eq 0 ]; then
        echo "vm: $name passed in ${secs} s" >&2
    else
        echo "vm: $name FAILED with status $rc in ${secs} s (log: $out/console.log)" >&2
    fi
    return "$rc"
}

if [ $# -gt 0 ]; then
    run_one "$@"
    exit $?
fi

# The whole suite, `jobs` guests at a time: the guests mostly wait on real time (btvirt,
# audio, outages), so two side by side take ~2/3 of the time one after another. Longest
# first (hunter), so the last to finish is a short one.
passed=0; failed=0; first_rc=0
mapfile -t tests < <(ls "$here"/tests/*.sh | awk '{ print (index($0, "/hunter.sh") ? 0 : 1), $0 }' | sort -s -k1,1n | cut -d' ' -f2-)
if [ -n "$only" ]; then
    chosen=()
    for name in $only; do
        [ -f "$here/tests/$name.sh" ] || { echo "vm: no such guest test: $name" >&2; exit 66; }
        chosen+=("$here/tests/$name.sh")
    done
    tests=("${chosen[@]}")
fi
declare -A running=()
reap() {  # waits for one guest; counts its result
    local pid rc=0
    wait -n -p pid "${!running[@]}" || rc=$?
    unset "running[$pid]"
    if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else
        failed=$((failed + 1)); [ "$first_rc" -ne 0 ] || first_rc=$rc
    fi
}
for t in "${tests[@]}"; do
    while [ "${#running[@]}" -ge "$jobs" ]; do reap; done
    run_one "$t" &
    running[$!]=$t
done
while [ "${#running[@]}" -gt 0 ]; do reap; done
echo "vm-test: total $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N)-$t0}") s"
echo "vm-test: $passed passed, $failed failed"
exit "$first_rc"
