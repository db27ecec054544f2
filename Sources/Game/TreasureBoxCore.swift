import Bluetooth
import Hunt
import Kiosk
import Ranging

/// The treasure box's game: hunters' announcements and time in; greetings, standings and
/// log lines out, and the kiosk's state. It ranges the hunters it hears, remembers when each
/// was greeted, and keeps the finish order. Pure: every input comes with its time (seconds
/// since start). The executable (`TreasureBox`) advertises, draws and logs.
public struct TreasureBoxCore: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The treasure's iBeacon (what the box advertises).
        public var beacon: IBeacon
        public var intervalMilliseconds: Int
        /// The reward in the scan response, shown with the greeting.
        public var reward: String?
        /// The trail of the same file: which chest of it this box is, and which treasures
        /// other hunters' announcements name (for the standings).
        public var trail: [TrailStep]
        public var ranging: RangingConfiguration

        public init(
            beacon: IBeacon, intervalMilliseconds: Int = 100, reward: String? = nil, trail: [TrailStep] = [],
            ranging: RangingConfiguration = .default
        ) {
            self.beacon = beacon
            self.intervalMilliseconds = intervalMilliseconds
            self.reward = reward
            self.trail = trail
            self.ranging = ranging
        }
    }

    public enum Effect: Sendable, Equatable {
        /// A line of the contract (printed with `--json`).
        case output(OutputEvent)
        /// A line for the log (the journal; the kiosk's own terminal shows the state instead).
        case log(String)
        /// Log the reward's QR code for this hunter (at most one every `qrLogInterval`: it is
        /// many lines).
        case logQRCode(hunter: UInt16)
    }

    /// A hunter heard lately.
    struct HunterSeen: Sendable {
        var id: UInt16
        /// The tag of the treasure it says it found.
        var foundTag: UInt16
        var lastSeen: Double
        /// The committed class.
        var proximity: Proximity = .unknown
        var distance: Double?
        /// A change between two known classes is the hunter's trend (closer: warmer), kept
        /// with when it happened.
        var trend: Trend?
        var trendAt = -Double.infinity

        mutating func classified(_ next: Proximity) {
            if next != proximity, next != .unknown, proximity != .unknown {
                trend = next < proximity ? .warmer : .colder
                trendAt = lastSeen
            }
            proximity = next
        }
    }

    /// A hunter not heard for this long has left.
    public static let hunterTimeout = 15.0
    /// The greeting (and its QR code) stays on the screen this long.
    public static let greetingSeconds = 60.0
    /// A hunter is greeted again only after this long.
    public static let greetAgainAfter = 600.0
    /// The reward's QR code is logged at most this often.
    public static let qrLogInterval = 10.0
    /// A trend is told for this long after the class changed, then nothing.
    public static let trendSeconds = 10.0
    public static let tickInterval = 0.5

    public private(set) var configuration: Configuration
    private var engine: RangingEngine
    /// Hunters heard lately and when each was greeted: ids come from the air (anyone can make
    /// them up), so both are bounded, least recently heard out first.
    private var hunters = RecentlyHeardTable<UInt16, HunterSeen>(capacity: 32)
    private var greeted = RecentlyHeardTable<UInt16, Double>(capacity: 256)
    private var greeting: (id: UInt16, at: Double)?
    /// The finish order at this box: each hunter once, the first ones kept (ids come from the air).
    public private(set) var standings = Standings()
    private var lastQRLogged = -Double.infinity

    public init(configuration: Configuration) {
        self.configuration = configuration
        engine = RangingEngine(configuration: configuration.ranging, regions: [Region(name: "hunters", uuid: TreasureSignals.hunterUUID)])
    }

    private var ownTag: UInt16 { TreasureSignals.tag(of: configuration.beacon) }

    /// Which chest of the trail this box is (1-based), nil without a trail naming it.
    public var trailNumber: Int? {
        let b = configuration.beacon
        let key = BeaconKey(uuid: b.uuid, major: b.major, minor: b.minor)
        return configuration.trail.firstIndex { $0.region.contains(key) }.map { $0 + 1 }
    }

    /// A beacon heard (its time: seconds since start): a hunter's announcement is ranged,
    /// counted in the standings, and greeted when it found this box's treasure.
    public mutating func sighting(_ sighting: BeaconSighting) -> [Effect] {
        guard case let .iBeacon(beacon) = sighting.beacon, let (id, foundTag) = TreasureSignals.hunter(in: beacon) else { return [] }
        let t = sighting.time
        var effects: [Effect] = []
        // Another chest of the trail, found: the standings keep it (this box's own, below).
        if foundTag != ownTag, let step = TrailTags.named(configuration.trail)[foundTag],
            standings.record(hunter: id, treasure: step + 1, at: t) {
            effects.append(.output(.standings(time: t, standings.finishers)))
        }
        hunters.update(id, at: t, default: { HunterSeen(id: id, foundTag: foundTag, lastSeen: t) }) { h in
            h.lastSeen = t
            h.foundTag = foundTag
        }
        ranging(engine.ingest(sighting))
        // A hunter that found this treasure (its announcement carries our tag) is greeted.
        if foundTag == ownTag, greeted[id].map({ t - $0 >= Self.greetAgainAfter }) ?? true {
            greeted.set(id, t, at: t)
            greet(id, at: t, into: &effects)
            if standings.record(hunter: id, treasure: trailNumber ?? 1, at: t) {
                effects.append(.output(.standings(time: t, standings.finishers)))
            }
        }
        return effects
    }

    /// The periodic tick: hunters gone quiet leave, the greeting ends.
    public mutating func tick(at t: Double) {
        ranging(engine.advance(to: t))
        hunters.removeHeard(before: t - Self.hunterTimeout)
        greeted.removeHeard(before: t - Self.greetAgainAfter)
        if let g = greeting, t - g.at > Self.greetingSeconds { greeting = nil }
    }

    /// A new treasure (a reload): advertised again by the caller; hunters and standings kept.
    public mutating func reconfigure(_ next: Configuration) {
        configuration.beacon = next.beacon
        configuration.intervalMilliseconds = next.intervalMilliseconds
        configuration.reward = next.reward
    }

    private mutating func ranging(_ events: [RangingEvent]) {
        for event in events {
            guard case let .range(r) = event, r.key.uuid == TreasureSignals.hunterUUID else { continue }
            hunters.modify(r.key.major) { h in
                h.classified(r.proximity)
                h.distance = r.distance?.meters
            }
        }
    }

    private mutating func greet(_ id: UInt16, at t: Double, into effects: inout [Effect]) {
        greeting = (id, t)
        effects.append(.output(.greet(time: t, hunter: id, reward: configuration.reward)))
        let reward = configuration.reward.map { "; reward: \($0)" } ?? "; no reward configured"
        effects.append(.log("ahoy, hunter \(id)! ye found the treasure\(reward)"))
        // The QR code is many lines: a stream of made-up hunter ids must not flood the journal.
        if configuration.reward != nil, t - lastQRLogged >= Self.qrLogInterval {
            lastQRLogged = t
            effects.append(.logQRCode(hunter: id))
        }
    }

    /// What the kiosk shows at `now`: the box's own advertising state is the caller's (its
    /// controller), `qrLines` the reward's QR code drawn.
    public func kioskState(advertising: KioskState.Advertising, qrLines: [String], at now: Double) -> KioskState {
        let nearby = hunters.entries.map(\.value).sorted { $0.id < $1.id }.map {
            KioskState.Hunter(
                id: $0.id, proximity: $0.proximity, distance: $0.distance,
                trend: now - $0.trendAt <= Self.trendSeconds ? $0.trend : nil,
                found: greeted[$0.id] != nil, lastSeen: $0.lastSeen)
        }
        // The finish order: this box's chest, and the trail's others when their announcements are heard.
        let finders = standings.finishers.map { KioskState.Finisher(hunter: $0.hunter, treasure: $0.treasure, at: $0.time) }
        let b = configuration.beacon
        return KioskState(
            advertising: advertising, uuid: b.uuid.uuidString, major: b.major, minor: b.minor, power: b.measuredPower,
            intervalMilliseconds: configuration.intervalMilliseconds, reward: configuration.reward, hunters: nearby,
            greeting: greeting.map { KioskState.Greeting(hunterID: $0.id, at: $0.at, qrLines: qrLines) },
            trail: KioskState.Trail(count: max(1, configuration.trail.count), found: Set(finders.map(\.treasure)).count, number: trailNumber),
            standings: finders,
            proximityEdges: KioskState.ProximityEdges(immediate: configuration.ranging.immediateEdge, near: configuration.ranging.nearEdge))
    }
}
