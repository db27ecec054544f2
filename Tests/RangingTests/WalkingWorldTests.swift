import Testing
import Simulation
#if canImport(Glibc)
import Glibc
#endif

@Suite struct WalkingWorldTests {
    @Test func aSeedGivesTheSameWalkEveryTime() {
        let a = WalkingWorld(seed: 7), b = WalkingWorld(seed: 7), c = WalkingWorld(seed: 8)
        #expect(a.readings() == b.readings())
        #expect(a.readings() != c.readings())
    }

    @Test func walksOfNeighbouringSeedsAreNotTheSamePath() {
        // Their legs must differ: a generator seeded so that seed s + 1's draws were seed s's
        // shifted by one gave seeds 1, 4, 7 and 9 the same legs.
        func legs(_ seed: UInt64) -> [Int] {
            WalkingWorld(seed: seed).approaches().map { Int((($0.end - $0.start) * 4).rounded()) }
        }
        let all = (1...24).map { legs(UInt64($0)) }
        #expect(Set(all).count == all.count)
        for s: UInt64 in 1...12 {
            let a = WalkingWorld(seed: s), b = WalkingWorld(seed: s + 1)
            #expect(abs(a.duration - b.duration) > 0.01 || a.poses.last != b.poses.last)
        }
    }

    @Test func walksLastFourToTenMinutesAndEndAtHandHeightOverTheChest() {
        for seed: UInt64 in 1...12 {
            let world = WalkingWorld(seed: seed)
            #expect(world.duration >= 240 && world.duration <= 660)
            let atChest = world.distance(at: world.stopAtChest + 1)
            #expect(atChest >= 0.8 && atChest <= 1.3)
            #expect(abs(Double(world.advertisedPower) - world.truePower) <= 4)
            // Before the last leg the child stays clear of the chest.
            #expect(world.poses.filter { $0.time < world.stopAtChest - 30 }.allSatisfy { ($0.x * $0.x + $0.y * $0.y).squareRoot() >= 2.9 })
        }
    }

    @Test func theChildWalksAtWalkingSpeedAndTurnsWithinAThirdOfASecond() {
        let world = WalkingWorld(seed: 3)
        for (a, b) in zip(world.poses, world.poses.dropFirst()) {
            let dt = b.time - a.time
            let speed = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot() / dt
            #expect(speed <= 1.5 + 1e-6)
        }
        // A body straight behind costs the full depth, one ahead nothing.
        let behind = WalkingWorld.Pose(time: 0, x: 5, y: 0, heading: 0)
        let ahead = WalkingWorld.Pose(time: 0, x: 5, y: 0, heading: Double.pi)
        #expect(abs(world.bodyShadow(behind) - world.bodyDepth) < 1e-9)
        #expect(world.bodyShadow(ahead) == 0)
        #expect(world.bodyDepth >= 6 && world.bodyDepth <= 15)
    }

    @Test func aSweptSpeedChangesThePaceAndNotTheRadio() {
        // Running (2-3 m/s) and a toddler's pace (0.3-0.6 m/s): every leg within the range,
        // the last one within its lower 70 %; the radio's draws are the standard walk's.
        for seed: UInt64 in 1...8 {
            let standard = WalkingWorld(seed: seed)
            for range: ClosedRange<Double> in [2 ... 3, 0.3 ... 0.6] {
                let world = WalkingWorld(seed: seed, harshness: .init(speed: range))
                var fastest = 0.0, slowest = Double.infinity
                var lastLeg: [Double] = []
                for (a, b) in zip(world.poses, world.poses.dropFirst()) {
                    let speed = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot() / (b.time - a.time)
                    guard speed > 0.05 else { continue }  // standing or turning
                    fastest = max(fastest, speed)
                    slowest = min(slowest, speed)
                    if b.time > world.stopAtChest - 2, b.time <= world.stopAtChest { lastLeg.append(speed) }
                }
                #expect(fastest <= range.upperBound * 1.02 && slowest >= range.lowerBound * 0.98)
                #expect(lastLeg.allSatisfy { $0 <= range.lowerBound + 0.7 * (range.upperBound - range.lowerBound) + 0.01 })
                #expect(!lastLeg.isEmpty)
                #expect(world.advertisedPower == standard.advertisedPower && world.exponent == standard.exponent)
                #expect(world.packetSigma == standard.packetSigma && world.bodyDepth == standard.bodyDepth)
                let atChest = world.distance(at: world.stopAtChest + 1)
                #expect(atChest >= 0.8 && atChest <= 1.3)
            }
        }
        // The default is the standard walk, draw for draw.
        #expect(WalkingWorld(seed: 5, harshness: .init(speed: 0.5 ... 1.5)).readings() == WalkingWorld(seed: 5).readings())
    }

    @Test func bystandersAreHeardBesideTheChestAndDeafWithItInTheOutages() {
        for seed: UInt64 in 1...6 {
            let standard = WalkingWorld(seed: seed, harshness: .init(outage: 10 ... 20))
            let world = WalkingWorld(seed: seed, harshness: .init(outage: 10 ... 20, bystanders: 3))
            // The walk and the chest's beacon are the same with or without them.
            #expect(world.readings() == standard.readings())
            #expect(standard.bystanderReadings().isEmpty)
            let others = world.bystanderReadings()
            #expect(Set(others.map(\.beacon)) == [-1, -2, -3])
            #expect(others.allSatisfy { $0.rssi >= -100 && $0.distance >= 0.1 })
            // Several reports a second in all, in time order.
            #expect(Double(others.count) / world.duration > 1.5)
            #expect(zip(others, others.dropFirst()).allSatisfy { $0.time <= $1.time })
            // The receiver's outages silence them too: a silence of everyone of 10 s or more.
            let all = (world.readings() + others).map(\.time).sorted()
            #expect(zip(all, all.dropFirst()).contains { $1 - $0 >= 10 })
        }
    }

    @Test func packetsSpreadLikeARealRoomWithNegativeLagOneCorrelation() {
        // Standing over the chest (no body, no field): the spread is the channels' and the noise's.
        var sds: [Double] = []
        var lagOnes: [Double] = []
        for seed: UInt64 in [4, 8, 12, 16] {  // 10 Hz walks
            let world = WalkingWorld(seed: seed)
            let still = world.readings().filter { $0.time > world.stopAtChest + 1 }.map { Double($0.rssi) }
            let m = still.reduce(0, +) / Double(still.count)
            let v = still.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(still.count)
            sds.append(v.squareRoot())
            // Lag-1 over consecutive packets (losses make some pairs two apart: still negative).
            let c = zip(still, still.dropFirst()).map { ($0 - m) * ($1 - m) }.reduce(0, +) / Double(still.count - 1)
            lagOnes.append(c / v)
        }
        #expect(sds.allSatisfy { $0 >= 5.5 && $0 <= 8.5 })
        // Per walk -0.05 (offsets of 3 dB in 8 dB of spread) to -0.33 (6 in 6), less with
        // losses; the four together clearly negative.
        #expect(lagOnes.reduce(0, +) / Double(lagOnes.count) < -0.05)
    }

    @Test func approachLegsAreFoundInTheTruth() {
        let world = WalkingWorld(seed: 5)
        let legs = world.approaches()
        #expect(!legs.isEmpty)
        for leg in legs {
            #expect(leg.end - leg.start >= 6)
            #expect(world.distance(at: leg.start) - world.distance(at: leg.end) >= 3 - 0.3)
        }
    }

    /// `--chest-spot`: the chest stands in a fade of its own (a Gaussian per walk), where the
    /// standard world's field fades out; the walk and its other draws are the same.
    @Test func aChestSpotFadesTheChestAndNothingElse() {
        var spotted = WalkingWorld.Harshness.standard
        spotted.chestSpot = 3
        var fades: [Double] = []
        for seed: UInt64 in 1...200 {
            let standard = WalkingWorld(seed: seed), faded = WalkingWorld(seed: seed, harshness: spotted)
            #expect(standard.shadowing(x: 0, y: 0) == 0, "the standard chest reads as the model says")
            fades.append(faded.shadowing(x: 0, y: 0))
            if seed <= 3 {
                #expect(faded.poses == standard.poses)
                #expect(faded.advertisedPower == standard.advertisedPower)
                #expect(faded.shadowing(x: 6, y: 2) == standard.shadowing(x: 6, y: 2), "beyond 3 m the yard's field alone")
            }
        }
        let mean = fades.reduce(0, +) / Double(fades.count)
        let sd = (fades.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(fades.count)).squareRoot()
        #expect(abs(mean) < 0.6 && sd > 2.5 && sd < 3.5, "mean \(mean), sd \(sd)")
    }

    @Test func aKinderRadioChangesTheRadioNotTheWalk() {
        let kind = WalkingWorld.Harshness(spread: 2 ... 3, bodyDepth: 0 ... 0, powerError: 0)
        for seed: UInt64 in [4, 5] {
            let standard = WalkingWorld(seed: seed), explicit = WalkingWorld(seed: seed, harshness: .standard)
            let kinder = WalkingWorld(seed: seed, harshness: kind)
            #expect(standard.readings() == explicit.readings())
            // The same path, stop and rate: only the radio differs.
            #expect(kinder.poses == standard.poses)
            #expect(kinder.stopAtChest == standard.stopAtChest)
            #expect(kinder.advertisingInterval == standard.advertisingInterval)
            #expect(kinder.advertisedPower == Int(kinder.truePower))
            #expect(kinder.bodyDepth == 0)
            #expect(kinder.bodyShadow(WalkingWorld.Pose(time: 0, x: 5, y: 0, heading: 0)) == 0)
            // Standing over the chest, the packets spread 2-3 dB (offsets included), not 6-8.
            let still = kinder.readings().filter { $0.time > kinder.stopAtChest + 1 }.map { Double($0.rssi) }
            let m = still.reduce(0, +) / Double(still.count)
            let sd = (still.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(still.count)).squareRoot()
            #expect(sd >= 1.5 && sd <= 3.5)
        }
    }

    @Test func theSetUpsCalibrationHearsTheBeaconAtOneMetreWithTheWalksRadio() {
        for seed: UInt64 in [4, 5, 6, 7] {  // 10, 4, 2 and 1 Hz
            let world = WalkingWorld(seed: seed)
            let held = world.calibrationReadings(seconds: 120)
            let rate = 1 / world.advertisingInterval
            // The walk's loss (10-30 %) and rate.
            #expect(Double(held.count) > 0.6 * 120 * rate && Double(held.count) < 120 * rate + 1)
            #expect(held.allSatisfy { $0.distance >= 0.9 && $0.distance <= 1.1 && $0.measuredPower == world.advertisedPower })
            // Its mean is the true power at 1 m (no spot shadowing by default): the channels
            // average out, the 0.9-1.1 m is under 1 dB.
            let mean = Double(held.map(\.rssi).reduce(0, +)) / Double(held.count)
            #expect(abs(mean - world.truePower) < 1 + 3 * 8 / Double(held.count).squareRoot())
            // A spot's shadowing moves the whole hold, the packets stay the same draws.
            let shadowed = world.calibrationReadings(seconds: 120, spotSigma: 3)
            #expect(shadowed.count == held.count && shadowed.map(\.time) == held.map(\.time))
            #expect(Set(zip(held, shadowed).map { $0.rssi - $1.rssi }).count <= 3)
        }
    }

    /// More beacons in the chest: each its own id, power error and draws at the walk's rate;
    /// the walk and the first beacon's readings the same as with one.
    @Test func moreBeaconsInTheChestLeaveTheWalkAndTheFirstBeaconAlone() {
        for seed: UInt64 in [4, 7] {  // 10 and 1 Hz
            let one = WalkingWorld(seed: seed)
            var harshness = WalkingWorld.Harshness.standard
            harshness.chestBeacons = 3
            let three = WalkingWorld(seed: seed, harshness: harshness)
            #expect(three.poses == one.poses && three.otherBeacons.count == 2 && one.otherBeacons.isEmpty)
            let readings = three.readings()
            #expect(readings.filter { $0.beacon == 0 } == one.readings())
            #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.time <= $1.time })
            let rate = 1 / three.advertisingInterval
            for (i, other) in three.otherBeacons.enumerated() {
                let own = readings.filter { $0.beacon == i + 1 }
                #expect(own.allSatisfy { $0.measuredPower == other.advertisedPower })
                #expect(abs(other.advertisedPower - Int(three.truePower)) <= 4)
                #expect(Double(own.count) > 0.5 * three.duration * rate && Double(own.count) < three.duration * rate + 1)
                // Its own noise: not the first beacon's readings again.
                #expect(own.prefix(50).map(\.rssi) != readings.filter { $0.beacon == 0 }.prefix(50).map(\.rssi))
            }
        }
    }
}
