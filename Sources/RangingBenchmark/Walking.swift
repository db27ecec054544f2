#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Bluetooth
import FoundationEssentials
import Hunt
import Ranging
import Simulation

// MARK: A child walking to the chest (WalkingWorld), scored line by line

/// What a ranger told the child on one walk: the lines, and the distance intervals it gave.
struct WalkTold {
    var lines: [(time: Double, line: LineEvent)] = []
    /// Range reports with a distance: median metres and the log-normal sigma.
    var ranges: [(time: Double, meters: Double, logSigma: Double)] = []
    /// The treasure detector's click rate changes (replay only).
    var detector: [(time: Double, rate: Double)] = []
    /// The engine's own "warmer" events (in process only; LEG_DEBUG).
    var engineWarmers: [Double] = []
    /// The words of the found lines, by their index in `lines` (trails: which treasure).
    var texts: [Int: String] = [:]
}

/// The walking rules' definitions (docs/ranging.md, "The walking world"):
/// - a **false line** is: "region-left" or "proximity-unknown" at any time (the beacon never
///   stops); "region-entered" but the first; "warmer" unless the child is now at least
///   `trendMeters` closer than at some moment of the last `trendLookBack` s (and "colder"
///   the other way); "near" farther than 5 m or once the child stands at the chest; "far"
///   closer than 2 m; "immediate" or "treasure-found" at 1.5 m or more;
/// - an **approach** is a leg where the true distance falls without a break by >= 3 m over
///   >= 6 s (`WalkingWorld.approaches`); it is **heard** when a "warmer", "near", "immediate"
///   or "treasure-found" line starts during it or within `approachGrace` s after its end;
/// - the **find lag** is the first "treasure-found" less the time the child stopped at the chest.
enum WalkRules {
    static let trendMeters = 1.0
    static let trendLookBack = 10.0
    static let approachGrace = 3.0
    /// The approaches are also told by kind: the last leg, which ends at the chest (closer
    /// than 1.5 m), and the others by how much the distance alone moves the level along them
    /// (dB, the walk's own exponent): under 6, 6-9, 9 and more.
    static let approachLevelBands: [Range<Double>] = [0 ..< 6, 6 ..< 9, 9 ..< .infinity]
    static let chestLegEnd = 1.5
    /// True distances (m) the interval's coverage is also told by.
    static let coverageBands: [Range<Double>] = [0 ..< 2, 2 ..< 4, 4 ..< 7, 7 ..< .infinity]

    /// The true distances to `chest` over the `trendLookBack` s before `time`, every 0.25 s.
    static func lookBack(_ chest: WalkingWorld, at time: Double) -> [Double] {
        var distances: [Double] = []
        var s = max(0, time - trendLookBack)
        while s <= time {
            distances.append(chest.distance(at: s))
            s += 0.25
        }
        return distances
    }

    /// Whether `line`, said at `time`, is false about `chest` (`standing`: the child stands
    /// over it); nil for a line these rules leave to the caller ("region-entered": the first is
    /// true) or do not judge.
    static func isFalse(_ line: LineEvent, about chest: WalkingWorld, at time: Double, standing: Bool) -> Bool? {
        let d = chest.distance(at: time)
        switch line {
        case .regionLeft, .proximityUnknown: return true
        case .warmer: return (lookBack(chest, at: time).max() ?? d) - d < trendMeters
        case .colder: return d - (lookBack(chest, at: time).min() ?? d) < trendMeters
        case .proximityNear: return d > 5 || standing
        case .proximityFar: return d < 2
        case .proximityImmediate, .treasureFound: return d >= 1.5
        default: return nil
        }
    }
}

/// WALK_DEBUG=1: the walks' finds and false lines, one a line.
let walkDebug = getenv("WALK_DEBUG") != nil
/// FIND_PROBE=1 (with WALK_DEBUG=1): what each false find stood on (tag error, field, walls,
/// body, the level before it).
let findProbe = getenv("FIND_PROBE") != nil
/// LEG_DEBUG=1 (with WALK_DEBUG=1): which line heard each approach leg, or that none did.
let legDebug = getenv("LEG_DEBUG") != nil

struct WalkScore {
    var seconds = 0.0
    var falseLines: [LineEvent: Int] = [:]
    /// The approaches by kind (`approachKind`: `WalkRules.approachLevelBands`, then the leg
    /// to the chest): heard, legs.
    var approachesByKind = [(heard: Int, legs: Int)](repeating: (0, 0), count: WalkRules.approachLevelBands.count + 1)
    var approaches: Int { approachesByKind.reduce(0) { $0 + $1.legs } }
    var heardApproaches: Int { approachesByKind.reduce(0) { $0 + $1.heard } }
    var findLag: Double?
    /// True finds said (at < 1.5 m): more than one is a child at the treasure told it again.
    var trueFinds = 0
    var falseFind = false
    /// The walk's first "treasure-found" was true (none said at 1.5 m or more before it):
    /// the finds count a walk by its first true find, even after a false one told the child
    /// "found" metres out.
    var firstFindTrue = false
    var covered = 0
    var ranged = 0
    /// The same by true distance (`WalkRules.coverageBands`): an interval honest overall can
    /// still be too wide near and too narrow far.
    var coveredByBand = [Int](repeating: 0, count: WalkRules.coverageBands.count)
    var rangedByBand = [Int](repeating: 0, count: WalkRules.coverageBands.count)
    var longestSilence: Double?
    /// Pairs of moments (1 s apart samples, before the find) >= 4 m apart in true distance,
    /// and those where the detector's click rate was higher at the closer one.
    var detectorPairs = 0
    var detectorPairsRight = 0
}

func scoreWalk(_ world: WalkingWorld, _ told: WalkTold, debug: Bool = false) -> WalkScore {
    var score = WalkScore()
    score.seconds = world.duration
    var entered = false
    var findsSaid = 0
    // Lines after the walk's end (a replay finishing a line, up to 30 s on) are not counted:
    // the hours are the walk's, and the in-process run stops at its end.
    for (time, line) in told.lines where time < world.duration {
        let d = world.distance(at: time)
        var isFalse = WalkRules.isFalse(line, about: world, at: time, standing: time >= world.stopAtChest) ?? false
        switch line {
        case .regionEntered:
            isFalse = entered
            entered = true
        case .treasureFound:
            if isFalse { score.falseFind = true }
            if debug { print("seed \(world.seed) found at t-stop \(format(time - world.stopAtChest, 1)) d \(format(d, 2)) rate \(format(1 / world.advertisingInterval, 0))") }
            if score.findLag == nil, !isFalse { score.findLag = time - world.stopAtChest }
            if !isFalse { score.trueFinds += 1 }
            if findsSaid == 0 { score.firstFindTrue = !isFalse }
            findsSaid += 1
        default: break
        }
        if isFalse { score.falseLines[line, default: 0] += 1 }
        if debug, line == .warmer, !isFalse { print("seed \(world.seed) true warmer t \(format(time, 1)) d \(format(d, 2))") }
        if debug, line == .colder, !isFalse { print("seed \(world.seed) true colder t \(format(time, 1))") }
        if isFalse, debug {
            let a = world.pose(at: time - 3), b = world.pose(at: time)
            let moved = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
            if line == .treasureFound || line == .proximityImmediate, findProbe {
                let p = world.pose(at: time)
                let body = [0.0, 2, 4, 6, 10].map { format(world.bodyShadow(world.pose(at: time - $0)), 1) }.joined(separator: ",")
                let level = [0.0, 2, 4, 6, 10, 20].map { format(world.meanRSSI(at: time - $0), 1) }.joined(separator: ",")
                print("FIND \(line.rawValue) seed \(world.seed) d \(format(d, 2)) err \(Double(world.advertisedPower) - world.truePower) field \(format(world.shadowing(x: p.x, y: p.y), 1)) wall \(format(world.wallLoss(x: p.x, y: p.y), 1)) body[0,2,4,6,10] \(body) level[0,2,4,6,10,20] \(level) dist[-4] \(format(world.distance(at: time - 4), 1)) dist[-10] \(format(world.distance(at: time - 10), 1))")
            }
            print("seed \(world.seed) false \(line.rawValue) t \(format(time, 1)) (stop \(format(world.stopAtChest, 1))) d \(format(d, 2)) moved3s \(format(moved, 1)) d-10s \(format(world.distance(at: time - 10), 1)) closer \(format((WalkRules.lookBack(world, at: time).max() ?? d) - d, 2)) rate \(format(1 / world.advertisingInterval, 0))")
        }
    }
    let warm: Set<LineEvent> = [.warmer, .proximityNear, .proximityImmediate, .treasureFound]
    if debug {
        print("seed \(world.seed) error \(Double(world.advertisedPower) - world.truePower) n \(format(world.exponent, 2)) h \(format(world.handHeight, 2)) rate \(format(1 / world.advertisingInterval, 0)) field@3.4m ... found \(score.findLag.map { format($0, 1) } ?? "never")")
    }
    for leg in world.approaches() {
        let kind = approachKind(world, leg)
        score.approachesByKind[kind].legs += 1
        if let first = told.lines.first(where: { warm.contains($0.line) && $0.time >= leg.start && $0.time <= leg.end + WalkRules.approachGrace }) {
            score.approachesByKind[kind].heard += 1
            if debug, legDebug { print("leg heard by \(first.line.rawValue) at \(format(first.time - leg.start, 1)) of \(format(leg.end - leg.start, 1)) s, \(format(world.distance(at: leg.start), 1)) -> \(format(world.distance(at: leg.end), 1)) m rate \(format(1 / world.advertisingInterval, 0))") }
        } else if debug, legDebug {
            let engine = told.engineWarmers.contains { $0 >= leg.start && $0 <= leg.end + WalkRules.approachGrace }
            print("leg missed \(format(leg.end - leg.start, 1)) s, \(format(world.distance(at: leg.start), 1)) -> \(format(world.distance(at: leg.end), 1)) m rate \(format(1 / world.advertisingInterval, 0))" + (engine ? " engine-warmer-unsaid" : ""))
        }
    }
    for r in told.ranges where r.time < world.duration {
        let truth = world.distance(at: r.time)
        let inside = abs(log(truth / r.meters)) <= r.logSigma
        score.ranged += 1
        if inside { score.covered += 1 }
        if let band = WalkRules.coverageBands.firstIndex(where: { $0.contains(truth) }) {
            score.rangedByBand[band] += 1
            if inside { score.coveredByBand[band] += 1 }
        }
    }
    if !told.detector.isEmpty || !told.lines.isEmpty {
        // Longest span (before the find) with no line starting and the detector silent.
        let end = score.findLag.map { world.stopAtChest + $0 } ?? world.duration
        var events: [(time: Double, rate: Double?)] = told.lines.map { ($0.time, nil) } + told.detector.map { ($0.time, $0.rate) }
        events.sort { $0.time < $1.time }
        var rate = 0.0
        var silentSince: Double? = 0
        var longest = 0.0
        for e in events where e.time <= end {
            if let since = silentSince { longest = max(longest, e.time - since) }
            if let r = e.rate { rate = r }
            // A line is a sound: the silence restarts after it (lines take ~2 s).
            silentSince = rate > 0 ? nil : e.time + (e.rate == nil ? 2 : 0)
        }
        if let since = silentSince { longest = max(longest, end - since) }
        if !told.detector.isEmpty { score.longestSilence = longest }
        // The detector's pair score: its rate at each second, against the true distance.
        if !told.detector.isEmpty {
            var samples: [(distance: Double, rate: Double)] = []
            var index = 0
            var current = 0.0
            var t = 0.0
            while t < end {
                while index < told.detector.count && told.detector[index].time <= t {
                    current = told.detector[index].rate
                    index += 1
                }
                samples.append((world.distance(at: t), current))
                t += 1
            }
            for i in samples.indices {
                for j in samples.indices where j > i && abs(samples[i].distance - samples[j].distance) >= 4 {
                    score.detectorPairs += 1
                    let (closer, farther) = samples[i].distance < samples[j].distance ? (samples[i], samples[j]) : (samples[j], samples[i])
                    if closer.rate > farther.rate { score.detectorPairsRight += 1 }
                }
            }
        }
    }
    return score
}

// MARK: Rangers on a walk

/// Our engine and the hunt rules in process (as `heardLines`, plus the range reports).
/// TUNE="name=value,...": tuning overrides of the walking runs' configuration (never in a report).
let tuning: [String: Double] = {
    guard let text = getenv("TUNE").map({ String(cString: $0) }) else { return [:] }
    var out: [String: Double] = [:]
    for pair in text.split(separator: ",") {
        let parts = pair.split(separator: "=")
        if parts.count == 2, let v = Double(parts[1]) { out[String(parts[0])] = v }
    }
    return out
}()

var walkingConfiguration: RangingConfiguration {
    var c = simulatedConfiguration
    if let v = tuning["edge"] { c.atHandEdge = v }
    if let v = tuning["window"] { c.atHandWindow = v }
    if let v = tuning["margin"] { c.arrivalMargin = v }
    if let v = tuning["tw"] { c.trendWindow = v }
    if let v = tuning["tz"] { c.trendSignificance = v }
    if let v = tuning["ts"] { c.trendSlope = v }
    if let v = tuning["irate"] { c.independentReadingRate = v }
    if let v = tuning["tint"] { c.trendMinimumInterval = v }
    if let v = tuning["trf"] { c.trendReversalFactor = v }
    if let v = tuning["stepk"] { c.trendStepMargin = v }
    if let v = tuning["sz"] { c.trendSteepSignificance = v }
    if let v = tuning["stepn"] { c.trendStepMarginReadings = Int(v) }
    if let v = tuning["ss"] { c.trendSteepSlope = v }
    if let v = tuning["cstepk"] { c.trendColderStepMargin = v }
    if let v = tuning["ctz"] { c.trendColderSignificance = v }
    if let v = tuning["minsil"] { c.minimumSilence = v }
    if let v = tuning["sigma"] { c.environmentSigma = v }
    if let v = tuning["near"] { c.nearEdge = v }
    if let v = tuning["rz"] { c.trendRiseSignificance = v }
    if let v = tuning["rrz"] { c.trendRiseRecentSignificance = v }
    if let v = tuning["rs"] { c.trendRiseSlope = v }
    if let v = tuning["roz"] { c.trendRiseOldSignificance = v }
    if let v = tuning["soz"] { c.trendSlopeOldSignificance = v }
    if let v = tuning["dm"] { c.trendDipMemory = v }
    if let v = tuning["tg"] { c.trendColderGapFactor = v }
    if let v = tuning["pool"] { c.regionPoolingGate = v }
    if let v = tuning["pdev"] { c.regionPoolingDeviation = v }
    if let v = tuning["renew"] { c.atHandRenewal = v }
    return c
}

/// The at-hand detector of the walking runs, with TUNE's overrides (the probes use the same).
func tunedAtHand(_ c: RangingConfiguration) -> AtHandDetector {
    AtHandDetector(configuration: c, minimumPackets: Int(tuning["packets"] ?? Double(AtHandDetector.defaultPackets)),
                   edgeZ: tuning["edgez"] ?? AtHandDetector.defaultEdgeZ, arrivalZ: tuning["arrivalz"] ?? AtHandDetector.defaultArrivalZ,
                   confirmPackets: Int(tuning["cpackets"] ?? Double(AtHandDetector.defaultConfirmPackets)),
                   confirmSpan: tuning["cspan"] ?? AtHandDetector.defaultConfirmSpan,
                   longStand: tuning["ls"] ?? AtHandDetector.defaultLongStand,
                   nearArrivalMargin: tuning["nearArr"] ?? AtHandDetector.defaultNearArrivalMargin,
                   longArrivalFactor: Int(tuning["larr"] ?? Double(AtHandDetector.defaultLongArrivalFactor)),
                   longArrivalRate: tuning["larrrate"] ?? AtHandDetector.defaultLongArrivalRate)
}

/// Our engine as the walking and standing-still runs (and their probes) build it, with
/// TUNE's overrides.
func tunedEngine(_ c: RangingConfiguration = walkingConfiguration, calibrated: Bool = false) -> RangingEngine {
    RangingEngine(configuration: c, regions: [Region(name: "treasure", uuid: OurRanger.uuid)], atHand: tunedAtHand(c),
                  calibratedBeacons: calibrated ? [OurRanger.key(0)] : [])
}

/// The hunt rules of the benchmarks' runs (the far edge from the ranging's near edge, as
/// the appliance builds it), with TUNE's overrides.
func tunedHunt(_ c: RangingConfiguration) -> HuntDirector.Configuration {
    var hunt = HuntDirector.Configuration(region: "treasure")
    if let v = tuning["hold"] { hunt.foundHold = v }
    if let v = tuning["slowrate"] { hunt.slowReadingRate = v > 0 ? v : nil }
    if let v = tuning["fastrate"] { hunt.fastReadingRate = v > 0 ? v : nil }
    if let v = tuning["fasthold"] { hunt.fastFoundHold = v }
    if let v = tuning["hti"] { hunt.trendInterval = v }
    if let v = tuning["hq"] { hunt.trendQuietAfterLine = v }
    if let v = tuning["lc"] { hunt.leftConfirmation = v }
    if let v = tuning["fc"] { hunt.farConfirmation = v }
    hunt.farEdge = c.nearEdge
    if let v = tuning["fe"] { hunt.farEdge = v }
    if let v = tuning["frr"] { hunt.farReturnRatio = v > 0 ? v : nil }
    if let v = tuning["frh"] { hunt.farRangeHold = v }
    return hunt
}

/// With `calibrated`, the reports carry the power the set-up measured (`walkCalibration`) and
/// the engine knows it (as `tags[].power` tells the appliance).
func oursOnWalk(_ reports: [SimulatedReading], until end: Double, lineSeconds: Double = 2, calibrated: Bool = false) -> WalkTold {
    let c = walkingConfiguration
    return huntInProcess(reports, until: end, engine: tunedEngine(c, calibrated: calibrated),
                         director: HuntDirector(configuration: tunedHunt(c)), lineSeconds: lineSeconds)
}

/// The hunt rules in process on our engine, as the hunter runs them: every ranging event to
/// the director, its ticks on the benchmarks' clock (`replay`, and at the director's
/// deadline), each line `lineSeconds` long and its end told; with `rewardTimeout`, "no
/// reward" told that long after each find (a trail's tags send none). A bystander's report
/// (`WalkingWorld.bystanderReadings`, beacon < 0) tells the engine the receiver hears. What
/// was said (with a found line's words), the ranges and the engine's own warmers.
func huntInProcess(_ reports: [SimulatedReading], until end: Double, engine: RangingEngine, director: HuntDirector,
                   lineSeconds: Double = 2, rewardTimeout: Double? = nil) -> WalkTold {
    var engine = engine
    var director = director
    var told = WalkTold()
    var speechEnds: Double?
    var rewardDue: Double?
    func apply(_ actions: [HuntAction], at time: Double) {
        for action in actions {
            switch action {
            case .sound, .watchSpin: continue
            case .found: rewardDue = rewardTimeout.map { time + $0 }
            case let .say(event, _), let .tell(event, _, _):
                speechEnds = time + lineSeconds
                told.lines.append((time, event))
                if case let .tell(.treasureFound, detail, _) = action, let text = detail.text { told.texts[told.lines.count - 1] = text }
            }
        }
    }
    func handle(_ events: [RangingEvent], at time: Double) {
        for event in events {
            if case let .range(r) = event, let d = r.distance { told.ranges.append((r.time, d.meters, d.logSigma)) }
            if case .trend(_, _, .warmer) = event { told.engineWarmers.append(time) }
            apply(director.handle(.ranging(event), at: time), at: time)
        }
    }
    func due(by time: Double) {
        if let ends = speechEnds, ends <= time {
            speechEnds = nil
            apply(director.handle(.speechFinished, at: ends), at: ends)
        }
        if let at = rewardDue, at <= time {
            rewardDue = nil
            apply(director.handle(.rewardAbsent, at: at), at: at)
        }
    }
    apply(director.handle(.started, at: 0), at: 0)
    replay(reports, until: end, deadline: { director.nextDeadline(after: $0) }, advance: { time in
        due(by: time)
        handle(engine.advance(to: time), at: time)
        apply(director.tick(at: time), at: time)
    }, ingest: { report in
        guard report.beacon >= 0 else { return engine.heardOther(at: report.time) }
        let sample = RangingSample(key: OurRanger.key(report.beacon), measuredPower: report.measuredPower, rssi: report.rssi,
                                   time: report.time)
        handle(engine.ingest(sample), at: report.time)
    })
    return told
}

/// A baseline's lines: every committed class change said (unknown too), its region's enter
/// and exit, and "treasure-found" when "immediate" held 3 s (the hunt's rule); no trends.
func baselineOnWalk(_ which: Which, _ reports: [SimulatedReading], until end: Double) -> WalkTold {
    var ranger = makeRanger(which)
    var told = WalkTold()
    var said = Proximity.unknown
    var inside = false
    var everInside = false
    var immediateSince: Double?
    var found = false
    drive(&ranger, reports: reports, until: end) { r, step in
        let t = step.time
        if r.inside != inside {
            inside = r.inside
            if inside { told.lines.append((t, .regionEntered)); everInside = true } else if everInside { told.lines.append((t, .regionLeft)) }
        }
        let now = r.proximity(0)
        if now != said {
            said = now
            told.lines.append((t, LineEvent.proximity(now)))
            immediateSince = now == .immediate ? t : nil
        }
        if !found, let since = immediateSince, t - since >= 3 {
            found = true
            told.lines.append((t, .treasureFound))
        }
        if !step.isTick, let d = r.distance(0), let interval = d.interval, interval.lowerBound > 0 {
            told.ranges.append((t, d.meters, log(interval.upperBound / d.meters)))
        }
    }
    return told
}

/// A line generator that reads the truth: the class of the true distance (edges 0.5 and
/// 3 m, 0.3 m of hysteresis), "warmer"/"colder" when the child got 1 m closer/farther over
/// the last 3 s (at most every 6 s, never within 3 s of another line), found 2 s after the
/// child stopped at the chest: the ceiling the walking measures allow.
func oracleOnWalk(_ world: WalkingWorld) -> WalkTold {
    var told = WalkTold()
    var said = Proximity.unknown
    var lastLine = -Double.infinity
    var lastTrend = -Double.infinity
    var t = 0.0
    told.lines.append((0, .regionEntered))
    while t < world.duration {
        let d = world.distance(at: t)
        var wanted = said
        switch said {
        case .unknown: wanted = d < 3 ? .near : .far
        case .far: if d < 2.7 { wanted = .near }
        case .near: if d > 3.3 { wanted = .far }
        case .immediate: break
        }
        if t >= world.stopAtChest + 2 {
            told.lines.append((t, .treasureFound))
            break
        }
        if wanted != said {
            said = wanted
            told.lines.append((t, LineEvent.proximity(wanted)))
            lastLine = t
        } else if t - lastTrend >= 6, t - lastLine >= 3, t >= 3 {
            let before = world.distance(at: t - 3)
            if before - d >= 1 || d - before >= 1 {
                told.lines.append((t, before > d ? .warmer : .colder))
                lastTrend = t
                lastLine = t
            }
        }
        t += 0.1
    }
    return told
}

// MARK: Calibration at set-up

/// The power a parent reads for the walk's beacon at set-up (docs/raspberry-pi.md,
/// "Calibrate"; `WalkingWorld.calibrationReadings`): the hunter held at 1 m for half a minute
/// and at least 30 readings (at most two minutes), then the filtered level the page and
/// `scan` show, in whole dBm. `spotSigma`: the calibration spot's shadowing (sd, dB).
func walkCalibration(_ world: WalkingWorld, spotSigma: Double = 0) -> Int {
    var held: [SimulatedReading] = []
    for r in world.calibrationReadings(seconds: 120, spotSigma: spotSigma) {
        if r.time >= 30, held.count >= 30 { break }
        held.append(r)
    }
    guard let level = filteredLevel(held), level.isFinite else { return world.advertisedPower }
    return Int(level.rounded())
}

/// The filtered level (dBm) our engine reports after these readings of one beacon: what the
/// page and `scan` show as `level`.
func filteredLevel(_ readings: [SimulatedReading], configuration: RangingConfiguration = walkingConfiguration) -> Double? {
    var engine = RangingEngine(configuration: configuration)
    var level: Double?
    for r in readings {
        for case .range(let report) in engine.ingest(RangingSample(key: OurRanger.key(r.beacon), measuredPower: r.measuredPower,
                                                                   rssi: r.rssi, time: r.time)) {
            level = report.rssi
        }
    }
    return level
}

/// CALIBRATION_PROBE=1: how far the set-up's reading is from the beacon's true power (dB)
/// over the held-out walks' worlds at each rate, after half a minute and after two: the
/// filtered level the page reads, beside the plain mean of the hold.
func probeCalibration(harshness: WalkingWorld.Harshness = .standard) {
    for rate in [10.0, 4, 2, 1] {
        for hold in [30.0, 120.0] {
            var filtered: [Double] = [], plain: [Double] = []
            for seed in walkingSeeds(heldOut: true, count: 200) {
                var h = harshness
                h.rate = rate
                let world = WalkingWorld(seed: seed, harshness: h)
                let held = world.calibrationReadings(seconds: hold)
                if let level = filteredLevel(held) { filtered.append(level - world.truePower) }
                if !held.isEmpty { plain.append(Double(held.map(\.rssi).reduce(0, +)) / Double(held.count) - world.truePower) }
            }
            func sd(_ x: [Double]) -> Double {
                let m = x.reduce(0, +) / Double(max(1, x.count))
                return (x.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(max(1, x.count))).squareRoot()
            }
            print("\(rateName(rate)), \(Int(hold)) s: filtered level sd \(format(sd(filtered), 2)) dB, plain mean sd \(format(sd(plain), 2)) dB")
        }
    }
}

/// The example configuration with the walk's beacon calibrated (`tags[].power`), for
/// `replay --hunt --config`: what the parent's page writes after "Calibrate at 1 m".
func calibratedConfiguration(example: String, power: Int) -> String? {
    guard let brace = example.firstIndex(of: "{") else { return nil }
    let hex = walkingUUID.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }
    let uuid = [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    let tag = "\n  \"tags\": [{ \"region\": \"\(uuid):1:1\", \"power\": \(power) }],"
    return String(example[...brace]) + tag + String(example[example.index(after: brace)...])
}

// MARK: Captures

/// The walking world's beacon: the example configuration's treasure UUID, major 1, minor 1.
let walkingUUID: [UInt8] = [0x50, 0x49, 0x52, 0x41, 0x54, 0x45, 0x2D, 0x48, 0x55, 0x4E, 0x54, 0x45, 0x52, 0x00, 0x00, 0x00]

/// One legacy LE Advertising Report event (ADV_NONCONN_IND) carrying the iBeacon.
/// Beacon b of the chest is minor 1 + b at address 66:55:44:33:22:(11 + b).
func advertisingReportEvent(rssi: Int, measuredPower: Int, beacon: Int = 0) -> HCIPacket {
    var data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
    data += walkingUUID
    data += [0x00, 0x01, 0x00, UInt8(truncatingIfNeeded: 1 + beacon), UInt8(bitPattern: Int8(clamping: measuredPower))]
    return legacyReportEvent(eventType: 0x03, addressType: 0x00,
                             address: [UInt8(truncatingIfNeeded: 0x11 + beacon), 0x22, 0x33, 0x44, 0x55, 0x66], data: data, rssi: rssi)
}

/// One LE Advertising Report event holding one legacy report (address least significant
/// byte first).
func legacyReportEvent(eventType: UInt8, addressType: UInt8, address: [UInt8], data: [UInt8], rssi: Int) -> HCIPacket {
    var report: [UInt8] = [0x02, 0x01, eventType, addressType] + address + [UInt8(data.count)]
    report += data
    report.append(UInt8(bitPattern: Int8(clamping: rssi)))
    return HCIPacket(type: .event, bytes: [0x3E, UInt8(report.count)] + report)
}

func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
    guard let file = fopen(path, "wb") else { return false }
    defer { fclose(file) }
    return bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) } == bytes.count
}

func readTextLines(_ path: String) -> [String]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// A walk as a btsnoop capture (H4), starting at a fixed wall-clock time.
func captureBytes(_ reports: [SimulatedReading]) -> [UInt8] {
    let encoder = BTSnoopEncoder(datalink: .h4)
    var out = encoder.header
    let start: Int64 = 1_780_000_000_000_000
    for r in reports {
        let event = r.beacon >= 0 ? advertisingReportEvent(rssi: r.rssi, measuredPower: r.measuredPower, beacon: r.beacon)
            : bystanderReportEvent(rssi: r.rssi, bystander: -1 - r.beacon)
        out += encoder.record(event, received: true, unixMicroseconds: start + Int64((r.time * 1e6).rounded()))
    }
    return out
}

/// A bystander's advertising report: a phone's (a static random address, its top bits 11;
/// Apple's "nearby" data), no iBeacon.
func bystanderReportEvent(rssi: Int, bystander: Int) -> HCIPacket {
    let data: [UInt8] = [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x01, 0x18, 0x00, 0x00, UInt8(truncatingIfNeeded: bystander)]
    return legacyReportEvent(eventType: 0x00, addressType: 0x01,
                             address: [UInt8(truncatingIfNeeded: 0x40 + bystander), 0x9A, 0x8B, 0x7C, 0x6D, 0xDE], data: data, rssi: rssi)
}

/// What `replay --hunt --json` printed: its lines, ranges and detector rates, on the walk's
/// clock: the replay counts from the capture's first record, which is the walk's `start`
/// (its first report heard, seconds into the walk: up to 5 s when the walk begins in a loss
/// burst or an outage).
func parseReplay(_ path: String, start: Double) -> WalkTold? {
    struct Line: Decodable {
        var t: Double?
        var event: String?
        var event_name: String?
        var text: String?
        var distance: Double?
        var sigma: Double?
        var rate: Double?
    }
    guard let lines = readTextLines(path) else { return nil }
    var told = WalkTold()
    let decoder = JSONDecoder()
    for text in lines {
        guard let line = try? decoder.decode(Line.self, from: Data(text.utf8)), let replayed = line.t else { continue }
        let t = replayed + start
        switch line.event {
        case "say":
            if let name = line.event_name, let event = LineEvent(rawValue: name) {
                told.lines.append((t, event))
                if event == .treasureFound, let text = line.text { told.texts[told.lines.count - 1] = text }
            }
        case "range":
            if let m = line.distance, let s = line.sigma, m > 0 { told.ranges.append((t, m, asinh(s / m))) }
        case "detector":
            if let r = line.rate { told.detector.append((t, r)) }
        default: break
        }
    }
    return told
}

// MARK: The table

/// The approaches heard and the approaches, over the walks of these advertising rates (Hz),
/// of one kind (`approachKind`) or all.
func approachesHeard(_ row: [(WalkingWorld, WalkScore)], rates: Set<Int>, kind: Int? = nil) -> (heard: Int, legs: Int) {
    let part = row.filter { rates.contains(Int((1 / $0.0.advertisingInterval).rounded())) }
    guard let kind else { return (part.reduce(0) { $0 + $1.1.heardApproaches }, part.reduce(0) { $0 + $1.1.approaches }) }
    return (part.reduce(0) { $0 + $1.1.approachesByKind[kind].heard }, part.reduce(0) { $0 + $1.1.approachesByKind[kind].legs })
}

/// An approach leg's kind: the index of `WalkRules.approachLevelBands` holding how much the
/// distance alone moves the level along it, or the bands' count for the leg to the chest.
func approachKind(_ world: WalkingWorld, _ leg: (start: Double, end: Double)) -> Int {
    let from = world.distance(at: leg.start), to = world.distance(at: leg.end)
    guard to >= WalkRules.chestLegEnd else { return WalkRules.approachLevelBands.count }
    return WalkRules.approachLevelBands.firstIndex { $0.contains(10 * world.exponent * log10(from / to)) } ?? 0
}

/// The kinds' names, in `approachKind`'s order.
let approachKindNames = WalkRules.approachLevelBands.map { band in
    band.upperBound.isFinite ? "the level \(Int(band.lowerBound))-\(Int(band.upperBound)) dB nearer" : "\(Int(band.lowerBound)) dB or more"
} + ["the last leg, to the chest"]

/// The approaches heard by kind (`WalkRules.approachLevelBands`, the leg to the chest) and
/// rate: where the figures come from.
func approachKinds(_ row: [(WalkingWorld, WalkScore)]) -> String {
    approachKindNames.indices.map { kind -> String in
        let figures = [[10], [4], [1, 2]].map { rates -> String in
            let (heard, legs) = approachesHeard(row, rates: Set(rates), kind: kind)
            return legs == 0 ? "-" : format(Double(heard) / Double(legs), 2)
        }
        let legs = row.reduce(0) { $0 + $1.1.approachesByKind[kind].legs }
        return "\(approachKindNames[kind]) \(figures.joined(separator: "/")) (\(legs) legs)"
    }.joined(separator: "; ")
}

/// A row's first columns: false lines an hour in all, then by kind (left/entered/unknown,
/// near/far/immediate, warmer/colder, found wrong), over walks of these lengths (s).
func falseLineColumns(_ walks: [(seconds: Double, falseLines: [LineEvent: Int])]) -> String {
    let hours = walks.reduce(0) { $0 + $1.seconds } / 3600
    var lines: [LineEvent: Int] = [:]
    for w in walks { lines.merge(w.falseLines, uniquingKeysWith: +) }
    func h(_ kinds: [LineEvent]) -> String { kinds.map { format(Double(lines[$0] ?? 0) / hours, 1) }.joined(separator: "/") }
    return "**\(format(Double(lines.values.reduce(0, +)) / hours, 2))** | \(h([.regionLeft, .regionEntered, .proximityUnknown])) | "
        + "\(h([.proximityNear, .proximityFar, .proximityImmediate])) | \(h([.warmer, .colder])) | \(h([.treasureFound]))"
}

/// How a swept world differs from the standard one (empty for the standard world).
func radioDescription(_ harshness: WalkingWorld.Harshness) -> String {
    harshness == .standard ? "" : "; radio: spread \(format(harshness.spread.lowerBound, 1))-\(format(harshness.spread.upperBound, 1)) dB, body \(format(harshness.bodyDepth.lowerBound, 0))-\(format(harshness.bodyDepth.upperBound, 0)) dB, power error ±\(format(harshness.powerError, 0)) dB, field sd \(format(harshness.field, 0)) dB, \(format(100 * harshness.lossFraction.lowerBound, 0))-\(format(100 * harshness.lossFraction.upperBound, 0)) % lost" + (harshness.burstPackets.map { " in bursts of \(format($0.lowerBound, 0))-\(format($0.upperBound, 0)) packets" } ?? "") + (harshness.chestBeacons > 1 ? ", \(harshness.chestBeacons) beacons in the chest" : "") + (harshness.speed == WalkingWorld.Harshness.standard.speed ? "" : ", walking \(format(harshness.speed.lowerBound, 1))-\(format(harshness.speed.upperBound, 1)) m/s") + (harshness.outage == WalkingWorld.Harshness.standard.outage ? "" : ", shared outages of \(format(harshness.outage.lowerBound, 1))-\(format(harshness.outage.upperBound, 1)) s") + (harshness.bystanders > 0 ? ", \(harshness.bystanders) bystanders heard" : "") + (harshness.chestSpot > 0 ? ", the chest's spot faded \(format(harshness.chestSpot, 1)) dB sd" : "")
}

/// The walks of a part: tuning 1...count, held out 10001...10000+count, or (held out,
/// `first`) first...first+count-1, a block no earlier round looked at.
func walkingSeeds(heldOut: Bool, count: Int, first: UInt64? = nil) -> [UInt64] {
    if heldOut, let first { return (0..<UInt64(count)).map { first + $0 } }
    return (1...UInt64(count)).map { heldOut ? 10_000 + $0 : $0 }
}

func runWalking(heldOut: Bool, count: Int, firstSeed: UInt64? = nil, writeCaptures: String?, replays: String?,
                harshness: WalkingWorld.Harshness = .standard, calibrated: Double? = nil) {
    let example = calibrated != nil && writeCaptures != nil ? readTextLines("config/hunter.example.json")?.joined(separator: "\n") : nil
    if calibrated != nil, writeCaptures != nil, example == nil {
        RangingBenchmark.fail("cannot read config/hunter.example.json (run from the repository)", code: 66)
    }
    let seeds = walkingSeeds(heldOut: heldOut, count: count, first: firstSeed)
    var rows: [String: [(WalkingWorld, WalkScore)]] = [:]
    let names = (replays == nil ? [] : ["ours (replay --hunt)"]) + ["ours (in process)", "AltBeacon", "iOS-like", "oracle"]
    let ceilings: [(kind: Ceiling, z: Double)] = [Ceiling.slope, .rise].flatMap { kind in [4.0, 3.0].map { (kind, $0) } }
    /// Per ceiling, by the legs' kind (`approachKind`) and rate (1: 1-2 Hz): approaches heard,
    /// approaches.
    var ceilingByKind = [[[Int: (heard: Int, legs: Int)]]](
        repeating: .init(repeating: [:], count: WalkRules.approachLevelBands.count + 1), count: ceilings.count)
    for seed in seeds {
        let world = WalkingWorld(seed: seed, harshness: harshness)
        let advertised = world.readings()
        // Calibrated: every ranger gets the measured power (a tag's app would advertise it);
        // the captures keep the tag's own, and the replay's configuration calibrates it.
        let power = calibrated.map { walkCalibration(world, spotSigma: $0) }
        let reports = power.map { p in advertised.map { r in
            var r = r
            if r.beacon == 0 { r.measuredPower = p }
            return r
        } } ?? advertised
        let rate = Int((1 / world.advertisingInterval).rounded())
        let rateKey = rate <= 2 ? 1 : rate
        for (i, c) in ceilings.enumerated() {
            for leg in evidenceCeiling(world, reports, c.kind, z: c.z) {
                ceilingByKind[i][leg.kind][rateKey, default: (0, 0)].legs += 1
                if leg.heard { ceilingByKind[i][leg.kind][rateKey, default: (0, 0)].heard += 1 }
            }
        }
        // What else the receiver hears (none in the standard world): only our engine listens.
        let bystanders = world.bystanderReadings()
        func withBystanders(_ r: [SimulatedReading]) -> [SimulatedReading] {
            bystanders.isEmpty ? r : (r + bystanders).sorted { ($0.time, $0.beacon) < ($1.time, $1.beacon) }
        }
        let heard = withBystanders(advertised)
        if let directory = writeCaptures {
            if !writeFile("\(directory)/walk-\(seed).btsnoop", captureBytes(heard)) {
                RangingBenchmark.fail("cannot write \(directory)/walk-\(seed).btsnoop", code: 73)
            }
            if let power, let example, let text = calibratedConfiguration(example: example, power: power),
               !writeFile("\(directory)/walk-\(seed).json", Array(text.utf8)) {
                RangingBenchmark.fail("cannot write \(directory)/walk-\(seed).json", code: 73)
            }
        }
        var told: [String: WalkTold] = [
            "ours (in process)": oursOnWalk(power == nil ? heard : withBystanders(reports), until: world.duration, calibrated: calibrated != nil),
            "AltBeacon": baselineOnWalk(.altBeacon, reports, until: world.duration),
            "iOS-like": baselineOnWalk(.iOS, reports, until: world.duration),
            "oracle": oracleOnWalk(world),
        ]
        if let directory = replays {
            guard let replayed = parseReplay("\(directory)/walk-\(seed).jsonl", start: heard.first?.time ?? 0) else {
                RangingBenchmark.fail("no \(directory)/walk-\(seed).jsonl (scripts/bench/walking-replay.sh writes it)", code: 66)
            }
            told["ours (replay --hunt)"] = replayed
        }
        for (name, t) in told { rows[name, default: []].append((world, scoreWalk(world, t, debug: walkDebug && name.hasPrefix("ours")))) }
    }
    if writeCaptures != nil, replays == nil { print("wrote \(seeds.count) captures") }
    let part = heldOut ? "held-out" : "tuning"
    let radio = radioDescription(harshness)
    let rates = harshness.rate.map { "every walk at \(rateName($0))" } ?? "rates 10/4/2/1 Hz in turn"
    let setUp = calibrated.map { "; the chest's beacon calibrated at set-up (tags[].power)" + ($0 > 0 ? ", the spot's shadowing sd \(format($0, 1)) dB" : "") } ?? ""
    print("Walking to the chest (\(part) walks, seeds \(seeds.first ?? 0)...\(seeds.last ?? 0); \(rates)\(radio)\(setUp)):")
    print("| ranger | false lines/h | left/entered/unknown | near/far/immediate | warmer/colder | found wrong | approaches heard 10 Hz | 4 Hz | 1-2 Hz | finds | find lag median/p90 s | interval covers | longest silence median s | detector pairs right |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names {
        guard let row = rows[name] else { continue }
        func recall(_ rates: Set<Int>) -> String {
            let (k, n) = approachesHeard(row, rates: rates)
            return n == 0 ? "-" : "\(format(Double(k) / Double(n), 2)) (\(k)/\(n))"
        }
        let lags = row.compactMap(\.1.findLag)
        let covered = row.reduce(0) { $0 + $1.1.covered }, ranged = row.reduce(0) { $0 + $1.1.ranged }
        let silences = row.compactMap(\.1.longestSilence)
        let pairs = row.reduce(0) { $0 + $1.1.detectorPairs }, right = row.reduce(0) { $0 + $1.1.detectorPairsRight }
        print("| \(name) | \(falseLineColumns(row.map { ($0.1.seconds, $0.1.falseLines) })) | "
              + "\(recall([10])) | \(recall([4])) | \(recall([1, 2])) | \(lags.count)/\(row.count) | "
              + "\(lags.isEmpty ? "-" : format(median(lags), 2) + "/" + format(percentile(lags, 0.9), 1)) | "
              + "\(ranged == 0 ? "-" : format(100 * Double(covered) / Double(ranged), 1) + " %") | "
              + "\(silences.isEmpty ? "-" : format(median(silences), 1)) | "
              + "\(pairs == 0 ? "-" : format(100 * Double(right) / Double(pairs), 1) + " %") |")
    }
    // A family's own treasure box advertises at 10 Hz: the mix of tags can hide what one rate hears.
    for name in names where name.hasPrefix("ours") {
        guard let row = rows[name] else { continue }
        // Every rate the walks used, fastest first (a swept rate need not be one of the four).
        let present = Set(row.map { ($0.0.advertisingInterval * 1000).rounded() }).sorted()
        let parts = present.compactMap { interval -> String? in
            let walks = row.filter { ($0.0.advertisingInterval * 1000).rounded() == interval }
            let hours = walks.reduce(0) { $0 + $1.1.seconds } / 3600
            guard hours > 0 else { return nil }
            let falseLines = walks.reduce(0) { $0 + $1.1.falseLines.values.reduce(0, +) }
            let lags = walks.compactMap(\.1.findLag)
            let heard = walks.reduce(0) { $0 + $1.1.heardApproaches }, legs = walks.reduce(0) { $0 + $1.1.approaches }
            return "\(rateName(1000 / interval)) \(format(Double(falseLines) / hours, 2)) (finds \(lags.count)/\(walks.count), lag \(lags.isEmpty ? "-" : format(median(lags), 1)) s, approaches heard \(legs == 0 ? "-" : format(Double(heard) / Double(legs), 2)))"
        }
        print("(\(name) by tag rate, false lines an hour: " + parts.joined(separator: "; ") + ")")
        let bands = WalkRules.coverageBands.indices.compactMap { b -> String? in
            let ranged = row.reduce(0) { $0 + $1.1.rangedByBand[b] }, covered = row.reduce(0) { $0 + $1.1.coveredByBand[b] }
            guard ranged > 0 else { return nil }
            let band = WalkRules.coverageBands[b]
            let name = band.upperBound.isFinite ? "\(Int(band.lowerBound))-\(Int(band.upperBound)) m" : "\(Int(band.lowerBound)) m and more"
            return "\(name) \(format(100 * Double(covered) / Double(ranged), 1)) %"
        }
        if !bands.isEmpty { print("(\(name), interval covers by true distance: " + bands.joined(separator: ", ") + ")") }
        print("(\(name), walks told their true find more than once: \(row.count { $0.1.trueFinds > 1 }) of \(row.count); "
            + "whose first find said was the true one: \(row.count { $0.1.firstFindTrue }) of \(row.count))")
        print("(\(name), approaches heard at 10/4/1-2 Hz by kind: " + approachKinds(row) + ")")
    }
    /// Ceiling `i`'s share of the legs of these kinds heard, at 10/4/1-2 Hz.
    func ceilingShares(_ i: Int, kinds: [Int]) -> String {
        [10, 4, 1].map { r -> String in
            let counts = kinds.map { ceilingByKind[i][$0][r] ?? (0, 0) }
            let (h, n) = (counts.reduce(0) { $0 + $1.heard }, counts.reduce(0) { $0 + $1.legs })
            return n == 0 ? "-" : format(Double(h) / Double(n), 2)
        }.joined(separator: "/")
    }
    for kind in [Ceiling.slope, .rise] {
        let parts = ceilings.indices.filter { ceilings[$0].kind == kind }.map { i -> String in
            "z \(format(ceilings[i].z, 0)) " + ceilingShares(i, kinds: Array(approachKindNames.indices))
        }
        print("(evidence ceiling, \(kind.name), approaches heard at 10/4/1-2 Hz: " + parts.joined(separator: "; ") + ")")
    }
    for i in ceilings.indices where ceilings[i].kind == .rise {
        let kinds = approachKindNames.indices.map { k -> String in "\(approachKindNames[k]) \(ceilingShares(i, kinds: [k]))" }
        print("(evidence ceiling, \(Ceiling.rise.name), z \(format(ceilings[i].z, 0)), by kind: " + kinds.joined(separator: "; ") + ")")
    }
    print("(\(format(rows[names.last ?? ""]?.reduce(0) { $0 + $1.1.seconds / 3600 } ?? 0, 2)) h of walking; definitions: docs/ranging.md, \"The walking world\")")
}

/// The evidence ceilings: how many approaches a test could hear at all from the packets,
/// knowing when each leg starts (an oracle of timing, not of level) and the per-packet noise
/// (the world's spread with its channel offsets). No false-alarm cost is counted, so a ranger
/// that does not know when legs start cannot do better at that z:
/// - `.slope`: at each packet from the leg's start to `approachGrace` s past its end, the
///   least-squares slope of the readings since the start; heard when its z reaches the
///   threshold with a slope >= 0.75 dB/s;
/// - `.rise`: every 0.25 s of the leg, the mean of the last 3 s of the leg against the mean of
///   the 10 s before it (where the child was no nearer: a leg is a maximal run of closing);
///   heard when the difference's z reaches the threshold. It counts the body's shadow lifting
///   as the child turns towards the chest, which a ranger cannot tell from a turn standing.
enum Ceiling {
    case slope, rise

    var name: String { self == .slope ? "slope since the leg's start" : "last 3 s against the 10 s before the leg" }
}

/// Per leg: its kind (`approachKind`) and whether the ceiling hears it.
func evidenceCeiling(_ world: WalkingWorld, _ reports: [SimulatedReading], _ kind: Ceiling, z threshold: Double) -> [(kind: Int, heard: Bool)] {
    let offsets = world.channelOffsets
    let offsetVariance = offsets.map { $0 * $0 }.reduce(0, +) / Double(max(offsets.count, 1))
    let sigma2 = world.packetSigma * world.packetSigma + offsetVariance
    var legs: [(kind: Int, heard: Bool)] = []
    for leg in world.approaches() {
        let last = leg.end + WalkRules.approachGrace
        var heard = false
        defer { legs.append((approachKind(world, leg), heard)) }
        switch kind {
        case .slope:
            var n = 0.0, st = 0.0, sv = 0.0, stt = 0.0, stv = 0.0
            for r in reports where r.time >= leg.start && r.time <= last {
                let t = r.time - leg.start, v = Double(r.rssi)
                n += 1; st += t; sv += v; stt += t * t; stv += t * v
                guard n >= 3 else { continue }
                let sxx = stt - st * st / n
                guard sxx > 0 else { continue }
                let slope = (stv - st * sv / n) / sxx
                if slope >= 0.75, slope / (sigma2 / sxx).squareRoot() >= threshold { heard = true; break }
            }
        case .rise:
            let before = reports.filter { $0.time >= leg.start - 10 && $0.time < leg.start }.map { Double($0.rssi) }
            guard before.count >= 3 else { continue }
            let reference = before.reduce(0, +) / Double(before.count)
            var t = leg.start + 1
            while t <= last {
                let now = reports.filter { $0.time > t - 3 && $0.time <= t && $0.time >= leg.start }.map { Double($0.rssi) }
                if now.count >= 2 {
                    let mean = now.reduce(0, +) / Double(now.count)
                    let se = (sigma2 / Double(now.count) + sigma2 / Double(before.count)).squareRoot()
                    if (mean - reference) / se >= threshold { heard = true; break }
                }
                t += 0.25
            }
        }
    }
    return legs
}

/// The at-hand detector of the walking runs (`tunedAtHand`) fed one beacon's readings with the
/// reading noise its level filter learns, as the engine feeds it (the probes' view of it).
struct FedAtHand {
    var detector = tunedAtHand(walkingConfiguration)
    var filter = KalmanRSSIFilter(configuration: walkingConfiguration)

    /// Feeds one reading; true when at hand changed.
    mutating func feed(_ r: SimulatedReading) -> Bool {
        filter.update(rssi: r.rssi, time: r.time)
        return detector.update(readingLoss: Double(r.measuredPower - r.rssi), noiseVariance: filter.noiseVariance, time: r.time)
    }
}

/// AT_HAND_PROBE=SEED: the at-hand detector's windows after the stop at the chest (tuning aid).
func probeAtHand(seed: UInt64, harshness: WalkingWorld.Harshness = .standard) {
    let world = WalkingWorld(seed: seed, harshness: harshness)
    var fed = FedAtHand()
    var lastPrint = -Double.infinity
    for r in world.readings() {
        _ = fed.feed(r)
        let (detector, filter) = (fed.detector, fed.filter)
        let level = filter.level.map { Double(r.measuredPower) - $0 }
        if r.time > world.stopAtChest - 3, r.time - lastPrint >= 1 {
            lastPrint = r.time
            let w = detector.windows(at: r.time, noiseVariance: filter.noiseVariance)
            print("t-stop \(format(r.time - world.stopAtChest, 1)) arrival \(detector.arrivalSince.map { format($0 - world.stopAtChest, 1) } ?? "-") typical \(format(detector.typicalLoss(at: r.time) ?? .nan, 1)) d \(format(r.distance, 2)) level loss \(format(level ?? .nan, 1)) noise sd \(format(filter.noiseVariance.squareRoot(), 1)) at hand \(detector.isAtHand) edge \(format(detector.edgeLoss, 1)) windows " + w.map { "\(format($0.mean, 1))±\(format($0.standardError, 1))" }.joined(separator: " "))
        }
    }
}

/// ARRIVAL_PROBE=N: on the tuning walks 1...N, by tag rate, the medians of when the at-hand
/// detector's arrival (its last one before the find) and the find came against the child's
/// stop at the chest, and of the wait between them (tuning aid: where a rate's find lag goes).
func probeArrivals(count: Int) {
    var byRate: [Int: [(arrival: Double, found: Double)]] = [:]
    for seed in 1...UInt64(max(1, count)) {
        let world = WalkingWorld(seed: seed)
        var fed = FedAtHand()
        var arrival: Double?
        for r in world.readings() {
            _ = fed.feed(r)
            guard r.time > world.stopAtChest - 15 else { continue }
            if let since = fed.detector.arrivalSince { arrival = since }
            if fed.detector.isAtHand {
                if let arrival {
                    let rate = Int((1 / world.advertisingInterval).rounded())
                    byRate[rate, default: []].append((arrival - world.stopAtChest, r.time - world.stopAtChest))
                }
                break
            }
        }
    }
    func median(_ values: [Double]) -> String { format(values.sorted()[values.count / 2], 2) }
    for (rate, list) in byRate.sorted(by: { $0.key > $1.key }) where !list.isEmpty {
        print("\(rate) Hz: \(list.count) walks first at hand from 15 s before the stop on; the arrival \(median(list.map(\.arrival))) s from the stop, "
              + "at hand \(median(list.map(\.found))) s, \(median(list.map { $0.found - $0.arrival })) s after the arrival")
    }
}

/// STILL_PROBE=ROW:SEED: the at-hand detector's arrivals standing still (tuning aid).
func probeStill(row: Int, seed: UInt64) {
    guard let c = family().first(where: { $0.index == row }) else { return }
    let (_, reports) = standingStill(c, seed: seed, until: 3600)
    var fed = FedAtHand()
    var arrived: Double?
    for r in reports where r.beacon == 0 {
        let changed = fed.feed(r)
        let (detector, filter) = (fed.detector, fed.filter)
        if detector.arrivalSince != arrived || changed {
            arrived = detector.arrivalSince
            let w = detector.windows(at: r.time, noiseVariance: filter.noiseVariance)
            print("t \(format(r.time, 1)) arrival \(arrived.map { format($0, 1) } ?? "-") at hand \(detector.isAtHand) noise sd \(format(filter.noiseVariance.squareRoot(), 1)) edge \(format(detector.edgeLoss, 1)) windows " + w.map { "\(format($0.mean, 1))±\(format($0.standardError, 1))" }.joined(separator: " "))
        }
    }
}

/// ENGINE_PROBE=SEED: the engine's trend and class events on a walk, and the lines heard.
func probeEngine(seed: UInt64, harshness: WalkingWorld.Harshness = .standard) {
    let world = WalkingWorld(seed: seed, harshness: harshness)
    var engine = tunedEngine()
    for r in world.readings() {
        for e in engine.ingest(RangingSample(key: OurRanger.key(r.beacon), measuredPower: r.measuredPower, rssi: r.rssi, time: r.time)) {
            switch e {
            case .range: continue
            default: print("t \(format(e.time, 1)) d \(format(world.distance(at: e.time), 1)): \(e)")
            }
        }
    }
    for leg in world.approaches() { print("leg \(format(leg.start, 1))-\(format(leg.end, 1))") }
    for l in oursOnWalk(world.readings(), until: world.duration).lines { print("said \(format(l.time, 1)) \(l.line.rawValue)") }
}

/// LEG_PROBE=N: the approach legs of tuning walks 1...N: rate, length, true level change, packets (tuning aid).
func probeLegs(count: Int) {
    for seed in 1...UInt64(count) {
        let world = WalkingWorld(seed: seed)
        let reports = world.readings()
        for leg in world.approaches() {
            let n = reports.count { $0.time >= leg.start && $0.time <= leg.end }
            print("seed \(seed) rate \(format(1 / world.advertisingInterval, 0)) dur \(format(leg.end - leg.start, 1)) d \(format(world.distance(at: leg.start), 1))->\(format(world.distance(at: leg.end), 1)) level \(format(world.meanRSSI(at: leg.start), 1))->\(format(world.meanRSSI(at: leg.end), 1)) packets \(n) sd \(format(world.packetSigma, 1))")
        }
    }
}

/// TREND_PROBE=N: for the approach legs of tuning walks 1...N, the trend test's best z during the leg (tuning aid).
func probeTrendLegs(count: Int) {
    let c = walkingConfiguration
    for seed in 1...UInt64(count) {
        let world = WalkingWorld(seed: seed)
        let reports = world.readings()
        var detector = TrendDetector(window: c.trendWindow, slope: c.trendSlope, reversalFactor: 1, minimumInterval: 0, zThreshold: 1e9,
                                     stepMargin: c.trendStepMargin, stepMarginReadings: c.trendStepMarginReadings)
        var filter = KalmanRSSIFilter(configuration: c)
        var looks: [(t: Double, z: Double?)] = []
        for r in reports {
            filter.update(rssi: r.rssi, time: r.time)
            _ = detector.update(value: Double(r.rssi), time: r.time, noiseVariance: filter.noiseVariance)
            looks.append((r.time, detector.statistic(at: r.time, noiseVariance: filter.noiseVariance)?.z))
        }
        for leg in world.approaches() {
            let inLeg = looks.filter { $0.t >= leg.start && $0.t <= leg.end + 3 }
            let zs = inLeg.compactMap(\.z)
            print("seed \(seed) rate \(format(1 / world.advertisingInterval, 0)) dur \(format(leg.end - leg.start, 1)) looks \(inLeg.count) refused \(inLeg.count - zs.count) maxz \(format(zs.max() ?? .nan, 1))")
        }
    }
}

/// WALK_EXPORT=DIR:FIRST:COUNT: walks FIRST...FIRST+COUNT-1 written as text for offline
/// experiments (scripts/bench/learned-ceiling.py): DIR/walk-SEED.txt holds a header line
/// (seed rate stopAtChest duration advertisedPowerError), then "r t rssi" per report, "p t d body" every
/// 0.25 s (true distance, body shadow dB) and "w t" for each engine warmer in process.
func exportWalks(directory: String, first: UInt64, count: Int, harshness: WalkingWorld.Harshness = .standard) {
    for seed in first..<(first + UInt64(count)) {
        let world = WalkingWorld(seed: seed, harshness: harshness)
        let reports = world.readings()
        var text = "\(seed) \(format(1 / world.advertisingInterval, 0)) \(format(world.stopAtChest, 3)) \(format(world.duration, 3)) \(format(Double(world.advertisedPower) - world.truePower, 1))\n"
        for r in reports { text += "r \(format(r.time, 3)) \(r.rssi)\n" }
        var t = 0.0
        while t <= world.duration {
            text += "p \(format(t, 2)) \(format(world.distance(at: t), 3)) \(format(world.bodyShadow(world.pose(at: t)), 2))\n"
            t += 0.25
        }
        for w in oursOnWalk(reports, until: world.duration).engineWarmers { text += "w \(format(w, 3))\n" }
        if !writeFile("\(directory)/walk-\(seed).txt", Array(text.utf8)) {
            RangingBenchmark.fail("cannot write \(directory)/walk-\(seed).txt", code: 73)
        }
    }
}

/// WARM_PROBE=ROW:SEED:T: standing still, the readings of the 35 s before T a second at a time (tuning aid).
func probeWarm(row: Int, seed: UInt64, at t: Double) {
    guard let c = family().first(where: { $0.index == row }) else { return }
    let (_, reports) = standingStill(c, seed: seed, until: t + 1)
    var second = Int(t) - 35
    while second <= Int(t) {
        let inIt = reports.filter { $0.beacon == 0 && $0.time >= Double(second) && $0.time < Double(second + 1) }
        let mean = inIt.isEmpty ? "-" : format(Double(inIt.map(\.rssi).reduce(0, +)) / Double(inIt.count), 1)
        print("\(second) n \(inIt.count) mean \(mean)")
        second += 1
    }
}
