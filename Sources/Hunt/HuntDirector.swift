import Ranging

/// The hunt events a line pack has lines for (the raw values are the pack's keys,
/// `voices/lines/<language>.json`).
public enum LineEvent: String, CaseIterable, Sendable, Codable {
    case regionEntered = "region-entered"
    case regionLeft = "region-left"
    case proximityImmediate = "proximity-immediate"
    case proximityNear = "proximity-near"
    case proximityFar = "proximity-far"
    case proximityUnknown = "proximity-unknown"
    case warmer
    case colder
    case treasureFound = "treasure-found"
    case startup
    case adapterMissing = "adapter-missing"
    case adapterBack = "adapter-back"
    case speakerTest = "speaker-test"
    /// Says the treasure's reward is coming; the reward itself (heard over the air) follows.
    case reward

    public static func proximity(_ p: Proximity) -> LineEvent {
        switch p {
        case .immediate: return .proximityImmediate
        case .near: return .proximityNear
        case .far: return .proximityFar
        case .unknown: return .proximityUnknown
        }
    }

    /// How much a line matters: a newer line replaces one being spoken only when it matters
    /// at least as much; a lesser one waits (or is dropped when it has gone stale).
    ///   found > region entered/left, adapter > proximity > warmer/colder > start-up
    public var precedence: Int {
        switch self {
        case .treasureFound, .reward: return 5
        case .regionEntered, .regionLeft, .adapterMissing, .adapterBack: return 4
        case .proximityImmediate, .proximityNear, .proximityFar, .proximityUnknown: return 3
        case .warmer, .colder: return 2
        case .startup, .speakerTest: return 1
        }
    }
}

/// What the hunter does.
public enum HuntAction: Equatable, Sendable {
    /// Play a sound effect (it mixes over speech).
    case sound(String)
    /// Speak a line of this event, cutting the current line short (with a fade) if `interrupt`.
    case say(LineEvent, interrupt: Bool)
}

/// Everything the director reacts to.
public enum HuntInput: Equatable, Sendable {
    case started
    case ranging(RangingEvent)
    case adapterMissing
    case adapterBack
    /// The line started by the last `.say` has finished playing.
    case speechFinished
    /// The treasure's reward was read from its scan response: say it once the found line is over.
    case rewardHeard
}

/// The rules of the hunt: which ranging facts become lines and sounds, in what order, and
/// how often. Pure: time comes in with every input, actions go out; nothing is spoken twice
/// for one change and the hunter never chatters.
public struct HuntDirector: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The region being hunted (its name in the ranging engine).
        public var region: String
        /// Name of the sound played on entering and leaving the region.
        public var regionSound = "arrr"
        /// Immediate proximity held this long (s) is "treasure found".
        public var foundHold = 3.0
        /// Warmer/colder at most this often (s), and not this soon after another line.
        public var trendInterval = 6.0
        public var trendQuietAfterLine = 3.0
        /// A line waiting behind a more important one is dropped after this long (s).
        public var pendingLifetime = 4.0

        public init(region: String) { self.region = region }
    }

    public let configuration: Configuration
    private var speaking: LineEvent?
    private var pending: (event: LineEvent, since: Double)?
    private var lastLineAt = -Double.infinity
    private var lastTrendAt = -Double.infinity
    private var inside = false
    private var nearest: BeaconKey?
    private var nearestProximity: Proximity = .unknown
    private var immediateSince: Double?
    private var foundAnnounced = false
    private var adapterMissing = false
    private var rewardWaiting = false
    /// Proximity changes heard before the region was entered: the engine may commit a
    /// class in the same ingest that enters the region, before the region's state. Kept
    /// (a few, newest wins) and applied on entering, so a hunter already at the treasure
    /// when the region is entered still finds it.
    private var earlyProximity: [BeaconKey: (proximity: Proximity, since: Double)] = [:]

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public var isInside: Bool { inside }
    public var treasureFound: Bool { foundAnnounced }

    /// Feeds one input at `time`; returns what to do, in order.
    public mutating func handle(_ input: HuntInput, at time: Double) -> [HuntAction] {
        switch input {
        case .started:
            return say(.startup, at: time)
        case .adapterMissing:
            guard !adapterMissing else { return [] }
            adapterMissing = true
            return say(.adapterMissing, at: time)
        case .adapterBack:
            guard adapterMissing else { return [] }
            adapterMissing = false
            return say(.adapterBack, at: time)
        case .rewardHeard:
            // The reward never cuts the found line (or another reward) short.
            if speaking == .treasureFound || speaking == .reward {
                rewardWaiting = true
                return []
            }
            return say(.reward, at: time)
        case .speechFinished:
            speaking = nil
            if rewardWaiting {
                rewardWaiting = false
                return say(.reward, at: time)
            }
            guard let waiting = pending else { return [] }
            pending = nil
            guard time - waiting.since <= configuration.pendingLifetime else { return [] }
            return say(waiting.event, at: time)
        case let .ranging(event):
            return ranging(event, at: time)
        }
    }

    /// Checks timers (found hold) without a new event.
    public mutating func tick(at time: Double) -> [HuntAction] {
        checkFound(at: time)
    }

    private mutating func ranging(_ event: RangingEvent, at time: Double) -> [HuntAction] {
        switch event {
        case let .regionState(_, region, state) where region == configuration.region:
            guard state == .inside, !inside else { return [] }
            return entered(at: time)
        case let .regionEnter(_, region) where region == configuration.region:
            guard !inside else { return [] }
            return entered(at: time)
        case let .regionExit(_, region) where region == configuration.region:
            guard inside else { return [] }
            inside = false
            immediateSince = nil
            nearestProximity = .unknown
            earlyProximity = [:]
            nearest = nil
            // A proximity line still waiting is stale news now.
            if let p = pending, p.event.precedence <= LineEvent.proximityUnknown.precedence { pending = nil }
            return [.sound(configuration.regionSound)] + say(.regionLeft, at: time)
        case let .nearest(_, region, key) where region == configuration.region:
            nearest = key
            return []
        case let .proximity(_, key, _, to) where !inside:
            if earlyProximity.count >= 8, earlyProximity[key] == nil, let oldest = earlyProximity.min(by: { $0.value.since < $1.value.since }) {
                earlyProximity[oldest.key] = nil
            }
            earlyProximity[key] = (to, time)
            return []
        case let .proximity(_, key, _, to):
            guard key == nearest || nearest == nil else { return [] }
            nearest = key
            guard to != nearestProximity else { return [] }
            nearestProximity = to
            if to == .immediate {
                immediateSince = time
            } else {
                immediateSince = nil
                if to != .unknown { foundAnnounced = false }
            }
            // "unknown" on its way out of the region is said by the exit line instead.
            if to == .unknown { return [] }
            return say(.proximity(to), at: time) + checkFound(at: time)
        case let .trend(_, region, trend) where region == configuration.region:
            guard inside, !foundAnnounced, speaking == nil, time - lastTrendAt >= configuration.trendInterval,
                time - lastLineAt >= configuration.trendQuietAfterLine
            else { return [] }
            lastTrendAt = time
            return say(trend == .warmer ? .warmer : .colder, at: time)
        default:
            return []
        }
    }

    /// The region entered: the arrr and its line, then (when it is "immediate") the class
    /// the hunter already had.
    private mutating func entered(at time: Double) -> [HuntAction] {
        inside = true
        var actions = [HuntAction.sound(configuration.regionSound)] + say(.regionEntered, at: time)
        let early = nearest.flatMap { earlyProximity[$0].map { (key: nearest, value: $0) } }
            ?? earlyProximity.max(by: { $0.value.since < $1.value.since }).map { (key: Optional($0.key), value: $0.value) }
        earlyProximity = [:]
        if let early, early.value.proximity != .unknown {
            // The class is known from now on (its next change is said); only "at the
            // treasure" is news worth a line right after the enter line.
            nearest = early.key ?? nearest
            nearestProximity = early.value.proximity
            if early.value.proximity == .immediate {
                immediateSince = early.value.since
                actions += say(.proximityImmediate, at: time)
            }
        }
        return actions
    }

    private mutating func checkFound(at time: Double) -> [HuntAction] {
        guard inside, !foundAnnounced, let since = immediateSince, time - since >= configuration.foundHold else { return [] }
        foundAnnounced = true
        return say(.treasureFound, at: time)
    }

    private mutating func say(_ event: LineEvent, at time: Double) -> [HuntAction] {
        // A repeated find never cuts the reward short: the reward is what the child came for.
        if speaking == .reward, event == .treasureFound { return [] }
        if let current = speaking, event.precedence < current.precedence {
            // Wait behind the more important line (only the newest waiter is kept).
            if event.precedence > LineEvent.warmer.precedence { pending = (event, time) }
            return []
        }
        let interrupt = speaking != nil
        speaking = event
        lastLineAt = time
        if let p = pending, p.event.precedence <= event.precedence { pending = nil }
        return [.say(event, interrupt: interrupt)]
    }
}
