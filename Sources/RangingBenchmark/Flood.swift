import FoundationEssentials
import Ranging
import Simulation

/// `--made-up-minors N`: one phone cycling N made-up minors of the treasure's UUID (the
/// default region is UUID-only) at 50 packets a second, beside the treasure's own tag at
/// 10 Hz, for a minute: the engine's time per packet, median of 5 runs, against the same
/// run without region pooling (the baseline: no partners at all) measured in the same
/// process. Before the partners were capped (`RangingEngine.maximumPartners`) every
/// packet went to every made-up minor's at hand.
func runMadeUpMinors(_ count: Int) {
    let uuid = UUID(uuidString: "50495241-5445-2D48-554E-544552000000") ?? UUID()
    let region = Region(name: "treasure", uuid: uuid)
    func samples() -> [RangingSample] {
        var noise = GaussianSource(seed: 7)
        var out: [RangingSample] = []
        var t = 0.0
        var minor = 0
        while t < 60 {
            // The phone: 5 packets every 0.1 s, each a new minor, at -70 dBm give or take.
            for _ in 0..<5 {
                out.append(RangingSample(key: BeaconKey(uuid: uuid, major: 1, minor: UInt16(2 + minor % count)), measuredPower: -59,
                                         rssi: Int(-70 + 4 * noise.nextGaussian()), time: t))
                minor += 1
            }
            out.append(RangingSample(key: BeaconKey(uuid: uuid, major: 1, minor: 1), measuredPower: -59,
                                     rssi: Int(-65 + 6 * noise.nextGaussian()), time: t + 0.05))
            t += 0.1
        }
        return out
    }
    let input = samples()
    func microsecondsPerPacket(_ configuration: RangingConfiguration) -> Double {
        var runs: [Double] = []
        for _ in 0..<5 {
            var engine = RangingEngine(configuration: configuration, regions: [region])
            let clock = ContinuousClock()
            let took = clock.measure {
                for s in input { _ = engine.ingest(s) }
            }
            runs.append(Double(took.components.seconds) * 1e6 + Double(took.components.attoseconds) / 1e12)
        }
        return runs.sorted()[runs.count / 2] / Double(input.count)
    }
    var baseline = RangingConfiguration.default
    baseline.regionPoolingGate = 0
    let pooled = microsecondsPerPacket(.default)
    let unpooled = microsecondsPerPacket(baseline)
    print("made-up minors \(count) (50 a second) beside a 10 Hz tag, \(input.count) packets: "
          + "\(format(pooled, 1)) µs a packet with pooling, \(format(unpooled, 1)) µs without (baseline), "
          + "ratio \(format(pooled / unpooled, 2)) (median of 5 runs)")
}
