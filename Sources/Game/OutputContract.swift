import Bluetooth
import FoundationEssentials
import Hunt
import Ranging

extension OutputEvent {
    /// One example of every line of the contract, with who prints it: the README's table
    /// of JSON lines is made from these (`contractMarkdown`), and a test keeps the two equal.
    public static let contractExamples: [(event: OutputEvent, note: String)] = {
        let uuid = UUID(uuidString: "494E5445-4C4C-4942-4541-434F4E000001") ?? HunterCore.defaultTreasureUUID
        let key = BeaconKey(uuid: uuid, major: 20594, minor: 62207)
        let address = BDAddress(bytes: (0xAB, 0x6F, 0xBF, 0x38, 0xC1, 0xA4))
        let region = RegionID(regionText(uuid: uuid, major: key.major, minor: key.minor))
        let beacon = IBeacon(uuid: uuid, major: key.major, minor: key.minor, measuredPower: -62)
        let range = RangeReport(time: 2.659749, key: key, rssi: -69.5, distance: DistanceEstimate(meters: 2.39, logSigma: 1.2), proximity: .near)
        return [
            (.sighting(BeaconSighting(time: 0.696926, address: address, addressType: 0, rssi: -49, beacon: .iBeacon(beacon), report: .legacy)),
             "scan, replay: a beacon heard (AltBeacons add `manufacturer`; Eddystone-UID has `namespace` and `instance`, Eddystone-URL `url`; `rssi` is null when the controller reports 127; `region` is the text that hunts exactly that beacon)"),
            (.ranging(.range(range)), "at most once a second per beacon; a last one with `distance` null and `proximity` unknown when it is lost"),
            (.ranging(.proximity(time: 3.1, key: key, from: .unknown, to: .near)), "a beacon of a hunted region changed class"),
            (.ranging(.regionState(time: 4.25, region: region, state: .inside)), "the region's first state, once"),
            (.ranging(.regionEnter(time: 10.4, region: region)), "the region entered"),
            (.ranging(.regionExit(time: 31.2, region: region)), "the region left"),
            (.ranging(.nearest(time: 10.4, region: region, key: key)), "the region's nearest beacon changed"),
            (.ranging(.trend(time: 12.8, region: region, trend: .warmer)), "`warmer` or `colder`"),
            (.ranging(.closerArrival(time: 16.5, key: key)), "a beacon at hand (`immediate`) came much nearer still: where it was at hand before was short of it (a hunt without a trail says its find again)"),
            (.say(time: 12.8, event: .warmer, text: "Warmer, matey, warmer!"), "a line said (`event_name`: the hunt event; a trail's lines are `clue`, `hint`, `out-of-order`, `rival-found`, `finale`)"),
            (.sound(time: 10.4, .arrr), "a sound played"),
            (.detector(time: 11.3, rate: 1.26), "hunt: the treasure detector's clicks a second changed (0: silent)"),
            (.reward(time: 18.1, address: address, reward: "ARRR-GOLD-2026"), "hunt: the treasure's reward, read after the find; scan --active: a treasure's scan response"),
            (.greet(time: 19.0, hunter: 7, reward: "ARRR-GOLD-2026"), "treasure: a hunter announced it found the treasure"),
            (.standings(time: 41.2, [Standings.Finisher(hunter: 2, treasure: 1, time: 41.2), Standings.Finisher(hunter: 7, treasure: 1, time: 50.0)]),
             "hunt, treasure: who found what, in order"),
        ]
    }()

    /// The README's section on the JSON lines, between its markers.
    public static var contractMarkdown: String {
        var text = "```\n"
        for example in contractExamples { text += (example.event.jsonLine ?? "") + "\n" }
        text += "```\n"
        for example in contractExamples {
            let name = example.event.jsonLine.flatMap { line in
                line.firstRange(of: #""event": ""#).map { line[$0.upperBound...].prefix { $0 != "\"" } }
            } ?? ""
            text += "- `\(name)`: \(example.note)\n"
        }
        return text
    }
}
