/// Whether the receiver itself is deaf: what it hears of advertisers other than the regions'
/// beacons (phones, watches, a neighbour's television), and the silence of everyone at once.
///
/// A beacon's silence is evidence that it went away only while the receiver could have heard
/// it. A receiver sharing its antenna with Wi-Fi, in a crowded band, or whose controller is
/// busy or resetting hears nobody for seconds: every beacon falls silent at once, and a
/// region's gap model, which learns such spells only after it has seen several, said "left"
/// after the first ones (walks with 10-20 s outages: 7.6 false exits an hour). When the
/// others the receiver usually hears fall silent together with the beacons, the receiver is
/// deaf, and the silence says nothing of the beacons.
///
/// Deaf, from the last report of anyone, once everyone has been silent `gapFactor` times
/// the others' usual longest gap (the 90th percentile of their last `gapCount` gaps, at least
/// `shortestDeafness` s), and only when the others were being heard when the silence began
/// (their last report within that bound of it) and at least `minimumGaps` of their gaps
/// are known. A receiver that hears nobody else, or hears them seldom, is never deaf: its
/// beacons' silences count as they always did. A spell longer than `longestDeafness` is no
/// longer deafness but a receiver that hears nothing (the hunt's own outage rules speak
/// for it), and its silence counts whole. A controller gone by its own word (`lost(at:)`,
/// the adapter unplugged or reset) is deaf until it is back, however long, others or not.
///
/// Pure and bounded: `gapCount` numbers.
public struct ReceiverHearing: Sendable, Equatable {
    public static let gapCount = 32
    public static let minimumGaps = 8
    public static let gapFactor = 3.0
    public static let shortestDeafness = 1.0
    public static let longestDeafness = 60.0

    /// The others' last gaps (a ring of at most `gapCount`), and where the next one goes.
    private var gaps: [Double] = []
    private var nextGap = 0
    /// The silence of everyone that is deafness (nil: the others are not heard enough to tell).
    private var deafAfter: Double?
    public private(set) var lastOther: Double?
    /// The last report of anyone (a region's beacon or another advertiser).
    public private(set) var lastHeard: Double?
    /// Since when the controller has been gone by its own word (`lost(at:)`): deaf, however
    /// long, and whoever else is heard or not.
    public private(set) var lostSince: Double?

    public init() {}

    /// How much of an inferred deaf spell of `spell` s a silence that has had `excused` s
    /// excused already may still have: at most `longestDeafness` in all.
    static func excusable(_ spell: Double, after excused: Double) -> Double {
        min(spell, max(0, longestDeafness - excused))
    }

    /// How long everyone must have been silent since `start` (the last report of anyone)
    /// for the receiver to be deaf; nil when the others do not tell.
    func deafSilence(since start: Double) -> Double? {
        guard let bound = deafAfter, let other = lastOther, start - other <= bound else { return nil }
        return bound
    }

    /// Whether the receiver is deaf at `time`.
    public func isDeaf(at time: Double) -> Bool {
        lostSince != nil || spell(at: time) != nil
    }

    /// The controller went away at `time` (unplugged, reset, its transport closed).
    public mutating func lost(at time: Double) {
        if lostSince == nil { lostSince = time }
    }

    /// The controller is back at `time`. Returns the length of the deaf spell this ends: from
    /// the loss, or from the last report of anyone when everyone had already been silent long
    /// enough to call the receiver deaf then; nil when it was not lost.
    public mutating func back(at time: Double) -> Double? {
        guard let since = lostSince else { return nil }
        lostSince = nil
        let start = spell(at: since) != nil ? (lastHeard ?? since) : since
        // What is heard next is after the spell, not its end again.
        lastHeard = max(lastHeard ?? time, time)
        return max(0, time - start)
    }

    /// The deaf spell in progress at `time`: its length so far; nil when there is none.
    func spell(at time: Double) -> Double? {
        guard let last = lastHeard, let bound = deafSilence(since: last) else { return nil }
        let silence = time - last
        return silence > bound && silence <= Self.longestDeafness ? silence : nil
    }

    /// Anything heard at `time`. Returns the length of the deaf spell this ends (nil: none).
    public mutating func heard(at time: Double) -> Double? {
        let spell = lostSince == nil ? spell(at: time) : nil
        lastHeard = max(lastHeard ?? time, time)
        return spell
    }

    /// Another advertiser heard at `time` (call `heard(at:)` too).
    public mutating func heardOther(at time: Double) {
        defer { lastOther = max(lastOther ?? time, time) }
        // Reports of one advertising event (or of a batch) are no gap; a gap that spans a
        // deaf spell or longer is not the others' usual pace.
        guard let last = lastOther, time - last >= ArrivalStatistics.sameEvent, time - last <= Self.longestDeafness else { return }
        if gaps.count < Self.gapCount {
            gaps.append(time - last)
        } else {
            gaps[nextGap] = time - last
        }
        nextGap = (nextGap + 1) % Self.gapCount
        guard gaps.count >= Self.minimumGaps else { return }
        let sorted = gaps.sorted()
        let usual = sorted[min(sorted.count - 1, Int(0.9 * Double(sorted.count)))]
        deafAfter = max(Self.shortestDeafness, Self.gapFactor * usual)
    }
}
