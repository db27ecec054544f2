import Kiosk
import Ranging
import Testing

@Suite struct KioskLogTests {
    @Test func theFirstStateSaysEverything() {
        let lines = KioskLog.changes(from: nil, to: boxState(hunters: [hunter(7, .near, 1.23)]))
        #expect(
            lines == [
                "advertising on hci1 (legacy commands)",
                "beacon \(uuid) major 1 minor 7, -59 dBm at 1 m, every 100 ms",
                "reward: Gold coins under the big oak!",
                "hunter 7 near (~1.2 m)",
            ])
    }

    @Test func nothingChangedNothingLogged() {
        let state = boxState(hunters: crowd, greeting: .init(hunterID: 7, at: 99, qrLines: ["█ █"]))
        #expect(KioskLog.changes(from: state, to: state) == [])
        // Distance and last-seen moving within the same proximity class are not news.
        var moved = state
        moved.hunters[0].distance = 1.9
        moved.hunters[1].lastSeen = 120
        #expect(KioskLog.changes(from: state, to: moved) == [])
    }

    @Test func huntersComingChangingAndGoing() {
        let start = boxState()
        let one = boxState(hunters: [hunter(7, .far, 12.4)])
        #expect(KioskLog.changes(from: start, to: one) == ["hunter 7 far (~12 m)"])
        let closer = boxState(hunters: [hunter(7, .near, 1.0), hunter(70, .unknown)])
        #expect(KioskLog.changes(from: one, to: closer) == ["hunter 7 near (~1.0 m)", "hunter 70 unknown"])
        let left = boxState(hunters: [hunter(70, .unknown)])
        #expect(KioskLog.changes(from: closer, to: left) == ["hunter 7 gone"])
        #expect(KioskLog.changes(from: left, to: start) == ["hunter 70 gone"])
    }

    @Test func greetingIsLoggedOnce() {
        let before = boxState(hunters: [hunter(7, .immediate, 0.2)])
        var greeted = before
        greeted.hunters[0].found = true
        greeted.greeting = .init(hunterID: 7, at: 50, qrLines: ["▀▄"])
        #expect(KioskLog.changes(from: before, to: greeted) == ["greeted hunter 7"])
        #expect(KioskLog.changes(from: greeted, to: greeted) == [])
        var again = greeted
        again.greeting?.at = 80
        #expect(KioskLog.changes(from: greeted, to: again) == ["greeted hunter 7"])
        var over = greeted
        over.greeting = nil
        #expect(KioskLog.changes(from: greeted, to: over) == [])
    }

    @Test func adapterLostAndBack() {
        let up = boxState()
        let down = boxState(advertising: .waiting("adapter hci1 down"))
        #expect(KioskLog.changes(from: up, to: down) == ["waiting: adapter hci1 down"])
        let back = boxState(advertising: .advertising(adapter: "hci1", family: "extended"))
        #expect(KioskLog.changes(from: down, to: back) == ["advertising on hci1 (extended commands)"])
    }

    @Test func rewardAndIdsChanges() {
        let a = boxState()
        var b = a
        b.reward = "\u{1B}[31mnew map\n"
        b.minor = 8
        #expect(KioskLog.changes(from: a, to: b) == ["beacon \(uuid) major 1 minor 8, -59 dBm at 1 m, every 100 ms", "reward: [31mnew map "])
        var c = b
        c.reward = nil
        #expect(KioskLog.changes(from: b, to: c) == ["reward cleared"])
    }

    @Test func noEscapeEverInALogLine() {
        let evil = boxState(
            advertising: .waiting("\u{1B}[2Jgone\u{9B}1m"), reward: "\u{1B}]0;x\u{7}", hunters: crowd,
            greeting: .init(hunterID: 1, at: 0, qrLines: []))
        let lines = KioskLog.changes(from: nil, to: evil)
        #expect(lines.count == 8)
        #expect(lines.allSatisfy { !$0.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } })
    }
}

@Suite struct KioskLogAgreesWithTheScreenTests {
    @Test func aDistanceThatContradictsTheClassIsLeftOut() {
        let lines = KioskLog.changes(from: boxState(), to: boxState(hunters: [hunter(12, .far, 1.7), hunter(5, .near, 8.0), hunter(3, .near, 1.8)]))
        #expect(lines == ["hunter 3 near (~1.8 m)", "hunter 5 near", "hunter 12 far"])
    }

    @Test func theTrendOnlyWhenTheStateCarriesOne() {
        let start = boxState(hunters: [hunter(3, .far, 5)])
        let closer = boxState(hunters: [hunter(3, .near, 2, trend: .warmer)])
        #expect(KioskLog.changes(from: start, to: closer) == ["hunter 3 near (~2.0 m), getting warmer"])
        // Same class, a trend now: said once; the trend going away says nothing.
        let cooling = boxState(hunters: [hunter(3, .near, 2.5, trend: .colder)])
        #expect(KioskLog.changes(from: closer, to: cooling) == ["hunter 3 getting colder"])
        #expect(KioskLog.changes(from: cooling, to: boxState(hunters: [hunter(3, .near, 2.5)])) == [])
        #expect(KioskLog.changes(from: nil, to: boxState(hunters: [hunter(3, .near, 2)])).allSatisfy { !$0.contains("warmer") && !$0.contains("colder") })
    }

    @Test func findsAndTheTrailAreLoggedOnce() {
        let start = boxState(trail: .init(count: 3, found: 0))
        let one = boxState(trail: .init(count: 3, found: 1), standings: [.init(hunter: 7, treasure: 1, at: 40, took: 133)])
        #expect(KioskLog.changes(from: start, to: one) == ["treasures found: 1 of 3", "finder 1: hunter 7 found treasure 1 after 2:13"])
        #expect(KioskLog.changes(from: one, to: one) == [])
        var two = one
        two.standings.append(.init(hunter: 3, treasure: 2, at: 70))
        #expect(KioskLog.changes(from: one, to: two) == ["finder 2: hunter 3 found treasure 2"])
    }
}
