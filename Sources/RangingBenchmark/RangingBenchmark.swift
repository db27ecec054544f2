#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FoundationEssentials
import Ranging
import Simulation

enum Which: CaseIterable {
    case ours, altBeacon, iOS

    var title: String {
        switch self {
        case .ours: "ours"
        case .altBeacon: "AltBeacon"
        case .iOS: "iOS-like"
        }
    }
}

/// Our engine runs with its defaults everywhere (exponent 2: the simulation's 3 m sits on our
/// near/far edge).
let simulatedConfiguration = RangingConfiguration.default

/// Exponent 2.0, for the "not fitted" comparison row on the real data.
let textbookConfiguration: RangingConfiguration = {
    var c = RangingConfiguration.default
    c.pathLossExponent = 2.0
    return c
}()

func makeRanger(_ which: Which, configuration: RangingConfiguration = simulatedConfiguration) -> any Ranger {
    switch which {
    case .ours: OurRanger(configuration: configuration)
    case .altBeacon: AltBeaconBaseline()
    case .iOS: IOSLikeBaseline()
    }
}

struct Step {
    var time: Double
    var isTick: Bool
}

/// Feeds reports and 0.1 s timer ticks in time order; `observe` runs after each step.
func drive(_ ranger: inout any Ranger, reports: [SimulatedReading], until end: Double,
           tick: Double = 0.1, observe: (any Ranger, Step) -> Void) {
    replay(reports, until: end, tick: tick, advance: { time in
        ranger.advance(to: time)
        observe(ranger, Step(time: time, isTick: true))
    }, ingest: { report in
        ranger.ingest(beacon: report.beacon, rssi: report.rssi, measuredPower: report.measuredPower, time: report.time)
        observe(ranger, Step(time: report.time, isTick: false))
    })
}

/// The clock of every measure: each report before `end` in time order, and before it the
/// timer ticks (every `tick` s from 0) due by its time; then the ticks left before `end`.
/// `deadline`: when the hunt is next due a tick of its own after a time
/// (`HuntDirector.nextDeadline(after:)`, as the hunter arms one): `advance` is called then
/// too, before whatever comes later.
func replay(_ reports: [SimulatedReading], until end: Double, tick: Double = 0.1, deadline: (Double) -> Double? = { _ in nil },
            advance: (Double) -> Void, ingest: (SimulatedReading) -> Void) {
    var nextTick = 0.0
    var fired = -Double.infinity
    /// The deadline due before `time`, once each.
    func due(before time: Double) {
        if let d = deadline(fired), d < time {
            fired = d
            advance(d)
        }
    }
    for report in reports where report.time < end {
        while nextTick <= report.time {
            due(before: nextTick)
            advance(nextTick)
            nextTick += tick
        }
        due(before: report.time)
        ingest(report)
    }
    while nextTick < end {
        due(before: nextTick)
        advance(nextTick)
        nextTick += tick
    }
}

let usualLoss10Hz = GilbertElliottLoss(lossFraction: 0.2, meanBurstPackets: 5)
let usualLoss1Hz = GilbertElliottLoss(lossFraction: 0.2, meanBurstPackets: 1)

func simulate(_ beacons: [SimulatedBeacon], seed: UInt64, until end: Double) -> [SimulatedReading] {
    var simulator = RadioSimulator(beacons: beacons, seed: seed)
    return simulator.run(until: end)
}

func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let position = p * Double(sorted.count - 1)
    let low = Int(position.rounded(.down))
    let high = min(low + 1, sorted.count - 1)
    return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
}

func mean(_ values: [Double]) -> Double { values.isEmpty ? .nan : values.reduce(0, +) / Double(values.count) }

// MARK: Scenarios

/// 1. Standing at 3 m for 10 min: committed proximity changes per minute, unknowns.
func standingAtEdge(_ which: Which, seeds: [UInt64]) -> (perMinute: Double, unknowns: Double) {
    var rates: [Double] = []
    var unknowns: [Double] = []
    for seed in seeds {
        let reports = simulate([SimulatedBeacon(id: 0, path: .standing(at: 3), loss: usualLoss10Hz)], seed: seed, until: 600)
        var ranger = makeRanger(which)
        var last = Proximity.unknown
        var changes = 0
        var unknown = 0
        var committed = false
        drive(&ranger, reports: reports, until: 600) { r, _ in
            let now = r.proximity(0)
            guard now != last else { return }
            if committed {
                changes += 1
                if now == .unknown { unknown += 1 }
            }
            if now != .unknown { committed = true }
            last = now
        }
        rates.append(Double(changes) / 10)
        unknowns.append(Double(unknown))
    }
    return (mean(rates), mean(unknowns))
}

/// 2. Step from 1.5 m to 6 m: seconds until "far" for good.
func stepToFar(_ which: Which, seeds: [UInt64]) -> [Double] {
    seeds.map { seed in
        let stepTime = 30.0
        let end = 90.0
        let reports = simulate([SimulatedBeacon(id: 0, path: .step(from: 1.5, to: 6, at: stepTime), loss: usualLoss10Hz)],
                               seed: seed, until: end)
        return secondsToFarForGood(which, reports: reports, stepTime: stepTime, end: end)
    }.filter(\.isFinite)
}

/// Seconds from `stepTime` until beacon 0 is "far" and stays so to `end` (`end - stepTime`
/// if never): the step-to-far measure of the fixed table and of the family. NaN when the
/// ranger said "far" before the step and never changed: no change was there to follow (the
/// wrong class before the step is the standing-still measure's to count).
func secondsToFarForGood(_ which: Which, reports: [SimulatedReading], stepTime: Double, end: Double) -> Double {
    var ranger = makeRanger(which)
    var last = Proximity.unknown
    var farSince: Double?
    var farBeforeStep = false
    drive(&ranger, reports: reports, until: end) { r, step in
        let now = r.proximity(0)
        if step.time < stepTime { farBeforeStep = now == .far }
        if now != last {
            farSince = (now == .far && step.time >= stepTime) ? step.time : nil
            last = now
        }
    }
    if farSince == nil, last == .far, farBeforeStep { return .nan }
    return farSince.map { $0 - stepTime } ?? (end - stepTime)
}

/// 3. Switch-off: exit lag.
func exitLag(_ which: Which, interval: Double, seeds: [UInt64]) -> [Double] {
    seeds.map { seed in
        let off = 120.0
        let end = off + 60
        let loss = interval < 0.5 ? usualLoss10Hz : usualLoss1Hz
        let reports = simulate([SimulatedBeacon(id: 0, advertisingInterval: interval, path: .standing(at: 2),
                                              switchOffTime: off, loss: loss)], seed: seed, until: end)
        var ranger = makeRanger(which)
        var exitTime: Double?
        drive(&ranger, reports: reports, until: end) { r, step in
            if step.time >= off, exitTime == nil, !r.inside { exitTime = step.time }
        }
        return (exitTime ?? end) - off
    }
}

/// 4. Standing at 2 m, 30 % delivery in bursts, 60 min: false exits per hour.
func falseExits(_ which: Which, seeds: [UInt64]) -> Double {
    let hours = seeds.map { seed -> Double in
        let end = 3600.0
        let loss = GilbertElliottLoss(lossFraction: 0.7, meanBurstPackets: 10)
        let reports = simulate([SimulatedBeacon(id: 0, path: .standing(at: 2), loss: loss)], seed: seed, until: end)
        var ranger = makeRanger(which)
        var wasInside = false
        var exits = 0
        drive(&ranger, reports: reports, until: end) { r, _ in
            if wasInside && !r.inside { exits += 1 }
            wasInside = r.inside
        }
        return Double(exits)
    }
    return mean(hours)
}

/// 5a. A stray packet now and then (one per 30 s on average, from 30 m): false enters per hour.
func falseEnters(_ which: Which, seeds: [UInt64]) -> Double {
    let counts = seeds.map { seed -> Double in
        let end = 3600.0
        let reports = simulate([SimulatedBeacon(id: 0, path: .standing(at: 30),
                                              loss: .independent(lossFraction: 1 - 1.0 / 300))], seed: seed, until: end)
        var ranger = makeRanger(which)
        var wasInside = false
        var enters = 0
        drive(&ranger, reports: reports, until: end) { r, _ in
            if !wasInside && r.inside { enters += 1 }
            wasInside = r.inside
        }
        return Double(enters)
    }
    return mean(counts)
}

/// 5b. A real approach: the beacon comes into range at t = 10 s (hunter walking in from
/// 12 m to 2 m): seconds until enter.
func approachEnterLag(_ which: Which, seeds: [UInt64]) -> [Double] {
    seeds.map { seed in
        let on = 10.0
        let end = 40.0
        let path = ScriptedPath([.init(time: on, distance: 12), .init(time: on + 10, distance: 2)])
        let reports = simulate([SimulatedBeacon(id: 0, path: path, switchOnTime: on, loss: usualLoss10Hz)],
                               seed: seed, until: end)
        var ranger = makeRanger(which)
        var enterTime: Double?
        drive(&ranger, reports: reports, until: end) { r, step in
            if step.time >= on, enterTime == nil, r.inside { enterTime = step.time }
        }
        return (enterTime ?? end) - on
    }
}

/// 6a. Two beacons at 2 m for 10 min: nearest switches per minute.
func nearestSwitchesTied(_ which: Which, seeds: [UInt64]) -> Double {
    let rates = seeds.map { seed -> Double in
        let end = 600.0
        let reports = simulate([SimulatedBeacon(id: 0, path: .standing(at: 2), loss: usualLoss10Hz),
                                SimulatedBeacon(id: 1, path: .standing(at: 2), loss: usualLoss10Hz)], seed: seed, until: end)
        var ranger = makeRanger(which)
        var last: Int?
        var switches = 0
        drive(&ranger, reports: reports, until: end) { r, _ in
            guard let now = r.nearest, now != last else { return }
            if last != nil { switches += 1 }
            last = now
        }
        return Double(switches) / 10
    }
    return mean(rates)
}

/// 6b. One beacon at 2 m, the other at 3 m, 10 min: share of the time the nearest reported
/// is the right one (from the first report; the closer one alternates with the seed).
func nearestRightShare(_ which: Which, seeds: [UInt64]) -> Double {
    let shares = seeds.map { seed -> Double in
        let end = 600.0
        let closer = Int(seed % 2)
        let reports = simulate([SimulatedBeacon(id: 0, path: .standing(at: closer == 0 ? 2 : 3), loss: usualLoss10Hz),
                                SimulatedBeacon(id: 1, path: .standing(at: closer == 1 ? 2 : 3), loss: usualLoss10Hz)],
                               seed: seed, until: end)
        var ranger = makeRanger(which)
        var right = 0
        var total = 0
        drive(&ranger, reports: reports, until: end) { r, step in
            guard step.isTick, let now = r.nearest else { return }
            total += 1
            if now == closer { right += 1 }
        }
        return total > 0 ? Double(right) / Double(total) : 0
    }
    return mean(shares)
}

// MARK: Real data (lcav)

struct RealCapture {
    var position: String
    var reports: [SimulatedReading]
    var truth: [Int: Double]
}

enum BenchmarkError: Error, CustomStringConvertible {
    case unreadable(String)
    case malformed(String)

    var description: String {
        switch self {
        case .unreadable(let path): "cannot read \(path)"
        case .malformed(let what): "malformed data: \(what)"
        }
    }
}

func readLines(_ path: String) throws -> [Substring] {
    guard let data = FileManager.default.contents(atPath: path) else { throw BenchmarkError.unreadable(path) }
    return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
}

func loadLcav(directory: String) throws -> [RealCapture] {
    var truth: [String: [Int: Double]] = [:]
    for line in try readLines(directory + "/derived_true_distances.csv").dropFirst() {
        let f = line.split(separator: ",")
        guard f.count == 3, let id = Int(f[1]), let d = Double(f[2]) else {
            throw BenchmarkError.malformed("derived_true_distances.csv line \(line)")
        }
        truth[String(f[0]), default: [:]][id] = d
    }
    var captures: [RealCapture] = []
    for position in truth.keys.sorted() {
        let lines = try readLines(directory + "/beacon_data_\(position).csv")
        var reports: [SimulatedReading] = []
        var start: Double?
        for line in lines {
            let f = line.split(separator: ",")
            guard f.count == 9, let ms = Double(f[0]), let id = Int(f[2]), let tx = Int(f[7]), let rssi = Int(f[8]) else {
                throw BenchmarkError.malformed("beacon_data_\(position).csv line \(line)")
            }
            let t = ms / 1000
            if start == nil { start = t }
            reports.append(SimulatedReading(beacon: id, time: t - (start ?? t), rssi: rssi, measuredPower: tx,
                                             channel: 0, distance: truth[position]?[id] ?? .nan))
        }
        captures.append(RealCapture(position: position, reports: reports, truth: truth[position] ?? [:]))
    }
    return captures
}

struct RealScore {
    var medianLogError: Double
    var intervalCoverage: Double?
    var sigmaCoverage: Double?
    var samples: Int
    /// RMS of 10·n·log10(estimate / truth): the model's error in dB at exponent n.
    var rmsErrorDB: Double
}

/// 7. Replay each position as a time series; every second after 20 s (AltBeacon's window
/// full), score every beacon's reported distance against the truth.
func realDataScore(_ which: Which, captures: [RealCapture], configuration: RangingConfiguration = .default) -> RealScore {
    var errors: [Double] = []
    var squaredDB = 0.0
    var inInterval = 0
    var inSigma = 0
    for capture in captures {
        var ranger = makeRanger(which, configuration: configuration)
        let end = (capture.reports.last?.time ?? 0) + 0.5
        var nextScore = 20.0
        drive(&ranger, reports: capture.reports, until: end) { r, step in
            guard step.isTick, step.time >= nextScore else { return }
            nextScore += 1
            for (beacon, truth) in capture.truth {
                guard let d = r.distance(beacon) else { continue }
                errors.append(abs(log(d.meters / truth)))
                let dB = 10 * configuration.pathLossExponent * log10(d.meters / truth)
                squaredDB += dB * dB
                if let interval = d.interval, interval.contains(truth) { inInterval += 1 }
                if let sigma = d.sigma, abs(d.meters - truth) <= sigma { inSigma += 1 }
            }
        }
    }
    let n = Double(max(errors.count, 1))
    return RealScore(medianLogError: median(errors),
                     intervalCoverage: which == .ours ? Double(inInterval) / n : nil,
                     sigmaCoverage: which == .ours ? Double(inSigma) / n : nil,
                     samples: errors.count,
                     rmsErrorDB: (squaredDB / n).squareRoot())
}

/// The default exponent: the value on a 0.01 grid in [1, 4] that minimises the benchmark's
/// own real-data score (median |ln(estimate/truth)| of our engine replaying lcav); the
/// environment sigma is the RMS error in dB at that exponent.
func fitExponent(captures: [RealCapture]) {
    var best: (n: Double, score: RealScore)?
    var landscape: [String] = []
    for step in 0...300 {
        let n = 1.0 + Double(step) * 0.01
        var configuration = RangingConfiguration.default
        configuration.pathLossExponent = n
        let score = realDataScore(.ours, captures: captures, configuration: configuration)
        if best.map({ score.medianLogError < $0.score.medianLogError }) ?? true { best = (n, score) }
        if step % 25 == 0 { landscape.append("\(format(n, 2)): \(format(score.medianLogError, 3))") }
    }
    print("median |ln(est/true)| by exponent: " + landscape.joined(separator: ", "))
    guard let best else { return }
    print("fitted path-loss exponent: \(format(best.n, 2)) (median |ln(est/true)| \(format(best.score.medianLogError, 3)) "
          + "over \(best.score.samples) (beacon, second) pairs)")
    print("environment sigma at that exponent (RMS error): \(format(best.score.rmsErrorDB, 1)) dB")
}

// MARK: Cost

func peakRSSKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss
}

/// Ns per sighting for 500 beacons at 10 Hz (one region holding them all), median of runs,
/// against the AltBeacon baseline's per-packet cost measured the same way. The first run of
/// ours happens before anything else is allocated, so the peak RSS after it is the engine's.
func costPerSighting(runs: Int) -> (ours: Double, altBeacon: Double, tracked: Int, rssBefore: Int, rssEngine: Int) {
    let beacons = 500
    let sightings = 100_000
    var noise = GaussianSource(seed: 42)
    let table = (0..<4096).map { _ in Int((-70 + 7 * noise.nextGaussian()).rounded()) }
    let uuid = OurRanger.uuid
    let keys = (0..<beacons).map { BeaconKey(uuid: uuid, major: 1, minor: UInt16($0)) }
    let rssBefore = peakRSSKiB()
    var rssEngine = rssBefore
    var ours: [Double] = []
    var alt: [Double] = []
    var tracked = 0
    var sink = 0
    for _ in 0..<runs {
        var engine = RangingEngine(configuration: .default, regions: [Region(name: "all", uuid: uuid)])
        let start = ContinuousClock.now
        for i in 0..<sightings {
            let sample = RangingSample(key: keys[i % beacons], measuredPower: -59, rssi: table[i & 4095],
                                       time: Double(i) * (0.1 / Double(beacons)))
            sink &+= engine.ingest(sample).count
        }
        ours.append(nanoseconds(ContinuousClock.now - start) / Double(sightings))
        tracked = engine.trackedBeaconCount
        if rssEngine == rssBefore { rssEngine = peakRSSKiB() }
    }
    for _ in 0..<runs {
        var baseline = AltBeaconBaseline()
        let start = ContinuousClock.now
        for i in 0..<sightings {
            baseline.ingest(beacon: i % beacons, rssi: table[i & 4095], measuredPower: -59,
                            time: Double(i) * (0.1 / Double(beacons)))
        }
        alt.append(nanoseconds(ContinuousClock.now - start) / Double(sightings))
        sink &+= baseline.nearest ?? 0
    }
    if sink == Int.min { print("") }
    return (median(ours), median(alt), tracked, rssBefore, rssEngine)
}

func nanoseconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) * 1e9 + Double(parts.attoseconds) / 1e9
}

// MARK: Probe

/// Prints the learned exit limit over time for a few loss patterns (a development aid).
func probe() {
    if let traces = try? loadITag(path: "/work/shared/data/rssi/uci_itag_vestibule/raw_rssi.csv") {
        for trace in traces.prefix(4) {
            var stats = ArrivalStatistics()
            var line = trace.tag + ":"
            var last = trace.times.first ?? 0
            for t in trace.times {
                let limit = stats.silenceLimit(falseAlarmsPerHour: 0.5, at: last, .default)
                if t - last > limit { line += " gap \(format(t - last, 1))>\(format(limit, 1))@\(Int(t))" }
                stats.record(time: t, .default)
                if t - last >= 0.02 { last = t }
            }
            print(line, "nominal", format(stats.nominalInterval ?? 0, 3))
        }
    }
    let cases: [(String, Double, GilbertElliottLoss)] = [
        ("10 Hz GE 20 % / 5", 0.1, usualLoss10Hz),
        ("1 Hz indep 20 %", 1.0, .independent(lossFraction: 0.2)),
        ("10 Hz indep 10 %", 0.1, .independent(lossFraction: 0.1)),
        ("10 Hz GE 70 % / 50", 0.1, GilbertElliottLoss(lossFraction: 0.7, meanBurstPackets: 50)),
        ("1 Hz GE 50 % / 3", 1.0, GilbertElliottLoss(lossFraction: 0.5, meanBurstPackets: 3)),
    ]
    for (name, interval, loss) in cases {
        let reports = simulate([SimulatedBeacon(id: 0, advertisingInterval: interval, path: .standing(at: 2), loss: loss)],
                               seed: 3, until: 1800)
        var stats = ArrivalStatistics()
        var line = name + ":"
        var next = 30.0
        for r in reports {
            stats.record(time: r.time, .default)
            if r.time >= next {
                line += " \(Int(next))s=\(format(stats.silenceLimit(falseAlarmsPerHour: 0.5, at: r.time, .default), 1))"
                next *= 2
            }
        }
        print(line)
    }
}

// MARK: Main

func format(_ value: Double, _ digits: Int = 2) -> String {
    guard value.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    } else if digits > 0 {
        text += "." + String(repeating: "0", count: digits)
    }
    return text
}

func spread(_ values: [Double]) -> String {
    "\(format(median(values), 1))/\(format(percentile(values, 0.9), 1))/\(format(values.max() ?? .nan, 1))"
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

@main
enum RangingBenchmark {
    static func main() {
        var dataDirectory = "/work/shared/data/rssi/lcav_pylocus_beacon_static"
        var seedCount = 20
        var fitOnly = false
        var familyPart: Bool?
        var sharedLoss = false
        var stress = false
        var heard = false
        var calibrated = false
        var calibrationSpot = 0.0
        var stillMinutes = 20.0
        var only: String?
        var realOnly = false
        var iTagPath = "/work/shared/data/rssi/uci_itag_vestibule/raw_rssi.csv"
        var walking: Bool?
        var harshness = WalkingWorld.Harshness.standard
        var harshened = false
        var writeCaptures: String?
        var replays: String?
        var trail: Int?
        var spacing: Double?
        var anyOrder = false
        var firstSeed: UInt64?
        var arguments = CommandLine.arguments.dropFirst()
        /// The next argument as a range LO-HI within `from`...`upTo`, or the usage line.
        func walkingRange(_ flag: String, from low: Double = 0, upTo high: Double, need: String) -> ClosedRange<Double> {
            guard let value = arguments.popFirst(), let range = parseRange(value, upTo: high), range.lowerBound >= low else {
                fail("\(flag) needs \(need)", code: 64)
            }
            return range
        }
        /// The next argument as a whole number within `bounds`, or the usage line.
        func walkingCount(_ flag: String, _ bounds: ClosedRange<Int>, need: String) -> Int {
            guard let value = arguments.popFirst(), let n = Int(value), bounds.contains(n) else { fail("\(flag) needs \(need)", code: 64) }
            return n
        }
        while let argument = arguments.popFirst() {
            if Self.radioFlags.contains(argument) { harshened = true }
            switch argument {
            case "--data":
                guard let value = arguments.popFirst() else { fail("--data needs a directory", code: 64) }
                dataDirectory = value
            case "--fit":
                fitOnly = true
            case "--family":
                switch arguments.popFirst() {
                case "held-out": familyPart = true
                case "tuning": familyPart = false
                default: fail("--family needs held-out or tuning", code: 64)
                }
            case "--minutes":
                guard let value = arguments.popFirst(), let m = Double(value), m > 0 else {
                    fail("--minutes needs a positive number", code: 64)
                }
                stillMinutes = m
            case "--only":
                only = arguments.popFirst()
            case "--shared-loss":
                sharedLoss = true
            case "--stress":
                stress = true
            case "--made-up-minors":
                guard let value = arguments.popFirst(), let n = Int(value), n > 0, n <= 65_000 else {
                    fail("--made-up-minors needs a count of 1 to 65000", code: 64)
                }
                runMadeUpMinors(n)
                return
            case "--heard":
                heard = true
            case "--calibrated":
                calibrated = true
            case "--calibration-spot":
                guard let value = arguments.popFirst(), let dB = Double(value), dB >= 0, dB <= 20 else {
                    fail("--calibration-spot needs dB from 0 to 20", code: 64)
                }
                calibrationSpot = dB
            case "--real":
                realOnly = true
            case "--itag":
                guard let value = arguments.popFirst() else { fail("--itag needs a file", code: 64) }
                iTagPath = value
            case "--walking":
                switch arguments.popFirst() {
                case "held-out": walking = true
                case "tuning": walking = false
                default: fail("--walking needs held-out or tuning", code: 64)
                }
            case "--spread", "--body":
                guard let value = arguments.popFirst(), let range = parseRange(value) else {
                    fail("\(argument) needs a range of dB such as 4-6", code: 64)
                }
                if argument == "--spread" { harshness.spread = range } else { harshness.bodyDepth = range }
            case "--power-error", "--field", "--chest-spot":
                guard let value = arguments.popFirst(), let dB = Double(value), dB >= 0, dB <= 20 else {
                    fail("\(argument) needs dB from 0 to 20", code: 64)
                }
                switch argument {
                case "--field": harshness.field = dB
                case "--chest-spot": harshness.chestSpot = dB
                default: harshness.powerError = dB
                }
            case "--rate":
                guard let value = arguments.popFirst(), let hz = Double(value), hz >= 0.2, hz <= 20 else {
                    fail("--rate needs an advertising rate from 0.2 to 20 Hz", code: 64)
                }
                harshness.rate = hz
            case "--loss":
                let range = walkingRange(argument, upTo: 95, need: "a range of percent lost such as 30-50")
                harshness.lossFraction = range.lowerBound / 100 ... range.upperBound / 100
            case "--burst":
                harshness.burstPackets = walkingRange(argument, from: 1, upTo: 200,
                                                      need: "a range of packets a loss burst lasts on average, such as 20-50")
            case "--chest-beacons":
                harshness.chestBeacons = walkingCount(argument, 1 ... 4, need: "a number of beacons from 1 to 4")
            case "--speed":
                harshness.speed = walkingRange(argument, from: 0.2, upTo: 4,
                                               need: "a range of walking speeds in m/s from 0.2 to 4, such as 2-3")
            case "--outage":
                harshness.outage = walkingRange(argument, from: 0.1, upTo: 60,
                                                need: "a range of seconds a shared outage lasts, from 0.1 to 60, such as 5-20")
            case "--bystanders":
                harshness.bystanders = walkingCount(argument, 0 ... 20, need: "a number of other advertisers from 0 to 20")
            case "--any-order":
                anyOrder = true
            case "--trail":
                trail = walkingCount(argument, 2 ... 6, need: "a number of chests from 2 to 6")
            case "--spacing":
                guard let value = arguments.popFirst(), let m = Double(value), (1 ... 15).contains(m) else {
                    fail("--spacing needs the chests' least distance apart in m, from 1 to 15", code: 64)
                }
                spacing = m
            case "--write-captures":
                guard let value = arguments.popFirst() else { fail("--write-captures needs a directory", code: 64) }
                writeCaptures = value
            case "--replays":
                guard let value = arguments.popFirst() else { fail("--replays needs a directory", code: 64) }
                replays = value
            case "--probe":
                probe()
                return
            case "--seeds":
                guard let value = arguments.popFirst(), let n = Int(value), n > 0 else {
                    fail("--seeds needs a positive number", code: 64)
                }
                seedCount = n
            case "--first-seed":
                // Held-out walks from this seed on: a block no earlier round looked at.
                guard let value = arguments.popFirst(), let n = UInt64(value), n > 10_000, n < UInt64(Int32.max) else {
                    fail("--first-seed needs a seed past the tuning part (10001 to \(Int32.max - 1))", code: 64)
                }
                firstSeed = n
            default:
                fail("unknown argument \(argument) (usage: RangingBenchmark [--data DIR] [--seeds N] [--fit] [--real [--itag FILE]] [--family held-out|tuning [--shared-loss | --calibrated] [--minutes M] [--only ROW]] [--stress [--minutes M] [--only ROW]] [--heard] (with --family or --stress: what the hunt rules say standing still) [--walking held-out|tuning [--first-seed N] [--calibrated [--calibration-spot DB]] [--write-captures DIR] [--replays DIR] [--spread LO-HI] [--body LO-HI] [--power-error DB] [--field DB] [--rate HZ] [--loss LO-HI] [--burst LO-HI] [--chest-beacons N] [--speed LO-HI] [--outage LO-HI] [--bystanders N] [--chest-spot DB] [--trail N [--spacing M] [--any-order]]] (--rate HZ also with --family ... --heard: every beacon at that rate))", code: 64)
            }
        }
        if let probe = getenv("AT_HAND_PROBE").flatMap({ UInt64(String(cString: $0)) }) {
            probeAtHand(seed: probe, harshness: harshness)
            return
        }
        if let probe = getenv("STILL_PROBE").map({ String(cString: $0).split(separator: ":").compactMap { Int($0) } }), probe.count == 2 {
            probeStill(row: probe[0], seed: UInt64(probe[1]))
            return
        }
        if let probe = getenv("WARM_PROBE").map({ String(cString: $0).split(separator: ":").compactMap { Double($0) } }), probe.count == 3 {
            probeWarm(row: Int(probe[0]), seed: UInt64(probe[1]), at: probe[2])
            return
        }
        if let probe = getenv("ARRIVAL_PROBE").flatMap({ Int(String(cString: $0)) }) {
            probeArrivals(count: probe)
            return
        }
        if let probe = getenv("LEG_PROBE").flatMap({ Int(String(cString: $0)) }) {
            probeLegs(count: probe)
            return
        }
        if let probe = getenv("RAMP_PROBE").flatMap({ Int(String(cString: $0)) }) {
            probeRamp(count: probe)
            return
        }
        if let probe = getenv("MOTION_PROBE").flatMap({ Int(String(cString: $0)) }) {
            probeMotion(count: probe)
            return
        }
        if let probe = getenv("TREND_PROBE").flatMap({ Int(String(cString: $0)) }) {
            probeTrendLegs(count: probe)
            return
        }
        if let export = getenv("WALK_EXPORT").map({ String(cString: $0).split(separator: ":").map(String.init) }), export.count == 3,
           let first = UInt64(export[1]), let count = Int(export[2]) {
            exportWalks(directory: export[0], first: first, count: count, harshness: harshness)
            return
        }
        if let probe = getenv("HEARD_PROBE").map({ String(cString: $0).split(separator: ":").compactMap { Double($0) } }), probe.count == 4 {
            probeHeard(row: Int(probe[0]), seed: UInt64(probe[1]), from: probe[2], to: probe[3])
            return
        }
        if getenv("CALIBRATION_PROBE") != nil {
            probeCalibration(harshness: harshness)
            return
        }
        if let probe = getenv("ENGINE_PROBE").flatMap({ UInt64(String(cString: $0)) }) {
            probeEngine(seed: probe, harshness: harshness)
            return
        }
        if spacing != nil, trail == nil { fail("--spacing goes with --trail", code: 64) }
        if anyOrder, trail == nil { fail("--any-order goes with --trail", code: 64) }
        if firstSeed != nil, walking != true { fail("--first-seed goes with --walking held-out", code: 64) }
        if let chests = trail {
            guard let heldOut = walking else { fail("--trail goes with --walking held-out|tuning", code: 64) }
            if calibrated || harshness.chestBeacons > 1 || harshness.bystanders > 0 {
                fail("--trail has one tag a chest and no bystanders (not --calibrated, --chest-beacons or --bystanders)", code: 64)
            }
            if let probe = getenv("TRAIL_PROBE").flatMap({ UInt64(String(cString: $0)) }) {
                return probeTrail(seed: probe, chests: chests, spacing: spacing ?? 4, harshness: harshness, anyOrder: anyOrder)
            }
            runTrails(heldOut: heldOut, count: seedCount, firstSeed: firstSeed, chests: chests, spacing: spacing ?? 4, writeCaptures: writeCaptures,
                      replays: replays, harshness: harshness, anyOrder: anyOrder)
            return
        }
        if let heldOut = walking {
            if calibrationSpot > 0, !calibrated { fail("--calibration-spot goes with --calibrated", code: 64) }
            runWalking(heldOut: heldOut, count: seedCount, firstSeed: firstSeed, writeCaptures: writeCaptures, replays: replays, harshness: harshness,
                       calibrated: calibrated ? calibrationSpot : nil)
            return
        }
        // Standing still at another advertising rate: every condition's beacons at it.
        let rateOnly = harshness.rate != nil && harshness == WalkingWorld.Harshness(rate: harshness.rate)
        if harshened, !(rateOnly && heard && familyPart != nil) {
            fail("\(Self.radioFlags.joined(separator: ", ")) go with --walking (--rate also with --family ... --heard)", code: 64)
        }
        if writeCaptures != nil || replays != nil { fail("--write-captures and --replays go with --walking", code: 64) }
        if heard, !stress, familyPart == nil { fail("--heard needs --family held-out|tuning or --stress", code: 64) }
        if calibrationSpot > 0 { fail("--calibration-spot goes with --walking ... --calibrated", code: 64) }
        if calibrated, familyPart == nil || stress || sharedLoss {
            fail("--calibrated goes with --walking, or with --family held-out|tuning [--heard] (not --stress or --shared-loss)", code: 64)
        }
        if heard {
            let seeds = (1...UInt64(seedCount)).map { $0 }
            let conditions = (stress ? stressFamily() : family().filter { $0.heldOut == familyPart })
                .map { c in
                    var c = c
                    if let rate = harshness.rate { c.interval = 1 / rate }
                    c.calibrated = calibrated
                    return c
                }
                .filter { c in only.map { c.rowName.contains($0) } ?? true }
            let title = (stress ? "stress sweep" : familyPart == true ? "held-out part" : "tuning part")
                + (calibrated ? ", each beacon's measured power calibrated at 1 m as the set-up says" : "")
            runHeard(conditions, title: title, seeds: seeds, stillMinutes: stillMinutes)
            return
        }
        if stress {
            runStress(seeds: (1...UInt64(seedCount)).map { $0 }, stillMinutes: stillMinutes, only: only)
            return
        }
        if let heldOut = familyPart {
            if sharedLoss {
                runSharedLoss(part: heldOut, seeds: (1...UInt64(seedCount)).map { $0 }, stillMinutes: stillMinutes, only: only)
            } else {
                runFamily(part: heldOut, seeds: (1...UInt64(seedCount)).map { $0 }, stillMinutes: stillMinutes, only: only,
                          calibrated: calibrated)
            }
            return
        }
        let captures: [RealCapture]
        do {
            captures = try loadLcav(directory: dataDirectory)
        } catch {
            fail("\(error)", code: 66)
        }

        if realOnly {
            crossValidateDistance(captures: captures)
            do { try iTagPresence(path: iTagPath) } catch { fail("\(error)", code: 66) }
            return
        }
        if fitOnly {
            fitExponent(captures: captures)
            return
        }
        // Cost first, so peak memory is the engine's and not the scenarios'.
        let cost = costPerSighting(runs: 5)

        let seeds = (1...UInt64(seedCount)).map { $0 }
        var rows: [[String]] = []
        func row(_ label: String, _ target: String, _ values: [Which: String], met: String) {
            rows.append([label, target, values[.ours] ?? "", values[.altBeacon] ?? "", values[.iOS] ?? "", met])
        }

        var s1: [Which: (Double, Double)] = [:]
        for w in Which.allCases { s1[w] = standingAtEdge(w, seeds: seeds) }
        row("1 at 3 m 10 min: proximity changes/min", "<= 0.5",
            s1.mapValues { format($0.0) }, met: (s1[.ours]?.0 ?? 99) <= 0.5 ? "yes" : "NO")
        row("1 ... 'unknown' while heard (per run)", "0",
            s1.mapValues { format($0.1) }, met: (s1[.ours]?.1 ?? 99) == 0 ? "yes" : "NO")

        var s2: [Which: [Double]] = [:]
        for w in Which.allCases { s2[w] = stepToFar(w, seeds: seeds) }
        row("2 step 1.5->6 m: s to far for good, median", "<= 5",
            s2.mapValues { format(median($0), 1) }, met: median(s2[.ours] ?? []) <= 5 ? "yes" : "NO")
        row("2 ... 90th percentile", "<= 8",
            s2.mapValues { format(percentile($0, 0.9), 1) }, met: percentile(s2[.ours] ?? [], 0.9) <= 8 ? "yes" : "NO")
        // Runs "far" before the step and after it have no change to follow (secondsToFarForGood).
        row("2 ... runs left out (far before the step)", "(info)",
            s2.mapValues { "\(seeds.count - $0.count) of \(seeds.count)" }, met: "")

        var s3a: [Which: [Double]] = [:]
        var s3b: [Which: [Double]] = [:]
        for w in Which.allCases {
            s3a[w] = exitLag(w, interval: 0.1, seeds: seeds)
            s3b[w] = exitLag(w, interval: 1.0, seeds: seeds)
        }
        row("3 switch-off 10 Hz: exit lag s, median/p90/max", "<= 6 (p90)", s3a.mapValues(spread),
            met: percentile(s3a[.ours] ?? [], 0.9) <= 6 ? "yes" : "NO")
        row("3 switch-off 1 Hz: exit lag s, median/p90/max", "<= 15 (p90)", s3b.mapValues(spread),
            met: percentile(s3b[.ours] ?? [], 0.9) <= 15 ? "yes" : "NO")

        var s4: [Which: Double] = [:]
        for w in Which.allCases { s4[w] = falseExits(w, seeds: seeds) }
        row("4 at 2 m, 30 % delivery: false exits/hour", "<= 1",
            s4.mapValues { format($0) }, met: (s4[.ours] ?? 99) <= 1 ? "yes" : "NO")

        var s5a: [Which: Double] = [:]
        var s5b: [Which: [Double]] = [:]
        for w in Which.allCases {
            s5a[w] = falseEnters(w, seeds: seeds)
            s5b[w] = approachEnterLag(w, seeds: seeds)
        }
        row("5 stray packet /30 s: false enters/hour", "<= 1",
            s5a.mapValues { format($0) }, met: (s5a[.ours] ?? 99) <= 1 ? "yes" : "NO")
        row("5 real approach: enter lag s, median/p90/max", "<= 1.5 (max)", s5b.mapValues(spread),
            met: (s5b[.ours]?.max() ?? 99) <= 1.5 ? "yes" : "NO")

        var s6a: [Which: Double] = [:]
        var s6b: [Which: Double] = [:]
        for w in Which.allCases {
            s6a[w] = nearestSwitchesTied(w, seeds: seeds)
            s6b[w] = nearestRightShare(w, seeds: seeds)
        }
        row("6 two at 2 m: nearest switches/min", "<= 1",
            s6a.mapValues { format($0) }, met: (s6a[.ours] ?? 99) <= 1 ? "yes" : "NO")
        row("6 2 m vs 3 m: right nearest, % of time", ">= 90",
            s6b.mapValues { format($0 * 100, 1) }, met: (s6b[.ours] ?? 0) >= 0.9 ? "yes" : "NO")

        var s7: [Which: RealScore] = [:]
        for w in Which.allCases { s7[w] = realDataScore(w, captures: captures) }
        let bestBaseline = min(s7[.altBeacon]?.medianLogError ?? .infinity, s7[.iOS]?.medianLogError ?? .infinity)
        row("7 lcav real data: median |ln(est/true)|", "<= best baseline",
            s7.mapValues { format($0.medianLogError, 3) },
            met: (s7[.ours]?.medianLogError ?? 99) <= bestBaseline ? "yes" : "NO")
        let coverage = s7[.ours]?.intervalCoverage ?? 0
        row("7 ... truth inside our 68 % interval, %", ">= 50",
            [.ours: format(coverage * 100, 1)], met: coverage >= 0.5 ? "yes" : "NO")
        let textbook = realDataScore(.ours, captures: captures, configuration: textbookConfiguration)
        row("7 ... ours with exponent 2.0 (not fitted)", "(info)",
            [.ours: format(textbook.medianLogError, 3)], met: "")
        let sigmaCoverage = s7[.ours]?.sigmaCoverage ?? 0
        row("7 ... |est - true| <= sigma, %", "(info)", [.ours: format(sigmaCoverage * 100, 1)], met: "")

        print("Ranging benchmark: \(seedCount) seeds per simulated scenario; lcav: \(captures.count) positions, "
              + "\(s7[.ours]?.samples ?? 0) scored (beacon, second) pairs")
        let header = ["scenario / metric", "target", "ours", "AltBeacon", "iOS-like", "met"]
        var widths = header.map(\.count)
        for r in rows { for (i, cell) in r.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { pad($0.element, widths[$0.offset]) }.joined(separator: " | ") + " |"
        }
        print(line(header))
        print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        for r in rows { print(line(r)) }
        print("")
        print("cost per sighting, 500 beacons at 10 Hz in one region (median of 5 runs of 100,000): "
              + "ours \(format(cost.ours, 0)) ns, AltBeacon baseline \(format(cost.altBeacon, 0)) ns "
              + "(ratio \(format(cost.ours / cost.altBeacon, 2))); beacons tracked: \(cost.tracked)")
        print("peak RSS: \(cost.rssBefore) KiB before the engine, \(cost.rssEngine) KiB with 500 beacons in view "
              + "(+\(cost.rssEngine - cost.rssBefore) KiB)")
    }

    /// The walking world's sweeps (`WalkingWorld.Harshness`): only with `--walking` (and
    /// `--rate` with `--family ... --heard`).
    static let radioFlags = ["--spread", "--body", "--power-error", "--field", "--rate", "--loss", "--burst", "--chest-beacons",
                             "--speed", "--outage", "--bystanders", "--chest-spot"]

    static func fail(_ message: String, code: Int32) -> Never {
        var standardError = StandardError()
        print("RangingBenchmark: \(message)", to: &standardError)
        exit(code)
    }
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            _ = Glibc.write(2, buffer.baseAddress, buffer.count)
        }
    }
}

/// An advertising rate as the tables name it: "10 Hz", "0.50 Hz", "2.5 Hz" (to 0.01 Hz).
func rateName(_ hz: Double) -> String {
    let rate = (hz * 100).rounded() / 100
    return (rate == rate.rounded() ? String(Int(rate)) : format(rate, rate < 1 ? 2 : 1)) + " Hz"
}

/// "4-6" (dB, low to high; one number is a range of one value).
func parseRange(_ text: String, upTo limit: Double = 30) -> ClosedRange<Double>? {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Double($0) }
    guard (1...2).contains(parts.count), let low = parts.first ?? nil, let high = parts.last ?? nil,
          low >= 0, high >= low, high <= limit else { return nil }
    return low ... high
}
