#!/usr/bin/env python3
"""Benchmarks of the whole hunter (release build, static Swift runtime), against a fake H4
controller on a unix socket (scripts/bench/fake-controller.py):

  start     time from exec to the first scan command and to scanning on, line cache warm;
            median of N runs, beside `hunt --quiet` (no voice) in the same run
  rss       peak RSS (VmHWM) while hunting a 10 Hz beacon for S seconds, beside `scan`
  idle      CPU time used in S seconds of hunting with no beacon in view

usage: scripts/bench/hunter-bench.py [--binary PATH] [--runs 9] [--hunt-seconds 60] [--idle-seconds 600]
"""
import argparse, os, signal, statistics, subprocess, sys, tempfile, time

UUID = "50697261-7465-4875-6E74-547265617375"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

def clock():
    return time.clock_gettime(time.CLOCK_MONOTONIC)

class Controller:
    def __init__(self, tmp, hz=0):
        self.sock = os.path.join(tmp, "ctl-%d.sock" % hz)
        self.stamp = os.path.join(tmp, "stamp-%d" % hz)
        self.adv_stamp = os.path.join(tmp, "adv-stamp-%d" % hz)
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "fake-controller.py"), self.sock,
                                   "--beacon-hz", str(hz), "--stamp", self.stamp, "--adv-stamp", self.adv_stamp])
        ready = self.sock + ".ready"
        if os.path.exists(ready):
            os.unlink(ready)
        for _ in range(400):
            if os.path.exists(ready):
                break
            time.sleep(0.025)
    def stop(self):
        self.p.terminate()
        self.p.wait()

def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0

def first_command(binary, tmp, args, advertising):
    """ms from starting `binary args` (the controller's socket appended) to its first scan
    enable, or advertising enable, reaching the fake controller."""
    ctl = Controller(tmp)
    stamp = ctl.adv_stamp if advertising else ctl.stamp
    try:
        os.path.exists(stamp) and os.unlink(stamp)
        t0 = clock()
        p = subprocess.Popen([binary] + args + ["--hci", "unix:" + ctl.sock], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(stamp) or os.path.getsize(stamp) == 0:
            if p.poll() is not None:
                raise SystemExit("%s exited early with %d" % (args[0], p.returncode))
            time.sleep(0.0005)
        with open(stamp) as f:
            first = float(f.read().split()[0])
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        return (first - t0) * 1000
    finally:
        ctl.stop()

def start_time(binary, tmp, cache, quiet):
    args = ["hunt", "--region", UUID, "--device", "null", "--cache-dir", cache] + (["--quiet"] if quiet else [])
    return first_command(binary, tmp, args, False)

def treasure(a, tmp):
    box = ["treasure", "--no-kiosk", "--reward", "ARRR-BENCH-1"]
    advertising = [first_command(a.binary, tmp, box, True) for _ in range(a.runs)]
    scanning = [first_command(a.binary, tmp, ["scan"], False) for _ in range(a.runs)]
    print("treasure start to advertising on (ms), median of %d: %.1f (p90 %.1f); baseline scan start to scanning on %.1f; ratio %.2f"
          % (a.runs, statistics.median(advertising), sorted(advertising)[int(0.9 * (a.runs - 1))], statistics.median(scanning),
             statistics.median(advertising) / max(statistics.median(scanning), 1e-9)))
    ctl = Controller(tmp, hz=10)
    try:
        p = subprocess.Popen([a.binary] + box + ["--hci", "unix:" + ctl.sock], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(5)
        c0 = cpu_seconds(p.pid)
        time.sleep(a.hunt_seconds)
        used = cpu_seconds(p.pid) - c0
        rss = hwm_kib(p.pid)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        print("treasure advertising %.0f s beside a 10 Hz beacon (not a hunter): peak RSS %.1f MB, %.2f s CPU (%.3f %% of one core)"
              % (a.hunt_seconds, rss / 1024, used, 100 * used / a.hunt_seconds))
    finally:
        ctl.stop()

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(REPO, ".build/release/pirate-hunter"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--hunt-seconds", type=float, default=60)
    ap.add_argument("--idle-seconds", type=float, default=600)
    ap.add_argument("--only", choices=["start", "rss", "idle", "treasure"])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ph-bench-")
    cache = os.path.join(tmp, "cache")

    if a.only in (None, "start"):
        start_time(a.binary, tmp, cache, False)  # fills the line cache
        voiced = [start_time(a.binary, tmp, cache, False) for _ in range(a.runs)]
        quiet = [start_time(a.binary, tmp, cache, True) for _ in range(a.runs)]
        print("start to scanning on (ms), median of %d: hunt %.1f (p90 %.1f), hunt --quiet %.1f; voice costs %.1f ms; target <= 150"
              % (a.runs, statistics.median(voiced), sorted(voiced)[int(0.9 * (a.runs - 1))], statistics.median(quiet),
                 statistics.median(voiced) - statistics.median(quiet)))

    if a.only in (None, "rss"):
        ctl = Controller(tmp, hz=10)
        try:
            results = {}
            for name, args in [
                ("hunt", ["hunt", "--hci", "unix:" + ctl.sock, "--region", UUID, "--device", "null", "--cache-dir", cache, "--json"]),
                ("scan", ["scan", "--hci", "unix:" + ctl.sock, "--json"]),
            ]:
                p = subprocess.Popen([a.binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(a.hunt_seconds)
                results[name] = hwm_kib(p.pid)
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=10)
            print("peak RSS while hunting a 10 Hz beacon for %.0f s: hunt %.1f MB, scan (no voice) %.1f MB; target <= 20 MB"
                  % (a.hunt_seconds, results["hunt"] / 1024, results["scan"] / 1024))
        finally:
            ctl.stop()

    if a.only in (None, "treasure"):
        treasure(a, tmp)

    if a.only in (None, "idle"):
        ctl = Controller(tmp, hz=0)
        try:
            p = subprocess.Popen([a.binary, "hunt", "--hci", "unix:" + ctl.sock, "--region", UUID, "--device", "null", "--cache-dir", cache],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(5)  # start-up (voice from cache) is not idle
            c0 = cpu_seconds(p.pid)
            time.sleep(a.idle_seconds)
            used = cpu_seconds(p.pid) - c0
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
            print("idle, no beacons, %.0f s: %.2f s CPU (%.3f %% of one core)" % (a.idle_seconds, used, 100 * used / a.idle_seconds))
        finally:
            ctl.stop()

if __name__ == "__main__":
    main()
