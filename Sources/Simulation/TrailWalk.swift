#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child walking a trail of chests (`hunt.trail`, in order) through the walking world's yard:
/// from a start 7-11 m from the first chest, it wanders 1-3 minutes (waypoints as in
/// `WalkingWorld`, near the chest it is after and clear of every chest not found yet), walks
/// to the chest, stands over it `stand` s (the find, the next clue) and goes on to the next;
/// at the last it stands `WalkingWorld.atChestSeconds`. The chests lie at least `spacing` m
/// apart (a family's garden: 4 m), each a tag of its own (power error, channels, shadowing
/// field, loss, and its rate: 10, 4, 2, 1 Hz in turn along the trail unless `Harshness.rate`);
/// the yard (exponent, walls, the child's body and hand height, the shared outages) is one.
/// Each chest is heard as a `WalkingWorld` of the same path (`chests[k]`), so the trail's
/// radio is the walking world's radio, chest for chest.
///
/// The path is open: the child goes on after `stand` s whether or not the hunter said the
/// find (a child told nothing would stay; a missed find is then the rest of the trail
/// unfound by the hunter's rules, which the scoring says as it is).
public struct TrailWalk: Sendable {
    public let seed: UInt64
    /// Where the chests lie in the yard (m), in the trail's order.
    public let spots: [Spot]
    /// Chest k as the hunter hears it (beacon k of `readings`), in its own frame.
    public let chests: [WalkingWorld]
    /// When the child stops over chest k, and when it walks on (the last: the walk's end).
    public let stops: [Double]
    public let leaves: [Double]
    public let duration: Double

    public struct Spot: Sendable, Equatable {
        public var x: Double
        public var y: Double

        /// Metres from (`x`, `y`) on the ground.
        public func distance(x: Double, y: Double) -> Double {
            let dx = self.x - x, dy = self.y - y
            return (dx * dx + dy * dy).squareRoot()
        }
    }

    /// How long the child stands at a chest that is not the last (s): as long as at the
    /// last (`WalkingWorld.atChestSeconds`), the time a walk gives its find (a 1 Hz tag's
    /// comes 5-15 s after the stop), its line and the next clue.
    public static let defaultStand = WalkingWorld.atChestSeconds

    public init(seed: UInt64, chests count: Int, spacing: Double = 4, stand: Double = TrailWalk.defaultStand,
                harshness: WalkingWorld.Harshness = .standard) {
        self.seed = seed
        var seeder = SplitMix64(seed: seed ^ 0x7A11)
        var random = SplitMix64(seed: seeder.next())
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
        }
        let count = max(1, count)
        let exponent = uniform(2.0 ... 2.4)
        let handHeight = uniform(0.8 ... 1.2)
        let body = harshness.bodyDepth
        let bodyDepth = body.lowerBound + (body.upperBound - body.lowerBound) * uniform(0 ... 1)
        // The chests: inside the yard with 2 m to spare, `spacing` apart (relaxed by 10 % after
        // 200 tries, for a crowded trail).
        var spots: [Spot] = []
        var gap = spacing
        var tries = 0
        while spots.count < count {
            let spot = Spot(x: uniform(-(WalkingWorld.yardHalfWidth - 2) ... WalkingWorld.yardHalfWidth - 2),
                            y: uniform(-(WalkingWorld.yardHalfDepth - 2) ... WalkingWorld.yardHalfDepth - 2))
            tries += 1
            if tries % 200 == 0 { gap *= 0.9 }
            guard spots.allSatisfy({ $0.distance(x: spot.x, y: spot.y) >= gap }) else { continue }
            spots.append(spot)
        }
        self.spots = spots
        // One or two walls (a shed, a hedge), none within 4 m of a chest's centre.
        var walls: [WalkingWorld.Wall] = []
        for _ in 0..<(random.nextUniform() < 0.5 ? 1 : 2) {
            let cx = uniform(-9 ... 9), cy = uniform(-6 ... 6)
            guard spots.allSatisfy({ $0.distance(x: cx, y: cy) > 4 }) else { continue }
            let angle = uniform(0 ... Double.pi), half = uniform(1.5 ... 3)
            walls.append(WalkingWorld.Wall(from: (cx - half * cos(angle), cy - half * sin(angle)),
                                           to: (cx + half * cos(angle), cy + half * sin(angle)), loss: uniform(5 ... 10)))
        }
        // The path: a start 7-11 m from the first chest, inside the yard and clear of every
        // chest (the yard's far side when no draw of 50 is).
        let first = spots[0]
        var start = (x: first.x < 0 ? WalkingWorld.yardHalfWidth : -WalkingWorld.yardHalfWidth, y: 0.0)
        for _ in 0..<50 {
            let angle = uniform(0 ... 2 * Double.pi), distance = uniform(7 ... 11)
            let (x, y) = (first.x + distance * cos(angle), first.y + distance * sin(angle))
            let clear = spots.allSatisfy { $0.distance(x: x, y: y) >= WalkingWorld.waypointClearance }
            if abs(x) <= WalkingWorld.yardHalfWidth && abs(y) <= WalkingWorld.yardHalfDepth && clear {
                start = (x, y)
                break
            }
        }
        var path = PathWalker(x: start.x, y: start.y, heading: uniform(0 ... 2 * Double.pi))
        var stops: [Double] = [], leaves: [Double] = []
        for k in spots.indices {
            let chest = (x: spots[k].x, y: spots[k].y)
            let pending = spots[k...].map { (x: $0.x, y: $0.y) }
            path.wander(until: path.t + uniform(60 ... 180), around: chest, clearOf: pending, speed: harshness.speed, random: &random)
            path.homeIn(on: chest, speed: harshness.speed, random: &random)
            stops.append(path.t)
            path.stand(k == spots.count - 1 ? WalkingWorld.atChestSeconds : stand)
            leaves.append(path.t)
        }
        self.stops = stops
        self.leaves = leaves
        duration = path.t
        let outages = WalkingWorld.sharedOutages(until: duration, lengths: harshness.outage, random: &random)
        let poses = path.poses
        chests = spots.indices.map { k in
            let rate = harshness.rate ?? WalkingWorld.rates[Int((seed + UInt64(k)) % UInt64(WalkingWorld.rates.count))]
            return WalkingWorld(chestAt: (spots[k].x, spots[k].y), seed: seeder.next(), harshness: harshness, rate: rate,
                                exponent: exponent, handHeight: handHeight, bodyDepth: bodyDepth, walls: walls, outages: outages,
                                poses: poses, stopAtChest: stops[k])
        }
    }

    /// Every report the hunter's scanner delivers, in time order: chest k's tag is beacon k.
    public func readings() -> [SimulatedReading] {
        var reports: [SimulatedReading] = []
        for (k, chest) in chests.enumerated() {
            reports += chest.readings().map { r in
                var r = r
                r.beacon = k
                return r
            }
        }
        return reports.sorted { ($0.time, $0.beacon) < ($1.time, $1.beacon) }
    }
}
