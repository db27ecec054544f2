import Bluetooth
import FoundationEssentials
import Ranging

/// The ranging contract's JSON lines (and a readable form for terminals).
enum RangingOutput {
    static func add(_ key: BeaconKey, to line: inout JSONLine) {
        line.add("uuid", key.uuid.uuidString)
        line.add("major", Int(key.major))
        line.add("minor", Int(key.minor))
    }

    static func json(_ event: RangingEvent) -> String {
        var line = JSONLine()
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
            line.add("region", region)
            line.add("state", state.rawValue)
        case let .regionEnter(_, region):
            line.add("event", "enter")
            line.add("region", region)
        case let .regionExit(_, region):
            line.add("event", "exit")
            line.add("region", region)
        case let .nearest(_, region, key):
            line.add("event", "nearest")
            line.add("region", region)
            add(key, to: &line)
        case let .trend(_, region, trend):
            line.add("event", "trend")
            line.add("region", region)
            line.add("trend", trend.rawValue)
        }
        return line.line
    }

    static func text(_ event: RangingEvent) -> String {
        let t = SightingPrinter.pad(fixed(event.time, decimals: 3), 10)
        switch event {
        case let .range(r):
            let d = r.distance.map { "\(fixed($0.meters, decimals: 2)) m ± \(fixed($0.sigma, decimals: 2))" } ?? "no distance"
            return t + "range      \(r.key)  rssi \(fixed(r.rssi, decimals: 1))  \(d)  \(r.proximity.rawValue)"
        case let .proximity(_, key, from, to):
            return t + "proximity  \(key)  \(from.rawValue) -> \(to.rawValue)"
        case let .regionState(_, region, state):
            return t + "state      \(region)  \(state.rawValue)"
        case let .regionEnter(_, region):
            return t + "enter      \(region)"
        case let .regionExit(_, region):
            return t + "exit       \(region)"
        case let .nearest(_, region, key):
            return t + "nearest    \(region)  \(key)"
        case let .trend(_, region, trend):
            return t + "trend      \(region)  \(trend.rawValue)"
        }
    }

    /// A sighting as the engine's input, for iBeacons only (the hunt is for iBeacons).
    static func sample(_ sighting: BeaconSighting) -> RangingSample? {
        guard case let .iBeacon(b) = sighting.beacon else { return nil }
        return RangingSample(
            key: BeaconKey(uuid: b.uuid, major: b.major, minor: b.minor), measuredPower: Int(b.measuredPower),
            rssi: sighting.rssi.map(Int.init), time: sighting.time)
    }

    /// Parses "UUID[:MAJOR[:MINOR]]"; the text itself names the region.
    static func region(_ text: String) -> Region? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let uuid = UUID(uuidString: String(parts[0])) else { return nil }
        var region = Region(name: text, uuid: uuid)
        if parts.count >= 2 {
            guard let major = UInt16(parts[1]) else { return nil }
            region.major = major
        }
        if parts.count == 3 {
            guard let minor = UInt16(parts[2]) else { return nil }
            region.minor = minor
        }
        return region
    }
}
