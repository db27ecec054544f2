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
        /// The hunters of the game (`game.hunters`); nil: any hunter whose announcement verifies.
        public var roster: Set<UInt16>?

        public init(
            beacon: IBeacon, intervalMilliseconds: Int = 100, reward: String? = nil, trail: [TrailStep] = [],
            ranging: RangingConfiguration = .default, roster: Set<UInt16>? = nil
        ) {
            self.roster = roster
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
        /// Answer scan requests with this (the reward sealed for the hunter whose announcement
        /// verified last; nil: no scan response).
        case scanResponse([UInt8]?)
    }

    /// A hunter heard lately.
    struct HunterSeen: Sendable {
        var id: UInt16
        /// The tag of the treasure it says it found.
        var foundTag: UInt16
        /// Its last announcement says it found that treasure; a probe only asks a box to
        /// prove it is there (anyone near a copy of this box's beacon sends one), and a
        /// recorded probe replayed at the box was greeted and put in the standings.
        var announcedFind: Bool
        var lastSeen: Double
        /// The committed class.
        var proximity: Proximity = .unknown
        var distance: Double?
        /// A change between two known classes is the hunter's trend (closer: warmer), kept
        /// with when it happened.
        var trend: Trend?
        var trendAt = -Double.infinity
        /// Since when the committed class has been immediate (nil: it is not).
        var immediateSince: Double?

        mutating func classified(_ next: Proximity) {
            if next == .immediate {
                if proximity != .immediate || immediateSince == nil { immediateSince = lastSeen }
            } else {
                immediateSince = nil
            }
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
    /// A hunter is greeted once its announcement has verified and the box's own ranging has
    /// held it at "immediate" this long (s): it is really there, not a copy from afar.
    public static let greetAfterImmediate = 2.0
    /// The summary of announcements not believed: at most one line this often (s).
    public static let rejectedLogInterval = 60.0
    /// The sealed scan response is changed for another hunter at most this often (s).
    public static let resealInterval = 1.0
    /// The reward is sealed only for a hunter the box's own ranging places this close (m):
    /// a hunter asking from across the yard is at a copy of the box's beacon, not at the box
    /// (a hunter's radio up to 12 dB weaker than the power it advertises still reads this
    /// close from 1.5 m).
    public static let sealWithin = 6.0

    public private(set) var configuration: Configuration
    private var engine: RangingEngine
    /// Hunters heard lately and when each was greeted: ids come from the air (anyone can make
    /// them up), so both are bounded, least recently heard out first.
    private var hunters = RecentlyHeardTable<UInt16, HunterSeen>(capacity: 32)
    private var greeted = RecentlyHeardTable<UInt16, Double>(capacity: 256)
    private var greeting: (id: UInt16, at: Double)?
    /// The greetings of this round, newest last (at most `greetingsKept`): the box's page
    /// lists them.
    public private(set) var greetings: [(hunter: UInt16, at: Double, rewardSent: Bool)] = []
    public static let greetingsKept = 20
    /// The finish order at this box: each hunter once, the first ones kept (ids come from the air).
    public private(set) var standings = Standings()
    private var lastQRLogged = -Double.infinity
    /// The game key's MACs and cipher (nil: unpaired: no finder believed, no reward sent).
    public var authenticator: (any SignalAuthenticator)?
    /// The announcement the scan response is sealed for now, since when (the wait another
    /// hunter owes counts from it) and the newest challenge of that hunter sealed since.
    private var sealedFor: (announcement: GameSignals.Announcement, at: Double, newest: UInt32)?
    /// Announcements not believed (not verified, or a hunter not in the roster) since the
    /// last summary line, and when that was.
    private var rejected = 0
    private var rejectedHunters = Set<UInt16>()
    private var rejectedLoggedAt = -Double.infinity

    public init(configuration: Configuration, authenticator: (any SignalAuthenticator)? = nil) {
        self.configuration = configuration
        self.authenticator = authenticator
        engine = Self.huntersEngine(configuration.ranging)
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
        guard case let .iBeacon(beacon) = sighting.beacon,
            GameSignals.looksLikeAnnouncement(beacon) || TreasureSignals.hunter(in: beacon) != nil
        else { return [] }
        let t = sighting.time
        // Believed only when it verifies with the game key and names a hunter of the roster.
        guard let auth = authenticator, let a = try? GameSignals.verifiedAnnouncement(beacon, by: auth),
            configuration.roster?.contains(a.hunterID) ?? true
        else {
            reject(beacon.major)
            return []
        }
        let id = a.hunterID
        let foundTag = a.treasureTag
        var effects: [Effect] = []
        // Ranged under the hunters' one UUID (the announcement's carries its MAC).
        var plain = sighting
        // At the power every hunter advertises: the byte heard is not under the MAC.
        plain.beacon = .iBeacon(IBeacon(uuid: TreasureSignals.hunterUUID, major: id, minor: foundTag, measuredPower: GameSignals.announcementPower))
        // Another chest of the trail, found: the standings keep it (this box's own, below).
        // A probe (a hunter asking that box to prove it is there) is no find.
        if foundTag != ownTag, a.kind == .found, let step = TrailTags.named(configuration.trail)[foundTag] {
            record(id, treasure: step + 1, at: t, into: &effects)
        }
        hunters.update(id, at: t, default: { HunterSeen(id: id, foundTag: foundTag, announcedFind: a.kind == .found, lastSeen: t) }) { h in
            h.lastSeen = t
            h.foundTag = foundTag
            h.announcedFind = a.kind == .found
        }
        ranging(engine.ingest(plain))
        sealIfThere(a, at: t, into: &effects)
        // This box's own chest found: a hunter announces that only once this box's sealed
        // reward opened for it (sealed within `sealWithin`), or its own ranging held the
        // chest at hand. In the standings when this box ranges it as near as it seals for:
        // the greeting's 2 s at "immediate" left out a child whose hunter's radio reads a
        // few dB weak, while the other boxes counted the same find.
        if foundTag == ownTag, a.kind == .found, let distance = hunters[id]?.distance, distance <= Self.sealWithin {
            record(id, treasure: trailNumber ?? 1, at: t, into: &effects)
        }
        greetIfThere(id, at: t, into: &effects)
        return effects
    }

    /// The box's reward, sealed for this hunter's challenge (it answers its scan requests),
    /// once the box's own ranging places the hunter within `sealWithin`: a copy of the box's
    /// beacon far from it sets hunters there asking, and they must not get the box's proof.
    private mutating func sealIfThere(_ a: GameSignals.Announcement, at t: Double, into effects: inout [Effect]) {
        guard a.treasureTag == ownTag, let reward = configuration.reward, let auth = authenticator,
            sealedFor?.announcement != a, let distance = hunters[a.hunterID]?.distance, distance <= Self.sealWithin
        else { return }
        // The same hunter's challenge newer than any sealed for it is sealed at once (its
        // next announcement) and the wait another hunter owes still counts from the first
        // seal: recorded announcements of one hunter, replayed in turn, would otherwise hold
        // every other hunter off for good. Anything else (another hunter, or the same
        // hunter's older challenge: a recording) waits `resealInterval` and starts it anew,
        // so recordings replayed in turn change the response at most once a second.
        let previous = sealedFor
        let sameHunter = previous?.announcement.hunterID == a.hunterID
        let newer = previous.map { sameHunter && Int32(bitPattern: a.challenge &- $0.newest) > 0 } ?? false
        guard newer || t - (previous?.at ?? -Double.infinity) >= Self.resealInterval,
            let response = try? GameSignals.sealedScanResponse(reward: reward, boxTag: ownTag, to: a, by: auth)
        else { return }
        if let previous, newer {
            sealedFor = (a, previous.at, a.challenge)
        } else {
            sealedFor = (a, t, sameHunter ? (previous?.newest ?? a.challenge) : a.challenge)
        }
        effects.append(.scanResponse(response))
    }

    /// A hunter that found this treasure (its verified announcement carries our tag) is
    /// greeted once the box's own ranging has held it at "immediate" long enough.
    private mutating func greetIfThere(_ id: UInt16, at t: Double, into effects: inout [Effect]) {
        guard let h = hunters[id], h.foundTag == ownTag, h.announcedFind, let since = h.immediateSince, t - since >= Self.greetAfterImmediate,
            greeted[id].map({ t - $0 >= Self.greetAgainAfter }) ?? true
        else { return }
        greeted.set(id, t, at: t)
        greet(id, at: t, into: &effects)
        record(id, treasure: trailNumber ?? 1, at: t, into: &effects)
    }

    /// A hunter's find of `treasure` in the standings, printed when it is new there.
    private mutating func record(_ id: UInt16, treasure: Int, at t: Double, into effects: inout [Effect]) {
        if standings.record(hunter: id, treasure: treasure, at: t) {
            effects.append(.output(.standings(time: t, standings.finishers)))
        }
    }

    private mutating func reject(_ id: UInt16) {
        rejected += 1
        if rejectedHunters.count < 1000 { rejectedHunters.insert(id) }
    }

    /// The periodic tick: hunters gone quiet leave, the greeting ends, those held at
    /// immediate long enough are greeted, and what was not believed is summarised.
    @discardableResult
    public mutating func tick(at t: Double) -> [Effect] {
        var effects: [Effect] = []
        ranging(engine.advance(to: t))
        hunters.removeHeard(before: t - Self.hunterTimeout)
        greeted.removeHeard(before: t - Self.greetAgainAfter)
        if let g = greeting, t - g.at > Self.greetingSeconds { greeting = nil }
        for id in hunters.entries.map(\.key) { greetIfThere(id, at: t, into: &effects) }
        if rejected > 0, t - rejectedLoggedAt >= Self.rejectedLogInterval {
            let why = authenticator == nil ? "this box has no game key (pair it: pirate-hunter check)" : configuration.roster == nil ? "they do not verify with the game key" : "they do not verify with the game key or are not in game.hunters"
            effects.append(.log("ignored \(rejected) announcement\(rejected == 1 ? "" : "s") from \(rejectedHunters.count) hunter id\(rejectedHunters.count == 1 ? "" : "s") not greeted: \(why)"))
            rejected = 0
            rejectedHunters = []
            rejectedLoggedAt = t
        }
        return effects
    }

    /// A new treasure (a reload): advertised again by the caller; hunters and standings kept.
    /// The trail (which chest this box is, what the others' announcements name, the kiosk's
    /// count) and the ranging are the file's too: a chest added to the trail was never counted
    /// and the kiosk said "x of 2" until a restart, while the log said all was taken. New
    /// ranging settings range the hunters afresh (their classes come back within seconds).
    public mutating func reconfigure(_ next: Configuration) {
        configuration.beacon = next.beacon
        configuration.intervalMilliseconds = next.intervalMilliseconds
        configuration.reward = next.reward
        configuration.roster = next.roster
        configuration.trail = next.trail
        if next.ranging != configuration.ranging {
            configuration.ranging = next.ranging
            engine = Self.huntersEngine(next.ranging)
            for id in hunters.entries.map(\.key) { hunters.modify(id) { h in h.classified(.unknown) } }
        }
        sealedFor = nil
    }

    /// A new round (the box page's "New round": the hunters restarted for another hunt): the
    /// finish order and who was greeted start again, so this round's finds are counted and
    /// greeted (they were refused as repeats, and the kiosk said the morning's order and "All
    /// found" from the start). The hunters in view are kept.
    public mutating func newRound(at t: Double) -> [Effect] {
        standings = Standings()
        greeted.removeHeard(before: .infinity)
        greeting = nil
        greetings = []
        sealedFor = nil
        return [.output(.standings(time: t, [])), .log("a new round: standings and greetings start again")]
    }

    private static func huntersEngine(_ ranging: RangingConfiguration) -> RangingEngine {
        RangingEngine(configuration: ranging, regions: [Region(name: "hunters", uuid: TreasureSignals.hunterUUID)])
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
        greetings = Array((greetings + [(id, t, configuration.reward != nil)]).suffix(Self.greetingsKept))
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
