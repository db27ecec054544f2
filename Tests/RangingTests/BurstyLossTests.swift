import Testing
import FoundationEssentials
@testable import Ranging
import Simulation

/// Hand-made sequences for issue 10: what a loss burst may and may not make the engine say.
@Suite struct BurstyLossTests {
    let region = Region(name: "treasure", uuid: testUUID)

    /// A 10 Hz beacon at -65 dBm for `minutes`, silent for `burst` s every 20 s.
    func learned(_ engine: inout RangingEngine, minor: UInt16 = 1, burst: Double, minutes: Double,
                 from start: Double = 0) -> (events: [RangingEvent], last: Double) {
        var events: [RangingEvent] = []
        var t = start
        var last = start
        while t < start + minutes * 60 {
            let inCycle = (t - start).truncatingRemainder(dividingBy: 20)
            if inCycle >= burst {
                events += engine.ingest(sample(minor, -65, at: t))
                last = t
            } else {
                events += engine.advance(to: t)
            }
            t += 0.1
        }
        return (events, last)
    }

    @Test func aBurstLikeTheLearnedOnesExitsNothing() throws {
        var engine = RangingEngine(configuration: .default, regions: [region])
        let (events, last) = learned(&engine, burst: 3, minutes: 10)
        #expect(events.filter(\.isExit).isEmpty, "3 s bursts every 20 s for 10 min: never an exit")
        #expect(!events.compactMap(\.proximityChange).contains { $0.to == .unknown })
        let limit = try #require(engine.exitSilenceLimit(for: key(1)))
        #expect(limit > 3.5, "the learned limit \(limit) s covers the 3 s bursts")
        // One more 3 s burst: nothing at all is said.
        let during = engine.advance(to: last + 3.0)
        #expect(during.isEmpty)
    }

    @Test func aBurstAtTheEdgeOfTheLimit() throws {
        var engine = RangingEngine(configuration: .default, regions: [region])
        let (_, last) = learned(&engine, burst: 2, minutes: 10)
        let exitLimit = try #require(engine.exitSilenceLimit(for: key(1)))
        let lostLimit = try #require(engine.lostSilenceLimit(for: key(1)))
        #expect(lostLimit > exitLimit + 0.1, "unknown has the stricter budget: \(lostLimit) vs \(exitLimit) s")
        let before = engine.advance(to: last + exitLimit - 0.05)
        #expect(before.isEmpty, "just inside the limit: still inside")
        let after = engine.advance(to: last + exitLimit + 0.05)
        #expect(after.filter(\.isExit).count == 1)
        #expect(after.compactMap(\.proximityChange).isEmpty, "exit first; unknown later")
        #expect(engine.advance(to: last + lostLimit - 0.05).compactMap(\.proximityChange).isEmpty)
        let lost = engine.advance(to: last + lostLimit + 0.05)
        #expect(lost.compactMap(\.proximityChange).first?.to == .unknown)
        #expect(engine.trackedBeaconCount == 0)
    }

    @Test func longerBurstsGiveALongerLimitThanIndependentLossOfTheSameShare() throws {
        // Both lose 20 % of the packets for 20 min: one in 10 s bursts (4 s every 20 s), one
        // one packet in five.
        var bursty = ArrivalStatistics()
        var independent = ArrivalStatistics()
        let configuration = RangingConfiguration.default
        for i in 0..<12_000 {
            let t = Double(i) * 0.1
            if t.truncatingRemainder(dividingBy: 20) >= 4 { bursty.record(time: t, configuration) }
            if i % 5 != 4 { independent.record(time: t, configuration) }
        }
        let long = bursty.silenceLimit(falseAlarmsPerHour: 0.5, at: 1200, configuration)
        let short = independent.silenceLimit(falseAlarmsPerHour: 0.5, at: 1200, configuration)
        #expect(long > 4.5, "bursts of 4 s: limit \(long) s")
        #expect(short == configuration.minimumSilence, "single losses: limit \(short) s")
        // A stricter budget never shortens the limit.
        #expect(bursty.silenceLimit(falseAlarmsPerHour: 0.05, at: 1200, configuration) >= long)
    }

    @Test func aLongGapSeenRecentlyIsAFloorOfTheLimit() {
        // A clean 10 Hz beacon for 10 min, one 8 s gap, then clean again.
        let configuration = RangingConfiguration.default
        var stats = ArrivalStatistics()
        var t = 0.0
        while t < 600 { stats.record(time: t, configuration); t += 0.1 }
        let before = stats.silenceLimit(falseAlarmsPerHour: 0.5, at: t, configuration)
        t += 8
        while t < 1200 { stats.record(time: t, configuration); t += 0.1 }
        let after = stats.silenceLimit(falseAlarmsPerHour: 0.5, at: t, configuration)
        #expect(before < 8, "before the gap: \(before) s")
        #expect(after >= 1.5 * 8, "10 min after an 8 s gap: \(after) s")
        // 25 min later with no long gap the floor has gone.
        while t < 2700 { stats.record(time: t, configuration); t += 0.1 }
        #expect(stats.silenceLimit(falseAlarmsPerHour: 0.5, at: t, configuration) < 8)
    }

    @Test func aWalkAwayIsNotLearnedAsLoss() {
        // A clean 10 Hz beacon for 10 min, the hunter away for 40 s, then back for 10 min:
        // the next exit is as fast as before the walk.
        let configuration = RangingConfiguration.default
        var stats = ArrivalStatistics()
        var t = 0.0
        while t < 600 { stats.record(time: t, configuration); t += 0.1 }
        let before = stats.silenceLimit(falseAlarmsPerHour: 0.5, at: t, configuration)
        t += 40
        while t < 1240 { stats.record(time: t, configuration); t += 0.1 }
        let after = stats.silenceLimit(falseAlarmsPerHour: 0.5, at: t, configuration)
        #expect(after <= before + 0.5, "before \(before) s, after a 40 s walk-away \(after) s")
    }

    @Test func twoBeaconsThatAlternateKeepTheRegion() {
        // Each beacon is silent 8 s of every 16 s, in turn: the region is never empty, yet each
        // beacon's own silences are long. Pooled into one stream there would be no gap at all;
        // judged per beacon neither is gone (each learned its 8 s gaps) and the region stays.
        var engine = RangingEngine(configuration: .default, regions: [region])
        var events: [RangingEvent] = []
        var t = 0.0
        while t < 600 {
            let phase = t.truncatingRemainder(dividingBy: 16)
            events += engine.ingest(sample(phase < 8 ? 1 : 2, -65, at: t))
            t += 0.1
        }
        #expect(events.filter(\.isExit).isEmpty)
        // Both switched off: the region exits only after the later of the two limits.
        let lastOne = 599.9
        var exitAt: Double?
        var u = lastOne
        while u < lastOne + 120, exitAt == nil {
            u += 0.1
            if engine.advance(to: u).contains(where: \.isExit) { exitAt = u }
        }
        let exit = exitAt ?? .infinity
        #expect(exit - lastOne < 61)
        // Two live beacons share the region's budget (SharedBudgetTests): the exit may come
        // before a beacon's own limit, never within the 8 s silences either has shown, and
        // never after the later beacon's own limit.
        #expect(exit - lastOne > 1.5 * 8, "exit \(exit - lastOne) s after the last packet")
        let own = max(engine.exitSilenceLimit(for: key(1)) ?? 0, engine.exitSilenceLimit(for: key(2)) ?? 0)
        #expect(exit - lastOne <= own + 0.2, "not after the later beacon's own limit \(own) s")
    }

    @Test func aRegionOfTwoExitsOnlyWhenBothAreGone() throws {
        var engine = RangingEngine(configuration: .default, regions: [region])
        for i in 0..<3000 {
            let t = Double(i) * 0.1
            _ = engine.ingest(sample(1, -65, at: t))
            _ = engine.ingest(sample(2, -70, at: t + 0.05))
        }
        // Beacon 1 stops; beacon 2 goes on for two minutes: no exit, beacon 1 becomes unknown.
        var events: [RangingEvent] = []
        for i in 0..<1200 { events += engine.ingest(sample(2, -70, at: 300 + Double(i) * 0.1)) }
        #expect(events.filter(\.isExit).isEmpty)
        #expect(events.compactMap(\.proximityChange).contains { $0.key == key(1) && $0.to == .unknown })
        #expect(engine.nearest(inRegion: "treasure") == key(2))
    }

    @Test func aBurstKeepsTheClassAndTheFilterWidensWithoutReset() throws {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        var events = feed(&engine, rssi: rssi(atMeters: 2), from: 0, count: 600)
        let levelBefore = try #require(events.compactMap(\.rangeReport).last?.rssi)
        // A 4 s burst, then packets again at a different reading: no unknown, no class change,
        // and the level moves by less than the reading's distance from it (no reset).
        events = engine.advance(to: 63.9)
        events += engine.ingest(sample(1, rssi(atMeters: 2) - 12, at: 64))
        #expect(events.compactMap(\.proximityChange).isEmpty)
        let report = try #require(events.compactMap(\.rangeReport).first)
        #expect(report.proximity == .near)
        #expect(abs(report.rssi - levelBefore) < 3, "one packet after a burst moved the level by \(report.rssi - levelBefore) dB")
    }

    @Test func theFilterVarianceGrowsWithSilence() {
        var filter = KalmanRSSIFilter(configuration: .default)
        for i in 0..<100 { filter.update(rssi: -65, time: Double(i) * 0.1) }
        let now = filter.variance(at: 9.9)
        let later = filter.variance(at: 19.9)
        #expect(later > now)
        #expect(abs(later - now - RangingConfiguration.default.processNoise * 10) < 1e-9)
        #expect(filter.level == -65)
    }

    @Test func afterATrueAbsenceTheFirstClassWaitsForTheDwell() {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        _ = feed(&engine, rssi: rssi(atMeters: 2), from: 0, count: 100)
        let gone = engine.advance(to: 100)
        #expect(gone.compactMap(\.proximityChange).first?.to == .unknown)
        var changes: [(Double, Proximity)] = []
        for i in 0..<40 {
            let t = 200 + Double(i) * 0.1
            for event in engine.ingest(sample(1, rssi(atMeters: 8), at: t)) {
                if let change = event.proximityChange { changes.append((event.time, change.to)) }
            }
        }
        #expect(changes.count == 1)
        #expect(changes.first?.1 == .far)
        #expect((changes.first?.0 ?? 0) >= 200 + 1.5 - 1e-9, "committed at \(String(describing: changes.first?.0))")
    }

    @Test func aRealStepIsFollowedWithinSeconds() {
        // 1.5 m -> 6 m at 10 Hz with 6 dB noise and 20 % bursty loss: the filter finds the
        // change and "far" is committed within 8 s every seed, 5 s in the median.
        var lags: [Double] = []
        for seed: UInt64 in 1...5 {
            var simulator = RadioSimulator(
                beacons: [SimulatedBeacon(id: 1, path: .step(from: 1.5, to: 6, at: 60),
                                        loss: GilbertElliottLoss(lossFraction: 0.2, meanBurstPackets: 5))],
                model: PathLossModel(measuredPower: -59, exponent: 2, noiseSigma: 6, channelOffsets: [3, 0, -3]),
                seed: seed)
            var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
            var farAt: Double?
            var before: [Proximity] = []
            for report in simulator.run(until: 80) {
                for event in engine.ingest(sample(1, report.rssi, at: report.time)) {
                    guard let change = event.proximityChange else { continue }
                    if event.time < 60 { before.append(change.to) }
                    if change.to == .far, farAt == nil, event.time >= 60 { farAt = event.time }
                }
            }
            #expect(before == [.near], "seed \(seed): standing at 1.5 m said \(before)")
            lags.append((farAt ?? 99) - 60)
        }
        #expect(lags.allSatisfy { $0 <= 8 }, "far after \(lags) s")
        #expect(lags.sorted()[2] <= 5, "far after \(lags) s")
    }

    @Test func theChangeTestIsQuietOnNoise() {
        // An hour of 10 Hz readings around one level, 7 dB noise plus channel offsets: the
        // CUSUM does not fire more than once.
        var noise = GaussianSource(seed: 3)
        var filter = KalmanRSSIFilter(configuration: .default)
        for i in 0..<36_000 {
            let value = -70 + [5.0, 0, -5][i % 3] + 7 * noise.nextGaussian()
            filter.update(rssi: Int(value.rounded()), time: Double(i) * 0.1)
        }
        #expect(filter.changes <= 1, "\(filter.changes) level changes found in an hour of noise")
    }

    @Test func theTableOfBeaconsIsBounded() {
        var engine = RangingEngine(configuration: .default, maximumBeacons: 4)
        for i in 0..<200 {
            _ = engine.ingest(sample(UInt16(i % 10), -70, at: Double(i) * 0.01))
            #expect(engine.trackedBeaconCount <= 4)
        }
        #expect(engine.trackedBeaconCount == 4)
    }
}
