#!/usr/bin/env python3
"""Fit the default path-loss exponent and environment sigma of the ranging engine on the
shared real data (LCAV/pylocus beacon_static, BSD-3-Clause).

Model: rssi = measuredPower - 10 n log10(d) + e, e ~ N(0, sigma_env^2).
Per (position, beacon) pair, y = mean(measuredPower - rssi) over the ~2 min recording.
n: the value minimising the median of |ln(d_est / d_true)| over the 35 pairs, with
   d_est = 10^(y / (10 n)) (a least-median fit: robust to the few pairs whose beacons are
   far off their advertised calibration, and the quantity the benchmark scores).
sigma_env: root mean square of y - 10 n log10(d_true) at that n (what the engine adds to
   the filter's variance to give each distance its uncertainty).

Usage: scripts/fit_path_loss.py [DIR]   (default /work/shared/data/rssi/lcav_pylocus_beacon_static)
"""
import csv
import math
import statistics
import sys

directory = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/rssi/lcav_pylocus_beacon_static"
try:
    truth = {}
    with open(f"{directory}/derived_true_distances.csv") as f:
        for row in csv.DictReader(f):
            truth[(row["position"], int(row["anchor_id"]))] = float(row["true_distance_3d_m"])
    pairs = []
    for position in sorted({p for p, _ in truth}):
        losses = {}
        with open(f"{directory}/beacon_data_{position}.csv") as f:
            for row in csv.reader(f):
                losses.setdefault(int(row[2]), []).append(int(row[7]) - int(row[8]))
        for beacon, values in sorted(losses.items()):
            pairs.append((truth[(position, beacon)], statistics.fmean(values)))
except (OSError, KeyError, ValueError, IndexError) as error:
    print(f"fit_path_loss: cannot read {directory}: {error}", file=sys.stderr)
    sys.exit(66)


def median_log_error(n):
    return statistics.median(abs(math.log(10 ** (y / (10 * n)) / d)) for d, y in pairs)


candidates = [round(1.0 + 0.01 * i, 2) for i in range(301)]  # 1.00 ... 4.00
best = min(candidates, key=median_log_error)
residuals = [y - 10 * best * math.log10(d) for d, y in pairs]
sigma = math.sqrt(statistics.fmean(r * r for r in residuals))
origin = sum(10 * math.log10(d) * y for d, y in pairs) / sum((10 * math.log10(d)) ** 2 for d, _ in pairs)
print(f"pairs: {len(pairs)}")
print(f"least-median exponent n = {best:.2f} (median |ln(est/true)| = {median_log_error(best):.3f})")
print(f"  for comparison: n = 2.00 gives {median_log_error(2.0):.3f}; least squares on path loss gives "
      f"n = {origin:.2f} ({median_log_error(origin):.3f})")
print(f"environment sigma at n = {best:.2f}: {sigma:.1f} dB (RMS residual; mean residual {statistics.fmean(residuals):+.1f} dB)")
