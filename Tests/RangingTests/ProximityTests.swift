import Testing
import FoundationEssentials
@testable import Ranging

@Suite struct ProximityClassifierTests {
    /// Exponent 2: the near edge (3 m) is 9.54 dB of path loss, immediate (0.5 m) -6.02 dB;
    /// hysteresis 2 dB (the numbers below are written for it).
    func makeClassifier() -> ProximityClassifier {
        var configuration = exponentTwo()
        configuration.proximityHysteresis = 2
        return ProximityClassifier(configuration: configuration)
    }

    /// A classifier that committed near (path loss 5 dB held for the dwell from t = 0).
    func nearClassifier(pathLoss: Double = 5) -> ProximityClassifier {
        var classifier = makeClassifier()
        _ = classifier.update(pathLoss: pathLoss, time: 0)
        _ = classifier.update(pathLoss: pathLoss, time: 0.75)
        _ = classifier.update(pathLoss: pathLoss, time: 1.5)
        return classifier
    }

    @Test func firstClassIsCommittedOnlyAfterTheDwell() {
        var classifier = makeClassifier()
        #expect(classifier.update(pathLoss: 5, time: 0) == nil)
        #expect(classifier.update(pathLoss: 5, time: 0.1) == nil)
        #expect(classifier.update(pathLoss: 5, time: 1.4) == nil)
        #expect(classifier.committed == .unknown)
        let change = classifier.update(pathLoss: 5, time: 1.5)
        #expect(change?.from == .unknown && change?.to == .near)
        #expect(classifier.committed == .near)
    }

    @Test func aDwellOfOneOrTwoPacketsIsNotEnough() {
        // A 1 Hz beacon: two readings 1.5 s apart are not three.
        var classifier = nearClassifier()
        #expect(classifier.update(pathLoss: 14, time: 10) == nil)
        #expect(classifier.update(pathLoss: 14, time: 11.6) == nil)
        #expect(classifier.update(pathLoss: 14, time: 12.6)?.to == .far)
    }

    @Test func aFirstClassThatDoesNotHoldIsNotCommitted() {
        var classifier = makeClassifier()
        // A noisy start: far, near, far... each shorter than the dwell.
        for i in 0..<20 {
            #expect(classifier.update(pathLoss: i % 10 < 5 ? 5 : 15, time: Double(i) * 0.2) == nil)
        }
        #expect(classifier.committed == .unknown)
    }

    @Test func hysteresisHoldsTheClassJustPastTheEdge() {
        var classifier = nearClassifier()
        // 10.5 dB is past the 9.54 dB edge but inside the 2 dB hysteresis: near forever.
        for i in 1...200 {
            #expect(classifier.update(pathLoss: 10.5, time: Double(i) * 0.1) == nil)
        }
        #expect(classifier.committed == .near)
        #expect(classifier.rawClass(pathLoss: 10.5) == .far)
    }

    @Test func aChangeIsCommittedOnlyAfterTheDwell() {
        var classifier = nearClassifier()
        var committedAt: Double?
        for i in 0...30 {
            let t = 10 + Double(i) * 0.1
            if let change = classifier.update(pathLoss: 12, time: t) {
                #expect(change.from == .near && change.to == .far)
                committedAt = t
                break
            }
        }
        #expect(committedAt.map { abs($0 - 11.5) < 1e-6 } == true,
                "committed at \(String(describing: committedAt)), dwell is 1.5 s")
        // Back towards the edge but inside far's hysteresis band (edge − 2 dB): stays far.
        for i in 1...50 { _ = classifier.update(pathLoss: 8.0, time: 12 + Double(i) * 0.1) }
        #expect(classifier.committed == .far)
    }

    @Test func anInterruptionRestartsTheDwell() {
        var classifier = nearClassifier()
        for i in 0...10 { #expect(classifier.update(pathLoss: 12, time: 10 + Double(i) * 0.1) == nil) }
        // One reading back inside the band at 11.05 s cancels the pending far.
        #expect(classifier.update(pathLoss: 9, time: 11.05) == nil)
        for i in 0...14 { #expect(classifier.update(pathLoss: 12, time: 11.1 + Double(i) * 0.1) == nil) }
        #expect(classifier.update(pathLoss: 12, time: 12.6)?.to == .far)
    }

    @Test func immediateEdgeWorksTheSameWay() {
        var classifier = nearClassifier(pathLoss: 0)
        #expect(classifier.committed == .near)
        // -7 dB is past the -6.02 dB edge but within hysteresis.
        for i in 1...30 { #expect(classifier.update(pathLoss: -7, time: 2 + Double(i) * 0.1) == nil) }
        var change: (from: Proximity, to: Proximity)?
        for i in 31...60 where change == nil { change = classifier.update(pathLoss: -9, time: 2 + Double(i) * 0.1) }
        #expect(change?.to == .immediate)
    }

    @Test func unknownComesOnlyFromMarkLost() {
        var classifier = makeClassifier()
        for (i, pathLoss) in [-40.0, 0, 30, 80, 200].enumerated() {
            for dt in [0, 0.75, 1.5] { _ = classifier.update(pathLoss: pathLoss, time: Double(i) * 2 + dt) }
            #expect(classifier.candidate(pathLoss: pathLoss) != .unknown)
            #expect(classifier.committed != .unknown)
        }
        let change = classifier.markLost()
        #expect(change?.to == .unknown)
        #expect(classifier.markLost() == nil)
    }
}

@Suite struct EngineProximityTests {
    let region = Region(name: "treasure", uuid: testUUID)

    @Test func oneOutlierNeverChangesTheClassNorMakesItUnknown() {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        var events = feed(&engine, rssi: rssi(atMeters: 2), from: 0, count: 50)
        events += engine.ingest(sample(1, -105, at: 5.0))
        events += engine.ingest(sample(1, -30, at: 5.1))
        events += feed(&engine, rssi: rssi(atMeters: 2), from: 5.2, count: 100)
        let changes = events.compactMap(\.proximityChange)
        #expect(changes.count == 1)
        #expect(changes.first?.from == .unknown && changes.first?.to == .near)
        // Reports before the dwell have no class yet; every one from 2 s on is near.
        #expect(events.compactMap(\.rangeReport).filter { $0.time >= 2 }.allSatisfy { $0.proximity == .near })
    }

    @Test func firstClassWaitsForTheDwellFromTheFirstPacket() {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        let early = feed(&engine, rssi: -65, from: 0, count: 15)
        #expect(early.compactMap(\.proximityChange).isEmpty, "the dwell (1.5 s) runs from the first packet")
        let committed = engine.ingest(sample(1, -65, at: 1.5))
        #expect(committed.compactMap(\.proximityChange).first?.to == .near)
    }

    @Test func firstClassAlsoNeedsThreePackets() {
        // A sparse beacon: two packets 2 s apart are past the dwell but not enough packets.
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        #expect(engine.ingest(sample(1, -65, at: 0)).compactMap(\.proximityChange).isEmpty)
        #expect(engine.ingest(sample(1, -65, at: 2)).compactMap(\.proximityChange).isEmpty)
        #expect(engine.ingest(sample(1, -65, at: 4)).compactMap(\.proximityChange).first?.to == .near)
    }

    @Test func aFirstClassNearAnEdgeWaitsForASettledLevel() {
        // A 1 Hz beacon whose first three readings say 3.5 m (11 dB, 1.5 dB past the 3 m edge)
        // and every later one 2.5 m (8 dB). Committed on three readings, "far" would stay for
        // good: the level at the tenth reading (2.7 m) and the settled one (2.5 m) are inside
        // the 3 dB hysteresis. It waits for ten.
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        var events = feed(&engine, rssi: -70, from: 0, count: 3, interval: 1)
        events += feed(&engine, rssi: -67, from: 3, count: 30, interval: 1)
        let changes = events.compactMap(\.proximityChange)
        #expect(changes.count == 1, "one class, no change: \(changes.map(\.to))")
        #expect(changes.first?.to == .near)
        // Clear of the edges, the first class comes as before: three packets and the dwell.
        var clear = RangingEngine(configuration: exponentTwo(), regions: [region])
        let quick = feed(&clear, rssi: -80, from: 0, count: 3, interval: 1)
        #expect(quick.compactMap(\.proximityChange).first?.to == .far, "11 m: far on the third packet")
    }

    @Test func unknownOnlyAfterTheAdaptiveSilenceAndTheFilterRestarts() throws {
        let configuration = exponentTwo()
        var engine = RangingEngine(configuration: configuration, regions: [region])
        var arrivals = ArrivalStatistics()
        for i in 0..<100 {
            let t = Double(i) * 0.1
            _ = engine.ingest(sample(1, -65, at: t))
            arrivals.record(time: t, configuration)
        }
        let last = 9.9
        let limit = try #require(engine.lostSilenceLimit(for: key(1)))
        let fresh = arrivals.silenceLimit(falseAlarmsPerHour: configuration.falseUnknownsPerHour, at: last, configuration)
        #expect(abs(limit - fresh) <= 0.05 * fresh, "the engine's cached limit is the model's")
        #expect(limit >= configuration.minimumSilence && limit <= configuration.maximumSilence)
        let before = engine.advance(to: last + limit - 0.05)
        #expect(before.compactMap(\.proximityChange).isEmpty)
        #expect(engine.trackedBeaconCount == 1)
        let after = engine.advance(to: last + limit + 0.05)
        let change = after.compactMap(\.proximityChange).first
        #expect(change?.from == .near && change?.to == .unknown)
        let lostReport = after.compactMap(\.rangeReport).first
        #expect(lostReport?.proximity == .unknown && lostReport?.distance == nil)
        #expect(engine.trackedBeaconCount == 0)
        // The filter restarted: the first new packet is taken as it is.
        let again = engine.ingest(sample(1, -80, at: 40))
        #expect(again.compactMap(\.rangeReport).first?.rssi == -80)
    }

    @Test func packetsWithoutRSSIKeepTheBeaconButAreNotRanged() {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [region])
        _ = feed(&engine, rssi: -65, from: 0, count: 50)
        let silentRSSI = feed(&engine, rssi: nil, from: 5, count: 300)
        #expect(silentRSSI.compactMap(\.rangeReport).isEmpty)
        #expect(silentRSSI.compactMap(\.proximityChange).isEmpty)
        #expect(!silentRSSI.contains { $0.isExit })
        #expect(engine.trackedBeaconCount == 1)
    }
}
