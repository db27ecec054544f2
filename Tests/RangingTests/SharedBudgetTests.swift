import Testing
#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
@testable import Ranging
import Simulation

/// A region of several beacons shares its false-exit budget among its live beacons (issue
/// 10): a false exit needs all of them silent at once, so each may be judged gone sooner;
/// loss the beacons share (they fall silent together) is learned from the region's own
/// silences and keeps the region; a region left with one live beacon does not share.
@Suite struct SharedBudgetTests {
    let region = Region(name: "treasure", uuid: testUUID)

    /// Silent spells of `length` s starting at random (seeded), one every `every` s on average.
    func spells(seed: UInt64, length: Double, every: Double, until end: Double) -> [ClosedRange<Double>] {
        var random = SplitMix64(seed: seed)
        var out: [ClosedRange<Double>] = []
        var t = 0.0
        while true {
            t += -every * log(max(1 - random.nextUniform(), 1e-12))
            guard t < end else { return out }
            out.append(t ... t + length)
            t += length
        }
    }

    /// Beacons 1 and 2 at 10 Hz until `end`, each silent in its own spells; returns the events
    /// and each beacon's last packet.
    func run(_ engine: inout RangingEngine, spells: [[ClosedRange<Double>]], from start: Double = 0,
             until end: Double) -> (events: [RangingEvent], last: [Double]) {
        var events: [RangingEvent] = []
        var last = [Double](repeating: -1, count: spells.count)
        var index = [Int](repeating: 0, count: spells.count)
        var t = start
        while t < end {
            for b in spells.indices {
                let own = spells[b]
                while index[b] < own.count && own[index[b]].upperBound < t { index[b] += 1 }
                let silent = index[b] < own.count && own[index[b]].contains(t)
                if !silent {
                    events += engine.ingest(sample(UInt16(b + 1), -65 - 3 * b, at: t + 0.03 * Double(b)))
                    last[b] = t + 0.03 * Double(b)
                }
            }
            events += engine.advance(to: t + 0.05)
            t += 0.1
        }
        return (events, last)
    }

    func exitLag(_ engine: inout RangingEngine, after last: Double) -> Double {
        var t = last
        while t < last + 120 {
            t += 0.05
            if engine.advance(to: t).contains(where: \.isExit) { return t - last }
        }
        return .infinity
    }

    @Test func twoIndependentBeaconsExitSoonerThanEitherAlone() throws {
        // Each beacon: 2 s silences about every 15 s, its own; 15 min, then both off.
        var engine = RangingEngine(configuration: .default, regions: [region])
        let own = [spells(seed: 1, length: 2, every: 15, until: 900), spells(seed: 2, length: 2, every: 15, until: 900)]
        let (events, last) = run(&engine, spells: own, until: 900)
        #expect(events.filter(\.isExit).isEmpty, "15 min of independent 2 s silences: no exit")
        let alone = try min(#require(engine.exitSilenceLimit(for: key(1))), #require(engine.exitSilenceLimit(for: key(2))))
        let lastPacket = last.max() ?? 0
        let lag = exitLag(&engine, after: lastPacket)
        #expect(lag < alone - 1, "both off: exit after \(lag) s, each alone would wait \(alone) s")
    }

    @Test func lossTheBeaconsShareIsLearnedFromTheRegionsSilences() throws {
        // Each beacon has its own 1 s silences about every 15 s; and the receiver is deaf 8 s
        // every 7.5 min: both beacons silent together, ~8 times an hour. That is rarer than
        // the budget each beacon may spend when sharing (up to 10 an hour), so judged as if
        // independent the region would be left in those silences; its own model of its
        // silences (8 s seen more often than 0.5 an hour) keeps it.
        var engine = RangingEngine(configuration: .default, regions: [region])
        let deaf = stride(from: 200.0, to: 3600, by: 450).map { $0 ... $0 + 8 }
        func merged(_ own: [ClosedRange<Double>]) -> [ClosedRange<Double>] {
            (own.filter { o in !deaf.contains { $0.overlaps(o) } } + deaf).sorted { $0.lowerBound < $1.lowerBound }
        }
        let own = [merged(spells(seed: 6, length: 1, every: 15, until: 3600)), merged(spells(seed: 7, length: 1, every: 15, until: 3600))]
        let (events, _) = run(&engine, spells: own, until: 3600)
        let exitTimes = events.compactMap { e -> Double? in if case .regionExit(let t, _) = e { t } else { nil } }
        // The first two deaf spells (200 s, 650 s) teach the region; none after them exits it.
        #expect(exitTimes.filter { $0 > 700 }.isEmpty, "exits at \(exitTimes) s")
    }

    @Test func aRegionLeftWithOneLiveBeaconDoesNotShare() throws {
        // Two beacons with their own 2 s silences for 15 min; beacon 2 then stops for good and
        // beacon 1 goes on alone for 2 min: its silences are judged by its own limit.
        var engine = RangingEngine(configuration: .default, regions: [region])
        let own = [spells(seed: 4, length: 2, every: 15, until: 1020), spells(seed: 5, length: 2, every: 15, until: 900)]
        _ = run(&engine, spells: own, until: 900)
        let (events, last) = run(&engine, spells: [own[0]], from: 900, until: 1020)
        #expect(events.filter(\.isExit).isEmpty)
        let alone = try #require(engine.exitSilenceLimit(for: key(1)))
        let lag = exitLag(&engine, after: last[0])
        #expect(abs(lag - alone) < 0.2, "beacon 1 alone: exit after \(lag) s, its own limit \(alone) s")
    }

    @Test func theWarmUpCountsFromThisStayNotFromAStrayLongAgo() throws {
        // One packet of another beacon of the region at t = 0, then two beacons from t = 300
        // with their own short silences; 30 s later the receiver is deaf for 8 s. Nothing of
        // this stay's silences has been seen yet: no sharing, so no exit.
        var engine = RangingEngine(configuration: .default, regions: [region])
        _ = engine.ingest(sample(9, -90, at: 0))
        _ = engine.advance(to: 300)
        let own = [spells(seed: 11, length: 1, every: 10, until: 400), spells(seed: 12, length: 1, every: 10, until: 400)]
        let deaf = 330.0 ... 338.0
        let (events, _) = run(&engine, spells: own.map { ($0 + [deaf]).sorted { $0.lowerBound < $1.lowerBound } },
                              from: 300, until: 400)
        #expect(events.contains(where: \.isEnter) || events.contains { $0.regionStateValue == .inside })
        #expect(events.filter(\.isExit).isEmpty, "an 8 s deaf spell 30 s into the stay exited the region")
    }

    @Test func aBeaconPastItsOwnLimitIsNoWitness() throws {
        // Two beacons with their own 2 s silences for 15 min. Beacon 2 stops; beacon 1 goes
        // on until beacon 2 is past its own exit limit (not yet lost: a strict unknown
        // budget keeps it in the table), then falls silent too: the region is judged by
        // beacon 1 alone, at its own limit.
        var configuration = RangingConfiguration.default
        configuration.falseUnknownsPerHour = 1e-5
        var engine = RangingEngine(configuration: configuration, regions: [region])
        let own = [spells(seed: 13, length: 2, every: 15, until: 900), spells(seed: 14, length: 2, every: 15, until: 900)]
        let (_, last) = run(&engine, spells: own, until: 900)
        let exit2 = try #require(engine.exitSilenceLimit(for: key(2)))
        let lost2 = try #require(engine.lostSilenceLimit(for: key(2)))
        #expect(lost2 > exit2 + 8, "the window this test needs: exit \(exit2) s, lost \(lost2) s")
        var t = 900.0
        var last1 = last[0]
        while t < last[1] + exit2 + 0.5 {
            #expect(engine.ingest(sample(1, -65, at: t)).filter(\.isExit).isEmpty)
            last1 = t
            t += 0.1
        }
        let alone = try #require(engine.exitSilenceLimit(for: key(1)))
        let lag = exitLag(&engine, after: last1)
        #expect(abs(lag - alone) < 0.2, "beacon 1 alone: exit after \(lag) s, its own limit \(alone) s")
    }

    @Test func theSharedBudgetIsBounded() {
        // 2·b²·L ≤ B, at least B, at most `sharingCap` times B.
        let b = RangingEngine.sharedBudget(0.5, limit: 10)
        #expect(abs(2 * b * b * (10.0 / 3600) - 0.5) < 1e-9)
        #expect(RangingEngine.sharedBudget(0.5, limit: 1e-6) == 0.5 * RangingEngine.sharingCap)
        #expect(RangingEngine.sharedBudget(0.5, limit: 1e6) == 0.5)
    }
}
