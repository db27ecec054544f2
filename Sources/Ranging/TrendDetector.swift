/// "Warmer" / "colder" from the slope of a filtered signal (dBm; rising = warmer).
///
/// The slope is a least-squares fit over the last `window` seconds (needs the window to be
/// at least 3/4 full). A trend fires when |slope| >= `slope` dB/s, at most once per
/// `minimumInterval`; a reversal needs `reversalFactor` times the slope, so noise around a
/// standstill does not flip it back and forth. `reset()` when the followed beacon changes.
public struct TrendDetector: Sendable, Equatable {
    public let window: Double
    public let slope: Double
    public let reversalFactor: Double
    public let minimumInterval: Double

    private var points: [(time: Double, value: Double)] = []
    public private(set) var last: Trend?
    private var lastTime: Double = -Double.infinity

    public init(window: Double, slope: Double, reversalFactor: Double, minimumInterval: Double) {
        self.window = window
        self.slope = slope
        self.reversalFactor = reversalFactor
        self.minimumInterval = minimumInterval
    }

    public init(configuration: RangingConfiguration) {
        self.init(window: configuration.trendWindow, slope: configuration.trendSlope,
                  reversalFactor: configuration.trendReversalFactor,
                  minimumInterval: configuration.trendMinimumInterval)
    }

    public static func == (lhs: TrendDetector, rhs: TrendDetector) -> Bool {
        lhs.window == rhs.window && lhs.slope == rhs.slope && lhs.last == rhs.last
            && lhs.lastTime == rhs.lastTime && lhs.points.count == rhs.points.count
            && zip(lhs.points, rhs.points).allSatisfy { $0.time == $1.time && $0.value == $1.value }
    }

    /// Least-squares slope (dB/s) of the points in the window, if it is full enough.
    public var currentSlope: Double? {
        guard let first = points.first, let lastPoint = points.last,
              lastPoint.time - first.time >= 0.75 * window, points.count >= 3 else { return nil }
        let n = Double(points.count)
        var st = 0.0, sv = 0.0
        for p in points { st += p.time - first.time; sv += p.value }
        let mt = st / n, mv = sv / n
        var num = 0.0, den = 0.0
        for p in points {
            let dt = p.time - first.time - mt
            num += dt * (p.value - mv)
            den += dt * dt
        }
        return den > 0 ? num / den : nil
    }

    public mutating func update(value: Double, time: Double) -> Trend? {
        // Keep at most ~8 points per second: enough for the fit, bounded memory.
        if let lastPoint = points.last, time - lastPoint.time < 0.125 {
            points[points.count - 1] = (lastPoint.time, value)
        } else {
            points.append((time, value))
        }
        points.removeAll { time - $0.time > window }
        guard let s = currentSlope, time - lastTime >= minimumInterval else { return nil }
        let direction: Trend
        if s >= slope { direction = .warmer } else if s <= -slope { direction = .colder } else { return nil }
        if let previous = last, previous != direction, abs(s) < slope * reversalFactor { return nil }
        last = direction
        lastTime = time
        return direction
    }

    public mutating func reset() {
        points.removeAll(keepingCapacity: true)
    }
}
