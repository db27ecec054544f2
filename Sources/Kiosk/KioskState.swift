public import Ranging

/// Everything the treasure box's screen shows, as plain values (no clock inside: times are
/// seconds on whatever clock the caller uses, the same one it passes as `now` to `render`).
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
        public var proximity: Proximity
        /// Estimated distance in metres, nil when unknown.
        public var distance: Double?
        /// The box has greeted this hunter already.
        public var greeted: Bool
        /// When the hunter was last heard.
        public var lastSeen: Double

        public init(id: UInt16, proximity: Proximity, distance: Double? = nil, greeted: Bool = false, lastSeen: Double) {
            self.id = id
            self.proximity = proximity
            self.distance = distance
            self.greeted = greeted
            self.lastSeen = lastSeen
        }
    }

    /// The box is greeting a hunter and showing the reward as a QR code.
    public struct Greeting: Sendable, Equatable {
        public var hunterID: UInt16
        public var at: Double
        /// The QR code, already drawn as lines of block characters (one column each, quiet zone
        /// included). They are shown exactly as given, in the terminal's default colours, never cut.
        public var qrLines: [String]

        public init(hunterID: UInt16, at: Double, qrLines: [String]) {
            self.hunterID = hunterID
            self.at = at
            self.qrLines = qrLines
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

    public init(
        advertising: Advertising, uuid: String, major: UInt16, minor: UInt16, power: Int8,
        intervalMilliseconds: Int, reward: String? = nil, hunters: [Hunter] = [], greeting: Greeting? = nil
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
    }

    /// Hunters nearest first: by proximity class (immediate, near, far, unknown), then by
    /// distance (unknown distances last), then by id.
    public var huntersNearestFirst: [Hunter] {
        hunters.sorted { a, b in
            let ra = Self.rank(a.proximity), rb = Self.rank(b.proximity)
            if ra != rb { return ra < rb }
            let da = a.distance.flatMap { $0.isFinite ? $0 : nil } ?? .infinity
            let db = b.distance.flatMap { $0.isFinite ? $0 : nil } ?? .infinity
            if da != db { return da < db }
            return a.id < b.id
        }
    }

    static func rank(_ p: Proximity) -> Int {
        switch p {
        case .immediate: return 0
        case .near: return 1
        case .far: return 2
        case .unknown: return 3
        }
    }
}
