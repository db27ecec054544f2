#!/usr/bin/env python3
"""Two builds of the appliance on the same captures: `pirate-hunter replay CAPTURE --hunt
--json` over every capture of a set, the two binaries alternating, RUNS times each; the
median of each binary's total and their ratio (new over old). The captures come from
`RangingBenchmark --walking PART --seeds N --write-captures DIR [RADIO...]`.

usage: scripts/bench/replay-compare.py OLD_BINARY NEW_BINARY 'DIR/walk-*.btsnoop' [--runs 5] [--every K]
  --every K: only every K-th capture by seed (K 4 with the standard world's seeds: one rate)
"""
import argparse, glob, os, re, statistics, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("captures")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--every", type=int, default=1)
    a = ap.parse_args()
    def seed(path):
        m = re.search(r"(\d+)\.btsnoop$", path)
        return int(m.group(1)) if m else 0
    files = sorted(glob.glob(a.captures), key=seed)
    files = [f for f in files if seed(f) % a.every == 0]
    if not files:
        sys.exit("no captures match %s" % a.captures)
    with tempfile.TemporaryDirectory() as cache:
        def run(binary):
            start = time.perf_counter()
            for f in files:
                r = subprocess.run([binary, "replay", f, "--hunt", "--json", "--config", os.path.join(REPO, "config/hunter.example.json"),
                                    "--voice-dir", os.path.join(REPO, "voices"), "--cache-dir", cache],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if r.returncode != 0:
                    sys.exit("%s replay %s: exit %d: %s" % (binary, f, r.returncode, r.stderr.decode()[-300:]))
            return time.perf_counter() - start
        run(a.old), run(a.new)  # warm the line cache and the page cache
        times = {"old": [], "new": []}
        for i in range(a.runs):
            for k in (["old", "new"] if i % 2 == 0 else ["new", "old"]):
                times[k].append(run(a.old if k == "old" else a.new))
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    print("%d captures: old %.2f s, new %.2f s (medians of %d), ratio %.3f" % (len(files), old, new, a.runs, new / old))

if __name__ == "__main__":
    main()
