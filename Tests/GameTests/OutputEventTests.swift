import Bluetooth
import Game
import Hunt
import Ranging
import Testing

@Suite struct OutputEventTests {
    @Test func everyEventHasItsContractName() {
        let key = BeaconKey(uuid: HunterCore.defaultTreasureUUID, major: 1, minor: 2)
        let events: [OutputEvent] = [
            .ranging(.trend(time: 1, region: "r", trend: .warmer)),
            .say(time: 2, event: .warmer, text: "Warmer"),
            .sound(time: 3, .arrr),
            .reward(time: 4, address: nil, reward: "GOLD"),
            .greet(time: 5, hunter: 7, reward: nil),
            .standings(time: 6, [Standings.Finisher(hunter: 2, treasure: 1, time: 5.5)]),
            .ranging(.nearest(time: 7, region: "r", key: key)),
        ]
        #expect(events.map(\.jsonLine) == [
            #"{"t": 1.0, "event": "trend", "region": "r", "trend": "warmer"}"#,
            #"{"t": 2.0, "event": "say", "event_name": "warmer", "text": "Warmer"}"#,
            #"{"t": 3.0, "event": "sound", "name": "arrr"}"#,
            #"{"t": 4.0, "event": "reward", "reward": "GOLD"}"#,
            #"{"t": 5.0, "event": "greet", "hunter": 7}"#,
            #"{"t": 6.0, "event": "standings", "finishers": [{"hunter": 2, "treasure": 1, "t": 5.5}]}"#,
            #"{"t": 7.0, "event": "nearest", "region": "r", "uuid": "50495241-5445-2D48-554E-544552000000", "major": 1, "minor": 2}"#,
        ])
    }
}
