import Testing
import FoundationEssentials
@testable import Ranging

@Suite struct EngineOutputTests {
    @Test func withoutRegionsEveryBeaconIsRangedAndNoRegionEventsComeOut() {
        var engine = RangingEngine(configuration: .default, regions: [])
        var events: [RangingEvent] = []
        for i in 0..<100 {
            let t = Double(i) * 0.1
            events += engine.ingest(sample(1, -60, at: t))
            events += engine.ingest(RangingSample(key: key(9, uuid: otherUUID), measuredPower: -59, rssi: -75, time: t))
        }
        events += engine.advance(to: 60)
        let ranged = Set(events.compactMap(\.rangeReport).map(\.key))
        #expect(ranged == [key(1), key(9, uuid: otherUUID)])
        #expect(!events.contains { $0.isRegionEvent })
        #expect(events.compactMap(\.proximityChange).isEmpty)
        #expect(!events.contains { $0.nearestKey != nil || $0.trendValue != nil })
    }

    @Test func withRegionsOnlyTheirBeaconsAreRanged() {
        let region = Region(name: "treasure", uuid: testUUID, major: 1)
        var engine = RangingEngine(configuration: .default, regions: [region])
        var events: [RangingEvent] = []
        for i in 0..<50 {
            let t = Double(i) * 0.1
            events += engine.ingest(RangingSample(key: key(9, uuid: otherUUID), measuredPower: -59, rssi: -60, time: t))
            events += engine.ingest(RangingSample(key: key(2, major: 2), measuredPower: -59, rssi: -60, time: t))
        }
        #expect(events.compactMap(\.rangeReport).isEmpty)
        #expect(engine.trackedBeaconCount == 0)
        events = feed(&engine, minor: 3, rssi: -60, from: 5, count: 20)
        #expect(Set(events.compactMap(\.rangeReport).map(\.key)) == [key(3)])
        #expect(!events.compactMap(\.proximityChange).isEmpty)
    }

    @Test func rangeEventsAtMostOncePerSecondPerBeacon() {
        var engine = RangingEngine(configuration: .default, regions: [])
        var events: [RangingEvent] = []
        for i in 0..<200 {
            let t = Double(i) * 0.05
            events += engine.ingest(sample(1, -60, at: t))
            events += engine.ingest(sample(2, -70, at: t + 0.01))
        }
        for minor: UInt16 in [1, 2] {
            let times = events.compactMap(\.rangeReport).filter { $0.key == key(minor) }.map(\.time)
            #expect(times.count == 10)
            for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= 1 - 1e-9) }
        }
    }

    @Test func rangeReportsCarryTheBeaconsReadingRate() throws {
        // A 10 Hz tag and a 1 Hz one, 20 s: each report says how many readings a second the
        // last 4 s held (the hunt waives its short find hold for a slow tag); a lost beacon's
        // last report says none.
        var engine = RangingEngine(configuration: exponentTwo(), regions: [])
        var events: [RangingEvent] = []
        for i in 0..<200 {
            let t = Double(i) * 0.1
            events += engine.ingest(sample(1, -60, at: t))
            if i % 10 == 0 { events += engine.ingest(sample(2, -65, at: t + 0.05)) }
        }
        let fast = try #require(events.compactMap(\.rangeReport).last { $0.key == key(1) }?.readingRate)
        let slow = try #require(events.compactMap(\.rangeReport).last { $0.key == key(2) }?.readingRate)
        #expect(fast >= 9.5 && fast <= 10.5, "\(fast)")
        #expect(slow >= 0.9 && slow <= 1.3, "\(slow)")
        let lost = engine.advance(to: 200).compactMap(\.rangeReport).filter { $0.distance == nil }
        #expect(!lost.isEmpty)
        #expect(lost.allSatisfy { $0.readingRate == nil })
    }

    @Test func rangeReportsCarryDistanceAndSigma() throws {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [])
        let events = feed(&engine, rssi: rssi(atMeters: 4), from: 0, count: 30)
        let report = try #require(events.compactMap(\.rangeReport).last)
        let distance = try #require(report.distance)
        #expect(abs(distance.meters - 4) < 0.3)
        #expect(distance.sigma > 0)
        #expect(distance.interval.contains(4))
        // Implausible measured power: ranged, but no distance.
        var other = RangingEngine(configuration: exponentTwo(), regions: [])
        let noPower = feed(&other, rssi: -60, from: 0, count: 3, measuredPower: 0)
        #expect(noPower.compactMap(\.rangeReport).first?.distance == nil)
    }

    @Test func theSameInputGivesTheSameEvents() {
        func run() -> [RangingEvent] {
            var engine = RangingEngine(configuration: .default,
                                       regions: [Region(name: "a", uuid: testUUID), Region(name: "b", uuid: testUUID, major: 1, minor: 2)])
            var events: [RangingEvent] = []
            for i in 0..<600 {
                let t = Double(i) * 0.05
                let minor = UInt16(1 + i % 3)
                events += engine.ingest(sample(minor, -60 - Int(minor) * 3 - (i * 7919 % 11), at: t))
            }
            return events + engine.advance(to: 100)
        }
        let first = run()
        #expect(first == run())
        #expect(first.contains { $0.isExit })
    }

    @Test func timeGoingBackwardsIsTreatedAsNow() {
        var engine = RangingEngine(configuration: .default, regions: [])
        _ = feed(&engine, rssi: -60, from: 10, count: 20)
        let events = engine.ingest(sample(1, -60, at: 5))
        #expect(events.allSatisfy { $0.time >= 11.9 })
        #expect(engine.trackedBeaconCount == 1)
    }
}
