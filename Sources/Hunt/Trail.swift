import Ranging

/// One treasure of a trail: where it is (a region of the ranging engine), what is said when
/// its step begins, what helps a child who is stuck, and what is said when it is found.
public struct TrailStep: Sendable, Equatable {
    /// What the parent wrote or recorded for the step's start.
    public enum Clue: Sendable, Equatable {
        case text(String)
        /// A WAV file the parent recorded (played after the pack's lead-in).
        case recording(String)
    }

    public var region: Region
    public var clue: Clue?
    /// Said instead of a generic hint from the line pack.
    public var hint: String?
    /// Said instead of the pack's treasure-found line.
    public var found: String?
    /// The step's own reward, read and shown after its find as a treasure box's is (no box
    /// needed: nothing is listened for over the air).
    public var reward: String?
    /// A treasure box is this step (issue #25): it is found only once the box proved it is
    /// there (its reward, sealed for this hunter's challenge, verified), never by the
    /// presence of its iBeacon alone, which anyone can copy.
    public var box: Bool

    public init(region: Region, clue: Clue? = nil, hint: String? = nil, found: String? = nil, reward: String? = nil, box: Bool = false) {
        self.region = region
        self.box = box
        self.clue = clue
        self.hint = hint
        self.found = found
        self.reward = reward
    }
}

/// Whether the treasures must be found in the trail's order.
public enum TrailOrder: String, Sendable, CaseIterable {
    case inOrder = "in_order"
    case anyOrder = "any_order"
}

/// Whether other hunters' finds are told (`race`) or only heard and kept (`solo`).
public enum HuntMode: String, Sendable, CaseIterable {
    case solo
    case race
}

/// What a trail line is about: the values a line pack's `{placeholders}` take, and the
/// parent's own words when the step has them.
public struct LineDetail: Sendable, Equatable {
    /// The trail step the line is about (0-based).
    public var step: Int?
    /// The treasure the line names, 1-based (`{treasure}`).
    public var treasure: Int?
    /// The treasure to find next, 1-based (`{next}`).
    public var next: Int?
    /// Another hunter's id (`{hunter}`).
    public var hunter: UInt16?
    /// Time taken, seconds (`{minutes}` and `{seconds}`).
    public var seconds: Double?
    /// How many (`{count}`): other hunters' finds told in one line.
    public var count: Int?
    /// The parent's text (a clue, a hint, a found line), said as written.
    public var text: String?
    /// A recording of the parent (a clue), played after the line.
    public var recording: String?
    /// The parent's page (`{host}`: the Pi's name, `{port}`, `{code}`: the setup code, said
    /// digit by digit in two groups).
    public var host: String?
    public var port: Int?
    public var code: String?

    public init(
        step: Int? = nil, treasure: Int? = nil, next: Int? = nil, hunter: UInt16? = nil, seconds: Double? = nil,
        text: String? = nil, recording: String? = nil, count: Int? = nil, host: String? = nil, port: Int? = nil,
        code: String? = nil
    ) {
        self.host = host
        self.port = port
        self.code = code
        self.count = count
        self.step = step
        self.treasure = treasure
        self.next = next
        self.hunter = hunter
        self.seconds = seconds
        self.text = text
        self.recording = recording
    }

    /// The pack line's placeholders filled in: `{treasure}`, `{next}`, `{hunter}`, `{count}`,
    /// `{minutes}`, `{seconds}`, `{host}`, `{port}`, `{code}`; a placeholder without a value is
    /// left out.
    /// `{NAME:ONE:MANY}` adds the word for the number: `{minutes:minute:minutes}` is
    /// "1 minute", "2 minutes" (for packs whose language counts that way).
    public func fill(_ template: String) -> String {
        var values: [String: String] = [:]
        if let treasure { values["treasure"] = String(treasure) }
        if let next { values["next"] = String(next) }
        if let hunter { values["hunter"] = String(hunter) }
        if let count { values["count"] = String(count) }
        if let host { values["host"] = host }
        if let port { values["port"] = String(port) }
        if let code {
            // "042917" -> "0 4 2, 9 1 7": a digit at a time, in two groups.
            let digits = code.map(String.init)
            let half = (digits.count + 1) / 2
            values["code"] = digits.prefix(half).joined(separator: " ") + ", " + digits.dropFirst(half).joined(separator: " ")
        }
        if let seconds {
            let whole = max(0, Int(seconds.rounded()))
            values["minutes"] = String(whole / 60)
            values["seconds"] = String(whole % 60)
        }
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else {
                rest = rest[open...]
                break
            }
            let parts = rest[rest.index(after: open)..<close].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if let value = values[parts[0]] {
                out += value
                if parts.count == 3 { out += " " + (value == "1" ? parts[1] : parts[2]) }
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}

/// Where a hunter is on a trail: which treasures are found, which step is being hunted,
/// when a stuck child is owed a hint, which rival finds were told. Pure: ranging events and
/// time come in; the `HuntDirector` turns what it says into lines.
///
/// The step being hunted is the first treasure not yet found. Its own find is judged by the
/// director (immediate held for the find's hold, `FindHoldRule`); the other treasures are watched here: one held
/// at immediate is a find in `any_order`, and "that be treasure N, but first find M" (once
/// while the child stays there) in `in_order`.
public struct TrailProgress: Sendable {
    public struct Rules: Sendable, Equatable {
        public var order: TrailOrder = .inOrder
        /// A hint after this long on one step without progress (s).
        public var hintAfter = 90.0
        /// At most one hint per this many seconds (s).
        public var hintInterval = 60.0
        /// Immediate held this long is a find, as for the director: `found_hold`, waived for a
        /// slow tag and lengthened for a fast one (`HuntDirector.Configuration`, which sets it).
        public var findHold = FindHoldRule()
        public var mode: HuntMode = .solo
        public init() {}
    }

    /// A treasure other than the hunted one, held at immediate.
    public enum Finding: Sendable, Equatable {
        /// `any_order`: step `step` is found.
        case found(step: Int)
        /// `in_order`: the child is at step `at`, but step `expected` comes first.
        case outOfOrder(at: Int, expected: Int)
    }

    /// What a find leads to.
    public enum Next: Sendable, Equatable {
        /// The step to hunt now.
        case step(Int)
        /// The trail is done, `seconds` after it began.
        case finished(seconds: Double)
        /// That step was found before (nothing to say).
        case alreadyFound
    }

    struct Watch: Sendable {
        var inside = false
        var nearest: BeaconKey?
        var proximity: Proximity = .unknown
        var immediateSince: Double?
        /// The last `RangeReport.readingRate` heard of its nearest beacon (of any of its
        /// beacons while none is nearest yet), and whose it was.
        var heard: (key: BeaconKey, rate: Double?)?
        /// How often its nearest beacon is heard (nil: not known).
        var rate: Double? { heard.flatMap { $0.key == nearest ? $0.rate : nil } }
        /// The out-of-order line was said for this stay at immediate.
        var told = false
    }

    /// Rival finds told are remembered (one line per hunter and treasure); ids come from
    /// the air, so at most this many, the oldest forgotten first.
    public static let maximumRivals = 64

    public let steps: [TrailStep]
    public let rules: Rules
    public private(set) var found: [Bool]
    public private(set) var startedAt: Double?
    public private(set) var finishedAt: Double?
    private var watches: [Watch]
    private var stepSince = 0.0
    /// When the child last got closer to the current step (entered, a closer class, warmer).
    public private(set) var lastProgress = -Double.infinity
    private var lastHint = -Double.infinity
    private var best: Proximity = .unknown
    private var rivalsTold: [RivalFind] = []

    struct RivalFind: Sendable, Equatable {
        var hunter: UInt16
        var step: Int
    }

    public init(steps: [TrailStep], rules: Rules = Rules()) {
        self.steps = steps
        self.rules = rules
        found = Array(repeating: false, count: steps.count)
        watches = Array(repeating: Watch(), count: steps.count)
    }

    /// The step being hunted: the first not found (nil once all are).
    public var current: Int? { found.firstIndex(of: false) }
    public var isFinished: Bool { current == nil }
    public var foundCount: Int { found.count { $0 } }

    /// The hunt begins: the clock of the trail and of its first step.
    public mutating func start(at time: Double) {
        guard startedAt == nil else { return }
        startedAt = time
        stepSince = time
    }

    /// What the ranging engine said, for every step's region.
    public mutating func observe(_ event: RangingEvent, at time: Double) {
        let current = self.current
        for i in steps.indices {
            let region = steps[i].region
            switch event {
            case let .regionState(_, name, state) where name == region.name:
                if state == .inside, !watches[i].inside, i == current { lastProgress = time }
                watches[i].inside = state == .inside
            case let .regionEnter(_, name) where name == region.name:
                if !watches[i].inside, i == current { lastProgress = time }
                watches[i].inside = true
            case let .regionExit(_, name) where name == region.name:
                watches[i] = Watch()
            case let .nearest(_, name, key) where name == region.name:
                watches[i].nearest = key
            case let .range(report) where region.contains(report.key) && (watches[i].nearest ?? report.key) == report.key:
                watches[i].heard = (report.key, report.readingRate)
            case let .proximity(_, key, _, to) where region.contains(key) && (watches[i].nearest == nil || watches[i].nearest == key):
                watches[i].nearest = key
                guard to != watches[i].proximity else { break }
                watches[i].proximity = to
                if to == .immediate {
                    watches[i].immediateSince = time
                } else {
                    watches[i].immediateSince = nil
                    watches[i].told = false
                }
                if i == current, to < best {
                    best = to
                    lastProgress = time
                }
            case let .trend(_, name, .warmer) where name == region.name && i == current:
                lastProgress = time
            default:
                break
            }
        }
    }

    /// The first time after `time` when `tick` has a treasure other than the hunted one to
    /// tell, its hold over (nil: none held at immediate is due later).
    public func nextDeadline(after time: Double) -> Double? {
        steps.indices.compactMap { due($0) }.filter { $0 > time }.min()
    }

    /// When treasure `i`, not the hunted one, is news: held at immediate for the find's hold
    /// (`findHold`, by how often its nearest beacon is heard), not found or told yet (nil:
    /// not held, or the trail not begun or done).
    private func due(_ i: Int) -> Double? {
        guard let current, startedAt != nil, i != current, !found[i] else { return nil }
        let w = watches[i]
        guard w.inside, !w.told, let since = w.immediateSince else { return nil }
        return since + rules.findHold.hold(rates: [w.rate])
    }

    /// Treasures other than the hunted one that the child has been at for the find's hold.
    public mutating func tick(at time: Double) -> [Finding] {
        guard let current else { return [] }
        var findings: [Finding] = []
        for i in steps.indices {
            guard let due = due(i), time >= due else { continue }
            switch rules.order {
            case .anyOrder:
                findings.append(.found(step: i))
            case .inOrder:
                watches[i].told = true
                findings.append(.outOfOrder(at: i, expected: current))
            }
        }
        return findings
    }

    /// Step `step` was found at `time`.
    public mutating func markFound(_ step: Int, at time: Double) -> Next {
        guard found.indices.contains(step), !found[step] else { return .alreadyFound }
        found[step] = true
        watches[step].told = true
        guard let next = current else {
            finishedAt = time
            return .finished(seconds: time - (startedAt ?? time))
        }
        stepSince = time
        lastProgress = -Double.infinity
        lastHint = -Double.infinity
        best = watches[next].proximity
        return .step(next)
    }

    /// What the trail knows of step `step`'s region (for the director, when the step begins).
    public func region(of step: Int) -> (inside: Bool, nearest: BeaconKey?, proximity: Proximity, immediateSince: Double?, rate: Double?) {
        guard watches.indices.contains(step) else { return (false, nil, .unknown, nil, nil) }
        let w = watches[step]
        return (w.inside, w.nearest, w.proximity, w.immediateSince, w.rate)
    }

    /// A hint is owed: `hintAfter` on the step without progress (no warmer trend, no better
    /// proximity, no enter), and `hintInterval` since the last hint.
    public func hintDue(at time: Double) -> Bool {
        guard startedAt != nil, current != nil else { return false }
        let since = max(stepSince, lastProgress)
        return time - since >= rules.hintAfter && time - lastHint >= rules.hintInterval
    }

    /// The hint was said.
    public mutating func hintGiven(at time: Double) { lastHint = time }

    /// Another hunter announced finding step `step`'s treasure: true the first time it is
    /// worth telling (race mode, a treasure this hunter has not found yet).
    public mutating func rival(_ hunter: UInt16, found step: Int) -> Bool {
        guard rules.mode == .race, found.indices.contains(step), !found[step] else { return false }
        let find = RivalFind(hunter: hunter, step: step)
        guard !rivalsTold.contains(find) else { return false }
        if rivalsTold.count >= Self.maximumRivals { rivalsTold.removeFirst() }
        rivalsTold.append(find)
        return true
    }
}
