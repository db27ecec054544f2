public import Ranging

/// Everything the treasure box's screen shows, as plain values (no clock inside: times are
/// seconds on whatever clock the caller uses, the same one it passes as `now` to `render`).
///
/// Every word on the screen and in the log comes from a field here, never from a guess:
/// "warmer"/"colder" only from `Hunter.trend`, "found it" only from `Hunter.found` or
/// `standings`, a distance only when it agrees with the proximity class (`proximityEdges`).
public struct KioskState: Sendable, Equatable {
    /// What the box's own beacon is doing.
    public enum Advertising: Sendable, Equatable {
        /// Not on the air, and why (e.g. "adapter hci1 down").
        case waiting(String)
        /// On the air from `adapter` ("hci1") with the `family` of HCI commands ("legacy" or "extended").
        case advertising(adapter: String, family: String)
    }

    /// A hunter whose beacon the box hears.
    public struct Hunter: Sendable, Equatable {
        public var id: UInt16
        /// The committed proximity class: the only source of "far away", "close", "right here".
        public var proximity: Proximity
        /// Estimated distance in metres, nil when unknown. Shown only when it agrees with
        /// `proximity` (see `KioskState.shownDistance`).
        public var distance: Double?
        /// The hunter's recent trend, nil when there is none to tell: the only source of
        /// "warmer" and "colder" (nil says neither).
        public var trend: Trend?
        /// The hunter announced it found this box's treasure: the only source of "found it!"
        /// beside a hunter (shown there only while it is near or right here; the standings
        /// keep the find).
        public var found: Bool
        /// When the hunter was last heard.
        public var lastSeen: Double

        public init(
            id: UInt16, proximity: Proximity, distance: Double? = nil, trend: Trend? = nil, found: Bool = false,
            lastSeen: Double
        ) {
            self.id = id
            self.proximity = proximity
            self.distance = distance
            self.trend = trend
            self.found = found
            self.lastSeen = lastSeen
        }

        /// "found it!" may be said beside this hunter now: it found it and is still near.
        public var foundAndNear: Bool { found && (proximity == .near || proximity == .immediate) }
    }

    /// The box is greeting a hunter and showing the reward as a QR code.
    public struct Greeting: Sendable, Equatable {
        public var hunterID: UInt16
        public var at: Double
        /// The QR code, already drawn as lines of block characters (one column each, quiet zone
        /// included). They are shown exactly as given, in the terminal's default colours, never cut.
        /// Empty when there is no reward.
        public var qrLines: [String]

        public init(hunterID: UInt16, at: Double, qrLines: [String]) {
            self.hunterID = hunterID
            self.at = at
            self.qrLines = qrLines
        }
    }

    /// The trail the box's treasure is part of. The default is a single chest.
    public struct Trail: Sendable, Equatable {
        /// Chests on the trail (at least 1).
        public var count: Int
        /// Chests found so far.
        public var found: Int
        /// Which chest of the trail this box is (1-based), nil when unknown.
        public var number: Int?

        public init(count: Int = 1, found: Int = 0, number: Int? = nil) {
            self.count = count
            self.found = found
            self.number = number
        }

        /// `count` at least 1, `found` within 0...count, `number` within 1...count or nil.
        public var normalized: Trail {
            let c = max(1, count)
            return Trail(count: c, found: min(max(0, found), c), number: number.flatMap { (1...c).contains($0) ? $0 : nil })
        }
    }

    /// One find, for the standings: `hunter` found treasure `treasure` (1-based on the trail)
    /// at `at` (the caller's clock), `took` seconds after the hunt began (nil when unknown).
    public struct Finisher: Sendable, Equatable {
        public var hunter: UInt16
        public var treasure: Int
        public var at: Double
        public var took: Double?

        public init(hunter: UInt16, treasure: Int, at: Double, took: Double? = nil) {
            self.hunter = hunter
            self.treasure = treasure
            self.at = at
            self.took = took
        }
    }

    /// The distances that separate the proximity classes (the ranging configuration's
    /// `immediateEdge` and `nearEdge`): immediate < `immediate` <= near < `near` <= far.
    public struct ProximityEdges: Sendable, Equatable {
        public var immediate: Double
        public var near: Double
        public init(immediate: Double = 0.5, near: Double = 3.0) {
            self.immediate = immediate
            self.near = near
        }
    }

    public var advertising: Advertising
    public var uuid: String
    public var major: UInt16
    public var minor: UInt16
    /// Measured power at 1 m, dBm.
    public var power: Int8
    public var intervalMilliseconds: Int
    /// The reward text (shown with control characters removed).
    public var reward: String?
    public var hunters: [Hunter]
    public var greeting: Greeting?
    /// The trail's progress (default: one chest, not found yet).
    public var trail: Trail
    /// The finds in finishing order (first first).
    public var standings: [Finisher]
    public var proximityEdges: ProximityEdges
    /// Which game the box is paired with ("game ABCD": the key's fingerprint, for a parent
    /// to compare with each hunter's `pirate-hunter check`), or that it is not; nil: not shown.
    public var game: String?
    /// The grown-ups' page and its setup code ("http://box.local:8080/ code 123456"), shown in
    /// the footer before the ids; nil: no page.
    public var page: String?

    public init(
        advertising: Advertising, uuid: String, major: UInt16, minor: UInt16, power: Int8,
        intervalMilliseconds: Int, reward: String? = nil, hunters: [Hunter] = [], greeting: Greeting? = nil,
        trail: Trail = Trail(), standings: [Finisher] = [], proximityEdges: ProximityEdges = ProximityEdges()
    ) {
        self.advertising = advertising
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.power = power
        self.intervalMilliseconds = intervalMilliseconds
        self.reward = reward
        self.hunters = hunters
        self.greeting = greeting
        self.trail = trail
        self.standings = standings
        self.proximityEdges = proximityEdges
    }

    /// Hunters nearest first: by proximity class (immediate, near, far, unknown), then by
    /// distance (unknown distances last), then by id.
    public var huntersNearestFirst: [Hunter] {
        hunters.sorted { a, b in
            if a.proximity != b.proximity { return a.proximity < b.proximity }
            let da = a.distance.flatMap { $0.isFinite ? $0 : nil } ?? .infinity
            let db = b.distance.flatMap { $0.isFinite ? $0 : nil } ?? .infinity
            if da != db { return da < db }
            return a.id < b.id
        }
    }

    /// The hunter's distance when it agrees with its class (a hunter "close" at ~8 m is
    /// shown "close", without the number); nil otherwise, and always for unknown.
    public func shownDistance(_ hunter: Hunter) -> Double? {
        guard let d = hunter.distance, d.isFinite, d >= 0 else { return nil }
        let e = proximityEdges
        switch hunter.proximity {
        case .immediate: return d < e.immediate ? d : nil
        case .near: return d >= e.immediate && d < e.near ? d : nil
        case .far: return d >= e.near ? d : nil
        case .unknown: return nil
        }
    }

    /// The standings in finishing order (by `at`, then as given).
    public var standingsInOrder: [Finisher] {
        standings.enumerated().sorted { a, b in
            let ta = a.element.at.isFinite ? a.element.at : .infinity
            let tb = b.element.at.isFinite ? b.element.at : .infinity
            return ta != tb ? ta < tb : a.offset < b.offset
        }.map(\.element)
    }
}
