/// One-dimensional Kalman filter on the RSSI level (dBm) of one beacon, with a change-point
/// test that shortens its memory only when the level really moved.
///
/// Steady: the level is a random walk whose variance grows by `processNoise` per second of
/// real time (small: the filter averages over ~10 s at 10 Hz, so a child standing still
/// hears a calm level). Irregular spacing is exact: a packet after a loss burst counts
/// more, and the variance widens with the silence (`variance(at:)`); nothing is reset by a
/// burst. The reading noise `noiseVariance` is learned (starts at `measurementNoise`, then
/// a running mean of the squared innovations less the level's own variance, bounded).
///
/// Moving: a two-sided CUSUM on the normalised innovations z = (y − level) / sqrt(P + R),
/// each clipped at `innovationGate`: g⁺ = max(0, g⁺ + z − k), g⁻ = max(0, g⁻ − z − k). When
/// g⁺ or g⁻ passes `changeThreshold` (h) the level moved: it jumps to the mean of the
/// readings since that side's CUSUM last left zero (the change's onset), with the variance
/// of that mean, and both sums restart. With k = `changeDrift` = 0.5 and h = `changeThreshold`
/// = 10 (constants, init parameters for experiments), a 12 dB step
/// (1.5 → 6 m) is found after ~8 packets (0.8 s at 10 Hz); the average run length between
/// false alarms under Gaussian noise is ~1.4·10⁵ packets a side (~4 h at 10 Hz), and a
/// false alarm only re-centres the level on recent readings (no event of its own).
///
/// Back: a body that passes between hunter and beacon (or a turn away and back) is a fall
/// that comes back to where it was. After a change the filter keeps the level before it and,
/// for `returnWindow` s, a CUSUM of the readings' log-likelihood ratio "at the old level"
/// against "at the new one" (each clipped at ±3 nats); past `returnThreshold` (9.2 nats: at
/// least 4 readings) the old level is restored at once, where a second change would take as
/// long to find as the first (a 1 Hz beacon's level stayed down 10-17 s after an 8 s body,
/// and its class said "far" meanwhile). `lastDipUndone` tells when a fall was undone.
/// Readings outside `plausibleRSSI` are rejected. `reset()` forgets everything (used after
/// a true absence only).
public struct KalmanRSSIFilter: Sendable, Equatable {
    public let processNoise: Double
    public let measurementNoise: Double
    public let innovationGate: Double
    public let plausibleRSSI: ClosedRange<Int>
    public let changeDrift: Double
    public let changeThreshold: Double

    /// Filtered level, dBm; `nil` before the first accepted reading.
    public private(set) var level: Double?
    /// Variance of `level`, dB².
    public private(set) var variance: Double = 0
    /// Learned variance of one reading around the level, dB².
    public private(set) var noiseVariance: Double
    /// Time of the last accepted reading.
    public private(set) var lastTime: Double = 0
    /// Accepted readings since the last reset.
    public private(set) var count: Int = 0
    /// Level changes found by the CUSUM since the last reset.
    public private(set) var changes: Int = 0
    /// When a fall of the level was last undone (the readings back at the level before it: a
    /// body that passed, a turn away and back); nil when none was since the last reset.
    public private(set) var lastDipUndone: Double?

    /// After a change: the level before it, that level's variance, when the change was found
    /// and the level it jumped to; and the evidence (log-likelihood ratio, a CUSUM) that the
    /// readings since are back at the old level (`returnThreshold`).
    private var beforeChange: Change?
    private struct Change: Sendable, Equatable {
        var level: Double
        var variance: Double
        var time: Double
        var after: Double
    }
    private var returnEvidence = 0.0
    /// A change is undone when the readings since it are this many nats likelier at the old
    /// level than at the new one (a CUSUM of clipped per-reading log-likelihood ratios; 4.6
    /// and 6.9 undid a walk away now and then: the class said "near" after "far") ...
    public static let returnThreshold = 9.2
    /// ... within this long (s) of the change (later, the new level is the level) ...
    public static let returnWindow = 30.0
    /// ... for changes of at least this many reading sds (smaller ones are not bodies).
    public static let returnSeparation = 1.2

    private var upper = 0.0
    private var lower = 0.0
    private var upperSum = 0.0
    private var upperCount = 0
    private var lowerSum = 0.0
    private var lowerCount = 0

    public init(processNoise: Double, measurementNoise: Double, innovationGate: Double,
                plausibleRSSI: ClosedRange<Int>, changeDrift: Double = 0.5, changeThreshold: Double = 10) {
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
        self.innovationGate = innovationGate
        self.plausibleRSSI = plausibleRSSI
        self.changeDrift = changeDrift
        self.changeThreshold = changeThreshold
        self.noiseVariance = measurementNoise
    }

    public init(configuration: RangingConfiguration) {
        self.init(processNoise: configuration.processNoise,
                  measurementNoise: configuration.measurementNoise,
                  innovationGate: configuration.innovationGate,
                  plausibleRSSI: configuration.plausibleRSSI)
    }

    public func isPlausible(_ rssi: Int?) -> Bool {
        guard let rssi else { return false }
        return plausibleRSSI.contains(rssi)
    }

    /// Feeds one reading; returns false (and changes nothing) when it is rejected.
    @discardableResult
    public mutating func update(rssi: Int?, time: Double) -> Bool {
        guard let rssi, plausibleRSSI.contains(rssi) else { return false }
        let y = Double(rssi)
        guard let x = level else {
            level = y
            variance = noiseVariance
            lastTime = time
            count = 1
            return true
        }
        let dt = max(0, time - lastTime)
        let predicted = variance + processNoise * dt
        let innovationVariance = predicted + noiseVariance
        let sd = innovationVariance.squareRoot()
        let z = min(max((y - x) / sd, -innovationGate), innovationGate)
        lastTime = max(lastTime, time)
        count += 1

        // The reading noise, learned from clipped innovations (bounded: 1-30 dB sd). Not
        // after a silence long enough that the level's own drift outweighs the noise (a
        // receiver deaf for a day): the innovation then says nothing of the readings, and
        // a day's drift subtracted taught it 1 dB² for hundreds of readings.
        if processNoise * dt <= noiseVariance {
            let weight = 1 / Double(min(count, 200) + 20)
            let squared = z * z * innovationVariance - predicted
            noiseVariance = min(max(noiseVariance + weight * (squared - noiseVariance), 1), 900)
        }

        // CUSUM of the normalised innovation; the sums since each side left zero give the
        // level after a change.
        upper = max(0, upper + z - changeDrift)
        if upper > 0 { upperSum += y; upperCount += 1 } else { upperSum = 0; upperCount = 0 }
        lower = max(0, lower - z - changeDrift)
        if lower > 0 { lowerSum += y; lowerCount += 1 } else { lowerSum = 0; lowerCount = 0 }
        // Back where it was before the last change (a body that passed, a turn undone): the
        // old level at once, rather than a second change found as slowly as the first.
        if let before = beforeChange {
            if time - before.time > Self.returnWindow {
                beforeChange = nil
            } else {
                let separation = (before.level - before.after) / noiseVariance.squareRoot()
                let step = ((y - before.after) * (y - before.after) - (y - before.level) * (y - before.level)) / (2 * noiseVariance)
                returnEvidence = max(0, returnEvidence + min(max(step, -3), 3))
                if abs(separation) >= Self.returnSeparation, returnEvidence > Self.returnThreshold {
                    if before.level > before.after { lastDipUndone = time }
                    level = before.level
                    variance = before.variance + processNoise * max(0, time - before.time)
                    beforeChange = nil
                    restartChangeTest()
                    return true
                }
            }
        }
        if upper > changeThreshold || lower > changeThreshold {
            let (sum, n) = upper > changeThreshold ? (upperSum, upperCount) : (lowerSum, lowerCount)
            let after = sum / Double(max(n, 1))
            beforeChange = Change(level: x, variance: variance, time: time, after: after)
            level = after
            variance = noiseVariance / Double(max(n, 1))
            restartChangeTest()
            return true
        }

        let gain = predicted / innovationVariance
        level = x + gain * z * sd
        variance = (1 - gain) * predicted
        return true
    }

    /// The level moved (a change, or one undone): counted, and both tests start afresh.
    private mutating func restartChangeTest() {
        changes += 1
        returnEvidence = 0
        upper = 0; lower = 0
        upperSum = 0; upperCount = 0; lowerSum = 0; lowerCount = 0
    }

    /// Variance of the level extrapolated to `time` (grows with silence).
    public func variance(at time: Double) -> Double {
        variance + processNoise * max(0, time - lastTime)
    }

    public mutating func reset() {
        self = KalmanRSSIFilter(processNoise: processNoise, measurementNoise: measurementNoise,
                                innovationGate: innovationGate, plausibleRSSI: plausibleRSSI,
                                changeDrift: changeDrift, changeThreshold: changeThreshold)
    }
}
