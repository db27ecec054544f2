/// A simulated beacon: advertising interval (plus the spec's 0-10 ms random delay), a
/// scripted path of the hunter's distance to it, optional switch-on/off times, and its own
/// loss model.
public struct SimulatedBeacon: Sendable, Equatable {
    /// Caller's identifier (index into its own table of keys).
    public var id: Int
    public var advertisingInterval: Double
    public var path: ScriptedPath
    public var switchOnTime: Double
    public var switchOffTime: Double?
    public var loss: GilbertElliottLoss
    public var shadowing: BodyShadowing?

    public init(id: Int, advertisingInterval: Double = 0.1, path: ScriptedPath,
                switchOnTime: Double = 0, switchOffTime: Double? = nil, loss: GilbertElliottLoss = .none,
                shadowing: BodyShadowing? = nil) {
        self.id = id
        self.advertisingInterval = advertisingInterval
        self.path = path
        self.switchOnTime = switchOnTime
        self.switchOffTime = switchOffTime
        self.loss = loss
        self.shadowing = shadowing
    }
}

/// One advertising report as a scanner would see it.
public struct SimulatedReading: Sendable, Equatable {
    public var beacon: Int
    public var time: Double
    /// Rounded to whole dBm and clamped to the HCI range (-127...20), like a controller.
    public var rssi: Int
    public var measuredPower: Int
    /// 37, 38 or 39.
    public var channel: Int
    /// The true distance at that time (for scoring).
    public var distance: Double

    public init(beacon: Int, time: Double, rssi: Int, measuredPower: Int, channel: Int, distance: Double) {
        self.beacon = beacon
        self.time = time
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.channel = channel
        self.distance = distance
    }
}

/// Produces the reports of several virtual beacons, merged in time order. Deterministic for
/// a seed: each beacon draws from its own generator derived from the seed and its index.
public struct RadioSimulator: Sendable {
    public var model: PathLossModel
    public private(set) var beacons: [SimulatedBeacon]
    private var noise: [GaussianSource]
    private var nextAdvertising: [Double]
    private var channelIndex: [Int]
    private var shadowSeeds: [UInt64]

    public init(beacons: [SimulatedBeacon], model: PathLossModel = PathLossModel(), seed: UInt64) {
        self.model = model
        self.beacons = beacons
        var seeder = SplitMix64(seed: seed)
        self.noise = beacons.map { _ in GaussianSource(seed: seeder.next()) }
        self.nextAdvertising = beacons.map(\.switchOnTime)
        self.channelIndex = beacons.map { _ in 0 }
        self.shadowSeeds = beacons.map { _ in seeder.next() }
    }

    /// Each beacon's body-shadowing episodes up to `end` (start, end, depth dB), the same that
    /// `run(until:)` applies: for scoring what a ranger could have told from a body.
    public func shadowEpisodes(until end: Double) -> [[(start: Double, end: Double, depth: Double)]] {
        beacons.indices.map { beacons[$0].shadowing?.episodes(until: end, seed: shadowSeeds[$0]) ?? [] }
    }

    /// All reports with time < `end`, in time order (ties by beacon index).
    public mutating func run(until end: Double) -> [SimulatedReading] {
        var reports: [SimulatedReading] = []
        for index in beacons.indices {
            let beacon = beacons[index]
            var time = nextAdvertising[index]
            let stop = min(end, beacon.switchOffTime ?? end)
            let shadows = beacon.shadowing?.episodes(until: end, seed: shadowSeeds[index]) ?? []
            var shadow = 0
            while time < stop {
                let channel = channelIndex[index]
                channelIndex[index] = (channel + 1) % 3
                let lost = beacons[index].loss.nextIsLost(&noise[index])
                let distance = beacon.path.distance(at: time)
                var value = model.reading(atDistance: distance, channel: channel, noise: &noise[index])
                while shadow < shadows.count && shadows[shadow].end <= time { shadow += 1 }
                if shadow < shadows.count && shadows[shadow].start <= time { value -= shadows[shadow].depth }
                let heard = model.sensitivity.map { value >= $0 } ?? true
                if !lost && heard {
                    let rounded = Int(value.rounded())
                    reports.append(SimulatedReading(beacon: beacon.id, time: time, rssi: min(max(rounded, -127), 20),
                                                     measuredPower: model.measuredPower, channel: 37 + channel,
                                                     distance: distance))
                }
                time += beacon.advertisingInterval + 0.01 * noise[index].nextUniform()
            }
            nextAdvertising[index] = time
        }
        reports.sort { ($0.time, $0.beacon) < ($1.time, $1.beacon) }
        return reports
    }
}
