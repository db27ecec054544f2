#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FoundationEssentials
import Ranging
import Simulation

// MARK: Distance: leave-one-position-out on lcav

/// One scored (beacon, second): the engine's filtered level, the advertised power, the truth.
struct LevelSample {
    var position: String
    var beacon: Int
    var txPower: Int
    var level: Double
    var truth: Double
}

/// Replays every position through the engine (no regions) and keeps each beacon's filtered
/// level every second after 20 s. The level does not depend on the exponent, so the fits
/// below need one replay.
func levelSamples(_ captures: [RealCapture], configuration: RangingConfiguration) -> [LevelSample] {
    var out: [LevelSample] = []
    for capture in captures {
        var engine = RangingEngine(configuration: configuration)
        var levels: [Int: (Double, Int)] = [:]
        var nextScore = 20.0
        func score(upTo time: Double) {
            while nextScore <= time {
                for (beacon, truth) in capture.truth.sorted(by: { $0.key < $1.key }) {
                    guard let (level, tx) = levels[beacon] else { continue }
                    out.append(LevelSample(position: capture.position, beacon: beacon, txPower: tx, level: level, truth: truth))
                }
                nextScore += 1
            }
        }
        for report in capture.reports {
            score(upTo: report.time)
            let key = OurRanger.key(report.beacon)
            for event in engine.ingest(RangingSample(key: key, measuredPower: report.measuredPower, rssi: report.rssi, time: report.time)) {
                if case .range(let r) = event, r.distance != nil { levels[Int(r.key.minor)] = (r.rssi, report.measuredPower) }
            }
        }
        score(upTo: (capture.reports.last?.time ?? 0) + 0.5)
    }
    return out
}

/// A sample's dB residual at n = 2: the path loss its true distance predicts less the one
/// observed (what a per-beacon offset corrects).
func residualAtTwo(_ s: LevelSample) -> Double {
    20 * log10(s.truth) - (Double(s.txPower) - s.level)
}

/// |ln(estimate / truth)| of log-distance at exponent n with a per-beacon offset (dB).
func logError(_ s: LevelSample, exponent n: Double, offset: Double = 0) -> Double {
    let meters = pow(10, (Double(s.txPower) + offset - s.level) / (10 * n))
    return abs(log(meters / s.truth))
}

struct DistanceFit {
    var exponent: Double
    var logSigma: Double   // the 68 % half-width, in ln units, from the training part
    var offsets: [Int: Double]
}

/// Exponent on a 0.01 grid in [1, 4] minimising the median |ln(est/true)| of the training
/// samples; the interval half-width is the 68th percentile of their |ln| errors (so the
/// interval is calibrated, not assumed); with `perBeacon`, each beacon's median dB residual
/// is an offset learned first (at exponent 2) and the exponent is fitted after it.
func fitDistance(_ training: [LevelSample], perBeacon: Bool) -> DistanceFit {
    var offsets: [Int: Double] = [:]
    if perBeacon {
        var residuals: [Int: [Double]] = [:]
        for s in training { residuals[s.beacon, default: []].append(residualAtTwo(s)) }
        for (beacon, values) in residuals { offsets[beacon] = median(values) }
    }
    var best = (n: 2.0, score: Double.infinity)
    for step in 0...300 {
        let n = 1.0 + Double(step) * 0.01
        let score = median(training.map { logError($0, exponent: n, offset: offsets[$0.beacon] ?? 0) })
        if score < best.score { best = (n, score) }
    }
    let errors = training.map { logError($0, exponent: best.n, offset: offsets[$0.beacon] ?? 0) }
    return DistanceFit(exponent: best.n, logSigma: percentile(errors, 0.68), offsets: offsets)
}

/// Leave one position out: fit on four, score on the fifth; pooled out-of-sample errors.
func crossValidateDistance(captures: [RealCapture]) {
    let samples = levelSamples(captures, configuration: .default)
    let positions = captures.map(\.position)
    print("Distance, leave-one-position-out on lcav (\(positions.count) positions, \(samples.count) scored (beacon, second) pairs);"
          + " every figure is out of sample:")
    print("| held out | fitted n | fitted n (+ per-beacon offsets) | ours median |ln| | ours 68 % coverage | + offsets median |ln| | + offsets coverage | AltBeacon curve | log-distance n = 2 | n = 2 coverage (interval from training) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    var oursErrors: [Double] = [], offsetErrors: [Double] = [], altErrors: [Double] = [], textbookErrors: [Double] = []
    var covered = 0, offsetCovered = 0, textbookCovered = 0, total = 0
    for held in positions {
        let training = samples.filter { $0.position != held }
        let test = samples.filter { $0.position == held }
        let plain = fitDistance(training, perBeacon: false)
        let withOffsets = fitDistance(training, perBeacon: true)
        var e: [Double] = [], eo: [Double] = [], ea: [Double] = [], et: [Double] = []
        var c = 0, co = 0, ct = 0
        let textbookSigma = percentile(training.map { logError($0, exponent: 2) }, 0.68)
        for s in test {
            let a = logError(s, exponent: plain.exponent)
            let b = logError(s, exponent: withOffsets.exponent, offset: withOffsets.offsets[s.beacon] ?? 0)
            e.append(a); eo.append(b)
            if a <= plain.logSigma { c += 1 }
            if b <= withOffsets.logSigma { co += 1 }
            let alt = AltBeaconBaseline.distance(rssi: s.level, txPower: s.txPower)
            if alt > 0 { ea.append(abs(log(alt / s.truth))) }
            let t = logError(s, exponent: 2)
            et.append(t)
            if t <= textbookSigma { ct += 1 }
        }
        oursErrors += e; offsetErrors += eo; altErrors += ea; textbookErrors += et
        covered += c; offsetCovered += co; textbookCovered += ct; total += test.count
        let n = Double(max(test.count, 1))
        print("| \(held) | \(format(plain.exponent, 2)) | \(format(withOffsets.exponent, 2)) | \(format(median(e), 3)) "
              + "| \(format(Double(c) / n * 100, 1)) % | \(format(median(eo), 3)) | \(format(Double(co) / n * 100, 1)) % "
              + "| \(format(median(ea), 3)) | \(format(median(et), 3)) | \(format(Double(ct) / n * 100, 1)) % |")
    }
    let n = Double(max(total, 1))
    print("| **pooled** | | | **\(format(median(oursErrors), 3))** | **\(format(Double(covered) / n * 100, 1)) %** "
          + "| \(format(median(offsetErrors), 3)) | \(format(Double(offsetCovered) / n * 100, 1)) % "
          + "| \(format(median(altErrors), 3)) | \(format(median(textbookErrors), 3)) "
          + "| \(format(Double(textbookCovered) / n * 100, 1)) % |")
    let all = fitDistance(samples, perBeacon: false)
    let sigmaDB = all.logSigma * 10 * all.exponent / log(10)
    let textbookAll = percentile(samples.map { logError($0, exponent: 2) }, 0.68)
    print("n = 2 on all five (the defaults): 68 % half-width \(format(textbookAll, 3)) (ln) = environment sigma "
          + "\(format(textbookAll * 20 / log(10), 1)) dB")
    print("fit on all five: exponent \(format(all.exponent, 2)), 68 % half-width \(format(all.logSigma, 3)) "
          + "(ln) = environment sigma \(format(sigmaDB, 1)) dB at that exponent")
    crossValidateOnePlaceCalibration(samples, positions: positions)
}

/// The set-up's calibration (each beacon's power read at one known distance, docs/raspberry-pi.md)
/// on lcav: every beacon's dB offset at n = 2 from one position alone (the median residual of
/// its seconds there, at its true distance), scored on another. For a held-out position, the
/// interval's half-width is the 68th percentile of the errors of the pairs (calibrated at one,
/// scored on another) among the other four positions only: nested, so the coverage is out of
/// sample too. What `environment_sigma` a calibrated installation should use.
func crossValidateOnePlaceCalibration(_ samples: [LevelSample], positions: [String]) {
    func offsets(at position: String) -> [Int: Double] {
        var residuals: [Int: [Double]] = [:]
        for s in samples where s.position == position { residuals[s.beacon, default: []].append(residualAtTwo(s)) }
        return residuals.mapValues { median($0) }
    }
    let calibrations = Dictionary(uniqueKeysWithValues: positions.map { ($0, offsets(at: $0)) })
    func errors(scoredOn scored: String, calibratedAt place: String) -> [Double] {
        let table = calibrations[place] ?? [:]
        return samples.filter { $0.position == scored }.compactMap { s in table[s.beacon].map { logError(s, exponent: 2, offset: $0) } }
    }
    /// Every (calibrated at one, scored on another) pair among `places`.
    func pairErrors(among places: [String]) -> [Double] {
        places.flatMap { scored in places.filter { $0 != scored }.flatMap { errors(scoredOn: scored, calibratedAt: $0) } }
    }
    print("")
    print("Calibrated at one place (each beacon's power from one position at its known distance, scored on another; n = 2), "
          + "every figure out of sample, the interval's half-width from the other positions' pairs only:")
    print("| held out | median |ln| | 68 % half-width (ln) from the others | = environment sigma, dB | coverage |")
    print("|---|---|---|---|---|")
    var pooled: [Double] = []
    var covered = 0
    for held in positions {
        let others = positions.filter { $0 != held }
        let half = percentile(pairErrors(among: others), 0.68)
        let test = others.flatMap { errors(scoredOn: held, calibratedAt: $0) }
        let inside = test.filter { $0 <= half }.count
        pooled += test
        covered += inside
        print("| \(held) | \(format(median(test), 3)) | \(format(half, 3)) | \(format(half * 20 / log(10), 1)) "
              + "| \(format(Double(inside) / Double(max(test.count, 1)) * 100, 1)) % |")
    }
    let half = percentile(pairErrors(among: positions), 0.68)
    print("| **pooled** | **\(format(median(pooled), 3))** | | | **\(format(Double(covered) / Double(max(pooled.count, 1)) * 100, 1)) %** |")
    print("every pair of the five: 68 % half-width \(format(half, 3)) (ln) = environment sigma \(format(half * 20 / log(10), 1)) dB")
}

// MARK: Presence on the real UCI iTAG vestibule data

struct ITagTrace {
    var tag: String
    var zone: String
    var times: [Double]
    var rssi: [Int]
}

func loadITag(path: String) throws -> [ITagTrace] {
    var byTag: [String: (zone: String, points: [(Double, Int)])] = [:]
    var start = Double.infinity
    for line in try readLines(path).dropFirst() {
        let f = line.split(separator: ",")
        guard f.count == 5, let ms = Double(f[2]), let rssi = Int(f[3]) else {
            throw BenchmarkError.malformed("\(path) line \(line)")
        }
        start = min(start, ms / 1000)
        byTag[String(f[0]), default: (String(f[1]), [])].points.append((ms / 1000, rssi))
    }
    return byTag.keys.sorted().compactMap { tag in
        guard let entry = byTag[tag] else { return nil }
        let points = entry.points.sorted { $0.0 < $1.0 }
        return ITagTrace(tag: tag, zone: entry.zone, times: points.map { $0.0 - start }, rssi: points.map(\.1))
    }
}

/// Each tag was carried inside its zone and heard for the whole 20 min: every exit and every
/// "unknown" is false (the real gaps of a real phone at ~1 Hz). Enter lag: from the tag's
/// first packet. Switch-off: the trace cut at 900 s, time from its last packet to the exit.
func iTagPresence(path: String) throws {
    let traces = try loadITag(path: path)
    let hours = traces.reduce(0.0) { $0 + (($1.times.last ?? 0) - ($1.times.first ?? 0)) } / 3600
    print("")
    print("Real data, UCI iTAG vestibule: \(traces.count) tags heard by a phone for 20 min each (\(format(hours, 2)) tag-hours; "
          + "RSSI -56 to -105 dBm; zones \(Set(traces.map(\.zone)).sorted().joined(separator: "/")))")
    print("| ranger | false exits/h | false unknowns/h | enter lag from first packet, median/max s | exit lag after a cut at 900 s, median/max s |")
    print("|---|---|---|---|---|")
    for which in Which.allCases {
        var exits = 0, unknowns = 0
        var enters: [Double] = [], offs: [Double] = []
        for trace in traces {
            let reports = zip(trace.times, trace.rssi).map {
                SimulatedReading(beacon: 0, time: $0.0, rssi: $0.1, measuredPower: -59, channel: 37, distance: .nan)
            }
            let first = trace.times.first ?? 0
            let end = (trace.times.last ?? 0) + 0.05
            var ranger = makeRanger(which)
            var wasInside = false
            var entered: Double?
            var last = Proximity.unknown
            drive(&ranger, reports: reports, until: end) { r, step in
                if r.inside, entered == nil { entered = step.time }
                if wasInside && !r.inside { exits += 1 }
                wasInside = r.inside
                let p = r.proximity(0)
                if p != last {
                    if p == .unknown && entered != nil { unknowns += 1 }
                    last = p
                }
            }
            enters.append((entered ?? end) - first)
            let cut = reports.filter { $0.time < 900 }
            let lastPacket = cut.last?.time ?? 0
            var cutRanger = makeRanger(which)
            var exitAt: Double?
            drive(&cutRanger, reports: cut, until: 900 + 120) { r, step in
                if step.time > lastPacket, exitAt == nil, !r.inside { exitAt = step.time }
            }
            offs.append((exitAt ?? 1020) - lastPacket)
        }
        print("| \(which.title) | \(format(Double(exits) / hours, 2)) | \(format(Double(unknowns) / hours, 2)) "
              + "| \(format(median(enters), 1))/\(format(enters.max() ?? .nan, 1)) | \(format(median(offs), 1))/\(format(offs.max() ?? .nan, 1)) |")
    }
}
