import Bluetooth
import Game
import Hunt
import Ranging
import Testing

/// A trail step's own reward: read and shown after its find as a box's would be, with no box
/// on the air (nothing listened for, no active scan).
@Suite struct StepRewardTests {
    @Test func aStepsOwnRewardIsReadWithoutABox() throws {
        let steps = [
            TrailStep(region: Region(name: "chest", uuid: treasureUUID, major: 1, minor: 1), reward: "Look under the bed"),
            TrailStep(region: Region(name: "far chest", uuid: treasureUUID, major: 9)),
        ]
        var hunt = HuntDirector.Configuration(region: "chest")
        hunt.trail = steps
        var d = CoreDriver(HunterCore.Configuration(regions: steps.map(\.region), hunt: hunt, announce: HunterCore.Announcement(hunterID: 4)))
        d.feed(.radioReady(afterOutage: false), at: 0)
        d.feed(.speechFinished, at: 2)
        d.feed(.speechFinished, at: 6)
        d.hear(rssi: -45, until: 20)
        #expect(d.effects.lines.contains(.treasureFound))
        #expect(d.effects.contains(.reward("Look under the bed", address: nil)))
        #expect(!d.effects.contains(.scanActively(true)), "a box's reward was listened for")
        #expect(!d.core.listensForReward)
        // Read once its slow reading is ready, after the found line; then the next clue.
        let reward = d.feed(.rewardReady, at: 21)
        d.feed(.speechFinished, at: 22)
        let after = d.feed(.speechFinished, at: 30)
        #expect((reward + after).lines.contains(.reward) || d.effects.lines.contains(.reward))
        #expect(d.effects.lines.last == .clue, "\(d.effects.lines)")
    }
}
