import Testing
import FoundationEssentials
@testable import Ranging
import Simulation
#if canImport(Glibc)
import Glibc
#endif

@Suite struct RegionMonitorTests {
    let region = Region(name: "treasure", uuid: testUUID)

    @Test func enterNeedsTwoPacketsWithinOneAndAHalfSeconds() {
        var configuration = RangingConfiguration.default
        configuration.confirmPackets = 2  // the bare rule of the issue
        var monitor = RegionMonitor(region: region)
        monitor.start(at: 0)
        #expect(monitor.packet(at: 0, configuration) == nil)
        #expect(monitor.advance(to: 4.0, anyPresent: false, configuration) == .determined(.outside))
        #expect(monitor.packet(at: 10, configuration) == nil)
        #expect(monitor.packet(at: 11.6, configuration) == nil, "1.6 s apart is too far")
        #expect(monitor.packet(at: 12.5, configuration) == .entered)
        #expect(monitor.state == .inside)
    }

    @Test func defaultRuleRejectsAStrayPairButLetsASlowBeaconIn() {
        let configuration = RangingConfiguration.default
        var monitor = RegionMonitor(region: region)
        monitor.start(at: 0)
        #expect(monitor.advance(to: 4, anyPresent: false, configuration) == .determined(.outside))
        // Two stray packets 0.5 s apart, then nothing for a while.
        #expect(monitor.packet(at: 10, configuration) == nil)
        #expect(monitor.packet(at: 10.5, configuration) == nil)
        #expect(monitor.packet(at: 40, configuration) == nil)
        // A 1 Hz beacon: in on its third packet, 2 s after the first.
        #expect(monitor.packet(at: 100, configuration) == nil)
        #expect(monitor.packet(at: 101, configuration) == nil)
        #expect(monitor.packet(at: 102, configuration) == .entered)
    }

    @Test func aBeaconEveryThreeSecondsEntersAndStraysDoNot() {
        let configuration = RangingConfiguration.default
        // One every 3 s, a third of them lost: in within a minute (it never had 5 in 12 s).
        var monitor = RegionMonitor(region: region)
        monitor.start(at: 0)
        var noise = GaussianSource(seed: 7)
        var entered: Double?
        var t = 1.0
        while t < 120, entered == nil {
            if noise.nextUniform() >= 1.0 / 3, monitor.packet(at: t, configuration) != nil { entered = t }
            t += 3 + 0.01 * noise.nextUniform()
        }
        #expect((entered ?? .infinity) < 60, "entered at \(String(describing: entered))")
        // Strays: one every 30 s on average (Poisson) for 10 hours: no enter.
        var strays = RegionMonitor(region: region)
        strays.start(at: 0)
        _ = strays.advance(to: 4, anyPresent: false, configuration)
        var enters = 0
        t = 5
        while t < 36_000 {
            if strays.packet(at: t, configuration) != nil {
                enters += 1
                strays = RegionMonitor(region: region)
                strays.start(at: t)
                _ = strays.advance(to: t + 4, anyPresent: false, configuration)
            }
            t += -30 * log(max(1 - noise.nextUniform(), 1e-12))
        }
        #expect(enters <= 2, "strays entered \(enters) times in 10 hours")
    }

    @Test func initialStateIsOutsideAfterTheTimeoutWithoutPackets() {
        var engine = RangingEngine(configuration: .default, regions: [region])
        #expect(engine.advance(to: 0).isEmpty)
        #expect(engine.advance(to: 3.9).isEmpty)
        let determined = engine.advance(to: 4.0)
        #expect(determined.compactMap(\.regionStateValue) == [.outside])
        #expect(engine.advance(to: 10).isEmpty)
        let entering = feed(&engine, rssi: -65, from: 10, count: 5)
        #expect(entering.filter(\.isEnter).count == 1)
        #expect(entering.compactMap(\.regionStateValue).isEmpty)
    }

    @Test func initialStateIsInsideWithinAFractionOfASecondForA10HzBeacon() {
        var engine = RangingEngine(configuration: .default, regions: [region])
        let events = feed(&engine, rssi: -65, from: 0, count: 50)
        let states = events.filter { $0.regionStateValue != nil }
        #expect(states.count == 1)
        #expect(states.first?.regionStateValue == .inside)
        #expect((states.first?.time ?? 99) <= 0.3)
        #expect(!events.contains { $0.isEnter }, "the initial state is a state, not an enter")
    }

    /// Exit lag after the last packet of a beacon that lost every 5th packet for 60 s.
    func exitLag(interval: Double) -> Double? {
        var engine = RangingEngine(configuration: .default, regions: [region])
        var last = 0.0
        for i in 0..<Int(60 / interval) where i % 5 != 4 {
            last = Double(i) * interval
            _ = engine.ingest(sample(1, -65, at: last))
        }
        var t = last
        while t < last + 30 {
            t += 0.05
            if engine.advance(to: t).contains(where: \.isExit) { return t - last }
        }
        return nil
    }

    @Test func exitAdaptsToThePacketRate() throws {
        let fast = try #require(exitLag(interval: 0.1))
        let slow = try #require(exitLag(interval: 1.0))
        // Every 5th packet lost, never two in a row: the model learns a light tail.
        #expect(fast >= 3 && fast <= 6, "10 Hz exit after \(fast) s")
        #expect(slow >= 4 && slow <= 15, "1 Hz exit after \(slow) s")
        #expect(slow > fast + 1.5)
    }

    @Test func reEnterAfterExit() {
        var engine = RangingEngine(configuration: .default, regions: [region])
        _ = feed(&engine, rssi: -65, from: 0, count: 100)
        let gone = engine.advance(to: 30)
        #expect(gone.filter(\.isExit).count == 1)
        #expect(engine.advance(to: 60).isEmpty)
        let back = feed(&engine, rssi: -65, from: 60, count: 10)
        #expect(back.filter(\.isEnter).count == 1)
    }

    @Test func burstyThirtyPercentDeliveryGivesNoExit() {
        for seed: UInt64 in 1...3 {
            var simulator = RadioSimulator(
                beacons: [SimulatedBeacon(id: 1, path: .standing(at: 2),
                                        loss: GilbertElliottLoss(lossFraction: 0.7, meanBurstPackets: 10))],
                seed: seed)
            var engine = RangingEngine(configuration: .default, regions: [region])
            var exits = 0
            var nextTick = 0.0
            for report in simulator.run(until: 600) {
                while nextTick < report.time {
                    exits += engine.advance(to: nextTick).filter(\.isExit).count
                    nextTick += 0.1
                }
                exits += engine.ingest(sample(UInt16(report.beacon), report.rssi, at: report.time)).filter(\.isExit).count
            }
            #expect(exits == 0, "seed \(seed): \(exits) false exits in 10 min")
        }
    }

    @Test func regionMatchesUUIDMajorMinor() {
        let any = Region(name: "a", uuid: testUUID)
        let major = Region(name: "b", uuid: testUUID, major: 7)
        let exact = Region(name: "c", uuid: testUUID, major: 7, minor: 3)
        #expect(any.contains(key(3, major: 7)) && any.contains(key(1, major: 2)))
        #expect(!any.contains(key(3, major: 7, uuid: otherUUID)))
        #expect(major.contains(key(3, major: 7)) && !major.contains(key(3, major: 8)))
        #expect(exact.contains(key(3, major: 7)) && !exact.contains(key(4, major: 7)))
    }
}
