/// What happens after the treasure is found: the hunter scans actively (only while it needs
/// to) to read the reward from the treasure's scan response, and announces itself to the
/// treasure box with its own beacon for a while. Pure: time comes in, actions go out.
public struct RewardHandoff: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Active scanning for the reward stops after this long without one (s).
        public var rewardTimeout = 10.0
        /// The hunter announces itself this long after finding the treasure (s); 0: never.
        public var announceSeconds = 60.0

        public init(rewardTimeout: Double = 10.0, announceSeconds: Double = 60.0) {
            self.rewardTimeout = rewardTimeout
            self.announceSeconds = announceSeconds
        }
    }

    public enum Action: Equatable, Sendable {
        /// Scan actively (scan requests out, scan responses in) or go back to passive.
        case scanActively(Bool)
        /// Advertise the hunter's announcement beacon anew (a new challenge, also when it was
        /// on), or stop.
        case announce(Bool)
        /// The reward was heard (already made printable): print it and say it.
        case reward(String)
        /// No reward came within the timeout.
        case noReward
    }

    public let configuration: Configuration
    public private(set) var listeningSince: Double?
    public private(set) var announcingUntil: Double?
    public private(set) var reward: String?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// When the last reward was read.
    public private(set) var rewardAt: Double?

    /// A reward read this recently is not read (nor said) again for a new find: the same
    /// child back at the box. The announcement's length, or a minute without one.
    public var repeatAfter: Double { configuration.announceSeconds > 0 ? configuration.announceSeconds : 60 }

    /// The treasure was found: listen for the reward (unless listening already, or it was
    /// read within `repeatAfter`), and announce anew for the whole announcement. Anew also
    /// when the announcement is still on (a find after no reward came): a new challenge, so
    /// only a reward sealed since, by a box there now, is believed.
    public mutating func found(at time: Double) -> [Action] {
        guard listeningSince == nil else { return [] }
        if let at = rewardAt, time - at < repeatAfter { return [] }
        var actions: [Action] = [.scanActively(true)]
        listeningSince = time
        reward = nil
        if configuration.announceSeconds > 0 {
            actions.append(.announce(true))
            announcingUntil = time + configuration.announceSeconds
        }
        return actions
    }

    /// Announce (again) for the whole `announceSeconds` from `time`: a box step's find,
    /// proven after its probe, is told for as long as any find, whether or not the probe's
    /// announcement is still on. `.announce(true)` when it was off.
    public mutating func announceAgain(at time: Double) -> [Action] {
        guard configuration.announceSeconds > 0 else { return [] }
        let wasOn = announcingUntil != nil
        announcingUntil = time + configuration.announceSeconds
        return wasOn ? [] : [.announce(true)]
    }

    /// A reward read from the treasure's scan response (nil when the response held none).
    public mutating func heard(_ text: String?, at time: Double) -> [Action] {
        guard listeningSince != nil, let text, !text.isEmpty else { return [] }
        listeningSince = nil
        reward = text
        rewardAt = time
        return [.scanActively(false), .reward(text)]
    }

    public mutating func tick(at time: Double) -> [Action] {
        var actions: [Action] = []
        if let since = listeningSince, time - since >= configuration.rewardTimeout {
            listeningSince = nil
            actions += [.scanActively(false), .noReward]
        }
        if let until = announcingUntil, time >= until {
            announcingUntil = nil
            actions.append(.announce(false))
        }
        return actions
    }

    /// The earliest time `tick` has something to do.
    public var deadline: Double? {
        [listeningSince.map { $0 + configuration.rewardTimeout }, announcingUntil].compactMap { $0 }.min()
    }
}
