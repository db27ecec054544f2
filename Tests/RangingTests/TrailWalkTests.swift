import Testing
import Simulation
#if canImport(Glibc)
import Glibc
#endif

@Suite struct TrailWalkTests {
    @Test func aSeedGivesTheSameTrailEveryTime() {
        let a = TrailWalk(seed: 5, chests: 3), b = TrailWalk(seed: 5, chests: 3), c = TrailWalk(seed: 6, chests: 3)
        #expect(a.readings() == b.readings())
        #expect(a.spots == b.spots)
        #expect(a.readings() != c.readings())
        #expect(a.spots != c.spots)
    }

    @Test func theChildVisitsEveryChestInOrderAndStandsOverEach() {
        for seed: UInt64 in 1...10 {
            let trail = TrailWalk(seed: seed, chests: 3)
            #expect(trail.chests.count == 3 && trail.spots.count == 3)
            // The chests lie apart and in the yard.
            for i in trail.spots.indices {
                for j in trail.spots.indices where j > i {
                    let (a, b) = (trail.spots[i], trail.spots[j])
                    #expect(((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot() >= 4)
                }
                #expect(abs(trail.spots[i].x) <= WalkingWorld.yardHalfWidth && abs(trail.spots[i].y) <= WalkingWorld.yardHalfDepth)
            }
            // One chest after another: 1-3 minutes of wandering, then 30 s over each.
            for k in trail.chests.indices {
                let from = k == 0 ? 0 : trail.leaves[k - 1]
                #expect(trail.stops[k] - from >= 60)
                #expect(abs(trail.leaves[k] - trail.stops[k] - TrailWalk.defaultStand) < 0.1)
                let chest = trail.chests[k]
                #expect(chest.stopAtChest == trail.stops[k])
                let atChest = chest.distance(at: trail.stops[k] + 1)
                #expect(atChest >= 0.8 && atChest <= 1.3)
                // While wandering towards it the child stays clear of it and of the chests
                // after it (it has not found them yet).
                for (j, later) in trail.chests.enumerated() where j >= k {
                    let wandering = later.poses.filter { $0.time >= from && $0.time < trail.stops[k] - 40 }
                    #expect(wandering.allSatisfy { ($0.x * $0.x + $0.y * $0.y).squareRoot() >= 2.9 }, "seed \(seed) chest \(k + 1): chest \(j + 1)")
                }
            }
            #expect(trail.duration == trail.leaves.last)
            // The start lies 7-11 m from the first chest.
            let start = trail.chests[0].distance(at: 0)
            #expect(start >= 7 && start <= 11.1)
        }
    }

    @Test func eachChestIsATagOfItsOwnHeardOnTheOnePath() {
        let trail = TrailWalk(seed: 3, chests: 3)
        let readings = trail.readings()
        #expect(Set(readings.map(\.beacon)) == [0, 1, 2])
        #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.time <= $1.time })
        for (k, chest) in trail.chests.enumerated() {
            // The same path, seen from the chest: a pose is the yard's less the chest's spot.
            let other = trail.chests[(k + 1) % 3]
            for i in stride(from: 0, to: chest.poses.count, by: 997) {
                let (p, q) = (chest.poses[i], other.poses[i])
                #expect(abs(p.x + trail.spots[k].x - q.x - trail.spots[(k + 1) % 3].x) < 1e-9)
                #expect(p.heading == q.heading && p.time == q.time)
            }
            // Each report's distance is its own chest's.
            for r in readings.filter({ $0.beacon == k }).prefix(200) {
                #expect(abs(r.distance - chest.distance(at: r.time)) < 1e-9)
            }
            #expect(abs(Double(chest.advertisedPower) - chest.truePower) <= 4)
            // Over its chest the beacon is in sight: no body, no field.
            let t = trail.stops[k] + 5, p = chest.pose(at: t)
            #expect(chest.bodyShadow(p) == 0 && chest.shadowing(x: p.x, y: p.y) == 0)
        }
        // The yard is one (its exponent, the child's hand height); the tags are not.
        #expect(Set(trail.chests.map(\.exponent)).count == 1 && Set(trail.chests.map(\.handHeight)).count == 1)
        #expect(Set(trail.chests.map(\.channelOffsets)).count == 3)
    }

    @Test func aCrowdedGardenStillPlacesEveryChest() {
        // Six chests 15 m apart do not fit the yard: the spacing gives way, the trail is walked.
        let trail = TrailWalk(seed: 9, chests: 6, spacing: 15)
        #expect(trail.spots.count == 6)
        #expect(trail.stops == trail.stops.sorted() && trail.stops.count == 6)
    }
}
