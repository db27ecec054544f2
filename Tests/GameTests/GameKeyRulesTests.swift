import Bluetooth
import FoundationEssentials
import Game
import Hunt
import Kiosk
import Ranging
import Testing

/// Issue #25's rules in the pure cores: without the game key nothing from the air is believed
/// beyond a plain beacon's presence; with it only what verifies (fake authenticator).
@Suite struct GameKeyRulesTests {
    static let tag = TreasureSignals.tag(of: chest)
    static let hunterAddress = BDAddress(bytes: (0x07, 0x00, 0x00, 0x00, 0x00, 0xC7))

    static func signed(_ id: UInt16, tag: UInt16 = tag, challenge: UInt32 = 1, by auth: any SignalAuthenticator = FakeAuthenticator.game) -> IBeacon {
        GameSignals.announcement(GameSignals.Announcement(hunterID: id, treasureTag: tag, challenge: challenge), by: auth)
    }

    static func raceTrail() -> HunterCore.Configuration {
        let steps = [1, 2].map { TrailStep(region: Region(name: RegionID("chest \($0)"), uuid: treasureUUID, major: 1, minor: UInt16($0))) }
        var hunt = HuntDirector.Configuration(region: "chest 1")
        hunt.trail = steps
        hunt.trailRules.mode = .race
        return HunterCore.Configuration(regions: steps.map(\.region), hunt: hunt, announce: HunterCore.Announcement(hunterID: 4))
    }

    /// 200 made-up hunters announcing step 2, each a few times, over 30 s.
    static func fakeRivals(_ d: inout CoreDriver, by auth: any SignalAuthenticator, plain: Bool = false) {
        let second = IBeacon(uuid: treasureUUID, major: 1, minor: 2, measuredPower: -59)
        for k in 0..<3000 {
            let t = 1 + Double(k) * 0.01
            let id = UInt16(1000 + k % 200)
            let beacon = plain ? TreasureSignals.announcement(hunterID: id, treasure: second) : signed(id, tag: TreasureSignals.tag(of: second), by: auth)
            d.feed(.sighting(sighting(beacon, rssi: -50, at: t, from: hunterAddress)), at: t)
            if k % 25 == 0 { d.feed(.tick, at: t) }
        }
    }

    @Test func fakeRivalsWithAnotherKeyOrNoneAreNeverBelieved() {
        for plain in [false, true] {
            var d = CoreDriver(Self.raceTrail())
            d.feed(.radioReady(afterOutage: false), at: 0)
            Self.fakeRivals(&d, by: FakeAuthenticator.otherGame, plain: plain)
            #expect(!d.effects.lines.contains(.rivalFound))
            #expect(d.core.standings.finishers.isEmpty)
            // Summarised in the log, at most a line a minute.
            let summaries = d.effects.filter { if case let .log(_, line) = $0 { line.hasPrefix("ignored") } else { false } }
            #expect(summaries.count <= 1)
        }
        // The same hunters with the game's key are rivals (the rule above is what refused them).
        var d = CoreDriver(Self.raceTrail())
        d.feed(.radioReady(afterOutage: false), at: 0)
        Self.fakeRivals(&d, by: FakeAuthenticator.game)
        #expect(d.effects.lines.contains(.rivalFound))
        #expect(!d.core.standings.finishers.isEmpty)
    }

    /// A probe asks a box to prove it is there: a copy of the box's beacon sets every hunter
    /// near it asking, so a verified probe is no rival's find, for a hunter or a box.
    @Test func aRivalsProbeIsNoFind() {
        let second = IBeacon(uuid: treasureUUID, major: 1, minor: 2, measuredPower: -59)
        func announced(_ kind: GameSignals.Announcement.Kind) -> IBeacon {
            GameSignals.announcement(GameSignals.Announcement(hunterID: 7, treasureTag: TreasureSignals.tag(of: second), challenge: 3, kind: kind),
                                     by: FakeAuthenticator.game)
        }
        for (kind, counted) in [(GameSignals.Announcement.Kind.probe, false), (.found, true)] {
            var d = CoreDriver(Self.raceTrail())
            d.feed(.radioReady(afterOutage: false), at: 0)
            for k in 0..<50 {
                let t = 1 + Double(k) * 0.1
                d.feed(.sighting(sighting(announced(kind), rssi: -50, at: t, from: Self.hunterAddress)), at: t)
                if k % 5 == 0 { d.feed(.tick, at: t) }
            }
            #expect(d.effects.lines.contains(.rivalFound) == counted, "\(kind)")
            #expect(d.core.standings.finishers.isEmpty == !counted, "\(kind)")

            // A box of the same trail keeps the standings of the other chests: the same rule.
            var config = Self.box
            config.trail = Self.raceTrail().hunt?.trail ?? []
            var box = TreasureBoxCore(configuration: config, authenticator: FakeAuthenticator.game)
            let out = box.sighting(sighting(announced(kind), rssi: -60, at: 1, from: Self.hunterAddress))
            #expect(out.contains { if case .output(.standings) = $0 { true } else { false } } == counted, "box, \(kind)")
        }
    }

    /// A trail of 20 named chests and one wide step (its UUID alone): made-up tags of the
    /// wide step, heard from the air, once evicted the named ones from the bounded table of
    /// tags, and a rival's find of chest 1 was then ignored.
    @Test func madeUpTagsOfAWideStepDoNotForgetTheNamedChests() {
        let wide = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
        var steps = (1...20).map { TrailStep(region: Region(name: RegionID("chest \($0)"), uuid: treasureUUID, major: 1, minor: UInt16($0))) }
        steps.append(TrailStep(region: Region(name: "anywhere", uuid: wide)))
        var hunt = HuntDirector.Configuration(region: "chest 1")
        hunt.trail = steps
        hunt.trailRules.mode = .race
        var d = CoreDriver(HunterCore.Configuration(regions: steps.map(\.region), hunt: hunt, announce: HunterCore.Announcement(hunterID: 4)))
        d.feed(.radioReady(afterOutage: false), at: 0)
        for k in 0..<300 {
            let t = 1 + Double(k) * 0.01
            let fake = IBeacon(uuid: wide, major: 9, minor: UInt16(k), measuredPower: -59)
            d.feed(.sighting(sighting(fake, rssi: -80, at: t, from: BDAddress(bytes: (UInt8(k & 0xFF), UInt8(k >> 8), 0, 0, 0, 0xC3)))), at: t)
        }
        // Each chest found by a rival of its own.
        for c in 1...20 {
            let chest = IBeacon(uuid: treasureUUID, major: 1, minor: UInt16(c), measuredPower: -59)
            let t = 5 + Double(c) * 0.01
            d.feed(.sighting(sighting(Self.signed(UInt16(100 + c), tag: TreasureSignals.tag(of: chest)), rssi: -50, at: t, from: Self.hunterAddress)), at: t)
        }
        let counted = d.effects.compactMap { if case let .log(_, line) = $0, line.hasPrefix("hunter 1") { line } else { nil } }
        #expect(counted.count == 20, "\(counted)")
    }

    @Test func anUnpairedHunterBelievesNoRivalAndSaysSoOnce() {
        var d = CoreDriver(Self.raceTrail(), authenticator: nil)
        #expect(d.feed(.radioReady(afterOutage: false), at: 0).contains(.log(.warning, HunterCore.unpairedLine)))
        Self.fakeRivals(&d, by: FakeAuthenticator.game)
        #expect(!d.effects.lines.contains(.rivalFound))
        #expect(d.core.standings.finishers.isEmpty)
        #expect(d.effects.lines.filter { $0 == .noticeUnpaired }.count == 1)
    }

    /// The chest found at 7 s; `responses` fed while the hunter listens for its reward.
    static func findAndHear(_ responses: [[UInt8]], authenticator: (any SignalAuthenticator)? = FakeAuthenticator.game) -> CoreDriver {
        var d = CoreDriver(HunterCoreTests.oneChest(), authenticator: authenticator)
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        d.hear(rssi: -45, until: 8)
        for (i, r) in responses.enumerated() {
            let report = AdvertisingReport(format: .legacy, eventType: 0x04, addressType: 0, address: chestAddress, rssi: -40, data: r[...])
            d.feed(.report(report), at: 8 + Double(i) * 0.1)
        }
        d.hear(rssi: -45, until: 20)
        return d
    }

    static func rewards(_ d: CoreDriver) -> [String] {
        d.effects.compactMap { if case let .reward(text, _) = $0 { text } else { nil } }
    }

    @Test func aFakeRewardFromTheChestsAddressIsNeverShown() throws {
        let plain = try TreasureSignals.scanResponse(reward: "FAKE-CODE-666")
        let mine = GameSignals.Announcement(hunterID: 4, treasureTag: Self.tag, challenge: 101)
        let otherKey = try GameSignals.sealedScanResponse(reward: "FAKE-CODE-666", boxTag: Self.tag, to: mine, by: FakeAuthenticator.otherGame)
        // Recorded earlier: sealed for the hunter's previous challenge.
        var old = mine
        old.challenge = 100
        let replayed = try GameSignals.sealedScanResponse(reward: "OLD-CODE", boxTag: Self.tag, to: old, by: FakeAuthenticator.game)
        var d = Self.findAndHear(Array(repeating: [plain, otherKey, replayed], count: 5).flatMap { $0 })
        #expect(Self.rewards(d).isEmpty)
        #expect(d.core.reward == nil)
        #expect(!d.effects.lines.contains(.reward))
        // No box proved it: the find counts by presence only once the listening is over.
        #expect(d.core.standings.finishers.map(\.hunter) == [4])
        // And the real box's answer among the fakes wins (5 fakes for each real one).
        let real = try GameSignals.sealedScanResponse(reward: "GOLD-1", boxTag: Self.tag, to: mine, by: FakeAuthenticator.game)
        d = Self.findAndHear([plain, otherKey, replayed, plain, otherKey, real])
        #expect(Self.rewards(d) == ["GOLD-1"])
    }

    @Test func anUnpairedHunterReadsNoRewardAtAll() throws {
        let plain = try TreasureSignals.scanResponse(reward: "FAKE-CODE-666")
        let d = Self.findAndHear([plain, plain], authenticator: nil)
        #expect(Self.rewards(d).isEmpty)
        #expect(!d.effects.contains(.scanActively(true)), "nothing is listened for")
        #expect(d.effects.lines.contains(.noticeUnpaired))
        #expect(d.effects.lines.contains(.treasureFound), "the chest's presence still counts")
    }

    // MARK: The box

    static let box = TreasureBoxCore.Configuration(beacon: chest, reward: "GOLD")

    /// 100 made-up finders at the box, each at -45 dBm ten times a second, for `seconds`.
    static func fakeFinders(_ core: inout TreasureBoxCore, seconds: Double, by auth: (any SignalAuthenticator)?, ids: Range<UInt16> = 1000..<1100) -> [TreasureBoxCore.Effect] {
        var effects: [TreasureBoxCore.Effect] = []
        let n = Int(seconds * 1000)
        for k in 0..<n {
            let t = Double(k) * 0.001
            let id = ids.lowerBound + UInt16(k % ids.count)
            let beacon = auth.map { signed(id, by: $0) } ?? TreasureSignals.announcement(hunterID: id, treasure: chest)
            effects += core.sighting(sighting(beacon, rssi: -45, at: t, from: hunterAddress))
            if k % 500 == 0 { effects += core.tick(at: t) }
        }
        return effects
    }

    static func logLines(_ effects: [TreasureBoxCore.Effect]) -> [String] {
        effects.compactMap { if case let .log(line) = $0 { line } else { nil } }
    }

    @Test func fakeFindersAreNeverGreetedAndSummarisedOnceAMinute() {
        for auth in [FakeAuthenticator.otherGame as (any SignalAuthenticator)?, nil] {
            var core = TreasureBoxCore(configuration: Self.box, authenticator: FakeAuthenticator.game)
            let effects = Self.fakeFinders(&core, seconds: 120, by: auth)
            #expect(!effects.contains { if case .output(.greet) = $0 { true } else { false } })
            #expect(core.standings.finishers.isEmpty)
            #expect(!effects.contains { if case .scanResponse = $0 { true } else { false } }, "no reward sealed for them")
            #expect(core.kioskState(advertising: .waiting("t"), qrLines: [], at: 120).hunters.isEmpty)
            let lines = Self.logLines(effects)
            #expect((1...3).contains(lines.count), "\(lines.count) lines in 2 minutes")
            #expect(lines.first?.hasPrefix("ignored ") == true)
        }
    }

    @Test func anUnpairedBoxGreetsNoOneEvenWithTheRightKeysAnnouncements() {
        var core = TreasureBoxCore(configuration: Self.box)
        let effects = Self.fakeFinders(&core, seconds: 70, by: FakeAuthenticator.game)
        #expect(!effects.contains { if case .output(.greet) = $0 { true } else { false } })
        #expect(core.standings.finishers.isEmpty)
        #expect(Self.logLines(effects).count <= 2)
        #expect(Self.logLines(effects).first?.contains("no game key") == true)
    }

    @Test func theRosterLimitsWhoIsGreeted() {
        var box = Self.box
        box.roster = [1050]
        var core = TreasureBoxCore(configuration: box, authenticator: FakeAuthenticator.game)
        let effects = Self.fakeFinders(&core, seconds: 20, by: FakeAuthenticator.game)
        let greeted = effects.compactMap { if case let .output(.greet(_, hunter, _)) = $0 { hunter } else { nil } }
        #expect(greeted == [1050])
        #expect(core.standings.finishers.map(\.hunter) == [1050])
    }

    @Test func aHunterIsGreetedOnlyOnceHeldAtImmediateAndItsRewardSealedForItsChallenge() throws {
        var core = TreasureBoxCore(configuration: Self.box, authenticator: FakeAuthenticator.game)
        var effects: [TreasureBoxCore.Effect] = []
        // Far away (-85 dBm at -59: 20 m and more) for 20 s: neither greeted nor sealed for
        // (a hunter there is at a copy of the box's beacon, asking for the box's proof).
        for k in 0..<200 {
            let t = Double(k) * 0.1
            effects += core.sighting(sighting(Self.signed(7, challenge: 42), rssi: -85, at: t, from: Self.hunterAddress))
            if k % 5 == 0 { effects += core.tick(at: t) }
        }
        #expect(!effects.contains { if case .output(.greet) = $0 { true } else { false } })
        #expect(!effects.contains { if case .scanResponse = $0 { true } else { false } }, "no seal for a hunter 20 m off")
        // At the box: sealed for at once, greeted after ~2 s at immediate.
        var greetedAt: Double?
        var sealedAt: Double?
        for k in 200..<400 {
            let t = Double(k) * 0.1
            var out = core.sighting(sighting(Self.signed(7, challenge: 42), rssi: -40, at: t, from: Self.hunterAddress))
            if k % 5 == 0 { out += core.tick(at: t) }
            if greetedAt == nil, out.contains(where: { if case .output(.greet) = $0 { true } else { false } }) { greetedAt = t }
            if sealedAt == nil, out.contains(where: { if case .scanResponse = $0 { true } else { false } }) { sealedAt = t }
            effects += out
        }
        let responses = effects.compactMap { if case let .scanResponse(r) = $0 { r } else { nil } }
        #expect(responses.count == 1)
        let a = GameSignals.Announcement(hunterID: 7, treasureTag: Self.tag, challenge: 42)
        #expect(try GameSignals.openReward(inScanResponse: (responses.first ?? [])[...], boxTag: Self.tag, for: a, by: FakeAuthenticator.game) == "GOLD")
        let at = try #require(greetedAt)
        #expect(at >= 20 + TreasureBoxCore.greetAfterImmediate)
        // The seal waits only for the box's ranging to place the hunter.
        let sealed = try #require(sealedAt)
        #expect(sealed <= 23)
    }

    /// The measured power byte of an announcement is not under its MAC: a recorded
    /// announcement replayed from across the room saying -100 dBm at 1 m was ranged as a
    /// hunter standing at the box, and greeted with the reward's QR code. The box ranges
    /// every announcement at the power hunters advertise.
    @Test func anAnnouncementsAdvertisedPowerDoesNotPlaceItAtTheBox() {
        var replayed = Self.signed(7, challenge: 42)
        replayed.measuredPower = -100
        for (rssi, greeted) in [(Int8(-75), false), (-40, true)] {
            var core = TreasureBoxCore(configuration: Self.box, authenticator: FakeAuthenticator.game)
            var effects: [TreasureBoxCore.Effect] = []
            for k in 0..<100 {
                let t = Double(k) * 0.1
                effects += core.sighting(sighting(replayed, rssi: rssi, at: t, from: Self.hunterAddress))
                if k % 5 == 0 { effects += core.tick(at: t) }
            }
            #expect(effects.contains { if case .output(.greet) = $0 { true } else { false } } == greeted, "at \(rssi) dBm")
        }
    }
}

/// The box's scan response follows the verified hunters' challenges: a new challenge of the
/// same hunter at once, another hunter at most once a second, nothing for an unverified one.
@Suite struct ResealTests {
    @Test func theRewardIsResealedForEachNewChallengeAndRateLimitedBetweenHunters() throws {
        let tag = GameKeyRulesTests.tag
        var core = TreasureBoxCore(configuration: GameKeyRulesTests.box, authenticator: FakeAuthenticator.game)
        func heard(_ id: UInt16, _ challenge: UInt32, at t: Double, by auth: any SignalAuthenticator = FakeAuthenticator.game) -> [[UInt8]] {
            core.sighting(sighting(GameKeyRulesTests.signed(id, challenge: challenge, by: auth), rssi: -60, at: t, from: GameKeyRulesTests.hunterAddress))
                .compactMap { if case let .scanResponse(r) = $0 { r } else { nil } }
        }
        let first = heard(1, 10, at: 0)
        #expect(first.count == 1)
        #expect(heard(1, 10, at: 0.1).isEmpty, "the same challenge: the same response")
        #expect(heard(2, 5, at: 0.2).isEmpty, "another hunter waits a second")
        #expect(heard(2, 5, at: 0.3, by: FakeAuthenticator.otherGame).isEmpty)
        let second = heard(2, 5, at: 1.2)
        #expect(second.count == 1)
        let third = heard(2, 6, at: 1.3)
        #expect(third.count == 1, "the same hunter's new challenge at once")
        let a = GameSignals.Announcement(hunterID: 2, treasureTag: tag, challenge: 6)
        #expect(try GameSignals.openReward(inScanResponse: (third.first ?? [])[...], boxTag: tag, for: a, by: FakeAuthenticator.game) == "GOLD")
        var old = a
        old.challenge = 5
        #expect(throws: SignalError.forged) { try GameSignals.openReward(inScanResponse: (third.first ?? [])[...], boxTag: tag, for: old, by: FakeAuthenticator.game) }
        // Another chest's finder gets nothing sealed here.
        let elsewhere = GameSignals.announcement(GameSignals.Announcement(hunterID: 3, treasureTag: tag &+ 1, challenge: 1), by: FakeAuthenticator.game)
        #expect(!core.sighting(sighting(elsewhere, rssi: -60, at: 5, from: GameKeyRulesTests.hunterAddress)).contains { if case .scanResponse = $0 { true } else { false } })
    }

    /// Two recorded announcements of one hunter replayed in turn are each a "new challenge of
    /// the same hunter", sealed at once; the wait another hunter owes counted from the last
    /// of them, so the replayer held every other hunter's proof off for good.
    @Test func aHuntersAnnouncementsReplayedInTurnDoNotHoldAnotherHunterOff() {
        var core = TreasureBoxCore(configuration: GameKeyRulesTests.box, authenticator: FakeAuthenticator.game)
        var sealedForOther = 0
        for k in 0..<100 {
            let t = Double(k) * 0.1
            // Hunter 2's two recorded announcements, alternately, ten times a second.
            _ = core.sighting(sighting(GameKeyRulesTests.signed(2, challenge: 5 + UInt32(k % 2)), rssi: -60, at: t, from: GameKeyRulesTests.hunterAddress))
            // Hunter 1, at the box, announcing from 2 s on.
            if t >= 2 {
                sealedForOther += core.sighting(sighting(GameKeyRulesTests.signed(1, challenge: 77), rssi: -50, at: t + 0.05, from: GameKeyRulesTests.hunterAddress))
                    .filter { if case .scanResponse = $0 { true } else { false } }.count
            }
        }
        #expect(sealedForOther >= 1)
    }

    /// The same hunter's older challenge (a recording) is not sealed at once: two recorded
    /// announcements of one hunter, replayed in turn ten times a second, reconfigured the
    /// box's advertising on every packet (its beacon and scan response churned).
    @Test func recordingsReplayedInTurnChangeTheResponseAtMostOnceASecond() {
        var core = TreasureBoxCore(configuration: GameKeyRulesTests.box, authenticator: FakeAuthenticator.game)
        var seals = 0
        for k in 0..<100 {
            let t = Double(k) * 0.1
            seals += core.sighting(sighting(GameKeyRulesTests.signed(2, challenge: 5 + UInt32(k % 2)), rssi: -60, at: t, from: GameKeyRulesTests.hunterAddress))
                .filter { if case .scanResponse = $0 { true } else { false } }.count
        }
        #expect((2...12).contains(seals), "\(seals) seals in 10 s")
        // A hunter's challenge that wrapped past 2^32 is newer still: sealed at once.
        var wrapped = TreasureBoxCore(configuration: GameKeyRulesTests.box, authenticator: FakeAuthenticator.game)
        var sealed: [Double] = []
        for (k, challenge) in [UInt32.max - 1, UInt32.max, 0, 1].enumerated() {
            for j in 0..<3 {
                let t = Double(k) * 0.3 + Double(j) * 0.1
                if wrapped.sighting(sighting(GameKeyRulesTests.signed(2, challenge: challenge), rssi: -60, at: t, from: GameKeyRulesTests.hunterAddress))
                    .contains(where: { if case .scanResponse = $0 { true } else { false } }) { sealed.append(t) }
            }
        }
        #expect(sealed.count == 4, "\(sealed)")
    }
}

/// A box step (`TrailStep.box`) is found only after the box's proof: a copy of its iBeacon
/// alone is never a find, so never a finale.
@Suite struct BoxStepTests {
    static func trail(announceSeconds: Double = 30) -> HunterCore.Configuration {
        let step = TrailStep(region: Region(name: "chest", uuid: treasureUUID, major: 1, minor: 1), box: true)
        var hunt = HuntDirector.Configuration(region: "chest")
        hunt.trail = [step]
        return HunterCore.Configuration(regions: [step.region], hunt: hunt,
                                        announce: HunterCore.Announcement(hunterID: 4, seconds: announceSeconds, rewardTimeout: 5))
    }

    /// The chest at -45 dBm until `end`; `answer` gives the scan response heard while listening.
    static func hunt(until end: Double, authenticator: (any SignalAuthenticator)? = FakeAuthenticator.game, announceSeconds: Double = 30,
                     answer: (HunterCore) -> [UInt8]?) -> CoreDriver {
        var d = CoreDriver(trail(announceSeconds: announceSeconds), authenticator: authenticator)
        // The child reaches the chest at 25 s, once the start-up line and the clue are over (a find during a clue loses its line: the other half of issue #25, on main).
        walk(&d, until: end, heard: { t in t < 25 ? [] : [sighting(chest, rssi: -45, at: t)] }, answer: answer)
        return d
    }

    /// From the radio ready at 0 to `end`, every 0.1 s: what is `heard` then, a tick every
    /// 0.25 s, each line over 2 s after it starts, and `answer`'s scan response from the
    /// chest's address while the hunter listens for a reward.
    static func walk(_ d: inout CoreDriver, from start: Double = 0, until end: Double, heard: (Double) -> [BeaconSighting],
                     answer: (HunterCore) -> [UInt8]? = { _ in nil }) {
        if start == 0 { d.feed(.radioReady(afterOutage: false), at: 0) }
        var t = start
        var speechEnds: Double?
        while t < end {
            t = ((t + 0.1) * 1000).rounded() / 1000
            var out: [HunterCore.Effect] = []
            if let ends = speechEnds, ends <= t {
                speechEnds = nil
                out += d.feed(.speechFinished, at: ends)
            }
            for s in heard(t) { out += d.feed(.sighting(s), at: t) }
            if Int((t * 1000).rounded()) % 250 == 0 { out += d.feed(.tick, at: t) }
            if d.core.listensForReward, let r = answer(d.core) {
                let report = AdvertisingReport(format: .legacy, eventType: 0x04, addressType: 0, address: chestAddress, rssi: -40, data: r[...])
                out += d.feed(.report(report), at: t)
            }
            if out.contains(where: { if case .reward = $0 { true } else { false } }) { out += d.feed(.rewardReady, at: t) }
            if !out.lines.isEmpty { speechEnds = t + 2 }
        }
    }

    /// An any-order trail: the child stands at box A (asked to prove it, no answer yet), then
    /// finds plain chest B while A's probe still listened. B is a find, announced as one (it
    /// went out as A's probe, which no one counts), and its reward or silence is its own.
    @Test func aChestFoundWhileABoxIsAskedIsAnnouncedAsAFind() {
        let a = TrailStep(region: Region(name: "box", uuid: treasureUUID, major: 1, minor: 1), box: true)
        let b = TrailStep(region: Region(name: "chest", uuid: treasureUUID, major: 1, minor: 2))
        var hunt = HuntDirector.Configuration(region: "box")
        hunt.trail = [a, b]
        hunt.trailRules.order = .anyOrder
        var d = CoreDriver(HunterCore.Configuration(regions: [a.region, b.region], hunt: hunt,
                                                    announce: HunterCore.Announcement(hunterID: 4, seconds: 30, rewardTimeout: 60)),
                           authenticator: FakeAuthenticator.game)
        let chestB = IBeacon(uuid: treasureUUID, major: 1, minor: 2, measuredPower: -59)
        let addressB = BDAddress(bytes: (0x02, 0x00, 0x00, 0x00, 0x00, 0xC0))
        // Box A from 25 s to 30 s, then chest B.
        Self.walk(&d, until: 60) { t in
            t < 25 ? [] : t < 30 ? [sighting(chest, rssi: -45, at: t)] : [sighting(chestB, rssi: -45, at: t, from: addressB)]
        }
        #expect(d.effects.contains(.log(.info, "treasure 1 is a box: asking it to prove it is there")))
        #expect(d.effects.lines.contains(.treasureFound), "chest B found")
        #expect(Self.announcedKinds(d.effects) == [.probe, .found])
    }

    /// The parent changes `announce` (the page, a reload) while the hunter asks a box: the
    /// old announcement and active scan are ended, and the box is asked again under the new
    /// settings. The old handoff was dropped as it was: advertising and active scanning went
    /// on for good, and the step, still "being asked", was never asked again nor found.
    @Test func aReloadOfAnnounceWhileABoxIsAskedAsksItAgain() {
        var first = Self.trail()
        first.announce = HunterCore.Announcement(hunterID: 4, seconds: 30, rewardTimeout: 60)
        var d = CoreDriver(first, authenticator: FakeAuthenticator.game)
        let atChest: (Double) -> [BeaconSighting] = { t in t < 25 ? [] : [sighting(chest, rssi: -45, at: t)] }
        // Asked from 26.5 s, no answer yet; the clue said meanwhile is over by 32 s.
        Self.walk(&d, until: 32, heard: atChest)
        #expect(d.core.listensForReward, "asking the box")
        var next = first
        next.announce = HunterCore.Announcement(hunterID: 4, seconds: 45, rewardTimeout: 60)
        let reloaded = d.core.reconfigure(next, at: 32)
        #expect(reloaded.effects.contains(.advertise(nil)))
        #expect(reloaded.effects.contains(.scanActively(false)))
        Self.walk(&d, from: 32, until: 60, heard: atChest) { core in
            let a = GameSignals.Announcement(hunterID: 4, treasureTag: TreasureSignals.tag(of: chest), challenge: core.challenge)
            return try? GameSignals.sealedScanResponse(reward: "GOLD-1", boxTag: a.treasureTag, to: a, by: FakeAuthenticator.game)
        }
        #expect(d.effects.contains(.log(.info, "treasure 1: the box proved it is there")))
        #expect(d.effects.lines.contains(.finale))
    }

    @Test func aCopyOfTheBoxsBeaconIsNeverAFind() throws {
        let fake = try TreasureSignals.scanResponse(reward: "FAKE-CODE-666")
        for auth in [FakeAuthenticator.game as (any SignalAuthenticator)?, nil] {
            let d = Self.hunt(until: 60, authenticator: auth) { _ in fake }
            #expect(!d.effects.lines.contains(.treasureFound))
            #expect(!d.effects.lines.contains(.finale))
            #expect(!d.effects.contains { if case .reward = $0 { true } else { false } })
            #expect(d.core.standings.finishers.isEmpty)
            #expect(!d.core.huntOver)
        }
    }

    /// The kinds of the announcements `effects` advertised, in order.
    static func announcedKinds(_ effects: [HunterCore.Effect]) -> [GameSignals.Announcement.Kind] {
        effects.compactMap { effect -> GameSignals.Announcement.Kind? in
            guard case let .advertise(ad?) = effect, let beacon = Beacon.all(in: AdvertisingData(parsing: ad.data)).compactMap({ b -> IBeacon? in
                if case let .iBeacon(i) = b { i } else { nil }
            }).first else { return nil }
            return try? GameSignals.verifiedAnnouncement(beacon, by: FakeAuthenticator.game).kind
        }
    }

    /// The hunter at the box asks with a probe (no one counts it), and once the box has
    /// proved it is there says "I found it" with a new challenge, for a whole announcement:
    /// also when the proof comes after the probe's announcement is over (a short
    /// `announce.seconds`; the box busy sealing for other hunters).
    @Test(arguments: [30.0, 1.0])
    func theHunterProbesTheBoxThenAnnouncesItsFind(announceSeconds: Double) throws {
        final class Asked: @unchecked Sendable { var times = 0 }
        let asked = Asked()
        let d = Self.hunt(until: 60, announceSeconds: announceSeconds) { core in
            // The box answers 2 s after the hunter began listening.
            asked.times += 1
            guard asked.times > 20 else { return nil }
            let a = GameSignals.Announcement(hunterID: 4, treasureTag: TreasureSignals.tag(of: chest), challenge: core.challenge)
            return try? GameSignals.sealedScanResponse(reward: "GOLD-1", boxTag: a.treasureTag, to: a, by: FakeAuthenticator.game)
        }
        #expect(Self.announcedKinds(d.effects) == [.probe, .found])
        #expect(d.core.huntOver)
    }

    @Test func theRealBoxsProofMakesItAFindWithItsReward() throws {
        let d = Self.hunt(until: 60) { core in
            let a = GameSignals.Announcement(hunterID: 4, treasureTag: TreasureSignals.tag(of: chest), challenge: core.challenge)
            return try? GameSignals.sealedScanResponse(reward: "GOLD-1", boxTag: a.treasureTag, to: a, by: FakeAuthenticator.game)
        }
        #expect(d.effects.contains(.log(.info, "treasure 1: the box proved it is there")))
        #expect(d.effects.lines.contains(.finale))
        let rewards = d.effects.compactMap { if case let .reward(text, _) = $0 { text } else { nil } }
        #expect(rewards == ["GOLD-1"])
        #expect(d.effects.lines.contains(.reward))
        #expect(d.core.standings.finishers.map(\.hunter) == [4])
        #expect(d.core.huntOver)
    }
}

extension BoxStepTests {
    /// The box's first answer is lost (it was busy, or rebooting): the child still standing at
    /// it is asked again after `reprobeInterval`, and the second answer makes it a find.
    @Test func aChildStillAtTheBoxIsAskedAgain() {
        let d = Self.hunt(until: 75) { core in
            guard core.challenge >= 102 else { return nil }
            let a = GameSignals.Announcement(hunterID: 4, treasureTag: TreasureSignals.tag(of: chest), challenge: core.challenge)
            return try? GameSignals.sealedScanResponse(reward: "GOLD-1", boxTag: a.treasureTag, to: a, by: FakeAuthenticator.game)
        }
        let logs = d.effects.compactMap { if case let .log(_, line) = $0 { line } else { nil } }
        #expect(logs.filter { $0.hasPrefix("treasure 1 is a box") }.count == 1, "logged once a stay")
        #expect(logs.contains("treasure 1: no proof from its box (a copy of its beacon, or the box is not paired): not found yet"))
        #expect(logs.contains("treasure 1: the box proved it is there"))
        #expect(d.effects.lines.contains(.finale))
        #expect(d.core.huntOver)
    }
}
