#!/usr/bin/env python3
"""Soak: the crowded street against `scan` and `hunt` (release build, issue 12).

A fake H4 controller on a unix socket (fake-controller.py) sends a 10 Hz treasure beacon
plus --rate reports a second from ever-new random addresses (for hunt: the hunted UUID with
random major/minor, as anyone can advertise it). The command runs for --seconds; its RSS
(VmRSS) and CPU are sampled every --every seconds. Beside it, in the same run, the same
command against the treasure beacon alone (the baseline) for --baseline seconds.

Prints the curve and: peak RSS, RSS after the first minute and at the end (flat = the
tables are bounded), CPU % of one core over the run, the ratio to the baseline.

usage: scripts/bench/soak.py [--binary PATH] [--seconds 600] [--rate 2000] [--every 30]
                             [--baseline 120] [--only scan|hunt] [--json]
"""
import argparse, os, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UUID = "50697261-7465-4875-6E74-547265617375"
JSON = False

def status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    return 0

def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

def run(binary, command, tmp, rate, seconds, every, label):
    sock = os.path.join(tmp, "%s-%d.sock" % (command, rate))
    args = [sys.executable, os.path.join(HERE, "fake-controller.py"), sock, "--beacon-hz", "10"]
    if rate:
        args += ["--crowd-hz", str(rate)] + (["--crowd-hunted"] if command == "hunt" else [])
    ctl = subprocess.Popen(args)
    for _ in range(400):
        if os.path.exists(sock + ".ready"):
            break
        time.sleep(0.025)
    cmd = [binary, command, "--hci", "unix:" + sock, "--duration", str(seconds)] + (["--json"] if JSON else [])
    if command == "hunt":
        cmd += ["--region", UUID, "--device", "null", "--cache-dir", os.path.join(tmp, "cache"), "--voice-dir", os.path.join(REPO, "voices")]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, label + ".err"), "w"))
    start = time.monotonic()
    samples = []
    cpu0 = None
    try:
        while p.poll() is None:
            time.sleep(every)
            try:
                t = time.monotonic() - start
                c = cpu(p.pid)
                cpu0 = cpu0 if cpu0 is not None else (t, c)
                rss = status(p.pid, "VmRSS") / 1024
                if rss > 0:  # 0: the process is exiting
                    samples.append((t, rss, status(p.pid, "VmHWM") / 1024, c))
            except (FileNotFoundError, ProcessLookupError):
                break
    finally:
        p.wait()
        ctl.terminate()
        ctl.wait()
    return samples

def summary(label, samples):
    if len(samples) < 2:
        return None
    t0, _, _, c0 = samples[0]
    t1, rss_end, _, c1 = samples[-1]
    peak = max(s[2] for s in samples)
    after_minute = next((r for t, r, _, _ in samples if t >= 60), samples[0][1])
    cpu_pct = 100 * (c1 - c0) / max(t1 - t0, 1e-9)
    print("%-22s peak RSS %.1f MB, RSS at 1 min %.1f MB, at the end %.1f MB, CPU %.1f %% of a core" % (label, peak, after_minute, rss_end, cpu_pct))
    return peak, cpu_pct

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(REPO, ".build/release/pirate-hunter"))
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--every", type=float, default=30)
    ap.add_argument("--baseline", type=float, default=120)
    ap.add_argument("--only", choices=["scan", "hunt"])
    ap.add_argument("--json", action="store_true", help="the commands print every event as JSON (to /dev/null)")
    a = ap.parse_args()
    global JSON
    JSON = a.json
    with tempfile.TemporaryDirectory() as tmp:
        for command in ([a.only] if a.only else ["scan", "hunt"]):
            base = run(a.binary, command, tmp, 0, a.baseline, min(a.every, a.baseline / 4), command + "-baseline")
            crowd = run(a.binary, command, tmp, a.rate, a.seconds, a.every, command + "-crowd")
            print("%s, %d reports/s from new addresses, %.0f s: t (s), RSS (MB), CPU (s)" % (command, a.rate, a.seconds))
            for t, rss, _, c in crowd:
                print("  %6.0f  %6.1f  %7.2f" % (t, rss, c))
            b = summary(command + " (1 beacon)", base)
            c = summary(command + " (crowd)", crowd)
            if b and c:
                print("%-22s peak RSS %.2fx the baseline, CPU %.1fx" % (command + " ratio", c[0] / b[0], c[1] / max(b[1], 0.01)))
            sys.stdout.flush()

main()
