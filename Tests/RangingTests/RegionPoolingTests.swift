import Testing
#if canImport(Glibc)
import Glibc
#endif
import Ranging
import Simulation

/// Beacons of one region that lie together (`RangingConfiguration.regionPoolingGate`) share
/// their evidence: two or three tags in one chest.
@Suite struct RegionPoolingTests {
    /// Three 1 Hz tags in one chest, advertising 3 dB under, at and 3 dB over their true
    /// power, a child standing 40 s at 12 m, then walking to 2 m at 0.7 m/s (7 dB readings,
    /// each tag its own noise). Pooled, the trend hears three readings a second and says
    /// "warmer" on the walk far more often than one tag's readings alone let it; standing,
    /// neither says anything.
    @Test func threeSlowTagsInOneChestHearAWalkThatOneDoesNot() {
        func run(_ configuration: RangingConfiguration) -> (heard: Int, still: Int) {
            var heard = 0, still = 0
            for seed in UInt64(1)...40 {
                var noise = GaussianSource(seed: seed)
                var engine = RangingEngine(configuration: configuration, regions: [Region(name: "treasure", uuid: testUUID)])
                var walked = false, stood = false
                var t = 0.0
                while t < 55 {
                    let distance = t < 40 ? 12.0 : max(2, 12 - 0.7 * (t - 40))
                    for (minor, error) in [(UInt16(1), -3), (2, 0), (3, 3)] {
                        let time = t + 0.3 * Double(minor)
                        let level = -59 - 22 * log10(distance) + 7 * noise.nextGaussian()
                        for event in engine.ingest(sample(minor, Int(level.rounded()), at: time, measuredPower: -59 + error))
                        where event.trendValue == .warmer {
                            if time >= 40 { walked = true } else { stood = true }
                        }
                    }
                    t += 1
                }
                if walked { heard += 1 }
                if stood { still += 1 }
            }
            return (heard, still)
        }
        var alone = RangingConfiguration.default
        alone.regionPoolingGate = 0
        let pooled = run(.default), apart = run(alone)
        #expect(pooled.heard >= apart.heard + 10, "pooled heard \(pooled.heard) of 40 walks, alone \(apart.heard)")
        #expect(pooled.still == 0 && apart.still == 0, "standing: pooled \(pooled.still), alone \(apart.still)")
    }

    /// Tags at spots a child walks between (1 m and 8 m away: 20 dB apart) share nothing: the
    /// far one's at hand hears only its own packets and never says "immediate".
    @Test func tagsApartShareNothing() {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [Region(name: "treasure", uuid: testUUID)])
        var immediate: [BeaconKey] = []
        var t = 0.0
        // Both heard from afar for a minute, then the child stands at the first one.
        while t < 120 {
            let near = t < 60 ? 9.0 : 1.0
            for (minor, meters) in [(UInt16(1), near), (2, t < 60 ? 9.0 : 8.0)] {
                for event in engine.ingest(sample(minor, rssi(atMeters: meters), at: t + 0.01 * Double(minor))) {
                    if let change = event.proximityChange, change.to == .immediate { immediate.append(change.key) }
                }
            }
            t += 0.1
        }
        #expect(immediate.contains(key(1)))
        #expect(!immediate.contains(key(2)), "\(immediate)")
    }

    /// Three 20 Hz tags in one chest: each tag's at hand hears 60 readings a second, and still
    /// keeps the 2.5 s of them that a find's confirmation spans (64 readings were 1 s of them:
    /// on the walks at 20 Hz with three tags, 62 finds of 200).
    @Test func threeFastTagsInOneChestAreStillAtHand() {
        var engine = RangingEngine(configuration: exponentTwo(), regions: [Region(name: "treasure", uuid: testUUID)])
        var immediate: Double?
        var t = 0.0
        // Heard from 9 m for a minute, then the child stands at the chest (1 m).
        while t < 75, immediate == nil {
            for minor in UInt16(1)...3 {
                let meters = t < 60 ? 9.0 : 1.0
                let wobble = (Int(t * 20) + Int(minor)) % 2 == 0 ? 2 : -2
                for event in engine.ingest(sample(minor, rssi(atMeters: meters) + wobble, at: t + 0.015 * Double(minor))) {
                    if let change = event.proximityChange, change.to == .immediate { immediate = t }
                }
            }
            t += 0.05
        }
        #expect(immediate.map { $0 - 60 < 5 } ?? false, "immediate at \(immediate.map { String($0) } ?? "never")")
    }
}
