#!/bin/sh
# The walking benchmark through the appliance itself: writes the walks of one part as
# btsnoop captures, runs `pirate-hunter replay CAPTURE --hunt --json` on each, and scores
# what it said beside the in-process engine, the AltBeacon and iOS-like baselines and the
# oracle (docs/ranging.md, "The walking world").
#   scripts/bench/walking-replay.sh held-out|tuning SEEDS [DIR [RADIO...]]
# RADIO: the walking world's sweeps (--rate 0.5, --loss 40-60, --spread 2-3, ...) and
# --calibrated (the chest's beacon calibrated at set-up), as `RangingBenchmark --walking`
# takes them. BUILD=release uses release builds (default:
# debug, the same code).
set -eu
part=${1:?held-out or tuning}
seeds=${2:?number of walks}
dir=${3:-$(mktemp -d /tmp/walking.XXXXXX)}
shift $(( $# < 3 ? $# : 3 ))
build=${BUILD:-debug}
mkdir -p "$dir/cache"
swift build -c "$build" --product pirate-hunter >/dev/null
swift build -c release --product RangingBenchmark >/dev/null
bin=$(swift build -c "$build" --show-bin-path)
bench=$(swift build -c release --show-bin-path)/RangingBenchmark
"$bench" --walking "$part" --seeds "$seeds" --write-captures "$dir" "$@" >/dev/null
for capture in "$dir"/walk-*.btsnoop; do
    # --calibrated: the walk's own configuration, its beacon calibrated at set-up.
    config=${capture%.btsnoop}.json
    [ -f "$config" ] || config=config/hunter.example.json
    "$bin/pirate-hunter" replay "$capture" --hunt --json --config "$config" \
        --voice-dir voices --cache-dir "$dir/cache" >"${capture%.btsnoop}.jsonl" 2>/dev/null
done
"$bench" --walking "$part" --seeds "$seeds" --replays "$dir" "$@"
echo "(captures and replays in $dir)"
