/// Immediate / near / far with hysteresis and a dwell time, on path loss (dB).
///
/// Edges are distances, turned into path loss by the distance model. The committed class
/// is left only when the path loss is past the class's edge by `hysteresis` dB, and the new
/// class (also the first one after unknown) is committed only after it held for `dwell`
/// seconds. "unknown" is never the result of a reading: it is set from outside
/// (`markLost`) when the gap model judges the beacon gone; a loss burst it calls loss
/// keeps the committed class.
public struct ProximityClassifier: Sendable, Equatable {
    public let immediateLoss: Double
    public let nearLoss: Double
    public let hysteresis: Double
    public let dwell: Double

    public private(set) var committed: Proximity = .unknown
    private var pending: Proximity?
    private var pendingSince: Double = 0
    private var pendingCount = 0
    /// Readings the new class must also hold for (a dwell of 1.5 s is one or two packets of
    /// a 1 Hz beacon: too little evidence).
    public static let dwellPackets = 3
    /// Readings after which the level counts as settled for a first class near an edge
    /// (its standard error about a third of the reading noise).
    public static let settledReadings = 10

    /// `immediateLoss`/`nearLoss`: path loss (dB re 1 m) at the immediate and near edges.
    public init(immediateLoss: Double, nearLoss: Double, hysteresis: Double, dwell: Double) {
        self.immediateLoss = immediateLoss
        self.nearLoss = nearLoss
        self.hysteresis = hysteresis
        self.dwell = dwell
    }

    public init(configuration: RangingConfiguration) {
        let model = LogDistanceModel(configuration: configuration)
        self.init(immediateLoss: model.pathLoss(atMeters: configuration.immediateEdge),
                  nearLoss: model.pathLoss(atMeters: configuration.nearEdge),
                  hysteresis: configuration.proximityHysteresis,
                  dwell: configuration.proximityDwell)
    }

    /// Class of a path loss without memory.
    public func rawClass(pathLoss: Double) -> Proximity {
        if pathLoss < immediateLoss { return .immediate }
        if pathLoss < nearLoss { return .near }
        return .far
    }

    /// Class the reading argues for, given the committed class (hysteresis applied).
    public func candidate(pathLoss: Double) -> Proximity {
        let lower: Double
        let upper: Double
        switch committed {
        case .unknown: return rawClass(pathLoss: pathLoss)
        case .immediate: (lower, upper) = (-Double.infinity, immediateLoss + hysteresis)
        case .near: (lower, upper) = (immediateLoss - hysteresis, nearLoss + hysteresis)
        case .far: (lower, upper) = (nearLoss - hysteresis, Double.infinity)
        }
        if pathLoss >= lower && pathLoss < upper { return committed }
        return rawClass(pathLoss: pathLoss)
    }

    /// Feeds one filtered path loss at `time`. Every change, also the first class after
    /// unknown (a new beacon, or one back after a true absence), is committed only after the
    /// class held for the dwell (the caller also waits for enough packets). Returns the
    /// change `(from, to)` when one was committed.
    /// `mayCommit`: false while the caller still waits for enough packets (the dwell and its
    /// readings count from the first packet all the same). `settled`: false while the level
    /// rests on few readings; then a first class within `hysteresis` of an edge waits (on a
    /// level a few dB off, the hysteresis would keep a wrong first class for good: at 1.5 m a
    /// beacon said "far" on its first packets stayed "far" at a settled 2.6 m).
    public mutating func update(pathLoss: Double, time: Double, mayCommit: Bool = true,
                                settled: Bool = true) -> (from: Proximity, to: Proximity)? {
        let wanted = candidate(pathLoss: pathLoss)
        if wanted == committed {
            pending = nil
            return nil
        }
        let nearEdge = min(abs(pathLoss - immediateLoss), abs(pathLoss - nearLoss)) < hysteresis
        let mayCommit = mayCommit && (settled || committed != .unknown || !nearEdge)
        if pending != wanted {
            pending = wanted
            pendingSince = time
            pendingCount = 0
        }
        pendingCount += 1
        guard mayCommit, time - pendingSince >= dwell, pendingCount >= Self.dwellPackets else { return nil }
        let from = committed
        committed = wanted
        pending = nil
        return (from, wanted)
    }

    /// A class known from outside the level (the hunter at hand: `AtHandDetector`),
    /// committed at once. Returns the change if any.
    public mutating func force(_ proximity: Proximity) -> (from: Proximity, to: Proximity)? {
        pending = nil
        guard committed != proximity else { return nil }
        let from = committed
        committed = proximity
        return (from, proximity)
    }

    /// The beacon fell silent: unknown, committed at once. Returns the change if any.
    public mutating func markLost() -> (from: Proximity, to: Proximity)? {
        pending = nil
        guard committed != .unknown else { return nil }
        let from = committed
        committed = .unknown
        return (from, .unknown)
    }
}
