#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Packet arrival statistics of one source (a beacon or a region), and the silence after
/// which it counts as gone.
///
/// Gaps are split into "nominal" ones (about one advertising interval) and "loss gaps"
/// (longer than 1.5 nominal intervals: one or more packets lost, often in bursts). The
/// excess of a loss gap over the nominal interval, counted in nominal intervals (packets
/// lost), is modelled as exponential with mean `meanLost`; loss gaps occur at
/// `lossGapsPerHour`. The silence limit is the length that a loss gap exceeds only
/// `falseAlarmsPerHour` times an hour under that model:
///     limit = nominal · (1 + n·meanLost·((lossGapsPerHour / falseAlarmsPerHour)^(1/n) − 1))
/// the posterior-predictive tail after n loss gaps (≈ nominal·(1 + meanLost·ln(ratio)) for
/// large n, more cautious while little has been seen),
/// bounded by [minimumSilence, maximumSilence]. So a 10 Hz beacon with short bursts is
/// declared gone after ~3-5 s, a 1 Hz one after ~10-12 s, a beacon behind long bursts later.
public struct ArrivalStatistics: Sendable, Equatable {
    public private(set) var lastTime: Double?
    /// Typical interval between packets when none is lost, seconds.
    public private(set) var nominalInterval: Double?
    /// Exponentially weighted mean interval between packets (all gaps), seconds.
    public private(set) var meanInterval: Double?
    /// Mean number of packets lost per loss gap (starts at a prior).
    public private(set) var meanLost: Double
    /// Share of gaps that are loss gaps (starts at a prior).
    public private(set) var lossGapShare: Double
    public private(set) var count: Int = 0
    private var lossGaps: Int = 0

    /// Priors, each weighing as `priorWeight` observations: packets lost per loss gap,
    /// share of gaps that are loss gaps.
    public static let priorWeight = 5.0
    public static let priorLost = 2.0
    public static let priorLossGapShare = 0.2

    public init() {
        meanLost = Self.priorLost
        lossGapShare = Self.priorLossGapShare
    }

    /// `falseAlarmsPerHour` chooses which limit decides that a gap was an absence.
    public mutating func record(time: Double, falseAlarmsPerHour: Double, _ configuration: RangingConfiguration) {
        defer { count += 1 }
        guard let last = lastTime else {
            lastTime = time
            return
        }
        let gap = max(0, time - last)
        let limit = silenceLimit(falseAlarmsPerHour: falseAlarmsPerHour, configuration)
        lastTime = max(last, time)
        // A silence past the limit was an absence, not packet loss: learn nothing from it.
        guard gap <= limit else { return }
        let nominal = nominalInterval ?? gap
        if gap < nominal {
            nominalInterval = gap
        } else if gap <= 1.5 * nominal {
            nominalInterval = nominal + 0.1 * (gap - nominal)
        } else {
            nominalInterval = nominal
        }
        meanInterval = meanInterval.map { $0 + 0.1 * (gap - $0) } ?? gap
        let isLossGap = gap > 1.5 * (nominalInterval ?? gap)
        // Running means that start as plain averages (the prior weighs as
        // `priorWeight` observations) and become exponential with a memory of ~100.
        lossGapShare += max(0.01, 1 / (Double(count) + Self.priorWeight)) * ((isLossGap ? 1 : 0) - lossGapShare)
        if isLossGap {
            lossGaps += 1
            let interval = max(nominalInterval ?? gap, 1e-3)
            meanLost += max(0.01, 1 / (Double(lossGaps) + Self.priorWeight)) * ((gap - interval) / interval - meanLost)
        }
    }

    /// Silence (seconds since the last packet) after which the source counts as gone.
    public func silenceLimit(falseAlarmsPerHour: Double, _ configuration: RangingConfiguration) -> Double {
        guard let nominal = nominalInterval, let mean = meanInterval, mean > 0 else {
            return configuration.maximumSilence
        }
        let lossGapsPerHour = 3600 * lossGapShare / mean
        let ratio = max(lossGapsPerHour / max(falseAlarmsPerHour, 1e-9), 1)
        // Posterior predictive of an exponential whose mean is known from n samples
        // (conjugate Gamma): P(excess > x) = (1 + x/(n·mean))^-n, a heavier tail while
        // little has been seen; solving P · rate = budget gives n·mean·(ratio^(1/n) − 1),
        // which tends to mean·ln(ratio) as n grows. n counts the prior's weight and is capped
        // at 199, the effective sample size of a running mean with weight 0.01.
        let samples = min(Double(lossGaps) + Self.priorWeight, 199)
        let lost = samples * meanLost * (pow(ratio, 1 / samples) - 1)
        let wanted = nominal * (1 + lost)
        return min(max(wanted, configuration.minimumSilence), configuration.maximumSilence)
    }

    public func isSilent(at time: Double, falseAlarmsPerHour: Double, _ configuration: RangingConfiguration) -> Bool {
        guard let last = lastTime else { return false }
        return time - last > silenceLimit(falseAlarmsPerHour: falseAlarmsPerHour, configuration)
    }

    public mutating func reset() { self = ArrivalStatistics() }
}
