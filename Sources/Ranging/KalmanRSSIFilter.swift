/// One-dimensional Kalman filter on the RSSI level (dBm) of one beacon.
///
/// The level is a random walk whose variance grows by `processNoise` per second of real
/// time, so irregular packet spacing is handled exactly: a packet after a long gap moves the
/// estimate more than one 100 ms after the previous. Readings outside `plausibleRSSI`
/// (127 = "not available", 0, absurd values) are rejected; innovations beyond
/// `innovationGate` standard deviations are clipped, so one outlier moves the level by a
/// bounded step. `reset()` forgets everything (used when the beacon is lost).
public struct KalmanRSSIFilter: Sendable, Equatable {
    public let processNoise: Double
    public let measurementNoise: Double
    public let innovationGate: Double
    public let plausibleRSSI: ClosedRange<Int>

    /// Filtered level, dBm; `nil` before the first accepted reading.
    public private(set) var level: Double?
    /// Variance of `level`, dB².
    public private(set) var variance: Double = 0
    /// Time of the last accepted reading.
    public private(set) var lastTime: Double = 0
    /// Accepted readings since the last reset.
    public private(set) var count: Int = 0

    public init(processNoise: Double, measurementNoise: Double, innovationGate: Double,
                plausibleRSSI: ClosedRange<Int>) {
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
        self.innovationGate = innovationGate
        self.plausibleRSSI = plausibleRSSI
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
        let z = Double(rssi)
        guard let x = level else {
            level = z
            variance = measurementNoise
            lastTime = time
            count = 1
            return true
        }
        let dt = max(0, time - lastTime)
        let predicted = variance + processNoise * dt
        let innovationVariance = predicted + measurementNoise
        let limit = innovationGate * innovationVariance.squareRoot()
        let innovation = min(max(z - x, -limit), limit)
        let gain = predicted / innovationVariance
        level = x + gain * innovation
        variance = (1 - gain) * predicted
        lastTime = max(lastTime, time)
        count += 1
        return true
    }

    /// Variance of the level extrapolated to `time` (grows with silence).
    public func variance(at time: Double) -> Double {
        variance + processNoise * max(0, time - lastTime)
    }

    public mutating func reset() {
        level = nil
        variance = 0
        lastTime = 0
        count = 0
    }
}
