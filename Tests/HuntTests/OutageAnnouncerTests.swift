import Hunt
import Testing

@Suite struct OutageAnnouncerTests {
    /// Runs `outages` (start, length) on a 0.25 s timer for `until` seconds; what is said, when.
    func run(_ outages: [(Double, Double)], until: Double) -> [(Double, OutageAnnouncer.Announcement)] {
        var announcer = OutageAnnouncer()
        var said: [(Double, OutageAnnouncer.Announcement)] = []
        var down = false
        for step in 0...Int(until * 4) {
            let t = Double(step) / 4
            let inOutage = outages.contains { t >= $0.0 && t < $0.0 + $0.1 }
            if inOutage && !down { announcer.lost(at: t) }
            if !inOutage && down, let a = announcer.back(at: t) { said.append((t, a)) }
            down = inOutage
            if let a = announcer.tick(at: t) { said.append((t, a)) }
        }
        return said
    }

    @Test func aSocketClosedEveryFiveSecondsIsNeverSpoken() {
        // Down for 1 s every 5 s, for 5 minutes.
        let outages = stride(from: 3.0, to: 300, by: 5).map { ($0, 1.0) }
        #expect(run(outages, until: 300).isEmpty)
    }

    @Test func aRealOutageIsSpokenOnceAndItsEndOnce() {
        let said = run([(10, 30)], until: 60)
        #expect(said.map(\.1) == [.missing, .back])
        #expect(said.first?.0 == 15, "after 5 s of silence")
        #expect(said.last?.0 == 40)
    }

    @Test func outagesInARowAreSpokenAtMostOnceAMinute() {
        // 10 s down, 5 s up, again and again: the child hears it once a minute at most.
        let outages = stride(from: 0.0, to: 300, by: 15).map { ($0, 10.0) }
        let missing = run(outages, until: 300).filter { $0.1 == .missing }.map(\.0)
        #expect(missing.count >= 4 && missing.count <= 5, "\(missing)")
        for (a, b) in zip(missing, missing.dropFirst()) { #expect(b - a >= 60) }
    }

    @Test func backIsOnlySaidAfterMissing() {
        var announcer = OutageAnnouncer()
        announcer.lost(at: 0)
        #expect(announcer.tick(at: 2) == nil)
        #expect(announcer.back(at: 3) == nil)
        #expect(announcer.lostSince == nil)
    }
}
