#if canImport(Glibc)
import Glibc
#endif
import Hunt
import Ranging
import Simulation

// MARK: What the child hears standing still

/// The lines a child hears from these reports: the engine's events through the appliance's
/// own hunt rules (`HuntDirector`: only the nearest beacon's class is said, trends
/// rate-limited, a lesser line waits behind a greater one or goes stale), in order with the
/// time each is said. A line takes `lineSeconds` to say.
func heardLines(_ reports: [SimulatedReading], until end: Double, lineSeconds: Double = 2) -> [(time: Double, line: LineEvent)] {
    let c = walkingConfiguration
    return huntInProcess(reports, until: end, engine: tunedEngine(c), director: HuntDirector(configuration: tunedHunt(c)),
                         lineSeconds: lineSeconds).lines
}

/// HEARD_DEBUG=1: each false line standing still, with the beacons' true distances (tuning aid).
let heardDebug = getenv("HEARD_DEBUG") != nil

/// Standing still: nothing moves, so every line is false but the start-up line, the first
/// "land ho" and the first class said. Also how long the child believes a false "far": the
/// seconds after the first class during which the last class said was "far" while the
/// closest beacon is at <= 2 m (0 of 0 when none is that close).
func heardStandingStill(_ c: Condition, seed: UInt64, minutes: Double)
    -> (lines: [LineEvent: Int], hours: Double, farSeconds: Double, closeSeconds: Double) {
    let end = minutes * 60
    let (beacons, reports) = standingStill(c, seed: seed, until: end)
    let close = (beacons.map { $0.path.distance(at: 0) }.min() ?? .infinity) <= 2
    var counts: [LineEvent: Int] = [:]
    var told: Set<String> = []
    var said: (line: LineEvent, since: Double)?
    var farSeconds = 0.0
    var firstClass: Double?
    for (time, line) in heardLines(reports, until: end) {
        if [.proximityImmediate, .proximityNear, .proximityFar, .regionLeft].contains(line) {
            if let s = said, s.line == .proximityFar { farSeconds += time - s.since }
            said = (line, time)
            if firstClass == nil, line != .regionLeft { firstClass = time }
        }
        let news: String?
        switch line {
        case .startup: news = "startup"
        case .regionEntered: news = "entered"
        case .proximityImmediate, .proximityNear, .proximityFar: news = "class"
        default: news = nil
        }
        if let news, !told.contains(news) {
            told.insert(news)
            continue
        }
        counts[line, default: 0] += 1
        if heardDebug {
            let distances = beacons.map { format($0.path.distance(at: time), 2) }.joined(separator: "/")
            print("heard #\(c.index) \(c.rowName) seed \(seed) t \(format(time, 1)) \(line.rawValue) at \(distances) m")
        }
    }
    if let s = said, s.line == .proximityFar { farSeconds += end - s.since }
    let closeSeconds = close ? end - (firstClass ?? end) : 0
    return (counts, end / 3600, close ? farSeconds : 0, closeSeconds)
}

/// The step to 6-8 m: seconds from the step until the child hears "far" (60 if never), and
/// whether a "near" or "immediate" followed it (the far did not last).
func heardStep(_ c: Condition, seed: UInt64) -> (seconds: Double, undone: Bool) {
    let step = stepRun(c, seed: seed)
    let after = heardLines(step.reports, until: step.end).filter { $0.time >= step.time }
    guard let far = after.firstIndex(where: { $0.line == .proximityFar }) else { return (step.end - step.time, false) }
    let undone = after[far...].contains { $0.line == .proximityNear || $0.line == .proximityImmediate }
    return (after[far].time - step.time, undone)
}

/// Lines heard per hour standing still, per row, by kind (what reaches the child of the
/// engine's false claims), and how soon the step to 6-8 m is heard.
func runHeard(_ conditions: [Condition], title: String, seeds: [UInt64], stillMinutes: Double) {
    print("Heard standing still at 1.5-3 m through the hunt rules (\(title)): \(conditions.count) conditions x \(seeds.count) seeds, "
          + "\(format(stillMinutes, 0)) min per run, lines per hour but the start-up, the first enter and the first class (every one is false)")
    print("| condition | lines/h | region left | region entered | far | near | immediate | warmer | colder | found | ours <= 1/h | told far at <= 2 m, % of time | step: far heard, s (median/p90) | far undone |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    var rowNames: [String] = []
    var rows: [String: (lines: [LineEvent: Int], hours: Double, steps: [Double], undone: Int, far: Double, close: Double)] = [:]
    for c in conditions {
        if !rowNames.contains(c.rowName) { rowNames.append(c.rowName) }
        for seed in seeds {
            let heard = heardStandingStill(c, seed: seed, minutes: stillMinutes)
            let step = heardStep(c, seed: seed)
            var row = rows[c.rowName] ?? ([:], 0, [], 0, 0, 0)
            row.lines.merge(heard.lines, uniquingKeysWith: +)
            row.hours += heard.hours
            row.far += heard.farSeconds
            row.close += heard.closeSeconds
            row.steps.append(step.seconds)
            if step.undone { row.undone += 1 }
            rows[c.rowName] = row
        }
    }
    let kinds: [LineEvent] = [.regionLeft, .regionEntered, .proximityFar, .proximityNear, .proximityImmediate, .warmer, .colder,
                              .treasureFound]
    for name in rowNames {
        guard let row = rows[name] else { continue }
        let hours = max(row.hours, 1e-9)
        let total = Double(row.lines.values.reduce(0, +)) / hours
        let cells = kinds.map { format(Double(row.lines[$0] ?? 0) / hours, 2) }.joined(separator: " | ")
        let steps = "\(format(median(row.steps), 1))/\(format(percentile(row.steps, 0.9), 1))"
        let far = row.close > 0 ? format(100 * row.far / row.close, 1) : "-"
        print("| \(name) | **\(format(total, 2))** | \(cells) | \(total <= 1 ? "yes" : "NO") | \(far) | \(steps) | \(row.undone) of \(row.steps.count) |")
    }
}

/// HEARD_PROBE=ROW:SEED:FROM:TO: standing still, the engine's events (ranges of the nearest
/// beacon) and the hunt's lines between FROM and TO s, with each report's RSSI (tuning aid).
func probeHeard(row: Int, seed: UInt64, from: Double, to: Double) {
    guard let c = family().first(where: { $0.index == row }) else { return }
    let (beacons, reports) = standingStill(c, seed: seed, until: to)
    print(c.summary, beacons.map { "beacon \($0.id) at \(format($0.path.distance(at: 0), 2)) m" }.joined(separator: ", "))
    // The simulator's own episodes (the family's runs are seeded so; not the stress rows').
    for (b, episodes) in RadioSimulator(beacons: beacons, model: c.model, seed: seed).shadowEpisodes(until: to).enumerated() {
        for e in episodes where e.end >= from {
            print("body: beacon \(b) \(format(e.start, 1))-\(format(e.end, 1)) s, \(format(e.depth, 0)) dB")
        }
    }
    var engine = tunedEngine()
    var filters: [Int: KalmanRSSIFilter] = [:]
    for r in reports {
        var filter = filters[r.beacon] ?? KalmanRSSIFilter(configuration: walkingConfiguration)
        let dipBefore = filter.lastDipUndone
        filter.update(rssi: r.rssi, time: r.time)
        filters[r.beacon] = filter
        if filter.lastDipUndone != dipBefore, r.time >= from { print("t \(format(r.time, 1)) b\(r.beacon) dip undone") }
        let events = engine.ingest(RangingSample(key: OurRanger.key(r.beacon), measuredPower: r.measuredPower, rssi: r.rssi, time: r.time))
        guard r.time >= from else { continue }
        var text = "t \(format(r.time, 1)) b\(r.beacon) rssi \(r.rssi)"
        for e in events {
            switch e {
            case let .range(report): text += " range \(report.distance.map { format($0.meters, 2) } ?? "-") level \(format(report.rssi, 1))"
            default: text += " \(e)"
            }
        }
        print(text)
    }
    for l in heardLines(reports, until: to) where l.time >= from { print("said \(format(l.time, 1)) \(l.line.rawValue)") }
}
