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

        // The reading noise, learned from clipped innovations (bounded: 1-30 dB sd).
        let weight = 1 / Double(min(count, 200) + 20)
        let squared = z * z * innovationVariance - predicted
        noiseVariance = min(max(noiseVariance + weight * (squared - noiseVariance), 1), 900)

        // CUSUM of the normalised innovation; the sums since each side left zero give the
        // level after a change.
        upper = max(0, upper + z - changeDrift)
        if upper > 0 { upperSum += y; upperCount += 1 } else { upperSum = 0; upperCount = 0 }
        lower = max(0, lower - z - changeDrift)
        if lower > 0 { lowerSum += y; lowerCount += 1 } else { lowerSum = 0; lowerCount = 0 }
        if upper > changeThreshold || lower > changeThreshold {
            let (sum, n) = upper > changeThreshold ? (upperSum, upperCount) : (lowerSum, lowerCount)
            level = sum / Double(max(n, 1))
            variance = noiseVariance / Double(max(n, 1))
            changes += 1
            upper = 0; lower = 0
            upperSum = 0; upperCount = 0; lowerSum = 0; lowerCount = 0
            return true
        }

        let gain = predicted / innovationVariance
        level = x + gain * z * sd
        variance = (1 - gain) * predicted
        return true
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
