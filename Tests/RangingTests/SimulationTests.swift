import Testing
import Simulation
#if canImport(Glibc)
import Glibc
#endif

@Suite struct SimulationTests {
    func beacons() -> [SimulatedBeacon] {
        [SimulatedBeacon(id: 0, path: .standing(at: 3), loss: GilbertElliottLoss(lossFraction: 0.2, meanBurstPackets: 5)),
         SimulatedBeacon(id: 1, advertisingInterval: 1, path: .step(from: 1, to: 8, at: 30), switchOffTime: 50)]
    }

    @Test func aSeedGivesTheSameTraceEveryTime() {
        var a = RadioSimulator(beacons: beacons(), seed: 99)
        var b = RadioSimulator(beacons: beacons(), seed: 99)
        var c = RadioSimulator(beacons: beacons(), seed: 100)
        let traceA = a.run(until: 60)
        #expect(traceA == b.run(until: 60))
        #expect(traceA != c.run(until: 60))
        #expect(zip(traceA, traceA.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    @Test func gilbertElliottLossHasTheAskedFractionAndBurstLength() {
        var loss = GilbertElliottLoss(lossFraction: 0.2, meanBurstPackets: 5)
        #expect(abs(loss.lossFraction - 0.2) < 1e-12)
        var random = GaussianSource(seed: 1)
        var lost = 0
        var bursts = 0
        var previous = false
        let packets = 200_000
        for _ in 0..<packets {
            let isLost = loss.nextIsLost(&random)
            if isLost { lost += 1 }
            if isLost && !previous { bursts += 1 }
            previous = isLost
        }
        let fraction = Double(lost) / Double(packets)
        let meanBurst = Double(lost) / Double(bursts)
        #expect(abs(fraction - 0.2) < 0.01, "loss fraction \(fraction)")
        #expect(abs(meanBurst - 5) < 0.3, "mean burst \(meanBurst)")
    }

    @Test func meanRSSIFollowsLogDistanceWithTheModelSpread() {
        let model = PathLossModel()
        var noise = GaussianSource(seed: 5)
        let n = 60_000
        var sum = 0.0
        var squares = 0.0
        for i in 0..<n {
            let value = model.reading(atDistance: 4, channel: i % 3, noise: &noise)
            sum += value
            squares += value * value
        }
        let mean = sum / Double(n)
        let sd = (squares / Double(n) - mean * mean).squareRoot()
        #expect(abs(mean - (-59 - 20 * log10(4))) < 0.1, "mean \(mean)")
        // 5.7 dB Gaussian plus channel offsets +5/0/-5 (variance 50/3).
        #expect(abs(sd - (5.7 * 5.7 + 50.0 / 3).squareRoot()) < 0.1, "sd \(sd)")
        #expect(model.meanRSSI(atDistance: 1) == -59)
    }

    @Test func reportsFollowTheScriptAndStopAtSwitchOff() {
        var simulator = RadioSimulator(beacons: beacons(), seed: 3)
        let trace = simulator.run(until: 60)
        let slow = trace.filter { $0.beacon == 1 }
        #expect(slow.count == 50, "1 Hz with 0-10 ms delay, no loss, off at 50 s")
        #expect(slow.allSatisfy { $0.time < 50 })
        #expect(slow.filter { $0.time < 30 }.allSatisfy { $0.distance == 1 })
        #expect(slow.filter { $0.time >= 30 }.allSatisfy { $0.distance == 8 })
        #expect(Set(slow.map(\.channel)) == [37, 38, 39])
        #expect(slow.prefix(3).map(\.channel) == [37, 38, 39])
        var long = RadioSimulator(beacons: [beacons()[0]], seed: 3)
        let fast = long.run(until: 600)
        // 10 Hz plus a mean 5 ms random delay, 20 % lost.
        let expected = 600 / 0.105 * 0.8
        #expect(abs(Double(fast.count) - expected) < expected * 0.05, "\(fast.count) reports")
        #expect(fast.allSatisfy { $0.measuredPower == -59 && (-127...20).contains($0.rssi) })
    }

    @Test func scriptedPathInterpolates() {
        let path = ScriptedPath([.init(time: 10, distance: 10), .init(time: 20, distance: 2)])
        #expect(path.distance(at: 0) == 10)
        #expect(path.distance(at: 15) == 6)
        #expect(path.distance(at: 25) == 2)
        let step = ScriptedPath.step(from: 1.5, to: 6, at: 30)
        #expect(step.distance(at: 29.99) == 1.5)
        #expect(step.distance(at: 30) == 6)
    }
}
