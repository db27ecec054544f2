#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Ranging
import Simulation

// MARK: The stress sweep: worlds outside the family, never tuned on

/// What a stress row changes in a condition (the family leaves all of it off).
struct StressKnobs {
    /// The row's name in the tables.
    var label: String?
    /// The advertising interval after the change (a beacon whose firmware saves power after a
    /// while, or one reconfigured by its owner), halfway to what each measure times: the
    /// middle of a standing-still run, 90 s before the step, 150 s before the switch-off. The
    /// approach keeps the first interval (the beacon comes into range with it).
    var laterInterval: Double?
    /// The share of packets that meet a deep single-packet fade (multipath), 10-25 dB.
    var fadeShare = 0.0
    /// The host delivers reports in batches: each report is stamped at the end of its period
    /// (a phone or a busy Bluetooth stack; the UCI iTAG log batches in the same millisecond).
    var batchPeriod: Double?
}

/// Deep fades (a faded packet under the receiver's floor is not heard) and batching,
/// deterministic per seed and condition.
func applyStress(_ reports: [SimulatedReading], _ c: Condition, seed: UInt64) -> [SimulatedReading] {
    guard c.stress.fadeShare > 0 || c.stress.batchPeriod != nil else { return reports }
    var random = SplitMix64(seed: seed &* 1_000_003 &+ UInt64(c.index) &+ 11)
    return reports.compactMap { report in
        var r = report
        if c.stress.fadeShare > 0, random.nextUniform() < c.stress.fadeShare {
            r.rssi = max(r.rssi - Int((10 + 15 * random.nextUniform()).rounded()), -127)
            if let floor = c.model.sensitivity, Double(r.rssi) < floor { return nil }
        }
        if let period = c.stress.batchPeriod {
            r.time = (r.time / period).rounded(.up) * period
        }
        return r
    }
}

/// The stress rows: advertising rates the family does not have (5, 3, 2 and 0.5 Hz), a beacon
/// that changes its rate halfway, deep fades on 5 % of packets, reports delivered in 0.5 s
/// batches, delivery of 15-30 %, five beacons in a region. Each row has six conditions (the
/// three loss kinds twice, 1-3 beacons), no bodies, parameters drawn as in the family from a
/// seed of their own. Deterministic.
func stressFamily() -> [Condition] {
    var random = SplitMix64(seed: 2026_12_02)
    func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }
    struct Row {
        var label: String
        var interval: Double
        var knobs = StressKnobs()
        var delivery: ClosedRange<Double>?
        var beacons: Int?
    }
    let rows: [Row] = [
        Row(label: "5 Hz", interval: 0.2),
        Row(label: "3 Hz", interval: 0.33),
        Row(label: "2 Hz", interval: 0.5),
        Row(label: "0.5 Hz", interval: 2.0),
        Row(label: "10 Hz, then 1 Hz", interval: 0.1, knobs: StressKnobs(laterInterval: 1.0)),
        Row(label: "1 Hz, then 10 Hz", interval: 1.0, knobs: StressKnobs(laterInterval: 0.1)),
        Row(label: "10 Hz, deep fades 5 %", interval: 0.1, knobs: StressKnobs(fadeShare: 0.05)),
        Row(label: "1 Hz, deep fades 5 %", interval: 1.0, knobs: StressKnobs(fadeShare: 0.05)),
        Row(label: "10 Hz, 0.5 s batches", interval: 0.1, knobs: StressKnobs(batchPeriod: 0.5)),
        Row(label: "1 Hz, 0.5 s batches", interval: 1.0, knobs: StressKnobs(batchPeriod: 0.5)),
        Row(label: "10 Hz, delivery 15-30 %", interval: 0.1, delivery: 0.15 ... 0.3),
        Row(label: "1 Hz, delivery 15-30 %", interval: 1.0, delivery: 0.15 ... 0.3),
        Row(label: "10 Hz, 5 beacons", interval: 0.1, beacons: 5),
        Row(label: "1 Hz, 5 beacons", interval: 1.0, beacons: 5),
    ]
    var out: [Condition] = []
    for row in rows {
        for i in 0..<6 {
            let kind = LossKind.allCases[i % 3]
            let delivery = row.delivery.map(uniform) ?? (kind == .independent ? uniform(0.6 ... 0.95) : uniform(0.3 ... 0.95))
            let bad = kind == .shortBursts ? uniform(0.5 ... 1.5) : uniform(1.5 ... 5)
            var knobs = row.knobs
            knobs.label = row.label
            var c = Condition(index: 100 + out.count, interval: row.interval, lossKind: kind, delivery: delivery,
                              meanBad: bad, beacons: row.beacons ?? (1 + i % 3), exponent: uniform(1.6 ... 3.0),
                              noise: uniform(4 ... 8),
                              offsets: [uniform(-6 ... 6), uniform(-6 ... 6), uniform(-6 ... 6)],
                              shadowing: false, heldOut: true)
            c.stress = knobs
            out.append(c)
        }
    }
    return out
}

/// The stress table: false claims standing still (each kind), step, switch-off and enter,
/// ours against AltBeacon on the same traces.
func runStress(seeds: [UInt64], stillMinutes: Double, only: String?) {
    let conditions = stressFamily().filter { c in only.map { c.rowName.contains($0) } ?? true }
    print("Stress sweep (never tuned on): \(conditions.count) conditions x \(seeds.count) seeds; "
          + "standing still \(format(stillMinutes, 0)) min per run; no bodies")
    for c in conditions { print("  " + c.summary) }
    let (rowNames, results) = collectRows(conditions, rangers: [.ours, .altBeacon], seeds: seeds) { r, which, c, seed in
        r.measure(which, c, seed: seed, minutes: stillMinutes)
    }
    func perHour(_ n: Int, _ h: Double) -> String { format(Double(n) / max(h, 1e-9), 2) }
    func mp(_ v: [Double]) -> String { "\(format(median(v), 1))/\(format(percentile(v, 0.9), 1))" }
    print("")
    print("False claims standing still at 1.5-3 m, per hour (exit / unknown / wrong class / trend = total); "
          + "step 1.5 -> 6-8 m, s to far for good; switch-off, s to exit; approach, s to enter (median/p90)")
    print("| condition | ours | AltBeacon | ours <= 1/h | far at <= 2 m, % of time, ours / AltB | step ours | step AltB | off ours | off AltB | enter ours | enter AltB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in rowNames {
        guard let ours = results[name]?[.ours], let alt = results[name]?[.altBeacon] else { continue }
        let s = ours.still
        let claims = "\(perHour(s.exits, s.hours)) / \(perHour(s.unknowns, s.hours)) / \(perHour(s.wrongClass, s.hours)) / "
            + "\(perHour(s.trends, s.hours)) = **\(perHour(s.total, s.hours))**"
        let met = Double(s.total) / max(s.hours, 1e-9) <= 1
        print("| \(name) | \(claims) | \(perHour(alt.still.total, alt.still.hours)) (exits \(perHour(alt.still.exits, alt.still.hours))) "
              + "| \(met ? "yes" : "NO") | \(s.farWhenCloseShare) / \(alt.still.farWhenCloseShare) | \(mp(ours.steps)) | \(mp(alt.steps)) | \(mp(ours.offs)) | \(mp(alt.offs)) "
              + "| \(mp(ours.enters)) | \(mp(alt.enters)) |")
    }
    printFarBeforeStep(rowNames.compactMap { results[$0] }, runs: conditions.count * seeds.count)
}
