import Bluetooth
import FoundationEssentials
import Hunt
import Ranging

/// Every line of the `--json` contract (README, "The JSON lines"): what `hunt`, `treasure`,
/// `scan`, `demo` and `replay` print, one JSON object a line, each written by `jsonLine`
/// alone (keys in the contract's order).
public enum OutputEvent: Equatable, Sendable {
    /// A beacon heard (`scan --json`, `replay --json`).
    case sighting(BeaconSighting)
    /// What the ranging engine made of the sightings: range, proximity, state, enter, exit,
    /// nearest, trend.
    case ranging(RangingEvent)
    /// A line said, with its words.
    case say(time: Double, event: LineEvent, text: String)
    case sound(time: Double, Sound)
    /// The treasure detector's clicks a second changed (0: silent).
    case detector(time: Double, rate: Double)
    /// A treasure's reward: read after the find (hunt), or a scan response seen (`scan --active`).
    case reward(time: Double, address: BDAddress?, reward: String)
    /// The treasure box greeted a hunter that found it.
    case greet(time: Double, hunter: UInt16, reward: String?)
    /// Who found what, in order.
    case standings(time: Double, [Standings.Finisher])
    /// `check --json`: one line of the checklist (`exit`: the code its failure gives)...
    case check(section: String, name: String, status: String, detail: String, fix: String?, exit: Int?)
    /// ... and its summary last.
    case checkSummary(ready: Bool, failed: Int, warnings: Int, exit: Int)

    /// The `event` names of the contract, in the README's order.
    public static let eventNames = [
        "sighting", "range", "proximity", "state", "enter", "exit", "nearest", "trend", "closer-arrival", "say", "sound", "detector", "reward",
        "greet", "standings",
    ]

    /// The event's line; nil for a sighting that is no hunt's beacon (Eddystone TLM and EID).
    public var jsonLine: String? {
        var line = JSONLine()
        switch self {
        case let .sighting(sighting):
            guard Self.addSighting(sighting, to: &line) else { return nil }
        case let .ranging(event):
            Self.addRanging(event, to: &line)
        case let .say(time, event, text):
            line.add("t", time)
            line.add("event", "say")
            line.add("event_name", event.rawValue)
            line.add("text", text)
        case let .sound(time, sound):
            line.add("t", time)
            line.add("event", "sound")
            line.add("name", sound.rawValue)
        case let .detector(time, rate):
            line.add("t", time)
            line.add("event", "detector")
            line.add("rate", rate, decimals: 2)
        case let .reward(time, address, reward):
            line.add("t", time)
            line.add("event", "reward")
            if let address { line.add("address", address.description) }
            line.add("reward", reward)
        case let .greet(time, hunter, reward):
            line.add("t", time)
            line.add("event", "greet")
            line.add("hunter", Int(hunter))
            if let reward { line.add("reward", reward) }
        case let .standings(time, finishers):
            line.add("t", time)
            line.add("event", "standings")
            line.add("finishers", objects: finishers.map {
                var finisher = JSONLine()
                finisher.add("hunter", Int($0.hunter))
                finisher.add("treasure", $0.treasure)
                finisher.add("t", $0.time)
                return finisher
            })
        case let .check(section, name, status, detail, fix, exit):
            line.add("section", section)
            line.add("check", name)
            line.add("status", status)
            line.add("detail", detail)
            if let fix { line.add("fix", fix) }
            if let exit { line.add("exit", exit) }
        case let .checkSummary(ready, failed, warnings, exit):
            line.add("summary", ready ? "ready" : "not ready")
            line.add("failed", failed)
            line.add("warnings", warnings)
            line.add("exit", exit)
        }
        return line.line
    }

    /// The text that hunts exactly this beacon (`--region`, a trail step): `UUID:MAJOR:MINOR`.
    public static func regionText(uuid: UUID, major: UInt16, minor: UInt16) -> String {
        "\(uuid.uuidString):\(major):\(minor)"
    }

    private static func add(_ key: BeaconKey, to line: inout JSONLine) {
        line.add("uuid", key.uuid.uuidString)
        line.add("major", Int(key.major))
        line.add("minor", Int(key.minor))
    }

    private static func addSighting(_ sighting: BeaconSighting, to line: inout JSONLine) -> Bool {
        line.add("t", sighting.time)
        line.add("event", "sighting")
        line.add("kind", sighting.beacon.kind)
        line.add("address", sighting.address.description)
        let power: Int
        var region: String?
        switch sighting.beacon {
        case let .iBeacon(b):
            line.add("uuid", b.uuid.uuidString)
            line.add("major", Int(b.major))
            line.add("minor", Int(b.minor))
            power = Int(b.measuredPower)
            region = regionText(uuid: b.uuid, major: b.major, minor: b.minor)
        case let .altBeacon(b):
            line.add("uuid", b.id1.uuidString)
            line.add("major", Int(b.id2))
            line.add("minor", Int(b.id3))
            line.add("manufacturer", Int(b.manufacturer))
            power = Int(b.referenceRSSI)
            region = regionText(uuid: b.id1, major: b.id2, minor: b.id3)
        case let .eddystone(.uid(namespace, instance, txPower)):
            line.add("namespace", hexString(namespace))
            line.add("instance", hexString(instance))
            power = Int(txPower)
        case let .eddystone(.url(url, txPower)):
            line.add("url", url)
            power = Int(txPower)
        case .eddystone(.tlm), .eddystone(.eid):
            return false  // telemetry and rotating ids are not beacons one can hunt
        }
        line.add("power", power)
        line.add("rssi", sighting.rssi.map { Int($0) })
        // Last, so the contract's key order is kept: the text a trail step takes.
        if let region { line.add("region", region) }
        return true
    }

    private static func addRanging(_ event: RangingEvent, to line: inout JSONLine) {
        line.add("t", event.time)
        switch event {
        case let .range(r):
            line.add("event", "range")
            add(r.key, to: &line)
            line.add("rssi", r.rssi, decimals: 1)
            line.add("distance", r.distance?.meters, decimals: 2)
            line.add("sigma", r.distance?.sigma, decimals: 2)
            line.add("proximity", r.proximity.rawValue)
        case let .proximity(_, key, from, to):
            line.add("event", "proximity")
            add(key, to: &line)
            line.add("from", from.rawValue)
            line.add("to", to.rawValue)
        case let .regionState(_, region, state):
            line.add("event", "state")
            line.add("region", region.text)
            line.add("state", state.rawValue)
        case let .regionEnter(_, region):
            line.add("event", "enter")
            line.add("region", region.text)
        case let .regionExit(_, region):
            line.add("event", "exit")
            line.add("region", region.text)
        case let .nearest(_, region, key):
            line.add("event", "nearest")
            line.add("region", region.text)
            add(key, to: &line)
        case let .trend(_, region, trend):
            line.add("event", "trend")
            line.add("region", region.text)
            line.add("trend", trend.rawValue)
        case let .closerArrival(_, key):
            line.add("event", "closer-arrival")
            add(key, to: &line)
        }
    }
}
