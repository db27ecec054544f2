#!/usr/bin/env bash
# Fuzz the Bluetooth decoders with libFuzzer + AddressSanitizer.
#   scripts/fuzz.sh smoke              every target briefly (CI)
#   scripts/fuzz.sh run TARGET SECONDS one target (h4, event, ad, btsnoop) for a while
# Crashes are written to .build-fuzz/artifacts/TARGET/; reproduce one with
#   swift run FuzzBluetooth TARGET FILE
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
export SWIFT_BACKTRACE=enable=no
scratch=.build-fuzz
targets=(h4 event ad btsnoop)

build() {
    swift build -c release --scratch-path "$scratch" --product FuzzBluetooth \
        --sanitize fuzzer --sanitize address -Xswiftc -parse-as-library -Xswiftc -DFUZZING >&2
    echo "$scratch/release/FuzzBluetooth"
}

fuzz() { # target seconds
    local bin=$1 target=$2 seconds=$3
    local work="$scratch/corpus/$target" artifacts="$scratch/artifacts/$target"
    mkdir -p "$work" "$artifacts"
    echo "== fuzz $target for ${seconds}s"
    FUZZ_TARGET=$target "$bin" "$work" "Tests/Fuzz/corpus/$target" \
        -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 |
        grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|Done)' || true
    if ls "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* >/dev/null 2>&1; then
        echo "fuzz $target: FAILED, see $artifacts" >&2
        return 1
    fi
    echo "fuzz $target: no crash"
}

case "${1:-}" in
smoke)
    bin=$(build)
    for t in "${targets[@]}"; do fuzz "$bin" "$t" "${FUZZ_SECONDS:-20}"; done
    ;;
run)
    [ $# -eq 3 ] || { echo "usage: $0 run TARGET SECONDS" >&2; exit 64; }
    bin=$(build)
    fuzz "$bin" "$2" "$3"
    ;;
*)
    echo "usage: $0 smoke | run TARGET SECONDS" >&2
    exit 64
    ;;
esac
