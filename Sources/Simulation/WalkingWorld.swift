#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child walking a yard to a chest on the floor, and what a hunter held at chest height
/// hears of the chest's beacon: the walking benchmark's world (docs/ranging.md, "The walking
/// world"). Everything is drawn from the seed, so a walk is the same on every machine.
///
/// The walk: from a start 7-12 m from the chest, straight legs at 0.5-1.5 m/s (`Harshness.speed`) between
/// waypoints at least `waypointClearance` m from the chest (and legs that do not pass closer
/// than that), with a turn at each waypoint (the heading swings within `turnSeconds`) and,
/// often, a pause of 2-15 s during which the child looks around (more turns, standing
/// still). After 4-10 minutes the last leg ends over the chest, where the child stands
/// `atChestSeconds` s, the hunter 0.8-1.2 m above the beacon.
///
/// The radio, per packet: log-distance path loss (exponent 2.0-2.4) from the beacon's true
/// power, which it advertises with an error of ±4 dB; the child's body, graded with the angle
/// between the heading and the beacon (nothing while the beacon is ahead, `bodyDepth` dB
/// when it is straight behind); a shadowing field that is a function of position (a sum of
/// plane waves, wavelengths 3-10 m, sd 3 dB, fading to nothing within 2 m of the chest,
/// where the beacon is in sight); walls (a wall between the hunter and the chest costs 5-10
/// dB at once); the three advertising channels' offsets in turn (±3-6 dB: a negative lag-1
/// autocorrelation) plus Gaussian spread, together 6-8 dB sd; Gilbert-Elliott burst loss
/// per beacon, and outages shared by everything the receiver hears (Wi-Fi); a receiver
/// floor at -100 dBm. Beacons advertise at 10, 4, 2 or 1 Hz (plus the spec's 0-10 ms
/// delay).
public struct WalkingWorld: Sendable {
    /// Where the hunter is: metres from the chest (the origin) on the ground, heading radians.
    public struct Pose: Sendable, Equatable {
        public var time: Double
        public var x: Double
        public var y: Double
        public var heading: Double

        public init(time: Double, x: Double, y: Double, heading: Double) {
            self.time = time
            self.x = x
            self.y = y
            self.heading = heading
        }
    }

    public struct Wall: Sendable, Equatable {
        public var from: (x: Double, y: Double)
        public var to: (x: Double, y: Double)
        public var loss: Double

        public static func == (a: Wall, b: Wall) -> Bool {
            a.from == b.from && a.to == b.to && a.loss == b.loss
        }
    }

    public let seed: UInt64
    public let advertisingInterval: Double
    /// The beacon's true RSSI at 1 m, and what it advertises (true + the power error).
    public let truePower: Double
    public let advertisedPower: Int
    public let exponent: Double
    public let handHeight: Double
    public let bodyDepth: Double
    /// Per-packet Gaussian spread (dB) and the three channels' offsets.
    public let packetSigma: Double
    public let channelOffsets: [Double]
    public let walls: [Wall]
    /// When the child stops over the chest, and when the walk ends.
    public let stopAtChest: Double
    public let duration: Double
    /// The path, sampled every `poseStep` s from 0 to `duration`.
    public let poses: [Pose]
    public static let poseStep = 0.05

    public static let yardHalfWidth = 12.0
    public static let yardHalfDepth = 9.0
    public static let waypointClearance = 3.0
    public static let turnSeconds = 0.3
    public static let atChestSeconds = 30.0
    public static let sensitivity = -100.0
    /// The rates of the walks, in turn by seed.
    public static let rates: [Double] = [10, 4, 2, 1]

    private let field: [(kx: Double, ky: Double, phase: Double, amplitude: Double)]
    /// The loss of the chest's own spot (dB, `Harshness.chestSpot`): the field fades out
    /// within 1-3 m of the chest, and this takes its place there.
    private let chestSpotLoss: Double
    private let loss: GilbertElliottLoss
    private let outages: [(start: Double, end: Double)]
    /// The chest's other beacons (`Harshness.chestBeacons` - 1): beacon ids 1, 2, ...
    public let otherBeacons: [ChestBeacon]
    /// The other advertisers the receiver hears (`Harshness.bystanders`).
    public let bystanders: [Bystander]

    /// An advertiser that is none of the chest's beacons: a phone, a watch, a television, in
    /// the house or the yard 6-25 m from the chest, 0.5-1.5 m up, advertising every 0.2-1 s
    /// at -55 to -65 dBm at 1 m. Heard through the child's body like the chest's beacon, with
    /// its own spread (6 dB) and loss (10-40 %, bursts of 2-5), and deaf with the receiver in
    /// the shared outages.
    public struct Bystander: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var height: Double
        public var power: Double
        public var interval: Double
        var loss: GilbertElliottLoss
        var noiseSeed: UInt64
    }

    /// A further beacon in the chest: what it advertises and its own radio draws.
    public struct ChestBeacon: Sendable, Equatable {
        public var advertisedPower: Int
        public var channelOffsets: [Double]
        public var packetSigma: Double
        var loss: GilbertElliottLoss
        var noiseSeed: UInt64
    }

    /// How hard the radio is: the ranges the walk's per-packet spread (sd, dB, channel offsets
    /// included), body shadow (dB when the chest is straight behind) and advertised-power error
    /// (± dB) are drawn from, and the shadowing field's sd. `standard` is the world every walking figure is reported on (the
    /// field guide's real room); the others are sweeps of it (`RangingBenchmark --walking
    /// ... --spread/--body/--power-error`), to see how a figure depends on the world.
    public struct Harshness: Sendable, Equatable {
        public var spread: ClosedRange<Double>
        public var bodyDepth: ClosedRange<Double>
        public var powerError: Double
        /// The shadowing field's sd (dB).
        public var field: Double
        /// One advertising rate (Hz) for every walk; nil: 10, 4, 2 and 1 Hz in turn by seed.
        public var rate: Double?
        /// The range the share of packets lost is drawn from (Gilbert-Elliott, bursts as the
        /// rate has them).
        public var lossFraction: ClosedRange<Double>
        /// The range the mean loss burst (packets) is drawn from; nil: 3-8 at 4 Hz and faster,
        /// 1-2 slower.
        public var burstPackets: ClosedRange<Double>?
        /// How many beacons of the treasure's region lie in the chest (1: the standard world;
        /// more: a box and a tag, or two tags, side by side). Each has its own advertised-power
        /// error, channel offsets, loss draws and spread, at the world's rate; the path, body,
        /// field, walls and outages are the walk's.
        public var chestBeacons: Int
        /// The range the child's walking speed on a leg is drawn from (m/s); the last leg, to
        /// the chest, from its lower 70 % (a child slows as it homes in). 0.5-1.5: a child
        /// walking; 2-3: running; 0.3-0.6: a toddler or a child searching step by step.
        public var speed: ClosedRange<Double>
        /// The range a shared outage's length is drawn from (s; one every ~90 s on average):
        /// 0.5-4 s, the receiver busy with Wi-Fi; 5-20 s, a crowded band or an adapter that
        /// resets.
        public var outage: ClosedRange<Double>
        /// Other advertisers the receiver hears (phones, watches, a television: `Bystander`),
        /// none in the standard world.
        public var bystanders: Int
        /// The sd (dB) of a fade of the chest's own spot, drawn per walk (Gaussian) and
        /// applied where the field fades out (within 1-3 m of the chest); 0 in the standard
        /// world, whose chest reads as the model says (a second world written apart puts the
        /// chest in the yard's fades: ± 3.2 dB, docs/ranging.md "Sixteenth round").
        public var chestSpot: Double

        public init(spread: ClosedRange<Double> = 6 ... 8, bodyDepth: ClosedRange<Double> = 6 ... 15, powerError: Double = 4, field: Double = 3,
                    rate: Double? = nil, lossFraction: ClosedRange<Double> = 0.1 ... 0.3, burstPackets: ClosedRange<Double>? = nil,
                    chestBeacons: Int = 1, speed: ClosedRange<Double> = 0.5 ... 1.5, outage: ClosedRange<Double> = 0.5 ... 4,
                    bystanders: Int = 0, chestSpot: Double = 0) {
            self.bystanders = max(0, bystanders)
            self.chestSpot = max(0, chestSpot)
            self.speed = speed
            self.outage = outage
            self.burstPackets = burstPackets
            self.chestBeacons = max(1, chestBeacons)
            self.spread = spread
            self.bodyDepth = bodyDepth
            self.powerError = powerError
            self.field = field
            self.rate = rate
            self.lossFraction = lossFraction
        }

        public static let standard = Harshness()
    }

    public let harshness: Harshness

    public init(seed: UInt64, harshness: Harshness = .standard) {
        self.seed = seed
        self.harshness = harshness
        // The seed is hashed first: SplitMix64 steps its state by the golden gamma, so states
        // seeded `seed · gamma + c` made seed s + 1's draws seed s's shifted by one (the walks
        // of consecutive seeds were the same path: 200 "walks" were a handful).
        var seeder = SplitMix64(seed: seed ^ 0x5157)
        var random = SplitMix64(seed: seeder.next())
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
        }
        let rate = harshness.rate ?? Self.rates[Int(seed % UInt64(Self.rates.count))]
        advertisingInterval = 1 / rate
        truePower = -59
        // The same draws in the same order whatever the harshness (a sweep changes the radio,
        // not the walk): each is a fraction of its range.
        advertisedPower = Int((truePower + harshness.powerError * uniform(-1 ... 1)).rounded())
        exponent = uniform(2.0 ... 2.4)
        handHeight = uniform(0.8 ... 1.2)
        let body = harshness.bodyDepth
        bodyDepth = body.lowerBound + (body.upperBound - body.lowerBound) * uniform(0 ... 1)
        let spread = harshness.spread
        (channelOffsets, packetSigma) = Self.channels(offsetDraw: uniform(3 ... 6), spreadDraw: uniform(0 ... 1),
                                                      swapped: random.nextUniform() < 0.5, spread: spread)
        // The shadowing field: 8 plane waves, sd 3 dB in all (the harshness's `field`).
        field = Self.shadowingField(sd: harshness.field, random: &random)
        chestSpotLoss = Self.chestSpot(seed: seed, sd: harshness.chestSpot)
        // One or two walls (a shed, a hedge) somewhere in the yard, not over the chest.
        var walls: [Wall] = []
        for _ in 0..<(random.nextUniform() < 0.5 ? 1 : 2) {
            let cx = uniform(-9 ... 9), cy = uniform(-6 ... 6)
            guard (cx * cx + cy * cy).squareRoot() > 4 else { continue }
            let angle = uniform(0 ... Double.pi), half = uniform(1.5 ... 3)
            walls.append(Wall(from: (cx - half * cos(angle), cy - half * sin(angle)),
                              to: (cx + half * cos(angle), cy + half * sin(angle)), loss: uniform(5 ... 10)))
        }
        self.walls = walls
        // Loss: bursts of 3-8 packets at 10 Hz, 1-2 at 1 Hz; 10-30 % lost (the standard world).
        let burst = uniform(harshness.burstPackets ?? (rate >= 4 ? 3 ... 8 : 1 ... 2))
        loss = GilbertElliottLoss(lossFraction: uniform(harshness.lossFraction), meanBurstPackets: burst)

        // The path.
        let walkTime = uniform(240 ... 570)
        let startAngle = uniform(0 ... 2 * Double.pi), startDistance = uniform(7 ... 11)
        var path = PathWalker(x: startDistance * cos(startAngle),
                              y: max(-Self.yardHalfDepth, min(Self.yardHalfDepth, startDistance * sin(startAngle))),
                              heading: uniform(0 ... 2 * Double.pi))
        path.wander(until: walkTime, around: (0, 0), clearOf: [(0, 0)], speed: harshness.speed, random: &random)
        // The last leg: to the chest, stopping over it (the hunter held out in front).
        path.homeIn(on: (0, 0), speed: harshness.speed, random: &random)
        stopAtChest = path.t
        path.stand(Self.atChestSeconds)
        duration = path.t
        poses = path.poses

        outages = Self.sharedOutages(until: duration, lengths: harshness.outage, random: &random)

        // The chest's other beacons, from their own generator (the walk and beacon 0 are the
        // same whatever their number).
        var others = SplitMix64(seed: seeder.next() ^ 0xC4E5_7B3A_C0B5)
        func draw(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * others.nextUniform()
        }
        var chest: [ChestBeacon] = []
        for _ in 1..<harshness.chestBeacons {
            let power = Int((truePower + harshness.powerError * draw(-1 ... 1)).rounded())
            let (offsets, sigma) = Self.channels(offsetDraw: draw(3 ... 6), spreadDraw: draw(0 ... 1),
                                                 swapped: others.nextUniform() < 0.5, spread: spread)
            let burst = draw(harshness.burstPackets ?? (rate >= 4 ? 3 ... 8 : 1 ... 2))
            chest.append(ChestBeacon(advertisedPower: power, channelOffsets: offsets, packetSigma: sigma,
                                     loss: GilbertElliottLoss(lossFraction: draw(harshness.lossFraction), meanBurstPackets: burst),
                                     noiseSeed: others.next()))
        }
        otherBeacons = chest

        // The bystanders, from their own generator (the walk and the chest are the same
        // whatever their number).
        var around = SplitMix64(seed: seeder.next() ^ 0xB795_7A4D_E125_0C3A)
        func place(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * around.nextUniform()
        }
        var heard: [Bystander] = []
        for _ in 0..<harshness.bystanders {
            let r = place(6 ... 25), a = place(0 ... 2 * Double.pi)
            heard.append(Bystander(x: r * cos(a), y: r * sin(a), height: place(0.5 ... 1.5), power: place(-65 ... -55),
                                   interval: place(0.2 ... 1),
                                   loss: GilbertElliottLoss(lossFraction: place(0.1 ... 0.4), meanBurstPackets: place(2 ... 5)),
                                   noiseSeed: around.next()))
        }
        bystanders = heard
    }

    /// A tag's three channel offsets and its per-packet spread about them, in a room whose
    /// total per-packet spread is `spread` (dB): the offsets are 3-6 dB in the standard room
    /// (`offsetDraw`), scaled with the spread, since they are part of it; `spreadDraw` (0-1)
    /// places the tag's total in `spread`; `swapped` reverses the offsets' order.
    static func channels(offsetDraw: Double, spreadDraw: Double, swapped: Bool,
                         spread: ClosedRange<Double>) -> (offsets: [Double], packetSigma: Double) {
        let total = spread.lowerBound + (spread.upperBound - spread.lowerBound) * spreadDraw
        let offset = offsetDraw * min(1, total / 6)
        var offsets = [offset, 0, -offset]
        if swapped { offsets.swapAt(0, 2) }
        return (offsets, max(1, total * total - offset * offset * 2 / 3).squareRoot())
    }

    /// Outages shared by everything the receiver hears (busy with Wi-Fi, a crowded band):
    /// one every ~90 s (exponential gaps) before `end`, each `lengths` long (0.5-4 s in the
    /// standard world).
    static func sharedOutages(until end: Double, lengths: ClosedRange<Double>,
                              random: inout SplitMix64) -> [(start: Double, end: Double)] {
        var outages: [(start: Double, end: Double)] = []
        var o = 0.0
        while true {
            o += -90 * log(max(1 - random.nextUniform(), 1e-12))
            guard o < end else { break }
            let length = lengths.lowerBound + (lengths.upperBound - lengths.lowerBound) * random.nextUniform()
            outages.append((o, o + length))
            o += length
        }
        return outages
    }

    /// The shadowing field's 8 plane waves: wavelengths 3-10 m, `sd` dB in all.
    static func shadowingField(sd: Double, random: inout SplitMix64) -> [(kx: Double, ky: Double, phase: Double, amplitude: Double)] {
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
        }
        var waves: [(kx: Double, ky: Double, phase: Double, amplitude: Double)] = []
        for _ in 0..<8 {
            let wavelength = uniform(3 ... 10)
            let angle = uniform(0 ... 2 * Double.pi)
            let k = 2 * Double.pi / wavelength
            waves.append((k * cos(angle), k * sin(angle), uniform(0 ... 2 * Double.pi), sd * (2.0 / 8).squareRoot()))
        }
        return waves
    }

    /// One chest of a trail (`TrailWalk`) as the hunter hears it along the trail's path: the
    /// path, the walls and the outages are the yard's, given in the yard's frame and moved
    /// into the chest's (the chest at the origin, so `distance`, `meanRSSI`, `approaches`
    /// are this chest's); the yard's exponent, hand height and body; the tag's own draws
    /// from `seed` (its power error, channels, shadowing field and loss), at `rate` Hz.
    init(chestAt chest: (x: Double, y: Double), seed: UInt64, harshness: Harshness, rate: Double, exponent: Double,
         handHeight: Double, bodyDepth: Double, walls: [Wall], outages: [(start: Double, end: Double)], poses: [Pose],
         stopAtChest: Double) {
        self.seed = seed
        self.harshness = harshness
        var seeder = SplitMix64(seed: seed ^ 0x7EA1)
        var random = SplitMix64(seed: seeder.next())
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
        }
        advertisingInterval = 1 / rate
        truePower = -59
        advertisedPower = Int((truePower + harshness.powerError * uniform(-1 ... 1)).rounded())
        self.exponent = exponent
        self.handHeight = handHeight
        self.bodyDepth = bodyDepth
        (channelOffsets, packetSigma) = Self.channels(offsetDraw: uniform(3 ... 6), spreadDraw: uniform(0 ... 1),
                                                      swapped: random.nextUniform() < 0.5, spread: harshness.spread)
        field = Self.shadowingField(sd: harshness.field, random: &random)
        chestSpotLoss = Self.chestSpot(seed: seed, sd: harshness.chestSpot)
        let burst = uniform(harshness.burstPackets ?? (rate >= 4 ? 3 ... 8 : 1 ... 2))
        loss = GilbertElliottLoss(lossFraction: uniform(harshness.lossFraction), meanBurstPackets: burst)
        self.walls = walls.map { Wall(from: ($0.from.x - chest.x, $0.from.y - chest.y), to: ($0.to.x - chest.x, $0.to.y - chest.y), loss: $0.loss) }
        self.outages = outages
        self.poses = poses.map { Pose(time: $0.time, x: $0.x - chest.x, y: $0.y - chest.y, heading: $0.heading) }
        self.stopAtChest = stopAtChest
        duration = poses.last?.time ?? 0
        otherBeacons = []
        bystanders = []
    }

    /// The pose at `time` (the nearest sample at or before it).
    public func pose(at time: Double) -> Pose {
        guard let first = poses.first else { return Pose(time: time, x: 0, y: 0, heading: 0) }
        let index = Int((time - first.time) / Self.poseStep)
        return poses[max(0, min(poses.count - 1, index))]
    }

    /// True hunter-to-beacon distance (m) at `time`: the beacon on the floor, the hunter at hand height.
    public func distance(at time: Double) -> Double {
        let p = pose(at: time)
        return (p.x * p.x + p.y * p.y + handHeight * handHeight).squareRoot()
    }

    /// The body's shadow (dB) at a pose: 0 while the beacon is within 90° of the heading,
    /// growing linearly to `bodyDepth` when it is straight behind.
    public func bodyShadow(_ p: Pose) -> Double {
        bodyShadow(p, toward: (0, 0))
    }

    /// The body's shadow (dB) at a pose for an advertiser at ground position `target`.
    func bodyShadow(_ p: Pose, toward target: (x: Double, y: Double)) -> Double {
        let toBeacon = atan2(target.y - p.y, target.x - p.x)
        var angle = abs((toBeacon - p.heading).truncatingRemainder(dividingBy: 2 * Double.pi))
        if angle > Double.pi { angle = 2 * Double.pi - angle }
        guard angle > Double.pi / 2 else { return 0 }
        // Over the chest the beacon is below the hunter, in sight whichever way the child faces.
        let ground = ((p.x - target.x) * (p.x - target.x) + (p.y - target.y) * (p.y - target.y)).squareRoot()
        let sight = min(1, max(0, (ground - 0.5) / 1.5))
        return bodyDepth * (angle - Double.pi / 2) / (Double.pi / 2) * sight
    }

    /// The shadowing field (dB of extra loss, may be negative) at a ground position.
    public func shadowing(x: Double, y: Double) -> Double {
        var s = 0.0
        for w in field { s += w.amplitude * cos(w.kx * x + w.ky * y + w.phase) }
        let ground = (x * x + y * y).squareRoot()
        let weight = min(1, max(0, (ground - 1) / 2))
        return s * weight + chestSpotLoss * (1 - weight)
    }

    /// The chest spot's fade (dB): a Gaussian of sd `sd` from a generator of its own, so the
    /// walk's other draws are the same with or without it; 0 when `sd` is 0.
    static func chestSpot(seed: UInt64, sd: Double) -> Double {
        guard sd > 0 else { return 0 }
        var seeder = SplitMix64(seed: seed ^ 0xC4E5)
        var random = GaussianSource(seed: seeder.next())
        return sd * random.nextGaussian()
    }

    /// Loss of the walls between a ground position and the chest.
    public func wallLoss(x: Double, y: Double) -> Double {
        var total = 0.0
        for wall in walls where Self.segmentsCross((x, y), (0, 0), wall.from, wall.to) { total += wall.loss }
        return total
    }

    static func segmentsCross(_ a: (Double, Double), _ b: (Double, Double), _ c: (Double, Double), _ d: (Double, Double)) -> Bool {
        func side(_ p: (Double, Double), _ q: (Double, Double), _ r: (Double, Double)) -> Double {
            (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0)
        }
        return side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0
    }

    /// Mean RSSI (dBm, before the channel offsets and the per-packet spread) at `time`.
    public func meanRSSI(at time: Double) -> Double {
        let p = pose(at: time)
        let d = (p.x * p.x + p.y * p.y + handHeight * handHeight).squareRoot()
        return truePower - 10 * exponent * log10(d) - bodyShadow(p) - shadowing(x: p.x, y: p.y) - wallLoss(x: p.x, y: p.y)
    }

    /// Every report the hunter's scanner delivers, in time order (the chest's first beacon is
    /// id 0, its others 1, 2, ...).
    public func readings() -> [SimulatedReading] {
        var reports = readings(beacon: 0, advertisedPower: advertisedPower, channelOffsets: channelOffsets, packetSigma: packetSigma,
                               loss: loss, noiseSeed: seed ^ 0xA5A5_5A5A_0F0F_F0F0)
        guard !otherBeacons.isEmpty else { return reports }
        for (i, other) in otherBeacons.enumerated() {
            reports += readings(beacon: i + 1, advertisedPower: other.advertisedPower, channelOffsets: other.channelOffsets,
                                packetSigma: other.packetSigma, loss: other.loss, noiseSeed: other.noiseSeed)
        }
        return reports.sorted { ($0.time, $0.beacon) < ($1.time, $1.beacon) }
    }

    private func readings(beacon: Int, advertisedPower: Int, channelOffsets: [Double], packetSigma: Double, loss: GilbertElliottLoss,
                          noiseSeed: UInt64) -> [SimulatedReading] {
        var noise = GaussianSource(seed: noiseSeed)
        var loss = loss
        var reports: [SimulatedReading] = []
        reports.reserveCapacity(Int(duration / advertisingInterval) + 1)
        var time = noise.nextUniform() * advertisingInterval
        var channel = 0
        var outage = 0
        while time < duration {
            let lost = loss.nextIsLost(&noise)
            let value = meanRSSI(at: time) + channelOffsets[channel] + packetSigma * noise.nextGaussian()
            if !lost && !receiverBusy(at: time, cursor: &outage) && value >= Self.sensitivity {
                reports.append(SimulatedReading(beacon: beacon, time: time, rssi: min(max(Int(value.rounded()), -127), 20),
                                                measuredPower: advertisedPower, channel: 37 + channel,
                                                distance: distance(at: time)))
            }
            channel = (channel + 1) % 3
            time += advertisingInterval + 0.01 * noise.nextUniform()
        }
        return reports
    }

    /// Whether a shared outage deafens the receiver at `time`; `cursor` walks `outages` along
    /// with times that only grow (start it at 0).
    private func receiverBusy(at time: Double, cursor: inout Int) -> Bool {
        while cursor < outages.count && outages[cursor].end <= time { cursor += 1 }
        return cursor < outages.count && outages[cursor].start <= time
    }

    /// What the receiver hears of the bystanders, in time order: beacon ids -1, -2, ...
    /// (`measuredPower` 0: they advertise no iBeacon), `distance` from the hunter to each.
    public func bystanderReadings() -> [SimulatedReading] {
        var reports: [SimulatedReading] = []
        for (i, b) in bystanders.enumerated() {
            var noise = GaussianSource(seed: b.noiseSeed)
            var loss = b.loss
            var time = noise.nextUniform() * b.interval
            var outage = 0
            while time < duration {
                let lost = loss.nextIsLost(&noise)
                let p = pose(at: time)
                let (dx, dy, dz) = (p.x - b.x, p.y - b.y, handHeight - b.height)
                let d = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
                let value = b.power - 10 * exponent * log10(d) - bodyShadow(p, toward: (b.x, b.y)) + 6 * noise.nextGaussian()
                if !lost && !receiverBusy(at: time, cursor: &outage) && value >= Self.sensitivity {
                    reports.append(SimulatedReading(beacon: -1 - i, time: time, rssi: min(max(Int(value.rounded()), -127), 20),
                                                    measuredPower: 0, channel: 37, distance: d))
                }
                time += b.interval + 0.01 * noise.nextUniform()
            }
        }
        return reports.sorted { ($0.time, $0.beacon) < ($1.time, $1.beacon) }
    }

    /// What the hunter hears of the beacon during the set-up's calibration (docs/raspberry-pi.md,
    /// "Calibrate"), before the treasure is hidden: held `seconds` s at a parent's "1 m"
    /// (0.9-1.1 m), nothing between, at one spot of the house whose shadowing is a draw of sd
    /// `spotSigma` dB (the world's field is gone within 1 m of a beacon in sight, so 0 is the
    /// world's own rule; more is a room whose reflections matter even at 1 m); the same
    /// channels, spread and loss as the walk, times from 0. Its own draws: the walk is the
    /// same with or without it.
    public func calibrationReadings(seconds: Double, spotSigma: Double = 0) -> [SimulatedReading] {
        var noise = GaussianSource(seed: seed ^ 0xCA1B_0A7E_D15C_0FF5)
        var loss = self.loss
        let meters = 0.9 + 0.2 * noise.nextUniform()
        let spot = spotSigma * noise.nextGaussian()
        let mean = truePower - 10 * exponent * log10(meters) - spot
        var reports: [SimulatedReading] = []
        var time = noise.nextUniform() * advertisingInterval
        var channel = 0
        while time < seconds {
            let lost = loss.nextIsLost(&noise)
            let value = mean + channelOffsets[channel] + packetSigma * noise.nextGaussian()
            if !lost {
                reports.append(SimulatedReading(beacon: 0, time: time, rssi: min(max(Int(value.rounded()), -127), 20),
                                                measuredPower: advertisedPower, channel: 37 + channel, distance: meters))
            }
            channel = (channel + 1) % 3
            time += advertisingInterval + 0.01 * noise.nextUniform()
        }
        return reports
    }

    /// Legs where the child closes at least `meters` m in at least `seconds` s: maximal runs
    /// of falling true distance (sampled every 0.25 s; a pause or a turn away ends a run),
    /// kept when they are that deep and that long. (start, end) times.
    public func approaches(meters: Double = 3, seconds: Double = 6) -> [(start: Double, end: Double)] {
        let step = 0.25
        var legs: [(start: Double, end: Double)] = []
        var start = 0.0
        var startDistance = distance(at: 0)
        var previous = startDistance
        var t = step
        while t <= duration {
            let d = distance(at: t)
            if d >= previous - 0.01 {
                // No longer closing (a pause, a turn away): the run ends at the previous sample.
                if startDistance - previous >= meters && t - step - start >= seconds { legs.append((start, t - step)) }
                start = t
                startDistance = d
            }
            previous = d
            t += step
        }
        if startDistance - previous >= meters && duration - start >= seconds { legs.append((start, duration)) }
        return legs
    }
}
