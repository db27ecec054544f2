import Bluetooth
import FoundationEssentials
import Game
import Hunt
import Ranging
import Testing

let treasureUUID = HunterCore.defaultTreasureUUID
let chest = IBeacon(uuid: treasureUUID, major: 1, minor: 1, measuredPower: -59)
let chestAddress = BDAddress(bytes: (0x01, 0x00, 0x00, 0x00, 0x00, 0xC0))

func sighting(_ beacon: IBeacon, rssi: Int8, at t: Double, from address: BDAddress = chestAddress) -> BeaconSighting {
    BeaconSighting(time: t, address: address, addressType: 0, rssi: rssi, beacon: .iBeacon(beacon), report: .legacy)
}

extension Array where Element == HunterCore.Effect {
    var lines: [LineEvent] {
        compactMap {
            switch $0 {
            case let .say(e), let .tell(e, _): e
            default: nil
            }
        }
    }
}

/// A hunter core fed one input at a time, its effects kept: the appliance's loop without I/O.
struct CoreDriver {
    var core: HunterCore
    var effects: [HunterCore.Effect] = []
    var now = 0.0

    /// Paired (the fake game key) unless `authenticator` is nil.
    init(_ configuration: HunterCore.Configuration, authenticator: (any SignalAuthenticator)? = FakeAuthenticator.game) {
        core = HunterCore(configuration: configuration, authenticator: authenticator, challenge: 100)
    }

    @discardableResult
    mutating func feed(_ input: HunterCore.Input, at t: Double) -> [HunterCore.Effect] {
        now = t
        let out = core.handle(input, at: t)
        effects += out
        return out
    }

    /// The chest heard at `rssi` 10 times a second from now to `until`, ticking every 0.25 s
    /// and finishing each line 2 s after it starts.
    mutating func hear(_ beacon: IBeacon = chest, rssi: Int8, until end: Double, from address: BDAddress = chestAddress) {
        var speechEnds: Double?
        var t = now
        while t < end {
            t = ((t + 0.1) * 1000).rounded() / 1000
            if let ends = speechEnds, ends <= t {
                speechEnds = nil
                feed(.speechFinished, at: ends)
            }
            let out = feed(.sighting(sighting(beacon, rssi: rssi, at: t, from: address)), at: t)
                + (Int((t * 1000).rounded()) % 250 == 0 ? feed(.tick, at: t) : [])
            if !out.lines.isEmpty { speechEnds = t + 2 }
        }
    }
}

@Suite struct HunterCoreTests {
    static let region = Region(name: "treasure", uuid: treasureUUID)

    static func oneChest(announce: HunterCore.Announcement? = HunterCore.Announcement(hunterID: 4, seconds: 30, rewardTimeout: 5)) -> HunterCore.Configuration {
        HunterCore.Configuration(regions: [region], hunt: HuntDirector.Configuration(region: "treasure"), announce: announce)
    }

    @Test func theStartUpLineWaitsForTheRadioAndIsSaidOnce() {
        var d = CoreDriver(Self.oneChest())
        #expect(d.feed(.tick, at: 0.25).lines.isEmpty)
        #expect(d.feed(.radioReady(afterOutage: false), at: 1) == [.say(.startup)])
        #expect(d.feed(.radioReady(afterOutage: false), at: 2).isEmpty)
    }

    @Test func anOutageIsSaidOnlyWhenItLastsAndItsEndToo() {
        var d = CoreDriver(Self.oneChest())
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        d.feed(.radioLost(.noAdapter), at: 10)
        var said: [LineEvent] = []
        for k in 1...80 { said += d.feed(.tick, at: 10 + Double(k) * 0.25).lines }
        #expect(said == [.adapterMissing])
        d.feed(.speechFinished, at: 31)
        #expect(d.feed(.radioReady(afterOutage: true), at: 32).lines == [.adapterBack])
    }

    /// The chest far off (-80 dBm, "far") for `heard` s, a phone's reports between its
    /// packets when `phone`; then nobody for `deafFor` s, then both again: the lines said.
    func deafSpell(phone: Bool, deafFor: Double, heard: Double = 300, adapterLost: Bool = false) -> [LineEvent] {
        var d = CoreDriver(Self.oneChest(announce: nil), authenticator: nil)
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        let phoneData: [UInt8] = [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x01, 0x18, 0x00, 0x00, 0x01]
        let phoneReport = AdvertisingReport(format: .legacy, eventType: 0x00, addressType: 1,
                                            address: BDAddress(bytes: (0x41, 0x9A, 0x8B, 0x7C, 0x6D, 0xDE)), rssi: -75, data: phoneData[...])
        var speechEnds: Double?
        var t = 2.0
        var i = 0
        while t < heard + deafFor + 60 {
            t = ((t + 0.1) * 1000).rounded() / 1000
            i += 1
            if let ends = speechEnds, ends <= t {
                speechEnds = nil
                d.feed(.speechFinished, at: ends)
            }
            let deaf = t >= heard && t < heard + deafFor
            var out: [HunterCore.Effect] = []
            // The controller's own word: lost 0.5 s into the silence, back at its end.
            if adapterLost, abs(t - (heard + 0.5)) < 0.05 { out += d.feed(.radioLost(nil), at: t) }
            if adapterLost, abs(t - (heard + deafFor)) < 0.05 { out += d.feed(.radioReady(afterOutage: true), at: t) }
            if !deaf {
                if phone, i % 3 == 0 { out += d.feed(.report(phoneReport), at: t) }
                out += d.feed(.sighting(sighting(chest, rssi: Int8(-80 + (i % 3) * 3 - 3), at: t)), at: t)
            }
            if Int((t * 1000).rounded()) % 250 == 0 { out += d.feed(.tick, at: t) }
            if !out.lines.isEmpty { speechEnds = t + 2 }
        }
        return d.effects.lines
    }

    @Test func aReceiverThatHearsNobodyIsNoChildLeavingWhenItUsuallyHearsOthers() {
        // 25 s of nobody: without the phone that is the region left; with it, the receiver was
        // deaf (Wi-Fi, a crowded band) and nothing is said.
        #expect(deafSpell(phone: false, deafFor: 25).contains(.regionLeft))
        let lines = deafSpell(phone: true, deafFor: 25)
        #expect(!lines.contains(.regionLeft))
        #expect(lines.filter { $0 == .regionEntered }.count == 1)
        // Nothing said in the spell and after it but what was said before it too.
        #expect(!lines.contains(.proximityUnknown))
    }

    @Test func anAdapterOutageIsNoChildLeaving() {
        // The adapter gone 25 s (a USB dongle's hiccup, a UART reset): the spyglass is missing
        // and back, but the child did not leave the treasure's waters.
        let lines = deafSpell(phone: false, deafFor: 25, adapterLost: true)
        #expect(lines.contains(.adapterMissing) && lines.contains(.adapterBack))
        #expect(!lines.contains(.regionLeft))
        #expect(lines.filter { $0 == .regionEntered }.count == 1)
        #expect(!lines.contains(.proximityUnknown))
    }

    /// "Immediate" committed: the core asks for a tick when the find falls due (once), and
    /// says the find at that tick, not at the next of its 0.25 s period.
    @Test func aFindFallingDueAsksForATickThenAndIsSaidAtIt() throws {
        var d = CoreDriver(Self.oneChest(announce: nil), authenticator: nil)
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        var wakes: [Double] = []
        var found: [Double] = []
        var speechEnds: Double?
        var t = 2.013
        while t < 12 {
            if let due = wakes.last, due <= t, found.isEmpty {
                // The hunter's timer: the tick asked for.
                if d.feed(.tick, at: due).lines.contains(.treasureFound) { found.append(due) }
            }
            if let ends = speechEnds, ends <= t {
                speechEnds = nil
                d.feed(.speechFinished, at: ends)
            }
            let out = d.feed(.sighting(sighting(chest, rssi: -45, at: t)), at: t)
            for case let .wake(at) in out { wakes.append(at) }
            if out.lines.contains(.treasureFound) { found.append(t) }
            if !out.lines.isEmpty { speechEnds = t + 2 }
            t += 0.1
        }
        #expect(wakes.count == 1, "\(wakes)")
        let due = try #require(wakes.first)
        #expect(found == [due])
    }

    @Test func theFindReadsTheTreasuresRewardFromItsAddressOnlyAndAnnouncesTheHunter() throws {
        var d = CoreDriver(Self.oneChest())
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        d.hear(rssi: -45, until: 9)
        #expect(d.effects.lines.contains(.treasureFound))
        let active = try #require(d.effects.firstIndex(of: .scanActively(true)))
        // The announcement carries the hunter's new challenge (101) and its MAC.
        let mine = GameSignals.Announcement(hunterID: 4, treasureTag: TreasureSignals.tag(of: chest), challenge: 101)
        let announcement = GameSignals.announcement(mine, by: FakeAuthenticator.game)
        #expect(d.effects[active...].contains(.advertise(Advertisement(data: announcement.advertisingData))))
        let listening = d.core.listensForReward
        #expect(listening)
        // This hunter's find waits for the box's proof before the standings count it.
        #expect(d.core.standings.finishers.isEmpty)
        // Anyone can send a scan response: only the found treasure's address is read.
        let response = try GameSignals.sealedScanResponse(reward: "GOLD-1", boxTag: mine.treasureTag, to: mine, by: FakeAuthenticator.game)
        let stranger = BDAddress(bytes: (0x09, 0x09, 0x09, 0x09, 0x09, 0xC9))
        let fake = AdvertisingReport(format: .legacy, eventType: 0x04, addressType: 0, address: stranger, rssi: -40, data: response[...])
        #expect(d.feed(.report(fake), at: 9.1).isEmpty)
        let real = AdvertisingReport(format: .legacy, eventType: 0x04, addressType: 0, address: chestAddress, rssi: -40, data: response[...])
        let out = d.feed(.report(real), at: 9.2)
        // Found at 5 s: immediate from about 4 s, held 1 s (`found_hold` 0.5 s, lengthened
        // once the range reports hear the tag 5 times a second or more over their 4 s, as
        // they do by then: `HuntDirector.Configuration.fastFoundHold`).
        #expect(out.first == .output(.standings(time: 5, [Standings.Finisher(hunter: 4, treasure: 1, time: 5)])), "counted on the box's proof")
        #expect(out.contains(.scanActively(false)))
        #expect(out.contains(.reward("GOLD-1", address: chestAddress)))
        let reward = d.core.reward, finders = d.core.standings.finishers.map(\.hunter)
        #expect(reward == "GOLD-1")
        // This hunter's find is in its standings.
        #expect(finders == [4])
    }

    @Test func noRewardInTimeIsSaidAsSuchAndScanningGoesBackToPassive() {
        var d = CoreDriver(Self.oneChest())
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        d.hear(rssi: -45, until: 30)
        #expect(d.effects.contains(.log(.warning, "no reward heard from the treasure (it may have none)")))
        #expect(d.effects.filter { $0 == .scanActively(true) }.count == d.effects.filter { $0 == .scanActively(false) }.count)
    }

    @Test func aRivalNamingATrailStepIsCountedOnceAndOurOwnIdNever() {
        let steps = [1, 2].map { TrailStep(region: Region(name: RegionID("chest \($0)"), uuid: treasureUUID, major: 1, minor: UInt16($0))) }
        var hunt = HuntDirector.Configuration(region: "chest 1")
        hunt.trail = steps
        hunt.trailRules.mode = .race
        var d = CoreDriver(HunterCore.Configuration(regions: steps.map(\.region), hunt: hunt, announce: HunterCore.Announcement(hunterID: 4)))
        d.feed(.radioReady(afterOutage: false), at: 0)
        let second = IBeacon(uuid: treasureUUID, major: 1, minor: 2, measuredPower: -59)
        let tag = TreasureSignals.tag(of: second)
        let rival = GameSignals.announcement(GameSignals.Announcement(hunterID: 9, treasureTag: tag, challenge: 1), by: FakeAuthenticator.game)
        let me = GameSignals.announcement(GameSignals.Announcement(hunterID: 4, treasureTag: tag, challenge: 1), by: FakeAuthenticator.game)
        for k in 0..<50 {
            d.feed(.sighting(sighting(rival, rssi: -70, at: 1 + Double(k) * 0.1)), at: 1 + Double(k) * 0.1)
            d.feed(.sighting(sighting(me, rssi: -70, at: 1.05 + Double(k) * 0.1)), at: 1.05 + Double(k) * 0.1)
        }
        let finishers = d.core.standings.finishers
        #expect(finishers.map(\.hunter) == [9] && finishers.map(\.treasure) == [2])
        #expect(d.effects.filter { if case .output(.standings) = $0 { true } else { false } }.count == 1)
        #expect(d.effects.contains(.log(.info, "hunter 9 found treasure 2")))
    }

    @Test func madeUpRivalsCannotGrowTheStandingsPastTheirBound() {
        let steps = [TrailStep(region: Region(name: "chest 1", uuid: treasureUUID, major: 1, minor: 1))]
        var hunt = HuntDirector.Configuration(region: "chest 1")
        hunt.trail = steps
        hunt.trailRules.mode = .race
        var d = CoreDriver(HunterCore.Configuration(regions: steps.map(\.region), hunt: hunt))
        for id in 0..<5000 {
            let t = Double(id) * 0.001
            let a = GameSignals.Announcement(hunterID: UInt16(id), treasureTag: TreasureSignals.tag(of: chest), challenge: 1)
            d.feed(.sighting(sighting(GameSignals.announcement(a, by: FakeAuthenticator.game), rssi: -70, at: t)), at: t)
        }
        let count = d.core.standings.finishers.count
        #expect(count == Standings.defaultCapacity)
    }

    @Test func anotherRegionsClassChangesAreNotTheHuntsNews() {
        let other = Region(name: "other", uuid: treasureUUID, major: 9)
        var d = CoreDriver(HunterCore.Configuration(regions: [Self.region, other], hunt: HuntDirector.Configuration(region: "treasure")))
        // The first region is hunted without a trail; "other" overlaps it only in UUID, so
        // limit the hunted one to major 1 for this test.
        d = CoreDriver(HunterCore.Configuration(
            regions: [Region(name: "treasure", uuid: treasureUUID, major: 1), other], hunt: HuntDirector.Configuration(region: "treasure")))
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        d.hear(IBeacon(uuid: treasureUUID, major: 9, minor: 1, measuredPower: -59), rssi: -45, until: 20)
        #expect(d.effects.lines == [.startup], "nothing of the other region is said")
        #expect(d.effects.contains {
            switch $0 {
            case .output(.ranging(.regionEnter(_, "other"))), .output(.ranging(.regionState(_, "other", .inside))): true
            default: false
            }
        }, "the other region is ranged and printed")
    }

    @Test func aReloadSaysWhatStartsOverAndANewTrailBeginsWithItsStartLine() {
        var d = CoreDriver(Self.oneChest())
        d.feed(.radioReady(afterOutage: false), at: 0)
        var next = Self.oneChest()
        let unchanged = d.core.reconfigure(next, at: 5).applied
        #expect(unchanged.isEmpty)
        next.ranging.nearEdge = 4
        let ranging = d.core.reconfigure(next, at: 6).applied
        #expect(ranging == ["ranging (it starts over)"])
        next.announce = nil
        let announce = d.core.reconfigure(next, at: 7).applied
        #expect(announce == ["announce"])
        next.hunt?.trail = [TrailStep(region: Self.region, clue: .text("Under the bed."))]
        let (applied, effects) = d.core.reconfigure(next, at: 8)
        #expect(applied == ["ranging starts over", "hunt (the trail starts over)"])
        #expect(effects == [.say(.startup)])
    }

    /// The detector's clicks follow what the engine would range: a copy of the chest's
    /// beacon advertising -128 dBm at 1 m (a path loss of -68 dB at -60) or a controller's
    /// RSSI of 0 is not the chest underfoot. The same packets at a plausible power click.
    @Test func theDetectorFollowsNoImplausiblePowerOrReading() {
        for (power, rssi, clicks) in [(Int8(-128), Int8(-60), false), (-59, 0, false), (-59, -45, true)] {
            var d = CoreDriver(Self.oneChest())
            d.feed(.radioReady(afterOutage: false), at: 0)
            d.feed(.speechFinished, at: 2)
            d.hear(IBeacon(uuid: treasureUUID, major: 1, minor: 1, measuredPower: power), rssi: rssi, until: 6)
            let fastest = d.effects.compactMap { if case let .detector(rate) = $0 { rate } else { nil } }.max() ?? 0
            #expect((fastest > 0) == clicks, "power \(power), rssi \(rssi): \(fastest) clicks a second")
        }
    }

    /// The parent's page's Stop and Start (issue 26): a stopped hunt says nothing and its
    /// detector is silent while ranging goes on; Start begins again with the start-up line.
    @Test func aStoppedHuntIsSilentAndStartBeginsItAgain() {
        var config = Self.oneChest()
        config.hunt?.trail = [TrailStep(region: Self.region, clue: .text("Under the bed."))]
        var d = CoreDriver(config)
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.hear(rssi: -80, until: 10)
        let (applied, stopped) = d.core.control(.stop, at: 10)
        #expect(applied.contains("stopped") && stopped.contains(.detector(0)) && stopped.lines.isEmpty)
        #expect(d.core.stoppedHunt != nil)
        d.effects = []
        d.hear(rssi: -50, until: 30)
        #expect(d.effects.lines.isEmpty, "a stopped hunt spoke: \(d.effects.lines)")
        #expect(!d.effects.contains { if case let .detector(rate) = $0 { rate > 0 } else { false } })
        // The page saves the file for a volume or a tag's calibration: the reload of the
        // same hunt leaves it stopped (it said the start-up line and the first clue).
        var calibrated = config
        calibrated.calibrations = [BeaconKey(uuid: treasureUUID, major: 1, minor: 1): -62]
        let reloaded = d.core.reconfigure(calibrated, at: 20)
        #expect(reloaded.effects.lines.isEmpty && d.core.stoppedHunt != nil, "\(reloaded.effects.lines)")
        d.hear(rssi: -50, until: 30)
        #expect(d.effects.lines.isEmpty, "a stopped hunt spoke after a reload: \(d.effects.lines)")
        let (_, started) = d.core.control(.start, at: 30)
        #expect(started.lines == [.startup])
        #expect(d.core.stoppedHunt == nil)
        // Start while running: from the start-up line again.
        #expect(d.core.control(.start, at: 31).effects.lines == [.startup])
        // Stopped, then a new trail saved: it starts.
        _ = d.core.control(.stop, at: 32)
        var other = config
        other.hunt?.trail = [TrailStep(region: Self.region, clue: .text("Behind the door."))]
        #expect(d.core.reconfigure(other, at: 33).effects.lines == [.startup])
        #expect(d.core.stoppedHunt == nil)
        // Nothing to stop without hunt rules.
        var plain = CoreDriver(HunterCore.Configuration(regions: [Self.region]))
        #expect(plain.core.control(.stop, at: 1).applied.isEmpty)
    }

    /// A tag the parent calibrated (`tags[].power`) is ranged from its measured power, with the
    /// calibrated room's ± (`calibrated_environment_sigma`), from the start and once calibrated
    /// on the page (a reload).
    @Test func aCalibratedTagsDistanceIsFromItsPowerWithTheNarrowerInterval() throws {
        func lastRange(_ effects: [HunterCore.Effect]) -> DistanceEstimate? {
            effects.reversed().lazy.compactMap { effect -> DistanceEstimate? in
                if case let .output(.ranging(.range(r))) = effect { return r.distance }
                return nil
            }.first
        }
        var configuration = Self.oneChest(announce: nil)
        let key = BeaconKey(uuid: treasureUUID, major: 1, minor: 1)
        var plain = CoreDriver(configuration)
        plain.hear(rssi: -65, until: 5)
        configuration.calibrations[key] = -65
        var calibrated = CoreDriver(configuration)
        calibrated.hear(rssi: -65, until: 5)
        let wide = try #require(lastRange(plain.effects)), narrow = try #require(lastRange(calibrated.effects))
        #expect(abs(narrow.meters - 1) < 0.3 && wide.meters > 1.5)
        let ranging = RangingConfiguration.default
        #expect(abs(narrow.logSigma / wide.logSigma - ranging.calibratedEnvironmentSigma / ranging.environmentSigma) < 0.05)
        // Calibrated while running: the reload keeps the engine and narrows what follows.
        _ = plain.core.reconfigure(configuration, at: 5)
        plain.effects = []
        plain.hear(rssi: -65, until: 6)
        #expect(abs(try #require(lastRange(plain.effects)).logSigma - narrow.logSigma) < 0.02)
    }
}
