/// Inside / outside for one region from the packets of its beacons.
///
/// Enter: at least `enterPackets` packets within `enterWindow` seconds and
/// `confirmPackets` within `confirmWindow`. Exit: silence longer than the region's
/// adaptive silence limit (see `ArrivalStatistics`). Initial state: inside as soon as the
/// enter rule holds, outside when it has not held `initialStateTimeout` seconds after start.
public struct RegionMonitor: Sendable, Equatable {
    public enum Transition: Sendable, Equatable {
        case determined(RegionState)
        case entered
        case exited
    }

    public let region: Region
    public private(set) var state: RegionState = .unknown
    public private(set) var arrivals = ArrivalStatistics()
    private var startTime: Double?
    /// Times of recent packets (within the longer of the two windows).
    private var recent: [Double] = []

    public init(region: Region) {
        self.region = region
    }

    /// Records the start of monitoring (the engine's first call).
    public mutating func start(at time: Double) {
        if startTime == nil { startTime = time }
    }

    /// A packet from a beacon of this region arrived.
    public mutating func packet(at time: Double, _ configuration: RangingConfiguration) -> Transition? {
        start(at: time)
        arrivals.record(time: time, falseAlarmsPerHour: configuration.falseExitsPerHour, configuration)
        guard state != .inside else {
            recent.removeAll(keepingCapacity: true)
            return nil
        }
        let horizon = max(configuration.enterWindow, configuration.confirmWindow)
        recent.removeAll { time - $0 > horizon }
        recent.append(time)
        let inEnterWindow = recent.count { time - $0 <= configuration.enterWindow }
        let inConfirmWindow = recent.count { time - $0 <= configuration.confirmWindow }
        guard inEnterWindow >= configuration.enterPackets, inConfirmWindow >= configuration.confirmPackets else {
            return nil
        }
        recent.removeAll(keepingCapacity: true)
        let wasKnown = state != .unknown
        state = .inside
        return wasKnown ? .entered : .determined(.inside)
    }

    /// Time passes: initial state and exits.
    public mutating func advance(to time: Double, _ configuration: RangingConfiguration) -> Transition? {
        start(at: time)
        switch state {
        case .unknown:
            guard let start = startTime, time - start >= configuration.initialStateTimeout else { return nil }
            state = .outside
            return .determined(.outside)
        case .inside:
            guard arrivals.isSilent(at: time, falseAlarmsPerHour: configuration.falseExitsPerHour, configuration) else { return nil }
            state = .outside
            return .exited
        case .outside:
            return nil
        }
    }
}
