/// Inside / outside for one region of one or more beacons.
///
/// Enter: one beacon of the region has at least `enterPackets` packets within `enterWindow`
/// seconds and `confirmPackets` within `confirmWindow` (counted per beacon: packets of
/// independent beacons are never pooled, so strays from several far beacons do not add up
/// to an enter); or `slowEnterPackets` within `slowEnterWindow` (beacons that deliver less
/// than a packet a second), or `verySlowEnterPackets` within `verySlowEnterWindow` (one
/// every 3 s). Exit: only when every beacon of the region is judged gone (each
/// by its own gap model, see `ArrivalStatistics`; several live beacons share the region's
/// budget, see `RangingEngine`); the engine says so through `advance(to:anyPresent:)`.
/// Initial state: inside as soon as the enter rule holds, outside when it has not held
/// `initialStateTimeout` seconds after start.
///
/// Memory: the recent packet times of at most `maximumSources` beacons, each at most
/// `maximumPackets` long; the beacon heard longest ago is dropped first.
public struct RegionMonitor: Sendable, Equatable {
    public enum Transition: Sendable, Equatable {
        case determined(RegionState)
        case entered
        case exited
    }

    public static let maximumSources = 64
    public static let maximumPackets = 64
    /// The slow path of the enter rule: this many packets of one beacon within
    /// `slowEnterWindow` s also enter. A 1 Hz beacon that loses every other packet never
    /// has 2 packets within 1.5 s; 5 in 12 s lets it in after ~10 s, while strays (one per
    /// 30 s) meet it ~0.1 times an hour.
    public static let slowEnterPackets = 5
    public static let slowEnterWindow = 12.0
    /// And for beacons slower still (one every 3 s, or every 2 s losing a third): this many
    /// within `verySlowEnterWindow` s. Strays (one per 30 s) meet it ~0.06 times an hour.
    public static let verySlowEnterPackets = 8
    public static let verySlowEnterWindow = 40.0

    public let region: Region
    public private(set) var state: RegionState = .unknown
    private var startTime: Double?
    /// Times of recent packets per beacon (within the longer of the two windows).
    private var recent: [BeaconKey?: [Double]] = [:]

    public init(region: Region) {
        self.region = region
    }

    /// Records the start of monitoring (the engine's first call).
    public mutating func start(at time: Double) {
        if startTime == nil { startTime = time }
    }

    /// A packet from beacon `key` of this region arrived (`nil`: a single-source caller).
    public mutating func packet(at time: Double, from key: BeaconKey? = nil, _ configuration: RangingConfiguration) -> Transition? {
        start(at: time)
        guard state != .inside else {
            recent.removeAll(keepingCapacity: true)
            return nil
        }
        let horizon = max(configuration.enterWindow, configuration.confirmWindow, Self.slowEnterWindow, Self.verySlowEnterWindow)
        var times = recent[key] ?? []
        times.removeAll { time - $0 > horizon }
        times.append(time)
        if times.count > Self.maximumPackets { times.removeFirst(times.count - Self.maximumPackets) }
        let inEnterWindow = times.count { time - $0 <= configuration.enterWindow }
        let inConfirmWindow = times.count { time - $0 <= configuration.confirmWindow }
        let inSlowWindow = times.count { time - $0 <= Self.slowEnterWindow }
        let inVerySlowWindow = times.count { time - $0 <= Self.verySlowEnterWindow }
        guard (inEnterWindow >= configuration.enterPackets && inConfirmWindow >= configuration.confirmPackets)
                || inSlowWindow >= Self.slowEnterPackets || inVerySlowWindow >= Self.verySlowEnterPackets else {
            recent[key] = times
            if recent.count > Self.maximumSources, let oldest = recent.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
                recent[oldest] = nil
            }
            return nil
        }
        recent.removeAll(keepingCapacity: true)
        let wasKnown = state != .unknown
        state = .inside
        return wasKnown ? .entered : .determined(.inside)
    }

    /// Time passes: initial state and exits. `anyPresent`: some beacon of the region is not
    /// (yet) judged gone.
    public mutating func advance(to time: Double, anyPresent: Bool, _ configuration: RangingConfiguration) -> Transition? {
        start(at: time)
        switch state {
        case .unknown:
            guard let start = startTime, time - start >= configuration.initialStateTimeout else { return nil }
            state = .outside
            return .determined(.outside)
        case .inside:
            guard !anyPresent else { return nil }
            state = .outside
            return .exited
        case .outside:
            return nil
        }
    }
}
