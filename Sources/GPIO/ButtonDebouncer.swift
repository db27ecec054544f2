/// A push button's edges in, the presses a child meant out. Pure: every edge comes with its
/// time (seconds, any clock that only moves forward: the kernel's monotonic timestamps).
///
/// - An edge closer than `bounce` to the one before it is the contacts bouncing (a press
///   rattles for a few ms, and so does a release), not a press.
/// - A press held down sends no edge, so it is one press however long it is held; a second
///   "became active" with no release between is still that press.
/// - At most one press per `minimumInterval` reaches the game: a child hammering the
///   button hears the clue once, not five times over itself.
public struct ButtonDebouncer: Sendable, Equatable {
    public static let defaultBounce = 0.05
    public static let defaultMinimumInterval = 1.0

    public enum Verdict: Sendable, Equatable {
        /// A press: ask for the clue again.
        case press
        /// The line became inactive (let go).
        case release
        /// Within `bounce` of the edge before it.
        case bounce
        /// Active again without a release between: the press before is still held.
        case held
        /// A real press, but within `minimumInterval` of the last one that counted.
        case tooSoon
    }

    public var bounce: Double
    public var minimumInterval: Double
    private var lastEdge: Double?
    private var lastPress: Double?
    private var down = false

    public init(bounce: Double = ButtonDebouncer.defaultBounce, minimumInterval: Double = ButtonDebouncer.defaultMinimumInterval) {
        self.bounce = bounce
        self.minimumInterval = minimumInterval
    }

    /// One edge: `active` true when the line became active (pressed, `active_low` applied).
    public mutating func edge(active: Bool, at time: Double) -> Verdict {
        // A clock that went back (it must not, but a wrong timestamp must not mute the
        // button for good): start over from this edge.
        if let last = lastEdge, time < last {
            lastEdge = nil
            lastPress = nil
        }
        let sinceEdge = lastEdge.map { time - $0 }
        let wasDown = down
        lastEdge = time
        down = active
        guard active else { return .release }
        if let sinceEdge, sinceEdge < bounce { return .bounce }
        if wasDown { return .held }
        if let lastPress, time - lastPress < minimumInterval { return .tooSoon }
        lastPress = time
        return .press
    }
}
