#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Ranging
import Simulation

// MARK: The family of conditions

enum LossKind: String, CaseIterable {
    case independent = "independent"
    case shortBursts = "GE 0.5-1.5 s"
    case longBursts = "GE 1.5-5 s"
}

/// One condition of the family: a world the engine was not necessarily tuned on.
struct Condition {
    var index: Int
    var interval: Double        // 0.1 (10 Hz) or 1.0 (1 Hz)
    var lossKind: LossKind
    var delivery: Double        // long-run share of packets delivered
    var meanBad: Double         // seconds of a bad state (GE kinds)
    var beacons: Int            // per region, each with its own loss
    var exponent: Double
    var noise: Double
    var offsets: [Double]
    var shadowing: Bool
    var heldOut: Bool
    /// Loss shared by every beacon (the receiver deaf for a while: Wi-Fi coexistence, a busy
    /// controller, the hunter's own body): mean deaf and heard spells, seconds. Off in the
    /// family itself; `--shared-loss` turns it on to test the region's budget sharing, which
    /// assumes independent beacons.
    var sharedOutage: (meanDeaf: Double, meanHeard: Double)?
    /// Stress knobs (`--stress`, Stress.swift), never set in the family: a beacon that changes
    /// its advertising interval halfway through a run, deep single-packet fades, a host that
    /// delivers reports in batches, and a row label of its own.
    var stress = StressKnobs()
    /// `--calibrated`: each beacon advertises the measured power a parent reads at set-up
    /// (docs/raspberry-pi.md, "Calibrate": `calibratedPower`), instead of the nominal -59 dBm
    /// that the world's offsets and exponent miss.
    var calibrated = false

    /// Mean of the channels' offsets (dB): what a calibration at 1 m takes out.
    var meanOffset: Double { offsets.isEmpty ? 0 : offsets.reduce(0, +) / Double(offsets.count) }

    /// The path loss the engine sees from a beacon at `distance` advertising `advertised` dBm,
    /// on the mean level (over channels, no noise).
    func meanPathLoss(atDistance distance: Double, advertised: Int) -> Double {
        Double(advertised) - (model.meanRSSI(atDistance: distance) + meanOffset)
    }

    /// The spread of the channels' offsets around their mean (dB²): noise to a receiver,
    /// since no report says its channel.
    var offsetVariance: Double {
        offsets.isEmpty ? 0 : offsets.reduce(0) { $0 + ($1 - meanOffset) * ($1 - meanOffset) } / Double(offsets.count)
    }

    /// Each beacon's loss (the same law, its own draws).
    var loss: GilbertElliottLoss { loss(interval: interval) }

    var model: PathLossModel {
        PathLossModel(measuredPower: -59, exponent: exponent, noiseSigma: noise, channelOffsets: offsets, sensitivity: -100)
    }

    /// The loss law at an advertising interval: a continuous-time channel sampled at each packet.
    func loss(interval: Double) -> GilbertElliottLoss {
        switch lossKind {
        case .independent: return .independent(lossFraction: 1 - delivery)
        case .shortBursts, .longBursts:
            // A continuous-time two-state channel sampled at each packet: the bad state lasts
            // `meanBad` s on average, the good one long enough for the asked delivery.
            let meanGood = meanBad * delivery / (1 - delivery)
            return GilbertElliottLoss(goodToBad: 1 - exp(-interval / meanGood), badToGood: 1 - exp(-interval / meanBad))
        }
    }

    var shadow: BodyShadowing? { shadowing ? BodyShadowing(meanInterval: 90) : nil }

    var rowName: String {
        stress.label ?? "\(rateName(1 / interval)) \(lossKind.rawValue)\(shadowing ? " + bodies" : "")"
    }

    var summary: String {
        "#\(index) \(rowName)" + (stress.label == nil ? "" : ": \(format(1 / interval, 1)) Hz \(lossKind.rawValue)")
            + ", \(beacons) beacon(s), delivery \(format(delivery * 100, 0)) %"
            + (lossKind == .independent ? "" : ", bad \(format(meanBad, 1)) s")
            + ", n \(format(exponent, 2)), noise \(format(noise, 1)) dB, offsets "
            + offsets.map { format($0, 1) }.joined(separator: "/")
    }
}

/// The family: every cell of rate x loss kind x beacons per region x shadowing, drawn twice
/// with its continuous parameters at random (delivery 30-95 %, bad state 0.5-5 s, exponent
/// 1.6-3.0, noise 4-8 dB, channel offsets within ±6 dB); the first draw of each cell is the
/// tuning part, the second the held-out part. Deterministic.
func family() -> [Condition] {
    var random = SplitMix64(seed: 2026_12_01)
    func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }
    var out: [Condition] = []
    for draw in 0..<2 {
        for interval in [0.1, 1.0] {
            for kind in LossKind.allCases {
                for beacons in 1...3 {
                    for shadowing in [false, true] {
                        let delivery = kind == .independent ? uniform(0.6 ... 0.95) : uniform(0.3 ... 0.95)
                        let bad = kind == .shortBursts ? uniform(0.5 ... 1.5) : uniform(1.5 ... 5)
                        out.append(Condition(index: out.count, interval: interval, lossKind: kind, delivery: delivery,
                                             meanBad: bad, beacons: beacons, exponent: uniform(1.6 ... 3.0),
                                             noise: uniform(4 ... 8),
                                             offsets: [uniform(-6 ... 6), uniform(-6 ... 6), uniform(-6 ... 6)],
                                             shadowing: shadowing, heldOut: draw == 1))
                    }
                }
            }
        }
    }
    return out
}

// MARK: Measures of one condition

struct StillCounts {
    var hours = 0.0
    var exits = 0
    var unknowns = 0
    var wrongClass = 0
    var trends = 0
    /// Timer ticks after the first minute × beacons at <= 2 m, and those of them said "far":
    /// the share of time the child is told a false "far" (a claim that lasts, where the
    /// counts above are the moments a claim is made).
    var closeTicks = 0
    var farWhenClose = 0
    /// The class changes bodies force on a ranger with the engine's class edges that follows
    /// a step within each of `bodyFollowTimes` (`countBodyClaims`). Not ranger-dependent.
    var bodyClaims = [Int](repeating: 0, count: bodyFollowTimes.count)
    var total: Int { exits + unknowns + wrongClass + trends }

    mutating func add(_ other: StillCounts) {
        hours += other.hours
        exits += other.exits
        unknowns += other.unknowns
        wrongClass += other.wrongClass
        trends += other.trends
        closeTicks += other.closeTicks
        farWhenClose += other.farWhenClose
        for i in bodyClaims.indices where i < other.bodyClaims.count { bodyClaims[i] += other.bodyClaims[i] }
    }

    /// "far" at <= 2 m, percent of that time.
    var farWhenCloseShare: String {
        closeTicks == 0 ? "-" : format(100 * Double(farWhenClose) / Double(closeTicks), 1)
    }
}

/// The reports of a condition's beacons: the simulator, then the condition's shared outage
/// and stress knobs. With a change of advertising interval, the beacons advertise at their own
/// interval until `changeAt` and at the later one after it (two simulations, the loss law
/// sampled at each interval).
func conditionReports(_ c: Condition, _ beacons: [SimulatedBeacon], seed: UInt64, until end: Double,
                      changeAt: Double) -> [SimulatedReading] {
    var reports: [SimulatedReading]
    if let later = c.stress.laterInterval, changeAt < end {
        let before = beacons.map { beacon in
            var b = beacon
            b.switchOffTime = min(beacon.switchOffTime ?? changeAt, changeAt)
            return b
        }
        let after = beacons.map { beacon in
            var b = beacon
            b.advertisingInterval = later
            b.loss = c.loss(interval: later)
            b.switchOnTime = max(beacon.switchOnTime, changeAt)
            return b
        }
        var first = RadioSimulator(beacons: before, model: c.model, seed: seed)
        var second = RadioSimulator(beacons: after, model: c.model, seed: seed &+ 0x5EED)
        reports = (first.run(until: end) + second.run(until: end)).sorted { ($0.time, $0.beacon) < ($1.time, $1.beacon) }
    } else {
        var simulator = RadioSimulator(beacons: beacons, model: c.model, seed: seed)
        reports = simulator.run(until: end)
    }
    return applyStress(applySharedOutage(applyCalibration(reports, c, beacons, seed: seed), c, seed: seed), c, seed: seed)
}

/// With `--calibrated`, every report carries its beacon's calibrated power.
func applyCalibration(_ reports: [SimulatedReading], _ c: Condition, _ beacons: [SimulatedBeacon], seed: UInt64) -> [SimulatedReading] {
    guard c.calibrated else { return reports }
    let powers = Dictionary(beacons.map { ($0.id, calibratedPower(c, beacon: $0.id, seed: seed)) }, uniquingKeysWith: { a, _ in a })
    return reports.map { report in
        var r = report
        if let power = powers[r.beacon] { r.measuredPower = power }
        return r
    }
}

/// The set-up's calibration of one beacon (docs/raspberry-pi.md): the hunter held 1 m from
/// it, no body between, for half a minute and at least 30 readings (at most two minutes),
/// then the filtered level `scan` shows, in whole dBm (the box's `power` is an integer).
/// Its own draws of noise and loss, deterministic per condition, seed and beacon.
func calibratedPower(_ c: Condition, beacon: Int, seed: UInt64) -> Int {
    let hold = SimulatedBeacon(id: beacon, advertisingInterval: c.interval, path: .standing(at: 1), loss: c.loss)
    var simulator = RadioSimulator(beacons: [hold], model: c.model,
                                   seed: seed &* 7_919 &+ UInt64(c.index) &* 131 &+ UInt64(beacon) &+ 0xCA1)
    var held: [SimulatedReading] = []
    var end = 0.0
    while end < 120, end < 30 || held.count < 30 {
        end += 1
        held += simulator.run(until: end)
    }
    guard let level = filteredLevel(held, configuration: simulatedConfiguration), level.isFinite else { return c.model.measuredPower }
    return Int(level.rounded())
}

/// The reports a receiver deaf in shared spells still hears (continuous-time two-state
/// channel, the same spells for every beacon; deterministic per seed and condition).
func applySharedOutage(_ reports: [SimulatedReading], _ c: Condition, seed: UInt64) -> [SimulatedReading] {
    guard let outage = c.sharedOutage, let end = reports.last?.time else { return reports }
    var random = SplitMix64(seed: seed &* 977 &+ UInt64(c.index) &+ 5)
    func exponential(_ mean: Double) -> Double { -mean * log(max(1 - random.nextUniform(), 1e-12)) }
    var spells: [(Double, Double)] = []
    var t = exponential(outage.meanHeard)
    while t < end {
        let deaf = exponential(outage.meanDeaf)
        spells.append((t, t + deaf))
        t += deaf + exponential(outage.meanHeard)
    }
    var index = 0
    return reports.filter { r in
        while index < spells.count && spells[index].1 <= r.time { index += 1 }
        return !(index < spells.count && spells[index].0 <= r.time)
    }
}

/// The beacons of a standing-still run (each at its own 1.5-3 m) and their reports.
func standingStill(_ c: Condition, seed: UInt64, until end: Double) -> ([SimulatedBeacon], [SimulatedReading]) {
    var distances = SplitMix64(seed: seed &* 31 &+ UInt64(c.index))
    let beacons = (0..<c.beacons).map { id in
        SimulatedBeacon(id: id, advertisingInterval: c.interval, path: .standing(at: 1.5 + 1.5 * distances.nextUniform()),
                        loss: c.loss, shadowing: c.shadow)
    }
    return (beacons, conditionReports(c, beacons, seed: seed, until: end, changeAt: end / 2))
}

/// Standing still at 1.5-3 m (each beacon its own distance) for `minutes`: every claim that
/// something changed is false. Wrong class: a committed proximity change other than to
/// unknown after the first class (nothing moved), or "far" while the beacon is <= 2 m.
func standStill(_ which: Which, _ c: Condition, seed: UInt64, minutes: Double) -> StillCounts {
    let end = minutes * 60
    let (beacons, reports) = standingStill(c, seed: seed, until: end)
    var ranger = makeRanger(which)
    var counts = StillCounts(hours: end / 3600)
    var wasInside = false
    var enteredOnce = false
    var last = [Proximity](repeating: .unknown, count: c.beacons)
    var committedOnce = [Bool](repeating: false, count: c.beacons)
    var trends = 0
    let close = beacons.filter { $0.path.distance(at: 0) <= 2 }.map(\.id)
    drive(&ranger, reports: reports, until: end) { r, step in
        if step.isTick, step.time >= 60 {
            for b in close {
                counts.closeTicks += 1
                if r.proximity(b) == .far { counts.farWhenClose += 1 }
            }
        }
        if r.inside { enteredOnce = true }
        if wasInside && !r.inside { counts.exits += 1 }
        wasInside = r.inside
        for b in 0..<c.beacons {
            let now = r.proximity(b)
            guard now != last[b] else { continue }
            if now == .unknown {
                if enteredOnce { counts.unknowns += 1 }
            } else {
                if committedOnce[b] || (now == .far && beacons[b].path.distance(at: 0) <= 2) { counts.wrongClass += 1 }
                committedOnce[b] = true
            }
            last[b] = now
        }
        trends = r.trendCount
    }
    counts.trends = trends
    if c.shadowing { countBodyClaims(&counts, c, beacons, reports, seed: seed, until: end) }
    return counts
}

/// How soon after a level change a ranger says so, for `countBodyClaims`: at once, as fast
/// as ours at 10 Hz, the step target's median and its p90.
let bodyFollowTimes: [Double] = [0, 2.5, 5, 8]

/// The engine's class edges in path loss (dB re 1 m): a level past `farAt` is "far" (the edge
/// plus the hysteresis), and "far" is left under `nearAt` (the edge less the hysteresis).
func farEdges() -> (edge: Double, farAt: Double, nearAt: Double) {
    let configuration = simulatedConfiguration
    let edge = 10 * configuration.pathLossExponent * log10(configuration.nearEdge)
    return (edge, edge + configuration.proximityHysteresis, edge - configuration.proximityHysteresis)
}

/// What bodies alone make a ranger with the engine's class edges say if it follows a level
/// change within T s (each of `bodyFollowTimes`), on the beacons' mean levels (over channels,
/// at the advertised power): a beacon whose level is under the edge starts "near"; a body
/// whose drop takes it past the far edge for longer than T makes it "far", and the level
/// after the body makes it "near" again only when it is under the return (the edge less the
/// hysteresis; in the band between, "far" is held). The simulator's body is a pure level
/// offset: while it lasts nothing in the readings tells it from a step of that depth. A
/// model on mean levels, not a strict bound: the noise of a filtered level adds crossings.
func countBodyClaims(_ counts: inout StillCounts, _ c: Condition, _ beacons: [SimulatedBeacon],
                     _ reports: [SimulatedReading], seed: UInt64, until end: Double) {
    // One simulator made the reports (no change of interval in a run with bodies).
    guard c.stress.laterInterval == nil else { return }
    let edges = farEdges()
    let episodes = RadioSimulator(beacons: beacons, model: c.model, seed: seed).shadowEpisodes(until: end)
    for (beacon, bodies) in zip(beacons, episodes) {
        guard let advertised = reports.first(where: { $0.beacon == beacon.id })?.measuredPower else { continue }
        let still = c.meanPathLoss(atDistance: beacon.path.distance(at: 0), advertised: advertised)
        guard still < edges.edge else { continue }
        for (index, follow) in bodyFollowTimes.enumerated() {
            var far = false
            for body in bodies where still + body.depth >= edges.farAt && min(body.end, end) - body.start > follow {
                if !far {
                    counts.bodyClaims[index] += 1
                    far = true
                }
                if still < edges.nearAt {
                    counts.bodyClaims[index] += 1
                    far = false
                }
            }
        }
    }
}

/// Step from 1.5 m to 6-8 m at 180 s: seconds until beacon 0 is "far" for good (60 if never).
func stepFar(_ which: Which, _ c: Condition, seed: UInt64) -> Double {
    let step = stepRun(c, seed: seed)
    return secondsToFarForGood(which, reports: step.reports, stepTime: step.time, end: step.end)
}

/// The distance beacon 0 steps to in a step run (6-8 m), drawn from the seed.
func stepTarget(seed: UInt64) -> Double {
    var draw = SplitMix64(seed: seed &+ 7)
    return 6 + 2 * draw.nextUniform()
}

/// An oracle's lag on a step run's beacon 0 at <= 1 false alarm an hour of standing still:
/// it knows the level before and after and the spread of a reading, and runs the optimal
/// change test (Page's CUSUM on the likelihood ratio), which needs ln(ARL) / KL readings
/// (Lorden), ARL = the readings of an hour, KL = delta² / (2 sigma²) per reading; in seconds
/// at the delivered rate. Approximate: the channels' offsets are taken as Gaussian noise
/// (their true three-valued law, or a ranger that tracked the channel cycle from the
/// timestamps, could do better), and asymptotic (large ARL). Infinity when the level after
/// the step is not past the far edge at the beacon's advertised power: no ranger with these
/// class edges says "far" there.
func stepOracleLag(_ c: Condition, seed: UInt64) -> Double {
    let advertised = c.calibrated ? calibratedPower(c, beacon: 0, seed: seed) : c.model.measuredPower
    let target = stepTarget(seed: seed)
    guard c.meanPathLoss(atDistance: target, advertised: advertised) >= farEdges().farAt else { return .infinity }
    let delta = c.model.meanRSSI(atDistance: 1.5) - c.model.meanRSSI(atDistance: target)
    let variance = c.noise * c.noise + c.offsetVariance
    let rate = c.delivery / c.interval
    let readings = log(3600 * rate) / (delta * delta / (2 * variance))
    return readings / rate
}

/// The reports of the step run: every beacon from 1.5 m to one 6-8 m at 180 s, 60 s more.
func stepRun(_ c: Condition, seed: UInt64) -> (reports: [SimulatedReading], time: Double, end: Double) {
    let stepTime = 180.0
    let end = stepTime + 60
    let target = stepTarget(seed: seed)
    let beacons = (0..<c.beacons).map { id in
        SimulatedBeacon(id: id, advertisingInterval: c.interval, path: .step(from: 1.5, to: target, at: stepTime),
                        loss: c.loss, shadowing: c.shadow)
    }
    return (conditionReports(c, beacons, seed: seed, until: end, changeAt: stepTime / 2), stepTime, end)
}

/// Every beacon of the region switched off at 300 s: seconds until exit (120 if never).
func switchOff(_ which: Which, _ c: Condition, seed: UInt64) -> Double {
    let off = 300.0
    let end = off + 120
    let beacons = (0..<c.beacons).map { id in
        SimulatedBeacon(id: id, advertisingInterval: c.interval, path: .standing(at: 2), switchOffTime: off,
                        loss: c.loss, shadowing: c.shadow)
    }
    let reports = conditionReports(c, beacons, seed: seed, until: end, changeAt: off / 2)
    var ranger = makeRanger(which)
    var exitTime: Double?
    var insideBefore = false
    drive(&ranger, reports: reports, until: end) { r, step in
        if step.time < off { insideBefore = r.inside }
        if step.time >= off, exitTime == nil, !r.inside { exitTime = step.time }
    }
    guard insideBefore else { return .nan }
    return (exitTime ?? end) - off
}

/// The region's beacons come into range at 10 s while the hunter walks 12 -> 2 m: enter lag.
func approach(_ which: Which, _ c: Condition, seed: UInt64) -> Double {
    let on = 10.0
    let end = 60.0
    let path = ScriptedPath([.init(time: on, distance: 12), .init(time: on + 10, distance: 2)])
    let beacons = (0..<c.beacons).map { id in
        SimulatedBeacon(id: id, advertisingInterval: c.interval, path: path, switchOnTime: on, loss: c.loss, shadowing: c.shadow)
    }
    let reports = conditionReports(c, beacons, seed: seed, until: end, changeAt: end)
    var ranger = makeRanger(which)
    var enterTime: Double?
    drive(&ranger, reports: reports, until: end) { r, step in
        if step.time >= on, enterTime == nil, r.inside { enterTime = step.time }
    }
    return (enterTime ?? end) - on
}

/// Strays: the region's beacons far away, each packet delivered with probability 1/300 at
/// 10 Hz (1/30 at 1 Hz): about one stray per beacon per 30 s, 30 min: false enters.
func strays(_ which: Which, _ c: Condition, seed: UInt64) -> Int {
    let end = 1800.0
    let share = c.interval < 0.5 ? 1.0 / 300 : 1.0 / 30
    let beacons = (0..<c.beacons).map { id in
        SimulatedBeacon(id: id, advertisingInterval: c.interval, path: .standing(at: 30),
                        loss: .independent(lossFraction: 1 - share))
    }
    var model = c.model
    model.sensitivity = nil
    var simulator = RadioSimulator(beacons: beacons, model: model, seed: seed)
    let reports = applyCalibration(simulator.run(until: end), c, beacons, seed: seed)
    var ranger = makeRanger(which)
    var wasInside = false
    var enters = 0
    drive(&ranger, reports: reports, until: end) { r, _ in
        if !wasInside && r.inside { enters += 1 }
        wasInside = r.inside
    }
    return enters
}

/// Two beacons of the region, 10 min: nearest switches a minute when both are at 2 m, and
/// the share of ticks the 1.5x closer one (2 m vs 3 m) is reported.
func nearestPair(_ which: Which, _ c: Condition, seed: UInt64) -> (switches: Double, right: Double) {
    let end = 600.0
    func run(_ d0: Double, _ d1: Double) -> (Int, Int, Int) {
        let beacons = [SimulatedBeacon(id: 0, advertisingInterval: c.interval, path: .standing(at: d0), loss: c.loss, shadowing: c.shadow),
                       SimulatedBeacon(id: 1, advertisingInterval: c.interval, path: .standing(at: d1), loss: c.loss, shadowing: c.shadow)]
        var simulator = RadioSimulator(beacons: beacons, model: c.model, seed: seed)
        let reports = applyCalibration(simulator.run(until: end), c, beacons, seed: seed)
        var ranger = makeRanger(which)
        var last: Int?
        var switches = 0, right = 0, total = 0
        drive(&ranger, reports: reports, until: end) { r, step in
            guard let now = r.nearest else { return }
            if now != last {
                if last != nil { switches += 1 }
                last = now
            }
            if step.isTick {
                total += 1
                if now == 0 { right += 1 }
            }
        }
        return (switches, right, total)
    }
    let tied = run(2, 2)
    let apart = run(2, 3)
    return (Double(tied.0) / (end / 60), apart.2 > 0 ? Double(apart.1) / Double(apart.2) : 0)
}

// MARK: The table

struct RowResult {
    var still = StillCounts()
    var steps: [Double] = []
    /// Step runs left out: "far" before the step and after it, no change to follow.
    var farBeforeStep = 0
    /// Ours: (oracle lag, our lag) of the step runs where both are finite, and the runs where
    /// no ranger with these class edges says "far" (`stepOracleLag`).
    var oraclePairs: [(oracle: Double, ours: Double)] = []
    var neverFar = 0
    var offs: [Double] = []
    var enters: [Double] = []
    var strayEnters = 0
    var strayHalfHours = 0.0
    var switches: [Double] = []
    var right: [Double] = []
}

extension RowResult {
    /// The measures every table has, for one run of a condition: standing still, the step,
    /// the switch-off and the approach.
    mutating func measure(_ which: Which, _ c: Condition, seed: UInt64, minutes: Double) {
        still.add(standStill(which, c, seed: seed, minutes: minutes))
        let step = stepFar(which, c, seed: seed)
        if step.isFinite { steps.append(step) } else { farBeforeStep += 1 }
        if which == .ours {
            let oracle = stepOracleLag(c, seed: seed)
            if !oracle.isFinite { neverFar += 1 } else if step.isFinite { oraclePairs.append((oracle, step)) }
        }
        let lag = switchOff(which, c, seed: seed)
        if lag.isFinite { offs.append(lag) }
        enters.append(approach(which, c, seed: seed))
    }
}

/// Runs `measure` for every condition, ranger and seed; rows pool the conditions of a row
/// name, in the order the names first appear.
func collectRows(_ conditions: [Condition], rangers: [Which], seeds: [UInt64],
                 measure: (inout RowResult, Which, Condition, UInt64) -> Void) -> (names: [String], rows: [String: [Which: RowResult]]) {
    var names: [String] = []
    var rows: [String: [Which: RowResult]] = [:]
    for c in conditions {
        if !names.contains(c.rowName) { names.append(c.rowName) }
        for which in rangers {
            var r = rows[c.rowName]?[which] ?? RowResult()
            for seed in seeds { measure(&r, which, c, seed) }
            rows[c.rowName, default: [:]][which] = r
        }
    }
    return (names, rows)
}

func runFamily(part heldOut: Bool, seeds: [UInt64], stillMinutes: Double, only: String?, calibrated: Bool) {
    let conditions = family().filter { c in c.heldOut == heldOut && (only.map { c.rowName.contains($0) } ?? true) }
        .map { c in
            var d = c
            d.calibrated = calibrated
            return d
        }
    print("Family benchmark, \(heldOut ? "held-out" : "tuning") part: \(conditions.count) conditions x \(seeds.count) seeds; "
          + "standing still \(format(stillMinutes, 0)) min per run"
          + (calibrated ? "; each beacon's measured power calibrated at 1 m as the set-up says" : ""))
    for c in conditions { print("  " + c.summary) }
    let (rowNames, results) = collectRows(conditions, rangers: Which.allCases, seeds: seeds) { r, which, c, seed in
        r.measure(which, c, seed: seed, minutes: stillMinutes)
        r.strayEnters += strays(which, c, seed: seed)
        r.strayHalfHours += 1
        if c.beacons >= 2 {
            let n = nearestPair(which, c, seed: seed)
            r.switches.append(n.switches)
            r.right.append(n.right)
        }
    }
    func perHour(_ n: Int, _ h: Double) -> String { format(Double(n) / max(h, 1e-9), 2) }
    print("")
    print("Standing still at 1.5-3 m: false claims per hour (exit / unknown / wrong class / trend = total); "
          + "\"far\" said of a beacon at <= 2 m, % of that time (ours / AltBeacon / iOS-like)")
    print("| condition | ours | AltBeacon | iOS-like | ours <= 1/h | far at <= 2 m, % of time |")
    print("|---|---|---|---|---|---|")
    for name in rowNames {
        guard let row = results[name] else { continue }
        func cell(_ w: Which) -> String {
            guard let s = row[w]?.still else { return "" }
            return "\(perHour(s.exits, s.hours)) / \(perHour(s.unknowns, s.hours)) / \(perHour(s.wrongClass, s.hours)) / "
                + "\(perHour(s.trends, s.hours)) = **\(perHour(s.total, s.hours))**"
        }
        let ours = row[.ours]?.still ?? StillCounts()
        let met = Double(ours.total) / max(ours.hours, 1e-9) <= 1
        let far = Which.allCases.map { row[$0]?.still.farWhenCloseShare ?? "-" }.joined(separator: " / ")
        print("| \(name) | \(cell(.ours)) | \(cell(.altBeacon)) | \(cell(.iOS)) | \(met ? "yes" : "NO") | \(far) |")
    }
    if conditions.contains(where: \.shadowing) {
        print("")
        print("Bodies standing still: class changes per hour that bodies force on a ranger with these class edges that "
              + "follows a level change within T s (on mean levels: a body past the far edge for longer than T is \"far\", "
              + "then \"near\" again if the level is under the return), against wrong class per hour as measured")
        print("| condition | " + bodyFollowTimes.map { $0 == 0 ? "forced, T = 0 (at once)" : "T = \(format($0, 1)) s" }.joined(separator: " | ")
              + " | ours | AltBeacon | iOS-like |")
        print("|---|" + String(repeating: "---|", count: bodyFollowTimes.count + 3))
        for name in rowNames {
            guard let row = results[name], let s = row[.ours]?.still, name.hasSuffix("bodies") else { continue }
            func wrong(_ w: Which) -> String { row[w].map { perHour($0.still.wrongClass, $0.still.hours) } ?? "-" }
            print("| \(name) | " + s.bodyClaims.map { perHour($0, s.hours) }.joined(separator: " | ")
                  + " | \(wrong(.ours)) | \(wrong(.altBeacon)) | \(wrong(.iOS)) |")
        }
    }
    print("")
    print("Moves: step 1.5 -> 6-8 m, s to far for good (median/p90); switch-off, s to exit (median/p90); "
          + "approach, s to enter (median/max); strays, false enters per 30 min")
    print("| condition | step ours | step AltB | step iOS | off ours | off AltB | off iOS | enter ours | enter AltB | strays ours | strays AltB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in rowNames {
        guard let row = results[name] else { continue }
        func mp(_ v: [Double]) -> String { "\(format(median(v), 1))/\(format(percentile(v, 0.9), 1))" }
        func mm(_ v: [Double]) -> String { "\(format(median(v), 1))/\(format(v.max() ?? .nan, 1))" }
        func st(_ w: Which) -> String {
            guard let r = row[w] else { return "" }
            return format(Double(r.strayEnters) / max(r.strayHalfHours, 1), 2)
        }
        print("| \(name) | \(mp(row[.ours]?.steps ?? [])) | \(mp(row[.altBeacon]?.steps ?? [])) | \(mp(row[.iOS]?.steps ?? [])) "
              + "| \(mp(row[.ours]?.offs ?? [])) | \(mp(row[.altBeacon]?.offs ?? [])) | \(mp(row[.iOS]?.offs ?? [])) "
              + "| \(mm(row[.ours]?.enters ?? [])) | \(mm(row[.altBeacon]?.enters ?? [])) | \(st(.ours)) | \(st(.altBeacon)) |")
    }
    printFarBeforeStep(rowNames.compactMap { results[$0] }, runs: conditions.count * seeds.count)
    print("")
    print("Step: an oracle's lag at <= 1 false alarm an hour (it knows both levels and the spread; Lorden's ln(ARL)/KL, "
          + "offsets taken as Gaussian: approximate) against ours, s median/p90 over the same runs (the level after the step "
          + "past the far edge, ours not far before it); runs where the level is not past it (no ranger with these edges says far)")
    print("| condition | oracle | ours | never far with these edges |")
    print("|---|---|---|---|")
    for name in rowNames {
        guard let ours = results[name]?[.ours] else { continue }
        let oracle = ours.oraclePairs.map(\.oracle), mine = ours.oraclePairs.map(\.ours)
        print("| \(name) | \(format(median(oracle), 1))/\(format(percentile(oracle, 0.9), 1)) "
              + "| \(format(median(mine), 1))/\(format(percentile(mine, 0.9), 1)) "
              + "| \(ours.neverFar) of \(ours.steps.count + ours.farBeforeStep) |")
    }
    print("")
    print("Nearest of two (2-3 beacon conditions): switches/min with both at 2 m; % right at 2 m vs 3 m; "
          + "exit operating point against AltBeacon (false exits/h, median exit lag s)")
    print("| condition | switches ours | AltB | iOS | right ours | AltB | iOS | ours (exits/h, lag) | AltB (exits/h, lag) | AltB dominates us | we dominate AltB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in rowNames {
        guard let row = results[name], let ours = row[.ours], let alt = row[.altBeacon], let ios = row[.iOS] else { continue }
        let oursExits = Double(ours.still.exits) / max(ours.still.hours, 1e-9)
        let altExits = Double(alt.still.exits) / max(alt.still.hours, 1e-9)
        let oursLag = median(ours.offs), altLag = median(alt.offs)
        let altDominates = altExits <= oursExits && altLag <= oursLag && (altExits < oursExits || altLag < oursLag)
        let weDominate = oursExits <= altExits && oursLag <= altLag && (oursExits < altExits || oursLag < altLag)
        print("| \(name) | \(format(mean(ours.switches), 2)) | \(format(mean(alt.switches), 2)) | \(format(mean(ios.switches), 2)) "
              + "| \(format(mean(ours.right) * 100, 1)) | \(format(mean(alt.right) * 100, 1)) | \(format(mean(ios.right) * 100, 1)) "
              + "| \(format(oursExits, 2)), \(format(oursLag, 1)) | \(format(altExits, 2)), \(format(altLag, 1)) "
              + "| \(altDominates ? "YES" : "no") | \(weDominate ? "yes" : "no") |")
    }
}

/// Step runs left out of the step column because the ranger said "far" before the step and
/// after it (no change to follow), per ranger over all rows (`runs` step runs per ranger).
func printFarBeforeStep(_ rows: [[Which: RowResult]], runs: Int) {
    let counts = Which.allCases.compactMap { w -> String? in
        let n = rows.reduce(0) { $0 + ($1[w]?.farBeforeStep ?? 0) }
        return rows.contains { $0[w] != nil } ? "\(w.title) \(n)" : nil
    }
    print("step runs left out (far already before the step, \(runs) per ranger): " + counts.joined(separator: ", "))
}

/// Shared loss: the multi-beacon conditions of a part again, with the receiver deaf for
/// spells of the condition's own mean bad state (1 s for independent loss) 10 % of the time,
/// on top of each beacon's own loss. The region's budget sharing assumes independent
/// beacons; this is the world where they are not. False exits standing still and exit lag.
func runSharedLoss(part heldOut: Bool, seeds: [UInt64], stillMinutes: Double, only: String?) {
    let conditions: [Condition] = family().compactMap { c in
        guard c.heldOut == heldOut, c.beacons >= 2, only.map({ c.rowName.contains($0) }) ?? true else { return nil }
        var shared = c
        let deaf = c.lossKind == .independent ? 1.0 : c.meanBad
        shared.sharedOutage = (meanDeaf: deaf, meanHeard: 9 * deaf)
        return shared
    }
    print("Shared loss, \(heldOut ? "held-out" : "tuning") part: \(conditions.count) conditions of 2-3 beacons x \(seeds.count) seeds; "
          + "receiver deaf 10 % of the time in spells of the condition's bad state (1 s for independent loss)")
    print("| condition | ours false exits/h | ours exit lag median/p90 | AltBeacon false exits/h | AltBeacon lag | ours <= 0.5/h |")
    print("|---|---|---|---|---|---|")
    var rows: [String] = []
    var exits: [String: [Which: (Int, Double)]] = [:]
    var lags: [String: [Which: [Double]]] = [:]
    for c in conditions {
        if !rows.contains(c.rowName) { rows.append(c.rowName) }
        for which in [Which.ours, .altBeacon] {
            for seed in seeds {
                let s = standStill(which, c, seed: seed, minutes: stillMinutes)
                let old = exits[c.rowName]?[which] ?? (0, 0)
                exits[c.rowName, default: [:]][which] = (old.0 + s.exits, old.1 + s.hours)
                let lag = switchOff(which, c, seed: seed)
                if lag.isFinite { lags[c.rowName, default: [:]][which, default: []].append(lag) }
            }
        }
    }
    for name in rows {
        func rate(_ w: Which) -> Double { (exits[name]?[w]).map { Double($0.0) / max($0.1, 1e-9) } ?? .nan }
        func lag(_ w: Which) -> String {
            let v = lags[name]?[w] ?? []
            return "\(format(median(v), 1))/\(format(percentile(v, 0.9), 1))"
        }
        print("| \(name) | \(format(rate(.ours), 2)) | \(lag(.ours)) | \(format(rate(.altBeacon), 2)) | \(lag(.altBeacon)) "
              + "| \(rate(.ours) <= 0.5 ? "yes" : "NO") |")
    }
}
