/// "Warmer" / "colder" only when the level's change is statistically significant.
///
/// The test: the least-squares slope b of the readings (raw RSSI, dBm; rising = warmer)
/// over the last `window` seconds, against its standard error under "nothing moved",
/// se = σ / sqrt(Σ(t − t̄)²), σ² the larger of the reading noise the filter learned and the
/// residual variance around the fitted line (a noisier room than assumed cannot sneak
/// trends through). A trend fires when |b| / se ≥ `zThreshold` (4: two-sided false-alarm
/// probability 6·10⁻⁵ per look under Gaussian noise; looks a window apart are independent,
/// so < 0.03 an hour with a 10 s window) **and** |b| ≥ `slope` dB/s (a child's walk, not a
/// drift). The window must hold `minimumPackets` readings spanning 3/4 of it, so a loss burst
/// gives no test rather than a test on a handful of packets; at most one event per
/// `minimumInterval`; a reversal (colder after warmer or back) needs `reversalFactor` times
/// the z threshold. `reset()` when the followed beacon changes. Memory: at most
/// `maximumPoints` readings within the window (the oldest are dropped first).
///
/// Beside the slope test, the rise test (`RiseTest`, off when nil): "warmer" when the last
/// seconds stand clear above where the level was 10-20 s ago and just before. Every "warmer"
/// (either test's) also needs the last seconds above 20-30 s ago (`slopeOldZThreshold` and
/// the rise test's own): a body that passed leaves the level where it was before it. None for
/// `dipMemory` s after the filter saw a fall undone (`update(...dipUndone:)`). The readings
/// are kept `RiseTest.history` s when the rise test is on.
public struct TrendDetector: Sendable, Equatable {
    public let window: Double
    public let slope: Double
    public let reversalFactor: Double
    public let minimumInterval: Double
    public let zThreshold: Double
    /// A step refuses the trend only when it leaves at least this many reading variances
    /// less squared residual than the line (0: as soon as it fits as well).
    public let stepMargin: Double
    /// "Colder" has its own: a body turning in front makes the level fall at once, and a walk
    /// away starts with that fall.
    public let colderStepMargin: Double
    public let colderZThreshold: Double
    /// "Warmer" also when the slope is at least `steepSlope` dB/s with a z of `steepZThreshold`
    /// (a slow beacon's few packets: a walk close by is steep, while the level's other trends
    /// at 10 Hz, significant but gentle, are not).
    public let steepZThreshold: Double
    /// The step margin applies in full from this many readings in the window, in proportion below.
    public let stepMarginReadings: Int
    public let steepSlope: Double
    /// The rise test (`RiseTest`): "warmer" also when the level of the last seconds stands
    /// clear above where it was 10-20 s ago and just before, on a walking-speed climb; nil: off.
    public let rise: RiseTest?
    /// The slope test's "warmer" also needs the rise test's level above 20-30 s ago by this
    /// many standard errors (nil: not asked).
    public let slopeOldZThreshold: Double?
    public static let minimumPackets = 6
    /// The z threshold the engine uses.
    public static let significance = 4.0
    /// 2048, not 512: the rise test looks back 30 s, and the region's tags that lie together
    /// all feed its trend (`RangingConfiguration.regionPoolingGate`); 512 readings were 8.5 s
    /// of three 20 Hz tags (17 s of one 30 Hz stream), and without the readings of 20-30 s
    /// ago a body that passed was not told from a rise.
    public static let maximumPoints = 2048
    /// Seconds after a dip was undone without "warmer" (the rise test's reference reaches
    /// back 20 s).
    public let dipMemory: Double
    /// No "colder" when a silence in the window is longer than this many median intervals
    /// (infinity: never refused; `gapHidesTheChange`). A body that steps between in a loss
    /// burst leaves the level lower after the silence, which a line through the window
    /// takes for a walk away; the step rule cannot see a step it has no readings of. Not for
    /// "warmer": a child turning towards the chest ends the body's shadow and its loss
    /// bursts, and that is how approaches start.
    public let colderGapFactor: Double

    /// Readings a second counted as independent (`RangingConfiguration.independentReadingRate`).
    public let independentRate: Double
    private var times: [Double] = []
    private var values: [Double] = []
    /// The latest reading dropped for room (more than `maximumPoints` in the window), not for
    /// age: the rise test's old block may then be empty for want of room, not of a past.
    private var droppedForRoomAt = -Double.infinity
    public private(set) var last: Trend?
    private var lastTime: Double = -Double.infinity

    public init(window: Double, slope: Double, reversalFactor: Double, minimumInterval: Double, zThreshold: Double = 4,
                stepMargin: Double = 0, colderStepMargin: Double? = nil, colderZThreshold: Double? = nil, steepZThreshold: Double = .infinity, steepSlope: Double = .infinity, stepMarginReadings: Int = 1,
                rise: RiseTest? = nil, slopeOldZThreshold: Double? = nil, dipMemory: Double = 0, colderGapFactor: Double = .infinity,
                independentRate: Double = .infinity) {
        self.independentRate = independentRate
        self.colderGapFactor = colderGapFactor
        self.rise = rise
        self.slopeOldZThreshold = slopeOldZThreshold
        self.dipMemory = dipMemory
        self.stepMarginReadings = stepMarginReadings
        self.steepZThreshold = steepZThreshold
        self.steepSlope = steepSlope
        self.window = window
        self.stepMargin = stepMargin
        self.colderStepMargin = colderStepMargin ?? stepMargin
        self.colderZThreshold = colderZThreshold ?? zThreshold
        self.slope = slope
        self.reversalFactor = reversalFactor
        self.minimumInterval = minimumInterval
        self.zThreshold = zThreshold
    }

    public init(configuration: RangingConfiguration) {
        self.init(window: configuration.trendWindow, slope: configuration.trendSlope,
                  reversalFactor: configuration.trendReversalFactor,
                  minimumInterval: configuration.trendMinimumInterval,
                  zThreshold: configuration.trendSignificance, stepMargin: configuration.trendStepMargin,
                  colderStepMargin: configuration.trendColderStepMargin,
                  colderZThreshold: configuration.trendColderSignificance,
                  steepZThreshold: configuration.trendSteepSignificance, steepSlope: configuration.trendSteepSlope,
                  stepMarginReadings: configuration.trendStepMarginReadings,
                  rise: configuration.trendRiseSignificance.isFinite
                      ? RiseTest(slope: configuration.trendRiseSlope, zThreshold: configuration.trendRiseSignificance,
                                 recentZThreshold: configuration.trendRiseRecentSignificance,
                                 oldZThreshold: configuration.trendRiseOldSignificance,
                                 independentRate: configuration.independentReadingRate)
                      : nil,
                  slopeOldZThreshold: configuration.trendSlopeOldSignificance.isFinite ? configuration.trendSlopeOldSignificance : nil,
                  dipMemory: configuration.trendDipMemory, colderGapFactor: configuration.trendColderGapFactor,
                  independentRate: configuration.independentReadingRate)
    }

    /// The test statistic now: (least-squares slope dB/s, z), when the window is full enough
    /// and the change is no step (`stepMargin`).
    public func statistic(at now: Double, noiseVariance: Double) -> (slope: Double, z: Double)? {
        guard let fit = fit(at: now, noiseVariance: noiseVariance),
              fit.stepAdvantage < stepMargin * min(1, Double(fit.readings) / Double(max(stepMarginReadings, 1))) else { return nil }
        return (fit.slope, fit.z)
    }

    /// The line's slope (dB/s) and z, and how many reading variances less squared residual
    /// the best one-jump fit leaves than the line (negative: the line fits better).
    func fit(at now: Double, noiseVariance: Double) -> (slope: Double, z: Double, stepAdvantage: Double, readings: Int)? {
        let start = RiseTest.firstIndex(times) { now - $0 <= window }
        let line = RiseTest.line(times, values, at: now, from: start)
        guard line.n >= Self.minimumPackets, line.span >= 0.75 * window, line.sxx > 0 else { return nil }
        let (n, stt, slope, residual) = (line.n, line.sxx, line.slope, line.residual)
        // A slope, or a step? A body stepping between (or out) moves the level at once, and
        // a line through a step is steep: when one jump between two flat levels fits the
        // window as well as the line (within `stepMargin` reading variances), the change was
        // abrupt, not a walk (that is the proximity's business, with its dwell), and no
        // trend is claimed.
        let sigma2 = max(noiseVariance, residual / Double(max(n - 2, 1)))
        let advantage = sigma2 > 0 ? (residual - bestStepResidual(from: start, count: n)) / sigma2 : 0
        // Readings faster than `independentRate` a second are not that much more evidence.
        let inflation = max(1, Double(n - 1) / (independentRate * max(line.span, 1e-9)))
        let se = (inflation * sigma2 / stt).squareRoot()
        return (slope, se > 0 ? slope / se : 0, advantage, n)
    }

    /// The least squared residual of two flat levels with one jump between (the best split,
    /// at least 2 readings a side) over the `n` readings from index `start` (the window's,
    /// as `fit` found them); infinity with fewer than 4 readings. O(readings in the window).
    func bestStepResidual(from start: Int, count n: Int) -> Double {
        guard n >= 4 else { return .infinity }
        var total = 0.0, totalSquares = 0.0
        for v in values[start..<(start + n)] {
            total += v; totalSquares += v * v
        }
        var left = 0.0, k = 0
        var best = Double.infinity
        for v in values[start..<(start + n)] {
            left += v; k += 1
            guard k >= 2, n - k >= 2 else { continue }
            let right = total - left
            let rss = totalSquares - left * left / Double(k) - right * right / Double(n - k)
            best = min(best, rss)
        }
        return best
    }

    /// Feeds one reading (dBm) with the reading noise (dB²) the filter has learned, and when
    /// the filter last saw a fall of the level undone (`KalmanRSSIFilter.lastDipUndone`): for
    /// `dipMemory` s after it no "warmer" is said, the level's rise being the dip's end (a body
    /// that passed, a turn away and back), not a walk.
    /// Times are taken in order (the windows are found by bisection): an earlier one counts
    /// as the latest, as in the engine.
    public mutating func update(value: Double, time: Double, noiseVariance: Double, dipUndone: Double? = nil) -> Trend? {
        let time = max(time, times.last ?? time)
        times.append(time)
        values.append(value)
        let keep = max(window, rise == nil ? 0 : RiseTest.history)
        if let dropped = trimReadings(&times, &values, at: time, span: keep, capacity: Self.maximumPoints) { droppedForRoomAt = dropped }
        guard time - lastTime >= minimumInterval else { return nil }
        var direction = slopeTest(at: time, noiseVariance: noiseVariance)
        let afterDip = dipUndone.map { time - $0 <= dipMemory } ?? false
        if direction == .warmer, afterDip { direction = nil }
        // The rise test's statistics, once: the slope test's warmer is guarded by them, and
        // without a slope-test trend the rise test judges them.
        let guarded = direction == .warmer && slopeOldZThreshold != nil
        let risen = guarded || (direction == nil && !afterDip)
            ? rise?.statistics(times: times, values: values, at: time, noiseVariance: noiseVariance) : nil
        // No old block because readings faster than `maximumPoints` in 30 s pushed it out
        // (about 70 a second): the level 20-30 s ago is not known, so it cannot vouch for a
        // rise. (Counted as shown, a body gone after its dip was a warmer at 105 Hz.) A track
        // younger than that has no past to weigh, as before.
        let pastUnknown = risen != nil && risen?.oldZ == nil && droppedForRoomAt >= time - RiseTest.history
        if guarded, let guardZ = slopeOldZThreshold, pastUnknown || (risen?.oldZ ?? .infinity) < guardZ { direction = nil }
        if direction == nil, !afterDip, let rise, let risen, !(pastUnknown && rise.oldZThreshold > -.infinity) {
            // A reversal needs `reversalFactor` times the rise test's z too.
            direction = rise.passes(risen, factor: last == .colder ? reversalFactor : 1) ? .warmer : nil
        }
        guard let direction, direction == .warmer || !gapHidesTheChange(at: time) else { return nil }
        last = direction
        lastTime = time
        return direction
    }

    /// Whether a silence in the last `window` s is longer than `colderGapFactor` times the
    /// readings' median interval (and than a second): across it a body's step and a walk's
    /// slope fit the readings alike. O(readings kept · log), only when a trend would be said.
    func gapHidesTheChange(at now: Double) -> Bool {
        guard colderGapFactor.isFinite, times.count >= 3 else { return false }
        var intervals: [Double] = []
        intervals.reserveCapacity(times.count - 1)
        var largest = 0.0
        for i in 1..<times.count {
            let gap = times[i] - times[i - 1]
            intervals.append(gap)
            if now - times[i] <= window { largest = max(largest, gap) }
        }
        intervals.sort()
        let median = intervals[intervals.count / 2]
        return largest > max(1, colderGapFactor * median)
    }

    /// The least-squares slope test with its step rule.
    private func slopeTest(at time: Double, noiseVariance: Double) -> Trend? {
        guard let (fitted, z, advantage, n) = fit(at: time, noiseVariance: noiseVariance) else { return nil }
        let direction: Trend = fitted > 0 ? .warmer : .colder
        // The margin in full from `stepMarginReadings` readings: how much better a step fits
        // grows with the readings (n·R²/16 variances for a step of R), the luck of the chosen
        // split does not; with a 1 Hz beacon's dozen readings a body's 15 dB step is only a
        // few variances better.
        let margin = (direction == .warmer ? stepMargin : colderStepMargin) * min(1, Double(n) / Double(max(stepMarginReadings, 1)))
        guard advantage < margin else { return nil }
        var needed = direction == .warmer ? zThreshold : colderZThreshold
        var steepNeeded = direction == .warmer ? steepZThreshold : .infinity
        if let previous = last, previous != direction {
            needed *= reversalFactor
            steepNeeded *= reversalFactor
        }
        guard (abs(z) >= needed && abs(fitted) >= slope) || (abs(z) >= steepNeeded && abs(fitted) >= steepSlope) else { return nil }
        return direction
    }

    public mutating func reset() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// The readings move to another scale (`delta` dB added to each): the region's followed
    /// beacon changed to one that lies with it, whose readings the old ones were mapped onto.
    public mutating func shift(by delta: Double) {
        for i in values.indices { values[i] += delta }
    }
}

/// "Warmer" from where the level was: the mean of the last `recent` s against the mean of
/// 10-20 s ago (`reference`) and of 3-13 s ago (`before`), each difference in standard
/// errors of the readings' spread around the last 30 s's line, on a least-squares climb of
/// at least `slope` dB/s over the last 15 s. A child walking towards the chest is closer now
/// than 10-20 s ago (the hunt's "warmer" promises 1 m closer than some moment of the last
/// 10 s) and than just before, and climbs at walking speed; a level that only wanders (the
/// yard's shadowing crossed sideways) or jumps once and stays (a turn) seldom passes all
/// three. No step rule: a turn towards the chest followed by a walk is the common start of an
/// approach, and the 15 s climb and the two references refuse most turns made standing.
/// Tuned on walks of several radios (docs/ranging.md, "Fifth round"). O(readings in 30 s).
public struct RiseTest: Sendable, Equatable {
    public var slope: Double
    public var zThreshold: Double
    public var recentZThreshold: Double
    /// The last seconds also this many standard errors above 20-30 s ago, when that was heard
    /// (-infinity: not asked): a body that passed (10-20 dB for 1-10 s) leaves the level where
    /// it was before it, an approach does not.
    public var oldZThreshold: Double
    /// Readings a second counted as independent evidence at most (a block of the last
    /// seconds counts as no more readings than its length times this).
    public var independentRate: Double
    /// Seconds of readings the test reads (the spread's line takes a reading exactly this old,
    /// as a host delivering reports in batches stamps them on round times).
    public static let history = 30.0
    static let slopeWindow = 15.0
    static let recent = 3.0
    static let reference: ClosedRange<Double> = 10 ... 20
    static let before: ClosedRange<Double> = 3 ... 13
    static let old: ClosedRange<Double> = 20 ... 30
    /// The readings' spread (dB) with fewer than 5 readings in 30 s, and its bounds.
    static let defaultSpread = 7.0
    static let spreadBounds: ClosedRange<Double> = 2 ... 20

    public init(slope: Double, zThreshold: Double, recentZThreshold: Double, oldZThreshold: Double = -.infinity,
                independentRate: Double = .infinity) {
        self.independentRate = independentRate
        self.oldZThreshold = oldZThreshold
        self.slope = slope
        self.zThreshold = zThreshold
        self.recentZThreshold = recentZThreshold
    }

    /// What the test judges at one moment: the 15 s slope (dB/s), the spread (dB), and the
    /// last seconds' differences from 10-20 s, 3-13 s and 20-30 s ago (nil: none heard then),
    /// in standard errors.
    public struct Statistics: Sendable, Equatable {
        public var slope: Double
        public var spread: Double
        public var z: Double
        public var recentZ: Double
        public var oldZ: Double?
    }

    /// The statistics at `now` from readings in time order; nil when a block is empty or the
    /// slope window holds fewer than 3 readings.
    public func statistics(times: [Double], values: [Double], at now: Double, noiseVariance: Double = 0) -> Statistics? {
        let all = Self.line(times, values, at: now, from: Self.firstIndex(times) { $0 >= now - Self.history })
        var spread = Self.defaultSpread
        if all.n >= 5 { spread = (max(all.residual / Double(all.n - 2), noiseVariance)).squareRoot() }
        spread = min(max(spread, Self.spreadBounds.lowerBound), Self.spreadBounds.upperBound)
        let climb = Self.line(times, values, at: now, from: Self.firstIndex(times) { $0 > now - Self.slopeWindow })
        guard climb.n >= 3, climb.sxx > 1e-9 else { return nil }
        func block(_ ago: ClosedRange<Double>) -> (n: Int, mean: Double) {
            var n = 0, sum = 0.0
            var i = Self.firstIndex(times) { $0 > now - ago.upperBound }
            while i < times.count, times[i] <= now - ago.lowerBound {
                n += 1
                sum += values[i]
                i += 1
            }
            let counted = min(Double(n), max(1, independentRate * (ago.upperBound - ago.lowerBound)))
            return (Int(counted.rounded(.down)), n > 0 ? sum / Double(n) : 0)
        }
        let last = block(0 ... Self.recent), reference = block(Self.reference), before = block(Self.before)
        guard last.n > 0, reference.n > 0, before.n > 0 else { return nil }
        func z(_ a: (n: Int, mean: Double), _ b: (n: Int, mean: Double)) -> Double {
            (a.mean - b.mean) / (spread * (1 / Double(a.n) + 1 / Double(b.n)).squareRoot())
        }
        let old = block(Self.old)
        return Statistics(slope: climb.slope, spread: spread, z: z(last, reference), recentZ: z(last, before),
                          oldZ: old.n > 0 ? z(last, old) : nil)
    }

    /// Whether these statistics are a rise; `factor` scales both z thresholds (a reversal).
    public func passes(_ s: Statistics, factor: Double = 1) -> Bool {
        s.slope >= slope && s.z >= zThreshold * factor && s.recentZ >= recentZThreshold * factor
            && (s.oldZ ?? .infinity) >= oldZThreshold
    }

    /// Whether the level rises now.
    public func isRising(times: [Double], values: [Double], at now: Double, noiseVariance: Double = 0, factor: Double = 1) -> Bool {
        statistics(times: times, values: values, at: now, noiseVariance: noiseVariance).map { passes($0, factor: factor) } ?? false
    }

    /// The first index whose time passes `isIn` (false before it, true from it on: the times
    /// are in order), by bisection; `times.count` when none does.
    static func firstIndex(_ times: [Double], where isIn: (Double) -> Bool) -> Int {
        var low = 0, high = times.count
        while low < high {
            let middle = (low + high) / 2
            if isIn(times[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The least-squares line of the readings from index `start` up to `now` (in time
    /// order): count, Σ(t − t̄)², slope, residual sum of squares and the span of their times.
    /// Both tests' lines. O(readings in it).
    static func line(_ times: [Double], _ values: [Double], at now: Double, from start: Int)
        -> (n: Int, sxx: Double, slope: Double, residual: Double, span: Double) {
        var end = start
        while end < times.count, times[end] <= now { end += 1 }
        let n = end - start
        guard n > 0 else { return (0, 0, 0, 0, 0) }
        var st = 0.0, sv = 0.0
        for i in start..<end {
            st += times[i] - now
            sv += values[i]
        }
        let mt = st / Double(n), mv = sv / Double(n)
        var sxx = 0.0, sxy = 0.0
        for i in start..<end {
            let dt = times[i] - now - mt
            sxx += dt * dt
            sxy += dt * (values[i] - mv)
        }
        let slope = sxx > 0 ? sxy / sxx : 0
        var residual = 0.0
        for i in start..<end {
            let e = values[i] - mv - slope * (times[i] - now - mt)
            residual += e * e
        }
        return (n, sxx, slope, residual, times[end - 1] - times[start])
    }
}
