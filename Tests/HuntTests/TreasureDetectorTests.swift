import Hunt
import Simulation
import Testing

@Suite struct TreasureDetectorTests {
    @Test func silentUntilHeardAndAgainAfterASilence() {
        var d = TreasureDetector()
        #expect(d.rate == 0)
        #expect(d.tick(at: 10) == nil)
        #expect(d.heard(pathLoss: 20, at: 11) != nil && d.rate > 0)
        #expect(d.tick(at: 15.9) == nil, "not yet: 5 s without a packet")
        #expect(d.tick(at: 16.1) == 0 && d.rate == 0)
    }

    @Test func closerClicksFasterFromTheEdgeToTheChest() {
        var d = TreasureDetector()
        var rates: [Double] = []
        for loss in stride(from: 36.0, through: 0, by: -4) {
            for k in 0..<30 { _ = d.heard(pathLoss: loss, at: Double(rates.count * 30 + k) * 0.1) }
            rates.append(d.rate)
        }
        #expect(rates.first == d.configuration.edgeRate, "beyond the edge: the edge's rate, not silence")
        #expect(rates.last == d.configuration.chestRate)
        #expect(zip(rates, rates.dropFirst()).allSatisfy { $0 <= $1 })
    }

    /// A clean 13 dB step within 2 packets at 1 Hz and 10 Hz (a quiet room: the jump is at
    /// 12 dB); 20 dB too.
    @Test func aStepIsFollowedWithinTwoPackets() {
        for (interval, step, within) in [(1.0, 13.0, 2), (0.1, 13.0, 2), (0.1, 20.0, 2)] {
            var d = TreasureDetector()
            var t = 0.0
            for _ in 0..<40 {
                t += interval
                _ = d.heard(pathLoss: 25, at: t)
            }
            let far = d.rate
            var packets = 0
            while d.rate == far, packets < 40 {
                t += interval
                packets += 1
                _ = d.heard(pathLoss: 25 - step, at: t)
            }
            #expect(packets <= within, "at \(1 / interval) Hz a \(step) dB step changed the rate after \(packets) packets")
        }
    }

    @Test func atOneHertzEachPacketMovesTheLevel() {
        var d = TreasureDetector()
        _ = d.heard(pathLoss: 20, at: 0)
        let before = d.level
        _ = d.heard(pathLoss: 16, at: 1)
        // A 4 s average: a packet 1 s after the last moves the level by 1 - e^(-1/4) = 22 %.
        #expect(d.level.map { $0 < (before ?? 0) - 0.85 } == true, "a 4 dB closer packet at 1 Hz moves the level by a fifth of it or more")
    }

    @Test func standingStillWithARealRoomsSpreadItHardlyChanges() {
        // 7.5 dB per packet (a real room), 10 Hz and 1 Hz, 10 minutes at 3 m (~9.5 dB).
        for interval in [0.1, 1.0] {
            var d = TreasureDetector()
            var noise = GaussianSource(seed: 42)
            var changes = 0
            var t = 0.0
            while t < 600 {
                t += interval
                if d.heard(pathLoss: 9.5 + 7.5 * noise.nextGaussian(), at: t) != nil, t > 10 { changes += 1 }
            }
            // Measured: 11 a minute at 1 Hz with 10 steps and a 4 s average (9.2 with 6 and 2.5 s).
            #expect(Double(changes) / 10 < (interval < 0.5 ? 2 : 12), "\(changes) changes in 10 minutes at \(1 / interval) Hz")
        }
    }
}
