import Game
import Hunt
import Ranging
import Testing

/// What a grown-up must fix is said at start in plain words, once; the same trouble later in
/// the hunt is the child's line. A speaker found late is said, then the clue it missed.
@Suite struct SetupNoticeTests {
    static func trail() -> HunterCore.Configuration {
        let steps = [1, 2].map { TrailStep(region: Region(name: "chest \($0)", uuid: treasureUUID, major: UInt16($0)), clue: .text("Look under tree \($0)")) }
        var hunt = HuntDirector.Configuration(region: steps[0].region.name)
        hunt.trail = steps
        return HunterCore.Configuration(regions: steps.map(\.region), hunt: hunt)
    }

    func ticks(_ d: inout CoreDriver, from start: Double, seconds: Double) -> [LineEvent] {
        var said: [LineEvent] = []
        var t = start
        while t < start + seconds {
            t += 0.25
            said += d.feed(.tick, at: t).lines
        }
        return said
    }

    @Test(arguments: RadioProblem.allCases)
    func aRadioThatNeverCameUpIsSaidInPlainWordsOnce(_ problem: RadioProblem) {
        var d = CoreDriver(Self.trail())
        d.feed(.radioLost(problem), at: 0.1)
        let said = ticks(&d, from: 0, seconds: 120)
        #expect(said == [problem.notice], "\(said)")
        #expect(problem.notice.rawValue.hasPrefix("notice-"))
        // Fixed: the hunt begins as usual.
        d.feed(.speechFinished, at: 121)
        #expect(d.feed(.radioReady(afterOutage: true), at: 122).lines.contains(.startup))
    }

    @Test func theSameLossMidHuntIsTheChildsLine() {
        var d = CoreDriver(Self.trail())
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 3)
        d.feed(.speechFinished, at: 6)
        d.feed(.radioLost(.noAdapter), at: 10)
        #expect(ticks(&d, from: 10, seconds: 20) == [.adapterMissing])
    }

    @Test func aRadioThatCannotBeUsedAtAllIsNamedAtStart() {
        var d = CoreDriver(Self.trail())
        #expect(d.feed(.radioUnusable(.noPermission), at: 0.5).lines == [.noticeNoPermission])
        var unknown = CoreDriver(Self.trail())
        #expect(unknown.feed(.radioUnusable(nil), at: 0.5).lines == [.adapterMissing])
        // Started again by systemd after the line was said this boot: not said again.
        var again = CoreDriver(Self.trail())
        #expect(again.feed(.radioUnusable(.noPermission, toldThisBoot: true), at: 0.5).lines == [])
    }

    /// A speaker that turns up while the radio is still not up (Bluetooth switched off at
    /// boot, the USB speaker slow): "speaker found", then what the grown-up must fix, which
    /// went to no speaker; no start-up line or clue for a hunt that has not begun (it said
    /// "the hunt begins" and clue 1, said again at the real start).
    @Test func aSpeakerFoundBeforeTheRadioSaysTheNoticeItMissedNotTheStart() throws {
        var d = CoreDriver(Self.trail())
        d.feed(.radioLost(.bluetoothOff), at: 0.1)
        #expect(ticks(&d, from: 0, seconds: 60) == [RadioProblem.bluetoothOff.notice])
        d.feed(.speechFinished, at: 61)
        #expect(d.feed(.speakerFound, at: 70).lines == [.noticeSpeakerFound])
        var after = d.feed(.speechFinished, at: 72).lines
        after += ticks(&d, from: 72, seconds: 10)
        #expect(after == [RadioProblem.bluetoothOff.notice], "\(after)")
        d.feed(.speechFinished, at: 85)
        // Fixed: the hunt begins as usual, its start said once.
        let started = d.feed(.radioReady(afterOutage: true), at: 90).lines
        #expect(started.contains(.startup), "\(started)")
    }

    @Test func aSpeakerFoundLateIsSaidThenTheClueItMissed() throws {
        var d = CoreDriver(Self.trail())
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 3)
        d.feed(.speechFinished, at: 6)  // the startup line and clue 1 went to no speaker
        #expect(d.feed(.speakerFound, at: 20).lines == [.noticeSpeakerFound])
        let next = d.feed(.speechFinished, at: 21)
        guard case let .tell(event, detail)? = next.first else { Issue.record("\(next)"); return }
        #expect(event == .clue && detail.text == "Look under tree 1")
    }
}
