/// "At hand": the hunter held over the beacon by a child standing at it (a chest on the
/// floor, the hunter at chest height: about 1 m, never < 0.5 m), whatever the tag's
/// advertised power error.
///
/// A level alone cannot tell 1 m with a tag advertising 4 dB too high from 1.5 m with an
/// honest one, so the rule asks for the *arrival* as well. At hand when, over the readings of
/// the last `window` s (at least `minimumPackets` of them, at most 10 s back):
/// - their mean path loss is below `edgeLoss` (the edge's distance by the model, plus the
///   power errors a tag may have), and
/// - it is at least `arrivalMargin` dB, and `arrivalZ` standard errors of that mean, below
///   the least path loss the filtered level had from `historySeconds` to `recentSeconds`
///   ago: the child came from farther away and now stands nearer than at any time of the
///   last minute. A child standing still (a sweep at 1.5-3 m), or a body stepping out of the
///   way (the level returns to where it was), is no arrival; nor is anything in the first
///   `minimumHistory` s of a beacon. The minute must lie beyond the edge (by half the
///   margin), unless the level rose `nearArrivalMargin` dB over it: a tag advertising low,
///   read by a child who looked about 3-5 m from it for a minute, sits nearer than the edge
///   there, and the chest, 12 dB or more above it, was never at hand. A tag heard fewer than
///   1.5 times a second (a 1 Hz tag) has its arrival also judged on twice as many readings
///   (`longArrivalFactor`), against the rest of the minute, before them.
/// Left when the mean path loss rises past `releaseLoss`. While at hand, readings
/// `renewalMargin` dB (and `arrivalZ` standard errors) below the mean at hand was found on,
/// over a confirmation's readings and span, are a new arrival (`renewals`): the child stood
/// short of the treasure (a tag advertising low, read at a kind spot metres out) and has
/// now come much nearer. Memory: at most `maximumReadings` readings and one filtered level a
/// second for `historySeconds`.
public struct AtHandDetector: Sendable, Equatable {
    public let edgeLoss: Double
    public let releaseLoss: Double
    public let window: Double
    public let minimumPackets: Int
    public let arrivalMargin: Double
    public let arrivalZ: Double
    /// dB over the last minute's typical loss that is an arrival even when that minute lay
    /// nearer than the edge (`defaultNearArrivalMargin`); infinity: never.
    public let nearArrivalMargin: Double
    /// The long arrival (twenty-first round): when the readings of the last `slowSpan` s come
    /// fewer than `longArrivalRate` a second, an arrival is also judged on this many times the
    /// first window's readings, against the typical loss of the rest of the minute, before
    /// them (the readings must lie within `longestWindow` s); 0 or 1: never. A 1 Hz tag's 8
    /// readings stand 3 standard errors under the minute only 10 dB or more below it, and a
    /// child who spent that minute about the chest comes 9-10 dB nearer: 16 readings, the
    /// child's first 16-20 s at the chest, ask 8 dB. A pause at a waypoint (2-15 s) gives a
    /// 1 Hz tag fewer than 16 readings at the spot.
    public let longArrivalFactor: Int
    /// Readings a second under which the long arrival is tried (0: never; not a number: never;
    /// at most `maximumReadings`, which is always).
    public let longArrivalRate: Double

    public static let historySeconds = 60.0
    public static let recentSeconds = 4.0
    public static let historyWindow = 4.0
    /// A slow beacon's history unit: its last 3 readings when the last `historyWindow` s hold
    /// fewer, as far back as this (a tag advertising every 2 s, or 1 Hz losing half of its
    /// packets, gave no history at all, so no arrival and no find: 2 finds in 400 walks at
    /// 0.5 Hz).
    public static let slowHistoryWindow = 12.0
    /// A beacon is slow when the last `slowSpan` s hold fewer than `minimumPackets` readings;
    /// its arrival is then judged on the readings of that span, at least `slowPackets` (8
    /// readings at 0.5 Hz were 16-20 s, more than the 20 s `longestWindow` often holds). At
    /// 1 Hz and faster, 16 s hold 8 readings but in long loss bursts, so the tuned detector
    /// is the same there.
    public static let slowSpan = 16.0
    public static let slowPackets = 4
    public static let minimumHistoryMeans = 10
    /// An arrival not confirmed at hand within this long (s) is forgotten.
    public static let arrivalMemory = 30.0
    public static let minimumHistory = 20.0
    /// The quantile of the last minute's losses the arrival is judged against: below the
    /// median, so a minute in which bodies stood between for half of it (three 10 s bodies
    /// and the loss bursts around them) still reads where the child stood, not as far away.
    /// Standing still with bodies (tuning family) the median gave 0.80 false finds an hour on
    /// the worst row, the 40th percentile 0.13.
    public static let typicalQuantile = 0.4
    public static let longestWindow = 20.0
    /// 256, not 64: the region's tags that lie together each feed every one's detector
    /// (`RangingConfiguration.regionPoolingGate`), and 64 readings were 1 s of three 20 Hz
    /// tags, less than the 2.5 s a find's confirmation spans.
    public static let maximumReadings = 256

    private var times: [Double] = []
    private var losses: [Double] = []
    private var historyTimes: [Double] = []
    private var historyLosses: [Double] = []
    private var firstTime: Double?
    /// The latest reading dropped because the buffer was full (not because it was old): the
    /// readings of a span may then begin before the oldest kept.
    private var droppedForRoomAt = -Double.infinity
    /// When the current arrival began (the level came `arrivalMargin` below the history).
    public private(set) var arrivalSince: Double?
    /// The typical loss the arrival was judged against.
    private var arrivalTypical = 0.0
    public private(set) var isAtHand = false
    /// New arrivals while at hand (`renewalMargin`), counted over the detector's life.
    public private(set) var renewals = 0
    /// The mean path loss at hand was last found (or renewed) on: of the readings since the
    /// arrival, or of the last `confirmSpan` s when lower.
    private var atHandLoss: Double?
    /// When the level came `renewalMargin` below `atHandLoss` (a renewal being judged).
    private var renewalSince: Double?
    /// dB below the mean at hand was found on that is a new arrival; 0: never.
    public let renewalMargin: Double

    /// The mean must be below the edge by this many standard errors.
    public let edgeZ: Double
    /// At hand is judged on at least `confirmPackets` readings since the arrival, spanning at
    /// least `confirmSpan` s: evidence in time as well as in packets, so a 10 Hz child
    /// walking past a kind spot for a second is not at hand, and a 1 Hz one at the chest
    /// does not wait for as many packets as a 10 Hz one.
    public let confirmPackets: Int
    public let confirmSpan: Double
    /// A child still at it after `longStand` s of readings since the arrival is at hand with
    /// the mean itself below the edge (and the whole arrival margin kept). A slow tag
    /// that reads a few dB loud never gave a 1 Hz mean 1.5 standard errors under the edge in
    /// the 30 s a child stands at the chest (7 of the 10 walks of 200 without a find); a child
    /// who stays 12 s at the level of the chest after arriving from afar is at the chest far
    /// more often than at a pause (walking benchmark: finds 190 -> 199 of 200 on the tuning
    /// walks, 187 -> 197 held out, for 0.1-0.2 false finds an hour more).
    public let longStand: Double
    /// Readings a second counted as independent evidence in a mean's standard error
    /// (`RangingConfiguration.independentReadingRate`): packets a few tens of milliseconds apart
    /// share the body and the spot of the field they were heard through.
    public let independentRate: Double

    public init(edgeLoss: Double, releaseLoss: Double, window: Double, minimumPackets: Int = 5,
                arrivalMargin: Double, arrivalZ: Double = 2.5, edgeZ: Double = 0, confirmPackets: Int? = nil,
                confirmSpan: Double = 0, longStand: Double = .infinity, independentRate: Double = .infinity,
                renewalMargin: Double = 0, nearArrivalMargin: Double = .infinity, longArrivalFactor: Int = 0,
                longArrivalRate: Double = 0) {
        // Bounded: the window cannot outgrow the readings kept, and the count stays finite.
        self.longArrivalFactor = min(max(0, longArrivalFactor), Self.maximumReadings)
        self.longArrivalRate = longArrivalRate.isNaN ? 0 : min(max(longArrivalRate, 0), Double(Self.maximumReadings))
        self.renewalMargin = max(0, renewalMargin)
        self.nearArrivalMargin = nearArrivalMargin
        self.longStand = longStand
        self.independentRate = independentRate
        self.edgeZ = edgeZ
        self.confirmPackets = max(1, confirmPackets ?? minimumPackets)
        self.confirmSpan = max(0, confirmSpan)
        self.edgeLoss = edgeLoss
        self.releaseLoss = releaseLoss
        self.window = window
        self.minimumPackets = max(1, minimumPackets)
        self.arrivalMargin = arrivalMargin
        self.arrivalZ = arrivalZ
    }

    public init(configuration: RangingConfiguration, minimumPackets: Int = Self.defaultPackets, edgeZ: Double = Self.defaultEdgeZ,
                arrivalZ: Double = Self.defaultArrivalZ, confirmPackets: Int = Self.defaultConfirmPackets,
                confirmSpan: Double = Self.defaultConfirmSpan, longStand: Double = Self.defaultLongStand,
                nearArrivalMargin: Double = Self.defaultNearArrivalMargin, longArrivalFactor: Int = Self.defaultLongArrivalFactor,
                longArrivalRate: Double = Self.defaultLongArrivalRate) {
        let model = LogDistanceModel(configuration: configuration)
        let edge = model.pathLoss(atMeters: configuration.atHandEdge)
        self.init(edgeLoss: edge, releaseLoss: edge + configuration.proximityHysteresis, window: configuration.atHandWindow,
                  minimumPackets: minimumPackets, arrivalMargin: configuration.arrivalMargin, arrivalZ: arrivalZ, edgeZ: edgeZ,
                  confirmPackets: confirmPackets, confirmSpan: confirmSpan, longStand: longStand,
                  independentRate: configuration.independentReadingRate, renewalMargin: configuration.atHandRenewal,
                  nearArrivalMargin: nearArrivalMargin, longArrivalFactor: longArrivalFactor, longArrivalRate: longArrivalRate)
    }

    public static let defaultPackets = 8
    public static let defaultEdgeZ = 1.5
    public static let defaultArrivalZ = 3.0
    public static let defaultConfirmPackets = 3
    public static let defaultConfirmSpan = 2.5
    public static let defaultLongStand = 12.0
    /// 1.5 times `arrivalMargin`'s 8 dB, chosen on the tuning part (`TUNE=nearArr=DB`): 8 dB
    /// (no such condition) and 10 dB raised the standing-still lines (15 seeds, the 1 Hz
    /// row with bodies 0.93 -> 1.04 and 0.96 an hour); 12 dB left every row as it was and
    /// found 17 more of the 3000 chests of the trails of three.
    public static let defaultNearArrivalMargin = 12.0
    /// Twice the first window's readings, for tags heard fewer than 1.5 times a second (1 Hz
    /// tags; a 2 Hz tag's 8 readings already span 4 s, and the long window lost 2 of its 1000
    /// tuning walks' finds). Chosen on the tuning walks 1-1000 (`TUNE=larr=2,larrrate=1.5`):
    /// at 1 Hz 976 -> 983 finds, 0.32 -> 0.30 false lines an hour.
    public static let defaultLongArrivalFactor = 2
    public static let defaultLongArrivalRate = 1.5

    /// Mean path loss of the last `count` readings (within `longestWindow` s) and its
    /// standard error; nil when there are fewer.
    func mean(ofLast count: Int, at time: Double, noiseVariance: Double) -> (mean: Double, standardError: Double)? {
        var n = 0
        var sum = 0.0
        var earliest = time
        for (t, loss) in zip(times, losses).reversed() {
            guard n < count, time - t <= Self.longestWindow else { break }
            n += 1
            sum += loss
            earliest = t
        }
        guard n == count, n > 0 else { return nil }
        let span = (times.last ?? time) - earliest
        return (sum / Double(n), (max(noiseVariance, 0) / independentCount(n, span: span)).squareRoot())
    }

    /// Readings a second over the last `span` s (its own and those of the tags that lie with
    /// it): how fast the evidence for at hand gathers.
    public func readingRate(at time: Double, over span: Double) -> Double {
        guard span > 0 else { return 0 }
        return Double(times.count { time - $0 <= span }) / span
    }

    /// How many of `n` readings over `span` s count as independent (`independentRate`).
    func independentCount(_ n: Int, span: Double) -> Double {
        min(Double(n), independentRate * max(span, 0) + 1)
    }

    /// Mean path loss of the readings of the last `historyWindow` s (at least 3 of them):
    /// the history's unit, once a second.
    func recentMean(at time: Double) -> Double? {
        var n = 0
        var sum = 0.0
        for (t, loss) in zip(times, losses).reversed() {
            guard time - t <= Self.historyWindow || (n < 3 && time - t <= Self.slowHistoryWindow) else { break }
            n += 1
            sum += loss
        }
        return n >= 3 ? sum / Double(n) : nil
    }

    /// The windows tried: the readings of the last `window` s (at least `minimumPackets`),
    /// then twice and four times as many (a slow beacon's evidence gathers), each with its
    /// mean and standard error.
    public func windows(at time: Double, noiseVariance: Double) -> [(mean: Double, standardError: Double)] {
        windows(at: time, noiseVariance: noiseVariance, base: arrivalWindowCount(at: time).count)
    }

    func windows(at time: Double, noiseVariance: Double, base: Int) -> [(mean: Double, standardError: Double)] {
        [base, 2 * base, 4 * base, 8 * base].compactMap { mean(ofLast: $0, at: time, noiseVariance: noiseVariance) }
    }

    /// How many readings the arrival is judged on: those of the last `window` s, at least
    /// `minimumPackets`; and whether the beacon is slow (fewer than `minimumPackets` in the last
    /// `slowSpan` s), when as many as that span holds suffice, at least `slowPackets`; and how
    /// many readings that span holds.
    func arrivalWindowCount(at time: Double) -> (count: Int, slow: Bool, inSlowSpan: Int) {
        let inWindow = times.count { time - $0 <= window }
        let inSlowSpan = times.count { time - $0 <= Self.slowSpan }
        let slow = inSlowSpan < minimumPackets
        return (max(slow ? max(inSlowSpan, Self.slowPackets) : minimumPackets, inWindow), slow, inSlowSpan)
    }

    /// Feeds one reading's path loss and the learned reading noise (dB²). Returns true when
    /// `isAtHand` changed.
    public mutating func update(readingLoss: Double, noiseVariance: Double, time: Double) -> Bool {
        if firstTime == nil { firstTime = time }
        times.append(time)
        losses.append(readingLoss)
        if let dropped = trimReadings(&times, &losses, at: time, span: Self.longestWindow, capacity: Self.maximumReadings) {
            droppedForRoomAt = dropped
        }
        // The history: where the child was before it came near (not recorded while an
        // arrival is being judged, so evidence that gathers slowly at the treasure is still
        // weighed against the walk before it).
        if arrivalSince == nil, !isAtHand, historyTimes.last.map({ time - $0 >= 1 }) ?? true, let recent = recentMean(at: time) {
            historyTimes.append(time)
            historyLosses.append(recent)
            var old = 0
            while old < historyTimes.count && time - historyTimes[old] > Self.historySeconds { old += 1 }
            if old > 0 {
                historyTimes.removeFirst(old)
                historyLosses.removeFirst(old)
            }
        }
        let arrivalWindow = arrivalWindowCount(at: time)
        // The arrival window alone (the longer ones `windows` gives the probes are not judged here).
        guard let latest = mean(ofLast: arrivalWindow.count, at: time, noiseVariance: noiseVariance) else { return false }
        let was = isAtHand
        if isAtHand {
            if latest.mean > releaseLoss {
                isAtHand = false
                arrivalSince = nil
                atHandLoss = nil
                renewalSince = nil
            } else {
                judgeRenewal(latest: latest, noiseVariance: noiseVariance, time: time)
            }
            return was != isAtHand
        }
        if let since = arrivalSince, latest.mean > releaseLoss || time - since > Self.arrivalMemory { arrivalSince = nil }
        if arrivalSince == nil, let first = firstTime, time - first >= Self.minimumHistory {
            // The typical loss of the last minute (its `typicalQuantile`: a middle quantile is
            // unbiased standing still, where the least of many noisy means is not; a walk
            // spends most of it farther away).
            if let typical = typicalLoss(at: time, arrivalWindow: (arrivalWindow.count, arrivalWindow.slow)) {
                // ... from farther than the edge: a child who stood near all along did not arrive.
                if typical - latest.mean >= max(arrivalMargin, arrivalZ * latest.standardError),
                   typical >= edgeLoss + arrivalMargin / 2 || typical - latest.mean >= nearArrivalMargin {
                    arrivalSince = time
                    arrivalTypical = typical
                }
            }
            // The long arrival: a 1 Hz tag's evidence, twice as long, against the rest of the minute.
            if arrivalSince == nil, longArrivalFactor > 1, Double(arrivalWindow.inSlowSpan) < longArrivalRate * Self.slowSpan {
                let count = longArrivalFactor * arrivalWindow.count
                if count <= times.count, let long = mean(ofLast: count, at: time, noiseVariance: noiseVariance),
                   let typical = typicalLoss(at: time, arrivalWindow: (count, true)),
                   typical - long.mean >= max(arrivalMargin, arrivalZ * long.standardError),
                   typical >= edgeLoss + arrivalMargin / 2 || typical - long.mean >= nearArrivalMargin {
                    arrivalSince = time
                    arrivalTypical = typical
                }
            }
        }
        // At hand on the readings since the arrival only (a fluke of a few packets regresses
        // at once; a child at the treasure stays there): at least `minimumPackets` of them,
        // their mean below the edge by `edgeZ` standard errors. An arrival they put back near
        // the typical level was a fluke and is forgotten.
        if let since = arrivalSince {
            if let confirmed = confirmation(since: since, at: time, noiseVariance: noiseVariance) {
                let (first, mean, se) = confirmed
                // The long stand: the mean itself under the edge, and the whole arrival margin
                // kept over all of it (an arrival from noise regresses towards the typical level).
                let long = time - first >= longStand && arrivalTypical - mean >= arrivalMargin
                if mean + (long ? min(edgeZ, 0) : edgeZ) * se < edgeLoss && arrivalTypical - mean >= arrivalMargin / 2 {
                    isAtHand = true
                    // Where the child stood when found: the readings since the arrival, or
                    // the last `confirmSpan` s of them when nearer (a find made walking in
                    // includes the walk; its renewal would be the last steps to the chest).
                    let last = max(confirmPackets, times.count { time - $0 <= confirmSpan })
                    atHandLoss = min(mean, self.mean(ofLast: last, at: time, noiseVariance: noiseVariance)?.mean ?? mean)
                } else if arrivalTypical - mean < arrivalMargin / 2 {
                    arrivalSince = nil
                }
            }
        }
        return was != isAtHand
    }

    /// The readings since `since` when they are enough to confirm an arrival (at least
    /// `confirmPackets`, spanning `confirmSpan` s): the first one's time, their mean path loss
    /// and its standard error.
    private func confirmation(since: Double, at time: Double, noiseVariance: Double) -> (first: Double, mean: Double, standardError: Double)? {
        // One pass, no copies: this runs on every packet while an arrival or a renewal is judged.
        var n = 0
        var sum = 0.0
        var first: Double?
        for (t, loss) in zip(times, losses) where t >= since {
            if first == nil { first = t }
            n += 1
            sum += loss
        }
        // Readings since `since` dropped for room (a fast tag, or pooled tags, past 100
        // readings a second) began the span there: held to the kept ones, 2.5 s never passed.
        let spanStart = droppedForRoomAt >= since ? since : first
        guard n >= confirmPackets, let first, let spanStart, time - spanStart >= confirmSpan else { return nil }
        let se = (max(noiseVariance, 0) / independentCount(n, span: (times.last ?? time) - first)).squareRoot()
        return (first, sum / Double(n), se)
    }

    /// While at hand: the level `renewalMargin` and `arrivalZ` standard errors below the mean
    /// at hand was found on starts a renewal; the readings since then, as many and as long as
    /// a find's confirmation, all of the margin below it make it a new arrival (the mean
    /// they hold is the new reference); back within half the margin, or not confirmed within
    /// `arrivalMemory`, it is forgotten.
    private mutating func judgeRenewal(latest: (mean: Double, standardError: Double), noiseVariance: Double, time: Double) {
        guard renewalMargin > 0, let reference = atHandLoss else { return }
        guard let since = renewalSince else {
            if reference - latest.mean >= max(renewalMargin, arrivalZ * latest.standardError) { renewalSince = time }
            return
        }
        guard let confirmed = confirmation(since: since, at: time, noiseVariance: noiseVariance) else {
            if time - since > Self.arrivalMemory { renewalSince = nil }
            return
        }
        let (mean, se) = (confirmed.mean, confirmed.standardError)
        if reference - mean >= max(renewalMargin, arrivalZ * se) {
            renewals += 1
            atHandLoss = mean
            renewalSince = nil
        } else if reference - mean < renewalMargin / 2 || time - since > Self.arrivalMemory {
            renewalSince = nil
        }
    }

    /// The typical loss of the last minute the arrival is judged against (the
    /// `typicalQuantile` of the history's means, the last `recentSeconds` left out); nil with
    /// fewer than `minimumHistoryMeans` of them.
    public func typicalLoss(at time: Double) -> Double? {
        let arrivalWindow = arrivalWindowCount(at: time)
        return typicalLoss(at: time, arrivalWindow: (arrivalWindow.count, arrivalWindow.slow))
    }

    func typicalLoss(at time: Double, arrivalWindow: (count: Int, slow: Bool)) -> Double? {
        // A slow beacon's arrival window reaches back further than `recentSeconds`: the history
        // leaves out what the window itself judges (the chest's own level, as the window gathers).
        var recent = Self.recentSeconds
        let (count, slow) = arrivalWindow
        if slow, count > 0, count <= times.count { recent = max(recent, time - times[times.count - count]) }
        let before = zip(historyTimes, historyLosses).filter { time - $0.0 >= recent }.map(\.1).sorted()
        return before.count >= Self.minimumHistoryMeans ? before[Int(Double(before.count) * Self.typicalQuantile)] : nil
    }
}
