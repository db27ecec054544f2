#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Packet arrival statistics of one source (a beacon or a region), and the silence after
/// which it counts as gone. The silence adapts to what was observed: a multiple of the
/// longest recent gap (which remembers bursts of loss, decaying with a half-life) and a
/// multiple of the mean interval (slow beacons), bounded on both sides.
public struct ArrivalStatistics: Sendable, Equatable {
    public private(set) var lastTime: Double?
    /// Exponentially weighted mean interval between packets, seconds.
    public private(set) var meanInterval: Double?
    /// Longest gap seen, decaying by half every `gapMemoryHalfLife` seconds.
    public private(set) var recentLongestGap: Double = 0
    public private(set) var count: Int = 0

    public init() {}

    public mutating func record(time: Double, gapMemoryHalfLife: Double) {
        defer { count += 1 }
        guard let last = lastTime else {
            lastTime = time
            return
        }
        let gap = max(0, time - last)
        lastTime = max(last, time)
        let weight = 0.1
        meanInterval = meanInterval.map { $0 + weight * (gap - $0) } ?? gap
        let decay = gapMemoryHalfLife > 0 ? pow(0.5, gap / gapMemoryHalfLife) : 0
        recentLongestGap = max(gap, recentLongestGap * decay)
    }

    /// Silence (seconds since the last packet) after which the source counts as gone.
    public func silenceLimit(_ configuration: RangingConfiguration) -> Double {
        guard let mean = meanInterval else { return configuration.maximumSilence }
        let wanted = max(configuration.silenceGapMultiple * recentLongestGap,
                         configuration.silenceIntervalMultiple * mean)
        return min(max(wanted, configuration.minimumSilence), configuration.maximumSilence)
    }

    public func isSilent(at time: Double, _ configuration: RangingConfiguration) -> Bool {
        guard let last = lastTime else { return false }
        return time - last > silenceLimit(configuration)
    }

    public mutating func reset() { self = ArrivalStatistics() }
}
