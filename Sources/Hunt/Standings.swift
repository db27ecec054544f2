/// Who found which treasure, in the order they did: the race's standings, kept by the
/// treasure box (hunters that announce finding its treasure) and by each hunter (its own
/// finds and the rivals' it hears). Hunter ids come from the air (anyone can make them up):
/// one entry per hunter and treasure, at most `capacity`, and the first finishers are the
/// ones kept (a flood of made-up ids cannot push out the children who got there first).
public struct Standings: Sendable, Equatable {
    public struct Finisher: Sendable, Equatable {
        public var hunter: UInt16
        /// 1-based on the trail.
        public var treasure: Int
        /// When it was found (the caller's clock).
        public var time: Double

        public init(hunter: UInt16, treasure: Int, time: Double) {
            self.hunter = hunter
            self.treasure = treasure
            self.time = time
        }
    }

    public static let defaultCapacity = 64
    public let capacity: Int
    public private(set) var finishers: [Finisher] = []
    /// Finds not kept because the standings were full.
    public private(set) var refused = 0

    public init(capacity: Int = Standings.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// `hunter` found `treasure` at `time`: true when that is new (the standings changed).
    @discardableResult
    public mutating func record(hunter: UInt16, treasure: Int, at time: Double) -> Bool {
        guard !finishers.contains(where: { $0.hunter == hunter && $0.treasure == treasure }) else { return false }
        guard finishers.count < capacity else {
            refused += 1
            return false
        }
        finishers.append(Finisher(hunter: hunter, treasure: treasure, time: time))
        return true
    }

    /// Whether anyone found `treasure`, and who first.
    public func first(of treasure: Int) -> Finisher? { finishers.first { $0.treasure == treasure } }
}
