#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Hunt
import Ranging
import Simulation
import Testing

@Suite struct CompassSpinTests {
    /// A child turning at `omega` °/s from `heading0`, the treasure at bearing 0: the body's
    /// shadow `depth`·(1 - cos θ)/2 on 20 dB of distance, with `spread` dB of noise.
    static func loss(at t: Double, omega: Double, heading0: Double, depth: Double, spread: Double, noise: inout GaussianSource) -> Double {
        let theta = (heading0 + omega * t) * Double.pi / 180
        return 20 + depth * (1 - cos(theta)) / 2 + spread * noise.nextGaussian()
    }

    @Test func theStopIsCalledSoThatTheChildEndsFacingTheTreasure() {
        for (omega, heading0) in [(40.0, 100.0), (-55.0, 10.0), (30.0, 250.0)] {
            var spin = CompassSpin(at: 0)
            var noise = GaussianSource(seed: 3)
            var called: Double?
            var t = 0.0
            while t < 40, called == nil {
                t += 0.1
                if spin.heard(pathLoss: Self.loss(at: t, omega: omega, heading0: heading0, depth: 12, spread: 2, noise: &noise), at: t) { called = t }
            }
            #expect(called != nil, "at \(omega)°/s: a call")
            let at = called
            // The child stops `latency` after the call: it faces within 20° of the treasure.
            var facing = (heading0 + omega * ((at ?? 0) + spin.configuration.latency)).truncatingRemainder(dividingBy: 360)
            if facing < 0 { facing += 360 }
            #expect(min(facing, 360 - facing) < 20, "at \(omega)°/s from \(heading0)°: facing \(facing)°")
        }
    }

    @Test func noTurnInTheLevelIsNoCall() {
        var spin = CompassSpin(at: 0)
        var noise = GaussianSource(seed: 9)
        var t = 0.0
        var called = false
        while t < 40 {
            t += 0.1
            if spin.heard(pathLoss: 25 + 0.2 * noise.nextGaussian(), at: t) { called = true }
        }
        #expect(!called && spin.phase == .done, "a level without a body's swing: nothing said, given up")
    }

    @Test func tooFewPacketsIsNoCall() {
        var spin = CompassSpin(at: 0)
        _ = spin.heard(pathLoss: 20, at: 1)
        _ = spin.heard(pathLoss: 30, at: 5)
        #expect(!spin.tick(at: 17) && spin.phase == .done)
    }

    @Test func aStuckChildInsideTheRegionIsAskedToSpinAfterTheHintAndTheStopIsSaidAtOnce() {
        var configuration = HuntDirector.Configuration(region: "chest")
        configuration.trail = [TrailStep(region: Region(name: "chest", uuid: spinUUID, major: 1), clue: .text("Under the bed."))]
        configuration.trailRules.hintAfter = 20
        var d = HuntDirector(configuration: configuration)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 2)  // the start line over: the clue
        _ = d.handle(.speechFinished, at: 5)
        _ = d.handle(.ranging(.regionState(time: 6, region: "chest", state: .inside)), at: 6)
        _ = d.handle(.speechFinished, at: 8)
        var said: [HuntAction] = []
        var t = 8.0
        while t < 40 {
            t += 0.5
            var actions = d.tick(at: t)
            said += actions
            // Each line is over 0.2 s after it starts (and the one that follows it).
            while actions.contains(where: { if case .tell = $0 { true } else if case .say = $0 { true } else { false } }) {
                actions = d.handle(.speechFinished, at: t + 0.2)
                said += actions
            }
        }
        let events = said.compactMap { a -> String? in
            switch a {
            case let .say(e, _), let .tell(e, _, _): e.rawValue
            case .watchSpin: "watch"
            default: nil
            }
        }
        #expect(Array(events.prefix(3)) == ["hint", "spin", "watch"], "\(events)")
        #expect(d.handle(.spinPeaked, at: 41) == [.say(.spinStop, interrupt: false)])
    }

    /// A child who finds the treasure while its hint is said is not then asked to spin for
    /// it: the found line, then the next step's clue (trail walks: the spin came between
    /// them, about the treasure just found).
    @Test func aTreasureFoundDuringItsHintIsNoSpinAfterwards() {
        var configuration = HuntDirector.Configuration(region: "chest")
        let next = Region(name: "next", uuid: spinUUID, major: 2)
        configuration.trail = [TrailStep(region: Region(name: "chest", uuid: spinUUID, major: 1), clue: .text("Under the bed.")),
                               TrailStep(region: next, clue: .text("In the shed."))]
        configuration.trailRules.hintAfter = 20
        configuration.foundHold = 0.5
        var d = HuntDirector(configuration: configuration)
        _ = d.handle(.started, at: 0)
        _ = d.handle(.speechFinished, at: 2)
        _ = d.handle(.speechFinished, at: 5)
        _ = d.handle(.ranging(.regionState(time: 6, region: "chest", state: .inside)), at: 6)
        _ = d.handle(.speechFinished, at: 8)
        var said: [String] = []
        func note(_ actions: [HuntAction]) {
            for case let .say(e, _) in actions { said.append(e.rawValue) }
            for case let .tell(e, _, _) in actions { said.append(e.rawValue) }
        }
        var t = 8.0
        while said.last != "hint" {
            t += 0.5
            note(d.tick(at: t))
        }
        // Mid-hint the child is at the chest.
        let key = BeaconKey(uuid: spinUUID, major: 1, minor: 1)
        note(d.handle(.ranging(.proximity(time: t + 1, key: key, from: .far, to: .immediate)), at: t + 1))
        note(d.tick(at: t + 2))
        #expect(said == ["hint", "treasure-found"], "\(said)")
        note(d.handle(.speechFinished, at: t + 4))
        note(d.handle(.rewardAbsent, at: t + 5))
        note(d.handle(.speechFinished, at: t + 8))
        note(d.tick(at: t + 9))
        #expect(said == ["hint", "treasure-found", "clue"], "\(said)")
    }
}

private let spinUUID = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
