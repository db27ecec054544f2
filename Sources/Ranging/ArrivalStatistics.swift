#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Packet arrival statistics of one beacon, and the silence after which it counts as gone.
///
/// A gap between two packets is "nominal" (about one advertising interval) or a "loss gap"
/// (longer than 1.5 nominal intervals); a loss gap of length g lost `k = g/nominal − 1`
/// packets. Loss comes in bursts (Gilbert-Elliott: a bad state that lasts seconds) mixed
/// with independent single losses, so the distribution of k has a heavy tail that one
/// exponential fitted to mostly short gaps would miss. The model is an empirical tail with
/// a geometric extrapolation (peaks over thresholds): for each threshold u of a fixed
/// ladder (1, 2, 4, ... 512 packets) it keeps the time-decayed count `n_u` of loss gaps with
/// k ≥ u and the sum `S_u` of their excesses k − u. Beyond u the tail is geometric
/// (memoryless: the excess of the longest component of a mixture of geometrics), with the
/// continuation probability q given a Beta(S_u + 1, n_u + 1) posterior, so the predictive
/// tail is `P(k ≥ u + j) = (n_u / N) · B(S_u + 1 + j, n_u + 1) / B(S_u + 1, n_u + 1)`: heavy
/// (a power law) while little has been seen, geometric once much has. The silence limit is
/// the smallest k that a present source exceeds at most `budget` times an hour, taking the
/// most cautious threshold (so the short losses cannot hide a long-burst component), as a
/// time `nominal · (1 + k)`, bounded by [minimumSilence, maximumSilence].
///
/// Thresholds with fewer than `minimumExceedances` gaps do not extrapolate, but any gap
/// length seen more often than the budget (decayed count per hour) is a floor of the limit.
/// The nominal interval is the 10th percentile of the last `recentGapCount` gaps; reports
/// closer than 20 ms are one advertising event (or a batched log), not a gap.
///
/// Memory: counts decay with a time constant of `memory` seconds (ten minutes), so the
/// model follows a child who walks from a quiet room into a busy one. Gaps past the limit
/// but within twice the lost limit (and `maximumSilence`) are learned: the beacon came
/// back, so it was probably loss the model under-estimated; longer silences were true
/// absences and are not. Storage is fixed: 32 recent gaps and two arrays of
/// `ladder.count` numbers.
public struct ArrivalStatistics: Sendable, Equatable {
    public private(set) var lastTime: Double?
    /// Typical interval between packets when none is lost, seconds.
    public private(set) var nominalInterval: Double?
    public private(set) var count: Int = 0
    /// Changes of the learned tail so far: a loss gap learned, or the ladder re-expressed at
    /// a new rate (see `reexpress(inInterval:)`). The limit changes mainly when this does.
    public private(set) var revision: Int = 0
    /// Time of the first packet (the prior fades from there).
    private var firstTime: Double?
    /// Decayed number of gaps with k ≥ ladder[i], and sum of their k − ladder[i].
    private(set) var exceeding: [Double]
    private(set) var excessSum: [Double]
    /// The last gaps (at most `recentGapCount`), for the nominal interval.
    private var recentGaps: [Double] = []
    /// The longest learned gap of the last `longestGapMemory` seconds, and when it ended.
    private var longestGapLength = 0.0
    private var longestGapTime = -Double.infinity
    /// Decayed seconds observed (the denominator of the rates).
    private var span: Double = 0
    /// Re-rankings in a row that found the gaps' 10th percentile far from the nominal
    /// interval (a new advertising rate, see `reexpress(inInterval:)`).
    private var rateChangeRankings = 0

    /// Thresholds, in lost packets.
    public static let ladder: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    /// Gaps shorter than this (s) are not gaps (20 ms: the spec's shortest advertising interval).
    public static let sameEvent = 0.02
    public static let recentGapCount = 32
    /// A gap this many times the longest of the last `longestGapMemory` s is a floor of the
    /// limit: real tails are heavier than geometric (the UCI iTAG phone's gaps grew 13 →
    /// 21 → 25 s in 20 min).
    public static let longestGapFactor = 1.5
    public static let longestGapMemory = 1200.0
    /// Time constant of the decay, seconds.
    public static let memory = 600.0
    /// Prior, as pseudo-observations that fade like data: `priorGaps` loss gaps of
    /// `priorLost` packets each in `priorIntervals` nominal intervals (a cautious start:
    /// a 10 Hz beacon is gone after ~11 s before anything is learned, a 1 Hz one at the cap).
    public static let priorGaps = 2.0
    public static let priorLost = 5.0
    public static let priorIntervals = 100.0
    /// A 10th percentile this many times longer or shorter than the nominal interval, at
    /// `rateChangeRankings` re-rankings in a row (one every 8th packet, with a full window of
    /// 32 gaps: a slow-down is sure after ~53 slow gaps), is a new advertising rate. A real phone's batched reports move the
    /// 10th percentile within a factor of ~2 all the time (the UCI iTAG log: 0.4-0.9 s).
    public static let rateChange = 3.0
    public static let rateChangeRankings = 4
    /// A threshold speaks for the tail once this many (decayed) gaps exceeded it.
    public static let minimumExceedances = 3.0

    /// Set for a stream that is not one beacon's (a region's packets, several beacons
    /// merged): its gaps are measured in this unit instead of a learned nominal interval,
    /// which two merged periodic beacons would make meaningless (their gaps alternate).
    private let fixedInterval: Double?

    public init() { self.init(fixedInterval: nil) }

    /// Gaps of a merged stream, in units of `unit` seconds: the ladder is then a ladder of
    /// silences, `unit` · (1 ... 512) s.
    public init(unit: Double) { self.init(fixedInterval: max(unit, Self.sameEvent)) }

    private init(fixedInterval: Double?) {
        exceeding = Array(repeating: 0, count: Self.ladder.count)
        excessSum = Array(repeating: 0, count: Self.ladder.count)
        self.fixedInterval = fixedInterval
        nominalInterval = fixedInterval
    }

    /// The receiver was deaf for `seconds` of the silence since the last packet: that much
    /// of it is no gap of the beacon's (the next packet's gap is counted without it).
    public mutating func excuse(_ seconds: Double) {
        if let last = lastTime { lastTime = last + seconds }
    }

    /// Records a packet at `time`. `configuration` bounds which gaps are learned.
    public mutating func record(time: Double, _ configuration: RangingConfiguration) {
        defer { count += 1 }
        guard let last = lastTime else {
            lastTime = time
            firstTime = time
            return
        }
        let gap = max(0, time - last)
        // Reports closer than the shortest advertising interval the spec allows are one
        // advertising event heard twice (or a scanner's batched log): not a gap.
        guard gap >= Self.sameEvent else { return }
        // A silence past twice the lost limit was a true absence (the hunter walked away and
        // back): not learned, so a walk-away does not slow the next exits. Gaps just past the
        // limit are more likely loss the model under-estimated (real tails are heavy): learned.
        let judgedAbsent = gap > configuration.minimumSilence
            && gap > 2 * silenceLimit(falseAlarmsPerHour: configuration.falseUnknownsPerHour, at: last, configuration)
        lastTime = max(last, time)
        guard !judgedAbsent else { return }
        // The nominal interval: the 10th percentile of the last gaps (robust to a real
        // scanner's irregular, batched reports; a loss gap is never the 10th percentile
        // unless nine in ten packets are lost).
        if fixedInterval == nil {
            recentGaps.append(gap)
            if recentGaps.count > Self.recentGapCount { recentGaps.removeFirst(recentGaps.count - Self.recentGapCount) }
        }
        // Re-ranked every 8th gap (the sort is most of the cost of a packet).
        if fixedInterval == nil, nominalInterval == nil || recentGaps.count < Self.recentGapCount || count % 8 == 0 {
            let sorted = recentGaps.sorted()
            let ranked = sorted[Int(Double(sorted.count - 1) * 0.1)]
            // A beacon that changed its advertising interval (a power-saving firmware, an
            // owner's new setting): the silences learned so far are still silences, so once
            // the new rate is sure the ladder is re-expressed in the new unit instead of
            // reading old gaps as losses (or losses as nothing). Until then the old unit stays;
            // while the first window of gaps fills, the nominal interval follows freely.
            if let unit = nominalInterval, recentGaps.count == Self.recentGapCount,
               ranked > Self.rateChange * unit || ranked * Self.rateChange < unit {
                rateChangeRankings += 1
                if rateChangeRankings >= Self.rateChangeRankings {
                    reexpress(inInterval: ranked)
                }
            } else {
                nominalInterval = ranked
                rateChangeRankings = 0
            }
        }
        // A silence past the cap was an absence under any model: not learned.
        guard gap <= configuration.maximumSilence else { return }
        if gap >= longestGapLength || time - longestGapTime > Self.longestGapMemory {
            longestGapLength = gap
            longestGapTime = time
        }
        let decay = exp(-gap / Self.memory)
        span = span * decay + gap
        for i in exceeding.indices {
            exceeding[i] *= decay
            excessSum[i] *= decay
        }
        let interval = max(nominalInterval ?? gap, 1e-3)
        guard gap > 1.5 * interval else { return }
        let lost = max(1, gap / interval - 1)
        revision += 1
        for (i, u) in Self.ladder.enumerated() where lost >= u {
            exceeding[i] += 1
            excessSum[i] += lost - u
        }
    }

    /// The beacon now advertises every `interval` s: the ladder in that unit, and the nominal
    /// interval with it.
    mutating func reexpress(inInterval interval: Double) {
        guard let old = nominalInterval, interval > 0 else { return }
        rescaleLadder(by: old / interval)
        nominalInterval = interval
        rateChangeRankings = 0
        revision += 1
    }

    /// Re-expresses the ladder in a unit `ratio` times shorter (ratio = old interval / new):
    /// a gap that lost k old packets lasted (k + 1)·old seconds, so it lost (k + 1)·ratio − 1
    /// new ones, and a new threshold u' counts the old gaps with k ≥ v = (u' + 1)/ratio − 1.
    /// The gaps between two thresholds are taken to sit at their mean (known from the counts
    /// and excess sums of both thresholds: exact for the spike of single losses at k = 1),
    /// those past the last threshold to have its geometric tail. Old gaps that were no loss
    /// (the slower beacon's nominal gaps) stay none.
    private mutating func rescaleLadder(by ratio: Double) {
        guard ratio > 0, ratio.isFinite else { return }
        let ladder = Self.ladder
        let last = ladder.count - 1
        func tail(at v: Double) -> (count: Double, excess: Double) {
            guard v > ladder[0] else {
                return (exceeding[0], excessSum[0] + exceeding[0] * (ladder[0] - v))
            }
            let i = ladder.lastIndex { $0 <= v } ?? 0
            guard exceeding[i] > 1e-9 else { return (0, 0) }
            guard i < last else {
                // Past the last threshold: geometric, memoryless.
                let meanExcess = excessSum[i] / exceeding[i]
                let count = exceeding[i] * pow(meanExcess / (1 + meanExcess), v - ladder[i])
                return (count, count * meanExcess)
            }
            // The gaps of [u_i, u_i+1), at their mean position p; those from u_i+1 on are
            // counted by the next threshold.
            let above = exceeding[i + 1]
            let aboveExcess = excessSum[i + 1] + (ladder[i + 1] - v) * above
            let inBracket = max(0, exceeding[i] - above)
            guard inBracket > 1e-9 else { return (above, aboveExcess) }
            let bracketExcess = excessSum[i] - excessSum[i + 1] - (ladder[i + 1] - ladder[i]) * above
            let position = min(max(ladder[i] + bracketExcess / inBracket, ladder[i]), ladder[i + 1])
            guard position >= v else { return (above, aboveExcess) }
            return (above + inBracket, aboveExcess + inBracket * (position - v))
        }
        let converted = ladder.map { u in tail(at: (u + 1) / ratio - 1) }
        exceeding = converted.map(\.count)
        excessSum = converted.map { $0.excess * ratio }
    }

    /// Weight of the prior at `time` (fades with the memory from the first packet).
    private func priorWeight(at time: Double) -> Double {
        guard let first = firstTime else { return Self.priorGaps }
        return Self.priorGaps * exp(-max(0, time - first) / Self.memory)
    }

    /// Lost packets that a present source exceeds at most `budget` times an hour.
    public func lostPacketLimit(falseAlarmsPerHour budget: Double, at time: Double) -> Double? {
        guard let nominal = nominalInterval, nominal > 0 else { return nil }
        let prior = priorWeight(at: time)
        let seconds = span + prior * Self.priorIntervals * nominal
        guard seconds > 0 else { return nil }
        var limit = 0.0
        for (i, u) in Self.ladder.enumerated() {
            var n = exceeding[i]
            var s = excessSum[i]
            if Self.priorLost >= u {
                n += prior
                s += prior * (Self.priorLost - u)
            }
            guard n >= 0.5 else { continue }
            let perHour = 3600 * n / seconds
            let ratio = perHour / max(budget, 1e-9)
            guard ratio > 1 else { continue }
            // Empirical floor: gaps this long were seen more often than the budget allows,
            // so the limit is at least their mean length, however few they were.
            limit = max(limit, u + s / n)
            // The base threshold always extrapolates (it carries the prior); higher ones once
            // enough gaps exceeded them.
            guard i == 0 || n >= Self.minimumExceedances else { continue }
            limit = max(limit, u + Self.tailExcess(ratio: ratio, successes: s, trials: n))
        }
        return limit
    }

    /// Smallest j with E[q^j] <= 1/ratio for q ~ Beta(successes + 1, trials + 1).
    static func tailExcess(ratio: Double, successes s: Double, trials n: Double) -> Double {
        let a = s + 1
        let b = n + 1
        let target = -log(ratio)
        // ln E[q^j] = lnΓ(a+j) − lnΓ(a+b+j) − lnΓ(a) + lnΓ(a+b), decreasing in j.
        func logTail(_ j: Double) -> Double { lgamma(a + j) - lgamma(a + b + j) - lgamma(a) + lgamma(a + b) }
        var high = 1.0
        while logTail(high) > target && high < 1e7 { high *= 2 }
        var low = 0.0
        for _ in 0..<32 {
            let mid = (low + high) / 2
            if logTail(mid) > target { low = mid } else { high = mid }
        }
        return high
    }

    /// Silence (seconds since the last packet) after which the source counts as gone.
    /// `longestGapFloor`: the limit is at least `longestGapFactor` times the longest gap of
    /// the last `longestGapMemory` s (false where a caller applies that floor to a region's
    /// joint silences instead, see `RangingEngine`).
    public func silenceLimit(falseAlarmsPerHour: Double, at time: Double, _ configuration: RangingConfiguration,
                             longestGapFloor: Bool = true) -> Double {
        guard let nominal = nominalInterval,
              let lost = lostPacketLimit(falseAlarmsPerHour: falseAlarmsPerHour, at: time) else {
            return configuration.maximumSilence
        }
        var wanted = nominal * (1 + lost)
        if longestGapFloor, time - longestGapTime <= Self.longestGapMemory, longestGapLength > 1.5 * nominal {
            wanted = max(wanted, Self.longestGapFactor * longestGapLength)
        }
        return min(max(wanted, configuration.minimumSilence), configuration.maximumSilence)
    }

    public func isSilent(at time: Double, falseAlarmsPerHour: Double, _ configuration: RangingConfiguration) -> Bool {
        guard let last = lastTime else { return false }
        return time - last > silenceLimit(falseAlarmsPerHour: falseAlarmsPerHour, at: last, configuration)
    }

    public mutating func reset() { self = ArrivalStatistics(fixedInterval: fixedInterval) }
}
