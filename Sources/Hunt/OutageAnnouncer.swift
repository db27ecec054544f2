/// When a lost radio is worth telling a child. A flaky adapter (a UART that drops, a socket
/// closed every few seconds) must not make the hunt chatter "spyglass missing / back": an
/// outage shorter than `quietFor` is not spoken at all; one that lasts is spoken once, and its
/// end once; and a new outage is spoken at most once per `spacing`. Pure: time is passed in.
public struct OutageAnnouncer: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// An outage is spoken only once it has lasted this long (s).
        public var quietFor = 5.0
        /// At most one spoken outage per this many seconds.
        public var spacing = 60.0
        public init() {}
    }

    public enum Announcement: Equatable, Sendable {
        case missing, back
    }

    public var configuration: Configuration
    /// When the current outage began; nil while the radio works.
    public private(set) var lostSince: Double?
    private var spoken = false
    private var lastSpoken = -Double.infinity

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The radio is unavailable (again: the first time of an outage counts).
    public mutating func lost(at time: Double) {
        if lostSince == nil { lostSince = time }
    }

    /// The radio works again: `.back` if its loss was spoken.
    public mutating func back(at time: Double) -> Announcement? {
        defer {
            lostSince = nil
            spoken = false
        }
        return lostSince != nil && spoken ? .back : nil
    }

    /// From a timer: `.missing` once an outage has lasted `quietFor`.
    public mutating func tick(at time: Double) -> Announcement? {
        guard let since = lostSince, !spoken, time - since >= configuration.quietFor,
            time - lastSpoken >= configuration.spacing
        else { return nil }
        spoken = true
        lastSpoken = time
        return .missing
    }
}
