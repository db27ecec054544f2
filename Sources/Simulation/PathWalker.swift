#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child's path through the yard, sampled every `WalkingWorld.poseStep` s: straight legs
/// between waypoints, a turn at each (the heading swings within `WalkingWorld.turnSeconds`),
/// pauses with more turns, and a last leg that stops over a chest. The walking world (one
/// chest) and the trail walks (`TrailWalk`: one chest after another) draw their paths with
/// it.
struct PathWalker {
    private(set) var poses: [WalkingWorld.Pose] = []
    private(set) var t = 0.0
    private(set) var x: Double
    private(set) var y: Double
    private(set) var heading: Double

    init(x: Double, y: Double, heading: Double) {
        self.x = x
        self.y = y
        self.heading = heading
        record()
    }

    private mutating func record() { poses.append(WalkingWorld.Pose(time: t, x: x, y: y, heading: heading)) }

    private static func uniform(_ range: ClosedRange<Double>, _ random: inout SplitMix64) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }

    /// Turns to `target` within `turnSeconds` (shortest way), standing.
    mutating func turn(to target: Double) {
        var delta = (target - heading).truncatingRemainder(dividingBy: 2 * Double.pi)
        if delta > Double.pi { delta -= 2 * Double.pi }
        if delta < -Double.pi { delta += 2 * Double.pi }
        let steps = Int((WalkingWorld.turnSeconds / WalkingWorld.poseStep).rounded())
        let start = heading
        for i in 1...steps {
            t += WalkingWorld.poseStep
            heading = start + delta * Double(i) / Double(steps)
            record()
        }
    }

    mutating func stand(_ seconds: Double) {
        let steps = Int((seconds / WalkingWorld.poseStep).rounded())
        for _ in 0..<steps {
            t += WalkingWorld.poseStep
            record()
        }
    }

    /// Turns towards (`tx`, `ty`) and walks there at `speed` m/s.
    mutating func walk(toX tx: Double, y ty: Double, speed: Double) {
        let dx = tx - x, dy = ty - y
        let length = (dx * dx + dy * dy).squareRoot()
        guard length > 0.01 else { return }
        turn(to: atan2(dy, dx))
        let steps = max(1, Int((length / speed / WalkingWorld.poseStep).rounded()))
        let (x0, y0) = (x, y)
        for i in 1...steps {
            t += WalkingWorld.poseStep
            x = x0 + dx * Double(i) / Double(steps)
            y = y0 + dy * Double(i) / Double(steps)
            record()
        }
    }

    /// Whether the leg from (`ax`, `ay`) to (`bx`, `by`) passes at least
    /// `WalkingWorld.waypointClearance` m from `spot`.
    private static func clear(of spot: (x: Double, y: Double), _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> Bool {
        let (ax, ay, bx, by) = (ax - spot.x, ay - spot.y, bx - spot.x, by - spot.y)
        let dx = bx - ax, dy = by - ay
        let length2 = dx * dx + dy * dy
        let s = length2 > 0 ? max(0, min(1, -(ax * dx + ay * dy) / length2)) : 0
        let px = ax + s * dx, py = ay + s * dy
        return (px * px + py * py).squareRoot() >= WalkingWorld.waypointClearance
    }

    /// Wanders until `end` s: half the waypoints 3-6 m from `home` (the child homes in, then
    /// strays), half anywhere in the yard; every waypoint and leg at least
    /// `WalkingWorld.waypointClearance` m from each of `spots` (the chests not to be found
    /// yet); after half the legs a pause of 2-15 s, looking around.
    mutating func wander(until end: Double, around home: (x: Double, y: Double), clearOf spots: [(x: Double, y: Double)],
                         speed: ClosedRange<Double>, random: inout SplitMix64) {
        let clearance = WalkingWorld.waypointClearance
        while t < end {
            var tx = 0.0, ty = 0.0
            var found = false
            for _ in 0..<50 {
                if random.nextUniform() < 0.5 {
                    let a = Self.uniform(0 ... 2 * Double.pi, &random), r = Self.uniform(clearance ... 6, &random)
                    tx = home.x + r * cos(a); ty = home.y + r * sin(a)
                } else {
                    tx = Self.uniform(-WalkingWorld.yardHalfWidth ... WalkingWorld.yardHalfWidth, &random)
                    ty = Self.uniform(-WalkingWorld.yardHalfDepth ... WalkingWorld.yardHalfDepth, &random)
                }
                let far = spots.allSatisfy { (($0.x - tx) * ($0.x - tx) + ($0.y - ty) * ($0.y - ty)).squareRoot() >= clearance }
                let long = ((tx - x) * (tx - x) + (ty - y) * (ty - y)).squareRoot() >= 2
                if far && long && spots.allSatisfy({ Self.clear(of: $0, x, y, tx, ty) }) { found = true; break }
            }
            guard found else { stand(1); continue }
            walk(toX: tx, y: ty, speed: Self.uniform(speed, &random))
            if random.nextUniform() < 0.5 {
                // A pause: the child looks around.
                var left = Self.uniform(2 ... 15, &random)
                while left > 0 {
                    let hold = min(left, Self.uniform(1 ... 5, &random))
                    stand(hold)
                    left -= hold
                    if left > 0 { turn(to: heading + Self.uniform(-2.5 ... 2.5, &random)) }
                }
            }
        }
    }

    /// The last leg: to `chest`, stopping over it 0.1-0.4 m short (the hunter held out in
    /// front), from the lower 70 % of `speed` (a child slows as it homes in).
    mutating func homeIn(on chest: (x: Double, y: Double), speed: ClosedRange<Double>, random: inout SplitMix64) {
        let approach = atan2(chest.y - y, chest.x - x)
        let reach = Self.uniform(0.1 ... 0.4, &random)
        walk(toX: chest.x - reach * cos(approach), y: chest.y - reach * sin(approach),
             speed: Self.uniform(speed.lowerBound ... speed.lowerBound + 0.7 * (speed.upperBound - speed.lowerBound), &random))
    }
}
