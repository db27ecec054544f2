import GPIO
import Testing

/// The debouncer on virtual time: edges as a real button makes them (contacts rattling for
/// a few ms on press and release), times in seconds.
@Suite struct ButtonDebouncerTests {
    /// A press at `t` that rattles for ~12 ms, held `hold` s, then a release that rattles too.
    static func bouncyPress(at t: Double, hold: Double = 0.3) -> [(Bool, Double)] {
        [(true, t), (false, t + 0.003), (true, t + 0.006), (false, t + 0.009), (true, t + 0.012),
         (false, t + hold), (true, t + hold + 0.004), (false, t + hold + 0.008)]
    }

    static func presses(_ edges: [(Bool, Double)], _ debouncer: inout ButtonDebouncer) -> [Double] {
        edges.compactMap { active, time in debouncer.edge(active: active, at: time) == .press ? time : nil }
    }

    @Test func aCleanPressIsOnePress() {
        var d = ButtonDebouncer()
        #expect(d.edge(active: true, at: 10) == .press)
        #expect(d.edge(active: false, at: 10.2) == .release)
    }

    @Test func aBouncyPressIsOnePress() {
        var d = ButtonDebouncer()
        let verdicts = Self.bouncyPress(at: 5).map { d.edge(active: $0.0, at: $0.1) }
        #expect(verdicts == [.press, .release, .bounce, .release, .bounce, .release, .bounce, .release])
    }

    @Test func aPressHeldDoesNotRepeat() {
        var d = ButtonDebouncer()
        #expect(d.edge(active: true, at: 1) == .press)
        // Active again with no release between (a release the kernel's queue lost): held.
        #expect(d.edge(active: true, at: 4) == .held)
        #expect(d.edge(active: true, at: 9) == .held)
        #expect(d.edge(active: false, at: 12) == .release)
        #expect(d.edge(active: true, at: 13) == .press)
    }

    @Test func atMostOnePressPerSecond() {
        var d = ButtonDebouncer()
        // Hammered every 0.3 s, each press clean and 0.1 s long: one per second gets through.
        var edges: [(Bool, Double)] = []
        for i in 0..<10 {
            let t = Double(i) * 0.3
            edges += [(true, t), (false, t + 0.1)]
        }
        #expect(Self.presses(edges, &d) == [0, 1.2, 2.4])
    }

    @Test func edgesFartherApartThanTheBounceTimeArePresses() {
        var d = ButtonDebouncer(bounce: 0.05, minimumInterval: 0)
        #expect(d.edge(active: true, at: 0) == .press)
        #expect(d.edge(active: false, at: 0.049) == .release)
        #expect(d.edge(active: true, at: 0.098) == .bounce, "49 ms after the release: bounce")
        #expect(d.edge(active: false, at: 0.5) == .release)
        #expect(d.edge(active: true, at: 0.5625) == .press, "62.5 ms after the release: a press")
    }

    @Test func twoBouncyPressesASecondApartAreTwo() {
        var d = ButtonDebouncer()
        let edges = Self.bouncyPress(at: 100) + Self.bouncyPress(at: 101.5)
        #expect(Self.presses(edges, &d) == [100, 101.5])
    }

    @Test func aClockGoingBackDoesNotMuteTheButton() {
        var d = ButtonDebouncer()
        #expect(d.edge(active: true, at: 1000) == .press)
        #expect(d.edge(active: false, at: 1000.1) == .release)
        #expect(d.edge(active: true, at: 3) == .press, "an earlier time starts over")
    }

    @Test func theFirstEdgeCanBeARelease() {
        var d = ButtonDebouncer()
        // Held at start: its release comes first, then a press 0.5 s later counts.
        #expect(d.edge(active: false, at: 0) == .release)
        #expect(d.edge(active: true, at: 0.5) == .press)
    }
}
