import Game
import Bluetooth
import FoundationEssentials
import Ranging

/// The ranging events in a readable form for terminals (their JSON lines: `OutputEvent`),
/// and the region text `--region` takes.
enum RangingOutput {
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
        case let .closerArrival(_, key):
            return t + "closer     \(key)  at hand again, much nearer"
        }
    }

    /// Parses "UUID[:MAJOR[:MINOR]]"; the text itself names the region.
    static func region(_ text: String) -> Region? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let uuid = UUID(uuidString: String(parts[0])) else { return nil }
        var region = Region(name: RegionID(text), uuid: uuid)
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
