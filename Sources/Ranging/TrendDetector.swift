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
    public static let minimumPackets = 6
    /// The z threshold the engine uses.
    public static let significance = 4.0
    public static let maximumPoints = 512

    private var times: [Double] = []
    private var values: [Double] = []
    public private(set) var last: Trend?
    private var lastTime: Double = -Double.infinity

    public init(window: Double, slope: Double, reversalFactor: Double, minimumInterval: Double, zThreshold: Double = 4,
                stepMargin: Double = 0, colderStepMargin: Double? = nil, colderZThreshold: Double? = nil, steepZThreshold: Double = .infinity, steepSlope: Double = .infinity, stepMarginReadings: Int = 1) {
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
                  stepMarginReadings: configuration.trendStepMarginReadings)
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
        var n = 0
        var st = 0.0, sv = 0.0
        var first = Double.infinity, lastSeen = -Double.infinity
        for (t, v) in zip(times, values) where now - t <= window {
            n += 1
            st += t - now
            sv += v
            first = min(first, t)
            lastSeen = max(lastSeen, t)
        }
        guard n >= Self.minimumPackets, lastSeen - first >= 0.75 * window else { return nil }
        let mt = st / Double(n), mv = sv / Double(n)
        var stt = 0.0, stv = 0.0
        for (t, v) in zip(times, values) where now - t <= window {
            let dt = t - now - mt
            stt += dt * dt
            stv += dt * (v - mv)
        }
        guard stt > 0 else { return nil }
        let slope = stv / stt
        var residual = 0.0
        for (t, v) in zip(times, values) where now - t <= window {
            let e = v - mv - slope * (t - now - mt)
            residual += e * e
        }
        // A slope, or a step? A body stepping between (or out) moves the level at once, and
        // a line through a step is steep: when one jump between two flat levels fits the
        // window as well as the line (within `stepMargin` reading variances), the change was
        // abrupt, not a walk (that is the proximity's business, with its dwell), and no
        // trend is claimed.
        let sigma2 = max(noiseVariance, residual / Double(max(n - 2, 1)))
        let advantage = sigma2 > 0 ? (residual - bestStepResidual(at: now)) / sigma2 : 0
        let se = (sigma2 / stt).squareRoot()
        return (slope, se > 0 ? slope / se : 0, advantage, n)
    }

    /// The least squared residual of two flat levels with one jump between (the best split,
    /// at least 2 readings a side); infinity with fewer than 4 readings. O(readings in the window).
    func bestStepResidual(at now: Double) -> Double {
        var total = 0.0, totalSquares = 0.0, n = 0
        for (t, v) in zip(times, values) where now - t <= window {
            total += v; totalSquares += v * v; n += 1
        }
        guard n >= 4 else { return .infinity }
        var left = 0.0, k = 0
        var best = Double.infinity
        for (t, v) in zip(times, values) where now - t <= window {
            left += v; k += 1
            guard k >= 2, n - k >= 2 else { continue }
            let right = total - left
            let rss = totalSquares - left * left / Double(k) - right * right / Double(n - k)
            best = min(best, rss)
        }
        return best
    }

    /// Feeds one reading (dBm) with the reading noise (dB²) the filter has learned.
    public mutating func update(value: Double, time: Double, noiseVariance: Double) -> Trend? {
        times.append(time)
        values.append(value)
        var drop = 0
        while drop < times.count && (time - times[drop] > window || times.count - drop > Self.maximumPoints) { drop += 1 }
        if drop > 0 {
            times.removeFirst(drop)
            values.removeFirst(drop)
        }
        guard time - lastTime >= minimumInterval,
              let (fitted, z, advantage, n) = fit(at: time, noiseVariance: noiseVariance) else { return nil }
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
        last = direction
        lastTime = time
        return direction
    }

    public mutating func reset() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }
}
