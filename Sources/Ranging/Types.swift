public import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Identity of one iBeacon: proximity UUID, major, minor.
public struct BeaconKey: Hashable, Sendable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(uuid.uuidString):\(major):\(minor)" }
}

/// One sighting of a beacon, as the radio layer hands it over.
public struct RangingSample: Sendable, Equatable {
    public var key: BeaconKey
    /// The beacon's advertised measured power: RSSI in dBm at 1 m.
    public var measuredPower: Int
    /// Received signal strength in dBm; `nil` means "not available" (127 on the wire).
    public var rssi: Int?
    /// Seconds, on whatever clock the caller uses (monotonic, capture timestamps...).
    public var time: Double

    public init(key: BeaconKey, measuredPower: Int, rssi: Int?, time: Double) {
        self.key = key
        self.measuredPower = measuredPower
        self.rssi = rssi
        self.time = time
    }
}

/// A region's name: what the configuration and `--region` call it (`UUID[:MAJOR[:MINOR]]`
/// or a word), and what its events and lines carry: typed, so that it is never mixed up
/// with other text.
public struct RegionID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public let text: String

    public init(_ text: String) { self.text = text }
    public init(stringLiteral text: String) { self.text = text }
    public var description: String { text }
}

/// A hunted region: a UUID, optionally narrowed to a major, and to a minor.
public struct Region: Hashable, Sendable {
    public var name: RegionID
    public var uuid: UUID
    public var major: UInt16?
    public var minor: UInt16?

    public init(name: RegionID, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        self.name = name
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public func contains(_ key: BeaconKey) -> Bool {
        key.uuid == uuid && (major.map { $0 == key.major } ?? true)
            && (minor.map { $0 == key.minor } ?? true)
    }
}

/// Ordered by closeness: immediate < near < far < unknown (a closer class is less).
public enum Proximity: String, Sendable, Hashable, CaseIterable, Comparable {
    case immediate, near, far, unknown

    public static func < (a: Proximity, b: Proximity) -> Bool { a.closeness < b.closeness }

    private var closeness: Int {
        switch self {
        case .immediate: 0
        case .near: 1
        case .far: 2
        case .unknown: 3
        }
    }
}

public enum RegionState: String, Sendable, Hashable {
    case inside, outside, unknown
}

public enum Trend: String, Sendable, Hashable {
    case warmer, colder
}

/// A distance with its uncertainty. The model is log-normal: `meters` is the median,
/// `logSigma` the standard deviation of ln(distance); `interval` is the 68 % band
/// [meters·e^-logSigma, meters·e^+logSigma]; `sigma` is that band's half-width in metres,
/// meters·sinh(logSigma) (≈ meters·logSigma when small).
public struct DistanceEstimate: Sendable, Equatable {
    public var meters: Double
    public var logSigma: Double

    public init(meters: Double, logSigma: Double) {
        self.meters = meters
        self.logSigma = logSigma
    }

    public var sigma: Double { meters * sinh(logSigma) }
    public var interval: ClosedRange<Double> {
        (meters * exp(-logSigma))...(meters * exp(logSigma))
    }
}

/// One "range" fact: at most one per beacon per `RangingConfiguration.rangeInterval`.
public struct RangeReport: Sendable, Equatable {
    public var time: Double
    public var key: BeaconKey
    /// Filtered RSSI in dBm.
    public var rssi: Double
    /// `nil` when the measured power is implausible or the beacon was lost.
    public var distance: DistanceEstimate?
    public var proximity: Proximity
    /// Readings a second heard of the beacon over the last `RangeReport.readingRateSpan` s
    /// (nil: not known, or lost): a slow tag's at hand comes seconds after the child stands.
    public var readingRate: Double?
    public static let readingRateSpan = 4.0

    public init(time: Double, key: BeaconKey, rssi: Double, distance: DistanceEstimate?, proximity: Proximity,
                readingRate: Double? = nil) {
        self.time = time
        self.key = key
        self.rssi = rssi
        self.distance = distance
        self.proximity = proximity
        self.readingRate = readingRate
    }
}

/// What the engine tells its caller: exactly the events of the replay contract.
public enum RangingEvent: Sendable, Equatable {
    case range(RangeReport)
    /// A committed proximity change of a beacon in a hunted region.
    case proximity(time: Double, key: BeaconKey, from: Proximity, to: Proximity)
    /// The region's initial state, once determined (like CoreLocation's didDetermineState).
    case regionState(time: Double, region: RegionID, state: RegionState)
    /// A transition to inside after the initial state was known.
    case regionEnter(time: Double, region: RegionID)
    /// A transition to outside after the initial state was known.
    case regionExit(time: Double, region: RegionID)
    case nearest(time: Double, region: RegionID, key: BeaconKey)
    case trend(time: Double, region: RegionID, trend: Trend)
    /// A beacon at hand (immediate) came much nearer still (`AtHandDetector.renewals`): where
    /// it was found at hand before was short of it.
    case closerArrival(time: Double, key: BeaconKey)

    public var time: Double {
        switch self {
        case .range(let report): report.time
        case .proximity(let time, _, _, _), .regionState(let time, _, _), .regionEnter(let time, _),
            .regionExit(let time, _), .nearest(let time, _, _), .trend(let time, _, _), .closerArrival(let time, _):
            time
        }
    }
}
