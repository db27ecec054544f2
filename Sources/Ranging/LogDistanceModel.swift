#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Log-distance path loss: rssi = measuredPower − 10·n·log10(d), so
/// d = 10^((measuredPower − rssi) / (10·n)), strictly decreasing in RSSI.
/// The uncertainty combines the filter's variance with the room's spread around the model
/// (`environmentSigma`) and is carried as a log-normal sigma.
public struct LogDistanceModel: Sendable, Equatable {
    public var exponent: Double
    public var environmentSigma: Double
    public var plausibleMeasuredPower: ClosedRange<Int>

    public init(exponent: Double, environmentSigma: Double, plausibleMeasuredPower: ClosedRange<Int> = -100 ... -20) {
        self.exponent = exponent
        self.environmentSigma = environmentSigma
        self.plausibleMeasuredPower = plausibleMeasuredPower
    }

    public init(configuration: RangingConfiguration) {
        self.init(exponent: configuration.pathLossExponent,
                  environmentSigma: configuration.environmentSigma,
                  plausibleMeasuredPower: configuration.plausibleMeasuredPower)
    }

    /// Path loss in dB relative to 1 m (the quantity compared against class edges).
    public func pathLoss(measuredPower: Int, rssi: Double) -> Double {
        Double(measuredPower) - rssi
    }

    /// Path loss (dB relative to 1 m) at which the model puts `meters`.
    public func pathLoss(atMeters meters: Double) -> Double {
        10 * exponent * log10(meters)
    }

    /// Distance for a filtered RSSI whose variance is `rssiVariance` (dB²); `nil` when the
    /// measured power is implausible. `environmentSigma`, when given, is this beacon's room
    /// spread instead of the model's (a beacon calibrated in the room is known better).
    public func estimate(measuredPower: Int, rssi: Double, rssiVariance: Double, environmentSigma: Double? = nil) -> DistanceEstimate? {
        guard plausibleMeasuredPower.contains(measuredPower), exponent > 0, rssi.isFinite else { return nil }
        let loss = pathLoss(measuredPower: measuredPower, rssi: rssi)
        let meters = pow(10, loss / (10 * exponent))
        let room = environmentSigma ?? self.environmentSigma
        let dBSigma = (max(0, rssiVariance) + room * room).squareRoot()
        let logSigma = dBSigma * log(10) / (10 * exponent)
        return DistanceEstimate(meters: meters, logSigma: logSigma)
    }
}
