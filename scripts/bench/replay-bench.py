#!/usr/bin/env python3
"""How fast a parent's capture becomes what the hunter said (release build):

  1. a capture of MINUTES minutes of hunting is recorded on virtual time
     (`hunt --hci simulator --virtual-time --duration S --record F --quiet`: the demo's walk
     to and from a 10 Hz treasure, again and again);
  2. `replay F --hunt --json` (ranging, hunt rules, every line rendered) is timed, median of
     N runs, beside `replay F --json` (decoding alone) in the same run: the ratio is what the
     whole hunt costs over reading the file;
  3. the demo itself on virtual time (`demo --virtual-time --json --device null`).

usage: scripts/bench/replay-bench.py [--binary PATH] [--runs 9] [--minutes 10]
"""
import argparse, os, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

def timed(cmd, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if r.returncode != 0:
            sys.exit("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.decode()[-500:]))
    return statistics.median(times), r.stdout.decode()

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(REPO, ".build/release/pirate-hunter"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--minutes", type=float, default=10)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        capture = os.path.join(tmp, "hunt.btsnoop")
        cache = ["--cache-dir", os.path.join(tmp, "cache")]
        record_s, _ = timed([a.binary, "hunt", "--hci", "simulator", "--virtual-time", "--quiet", "--json",
                             "--duration", str(a.minutes * 60), "--record", capture], 1)
        # Warm the line cache once, as a parent's machine has it.
        timed([a.binary, "replay", capture, "--hunt"] + cache, 1)
        decode, _ = timed([a.binary, "replay", capture, "--json"], a.runs)
        hunt, out = timed([a.binary, "replay", capture, "--hunt", "--json"] + cache, a.runs)
        said = out.count('"event": "say"')
        demo, demo_out = timed([a.binary, "demo", "--virtual-time", "--json", "--device", "null"] + cache, a.runs)
        print("capture: %.0f min of hunting, %d bytes, recorded in %.2f s" % (a.minutes, os.path.getsize(capture), record_s))
        print("replay --json (decode only):   median %.3f s of %d runs" % (decode, a.runs))
        print("replay --hunt --json:          median %.3f s of %d runs (%d lines said), ratio %.2f to decoding" % (hunt, a.runs, said, hunt / decode))
        print("demo --virtual-time:           median %.3f s of %d runs (a %s s walk)" % (demo, a.runs, "90"))

main()
