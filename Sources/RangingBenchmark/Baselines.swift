#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Ranging
import FoundationEssentials

/// What the benchmark can observe of a ranger, polled after every packet and timer tick.
protocol Ranger {
    mutating func ingest(beacon: Int, rssi: Int, measuredPower: Int, time: Double)
    mutating func advance(to time: Double)
    /// Reported proximity of a beacon now.
    func proximity(_ beacon: Int) -> Proximity
    /// Reported distance (m) of a beacon now, and for ours the 68 % interval and sigma.
    func distance(_ beacon: Int) -> (meters: Double, interval: ClosedRange<Double>?, sigma: Double?)?
    var inside: Bool { get }
    var nearest: Int? { get }
    /// Warmer/colder events so far (the baselines have none).
    var trendCount: Int { get }
}

extension Ranger {
    var trendCount: Int { 0 }
}

func classify(distance: Double) -> Proximity {
    distance < 0.5 ? .immediate : distance < 3 ? .near : .far
}

/// AltBeacon android-beacon-library as documented: RunningAverageRssiFilter (20 s window,
/// 10 % trimmed from top and bottom), CurveFittedDistanceCalculator (Nexus 5 coefficients
/// A 0.42093, B 6.9476, C 0.54992), ranging callbacks at the end of each 1.1 s scan cycle,
/// region enter on the first detection, exit after 10 s without one. Proximity classes are
/// derived from its distance with the iOS edges (0.5 m, 3 m). A beacon not heard in a cycle
/// keeps its last value (the library's default tracking keeps it listed for a while).
struct AltBeaconBaseline: Ranger {
    let window = 20.0
    let cycle = 1.1
    let exitAfter = 10.0
    private var samples: [Int: [(time: Double, rssi: Int)]] = [:]
    private var txPower: [Int: Int] = [:]
    private var reported: [Int: Double] = [:]
    private var lastPacket: Double = -Double.infinity
    private var seenThisCycle = false
    private var nextCycle: Double?
    private(set) var inside = false
    private(set) var nearest: Int?

    static func distance(rssi: Double, txPower: Int) -> Double {
        guard rssi != 0 else { return -1 }
        let ratio = rssi / Double(txPower)
        if ratio < 1 { return pow(ratio, 10) }
        return 0.42093 * pow(ratio, 6.9476) + 0.54992
    }

    static func trimmedMean(_ values: [Int]) -> Double {
        let sorted = values.sorted()
        let start = sorted.count / 10
        let end = sorted.count - sorted.count / 10
        let kept = sorted[start..<max(end, start + 1)]
        return Double(kept.reduce(0, +)) / Double(kept.count)
    }

    mutating func ingest(beacon: Int, rssi: Int, measuredPower: Int, time: Double) {
        advance(to: time)
        samples[beacon, default: []].append((time, rssi))
        txPower[beacon] = measuredPower
        lastPacket = time
        seenThisCycle = true
    }

    mutating func advance(to time: Double) {
        if nextCycle == nil { nextCycle = time + cycle }
        while let end = nextCycle, end <= time {
            endCycle(at: end)
            nextCycle = end + cycle
        }
    }

    private mutating func endCycle(at time: Double) {
        var best: (Int, Double)?
        // Sorted: ties are broken the same way on every run.
        for beacon in samples.keys.sorted() {
            let list = samples[beacon] ?? []
            let kept = list.filter { time - $0.time <= window }
            samples[beacon] = kept
            guard let last = kept.last, time - last.time <= cycle, let tx = txPower[beacon] else { continue }
            let d = Self.distance(rssi: Self.trimmedMean(kept.map(\.rssi)), txPower: tx)
            reported[beacon] = d
            if best.map({ d < $0.1 }) ?? true { best = (beacon, d) }
        }
        if let best { nearest = best.0 }
        if seenThisCycle { inside = true } else if time - lastPacket > exitAfter { inside = false }
        seenThisCycle = false
    }

    func proximity(_ beacon: Int) -> Proximity {
        reported[beacon].map { $0 < 0 ? .unknown : classify(distance: $0) } ?? .unknown
    }

    func distance(_ beacon: Int) -> (meters: Double, interval: ClosedRange<Double>?, sigma: Double?)? {
        reported[beacon].flatMap { $0 > 0 ? ($0, nil, nil) : nil }
    }
}

/// An iOS-like ranger as CoreLocation documents its output: once a second each beacon's
/// RSSI is the mean of that second's packets, accuracy from the measured power (log-distance,
/// exponent 2), proximity immediate < 0.5 m <= near < 3 m <= far, unknown when nothing was
/// heard in the second. Region enter on the first detection, exit after 20 s of silence (the
/// middle of the 10-30 s users observe). Nearest: smallest accuracy of the second.
struct IOSLikeBaseline: Ranger {
    let exitAfter = 20.0
    private var pending: [Int: (sum: Int, count: Int, tx: Int)] = [:]
    private var reported: [Int: Double] = [:]
    private var known: Set<Int> = []
    private var lastPacket: Double = -Double.infinity
    private var nextSecond: Double?
    private(set) var inside = false
    private(set) var nearest: Int?

    mutating func ingest(beacon: Int, rssi: Int, measuredPower: Int, time: Double) {
        advance(to: time)
        let old = pending[beacon] ?? (0, 0, measuredPower)
        pending[beacon] = (old.sum + rssi, old.count + 1, measuredPower)
        known.insert(beacon)
        lastPacket = time
    }

    mutating func advance(to time: Double) {
        if nextSecond == nil { nextSecond = time + 1 }
        while let end = nextSecond, end <= time {
            var best: (Int, Double)?
            for beacon in known.sorted() {
                if let p = pending[beacon], p.count > 0 {
                    let mean = Double(p.sum) / Double(p.count)
                    let d = pow(10, (Double(p.tx) - mean) / 20)
                    reported[beacon] = d
                    if best.map({ d < $0.1 }) ?? true { best = (beacon, d) }
                } else {
                    reported[beacon] = nil
                }
            }
            if let best { nearest = best.0 }
            if !pending.isEmpty { inside = true } else if end - lastPacket > exitAfter { inside = false }
            pending.removeAll(keepingCapacity: true)
            nextSecond = end + 1
        }
    }

    func proximity(_ beacon: Int) -> Proximity {
        reported[beacon].map(classify(distance:)) ?? .unknown
    }

    func distance(_ beacon: Int) -> (meters: Double, interval: ClosedRange<Double>?, sigma: Double?)? {
        reported[beacon].map { ($0, nil, nil) }
    }
}

/// Our engine behind the same observation interface; beacons are minors of one UUID and the
/// hunted region is that UUID (so proximity, region and nearest events all come out).
struct OurRanger: Ranger {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
    private var engine: RangingEngine
    private var proximities: [Int: Proximity] = [:]
    private var distances: [Int: DistanceEstimate] = [:]
    private(set) var inside = false
    private(set) var nearest: Int?
    private(set) var unknownWhileHeard = 0
    private(set) var trendCount = 0

    init(configuration: RangingConfiguration) {
        engine = RangingEngine(configuration: configuration,
                               regions: [Region(name: "treasure", uuid: Self.uuid)])
    }

    static func key(_ beacon: Int) -> BeaconKey {
        BeaconKey(uuid: uuid, major: 1, minor: UInt16(truncatingIfNeeded: beacon))
    }

    mutating func ingest(beacon: Int, rssi: Int, measuredPower: Int, time: Double) {
        apply(engine.ingest(RangingSample(key: Self.key(beacon), measuredPower: measuredPower, rssi: rssi, time: time)))
    }

    mutating func advance(to time: Double) {
        apply(engine.advance(to: time))
    }

    private mutating func apply(_ events: [RangingEvent]) {
        for event in events {
            switch event {
            case .range(let report):
                let beacon = Int(report.key.minor)
                if let d = report.distance { distances[beacon] = d } else { distances[beacon] = nil }
            case .proximity(_, let key, _, let to):
                proximities[Int(key.minor)] = to
            case .regionState(_, _, let state):
                inside = state == .inside
            case .regionEnter:
                inside = true
            case .regionExit:
                inside = false
            case .nearest(_, _, let key):
                nearest = Int(key.minor)
            case .trend:
                trendCount += 1
            case .closerArrival:
                continue
            }
        }
    }

    func proximity(_ beacon: Int) -> Proximity { proximities[beacon] ?? .unknown }

    func distance(_ beacon: Int) -> (meters: Double, interval: ClosedRange<Double>?, sigma: Double?)? {
        distances[beacon].map { ($0.meters, $0.interval, $0.sigma) }
    }
}
