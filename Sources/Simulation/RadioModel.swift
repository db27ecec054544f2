#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The public noise model of the ranging benchmark: log-distance path loss from the
/// beacon's measured power, Gaussian noise, and a fixed offset per advertising channel.
public struct PathLossModel: Sendable, Equatable {
    /// RSSI at 1 m, dBm (also what the simulated beacon advertises).
    public var measuredPower: Int = -59
    public var exponent: Double = 2.0
    /// Gaussian spread of one reading, dB.
    public var noiseSigma: Double = 5.7
    /// Offset of channels 37, 38, 39 (dB); packets use them in turn.
    public var channelOffsets: [Double] = [5, 0, -5]
    /// Readings below this (dBm) are not received (`nil`: no floor).
    public var sensitivity: Double?

    public init() {}

    public init(measuredPower: Int, exponent: Double, noiseSigma: Double, channelOffsets: [Double],
                sensitivity: Double? = nil) {
        self.measuredPower = measuredPower
        self.exponent = exponent
        self.noiseSigma = noiseSigma
        self.channelOffsets = channelOffsets
        self.sensitivity = sensitivity
    }

    /// Mean RSSI (dBm) at `distance` metres, averaged over channels.
    public func meanRSSI(atDistance distance: Double) -> Double {
        Double(measuredPower) - 10 * exponent * log10(max(distance, 0.01))
    }

    /// One reading at `distance` on channel index `channel` (0, 1, 2 for 37, 38, 39).
    public func reading(atDistance distance: Double, channel: Int, noise: inout GaussianSource) -> Double {
        let offset = channelOffsets.isEmpty ? 0 : channelOffsets[channel % channelOffsets.count]
        return meanRSSI(atDistance: distance) + offset + noiseSigma * noise.nextGaussian()
    }
}

/// Gilbert-Elliott two-state burst loss: a good and a bad state, each with its own loss
/// probability, and per-packet transition probabilities between them.
public struct GilbertElliottLoss: Sendable, Equatable {
    public var goodToBad: Double
    public var badToGood: Double
    public var lossInGood: Double
    public var lossInBad: Double
    public private(set) var isBad = false

    public init(goodToBad: Double, badToGood: Double, lossInGood: Double = 0, lossInBad: Double = 1) {
        self.goodToBad = goodToBad
        self.badToGood = badToGood
        self.lossInGood = lossInGood
        self.lossInBad = lossInBad
    }

    /// Classic Gilbert model (no loss when good, all lost when bad) with a long-run loss
    /// fraction and a mean burst length in packets (>= 1).
    public init(lossFraction: Double, meanBurstPackets: Double) {
        let loss = min(max(lossFraction, 0), 0.999_999)
        let badToGood = 1 / max(meanBurstPackets, 1)
        // Stationary bad share = g / (g + b) = loss.
        let goodToBad = loss >= 0.999_999 ? 1 : min(1, loss * badToGood / (1 - loss))
        self.init(goodToBad: goodToBad, badToGood: badToGood)
    }

    /// Independent loss with the given probability.
    public static func independent(lossFraction: Double) -> GilbertElliottLoss {
        GilbertElliottLoss(goodToBad: 0, badToGood: 1, lossInGood: lossFraction, lossInBad: lossFraction)
    }

    public static let none = GilbertElliottLoss(goodToBad: 0, badToGood: 1, lossInGood: 0, lossInBad: 0)

    /// Long-run loss fraction.
    public var lossFraction: Double {
        let total = goodToBad + badToGood
        let badShare = total > 0 ? goodToBad / total : 0
        return badShare * lossInBad + (1 - badShare) * lossInGood
    }

    /// Advances one packet; true when that packet is lost.
    public mutating func nextIsLost(_ random: inout GaussianSource) -> Bool {
        let flip = random.nextUniform()
        if isBad { if flip < badToGood { isBad = false } } else if flip < goodToBad { isBad = true }
        return random.nextUniform() < (isBad ? lossInBad : lossInGood)
    }
}

/// Body shadowing: now and then a body (the child's own, another child) stands between
/// the beacon and the receiver and the level drops by `depth` dB for `duration` seconds.
/// Episodes start as a Poisson process with `meanInterval` seconds between starts; depth and
/// duration are uniform in their ranges. Deterministic for a seed.
public struct BodyShadowing: Sendable, Equatable {
    public var meanInterval: Double
    public var depth: ClosedRange<Double>
    public var duration: ClosedRange<Double>

    public init(meanInterval: Double = 60, depth: ClosedRange<Double> = 10 ... 20, duration: ClosedRange<Double> = 1 ... 10) {
        self.meanInterval = meanInterval
        self.depth = depth
        self.duration = duration
    }

    /// Episodes (start, end, depth dB) up to `end`.
    public func episodes(until end: Double, seed: UInt64) -> [(start: Double, end: Double, depth: Double)] {
        var random = SplitMix64(seed: seed)
        var out: [(start: Double, end: Double, depth: Double)] = []
        var t = 0.0
        while true {
            t += -meanInterval * log(max(1 - random.nextUniform(), 1e-12))
            guard t < end else { break }
            let length = duration.lowerBound + (duration.upperBound - duration.lowerBound) * random.nextUniform()
            let drop = depth.lowerBound + (depth.upperBound - depth.lowerBound) * random.nextUniform()
            out.append((t, t + length, drop))
            t += length
        }
        return out
    }
}

/// Distance over time: piecewise linear between waypoints (time s, distance m), constant
/// before the first and after the last.
public struct ScriptedPath: Sendable, Equatable {
    public struct Waypoint: Sendable, Equatable {
        public var time: Double
        public var distance: Double
        public init(time: Double, distance: Double) {
            self.time = time
            self.distance = distance
        }
    }

    public private(set) var waypoints: [Waypoint]

    public init(_ waypoints: [Waypoint]) {
        self.waypoints = waypoints.sorted { $0.time < $1.time }
    }

    public static func standing(at distance: Double) -> ScriptedPath {
        ScriptedPath([Waypoint(time: 0, distance: distance)])
    }

    /// A jump from one distance to another at `time`.
    public static func step(from: Double, to: Double, at time: Double) -> ScriptedPath {
        ScriptedPath([Waypoint(time: time, distance: from), Waypoint(time: time, distance: to)])
    }

    public func distance(at time: Double) -> Double {
        guard let first = waypoints.first, let last = waypoints.last else { return 1 }
        if time < first.time { return first.distance }
        if time >= last.time { return last.distance }
        // Last waypoint at or before time.
        var index = 0
        while index + 1 < waypoints.count && waypoints[index + 1].time <= time { index += 1 }
        let a = waypoints[index]
        let b = waypoints[index + 1]
        let span = b.time - a.time
        guard span > 0 else { return b.distance }
        return a.distance + (b.distance - a.distance) * (time - a.time) / span
    }
}
