#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FoundationEssentials
import Hunt
import Ranging
import Simulation

// MARK: A child walking a trail of chests (TrailWalk), scored line by line

/// The trail's rules: the walking rules (`WalkRules`) against the chest being hunted, which
/// is the step the hunter is on (the first not yet said found: every "treasure-found" line
/// moves the hunter on, true or not). Besides:
/// - "region-entered" is false when one was said already on the same step;
/// - "near" is false farther than 5 m or while the child stands at the hunted chest;
/// - an approach counts for chest k when it is a leg of the walk to it (after the child left
///   chest k - 1, before it stopped at chest k) and a warm line about chest k (the hunter on
///   step k) starts in it or `WalkRules.approachGrace` s after;
/// - chest k is found when "treasure-found" is said on step k with the child within 1.5 m of
///   it; its lag counts from the child's stop there.
struct TrailScore {
    var seconds = 0.0
    var falseLines: [LineEvent: Int] = [:]
    /// Per chest: the find lag (nil: not found).
    var lags: [Double?] = []
    /// Per chest: its tag's rate (Hz), approaches heard and legs.
    var rates: [Int] = []
    var approaches: [(heard: Int, legs: Int)] = []
    var outOfOrder = 0
}

/// `debug`: print each find and false line, and the finds, with this label.
func scoreTrail(_ trail: TrailWalk, _ told: WalkTold, debug label: String? = nil) -> TrailScore {
    let debug = label != nil
    let tag = label.map { "\($0): trail \(trail.seed)" } ?? ""
    var score = TrailScore()
    score.seconds = trail.duration
    score.lags = Array(repeating: nil, count: trail.chests.count)
    score.rates = trail.chests.map { Int((1 / $0.advertisingInterval).rounded()) }
    let last = trail.chests.count - 1
    var step = 0
    var enteredOnStep = false
    /// The step each line was said on.
    var steps: [Int] = []
    for (index, (time, line)) in told.lines.enumerated() {
        steps.append(step)
        let chest = trail.chests[step]
        let standing = time >= trail.stops[step] && time < trail.leaves[step]
        var isFalse = WalkRules.isFalse(line, about: chest, at: time, standing: standing) ?? false
        switch line {
        case .regionEntered:
            isFalse = enteredOnStep
            enteredOnStep = true
        case .outOfOrder: score.outOfOrder += 1
        case .treasureFound:
            // The treasure it names (the parent's found line, `trailFoundText`): a find said
            // again names a step before the hunted one.
            let of = trailFoundStep(told.texts[index]) ?? step
            let d = trail.chests[of].distance(at: time)
            isFalse = d >= 1.5
            if !isFalse, score.lags[of] == nil { score.lags[of] = time - trail.stops[of] }
            if debug { print("\(tag) step \(of + 1) found at t-stop \(format(time - trail.stops[of], 1)) d \(format(d, 2)) rate \(score.rates[of])") }
            if of == step {
                if step < last { step += 1 }
                enteredOnStep = false
            }
        default: break
        }
        if isFalse { score.falseLines[line, default: 0] += 1 }
        if isFalse, debug {
            let step = steps[steps.count - 1]
            let d = format(trail.chests[step].distance(at: time), 2)
            print("\(tag) step \(step + 1) false \(line.rawValue) t \(format(time, 1)) (stop \(format(trail.stops[step], 1))) d \(d) rate \(score.rates[step])")
        }
    }
    let warm: Set<LineEvent> = [.warmer, .proximityNear, .proximityImmediate, .treasureFound]
    for (k, chest) in trail.chests.enumerated() {
        let from = k == 0 ? 0 : trail.leaves[k - 1]
        var tally = (heard: 0, legs: 0)
        for leg in chest.approaches() where leg.start >= from && leg.start < trail.stops[k] {
            tally.legs += 1
            let heard = told.lines.indices.contains { i in
                steps[i] == k && warm.contains(told.lines[i].line) && told.lines[i].time >= leg.start
                    && told.lines[i].time <= leg.end + WalkRules.approachGrace
            }
            if heard { tally.heard += 1 }
        }
        score.approaches.append(tally)
    }
    if debug {
        print("\(tag) finds " + score.lags.map { $0.map { format($0, 1) } ?? "never" }.joined(separator: ", "))
    }
    return score
}

/// Our engine and the hunt rules in process on a trail: the regions of its steps (chest k's
/// tag is minor 1 + k of the walking UUID, as in the captures), the director with the trail,
/// "no reward" told `rewardTimeout` s after each find (a tag with no box, as the replay's
/// configuration: `announce.reward_timeout`).
///
/// `anyOrder`: the trail is `any_order` and lists the chests last first, so the child walks to
/// chests that are not the step being hunted (`TrailProgress.tick` finds them), and to the
/// hunted one last. The director's other lines are then about the last chest, not the one
/// walked to: only the finds (chests found, whole trails, lags, found wrong) mean anything.
func oursOnTrail(_ reports: [SimulatedReading], chests: Int, until end: Double, lineSeconds: Double = 2,
                 rewardTimeout: Double = trailRewardTimeout, anyOrder: Bool = false) -> WalkTold {
    let c = walkingConfiguration
    let regions = (0..<chests).map { Region(name: "chest \($0 + 1)", uuid: OurRanger.uuid, major: 1, minor: UInt16($0)) }
    var hunt = tunedHunt(c)
    let steps = regions.enumerated().map { TrailStep(region: $1, clue: .text("Find chest \($0 + 1)."), found: trailFoundText($0)) }
    hunt.trail = anyOrder ? steps.reversed() : steps
    hunt.trailRules.order = anyOrder ? .anyOrder : .inOrder
    return huntInProcess(reports, until: end, engine: RangingEngine(configuration: c, regions: regions, atHand: tunedAtHand(c)),
                         director: HuntDirector(configuration: hunt), lineSeconds: lineSeconds, rewardTimeout: rewardTimeout)
}

/// The parent's own found line of trail step `step` (`hunt.trail[].found`): what tells the
/// scoring which treasure a find is of.
func trailFoundText(_ step: Int) -> String { "Found chest \(step + 1)." }

/// The step a found line is of, from its words (`trailFoundText`).
func trailFoundStep(_ text: String?) -> Int? {
    guard let text, text.hasPrefix("Found chest "), text.hasSuffix("."), let n = Int(text.dropFirst(12).dropLast()) else { return nil }
    return n - 1
}

/// How long the hunter listens for a box's reward after a find (`announce.reward_timeout` of
/// the trail captures' configuration): the tags of the trail walks have none.
let trailRewardTimeout = 3.0

/// The configuration `replay --hunt` gets with a trail capture: the trail's chests as steps
/// in order (chest k: the walking UUID, major 1, minor 1 + k, as `advertisingReportEvent`
/// writes it), a short clue each, and a 3 s wait for a reward no tag sends; `anyOrder`: listed
/// last first, `any_order` (as `oursOnTrail`).
func trailConfiguration(chests: Int, anyOrder: Bool = false) -> String {
    let hex = walkingUUID.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }
    let uuid = [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    let steps = (0..<chests).map {
        "{ \"region\": \"\(uuid):1:\($0 + 1)\", \"clue\": \"Find chest \($0 + 1).\", \"found\": \"\(trailFoundText($0))\" }"
    }
    return """
        {
          "transport": "auto",
          "regions": [{ "name": "treasure", "uuid": "\(uuid)" }],
          "voice": { "language": "en-family", "rate": 175, "pitch": 50, "volume": 100 },
          "audio": { "device": "auto", "volume_db": 0 },
          "hunt": { "found_hold": 0.5, "order": "\(anyOrder ? "any_order" : "in_order")", "trail": [\((anyOrder ? steps.reversed() : steps).joined(separator: ", "))] },
          "announce": { "reward_timeout": \(Int(trailRewardTimeout)) },
          "json": false
        }

        """
}

func runTrails(heldOut: Bool, count: Int, firstSeed: UInt64? = nil, chests: Int, spacing: Double, writeCaptures: String?,
               replays: String?, harshness: WalkingWorld.Harshness = .standard, anyOrder: Bool = false) {
    let seeds = walkingSeeds(heldOut: heldOut, count: count, first: firstSeed)
    var rows: [String: [(TrailWalk, TrailScore)]] = [:]
    let names = (replays == nil ? [] : ["ours (replay --hunt)"]) + ["ours (in process)"]
    for seed in seeds {
        let trail = TrailWalk(seed: seed, chests: chests, spacing: spacing, harshness: harshness)
        let reports = trail.readings()
        if let directory = writeCaptures {
            if !writeFile("\(directory)/walk-\(seed).btsnoop", captureBytes(reports))
                || !writeFile("\(directory)/walk-\(seed).json", Array(trailConfiguration(chests: chests, anyOrder: anyOrder).utf8)) {
                RangingBenchmark.fail("cannot write \(directory)/walk-\(seed).btsnoop or .json", code: 73)
            }
        }
        var told = ["ours (in process)": oursOnTrail(reports, chests: chests, until: trail.duration, anyOrder: anyOrder)]
        if let directory = replays {
            guard let replayed = parseReplay("\(directory)/walk-\(seed).jsonl", start: reports.first?.time ?? 0) else {
                RangingBenchmark.fail("no \(directory)/walk-\(seed).jsonl (scripts/bench/walking-replay.sh writes it)", code: 66)
            }
            told["ours (replay --hunt)"] = replayed
        }
        for (name, t) in told { rows[name, default: []].append((trail, scoreTrail(trail, t, debug: walkDebug ? (name.hasPrefix("ours (replay") ? "replay" : "process") : nil))) }
    }
    if writeCaptures != nil, replays == nil { print("wrote \(seeds.count) captures") }
    let rates = harshness.rate.map { "every tag at \(rateName($0))" } ?? "tags at 10/4/2/1 Hz in turn"
    let order = anyOrder ? ", listed last first in any order: only the finds' columns mean anything" : ""
    print("Trails of \(chests) chests at least \(format(spacing, 1)) m apart\(order) (\(heldOut ? "held-out" : "tuning") walks, seeds \(seeds.first ?? 0)...\(seeds.last ?? 0); \(rates)\(radioDescription(harshness))):")
    print("| ranger | false lines/h | left/entered/unknown | near/far/immediate | warmer/colder | found wrong | approaches heard 10 Hz | 4 Hz | 1-2 Hz | chests found | trails whole | find lag median/p90 s | first chest / later | out of order |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names {
        guard let row = rows[name] else { continue }
        func recall(_ wanted: Set<Int>) -> String {
            var heard = 0, legs = 0
            for (_, s) in row {
                for (k, tally) in s.approaches.enumerated() where wanted.contains(s.rates[k]) {
                    heard += tally.heard
                    legs += tally.legs
                }
            }
            return legs == 0 ? "-" : "\(format(Double(heard) / Double(legs), 2)) (\(heard)/\(legs))"
        }
        let lags = row.flatMap { $0.1.lags.compactMap { $0 } }
        let firstLags = row.compactMap { $0.1.lags.first ?? nil }, laterLags = row.flatMap { $0.1.lags.dropFirst().compactMap { $0 } }
        func med(_ x: [Double]) -> String { x.isEmpty ? "-" : format(median(x), 2) }
        let whole = row.filter { $0.1.lags.allSatisfy { $0 != nil } }.count
        print("| \(name) | \(falseLineColumns(row.map { ($0.1.seconds, $0.1.falseLines) })) | "
              + "\(recall([10])) | \(recall([4])) | \(recall([1, 2])) | \(lags.count)/\(row.count * chests) | \(whole)/\(row.count) | "
              + "\(lags.isEmpty ? "-" : format(median(lags), 2) + "/" + format(percentile(lags, 0.9), 1)) | "
              + "\(med(firstLags)) / \(med(laterLags)) | \(row.reduce(0) { $0 + $1.1.outOfOrder }) |")
    }
    print("(\(format(rows[names.last ?? ""]?.reduce(0) { $0 + $1.1.seconds / 3600 } ?? 0, 2)) h of trails; definitions: docs/ranging.md, \"Trails\")")
}

/// TRAIL_PROBE=SEED (with --walking ... --trail N): the lines said in process on one trail,
/// each with the true distance to every chest, and the chests' tags (tuning aid).
func probeTrail(seed: UInt64, chests: Int, spacing: Double, harshness: WalkingWorld.Harshness, anyOrder: Bool = false) {
    let trail = TrailWalk(seed: seed, chests: chests, spacing: spacing, harshness: harshness)
    for (k, chest) in trail.chests.enumerated() {
        print("chest \(k + 1) at (\(format(trail.spots[k].x, 1)), \(format(trail.spots[k].y, 1))) rate \(format(1 / chest.advertisingInterval, 0)) error \(Double(chest.advertisedPower) - chest.truePower) stop \(format(trail.stops[k], 1)) leave \(format(trail.leaves[k], 1))")
    }
    if let k = getenv("TRAIL_CHEST").flatMap({ Int(String(cString: $0)) }), trail.chests.indices.contains(k - 1) {
        // Chest k's readings from a minute before its stop, 2 s at a time.
        let chest = trail.chests[k - 1], readings = trail.readings().filter { $0.beacon == k - 1 }
        var t = trail.stops[k - 1] - 60
        while t < trail.leaves[k - 1] {
            let inIt: [Int] = readings.filter { $0.time >= t && $0.time < t + 2 }.map(\.rssi)
            let since = format(t - trail.stops[k - 1], 0), d = format(chest.distance(at: t), 1)
            print("chest \(k) t-stop \(since) d \(d) readings \(inIt)")
            t += 2
        }
    }
    for line in oursOnTrail(trail.readings(), chests: chests, until: trail.duration, anyOrder: anyOrder).lines {
        let d = trail.chests.map { format($0.distance(at: line.time), 1) }.joined(separator: " ")
        print("t \(format(line.time, 1)) \(line.line.rawValue) d \(d)")
    }
}
