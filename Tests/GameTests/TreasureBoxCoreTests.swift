import Bluetooth
import Game
import Hunt
import Kiosk
import Ranging
import Testing

@Suite struct TreasureBoxCoreTests {
    static let box = TreasureBoxCore.Configuration(beacon: chest, reward: "GOLD")
    static let hunterAddress = BDAddress(bytes: (0x07, 0x00, 0x00, 0x00, 0x00, 0xC7))

    static func announcement(_ id: UInt16, found treasure: IBeacon = chest, at t: Double, rssi: Int8 = -45,
                             kind: GameSignals.Announcement.Kind = .found, challenge: UInt32 = 1) -> BeaconSighting {
        let a = GameSignals.Announcement(hunterID: id, treasureTag: TreasureSignals.tag(of: treasure), challenge: challenge, kind: kind)
        return sighting(GameSignals.announcement(a, by: FakeAuthenticator.game), rssi: rssi, at: t, from: hunterAddress)
    }

    static func paired(_ box: TreasureBoxCore.Configuration = box) -> TreasureBoxCore {
        TreasureBoxCore(configuration: box, authenticator: FakeAuthenticator.game)
    }

    @Test func aFinderIsGreetedOnceAndAgainOnlyAfterTenMinutes() {
        var core = Self.paired()
        var greetings: [Double] = []
        for k in 0..<10_000 {
            let t = Double(k) * 0.1
            if k % 5 == 0 { _ = core.tick(at: t).map { if case let .output(.greet(at, _, _)) = $0 { greetings.append(at) } } }
            for case let .output(.greet(at, hunter, reward)) in core.sighting(Self.announcement(7, at: t)) {
                #expect(hunter == 7 && reward == "GOLD")
                greetings.append(at)
            }
        }
        // Greeted once held at immediate for 2 s, then again only after ten minutes.
        #expect(greetings.count == 2)
        #expect((TreasureBoxCore.greetAfterImmediate...5).contains(greetings.first ?? 0))
        #expect(greetings.count == 2 && greetings[1] - greetings[0] >= TreasureBoxCore.greetAgainAfter)
        #expect(core.standings.finishers.map(\.hunter) == [7], "each hunter once in the standings")
    }

    @Test func theQRCodeIsLoggedAtMostOnceInTenSeconds() {
        var core = Self.paired()
        var logged = 0
        var greeted = 0
        // 20 hunters, each at the box ten times a second for 9 s: all greeted, one QR code.
        for k in 0..<1800 {
            let t = Double(k) * 0.005
            var out = core.sighting(Self.announcement(UInt16(k % 20), at: t))
            if k % 100 == 0 { out += core.tick(at: t) }
            logged += out.filter { if case .logQRCode = $0 { true } else { false } }.count
            greeted += out.filter { if case .output(.greet) = $0 { true } else { false } }.count
        }
        #expect(greeted == 20)
        #expect(logged == 1)
    }

    @Test func anotherChestOfTheTrailIsCountedButNotGreeted() {
        let other = IBeacon(uuid: chest.uuid, major: 1, minor: 2, measuredPower: -59)
        var box = Self.box
        box.trail = [chest, other].map { TrailStep(region: Region(name: RegionID("\($0.minor)"), uuid: $0.uuid, major: $0.major, minor: $0.minor)) }
        var core = Self.paired(box)
        let effects = core.sighting(Self.announcement(3, found: other, at: 1))
        #expect(effects == [.output(.standings(time: 1, [Standings.Finisher(hunter: 3, treasure: 2, time: 1)]))])
        #expect(core.trailNumber == 1)
    }

    /// A hunter's probe recorded near a copy of this box's beacon and replayed loudly at the
    /// box: a question, not a find. Not greeted, not in the standings (it was both after
    /// 2 s); the hunter's own "found" after the box's proof is greeted as before.
    @Test func aProbeIsNeitherGreetedNorCounted() {
        var core = Self.paired()
        var effects: [TreasureBoxCore.Effect] = []
        var t = 0.0
        while t < 20 {
            effects += core.sighting(Self.announcement(5, at: t, kind: .probe))
            if Int((t * 10).rounded()) % 5 == 0 { effects += core.tick(at: t) }
            t += 0.1
        }
        #expect(!effects.contains { if case .output(.greet) = $0 { true } else { false } })
        #expect(core.standings.finishers.isEmpty)
        #expect(effects.contains { if case .scanResponse(.some) = $0 { true } else { false } }, "the probe is answered with the proof")
        var found: [TreasureBoxCore.Effect] = []
        while t < 25 {
            found += core.sighting(Self.announcement(5, at: t, challenge: 2))
            t += 0.1
        }
        #expect(found.contains { if case .output(.greet(_, 5, _)) = $0 { true } else { false } })
        #expect(core.standings.finishers.map(\.hunter) == [5])
    }

    /// A hunter whose radio reads 8 dB weak (a Pi in a backpack): at the box it ranges about
    /// 2.5 m, never "immediate", and is not greeted; its "found" (sent once the box's reward
    /// opened for it) still puts it in this box's standings, as the other boxes count it.
    @Test func aFindAtTheBoxByAWeakHunterIsInTheStandings() {
        var core = Self.paired()
        var effects: [TreasureBoxCore.Effect] = []
        var t = 0.0
        while t < 30 {
            effects += core.sighting(Self.announcement(6, at: t, rssi: -67))
            if Int((t * 10).rounded()) % 5 == 0 { effects += core.tick(at: t) }
            t += 0.1
        }
        #expect(!effects.contains { if case .output(.greet) = $0 { true } else { false } })
        #expect(core.standings.finishers.map(\.hunter) == [6])
        // From across the yard (about 30 m): a copy's find is not this box's.
        var far = Self.paired()
        t = 0
        while t < 30 {
            _ = far.sighting(Self.announcement(8, at: t, rssi: -89))
            t += 0.1
        }
        #expect(far.standings.finishers.isEmpty)
    }

    /// A second round (the hunters restarted from their pages, "New round" on the box's):
    /// the same hunter's find is counted and greeted again. Before, the box refused it as a
    /// repeat and its kiosk showed the first round's order from the start.
    @Test func aNewRoundCountsAndGreetsTheSameFindsAgain() {
        var core = Self.paired()
        func visit(from start: Double) -> [TreasureBoxCore.Effect] {
            var effects: [TreasureBoxCore.Effect] = []
            var t = start
            while t < start + 10 {
                effects += core.sighting(Self.announcement(7, at: t))
                if Int((t * 10).rounded()) % 5 == 0 { effects += core.tick(at: t) }
                t += 0.1
            }
            return effects
        }
        func greeted(_ effects: [TreasureBoxCore.Effect]) -> Bool { effects.contains { if case .output(.greet) = $0 { true } else { false } } }
        #expect(greeted(visit(from: 0)))
        #expect(core.standings.finishers.count == 1)
        #expect(!greeted(visit(from: 60)), "greeted again only after ten minutes in one round")
        let reset = core.newRound(at: 100)
        #expect(reset.first == .output(.standings(time: 100, [])))
        #expect(core.standings.finishers.isEmpty)
        let again = visit(from: 120)
        #expect(greeted(again))
        #expect(core.standings.finishers.map(\.time).first ?? 0 >= 120)
    }

    /// A reload that adds a chest to the trail and moves the ranging's edges: the box counts
    /// the new chest's finds and shows the new count and edges (the core kept the trail and
    /// ranging of the start, while the log said everything was taken).
    @Test func aReloadTakesTheTrailAndTheRanging() {
        let second = IBeacon(uuid: chest.uuid, major: 1, minor: 2, measuredPower: -59)
        let third = IBeacon(uuid: chest.uuid, major: 1, minor: 3, measuredPower: -59)
        func steps(_ beacons: [IBeacon]) -> [TrailStep] {
            beacons.map { TrailStep(region: Region(name: RegionID("\($0.minor)"), uuid: $0.uuid, major: $0.major, minor: $0.minor)) }
        }
        var box = Self.box
        box.trail = steps([second, chest])
        var core = Self.paired(box)
        #expect(core.trailNumber == 2)
        #expect(core.sighting(Self.announcement(3, found: third, at: 1)).isEmpty, "not a chest of this trail yet")
        var next = box
        next.trail = steps([second, third, chest])
        next.ranging.nearEdge = 6
        core.reconfigure(next)
        #expect(core.trailNumber == 3)
        let state = core.kioskState(advertising: .waiting("test"), qrLines: [], at: 2)
        #expect(state.trail.count == 3 && state.trail.number == 3)
        #expect(state.proximityEdges.near == 6)
        let effects = core.sighting(Self.announcement(4, found: third, at: 3))
        #expect(effects == [.output(.standings(time: 3, [Standings.Finisher(hunter: 4, treasure: 2, time: 3)]))])
    }

    @Test func aHunterComingCloserIsWarmerOnTheKioskForTenSeconds() throws {
        var core = Self.paired()
        let far = chest.uuid == TreasureSignals.hunterUUID ? chest : IBeacon(uuid: chest.uuid, major: 1, minor: 9, measuredPower: -59)
        var t = 0.0
        var states: [KioskState.Hunter] = []
        for rssi: Int8 in [-85, -45] {
            for _ in 0..<200 {
                t += 0.1
                _ = core.sighting(Self.announcement(5, found: far, at: t, rssi: rssi))
                if Int((t * 10).rounded()) % 5 == 0 { core.tick(at: t) }
                states += core.kioskState(advertising: .waiting("test"), qrLines: [], at: t).hunters
            }
        }
        #expect(states.first { $0.proximity != .unknown }?.proximity == .far)
        let closer = try #require(states.firstIndex { $0.proximity == .immediate || $0.proximity == .near })
        #expect(states[closer].trend == .warmer, "told when the class changed")
        #expect(states.last?.proximity == .immediate)
        let changed = states[closer].lastSeen
        let later = core.kioskState(advertising: .waiting("test"), qrLines: [], at: changed + TreasureBoxCore.trendSeconds + 1)
        #expect(later.hunters.first?.trend == nil, "and not forever")
    }
}
