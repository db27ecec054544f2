import Hunt
import Ranging
import Simulation

// MARK: What the child hears standing still

/// The engine's events of a standing-still run through the appliance's own hunt rules
/// (`HuntDirector`: only the nearest beacon's class is said, trends rate-limited, a lesser
/// line waits behind a greater one or goes stale). Nothing moves, so every line is false but
/// the start-up line, the first "land ho" and the first class said. A line takes
/// `lineSeconds` to say.
func heardStandingStill(_ c: Condition, seed: UInt64, minutes: Double, lineSeconds: Double = 2) -> (lines: [LineEvent: Int], hours: Double) {
    let end = minutes * 60
    let (_, reports) = standingStill(c, seed: seed, until: end)
    var engine = RangingEngine(configuration: simulatedConfiguration, regions: [Region(name: "treasure", uuid: OurRanger.uuid)])
    var director = HuntDirector(configuration: HuntDirector.Configuration(region: "treasure"))
    var lines: [LineEvent: Int] = [:]
    var speechEnds: Double?
    var told: Set<String> = []
    func apply(_ actions: [HuntAction], at time: Double) {
        for action in actions {
            let event: LineEvent
            switch action {
            case .sound: continue
            case let .say(e, _): event = e
            case let .tell(e, _, _): event = e
            }
            speechEnds = time + lineSeconds
            // The first of each kind of initial news is true: the start, being inside, the class.
            let news: String?
            switch event {
            case .startup: news = "startup"
            case .regionEntered: news = "entered"
            case .proximityImmediate, .proximityNear, .proximityFar: news = "class"
            default: news = nil
            }
            if let news, !told.contains(news) {
                told.insert(news)
                continue
            }
            lines[event, default: 0] += 1
        }
    }
    func finishSpeech(by time: Double) {
        if let ends = speechEnds, ends <= time {
            speechEnds = nil
            apply(director.handle(.speechFinished, at: ends), at: ends)
        }
    }
    apply(director.handle(.started, at: 0), at: 0)
    var nextTick = 0.0
    for report in reports where report.time < end {
        while nextTick <= report.time {
            finishSpeech(by: nextTick)
            for event in engine.advance(to: nextTick) { apply(director.handle(.ranging(event), at: nextTick), at: nextTick) }
            apply(director.tick(at: nextTick), at: nextTick)
            nextTick += 0.1
        }
        let sample = RangingSample(key: OurRanger.key(report.beacon), measuredPower: report.measuredPower, rssi: report.rssi,
                                   time: report.time)
        for event in engine.ingest(sample) { apply(director.handle(.ranging(event), at: report.time), at: report.time) }
    }
    return (lines, end / 3600)
}

/// Lines heard per hour standing still, per row, by kind: what reaches the child of the
/// engine's false claims.
func runHeard(_ conditions: [Condition], title: String, seeds: [UInt64], stillMinutes: Double) {
    print("Heard standing still at 1.5-3 m through the hunt rules (\(title)): \(conditions.count) conditions x \(seeds.count) seeds, "
          + "\(format(stillMinutes, 0)) min per run, lines per hour but the start-up, the first enter and the first class (every one is false)")
    print("| condition | lines/h | region left | region entered | far | near | immediate | warmer | colder | found | ours <= 1/h |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    var rowNames: [String] = []
    var rows: [String: (lines: [LineEvent: Int], hours: Double)] = [:]
    for c in conditions {
        if !rowNames.contains(c.rowName) { rowNames.append(c.rowName) }
        for seed in seeds {
            let heard = heardStandingStill(c, seed: seed, minutes: stillMinutes)
            var row = rows[c.rowName] ?? ([:], 0)
            row.lines.merge(heard.lines, uniquingKeysWith: +)
            row.hours += heard.hours
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
        print("| \(name) | **\(format(total, 2))** | \(cells) | \(total <= 1 ? "yes" : "NO") |")
    }
}
