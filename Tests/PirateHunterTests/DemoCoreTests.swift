import Bluetooth
import GameKey
import Game
import Hunt
import Ranging
import Testing

@testable import PirateHunter

/// The demo's trail through `HunterCore` alone, as swift-nio's EmbeddedChannel is driven:
/// the demo world's packets, a tick every 0.25 s, each line "played" for a fixed time, the
/// box's scan response while the core scans actively. No voice, no ALSA, no event loop:
/// the whole two-minute walk in milliseconds, and the same line order the appliance says
/// (`DemoEndToEndTests` runs the binary for the wiring).
@Suite struct DemoCoreTests {
    struct Heard {
        var lines: [(time: Double, event: LineEvent)] = []
        var effects: [HunterCore.Effect] = []
    }

    /// How long a line takes to say, about as long as the demo's voice takes: the reward is
    /// read slowly and spelled, a clue is a sentence or two.
    static func seconds(_ event: LineEvent) -> Double {
        switch event {
        case .reward: 27
        case .clue: 8
        case .finale, .outOfOrder: 6
        case .rivalFound, .hint, .spin: 4
        default: 3
        }
    }

    /// The demo's trail, hunted by the core.
    static func huntTheDemoTrail() -> Heard {
        var setup = HunterConfiguration().hunterSetup()
        DemoWorld.huntItsTrail(&setup)
        // Paired as the demo pairs its sides: one key for the hunter, the box and hunter 2.
        let auth = DemoWorld.gameKey.authenticator
        var core = HunterCore(configuration: setup.game, authenticator: auth)
        let boxTag = TreasureSignals.tag(of: DemoWorld.chest(1))
        let world = DemoWorld(origin: 0)
        var heard = Heard()
        var speechEnds: Double?
        var scanning = false
        var rewardAsked = false
        func take(_ effects: [HunterCore.Effect], at t: Double) {
            heard.effects += effects
            for effect in effects {
                switch effect {
                case let .say(event), let .tell(event, _):
                    heard.lines.append((t, event))
                    speechEnds = t + seconds(event)
                case let .scanActively(on): scanning = on
                case .reward: rewardAsked = true
                default: break
                }
            }
        }
        take(core.handle(.radioReady(afterOutage: false), at: 0), at: 0)
        let addresses = [DemoWorld.boxAddress] + DemoWorld.tagAddresses
        var packet = 0
        var t = 0.0
        while t < DemoWorld.trailLength + 30, !heard.effects.contains(.stop) {
            t = ((t + 0.1) * 1000).rounded() / 1000
            if let ends = speechEnds, ends <= t {
                speechEnds = nil
                take(core.handle(.speechFinished, at: ends), at: ends)
            }
            if rewardAsked {
                rewardAsked = false
                take(core.handle(.rewardReady, at: t), at: t)
            }
            for number in 1...3 {
                packet += 1
                guard let rssi = world.rssi(atDistance: world.distance(toChest: number, at: t), channel: packet % 3) else { continue }
                let beacon = Beacon.iBeacon(DemoWorld.chest(number))
                let sighting = BeaconSighting(time: t, address: addresses[number - 1], addressType: 0, rssi: rssi, beacon: beacon, report: .legacy)
                take(core.handle(.sighting(sighting), at: t), at: t)
            }
            if t >= DemoWorld.rivalFindsAt {
                let rival = GameSignals.announcement(
                    GameSignals.Announcement(hunterID: 2, treasureTag: TreasureSignals.tag(of: DemoWorld.chest(2)), challenge: 7), by: auth)
                let sighting = BeaconSighting(time: t, address: DemoWorld.rivalAddress, addressType: 0, rssi: -70, beacon: .iBeacon(rival), report: .legacy)
                take(core.handle(.sighting(sighting), at: t), at: t)
            }
            // The box seals its reward for the hunter's current challenge (its announcement).
            let me = GameSignals.Announcement(hunterID: setup.announce?.hunterID ?? 1, treasureTag: boxTag, challenge: core.challenge)
            if scanning, let response = try? GameSignals.sealedScanResponse(reward: DemoWorld.reward, boxTag: boxTag, to: me, by: auth) {
                let report = AdvertisingReport(
                    format: .legacy, eventType: 0x04, addressType: 0, address: DemoWorld.boxAddress, rssi: -50, data: response[...])
                take(core.handle(.report(report), at: t), at: t)
            }
            if Int((t * 1000).rounded()) % 250 == 0 { take(core.handle(.tick, at: t), at: t) }
        }
        return heard
    }

    @Test func theDemoTrailIsSaidInTheAppliancesOrder() {
        let heard = Self.huntTheDemoTrail()
        let approach: Set<LineEvent> = [.warmer, .colder, .regionEntered, .regionLeft, .proximityFar, .proximityNear, .proximityImmediate]
        #expect(heard.lines.map(\.event).filter { !approach.contains($0) } == [
            // Out of order: the clue of chest 2 again; hunter 2's find after it; stuck there: a
            // hint, then a compass spin (chest 2 is heard).
            .startup, .clue, .treasureFound, .reward, .clue, .outOfOrder, .clue, .rivalFound, .hint, .spin, .treasureFound, .clue, .treasureFound,
            .finale,
        ])
        // The reward is read from the box (chest 1's address) and shown once; hunter 2's find
        // and this hunter's three are the standings, in order.
        let rewards = heard.effects.compactMap { if case let .reward(text, address) = $0 { return (text, address) } else { return nil } }
        #expect(rewards.map(\.0) == [DemoWorld.reward] && rewards.map(\.1) == [DemoWorld.boxAddress])
        let last = heard.effects.compactMap { if case let .output(.standings(_, f)) = $0 { return f } else { return nil } }.last
        #expect(last?.map(\.hunter) == [1, 2, 1, 1] && last?.map(\.treasure) == [1, 2, 2, 3])
        // Found, then announced to the box and back to passive once the reward is in.
        let controller = heard.effects.filter {
            switch $0 {
            case .scanActively, .advertise: true
            default: false
            }
        }
        #expect(controller.first == .scanActively(true))
        #expect(controller.dropFirst().first.map { if case .advertise(.some) = $0 { true } else { false } } == true)
        #expect(heard.effects.contains(.stop), "the demo stops after the finale")
    }

    @Test func theSameInputsAreTheSameHunt() {
        let a = Self.huntTheDemoTrail(), b = Self.huntTheDemoTrail()
        #expect(a.effects == b.effects)
    }
}
