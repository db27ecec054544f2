import Bluetooth
import FoundationEssentials
import Hunt
import Ranging

/// The hunter's game, whole: sightings, scan responses, the radio's state and time in;
/// what to say, play, print, log and ask of the controller out. It owns the ranging engine,
/// the hunt director, the reward handoff, the standings, which trail step each announced
/// tag names, and the beacons heard. Pure: no I/O, no clock (every input comes with its
/// time, seconds since start), so a test drives it as the appliance does, input by input.
/// The executable (`Hunter`) only carries the effects out.
public struct HunterCore: Sendable {
    /// What the hunter announces after a find, and how long it listens for the reward.
    public struct Announcement: Sendable, Equatable {
        /// This hunter's id (the major of the beacon it announces itself with).
        public var hunterID: UInt16
        /// How long it announces itself to the treasure box after finding it; 0: never.
        public var seconds: Double
        /// How long it scans actively for the treasure's reward before giving up.
        public var rewardTimeout: Double

        public init(hunterID: UInt16 = 1, seconds: Double = 60, rewardTimeout: Double = 10) {
            self.hunterID = hunterID
            self.seconds = seconds
            self.rewardTimeout = rewardTimeout
        }
    }

    public struct Configuration: Sendable, Equatable {
        /// The regions ranged; without a trail the first is the one hunted.
        public var regions: [Region]
        public var ranging: RangingConfiguration
        /// The hunt's rules; nil: ranging only (nothing is said).
        public var hunt: HuntDirector.Configuration?
        /// After a find: read the reward, announce this hunter (nil: neither).
        public var announce: Announcement?
        /// Stop this long after the hunt is over (the demo); nil: never.
        public var stopAfterFinish: Double?
        /// Beacons calibrated by the parent (`tags[].power`): their RSSI at 1 m, used instead
        /// of the power they advertise (a cheap tag's is often several dB off).
        public var calibrations: [BeaconKey: Int8] = [:]

        public init(
            regions: [Region], ranging: RangingConfiguration = .default, hunt: HuntDirector.Configuration? = nil,
            announce: Announcement? = nil, stopAfterFinish: Double? = nil
        ) {
            self.regions = regions
            self.ranging = ranging
            self.hunt = hunt
            self.announce = announce
            self.stopAfterFinish = stopAfterFinish
        }

        /// The treasure detector's, when the hunt has it on (`hunt.detector`).
        var detector: TreasureDetector.Configuration? { hunt?.detector.enabled == true ? hunt?.detector : nil }
    }

    public enum Input: Sendable, Equatable {
        /// A beacon heard (its time: seconds since start).
        case sighting(BeaconSighting)
        /// An advertising report, every one (scan responses carry the treasure's reward; one
        /// of no region's beacon tells the ranging the receiver hears, `RangingEngine.heardOther`).
        case report(AdvertisingReport)
        /// The controller is scanning; `afterOutage` when it came back from an outage.
        case radioReady(afterOutage: Bool)
        /// The controller went away (the start of an outage), and why when it is known.
        case radioLost(RadioProblem? = nil)
        /// The radio cannot be used at all (no Bluetooth, no permission); the hunt ends.
        /// `toldThisBoot`: its line was said already since the machine booted (systemd starts
        /// the hunter again and again; the child hears it once per cause and boot).
        case radioUnusable(RadioProblem? = nil, toldThisBoot: Bool = false)
        /// The capture being replayed is over: its end is no silence of the beacons.
        case radioEnded
        /// The periodic tick (silence-based decisions, timers): every 0.25 s.
        case tick
        /// The line last said has finished playing.
        case speechFinished
        /// The reward's words are ready to be said (synthesized slowly, off the loop).
        case rewardReady
        /// The child pressed the button: the current clue again.
        case clueAsked
        /// The speaker missing at start has appeared.
        case speakerFound
        /// The parent's page is up: where (the Pi's name, the port) and its setup code, said
        /// once for the grown-up by the speaker after the start-up line.
        case pageOpened(host: String, port: Int, code: String)
    }

    public enum Level: Sendable, Equatable { case info, warning, error }

    public enum Effect: Sendable, Equatable {
        /// A line of the contract (printed with `--json`).
        case output(OutputEvent)
        case log(Level, String)
        /// Play a sound effect (the executable prints its `sound` line).
        case sound(Sound)
        /// Say a pre-rendered line of the pack (the reward's: then the reward itself).
        case say(LineEvent)
        /// Say a trail line about `detail` (composed with `LineDetail.text(of:template:)`).
        case tell(LineEvent, LineDetail)
        /// Scan actively (scan responses come back) or passively.
        case scanActively(Bool)
        /// Advertise this (the hunter's announcement), or stop advertising (nil).
        case advertise(Advertisement?)
        /// The treasure's reward was read: show it, and make its slow reading (then
        /// `rewardReady`).
        case reward(String, address: BDAddress?)
        /// The treasure detector's clicks a second from now on (0: silent; the executable
        /// prints its `detector` line and clicks between lines).
        case detector(Double)
        /// The hunt is over and the configured time after it has passed: stop.
        case stop
        /// Tick at this time too (seconds since start), besides the period: a find falls due
        /// then (`HuntDirector.nextDeadline(after:)`: the hunted step's or a trail's other
        /// treasure's), and is said then, not up to a period later. A
        /// later `wake` replaces it.
        case wake(at: Double)
    }

    public static let tickInterval = 0.25
    /// The tables radio input grows: tags named by announcements, beacons heard.
    public static let tableCapacity = 64

    public private(set) var configuration: Configuration
    private var engine: RangingEngine
    private var director: HuntDirector?
    private var handoff: RewardHandoff?
    /// Which trail step a treasure's tag names (the tag is what a hunter announces), from
    /// the beacons heard. Bounded: tags come from the air.
    private var stepOfTag = RecentlyHeardTable<UInt16, Int>(capacity: HunterCore.tableCapacity)
    /// The same from the steps naming one beacon, kept for good (the trail's own size).
    private var namedTags: [UInt16: Int] = [:]
    /// The beacons of the hunted regions heard: where each advertises from, what it
    /// advertises. Anyone can advertise a region's UUID with made-up ids: bounded, the least
    /// recently heard out first, the nearest and the last heard kept.
    private var heard = RecentlyHeardTable<BeaconKey, HeardBeacon>(capacity: HunterCore.tableCapacity)
    private var lastHeard: BeaconKey?
    /// The treasure found last (its region's nearest when it was): its reward is read from
    /// its address only, and the announcement names it.
    private var foundTreasure: HeardBeacon?
    /// Who found what: this hunter's finds and the rivals' it hears.
    public private(set) var standings = Standings()
    private var outage = OutageAnnouncer()
    /// Finds are carried out at the next tick, after its lines (at most 0.25 s after the find).
    private var pendingFinds: [Int?] = []
    private var finishedAt: Double?
    private var detector: TreasureDetector?
    /// A compass spin under way (the child turning slowly), watched packet by packet.
    private var spin: CompassSpin?
    /// The region the detector follows (the hunted step's), to start it over on a new step.
    private var detectedRegion: RegionID?
    private var startupSaid = false
    /// Why the radio was last lost, when the transport said (a set-up problem before start).
    private var radioProblem: RadioProblem?
    private var rangingStopped = false
    /// The last deadline a `wake` was asked for.
    private var wokenFor: Double?

    struct HeardBeacon: Sendable, Equatable {
        var address: BDAddress
        var beacon: IBeacon
    }

    /// The game key's MACs and cipher (nil: unpaired, and nothing from the air is believed
    /// beyond a plain beacon's presence: no box reward, no rival).
    public var authenticator: (any SignalAuthenticator)?
    /// The challenge of the announcement being sent (a new one for each treasure found): the
    /// box seals its reward for it, so a recorded response does not verify.
    public private(set) var challenge: UInt32
    /// A find waiting for the box's proof (its sealed reward) before the standings count it;
    /// without one by the reward's timeout it counts by presence (a plain tag).
    private var unprovenFind: (step: Int?, at: Double)?
    private var unpairedSaid = false
    /// Box steps (`TrailStep.box`): the immediate class held back from the director until the
    /// box proved it is there, the step being probed (announced to, listened for), and the
    /// steps proven with their reward.
    private var heldImmediate: [Int: RangingEvent] = [:]
    private var probing: Int?
    private var proven: [Int: String] = [:]
    private var boxNeedsAnnounceLogged = false
    /// A box step still held at immediate without a proof is asked again from this time on;
    /// the steps whose (failed) probe was already logged in this stay at immediate.
    private var reprobeAt: [Int: Double] = [:]
    private var probeLogged = Set<Int>()
    /// How long after an unanswered probe a box step still at immediate is asked again (s).
    public static let reprobeInterval = 20.0
    /// Signals from the air that did not verify since the last summary line, and when it was.
    private var unverified = 0
    private var unverifiedLoggedAt = -Double.infinity
    /// The summary of signals that did not verify: at most one line this often.
    public static let unverifiedLogInterval = 60.0

    /// `challenge`: where this hunter's announcement challenges start (random at the edge,
    /// so a hunter restarted does not repeat its challenges).
    public init(configuration: Configuration, authenticator: (any SignalAuthenticator)? = nil, challenge: UInt32 = 0) {
        self.configuration = configuration
        self.authenticator = authenticator
        self.challenge = challenge
        engine = RangingEngine(configuration: configuration.ranging, regions: configuration.regions,
                               calibratedBeacons: Set(configuration.calibrations.keys))
        director = configuration.hunt.map(HuntDirector.init(configuration:))
        handoff = configuration.announce.map(Self.handoff)
        detector = configuration.detector.map(TreasureDetector.init(configuration:))
        nameTrailTags()
    }

    private static func handoff(_ a: Announcement) -> RewardHandoff {
        RewardHandoff(configuration: RewardHandoff.Configuration(rewardTimeout: a.rewardTimeout, announceSeconds: a.seconds))
    }

    /// The trail's named tags are kept apart from the ones heard (`stepOfTag`): in the
    /// table, a trail of 16 or more named steps had every protected slot among its oldest,
    /// and a wider step's made-up tags, heard from the air, evicted the named ones.
    private mutating func nameTrailTags() {
        namedTags = TrailTags.named(configuration.hunt?.trail ?? [])
    }

    /// The reward read for the last find (said after the pack's reward line): a box's, a
    /// step's own, or one proven before the find (`give`).
    public private(set) var reward: String?
    /// The hunt is over (the trail done, or the chest found).
    public var huntOver: Bool { director?.huntOver ?? false }
    /// Listening for the found treasure's reward now.
    public var listensForReward: Bool { handoff?.listeningSince != nil }

    /// Feeds one input at `time` (seconds since start); returns what to do, in order.
    public mutating func handle(_ input: Input, at time: Double) -> [Effect] {
        var effects: [Effect] = []
        switch input {
        case let .sighting(sighting):
            self.sighting(sighting, into: &effects)
        case let .report(report):
            // Anyone but the regions' beacons (whose sightings are ingested): the receiver
            // hears, so a silence of the beacons while it does is theirs.
            if !carriesRegionBeacon(report) { engine.heardOther(at: time) }
            guard var h = handoff, h.listeningSince != nil, report.isScanResponse, report.address == foundTreasure?.address,
                let auth = authenticator, let id = configuration.announce?.hunterID, let treasure = foundTreasure?.beacon
            else { break }
            // Only a reward sealed for this hunter's current challenge is believed.
            let mine = GameSignals.Announcement(hunterID: id, treasureTag: TreasureSignals.tag(of: treasure), challenge: challenge)
            let text: String
            do throws(SignalError) {
                text = try GameSignals.openReward(inScanResponse: report.data, boxTag: mine.treasureTag, for: mine, by: auth)
            } catch .notOurs {
                break
            } catch {
                unverified += 1
                break
            }
            let actions = h.heard(text, at: time)
            if let step = probing, !actions.isEmpty {
                // A box step proven: the director hears the immediate class it was held back.
                probing = nil
                proven[step] = text
                effects.append(.scanActively(false))
                effects.append(.log(.info, "treasure \(step + 1): the box proved it is there"))
                // Now a find: the probe's question becomes "I found it" for the others, for a
                // whole announcement (the probe's may be over).
                let again = h.announceAgain(at: time)
                handoff = h
                if again.isEmpty { announceAnew(.found, into: &effects) } else { perform(again, at: time, into: &effects) }
                if let held = heldImmediate.removeValue(forKey: step), let actions = director?.handle(.ranging(held.at(time)), at: time) {
                    perform(actions, at: time, into: &effects)
                }
                break
            }
            handoff = h
            if !actions.isEmpty { countUnprovenFind(into: &effects) }
            perform(actions, at: time, into: &effects)
        case let .radioReady(afterOutage):
            // The silences of the outage were the radio's, not the beacons'.
            engine.receiverBack(at: time)
            if afterOutage, outage.back(at: time) == .back { say(.adapterBack, at: time, into: &effects) }
            // "The hunt begins" is true only once scanning.
            if !startupSaid {
                startupSaid = true
                if authenticator == nil {
                    effects.append(.log(.warning, Self.unpairedLine))
                }
                say(.started, at: time, into: &effects)
            }
        case let .radioLost(problem):
            engine.receiverLost(at: time)
            outage.lost(at: time)
            radioProblem = problem
        case let .radioUnusable(problem, toldThisBoot):
            // Once per cause and boot; before the hunt ever began, the grown-up is told what
            // to fix in plain words.
            if toldThisBoot { break }
            if !startupSaid, let problem {
                say(.notice(problem.notice), at: time, into: &effects)
            } else {
                say(.adapterMissing, at: time, into: &effects)
            }
        case .radioEnded:
            rangingStopped = true
        case .tick:
            tick(at: time, into: &effects)
        case .speechFinished:
            say(.speechFinished, at: time, into: &effects)
        case .rewardReady:
            say(.rewardHeard, at: time, into: &effects)
        case .clueAsked:
            say(.clueAsked, at: time, into: &effects)
        case .speakerFound:
            say(.speakerFound, at: time, into: &effects)
        case let .pageOpened(host, port, code):
            let detail = LineDetail(host: host, port: port, code: code)
            // No hunt (nothing to wait for): said at once.
            if director == nil { effects.append(.tell(.noticePage, detail)) } else { say(.pageOpened(detail), at: time, into: &effects) }
        }
        // A deadline not asked for yet: a tick then (each once; one gone by waits for the period).
        if let due = director?.nextDeadline(after: time), due != wokenFor {
            wokenFor = due
            effects.append(.wake(at: due))
        }
        return effects
    }

    /// Whether the report holds an iBeacon of one of the regions.
    private func carriesRegionBeacon(_ report: AdvertisingReport) -> Bool {
        report.beacons.contains { beacon in
            guard case let .iBeacon(b) = beacon else { return false }
            return inRegion(BeaconKey(uuid: b.uuid, major: b.major, minor: b.minor))
        }
    }

    /// Whether a beacon is of one of the regions (ranged, its sightings the hunt's).
    private func inRegion(_ key: BeaconKey) -> Bool {
        configuration.regions.contains { $0.contains(key) }
    }

    /// The log's words for a hunter without a game key.
    public static let unpairedLine =
        "not paired with the treasure box (no game.key): box rewards and other hunters' finds are ignored; pair it with pirate-hunter pair CODE (pirate-hunter check explains)"

    /// The first time being unpaired matters (a find a box would reward, a hunter's
    /// announcement heard): the grown-up is told once, in plain words.
    private mutating func unpairedMatters(at t: Double, into effects: inout [Effect]) {
        guard authenticator == nil, !unpairedSaid else { return }
        unpairedSaid = true
        say(.notice(.noticeUnpaired), at: t, into: &effects)
    }

    /// The find's reward: shown and read out (`.reward`), and said after the pack's reward
    /// line (`reward`).
    private mutating func give(_ text: String, address: BDAddress?, into effects: inout [Effect]) {
        reward = text
        effects.append(.reward(text, address: address))
    }

    private mutating func countUnprovenFind(into effects: inout [Effect]) {
        guard let find = unprovenFind else { return }
        unprovenFind = nil
        if let id = configuration.announce?.hunterID, standings.record(hunter: id, treasure: (find.step ?? 0) + 1, at: find.at) {
            effects.append(.output(.standings(time: find.at, standings.finishers)))
        }
    }

    private mutating func tick(at t: Double, into effects: inout [Effect]) {
        if unverified > 0, t - unverifiedLoggedAt >= Self.unverifiedLogInterval {
            effects.append(.log(.info, "ignored \(unverified) signal\(unverified == 1 ? "" : "s") from the air that did not verify with the game key (made-up hunters or rewards, or another game)"))
            unverified = 0
            unverifiedLoggedAt = t
        }
        // Silence-based decisions (exit, unknown, initial state) and the found timer.
        if !rangingStopped { ranging(engine.advance(to: t), at: t, into: &effects) }
        if outage.tick(at: t) == .missing {
            // An outage from the start (the hunt never began) is a set-up problem: its
            // cause, in plain words, once; later ones are the child's line.
            if !startupSaid, let problem = radioProblem {
                say(.notice(problem.notice), at: t, into: &effects)
            } else {
                say(.adapterMissing, at: t, into: &effects)
            }
        }
        if let actions = director?.tick(at: t) { perform(actions, at: t, into: &effects) }
        let finds = pendingFinds
        pendingFinds = []
        for step in finds { found(step: step, at: t, into: &effects) }
        if director?.huntOver == true, finishedAt == nil { finishedAt = t }
        if let actions = handoff?.tick(at: t) { perform(actions, at: t, into: &effects) }
        if let rate = detectorTick(at: t) { effects.append(.detector(rate)) }
        if probing == nil, let step = reprobeAt.first(where: { $0.value <= t })?.key,
            case let .proximity(_, key, _, _)? = heldImmediate[step] {
            startProbe(step, key: key, at: t, into: &effects)
        }
        if spin?.tick(at: t) == true {
            spin = nil
            say(.spinPeaked, at: t, into: &effects)
        }
        if case .done? = spin?.phase { spin = nil }
        if let after = configuration.stopAfterFinish, let finishedAt, t - finishedAt >= after { effects.append(.stop) }
    }

    private mutating func sighting(_ original: BeaconSighting, into effects: inout [Effect]) {
        let sighting = original.calibrated(by: configuration.calibrations)
        let time = sighting.time
        if case let .iBeacon(beacon) = sighting.beacon {
            let key = BeaconKey(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
            if inRegion(key) {
                // Which beacons an eviction passes over is worked out only when one is needed.
                let keep = heard[key] == nil && heard.count >= heard.capacity ? keptBeacons : []
                heard.set(key, HeardBeacon(address: sighting.address, beacon: beacon), at: time) { keep.contains($0) }
                lastHeard = key
                if let step = configuration.hunt?.trail.firstIndex(where: { $0.region.contains(key) }) {
                    let tag = TreasureSignals.tag(of: beacon)
                    if namedTags[tag] == nil { stepOfTag.set(tag, step, at: time) }
                }
            } else if GameSignals.looksLikeAnnouncement(beacon) || TreasureSignals.hunter(in: beacon) != nil {
                // Another hunter's find, believed only when it verifies with the game key.
                if let auth = authenticator, let a = try? GameSignals.verifiedAnnouncement(beacon, by: auth) {
                    // A probe asks a box to prove it is there: not a find (a copy of the box's
                    // beacon sets every hunter near it asking).
                    if a.kind == .found { rival(a.hunterID, tag: a.treasureTag, at: time, into: &effects) }
                } else if authenticator == nil {
                    unpairedMatters(at: time, into: &effects)
                } else {
                    unverified += 1
                }
            }
        }
        ranging(engine.ingest(sighting), at: time, into: &effects)
        if let loss = huntedPathLoss(sighting) {
            if let rate = detector?.heard(pathLoss: loss, at: time) { effects.append(.detector(rate)) }
            if spin?.heard(pathLoss: loss, at: time) == true {
                spin = nil
                say(.spinPeaked, at: time, into: &effects)
            }
        }
    }

    /// The region being hunted now: the trail's current step's, else the first.
    private var huntedRegion: Region? {
        let name = director?.region
        return configuration.regions.first { $0.name == name } ?? configuration.regions.first
    }

    /// The path loss of a packet of the hunted region's beacon (its nearest, when it has
    /// one), once the hunt has begun and until it is over: what the detector and the
    /// compass spin follow. A reading or an advertised power the engine would not range on
    /// (`plausibleRSSI`, `plausibleMeasuredPower`: a controller's odd value, or a copy of the
    /// treasure's beacon advertising -128 dBm to pass for the chest) is not followed either.
    private func huntedPathLoss(_ sighting: BeaconSighting) -> Double? {
        guard startupSaid, !huntOver, case let .iBeacon(b) = sighting.beacon, let rssi = sighting.rssi, let region = huntedRegion,
              engine.configuration.plausibleRSSI.contains(Int(rssi)),
              engine.configuration.plausibleMeasuredPower.contains(Int(b.measuredPower))
        else { return nil }
        let key = BeaconKey(uuid: b.uuid, major: b.major, minor: b.minor)
        guard region.contains(key), engine.nearest(inRegion: region.name).map({ $0 == key }) ?? true else { return nil }
        return Double(b.measuredPower) - Double(rssi)
    }

    /// Silent when nothing is heard, when the hunt is over, and from the start of a new step.
    private mutating func detectorTick(at t: Double) -> Double? {
        guard detector != nil else { return nil }
        let region = director?.region
        if huntOver || region != detectedRegion {
            detectedRegion = region
            spin = nil
            return detector?.reset()
        }
        return detector?.tick(at: t)
    }

    /// The beacons the heard table never evicts: the last heard, each region's nearest.
    private var keptBeacons: Set<BeaconKey> {
        var keep = Set(configuration.regions.compactMap { engine.nearest(inRegion: $0.name) })
        if let lastHeard { keep.insert(lastHeard) }
        return keep
    }

    /// Another hunter's announcement: it found the treasure its tag names.
    private mutating func rival(_ id: UInt16, tag: UInt16, at t: Double, into effects: inout [Effect]) {
        guard id != configuration.announce?.hunterID, let step = namedTags[tag] ?? stepOfTag[tag] else { return }
        if standings.record(hunter: id, treasure: step + 1, at: t) {
            effects.append(.log(.info, "hunter \(id) found treasure \(step + 1)"))
            effects.append(.output(.standings(time: t, standings.finishers)))
        }
        say(.rivalFound(hunter: id, step: step), at: t, into: &effects)
    }

    /// The ranging's news: printed, told to the director (the hunted regions' only), logged.
    private mutating func ranging(_ events: [RangingEvent], at time: Double, into effects: inout [Effect]) {
        for event in events {
            effects.append(.output(.ranging(event)))
            if holdsBack(event, at: time, into: &effects) { continue }
            if hunted(event), let actions = director?.handle(.ranging(event), at: time) {
                perform(actions, at: time, into: &effects)
            }
            switch event {
            case let .regionEnter(_, region): effects.append(.log(.info, "entered region \(region)"))
            case let .regionExit(_, region): effects.append(.log(.info, "left region \(region)"))
            case let .regionState(_, region, state): effects.append(.log(.info, "region \(region) is \(state.rawValue)"))
            default: break
            }
        }
    }

    /// A box step's beacon at immediate is not yet a find: the box is asked to prove it is
    /// there (this hunter announces itself and listens for the sealed reward), and the class
    /// is held back from the director until it does. True when `event` is held back.
    private mutating func holdsBack(_ event: RangingEvent, at t: Double, into effects: inout [Effect]) -> Bool {
        guard case let .proximity(_, key, _, to) = event, let trail = configuration.hunt?.trail,
            let step = trail.firstIndex(where: { $0.box && $0.region.contains(key) }), proven[step] == nil
        else { return false }
        guard to == .immediate else {
            heldImmediate[step] = nil
            reprobeAt[step] = nil
            probeLogged.remove(step)
            return false
        }
        heldImmediate[step] = event
        guard probing == nil else { return true }
        startProbe(step, key: key, at: t, into: &effects)
        return true
    }

    /// This hunter announces itself and listens for box step `step`'s sealed reward.
    private mutating func startProbe(_ step: Int, key: BeaconKey, at t: Double, into effects: inout [Effect]) {
        guard authenticator != nil else {
            unpairedMatters(at: t, into: &effects)
            return
        }
        guard var h = handoff.map({ RewardHandoff(configuration: $0.configuration) }), h.configuration.announceSeconds > 0 else {
            // Without an announcement the box cannot answer: said once in the log.
            if !boxNeedsAnnounceLogged {
                boxNeedsAnnounceLogged = true
                effects.append(.log(.warning, "treasure \(step + 1) is a box but this hunter does not announce itself (announce.seconds 0): it cannot be found"))
            }
            return
        }
        probing = step
        reprobeAt[step] = nil
        if heard[key] != nil { foundTreasure = heard[key] }
        let actions = h.found(at: t)
        handoff = h
        if !probeLogged.contains(step) { effects.append(.log(.info, "treasure \(step + 1) is a box: asking it to prove it is there")) }
        perform(actions, at: t, into: &effects)
    }

    /// Whether the director hears `event`: a beacon's class change is its news only for a
    /// hunted region (a trail hunts all its steps'; without one, the first region).
    private func hunted(_ event: RangingEvent) -> Bool {
        guard case let .proximity(_, key, _, _) = event else { return true }
        let regions = configuration.regions
        let hunted = configuration.hunt?.trail.isEmpty == false ? regions : Array(regions.prefix(1))
        return hunted.contains { $0.contains(key) }
    }

    /// A treasure was found (step `step` of the trail, or the chest): the treasure is the
    /// found region's nearest beacon; its reward is read, this hunter announced, the
    /// standings updated.
    private mutating func found(step: Int?, at t: Double, into effects: inout [Effect]) {
        let trail = configuration.hunt?.trail ?? []
        let region = step.flatMap { trail.indices.contains($0) ? trail[$0].region : nil } ?? configuration.regions.first
        let previous = foundTreasure?.address
        reward = nil
        let last = lastHeard.flatMap { k in region?.contains(k) == true ? k : nil }
        if let key = region.flatMap({ engine.nearest(inRegion: $0.name) }) ?? last { foundTreasure = heard[key] }
        // A box step was found after its proof: its reward is the one the box sealed.
        if let step, let reward = proven[step] {
            unprovenFind = (step, t)
            countUnprovenFind(into: &effects)
            give(reward, address: foundTreasure?.address, into: &effects)
            return
        }
        // A step with its own reward needs no box: it is read and shown now, and nothing is
        // listened for (a box's reward heard over the air would not be believed over it).
        if let step, trail.indices.contains(step), let reward = trail[step].reward {
            unprovenFind = (step, t)
            countUnprovenFind(into: &effects)
            effects.append(.log(.info, "treasure \(step + 1) found: its reward is the trail's own"))
            give(reward, address: nil, into: &effects)
            return
        }
        // The standings count it after the box's proof (its sealed reward), or by presence
        // when no box answers (a plain tag).
        countUnprovenFind(into: &effects)
        unprovenFind = (step, t)
        guard var h = handoff else {
            countUnprovenFind(into: &effects)
            say(.rewardAbsent, at: t, into: &effects)
            return
        }
        guard authenticator != nil else {
            // Unpaired: no box reward would be believed, so none is listened for, and no
            // announcement is sent (no box or hunter would believe it).
            countUnprovenFind(into: &effects)
            unpairedMatters(at: t, into: &effects)
            say(.rewardAbsent, at: t, into: &effects)
            return
        }
        // Another treasure of the trail: its own reward, and the announcement names it. A box
        // asked before and left unanswered is asked no longer (its handoff is this one's now):
        // this find is announced as a find, and its reward or silence is its own.
        if step != nil, foundTreasure?.address != previous {
            h = RewardHandoff(configuration: h.configuration)
            probing = nil
        }
        let actions = h.found(at: t)
        handoff = h
        perform(actions, at: t, into: &effects)
        if !actions.contains(.scanActively(true)) { say(.rewardAbsent, at: t, into: &effects) }
    }

    /// Advertises this hunter's announcement of the found treasure, with a new challenge
    /// (the box's sealed reward answers it).
    private mutating func announceAnew(_ kind: GameSignals.Announcement.Kind, into effects: inout [Effect]) {
        guard let announce = configuration.announce else { return }
        let uuid = configuration.regions.first?.uuid ?? Self.defaultTreasureUUID
        let treasure = foundTreasure?.beacon ?? IBeacon(uuid: uuid, major: 0, minor: 0, measuredPower: -59)
        challenge &+= 1
        let beacon = authenticator.map {
            GameSignals.announcement(
                GameSignals.Announcement(hunterID: announce.hunterID, treasureTag: TreasureSignals.tag(of: treasure), challenge: challenge, kind: kind), by: $0)
        } ?? TreasureSignals.announcement(hunterID: announce.hunterID, treasure: treasure)
        effects.append(.advertise(Advertisement(data: beacon.advertisingData)))
    }

    private mutating func perform(_ actions: [RewardHandoff.Action], at t: Double, into effects: inout [Effect]) {
        for action in actions {
            switch action {
            case let .scanActively(active):
                effects.append(.scanActively(active))
                effects.append(.log(.info, active ? "treasure found: scanning actively for its reward" : "back to passive scanning"))
            case let .announce(on):
                guard let announce = configuration.announce else { continue }
                if on {
                    // A box step's beacon held at immediate asks its box to prove it is there
                    // (a probe, which no one counts); anything else is a find.
                    announceAnew(probing == nil ? .found : .probe, into: &effects)
                    effects.append(.log(.info, "announcing hunter \(announce.hunterID) to the treasure box for \(fixed(announce.seconds, decimals: 0)) s"))
                } else {
                    effects.append(.advertise(nil))
                    effects.append(.log(.info, "announcement over"))
                }
            case let .reward(text):
                give(text, address: foundTreasure?.address, into: &effects)
            case .noReward:
                if let step = probing {
                    // The box did not prove it is there: not found; asked again a while later
                    // if the child stays (logged once a stay), or when it comes back.
                    probing = nil
                    reprobeAt[step] = t + Self.reprobeInterval
                    if probeLogged.insert(step).inserted {
                        effects.append(.log(.warning, "treasure \(step + 1): no proof from its box (a copy of its beacon, or the box is not paired): not found yet"))
                    }
                    continue
                }
                // No box answered: a plain tag's find counts by its presence.
                countUnprovenFind(into: &effects)
                effects.append(.log(.warning, "no reward heard from the treasure (it may have none)"))
                say(.rewardAbsent, at: t, into: &effects)
            }
        }
    }

    private mutating func say(_ input: HuntInput, at t: Double, into effects: inout [Effect]) {
        guard let actions = director?.handle(input, at: t) else { return }
        perform(actions, at: t, into: &effects)
    }

    private mutating func perform(_ actions: [HuntAction], at t: Double, into effects: inout [Effect]) {
        for action in actions {
            switch action {
            case let .sound(sound): effects.append(.sound(sound))
            case let .say(event, _): effects.append(.say(event))
            case let .tell(event, detail, _): effects.append(.tell(event, detail))
            case let .found(step):
                pendingFinds.append(step)
                spin = nil  // found: no "stop" for it any more
            case .watchSpin: spin = CompassSpin(at: t)
            }
        }
    }

    /// The same hunter with a new configuration (a reload): what changed starts over (new
    /// regions or thresholds: the ranging; new hunt rules: the director, the standings and
    /// the trail, said from its start line), what did not is kept. Returns what was applied,
    /// in words for the log, and the effects (a new trail's start line).
    public mutating func reconfigure(_ next: Configuration, at t: Double) -> (applied: [String], effects: [Effect]) {
        var next = next
        if let stopped = stoppedHunt, next.hunt == stopped {
            // A stopped hunt stays stopped through a reload of the same hunt: the parent's
            // page saves the file for a volume, a tag's name or its calibration, and the
            // reload said the start-up line and the first clue to the children the parent
            // had stopped it for. A new trail (saved on the page, or by hand) starts.
            next.hunt = nil
        } else if next.hunt != nil {
            stoppedHunt = nil
        }
        let old = configuration
        var applied: [String] = []
        var effects: [Effect] = []
        let newHunt = next.hunt != old.hunt || next.regions != old.regions
        if next.regions != old.regions || next.ranging != old.ranging || next.hunt != old.hunt {
            // New regions or thresholds: the engine starts over (its filters and states
            // belong to the old ones); what it says next comes from the new ones. New hunt
            // rules start a new director, which must hear the region's state again.
            engine = RangingEngine(configuration: next.ranging, regions: next.regions)
            lastHeard = nil
            heard.removeHeard(before: .infinity)
            applied.append(next.regions != old.regions ? "regions (ranging starts over)" : next.ranging != old.ranging ? "ranging (it starts over)" : "ranging starts over")
        }
        configuration = next
        // A tag calibrated since (the parent's page): its interval narrows from now on.
        engine.calibratedBeacons = Set(next.calibrations.keys)
        if newHunt {
            director = next.hunt.map(HuntDirector.init(configuration:))
            pendingFinds = []
            heldImmediate = [:]
            probing = nil
            proven = [:]
            reprobeAt = [:]
            probeLogged = []
            stepOfTag.removeHeard(before: .infinity)
            nameTrailTags()
            standings = Standings()
            applied.append(next.hunt?.trail.isEmpty == false ? "hunt (the trail starts over)" : "hunt")
        }
        if next.announce != old.announce {
            // The old handoff's announcement and active scan end with it (nothing else would
            // end them), and a box being asked is asked again under the new settings.
            if handoff?.listeningSince != nil { effects.append(.scanActively(false)) }
            if handoff?.announcingUntil != nil { effects.append(.advertise(nil)) }
            if let step = probing {
                probing = nil
                reprobeAt[step] = t
            }
            handoff = next.announce.map(Self.handoff)
            applied.append("announce")
        }
        if newHunt {
            // The detector starts over with the hunt (silent until it hears the new step).
            if let rate = detector?.reset() { effects.append(.detector(rate)) }
            detector = next.detector.map(TreasureDetector.init(configuration:))
        }
        // A new trail begins as a hunt does: the start-up line, then its first clue.
        if newHunt, director?.progress != nil, startupSaid { say(.started, at: t, into: &effects) }
        return (applied, effects)
    }

    /// The parent's page's Start and Stop (issue #26): the hunt's rules off (ranging goes on,
    /// nothing is said, the detector is silent), or on again from the start-up line and the
    /// trail's first clue. A reload with other hunt rules starts a stopped hunt too; one with
    /// the same rules (a volume or a tag saved on the page) leaves it stopped.
    public enum HuntControl: String, Sendable, Equatable { case stop, start }

    public private(set) var stoppedHunt: HuntDirector.Configuration?

    public mutating func control(_ control: HuntControl, at t: Double) -> (applied: [String], effects: [Effect]) {
        switch control {
        case .stop:
            guard let hunt = configuration.hunt else { return ([], []) }
            stoppedHunt = hunt
            var off = configuration
            off.hunt = nil
            var (applied, effects) = reconfigure(off, at: t)
            if !effects.contains(.detector(0)) { effects.append(.detector(0)) }
            applied.append("stopped")
            return (applied, effects)
        case .start:
            guard let hunt = stoppedHunt ?? configuration.hunt else { return ([], []) }
            stoppedHunt = nil
            var effects: [Effect] = []
            if configuration.hunt != nil {
                // Running: off, then on again from the first clue.
                var off = configuration
                off.hunt = nil
                effects = reconfigure(off, at: t).effects
            }
            var on = configuration
            on.hunt = hunt
            let started = reconfigure(on, at: t)
            return (started.applied, effects + started.effects)
        }
    }

    /// The game's own proximity UUID ("PIRATE-HUNTER" in ASCII): the default treasure
    /// advertises it and the default region hunts it, so a box and a hunter pair out of the box.
    public static let defaultTreasureUUID = UUID(uuid: (0x50, 0x49, 0x52, 0x41, 0x54, 0x45, 0x2D, 0x48,
                                                         0x55, 0x4E, 0x54, 0x45, 0x52, 0x00, 0x00, 0x00))
}

extension RangingEvent {
    /// The same class change, told at `t` (a box step's immediate class held back until the
    /// box's proof).
    func at(_ t: Double) -> RangingEvent {
        if case let .proximity(_, key, from, to) = self { return .proximity(time: t, key: key, from: from, to: to) }
        return self
    }
}
